//go:build !noasm && amd64

package simd

import "github.com/klauspost/cpuid/v2"

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

// prefetchLines asks for lines 64-byte cache lines from p to be brought into
// the cache (PREFETCHT2, many_amd64.s); it is only a hint.
//
//go:noescape
func prefetchLines(p *float32, lines int)

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
// it in cache). The first group reads the block from memory: before each
// tile it prefetches the next tile's three rows, which on the 2-core EPYC
// we measure on took a streamed scan from 0.80× to 0.98× the speed of the
// same tiles over a cached block (64 queries, 84-row blocks, d = 768).
// Prefetching the caller's next block instead gained 3% and, together
// with this, lost. The columns past the tiles' multiple of 16 or 8 are
// added with the generic loop, and the last m mod 4 queries go to
// dotBatchAccel.
func dotManyAccel(rows, qs []float32, dim, n, m int, out []float32) {
	j := 0
	if n16 := dim &^ 15; use512 && n16 > 0 {
		for ; j+8 <= m; j += 8 {
			q := &qs[j*dim]
			i := 0
			for ; i+3 <= n; i += 3 {
				if j == 0 && i+6 <= n {
					prefetchLines(&rows[(i+3)*dim], 3*dim/16)
				}
				dotTile3x8AVX512(&rows[i*dim], q, dim, n16, &out[j*n+i], n)
			}
			for ; i < n; i++ {
				dotTile1x8AVX512(&rows[i*dim], q, dim, n16, &out[j*n+i], n)
			}
			addTail(rows, qs, dim, n, n16, j, j+8, out)
		}
	}
	n8 := dim &^ 7
	m4 := m &^ 3
	if n8 == 0 {
		m4 = j
	}
	for ; j < m4; j += 4 {
		q := &qs[j*dim]
		i := 0
		for ; i+3 <= n; i += 3 {
			if j == 0 && i+6 <= n {
				prefetchLines(&rows[(i+3)*dim], 3*dim/16)
			}
			dotTile3x4(&rows[i*dim], q, dim, n8, &out[j*n+i], n)
		}
		for ; i < n; i++ {
			dotTile1x4(&rows[i*dim], q, dim, n8, &out[j*n+i], n)
		}
		addTail(rows, qs, dim, n, n8, j, j+4, out)
	}
	for ; j < m; j++ {
		dotBatchAccel(rows, dim, qs[j*dim:(j+1)*dim], out[j*n:(j+1)*n])
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
