package simd

import "fmt"

// AboveLines tests, for a block of rows and many queries at once, which
// (row, query) pairs score at least a query's threshold when a row's score
// is linear in its similarity: bit l of masks[r·(ld/16)+p] is set when
//
//	a[r]·sims[r·ld+16p+l] + c[r] ≥ thr[16p+l]
//
// for the rows r < len(a) and the ld/16 panels of sixteen queries (ld a
// multiple of 16, the layout [DotRows] writes). It is the epilogue's
// filter in package kernels: most pairs of a large scan fall under their
// query's threshold, and one vector comparison per panel finds the few
// that do not. The line is computed in float32 (with a fused
// multiply-add on the accelerated path), so a caller that must not lose a
// pair lowers thr by a margin for float32 rounding and checks the pairs
// found exactly. c[r] = −Inf (with a finite a[r]) passes only a −Inf
// threshold; c[r] = +Inf passes every threshold.
//
// It panics if ld is not a positive multiple of 16, if len(c) != len(a),
// if len(thr) < ld, if len(sims) < len(a)·ld or len(masks) <
// len(a)·ld/16.
func AboveLines(sims []float32, ld int, a, c, thr []float32, masks []uint16) {
	if ld <= 0 || ld%PanelWidth != 0 {
		panic(fmt.Sprintf("simd: AboveLines: ld = %d is not a positive multiple of %d", ld, PanelWidth))
	}
	n, np := len(a), ld/PanelWidth
	switch {
	case len(c) != n:
		panicLengths("AboveLines", "len(c)", len(c), "len(a)", n)
	case len(thr) < ld:
		panicLengths("AboveLines", "len(thr)", len(thr), "at least ld", ld)
	case len(sims)/ld < n:
		panicLengths("AboveLines", "len(sims)", len(sims), "at least len(a)·ld", n*ld)
	case len(masks)/np < n:
		panicLengths("AboveLines", "len(masks)", len(masks), "at least len(a)·ld/16", n*np)
	}
	if n == 0 {
		return
	}
	if useAccel {
		aboveLinesAccel(sims, ld, a, c, thr, masks)
		return
	}
	aboveLinesGeneric(sims, ld, a, c, thr, masks)
}

func aboveLinesGeneric(sims []float32, ld int, a, c, thr []float32, masks []uint16) {
	np := ld / PanelWidth
	for r := range a {
		ar, cr := a[r], c[r]
		row := sims[r*ld : (r+1)*ld]
		for p := 0; p < np; p++ {
			var m uint16
			for l := 0; l < PanelWidth; l++ {
				j := p*PanelWidth + l
				if ar*row[j]+cr >= thr[j] {
					m |= 1 << l
				}
			}
			masks[r*np+p] = m
		}
	}
}
