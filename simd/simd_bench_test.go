package simd

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Throughput is reported through b.SetBytes, so MB/s reads as the rate at
// which vector data is consumed: both operands for Dot, the matrix (the
// query stays cached) for DotBatch and SquaredNorms, x and y for Axpy.
// Compare implementations within one run: the machine may be shared.

var benchDims = []int{384, 768, 1536}

// benchBatchRows is the row count of the DotBatch benchmark: 1024 rows of
// 384 to 1536 float32s is 1.5 to 6 MiB, the size of a scored candidate set.
const benchBatchRows = 1024

// forEachImplementationB runs f as a sub-benchmark once per implementation
// this build and CPU can run.
func forEachImplementationB(b *testing.B, f func(b *testing.B)) {
	b.Helper()
	for _, impl := range implementations {
		b.Run(impl.name, func(b *testing.B) {
			if impl.accel && !haveAccel {
				b.Skipf("accelerated kernels unavailable (features: %v)", CPUFeatures())
			}
			defer setAccelerated(impl.accel)()
			f(b)
		})
	}
}

func randomVector(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 2*r.Float32() - 1
	}
	return v
}

var sink float32

func BenchmarkDot(b *testing.B) {
	forEachImplementationB(b, func(b *testing.B) {
		for _, d := range benchDims {
			b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 1))
				x, y := randomVector(r, d), randomVector(r, d)
				b.SetBytes(int64(2 * 4 * d))
				var s float32
				for b.Loop() {
					s += Dot(x, y)
				}
				sink = s
			})
		}
	})
}

func BenchmarkDotBatch(b *testing.B) {
	forEachImplementationB(b, func(b *testing.B) {
		for _, d := range benchDims {
			b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
				benchDotBatch(b, d, benchBatchRows)
			})
		}
	})
}

// BenchmarkDotBatchDRAM scores a 96 MiB matrix, far larger than any cache:
// its throughput is the memory-bandwidth ceiling for batch scoring, against
// which a wider (AVX-512) kernel could gain nothing.
func BenchmarkDotBatchDRAM(b *testing.B) {
	const d = 768
	forEachImplementationB(b, func(b *testing.B) {
		benchDotBatch(b, d, 96<<20/(4*d))
	})
}

func benchDotBatch(b *testing.B, d, n int) {
	r := rand.New(rand.NewPCG(2, 2))
	rows, q := randomVector(r, n*d), randomVector(r, d)
	out := make([]float32, n)
	b.SetBytes(int64(4 * n * d))
	for b.Loop() {
		DotBatch(rows, d, q, out)
	}
}

func BenchmarkSquaredNorms(b *testing.B) {
	const d = 768
	forEachImplementationB(b, func(b *testing.B) {
		r := rand.New(rand.NewPCG(3, 3))
		rows := randomVector(r, benchBatchRows*d)
		out := make([]float32, benchBatchRows)
		b.SetBytes(int64(4 * len(rows)))
		for b.Loop() {
			SquaredNorms(rows, d, out)
		}
	})
}

func BenchmarkAxpy(b *testing.B) {
	const d = 768
	forEachImplementationB(b, func(b *testing.B) {
		r := rand.New(rand.NewPCG(4, 4))
		x, y := randomVector(r, d), randomVector(r, d)
		b.SetBytes(2 * 4 * d)
		for b.Loop() {
			Axpy(1e-9, x, y)
		}
	})
}

func BenchmarkNormalize(b *testing.B) {
	const d = 768
	forEachImplementationB(b, func(b *testing.B) {
		r := rand.New(rand.NewPCG(5, 5))
		x := randomVector(r, d)
		b.SetBytes(4 * d)
		for b.Loop() {
			Normalize(x)
		}
	})
}

// BenchmarkDotInt8 is the int8 code dot at GloVe-100's padded width beside
// the float32 dot at its width: the HNSW traversal's two distance kernels.
func BenchmarkDotInt8(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	a8, b8 := make([]int8, 128), make([]int8, 128)
	af, bf := make([]float32, 100), make([]float32, 100)
	for i := range a8 {
		a8[i], b8[i] = int8(r.IntN(255)-127), int8(r.IntN(255)-127)
	}
	for i := range af {
		af[i], bf[i] = r.Float32(), r.Float32()
	}
	b.Run("int8-128", func(b *testing.B) {
		var s int32
		for b.Loop() {
			s += DotInt8(a8, b8)
		}
		_ = s
	})
	b.Run("float32-100", func(b *testing.B) {
		var s float32
		for b.Loop() {
			s += Dot(af, bf)
		}
		_ = s
	})
}
