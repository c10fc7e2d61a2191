package index

import (
	"unsafe"

	"github.com/tidemark/tidemark/internal/prefetch"
)

// A beam is the state of a search on one level as a single array sorted by
// distance (the "linear pool" of NSG-style graph searches) in place of
// layer's two heaps: the candidates are the entries not yet expanded, the
// results the entries that are not route-only. Expanding the closest
// unexpanded entry, while every unexpanded entry lies within the ef best
// results, visits the nodes layer visits in the same order (ties aside;
// TestBeamAgreesWithLayer); a node admitted costs one branch-free binary
// search and one copy instead of two heap sifts with unpredictable
// branches, and the results come out sorted (BenchmarkSearchWalk compares
// the two on GloVe-100).
type beam struct {
	e []distID // ascending distance; the id's top two bits are flags
	// results counts the entries without routeOnly; next is the first
	// entry that may be unexpanded.
	results int
	next    int
}

const (
	expandedBit = 1 << 31 // the entry's neighbours were visited
	routeOnly   = 1 << 30 // a deleted node: it routes, it is no result
	beamIDMask  = 1<<30 - 1
	// maxBeamNodes bounds the node ids a beam can hold (the flags take
	// the top two bits); a larger index searches with layer.
	maxBeamNodes = 1 << 30
)

// reset empties the beam.
func (b *beam) reset() { b.e, b.results, b.next = b.e[:0], 0, 0 }

// admit inserts (d, id) after every entry not farther, then keeps at most
// ef results: the farthest results past ef go, and with them the
// route-only entries past the farthest result left, which layer would
// never expand either.
func (b *beam) admit(d float32, id uint32, result bool, ef int) {
	// A branch-free binary search for the first entry farther than d:
	// where a node lands is unpredictable.
	lo := 0
	if n := len(b.e); n > 0 {
		e := b.e
		for n > 1 {
			half := n >> 1
			lo += half & -b2i(e[lo+half].d <= d)
			n -= half
		}
		lo += b2i(e[lo].d <= d)
	}
	if !result {
		id |= routeOnly
	}
	b.e = append(b.e, distID{})
	copy(b.e[lo+1:], b.e[lo:])
	b.e[lo] = distID{d, id}
	b.next = min(b.next, lo)
	if !result {
		return
	}
	b.results++
	for b.results > ef {
		t := b.e[len(b.e)-1]
		b.e = b.e[:len(b.e)-1]
		if t.id&routeOnly == 0 {
			b.results--
		}
	}
	if b.results == ef {
		for b.e[len(b.e)-1].id&routeOnly != 0 {
			b.e = b.e[:len(b.e)-1]
		}
	}
}

// full reports whether d cannot enter the beam: it holds ef results and
// the farthest of them, its last entry, is not farther than d.
func (b *beam) full(d float32, ef int) bool {
	return b.results >= ef && d >= b.e[len(b.e)-1].d
}

// pop marks the closest unexpanded entry expanded and returns its node,
// or false when every entry is expanded.
func (b *beam) pop() (uint32, bool) {
	i := b.next
	for i < len(b.e) && b.e[i].id&expandedBit != 0 {
		i++
	}
	b.next = i
	if i == len(b.e) {
		return 0, false
	}
	b.e[i].id |= expandedBit
	b.next = i + 1
	return b.e[i].id & beamIDMask, true
}

// peek returns the node pop would return next, if any, without expanding
// it.
func (b *beam) peek() (uint32, bool) {
	for i := b.next; i < len(b.e); i++ {
		if b.e[i].id&expandedBit == 0 {
			return b.e[i].id & beamIDMask, true
		}
	}
	return 0, false
}

// sorted writes the beam's results to dst, closest first, ties by id
// (as sortByDist orders them).
func (b *beam) sorted(dst []distID) []distID {
	dst = dst[:0]
	for _, e := range b.e {
		if e.id&routeOnly == 0 {
			dst = append(dst, distID{e.d, e.id & beamIDMask})
		}
	}
	// Equal distances are rare and adjacent: an insertion pass orders
	// them by id.
	for i := 1; i < len(dst); i++ {
		for j := i; j > 0 && dst[j].d == dst[j-1].d && dst[j].id < dst[j-1].id; j-- {
			dst[j], dst[j-1] = dst[j-1], dst[j]
		}
	}
	return dst
}

// nearest is the beam search of width ef on level l from ep, with layer's
// contract: with skipDead, tombstoned nodes and nodes the filter rejects
// route the search but are not returned. It returns the results, closest
// first (ties by id), in s.sel. Unfiltered searches of an index whose
// ids fit use the beam; the others, and indexes where tombstones are many
// (a beam keeps every one that routes, where layer's heap sifts them),
// use layer. The caller holds h.mu shared.
func (s *searcher) nearest(h *HNSW, q []float32, ep uint32, epd float32, ef, l int, skipDead bool, filter func(uint64) bool) []distID {
	if filter != nil || len(h.levels) > maxBeamNodes || (skipDead && h.manyDead()) {
		s.layer(h, q, ep, epd, ef, l, skipDead, filter)
		s.sel = s.res.sorted(s.sel[:0])
		return s.sel
	}
	s.walk(h, q, ep, epd, ef, l, skipDead)
	s.sel = s.beam.sorted(s.sel)
	return s.sel
}

// manyDead reports whether more than a quarter of the nodes are
// tombstones.
func (h *HNSW) manyDead() bool {
	h.allocMu.Lock()
	defer h.allocMu.Unlock()
	return 4*(h.n-h.live) > h.n
}

// walk is layer with the beam, without a filter.
func (s *searcher) walk(h *HNSW, q []float32, ep uint32, epd float32, ef, l int, skipDead bool) {
	s.startVisit(len(h.levels)) // h.n may grow meanwhile; the capacity may not
	b := &s.beam
	b.reset()
	s.visited[ep] = s.epoch
	b.admit(epd, ep, !skipDead || !h.isDead(ep), ef)
	for expanded := 0; ; expanded++ {
		if expanded&255 == 255 && s.ctx != nil {
			if s.err = s.ctx.Err(); s.err != nil {
				return
			}
		}
		c, ok := b.pop()
		if !ok {
			return
		}
		batch := s.unvisited(h, c, l)
		// The next node to expand is most likely the closest unexpanded
		// one now: start loading its neighbour block while these
		// distances run.
		if nx, ok := b.peek(); ok && l == 0 {
			prefetch.Lines(unsafe.Pointer(&h.links0[int(nx)*(h.m0+1)]), h.listLines)
		}
		ds := s.distances(h, q, batch)
		for bi, nb := range batch {
			d := ds[bi]
			if !b.full(d, ef) {
				b.admit(d, nb, !skipDead || !h.isDead(nb), ef)
			}
		}
	}
}

// b2i is 1 for true: the compiler makes it a SETcc, not a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
