package kernels

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/tidemark/tidemark/internal/unitvec"
	"github.com/tidemark/tidemark/simd"
	"github.com/tidemark/tidemark/temporal"
)

// RescoreCandidate is one candidate from another vector store.
type RescoreCandidate struct {
	// Vector is the candidate's embedding. When it is nil, Sim must be set.
	Vector []float32
	// Sim is a precomputed cosine similarity to the query, used when
	// Vector is nil (HasSim must then be true).
	Sim    float64
	HasSim bool
	// Meta is everything else tidemark scores: kind, status, times,
	// half-life, floor, confidence counters, degree. Meta.Sim is ignored.
	Meta temporal.Candidate
	// Group is the candidate's drift group (adaptive decay).
	Group uint32
}

// RescoreRequest asks for tidemark's ranking of foreign candidates.
type RescoreRequest struct {
	// Query is the query embedding; needed when any candidate has a Vector.
	Query      []float32
	Candidates []RescoreCandidate
	// Time holds the reference times, time range and filters.
	Time temporal.Query
	// Params are the scoring parameters (temporal.Preset and adjust).
	Params temporal.Params
	// GroupLambda is the drift λ(t) per group (adaptive decay only).
	GroupLambda []float64
	// K is the number of results; 0 means all.
	K int
}

// Explained is one rescored candidate with every signal behind its score.
type Explained struct {
	ID uint64
	// Score is the method's score, the ranking order; under pooled
	// parameters (temporal.Params.Pooled, the article's reranker) it is
	// relative to this request's pool.
	Score float64
	// PoolFree is temporal.PoolFreeScore of the signals: Score without
	// its pool-relative inputs, comparable across requests (equal to
	// Score when the parameters are not pooled).
	PoolFree float64
	Signals  temporal.Signals
}

// RescoreResult is tidemark's ranking of the request's candidates.
type RescoreResult struct {
	// Ranked holds the top K kept candidates, best first.
	Ranked []Explained
	// Removed holds every masked candidate with its reason, in input order.
	Removed []temporal.Removed
	Stats   Stats
}

// MaxRescoreCandidates bounds one request; larger pools belong in a Batch.
const MaxRescoreCandidates = 1 << 20

