package index

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/tidemark/tidemark/internal/prefetch"
	"github.com/tidemark/tidemark/simd"
)

// distID is a node with its distance to the current query.
type distID struct {
	d  float32
	id uint32
}

// searcher is the scratch space of one search or insert, taken from the
// index's pool so that a search allocates nothing but its result slice.
type searcher struct {
	q []float32
	// quant makes layer use the int8 codes: qc is the query's code, qs
	// its scale (a quantized Search).
	quant bool
	qc    []int8
	qs    float32
	dots  []int32   // code dots of the batch being expanded
	dists []float32 // its distances
	// ctx, when set, is checked every 256 expansions; err records why a
	// search stopped early.
	ctx context.Context
	err error
	// visited[id] == epoch marks id visited in the current search; the
	// epoch advances per search and the array is cleared only on wrap.
	visited []uint16
	epoch   uint16
	cand    minHeap // candidates to expand, closest first
	res     maxHeap // the ef best so far, farthest on top
	sel     []distID
	keep    []distID
	nbrs    []distID
	batch   []uint32 // the unvisited neighbours of the node being expanded
	tmp     []distID
	beam    beam
}

func (h *HNSW) searcher() *searcher {
	if s, ok := h.pool.Get().(*searcher); ok {
		// A search that panicked (in a filter) may have left its state.
		s.quant, s.ctx, s.err = false, nil, nil
		return s
	}
	return &searcher{}
}

// startVisit begins a new visited set over n nodes.
func (s *searcher) startVisit(n int) {
	if len(s.visited) < n {
		s.visited = make([]uint16, max(n, 2*len(s.visited)))
		s.epoch = 0
	}
	s.epoch++
	if s.epoch == 0 {
		clear(s.visited)
		s.epoch = 1
	}
}

// layer is the beam search of width ef on level l from ep (hnswlib's
// searchBaseLayer / searchBaseLayerST). With skipDead, tombstoned nodes and
// nodes the filter rejects route the search but are kept out of the
// results. The results are left in s.res. The caller holds h.mu shared.
func (s *searcher) layer(h *HNSW, q []float32, ep uint32, epd float32, ef, l int, skipDead bool, filter func(uint64) bool) {
	s.startVisit(len(h.levels)) // h.n may grow meanwhile; the capacity may not
	s.cand = s.cand[:0]
	s.res = s.res[:0]
	s.visited[ep] = s.epoch
	s.cand.push(distID{epd, ep})
	lower := float32(math.Inf(1))
	if !skipDead || h.accept(ep, filter) {
		s.res.push(distID{epd, ep})
		lower = epd
	}
	for expanded := 0; len(s.cand) > 0; expanded++ {
		if expanded&255 == 255 && s.ctx != nil {
			if s.err = s.ctx.Err(); s.err != nil {
				return
			}
		}
		c := s.cand.pop()
		if c.d > lower && len(s.res) >= ef {
			break
		}
		batch := s.unvisited(h, c.id, l)
		// The next candidate to expand is most likely the current best:
		// start loading its neighbour block while these distances run.
		if l == 0 && len(s.cand) > 0 {
			prefetch.Lines(unsafe.Pointer(&h.links0[int(s.cand[0].id)*(h.m0+1)]), h.listLines)
		}
		ds := s.distances(h, q, batch)
		for bi, nb := range batch {
			d := ds[bi]
			if len(s.res) < ef || d < lower {
				s.cand.push(distID{d, nb})
				if !skipDead || h.accept(nb, filter) {
					s.res.push(distID{d, nb})
					if len(s.res) > ef {
						s.res.pop()
					}
				}
				if len(s.res) > 0 {
					lower = s.res[0].d
				}
			}
		}
	}
}

