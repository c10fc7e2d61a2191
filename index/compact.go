package index

import (
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"
)

// Compact repairs the graph around deleted nodes and removes them: every
// live node that links to a deleted one gets a new neighbour list, chosen by
// the neighbour-selection heuristic from a beam search around it plus its
// live neighbours and the live neighbours of the deleted ones it linked to
// (the deleted node's neighbourhood is bridged, not lost); then the live
// nodes are renumbered densely, in their order, and the arrays shrink. Without it, deleted nodes keep routing
// searches and every new insert links to fewer live nodes, so recall
// degrades as the graph churns.
//
// Compact holds the index exclusively for its duration (about a second per
// hundred thousand nodes); it returns the number of nodes removed.
func (h *HNSW) Compact() int {
	h.structMu.Lock()
	defer h.structMu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	removed := h.n - h.live
	if removed == 0 {
		return 0
	}
	s := h.searcher()
	defer h.pool.Put(s)

	// 1. Repair: bridge every live node's lists over its deleted neighbours.
	for id := uint32(0); int(id) < h.n; id++ {
		if h.isDead(id) {
			continue
		}
		for l := 0; l <= int(h.levels[id]); l++ {
			h.repair(s, id, l)
		}
	}

	h.renumber(h.liveOrder())
	return removed
}

// liveOrder lists the live nodes in id order. The caller holds h.mu
// exclusively.
func (h *HNSW) liveOrder() []uint32 {
	order := make([]uint32, 0, h.live)
	for id := uint32(0); int(id) < h.n; id++ {
		if !h.isDead(id) {
			order = append(order, id)
		}
	}
	return order
}

// renumber rebuilds the arrays with order[i] (an old id) becoming node i,
// dropping every node not in order and every link to one. The caller holds
// h.mu exclusively.
func (h *HNSW) renumber(order []uint32) {
	remap := make([]uint32, h.n)
	for i := range remap {
		remap[i] = none
	}
	for nid, id := range order {
		remap[id] = uint32(nid)
	}
	newN := len(order)
	oldVecs, oldRefs, oldLinks0, oldUpper, oldLevels, oldKeys := h.vecs, h.vref, h.links0, h.upper, h.levels, h.keys
	// The old off-heap arrays must outlive the copy below.
	defer runtime.KeepAlive([]any{h.vecMem, h.codeMem, h.linkMem, h.keyMem, h.levelMem, h.vrefMem, h.pins})
	h.upper, h.levels, h.keys, h.dead = nil, nil, nil, nil
	h.newArrays()
	h.n = 0
	h.grow(max(newN, 1))
	h.populate(newN)
	h.byKey = newKeyMap(newN)
	copyList := func(dst, src []uint32) {
		k := 0
		for _, nb := range src[1 : 1+src[0]] {
			if r := remap[nb]; r != none {
				dst[1+k] = r
				k++
			}
		}
		dst[0] = uint32(k)
	}
	topLevel, entry := -1, uint32(0)
	for nidx, id := range order {
		nid := uint32(nidx)
		if h.shared {
			h.setRef(nid, oldRefs[id])
		} else {
			copy(h.vecs[int(nid)*h.dim:int(nid+1)*h.dim], oldVecs[int(id)*h.dim:int(id+1)*h.dim])
		}
		h.setCode(nid)
		h.levels[nid], h.keys[nid] = oldLevels[id], oldKeys[id]
		h.byKey.put(oldKeys[id], nid, h.keys)
		copyList(h.links0[int(nid)*(h.m0+1):int(nid+1)*(h.m0+1)], oldLinks0[int(id)*(h.m0+1):int(id+1)*(h.m0+1)])
		if l := int(oldLevels[id]); l > 0 {
			u := h.newUpper(nid, l)
			ou := unsafe.Slice((*uint32)(oldUpper[id]), l*(h.m+1))
			for lv := 0; lv < l; lv++ {
				copyList(u[lv*(h.m+1):(lv+1)*(h.m+1)], ou[lv*(h.m+1):(lv+1)*(h.m+1)])
			}
		}
		if int(oldLevels[id]) > topLevel {
			topLevel, entry = int(oldLevels[id]), nid
		}
	}
	h.n, h.live = newN, newN
	if newN == 0 {
		h.top.Store(0)
	} else {
		h.top.Store(uint64(topLevel+1)<<32 | uint64(entry))
	}
}

// repair rewrites node id's list at level l if it holds deleted nodes: the
// live neighbours stay, and the deleted ones' slots are refilled from a
// beam search around the node (as hnswlib's repairConnectionsForUpdate
// searches) and the live neighbours of the deleted ones. The caller holds
// h.mu exclusively.
func (h *HNSW) repair(s *searcher, id uint32, l int) {
	blk := h.list(id, l)
	cnt := int(blk[0])
	hasDead := false
	for _, nb := range blk[1 : 1+cnt] {
		if h.isDead(nb) {
			hasDead = true
			break
		}
	}
	if !hasDead {
		return
	}
	v := h.vec(id)
	// Candidates: a beam search from the node itself at this level (it
	// routes through the tombstones but returns only live nodes), then the
	// node's live neighbours and the live neighbours of its deleted ones.
	s.layer(h, v, id, 0, h.efc, l, true, nil)
	found := s.res.sorted(s.sel[:0])
	s.startVisit(h.n)
	s.visited[id] = s.epoch
	pool := s.tmp[:0]
	for _, c := range found {
		if s.visited[c.id] != s.epoch {
			s.visited[c.id] = s.epoch
			pool = append(pool, c)
		}
	}
	s.sel = found[:0]
	add := func(x uint32) {
		if s.visited[x] == s.epoch || h.isDead(x) {
			return
		}
		s.visited[x] = s.epoch
		pool = append(pool, distID{1 - dotUnit(v, h.vec(x)), x})
	}
	for _, nb := range blk[1 : 1+cnt] {
		if !h.isDead(nb) {
			add(nb)
			continue
		}
		if int(h.levels[nb]) < l {
			continue
		}
		nblk := h.list(nb, l)
		for _, x := range nblk[1 : 1+nblk[0]] {
			add(x)
		}
	}
	sortByDist(pool)
	// Keep the live neighbours and refill only the slots of the deleted
	// ones: first by the selection heuristic against what is kept, then,
	// if the heuristic leaves slots empty, by distance. A re-selection from
	// scratch would shrink lists that back-links had filled towards 2M and
	// thin the graph.
	keep := s.keep[:0]
	for _, nb := range blk[1 : 1+cnt] {
		if !h.isDead(nb) {
			keep = append(keep, distID{1 - dotUnit(v, h.vec(nb)), nb})
		}
	}
	want := cnt
	kept := len(keep)
	for _, c := range pool {
		if len(keep) == want {
			break
		}
		if slices.ContainsFunc(keep[:kept], func(k distID) bool { return k.id == c.id }) {
			continue
		}
		if h.diverse(c, keep) {
			keep = append(keep, c)
		}
	}
	for _, c := range pool {
		if len(keep) == want {
			break
		}
		if !slices.ContainsFunc(keep, func(k distID) bool { return k.id == c.id }) {
			keep = append(keep, c)
		}
	}
	for i, k := range keep {
		atomic.StoreUint32(&blk[i+1], k.id)
	}
	atomic.StoreUint32(&blk[0], uint32(len(keep)))
	s.keep = keep
	s.tmp = pool[:0]
}