// Rescore ranks candidates that came from another vector store (Qdrant,
// Milvus, pgvector, …) by tidemark's fused score and explains each result.
// Every input is validated first; nothing is scored if any is bad.
func Rescore(ctx context.Context, req *RescoreRequest) (RescoreResult, error) {
	n := len(req.Candidates)
	if n > MaxRescoreCandidates {
		return RescoreResult{}, fmt.Errorf("%w: %d candidates, at most %d", ErrInvalid, n, MaxRescoreCandidates)
	}
	if req.K < 0 {
		return RescoreResult{}, fmt.Errorf("%w: k = %d", ErrInvalid, req.K)
	}
	// The scratch (a metadata-only batch: the similarities are computed
	// here, and the per-candidate buffers) is pooled: a query in steady
	// state allocates only its result.
	sc := rescorePool.Get().(*rescoreScratch)
	defer rescorePool.Put(sc)
	b := &sc.b
	b.Reset()
	sc.sims = slices.Grow(sc.sims[:0], n)[:n]
	sims := sc.sims
	var qn []float32
	for i := range req.Candidates {
		c := &req.Candidates[i]
		switch {
		case c.Vector != nil:
			if qn == nil {
				if len(req.Query) == 0 {
					return RescoreResult{}, fmt.Errorf("%w: candidate %d has a vector but the request has no query", ErrInvalid, c.Meta.ID)
				}
				qn = make([]float32, len(req.Query))
				if err := normalized(req.Query, qn, "query"); err != nil {
					return RescoreResult{}, err
				}
			}
			if len(c.Vector) != len(qn) {
				return RescoreResult{}, fmt.Errorf("%w: candidate %d has dimension %d, the query %d", ErrDimension, c.Meta.ID, len(c.Vector), len(qn))
			}
			v := make([]float32, len(c.Vector))
			if err := normalized(c.Vector, v, fmt.Sprintf("candidate %d", c.Meta.ID)); err != nil {
				return RescoreResult{}, err
			}
			sims[i] = float64(simd.Dot(qn, v))
		case c.HasSim:
			if math.IsNaN(c.Sim) || math.IsInf(c.Sim, 0) || c.Sim < -1.0001 || c.Sim > 1.0001 {
				return RescoreResult{}, fmt.Errorf("%w: candidate %d: similarity %v is not a cosine", ErrNotFinite, c.Meta.ID, c.Sim)
			}
			sims[i] = c.Sim
		default:
			return RescoreResult{}, fmt.Errorf("%w: candidate %d has neither a vector nor a similarity", ErrInvalid, c.Meta.ID)
		}
		if err := b.appendMeta(c.Meta, c.Group); err != nil {
			return RescoreResult{}, err
		}
	}
	q := Query{Vector: []float32{1}, Time: req.Time, GroupLambda: req.GroupLambda}
	if err := checkTime(b, &q, &req.Params); err != nil {
		return RescoreResult{}, err
	}
	e := newEpilogue(b, &q, &req.Params)
	e.pool = true // an explanation shows the pool-normalised similarity too
	var res RescoreResult
	sc.reasons = slices.Grow(sc.reasons[:0], n)[:n]
	reasons := sc.reasons
	res.Ranked, res.Removed = sc.ranked[:0], sc.removed[:0]
	e.minSim, e.maxSim, e.minAge, e.maxAge = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i := 0; i < n; i++ {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return RescoreResult{}, err
			}
		}
		r := e.premask(i)
		if r == temporal.ReasonNone {
			r = e.postmask(i, sims[i])
		}
		reasons[i] = r
		if r != temporal.ReasonNone {
			res.Removed = append(res.Removed, temporal.Removed{ID: b.ID[i], Reason: r})
			res.Stats.Removed[r]++
			continue
		}
		res.Stats.Scored++
		e.minSim, e.maxSim = math.Min(e.minSim, sims[i]), math.Max(e.maxSim, sims[i])
		e.minAge, e.maxAge = math.Min(e.minAge, e.age(i)), math.Max(e.maxAge, e.age(i))
	}
	for i := 0; i < n; i++ {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return RescoreResult{}, err
			}
		}
		if reasons[i] != temporal.ReasonNone {
			continue
		}
		score, sig := e.signals(i, sims[i], true)
		free := score
		if req.Params.Pooled() {
			free = temporal.PoolFreeScore(&req.Params, &sig)
		}
		res.Ranked = append(res.Ranked, Explained{ID: b.ID[i], Score: score, PoolFree: free, Signals: sig})
	}
	sc.ranked, sc.removed = res.Ranked, res.Removed
	res.Ranked = rankExplained(res.Ranked, req.K)
	// The result is the caller's: copies, not the pooled buffers.
	res.Ranked, res.Removed = slices.Clone(res.Ranked), slices.Clone(res.Removed)
	return res, nil
}

// rescoreScratch is Rescore's per-call memory, reused through rescorePool.
type rescoreScratch struct {
	b       Batch
	sims    []float64
	reasons []temporal.Reason
	ranked  []Explained
	removed []temporal.Removed
}

var rescorePool = sync.Pool{New: func() any { return &rescoreScratch{b: Batch{Dim: 1}} }}

// normalized writes v / ‖v‖ to dst after checking v is finite and non-zero.
func normalized(v, dst []float32, what string) error {
	switch p, i := unitvec.Normalize(v, dst); p {
	case unitvec.NotFinite:
		return fmt.Errorf("%w: %s vector[%d] = %v", ErrNotFinite, what, i, v[i])
	case unitvec.Zero:
		return fmt.Errorf("%w: %s", ErrZeroVector, what)
	}
	return nil
}

// rankExplained orders the best k of ranked (all of them when k ≤ 0)
// first, best first, and returns them. For a k well below len(ranked) —
// a search's 10 of 80 candidates — it keeps a sorted prefix of k and
// inserts only what beats its last, instead of sorting everything.
func rankExplained(ranked []Explained, k int) []Explained {
	less := func(a, b *Explained) bool { return better(a.Score, a.ID, b.Score, b.ID) }
	if k <= 0 || 2*k >= len(ranked) {
		slices.SortFunc(ranked, func(a, b Explained) int {
			if less(&a, &b) {
				return -1
			}
			if less(&b, &a) {
				return 1
			}
			return 0
		})
		if k > 0 && k < len(ranked) {
			return ranked[:k]
		}
		return ranked
	}
	top := 0
	for i := range ranked {
		if top == k && !less(&ranked[i], &ranked[k-1]) {
			continue
		}
		e := ranked[i]
		j := min(top, k-1)
		for j > 0 && less(&e, &ranked[j-1]) {
			ranked[j] = ranked[j-1]
			j--
		}
		ranked[j] = e
		top = min(top+1, k)
	}
	return ranked[:k]
}
