//go:build !noasm && amd64

package simd

import (
	"github.com/klauspost/cpuid/v2"
	"github.com/viterin/vek/vek32"
)

// accelName is what Path reports when the accelerated kernels are in use.
const accelName = "avx2+fma (vek)"

// vekMinLen is the shortest vector handed to vek. Below 32 elements vek's
// Dot_AVX2_F32 skips its vector loop and runs one serial scalar FMA chain,
// which the 8-accumulator generic kernel beats; vek32.Dot also panics on
// empty slices ("slice must not be empty"), which this cut-off avoids.
const vekMinLen = 32

// vekBlock is the block length of vek's Dot_AVX2_F32 vector loop; the
// remainder runs as one serial scalar FMA chain.
const vekBlock = 32

// axpyChunk is the number of elements Axpy stages on the stack per round.
const axpyChunk = 256

// detectAccel reports whether the vek kernels may run: the CPU and OS support
// AVX, AVX2 and FMA3 (klauspost/cpuid checks the OS saves the YMM state), and
// vek agrees (it reads golang.org/x/sys/cpu and disables itself on darwin);
// otherwise vek32 would silently run its own plain Go loops.
func detectAccel() bool {
	return cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2, cpuid.FMA3) && vek32.Info().Acceleration
}

// splitTail is the shortest remainder after vek's last 32-element block
// that dotAccel hands to the generic kernel instead of vek's serial scalar
// loop (one FMA per element, each waiting for the last). Measured with
// BenchmarkDotShort on a shared Xeon: at n=63 the split took 24 ns against
// vek's 32 (min of 12), at n=48 they tie, and at n=40 the extra call makes
// the split slower.
const splitTail = 16

// dotAccel is dotGeneric through vek32.Dot (AVX2, four 8-wide FMA
// accumulators over 32-element blocks, then a scalar FMA loop), with long
// remainders summed by the generic kernel.
func dotAccel(a, b []float32) float32 {
	n := len(a)
	if n < vekMinLen {
		return dotGeneric(a, b)
	}
	b = b[:n]
	m := n &^ (vekBlock - 1)
	if n-m < splitTail {
		return vek32.Dot(a, b)
	}
	return vek32.Dot(a[:m], b[:m]) + dotGeneric(a[m:], b[m:])
}

// dotBatchAccel is dotBatchGeneric with one dotAccel per row. vek32.MatMul
// is deliberately not used: it is far slower for a matrix-vector product.
func dotBatchAccel(rows []float32, dim int, q, out []float32) {
	if dim < vekMinLen {
		dotBatchGeneric(rows, dim, q, out)
		return
	}
	q = q[:dim]
	for i := range out {
		out[i] = dotAccel(rows[i*dim:(i+1)*dim], q)
	}
}

// axpyAccel is axpyGeneric built from vek's in-place kernels: each chunk of
// x is copied to a stack buffer, multiplied by alpha, and added to y. vek
// has no fused axpy; three passes over an L1-resident chunk still beat the
// scalar loop.
func axpyAccel(alpha float32, x, y []float32) {
	if len(x) < vekMinLen {
		axpyGeneric(alpha, x, y)
		return
	}
	var buf [axpyChunk]float32
	for len(x) > 0 {
		n := min(len(x), axpyChunk)
		t := buf[:n]
		copy(t, x[:n])
		vek32.MulNumber_Inplace(t, alpha)
		vek32.Add_Inplace(y[:n], t)
		x, y = x[n:], y[n:]
	}
}

// scaleAccel is scaleGeneric through vek32.MulNumber_Inplace.
func scaleAccel(alpha float32, x []float32) {
	if len(x) < vekMinLen {
		scaleGeneric(alpha, x)
		return
	}
	vek32.MulNumber_Inplace(x, alpha)
}

// cpuFeatures reads the features reported by Features.
func cpuFeatures() Features {
	return Features{
		AVX2:    cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2),
		FMA:     cpuid.CPU.Supports(cpuid.FMA3),
		AVX512F: cpuid.CPU.Supports(cpuid.AVX512F),
	}
}
