//go:build !noasm && amd64

package simd

import "testing"

// withoutAVX512 runs f with the AVX-512 kernels (DotRows' tiles,
// AboveLines) switched off, so that the AVX2 ones are tested (and
// measured) on CPUs that have both.
func withoutAVX512(f func()) {
	prev := use512
	use512 = false
	defer func() { use512 = prev }()
	f()
}

func TestDotRowsAVX2Tiles(t *testing.T) {
	if !haveAccel {
		t.Skip("accelerated kernels unavailable")
	}
	if !haveAVX512 {
		t.Skip("no AVX-512: TestDotRows already ran the AVX2 tiles")
	}
	withoutAVX512(func() { testDotRows(t) })
	withoutAVX512(func() { TestDotRowsExactSmallIntegers(t) })
}

func BenchmarkDotRowsAVX2Tiles(b *testing.B) {
	if !haveAccel || !haveAVX512 {
		b.Skip("no AVX-512: BenchmarkDotRows measures the AVX2 tiles")
	}
	withoutAVX512(func() { BenchmarkDotRows(b) })
}

func TestAboveLinesAVX2(t *testing.T) {
	if !haveAccel || !haveAVX512 {
		t.Skip("no AVX-512: TestAboveLines already ran the AVX2 kernel")
	}
	withoutAVX512(func() { testAboveLines(t) })
}
