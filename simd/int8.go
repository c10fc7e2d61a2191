package simd

import (
	"fmt"
	"math"
)

// DotInt8 returns Σ a[i]·b[i] over int8 vectors, accumulated exactly in
// int32. It panics if the lengths differ or exceed MaxInt8Len (where the
// sum could overflow int32: each product is at most 128² = 2¹⁴).
//
// The vectors are the int8 codes of [QuantizeInt8]; a dot of two codes
// times their two scales approximates the dot of the float vectors. On
// amd64 with AVX2 it runs 32 elements per step (sign-extend to int16,
// multiply and add pairs to int32); the generic kernel is the loop above.
func DotInt8(a, b []int8) int32 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("simd: DotInt8 length mismatch %d != %d", len(a), len(b)))
	}
	if len(a) > MaxInt8Len {
		panic(fmt.Sprintf("simd: DotInt8 length %d > %d", len(a), MaxInt8Len))
	}
	if useAccel {
		return dotInt8Accel(a, b)
	}
	return dotInt8Generic(a, b)
}

// MaxInt8Len is the longest vector DotInt8 accepts: 2¹⁷ products of at
// most 2¹⁴ sum to at most 2³¹.
const MaxInt8Len = 1<<17 - 1

// dotInt8Generic is DotInt8's reference loop.
func dotInt8Generic(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
		s2 += int32(a[i+2]) * int32(b[i+2])
		s3 += int32(a[i+3]) * int32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// QuantizeInt8 writes the symmetric int8 code of v to dst (len(dst) ≥
// len(v); the rest of dst is zeroed) and returns its scale s, so that
// v[i] ≈ s·dst[i]: s = max|v[i]| / 127 and dst[i] = round(v[i]/s), in
// [−127, 127] (to nearest, ties to even: math.RoundToEven is one
// instruction on amd64, math.Round a bit-twiddling function, and coding
// every vector is most of what Open spends on an index). A zero vector
// gets scale 0 and a zero code. v must be finite.
func QuantizeInt8(v []float32, dst []int8) float32 {
	if len(dst) < len(v) {
		panic(fmt.Sprintf("simd: QuantizeInt8 dst has %d entries for %d", len(dst), len(v)))
	}
	if useAccel {
		return quantizeInt8Accel(v, dst)
	}
	return quantizeInt8Generic(v, dst)
}

// quantizeInt8Generic is QuantizeInt8's reference loop.
func quantizeInt8Generic(v []float32, dst []int8) float32 {
	m := maxAbs(v, 0)
	if !startCode(m, len(v), dst) {
		return 0
	}
	codeRange(v, dst, 127/m)
	return m / 127
}

// maxAbs returns the larger of m and every |x| of v.
func maxAbs(v []float32, m float32) float32 {
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	return m
}

// startCode clears dst past n entries, and all of it for a zero vector (m
// = 0), reporting whether there is a code to write.
func startCode(m float32, n int, dst []int8) bool {
	clear(dst[n:])
	if m == 0 {
		clear(dst[:n])
		return false
	}
	return true
}

// codeRange writes dst[i] = round-to-even(v[i]·inv).
func codeRange(v []float32, dst []int8, inv float32) {
	for i, x := range v {
		dst[i] = int8(math.RoundToEven(float64(x * inv)))
	}
}

// DotInt8Rows writes out[i] = DotInt8(q, row ids[i]) for the rows of
// stride len(q) in rows: one call for a graph node's neighbours, so the
// loads of one row overlap the arithmetic of the last. It panics if a row
// lies outside rows, out is shorter than ids, or len(q) exceeds
// MaxInt8Len.
func DotInt8Rows(q, rows []int8, ids []uint32, out []int32) {
	stride := len(q)
	if stride > MaxInt8Len {
		panic(fmt.Sprintf("simd: DotInt8Rows stride %d > %d", stride, MaxInt8Len))
	}
	if len(out) < len(ids) {
		panic(fmt.Sprintf("simd: DotInt8Rows out has %d entries for %d ids", len(out), len(ids)))
	}
	var top uint32
	for _, id := range ids {
		top = max(top, id)
	}
	if len(ids) > 0 && (int(top)+1)*stride > len(rows) {
		panic(fmt.Sprintf("simd: DotInt8Rows row %d of %d bytes is outside %d bytes", top, stride, len(rows)))
	}
	if len(ids) == 0 || stride == 0 {
		clear(out[:len(ids)])
		return
	}
	if useAccel && stride%32 == 0 {
		dotInt8RowsAccel(q, rows, ids, out)
		return
	}
	dotInt8RowsGeneric(q, rows, ids, out)
}

// dotInt8RowsGeneric is DotInt8Rows' reference loop.
func dotInt8RowsGeneric(q, rows []int8, ids []uint32, out []int32) {
	stride := len(q)
	for i, id := range ids {
		o := int(id) * stride
		out[i] = dotInt8Generic(q, rows[o:o+stride])
	}
}
