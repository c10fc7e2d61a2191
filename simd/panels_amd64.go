//go:build !noasm && amd64

package simd

import (
	"unsafe"

	"github.com/klauspost/cpuid/v2"
)

// haveAVX512 says the CPU and OS run the AVX-512 kernels (DotRows' tiles
// and AboveLines need AVX-512F); use512 is whether they run (tests switch
// it off to cover the AVX2 kernels).
var (
	haveAVX512 = cpuid.CPU.Supports(cpuid.AVX512F)
	use512     = haveAVX512
)

//go:generate sh -c "go run gen_panels.go > panels_amd64.s"

// The DotRows tile kernels (panels_amd64.s, written by gen_panels.go): R rows (stride dim floats) ×
// P panels of sixteen queries (stride 16·dim floats) over all dim columns,
// stored to R rows of out (stride ld floats), sixteen results per panel.
// The six-row kernels prefetch a line at pf and then every pfStep bytes,
// one per column.

//go:noescape
func panel6x4AVX512(rows, panels *float32, dim int, out *float32, ld int, pf uintptr, pfStep int)

//go:noescape
func panel6x2AVX512(rows, panels *float32, dim int, out *float32, ld int, pf uintptr, pfStep int)

//go:noescape
func panel6x1AVX512(rows, panels *float32, dim int, out *float32, ld int, pf uintptr, pfStep int)

//go:noescape
func panel1x4AVX512(rows, panels *float32, dim int, out *float32, ld int)

//go:noescape
func panel1x2AVX512(rows, panels *float32, dim int, out *float32, ld int)

//go:noescape
func panel1x1AVX512(rows, panels *float32, dim int, out *float32, ld int)

//go:noescape
func panel6x1AVX2(rows, panels *float32, dim int, out *float32, ld int, pf uintptr, pfStep int)

//go:noescape
func panel1x1AVX2(rows, panels *float32, dim int, out *float32, ld int)

// panelKernel is a one-row tile kernel, sixKernel a six-row one.
type (
	panelKernel func(rows, panels *float32, dim int, out *float32, ld int)
	sixKernel   func(rows, panels *float32, dim int, out *float32, ld int, pf uintptr, pfStep int)
)

// panelSet is the tile kernels of one instruction set: six rows (or one)
// × a group of width panels, widest first.
type panelSet struct {
	width []int
	six   []sixKernel
	one   []panelKernel
}

var (
	panels512 = panelSet{
		width: []int{4, 2, 1},
		six:   []sixKernel{panel6x4AVX512, panel6x2AVX512, panel6x1AVX512},
		one:   []panelKernel{panel1x4AVX512, panel1x2AVX512, panel1x1AVX512},
	}
	panels256 = panelSet{
		width: []int{1},
		six:   []sixKernel{panel6x1AVX2},
		one:   []panelKernel{panel1x1AVX2},
	}
)

// dotRowsAccel runs the tile kernels over n rows and np panels: for each
// group of panels (four at a time where the CPU has AVX-512), every strip
// of six rows, then the rows past the last strip one at a time. The block
// of rows stays in the caller's cache while the groups pass over it; next
// is prefetched by the six-row tiles, an equal share of its lines each,
// spread over the tile's columns. (Prefetching each share in a burst after
// its tile, as the 3-row tiles these replaced did, left 20% of a 64-query
// ScoreMany's CPU profile in the prefetch loop: with fourteen tiles per
// 84-row block, each burst was about 300 lines.)
func dotRowsAccel(rows, panels []float32, dim, n, np int, out []float32, ld int, next []float32) {
	set := &panels256
	if use512 {
		set = &panels512
	}
	tiles := 0
	for g, p := 0, 0; p < np; {
		if p+set.width[g] > np {
			g++
			continue
		}
		tiles += n / 6
		p += set.width[g]
	}
	lines := len(next) / 16
	t := 0
	for g, p := 0, 0; p < np; {
		w := set.width[g]
		if p+w > np {
			g++
			continue
		}
		pan := &panels[p*dim*PanelWidth]
		i := 0
		for ; i+6 <= n; i += 6 {
			// Lines [a, b) of next, over dim column steps.
			pf, step := uintptr(unsafe.Pointer(pan)), 0
			if a, b := t*lines/tiles, (t+1)*lines/tiles; b > a {
				pf, step = uintptr(unsafe.Pointer(&next[a*16])), ((b-a)*64+dim-1)/dim
			}
			t++
			set.six[g](&rows[i*dim], pan, dim, &out[i*ld+p*PanelWidth], ld, pf, step)
		}
		for ; i < n; i++ {
			set.one[g](&rows[i*dim], pan, dim, &out[i*ld+p*PanelWidth], ld)
		}
		p += w
	}
}
