package simd

import (
	"fmt"
	"math"
	"strings"
)

// Dispatch state, read once when the package is initialised.
var (
	// haveAccel reports whether this build and CPU can run the
	// accelerated kernels. It never changes after init.
	haveAccel = detectAccel()

	// useAccel selects the accelerated kernels. It equals haveAccel
	// except while a test has switched it off with setAccelerated.
	useAccel = haveAccel
)

// genericName is what Path reports for the portable kernels.
const genericName = "generic"

// Path returns the name of the kernels in use: "avx2+fma (vek)" on amd64
// CPUs with AVX2 and FMA3 (unless built with the noasm tag), "generic"
// otherwise.
func Path() string {
	if useAccel {
		return accelName
	}
	return genericName
}

// Features is the part of the CPU's feature set that matters to this
// package, as klauspost/cpuid reports it (including OS support for the
// wider registers). All fields are false off amd64 and under the noasm tag,
// where no feature is used.
type Features struct {
	AVX2    bool // AVX and AVX2
	FMA     bool // FMA3
	AVX512F bool // AVX-512 Foundation (DotRows' 512-bit tiles and AboveLines)
}

// String lists the features present, e.g. "avx2 fma avx512f", or "none".
func (f Features) String() string {
	var s []string
	if f.AVX2 {
		s = append(s, "avx2")
	}
	if f.FMA {
		s = append(s, "fma")
	}
	if f.AVX512F {
		s = append(s, "avx512f")
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " ")
}

// CPUFeatures returns the features detected on this CPU.
func CPUFeatures() Features { return cpuFeatures() }

// setAccelerated switches the accelerated kernels on or off and returns a
// function that restores the previous setting. It is the test hook that lets
// one test body run over every implementation; switching on panics where
// the accelerated kernels are unavailable. It must not run concurrently with
// any other function of this package.
func setAccelerated(on bool) (restore func()) {
	if on && !haveAccel {
		panic("simd: accelerated kernels are not available on this CPU or build")
	}
	prev := useAccel
	useAccel = on
	return func() { useAccel = prev }
}

// Dot returns the dot product of a and b, accumulated in float32 (the
// summation order depends on the kernel in use).
// It panics if len(a) != len(b).
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		panicLengths("Dot", "len(a)", len(a), "len(b)", len(b))
	}
	if useAccel {
		return dotAccel(a, b)
	}
	return dotGeneric(a, b)
}

// DotBatch multiplies a row-major matrix by a vector: for each i < len(out)
// it sets out[i] to Dot(rows[i*dim:(i+1)*dim], q). Nothing outside out is
// written.
// It panics if dim < 0, len(q) != dim or len(rows) != len(out)*dim.
func DotBatch(rows []float32, dim int, q []float32, out []float32) {
	checkMatrix("DotBatch", rows, dim, len(out))
	if len(q) != dim {
		panicLengths("DotBatch", "len(q)", len(q), "dim", dim)
	}
	if useAccel {
		dotBatchAccel(rows, dim, q, out)
		return
	}
	dotBatchGeneric(rows, dim, q, out)
}

// SquaredNorm returns the squared Euclidean norm of a, Dot(a, a). It is
// computed in float32 and overflows to +Inf when it exceeds
// math.MaxFloat32.
func SquaredNorm(a []float32) float32 {
	if useAccel {
		return dotAccel(a, a)
	}
	return dotGeneric(a, a)
}

// SquaredNorms sets out[i] to SquaredNorm(rows[i*dim:(i+1)*dim]) for each
// i < len(out). Nothing outside out is written.
// It panics if dim < 0 or len(rows) != len(out)*dim.
func SquaredNorms(rows []float32, dim int, out []float32) {
	checkMatrix("SquaredNorms", rows, dim, len(out))
	if useAccel {
		for i := range out {
			r := rows[i*dim : (i+1)*dim]
			out[i] = dotAccel(r, r)
		}
		return
	}
	for i := range out {
		r := rows[i*dim : (i+1)*dim]
		out[i] = dotGeneric(r, r)
	}
}

// Axpy adds alpha*x to y in place: y[i] += alpha*x[i]. x and y may be the
// same slice; if they overlap otherwise, the result is unspecified.
// It panics if len(x) != len(y).
func Axpy(alpha float32, x, y []float32) {
	if len(x) != len(y) {
		panicLengths("Axpy", "len(x)", len(x), "len(y)", len(y))
	}
	if useAccel {
		axpyAccel(alpha, x, y)
		return
	}
	axpyGeneric(alpha, x, y)
}

// Scale multiplies x by alpha in place: x[i] *= alpha.
func Scale(alpha float32, x []float32) {
	if useAccel {
		scaleAccel(alpha, x)
		return
	}
	scaleGeneric(alpha, x)
}

// minFastSquaredNorm is the smallest float32 squared norm Normalize trusts.
// Below it, products of tiny elements may have lost precision to subnormals
// or flushed to zero, so the norm is recomputed in float64.
const minFastSquaredNorm = 0x1p-100

// Normalize scales x in place to unit Euclidean norm and returns the norm x
// had. A zero (or empty) vector is left unchanged and 0 is returned. If x
// holds a NaN or an infinity, x is left unchanged and NaN or +Inf is
// returned. The norm is computed in float64 when the float32 sum of
// squares would overflow or underflow, so very large and very small vectors
// are normalized correctly; the returned norm is then rounded to float32
// and may be +Inf although x has been normalized.
func Normalize(x []float32) float32 {
	ss := SquaredNorm(x)
	if ss >= minFastSquaredNorm && ss <= math.MaxFloat32 {
		norm := math.Sqrt(float64(ss))
		Scale(float32(1/norm), x)
		return float32(norm)
	}
	return normalizeWide(x)
}

// normalizeWide is Normalize in float64 arithmetic, which cannot overflow
// or underflow on float32 inputs.
func normalizeWide(x []float32) float32 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	norm := math.Sqrt(ss)
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return float32(norm)
	}
	for i, v := range x {
		x[i] = float32(float64(v) / norm)
	}
	return float32(norm)
}

// checkMatrix panics unless rows holds exactly n rows of dim elements.
func checkMatrix(fn string, rows []float32, dim, n int) {
	if dim < 0 {
		panic(fmt.Sprintf("simd: %s: negative dim %d", fn, dim))
	}
	// Divide rather than multiply, so that a huge n cannot overflow.
	if dim == 0 && len(rows) == 0 || dim > 0 && len(rows)%dim == 0 && len(rows)/dim == n {
		return
	}
	panic(fmt.Sprintf("simd: %s: len(rows) = %d, want len(out)*dim = %d*%d", fn, len(rows), n, dim))
}

// panicLengths panics with a message naming the two mismatched lengths.
func panicLengths(fn, aName string, a int, bName string, b int) {
	panic(fmt.Sprintf("simd: %s: length mismatch: %s = %d, %s = %d", fn, aName, a, bName, b))
}
