package simd

// PanelWidth is the number of queries in one panel of [Panels].
const PanelWidth = 16

// Panels holds queries packed for [DotRows]: transposed in panels of
// PanelWidth queries, so that one column of a panel — element c of sixteen
// queries — is one contiguous 64-byte line. The queries past the last full
// panel are padded with zeros. The zero value is empty; Pack fills it,
// reusing its storage.
type Panels struct {
	data   []float32 // panel p, column c, lane l at data[(p*dim+c)*PanelWidth+l]
	dim, m int
}

// Pack packs the len(qs)/dim queries of qs (row-major, dim columns). It
// panics if dim ≤ 0 or len(qs) is not a multiple of dim.
func (p *Panels) Pack(qs []float32, dim int) {
	if dim <= 0 {
		panic("simd: Panels.Pack: dim must be positive")
	}
	if len(qs)%dim != 0 {
		panicLengths("Panels.Pack", "len(qs)", len(qs), "a multiple of dim", dim)
	}
	m := len(qs) / dim
	np := (m + PanelWidth - 1) / PanelWidth
	size := np * dim * PanelWidth
	if cap(p.data) < size {
		p.data = make([]float32, size)
	}
	p.data, p.dim, p.m = p.data[:size], dim, m
	for pi := 0; pi < np; pi++ {
		panel := p.data[pi*dim*PanelWidth : (pi+1)*dim*PanelWidth]
		for l := 0; l < PanelWidth; l++ {
			j := pi*PanelWidth + l
			if j >= m {
				for c := 0; c < dim; c++ {
					panel[c*PanelWidth+l] = 0
				}
				continue
			}
			q := qs[j*dim : (j+1)*dim]
			for c, v := range q {
				panel[c*PanelWidth+l] = v
			}
		}
	}
}

// Len is the number of queries packed.
func (p *Panels) Len() int { return p.m }

// Dim is the queries' dimension.
func (p *Panels) Dim() int { return p.dim }

// Stride is the distance between two rows' results in DotRows' output:
// the number of queries rounded up to a whole panel.
func (p *Panels) Stride() int {
	return (p.m + PanelWidth - 1) / PanelWidth * PanelWidth
}

// DotRows computes the dot product of every row of a block with every
// packed query, row-major: for the n = len(rows)/Dim() rows it sets
//
//	out[i*Stride()+j] = Dot(rows[i*Dim():(i+1)*Dim()], query j)
//
// for j < Len(), and the padding lanes j in [Len(), Stride()) to zero.
// Nothing outside out[:n*Stride()] is written.
//
// It is the compute-bound kernel for many queries over the same rows
// (the many-queries case of [DotBatch], where each row is read once per
// query). On the accelerated path a tile of 6 rows × 64 queries is
// accumulated in twenty-four 512-bit registers (6 × 16 in twelve 256-bit
// registers without AVX-512): per column, each row's element is broadcast
// once and each panel line loaded once, and in the widest tile every load
// feeds four to six fused multiply-adds (the tiles for the last panels and
// rows are narrower). Nothing is reduced horizontally — a lane is one
// query — so the tile ends in plain stores. Callers get the most from it
// with a block of rows that fits in the L2 cache beside the panels
// (package kernels uses 256 KiB).
//
// next is the block of rows the caller will pass to its next call: it is
// prefetched a few cache lines per tile, so that a scan of many blocks
// reads memory at an even pace and finds each block in cache. It is only
// touched by prefetch hints, never read into a result; nil prefetches
// nothing, and the generic path ignores it.
//
// It panics if len(rows) is not a multiple of Dim() or len(out) <
// n·Stride().
func DotRows(rows []float32, p *Panels, out, next []float32) {
	dim := p.dim
	if dim == 0 {
		if len(rows) != 0 {
			panic("simd: DotRows: no queries packed")
		}
		return
	}
	if len(rows)%dim != 0 {
		panicLengths("DotRows", "len(rows)", len(rows), "a multiple of dim", dim)
	}
	n, ld := len(rows)/dim, p.Stride()
	if n == 0 || ld == 0 {
		return
	}
	if len(out)/ld < n {
		panicLengths("DotRows", "len(out)", len(out), "at least rows·Stride()", n*ld)
	}
	if useAccel {
		dotRowsAccel(rows, p.data, dim, n, ld/PanelWidth, out, ld, next)
		return
	}
	dotRowsGeneric(rows, p.data, dim, n, ld/PanelWidth, out, ld)
}

// dotRowsGeneric is DotRows' portable kernel: per row and panel, sixteen
// running sums over the columns.
func dotRowsGeneric(rows, panels []float32, dim, n, np int, out []float32, ld int) {
	for i := 0; i < n; i++ {
		row := rows[i*dim : (i+1)*dim]
		for pi := 0; pi < np; pi++ {
			panel := panels[pi*dim*PanelWidth : (pi+1)*dim*PanelWidth]
			var acc [PanelWidth]float32
			for c, x := range row {
				line := panel[c*PanelWidth : (c+1)*PanelWidth : (c+1)*PanelWidth]
				for l := range acc {
					acc[l] += x * line[l]
				}
			}
			copy(out[i*ld+pi*PanelWidth:], acc[:])
		}
	}
}
