//go:build amd64 && !noasm

package peak

import "github.com/klauspost/cpuid/v2"

// fma256 runs n iterations of twelve independent VFMADD231PS on 256-bit
// registers (peak_amd64.s).
//
//go:noescape
func fma256(n int)

// fma512 is fma256 on 512-bit registers (AVX-512F).
//
//go:noescape
func fma512(n int)

// sumAVX2 returns the sum of n float32s at p, n a positive multiple of 32
// (four 8-lane accumulators).
//
//go:noescape
func sumAVX2(p *float32, n int) float32

var (
	haveAVX2   = cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2, cpuid.FMA3)
	haveAVX512 = haveAVX2 && cpuid.CPU.Supports(cpuid.AVX512F)
)

func loops() []loop {
	if !haveAVX2 {
		return []loop{goScalar}
	}
	ls := []loop{{name: "avx2 fma, 256-bit", flopsPerIter: 12 * 8 * 2, run: func(n int) float64 { fma256(n); return 0 }}}
	if haveAVX512 {
		ls = append(ls, loop{name: "avx-512f fma, 512-bit", flopsPerIter: 12 * 16 * 2, run: func(n int) float64 { fma512(n); return 0 }})
	}
	return ls
}

var readName = func() string {
	if haveAVX2 {
		return "avx2 streaming sum"
	}
	return "go streaming sum"
}()

func sum(v []float32) float32 {
	n := len(v) &^ 31
	if !haveAVX2 || n == 0 {
		return sumGeneric(v)
	}
	return sumAVX2(&v[0], n) + sumGeneric(v[n:])
}