// unvisited collects node c's neighbours at level l not yet visited into
// s.batch, marks them visited, and starts loading their codes (all of
// them: DotInt8Rows takes them in one call) or their first lookAhead
// vectors before any distance is computed, so that the cache misses
// overlap.
func (s *searcher) unvisited(h *HNSW, c uint32, l int) []uint32 {
	blk := h.list(c, l)
	cnt := atomic.LoadUint32(&blk[0])
	batch := s.batch[:0]
	for i := uint32(1); i <= cnt; i++ {
		nb := atomic.LoadUint32(&blk[i])
		if s.visited[nb] == s.epoch {
			continue
		}
		s.visited[nb] = s.epoch
		batch = append(batch, nb)
	}
	s.batch = batch
	if len(batch) > 0 {
		if s.quant {
			prefetch.Rows(unsafe.Pointer(&h.codes[0]), uintptr(h.cstride), batch, h.clines)
		} else {
			h.prefetchVecs(batch[:min(lookAhead, len(batch))])
		}
	}
	return batch
}

// distances returns the distances of the batch's nodes to q, in
// s.dists: through their codes in one kernel call (the rows' loads
// overlap each other's arithmetic), or through their float32 vectors,
// keeping the next lookAhead vectors in flight meanwhile (software
// pipelining: hnswlib prefetches one ahead; prefetching all at once
// overfills the CPU's line-fill buffers and stalls).
func (s *searcher) distances(h *HNSW, q []float32, batch []uint32) []float32 {
	if cap(s.dists) < len(batch) {
		s.dists = make([]float32, max(len(batch), 2*h.m0))
	}
	ds := s.dists[:len(batch)]
	if s.quant {
		if cap(s.dots) < len(batch) {
			s.dots = make([]int32, max(len(batch), 2*h.m0))
		}
		dots := s.dots[:len(batch)]
		simd.DotInt8Rows(s.qc, h.codes, batch, dots)
		for i, nb := range batch {
			ds[i] = 1 - s.qs*h.scale(nb)*float32(dots[i])
		}
		return ds
	}
	for i, nb := range batch {
		if j := i + lookAhead; j < len(batch) {
			prefetch.Lines(h.vecPtr(batch[j]), h.lines)
		}
		ds[i] = h.dist(q, nb)
	}
	return ds
}

// prefetchVecs starts loading the vectors of ids.
func (h *HNSW) prefetchVecs(ids []uint32) {
	if h.shared {
		for _, id := range ids {
			prefetch.Lines(h.vref[id], h.lines)
		}
		return
	}
	prefetch.Rows(unsafe.Pointer(&h.vecs[0]), uintptr(4*h.dim), ids, h.lines)
}

// accept reports whether a node may be returned: not deleted, and allowed
// by the filter.
func (h *HNSW) accept(id uint32, filter func(uint64) bool) bool {
	return !h.isDead(id) && (filter == nil || filter(h.keys[id]))
}

// minHeap is a binary heap of distIDs, closest on top. It and maxHeap are
// written out twice on purpose: they are the beam search's inner loop, and a
// generic heap would compare through a dictionary call.
type minHeap []distID

func (hp *minHeap) push(x distID) {
	h := append(*hp, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].d <= h[i].d {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	*hp = h
}

func (hp *minHeap) pop() distID {
	h := *hp
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h[r].d < h[l].d {
			m = r
		}
		if h[i].d <= h[m].d {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*hp = h
	return top
}

// maxHeap is a binary heap of distIDs, farthest on top.
type maxHeap []distID

func (hp *maxHeap) push(x distID) {
	h := append(*hp, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].d >= h[i].d {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	*hp = h
}

func (hp *maxHeap) pop() distID {
	h := *hp
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h[r].d > h[l].d {
			m = r
		}
		if h[i].d >= h[m].d {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*hp = h
	return top
}

// sorted empties the heap into dst in ascending distance (ties by id).
func (hp *maxHeap) sorted(dst []distID) []distID {
	dst = append(dst[:0], *hp...)
	*hp = (*hp)[:0]
	sortByDist(dst)
	return dst
}

func sortByDist(xs []distID) {
	slices.SortFunc(xs, func(a, b distID) int {
		if a.d != b.d {
			return cmp.Compare(a.d, b.d)
		}
		return cmp.Compare(a.id, b.id)
	})
}

// lookAhead is how many neighbour vectors are prefetched ahead of the
// distance being computed: on GloVe-100 (2-core VM), 3–6 ahead beat both
// one ahead and all at once.
const lookAhead = 4
