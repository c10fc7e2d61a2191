//go:build !noasm && amd64

package simd

import "github.com/klauspost/cpuid/v2"

// dotInt8AVX2 returns Σ a[i]·b[i] over n elements, n a multiple of 32
// (int8_amd64.s).
//
//go:noescape
func dotInt8AVX2(a, b *int8, n int) int32

// dotInt8Accel runs the AVX2 kernel over the 32-element blocks and the
// generic loop over the rest.
func dotInt8Accel(a, b []int8) int32 {
	n := len(a) &^ 31
	var s int32
	if n > 0 {
		s = dotInt8AVX2(&a[0], &b[0], n)
	}
	if n < len(a) {
		s += dotInt8Generic(a[n:], b[n:len(a)])
	}
	return s
}

// dotInt8RowsAVX2 is DotInt8Rows over n ids with a stride that is a
// positive multiple of 32 (int8_amd64.s).
//
//go:noescape
func dotInt8RowsAVX2(q, rows *int8, stride int, ids *uint32, n int, out *int32)

// dotInt8RowsVNNI is dotInt8RowsAVX2 with AVX-512 VNNI's VPDPBUSD
// (int8_amd64.s).
//
//go:noescape
func dotInt8RowsVNNI(q, rows *int8, stride int, ids *uint32, n int, out *int32)

// haveVNNI says the CPU and OS run AVX-512 VNNI on 256-bit registers
// (AVX512VL); useVNNI is whether DotInt8Rows does (tests switch it).
var (
	haveVNNI = cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512VL, cpuid.AVX512VNNI)
	useVNNI  = haveVNNI
)

func dotInt8RowsAccel(q, rows []int8, ids []uint32, out []int32) {
	if useVNNI {
		dotInt8RowsVNNI(&q[0], &rows[0], len(q), &ids[0], len(ids), &out[0])
		return
	}
	dotInt8RowsAVX2(&q[0], &rows[0], len(q), &ids[0], len(ids), &out[0])
}

// maxAbsAVX2 returns max |v[i]| over n elements, n a positive multiple
// of 32 (int8_amd64.s). v must be finite, as QuantizeInt8 requires: VMAXPS
// does not carry a NaN through as the generic max does.
//
//go:noescape
func maxAbsAVX2(v *float32, n int) float32

// quantizeAVX2 writes dst[i] = round-to-even(v[i]·inv) over n elements, n
// a positive multiple of 32 and every |v[i]·inv| at most 127 (int8_amd64.s).
//
//go:noescape
func quantizeAVX2(v *float32, n int, inv float32, dst *int8)

// quantizeInt8Accel is quantizeInt8Generic with the 32-element blocks in
// AVX2; the products and their rounding are the same IEEE operations, so
// the codes are bit-identical.
func quantizeInt8Accel(v []float32, dst []int8) float32 {
	n := len(v) &^ 31
	if n == 0 {
		return quantizeInt8Generic(v, dst)
	}
	m := maxAbs(v[n:], maxAbsAVX2(&v[0], n))
	if !startCode(m, len(v), dst) {
		return 0
	}
	inv := 127 / m
	quantizeAVX2(&v[0], n, inv, &dst[0])
	codeRange(v[n:], dst[n:], inv)
	return m / 127
}
