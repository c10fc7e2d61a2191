//go:build !noasm && amd64

package simd

import (
	"unsafe"

	"github.com/klauspost/cpuid/v2"

	"github.com/tidemark/tidemark/internal/prefetch"
)

// dotTile3x4 accumulates the dot products of 3 consecutive rows (at rows,
// stride dim floats) with 4 consecutive queries (at qs, stride dim) over
// their first n8 elements, n8 a positive multiple of 8, and stores them to
// out[j*ldo+i] for query j < 4 and row i < 3 (many_amd64.s).
//
//go:noescape
func dotTile3x4(rows, qs *float32, dim, n8 int, out *float32, ldo int)

// dotTile1x4 is dotTile3x4 for one row (many_amd64.s).
//
//go:noescape
func dotTile1x4(rows, qs *float32, dim, n8 int, out *float32, ldo int)

// dotTile3x8AVX512 is dotTile3x4 for 3 rows × 8 queries on 512-bit
// registers, over the first n16 elements (a positive multiple of 16).
//
//go:noescape
func dotTile3x8AVX512(rows, qs *float32, dim, n16 int, out *float32, ldo int)

// dotTile1x8AVX512 is dotTile3x8AVX512 for one row.
//
//go:noescape
func dotTile1x8AVX512(rows, qs *float32, dim, n16 int, out *float32, ldo int)

// haveAVX512 says the CPU and OS run the AVX-512 tiles (F for the 512-bit
// FMAs, VL for the EVEX-encoded 256-bit adds of the reduction); use512 is
// whether DotMany does (tests switch it off to cover the AVX2 tiles).
var (
	haveAVX512 = cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512VL)
	use512     = haveAVX512
)

// dotManyAccel runs the register-blocked kernels: groups of eight queries
// on AVX-512 tiles where the CPU has them, then groups of four on AVX2
// tiles; each group reads the whole block of rows once (the caller keeps
// it in cache). The columns past the tiles' multiple of 16 or 8 are added
// with the generic loop, and the last m mod 4 queries go to dotBatchAccel.
//
// After each tile a few cache lines of next, the caller's next block, are
// prefetched, spread evenly over the call's tiles: memory is then read at
// the block's average rate instead of in a burst when the first group of
// queries meets a block that is not in cache. On the 2-core EPYC we
// measure on (two goroutines streaming 200 000 rows of 768 through 64
// queries) that took the tiles from 0.78× to 0.87× their speed over a
// cached block; prefetching each tile's successor during the first group
// instead gained nothing with both cores streaming (1.0×), and packing the
// queries to prefetch inside the tile loop lost. The hint is PREFETCHT2:
// with PREFETCHT0 the next block's lines also filled the L1 cache and
// evicted the tile's queries (a 300 000-row ScoreMany of 64 queries went
// from 125 to 105–118 ms min, same machine, run after run).
func dotManyAccel(rows, qs []float32, dim, n, m int, out, next []float32) {
	n16, n8 := dim&^15, dim&^7
	m8 := 0
	if use512 && n16 > 0 {
		m8 = m &^ 7
	}
	m4 := m8
	if n8 > 0 {
		m4 += (m - m8) &^ 3
	}
	var pf spread
	pf.start(next, (m8/8+(m4-m8)/4)*(n/3))
	j := tileGroups(rows, qs, dim, n, 0, m8, n16, 8, dotTile3x8AVX512, dotTile1x8AVX512, out, &pf)
	j = tileGroups(rows, qs, dim, n, j, m4, n8, 4, dotTile3x4, dotTile1x4, out, &pf)
	for ; j < m; j++ {
		dotBatchAccel(rows, dim, qs[j*dim:(j+1)*dim], out[j*n:(j+1)*n])
	}
}

// tileKernel is one of the tile kernels: three rows (or one) × a group of
// queries over the first cols columns.
type tileKernel func(rows, qs *float32, dim, cols int, out *float32, ldo int)

// tileGroups runs the queries [j, to) in groups of width through the
// kernels three and one (which cover the first cols columns), adds the
// remaining columns, prefetches a step of pf after each 3-row tile, and
// returns to.
func tileGroups(rows, qs []float32, dim, n, j, to, cols, width int, three, one tileKernel, out []float32, pf *spread) int {
	for ; j < to; j += width {
		q := &qs[j*dim]
		i := 0
		for ; i+3 <= n; i += 3 {
			three(&rows[i*dim], q, dim, cols, &out[j*n+i], n)
			pf.step()
		}
		for ; i < n; i++ {
			one(&rows[i*dim], q, dim, cols, &out[j*n+i], n)
		}
		addTail(rows, qs, dim, n, cols, j, j+width, out)
	}
	return to
}

// spread prefetches a buffer's cache lines a few per step, evenly over a
// known number of steps.
type spread struct {
	buf          []float32
	lines, steps int
	t            int // steps taken
}

func (p *spread) start(buf []float32, steps int) {
	*p = spread{buf: buf, lines: len(buf) / 16, steps: steps}
}

func (p *spread) step() {
	if p.lines == 0 || p.t >= p.steps {
		return
	}
	a, b := p.t*p.lines/p.steps, (p.t+1)*p.lines/p.steps
	p.t++
	if b > a {
		prefetch.Far(unsafe.Pointer(&p.buf[a*16]), b-a)
	}
}

// addTail adds the products of columns [from, dim) to the sums of queries
// [j0, j1) that a tile kernel left in out.
func addTail(rows, qs []float32, dim, n, from, j0, j1 int, out []float32) {
	if from == dim {
		return
	}
	for j := j0; j < j1; j++ {
		qt := qs[j*dim+from : (j+1)*dim]
		o := out[j*n : (j+1)*n]
		for i := range o {
			o[i] += dotGeneric(rows[i*dim+from:(i+1)*dim], qt)
		}
	}
}
