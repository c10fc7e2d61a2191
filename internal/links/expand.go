package links

import (
	"fmt"
	"slices"
)

// linkAllMemTypes is the type mask Expand uses when given no types.
const linkAllMemTypes = 1<<Sibling | 1<<Version | 1<<Temporal | 1<<Semantic

// Expand is All-Mem's Stage 2, budgeted typed-link expansion (§3.4, Eq. 8,
// and App. D.3, Algorithm 2): a breadth-first walk along out-links from the
// anchors that returns at most budget nodes within hopLimit hops.
//
// Hop by hop (h = 1 … hopLimit) it visits the frontier in order — the
// anchors, deduplicated, first; then the nodes found at the previous hop in
// the order found — and for each frontier node walks its out-links type by
// type in priority order (sibling, version, temporal, semantic, depends_on,
// depended_by, contradicts: the [Type] order, App. D.3 Eq. 33), each
// type's neighbours in their ranking order (see [Graph.Neighbors]). A
// node not seen before is returned as a [Hit] and joins the next
// frontier. Anchors are never returned and no node is returned twice; the
// walk stops as soon as budget nodes have been found.
//
// types selects the link types to follow, in any order (the priority is
// fixed); nil or empty means All-Mem's four families (sibling, version,
// temporal, semantic). Anchors may be visible or archived; an unknown
// anchor wraps [ErrUnknown] and an invalid type [ErrInvalid].
// A budget or hopLimit ≤ 0 returns no hits once the arguments are checked;
// no hits is always a nil slice.
//
// Unlike App. D.3, where the candidate set starts as the anchors and L
// counts them, budget counts only the expanded nodes: to reproduce
// |C| ≤ L, pass budget = L − len(anchors). Within one type, neighbours follow
// the ranking key of App. B.1 rather than D.3's plain id order, so a capped
// list is walked best link first.
func (g *Graph) Expand(anchors []uint64, hopLimit, budget int, types []Type) ([]Hit, error) {
	mask := uint(linkAllMemTypes)
	if len(types) > 0 {
		mask = 0
		for _, t := range types {
			if t >= numTypes {
				return nil, fmt.Errorf("%w: link type %d", ErrInvalid, uint8(t))
			}
			mask |= 1 << t
		}
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	edges := false // does any anchor have a link of the types asked for?
	for _, a := range anchors {
		n := g.nodes.get(a)
		if n == nil {
			return nil, fmt.Errorf("%w: anchor %d", ErrUnknown, a)
		}
		for typ := Type(0); typ < numTypes && !edges; typ++ {
			edges = mask&(1<<typ) != 0 && len(g.nodes.l(n).out[typ]) > 0
		}
	}
	if !edges || budget <= 0 || hopLimit <= 0 {
		// Nothing to follow (the common case of a search over memories
		// without version links): no visited set to make.
		return nil, nil
	}
	seen := make(map[uint64]struct{}, len(anchors)+min(budget, 1024))
	frontier := make([]uint64, 0, len(anchors))
	for _, a := range anchors {
		if _, ok := seen[a]; !ok {
			seen[a] = struct{}{}
			frontier = append(frontier, a)
		}
	}
	hits := make([]Hit, 0, min(budget, 256))
	for hop := 1; hop <= hopLimit && len(frontier) > 0; hop++ {
		var next []uint64
		for _, u := range frontier {
			n := g.nodes.get(u)
			for typ := range numTypes {
				if mask&(1<<typ) == 0 {
					continue
				}
				for _, e := range g.nodes.l(n).out[typ] {
					if _, ok := seen[e.to]; ok {
						continue
					}
					seen[e.to] = struct{}{}
					hits = append(hits, Hit{Key: e.to, Hop: hop, Via: typ, From: u})
					if len(hits) == budget {
						return hits, nil
					}
					next = append(next, e.to)
				}
			}
		}
		frontier = next
	}
	if len(hits) == 0 {
		return nil, nil
	}
	return hits, nil
}

// Orphans returns, in ascending order, the archived nodes that violate
// All-Mem's no-orphan invariant (App. B.4 and B.7, Eq. 24): those that no
// visible node reaches by a directed path of version links. Paths may run
// through archived nodes; other link types do not count.
func (g *Graph) Orphans() []uint64 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.orphans()
}

func (g *Graph) orphans() []uint64 {
	return g.unreached(g.versionReach(0, false))
}

// Unreached returns, in ascending order, the nodes that no root reaches
// by a directed path of version links: Orphans with the caller's roots
// (the engine also counts a memory archived because its window ended as
// a root, whose chain stays whole).
func (g *Graph) Unreached(roots []uint64) []uint64 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.unreached(g.reachFrom(roots, 0, false))
}

func (g *Graph) unreached(reach map[uint64]struct{}) []uint64 {
	var out []uint64
	for k := range g.nodes.all() {
		if _, ok := reach[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// CheckNoOrphans returns nil when every archived node is reachable from the
// visible surface by version links (All-Mem App. B.4), and otherwise an
// error wrapping [ErrOrphan] that names the orphans.
func (g *Graph) CheckNoOrphans() error {
	o := g.Orphans()
	if len(o) == 0 {
		return nil
	}
	const show = 8
	if len(o) > show {
		return fmt.Errorf("%w: %d orphans, first %v", ErrOrphan, len(o), o[:show])
	}
	return fmt.Errorf("%w: %v", ErrOrphan, o)
}

// versionHops returns h(v), the hop distance along version links from the
// visible surface (0 for visible nodes), for every reachable node.
func (g *Graph) versionHops() map[uint64]int {
	hops := make(map[uint64]int, g.nodes.len())
	var frontier []uint64
	for k, n := range g.nodes.all() {
		if n.visible {
			hops[k] = 0
			frontier = append(frontier, k)
		}
	}
	for h := 1; len(frontier) > 0; h++ {
		var next []uint64
		for _, k := range frontier {
			for _, e := range g.nodes.l(g.nodes.get(k)).out[Version] {
				if _, ok := hops[e.to]; !ok {
					hops[e.to] = h
					next = append(next, e.to)
				}
			}
		}
		frontier = next
	}
	return hops
}

// surfaceDistance returns h(key), the hop distance of a node from the
// visible surface along version links (All-Mem App. A, "h(v) =
// min_{u ∈ V⁺} dist_{E_ν}(u, v)"): 0 for a visible node, ≥ 1 for a
// reachable archived node, and −1 for an orphan.
func (g *Graph) surfaceDistance(key uint64) (int, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.nodes.get(key) == nil {
		return 0, fmt.Errorf("%w: %d", ErrUnknown, key)
	}
	if h, ok := g.versionHops()[key]; ok {
		return h, nil
	}
	return -1, nil
}

// Coverage returns Cov(H), All-Mem's recoverability coverage within hop
// budget H (App. A): the fraction of archived nodes whose [surfaceDistance]
// is at most h. It is 1 when no node is archived.
func (g *Graph) Coverage(h int) float64 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	hops := g.versionHops()
	archived, covered := 0, 0
	for k, n := range g.nodes.all() {
		if n.visible {
			continue
		}
		archived++
		if d, ok := hops[k]; ok && d <= h {
			covered++
		}
	}
	if archived == 0 {
		return 1
	}
	return float64(covered) / float64(archived)
}
