//go:build !noasm && amd64

package simd

import "testing"

// withoutAVX512 runs f with DotMany's AVX-512 tiles switched off, so that
// the AVX2 tiles are tested (and measured) on CPUs that have both.
func withoutAVX512(f func()) {
	prev := use512
	use512 = false
	defer func() { use512 = prev }()
	f()
}

func TestDotManyAVX2Tiles(t *testing.T) {
	if !haveAccel {
		t.Skip("accelerated kernels unavailable")
	}
	if !haveAVX512 {
		t.Skip("no AVX-512: TestDotMany already ran the AVX2 tiles")
	}
	withoutAVX512(func() { testDotMany(t) })
	withoutAVX512(func() { TestDotManyExactSmallIntegers(t) })
}

func BenchmarkDotManyAVX2Tiles(b *testing.B) {
	if !haveAccel || !haveAVX512 {
		b.Skip("no AVX-512: BenchmarkDotMany measures the AVX2 tiles")
	}
	withoutAVX512(func() { BenchmarkDotMany(b) })
}
