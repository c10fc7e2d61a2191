package temporal

// RippleParams bound ripple propagation (SmartVector §6.3).
type RippleParams struct {
	// Gamma is the penalty at the first hop (default 0.15).
	Gamma float64
	// MaxDepth is D_max: hops at depth d ≥ MaxDepth are not taken
	// (default 2, so two hops are penalised and the third is not).
	MaxDepth int
	// FanOut caps how many dependants of one memory are followed, in the
	// order the graph lists them; 0 means no cap. SmartVector §11.2 names
	// ripple runaway on dense graphs as a failure mode; the cap is
	// tidemark's mitigation beside D_max.
	FanOut int
}

// DefaultRipple returns SmartVector §6.3's defaults: γ = 0.15, D_max = 2,
// and a fan-out cap of 32.
func DefaultRipple() RippleParams { return RippleParams{Gamma: 0.15, MaxDepth: 2, FanOut: 32} }

// RipplePenalty is the confidence penalty at hop depth d (0 for direct
// dependants): γ/(d+1) while d < D_max, else 0 (SmartVector §6.3).
func RipplePenalty(p RippleParams, d int) float64 {
	if d < 0 || d >= p.MaxDepth {
		return 0
	}
	return p.Gamma / float64(d+1)
}

// RippleHit is one memory reached by a ripple.
type RippleHit struct {
	ID      uint64
	Depth   int
	Penalty float64
}

// Ripple is SmartVector §6.3's bounded breadth-first message passing from
// the changed memory along depended_by edges: the direct dependants are at
// depth 0 and receive γ, their dependants γ/2, and so on until D_max. Each
// memory is hit at most once, at its shallowest depth; the changed memory
// itself is never hit. dependedBy lists a memory's dependants.
func Ripple(p RippleParams, changed uint64, dependedBy func(uint64) []uint64) []RippleHit {
	type item struct {
		id    uint64
		depth int
	}
	visited := map[uint64]bool{changed: true}
	var queue []item
	push := func(from uint64, depth int) {
		deps := dependedBy(from)
		if p.FanOut > 0 && len(deps) > p.FanOut {
			deps = deps[:p.FanOut]
		}
		for _, d := range deps {
			queue = append(queue, item{d, depth})
		}
	}
	push(changed, 0)
	var hits []RippleHit
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if visited[it.id] || it.depth >= p.MaxDepth {
			continue
		}
		visited[it.id] = true
		hits = append(hits, RippleHit{ID: it.id, Depth: it.depth, Penalty: RipplePenalty(p, it.depth)})
		push(it.id, it.depth+1)
	}
	return hits
}
