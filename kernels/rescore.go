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
	sc := rescorePool.Get().(*rescoreScratch)
	defer rescorePool.Put(sc)
	if err := sc.prepare(req, false); err != nil {
		return RescoreResult{}, err
	}
	n := len(req.Candidates)
	sc.sims = slices.Grow(sc.sims[:0], n)[:n]
	if sc.dim > 0 {
		if len(req.Query) == 0 {
			return RescoreResult{}, fmt.Errorf("%w: candidate %d has a vector but the request has no query", ErrInvalid, req.Candidates[sc.withVec[0]].Meta.ID)
		}
		if err := sc.queries([][]float32{req.Query}); err != nil {
			return RescoreResult{}, err
		}
		sc.dot(1)
		for k, i := range sc.withVec {
			sc.sims[i] = float64(sc.dots[k])
		}
	}
	for i := range req.Candidates {
		if c := &req.Candidates[i]; c.Vector == nil {
			sc.sims[i] = c.Sim
		}
	}
	return sc.rank(ctx, req)
}

// RescoreRows is Rescore for candidates that are rows of a batch the
// caller holds (tidemark's own column store): candidate i is row rows[i]
// of b, with cosine sims[i] (in [−1, 1]) and, under adaptive decay, the
// row's drift group. The rows' metadata is scored as stored and not
// validated again (Append and the column writers' callers did that); the
// request's time, parameters and k are. req.Query and req.Candidates
// must be empty. Results name candidates by b.ID.
func RescoreRows(ctx context.Context, b *Batch, rows []int, sims []float64, req *RescoreRequest) (RescoreResult, error) {
	if len(req.Query) != 0 || len(req.Candidates) != 0 {
		return RescoreResult{}, fmt.Errorf("%w: RescoreRows takes its candidates as rows", ErrInvalid)
	}
	if len(sims) != len(rows) {
		return RescoreResult{}, fmt.Errorf("%w: %d similarities for %d rows", ErrInvalid, len(sims), len(rows))
	}
	if err := checkCount(len(rows), req.K); err != nil {
		return RescoreResult{}, err
	}
	if b == nil {
		return RescoreResult{}, fmt.Errorf("%w: RescoreRows without a batch", ErrInvalid)
	}
	if err := b.checkMetaShape(); err != nil {
		return RescoreResult{}, err
	}
	for k, i := range rows {
		if uint(i) >= uint(b.Len()) {
			return RescoreResult{}, fmt.Errorf("%w: row %d of %d", ErrInvalid, i, b.Len())
		}
		if s := sims[k]; !isCosine(s) {
			return RescoreResult{}, fmt.Errorf("%w: row %d: similarity %v is not a cosine", ErrNotFinite, i, s)
		}
	}
	sc := rescorePool.Get().(*rescoreScratch)
	defer rescorePool.Put(sc)
	sc.b.Reset()
	sc.b.gather(b, rows)
	q := req.query()
	if err := checkTime(&sc.b, &q, &req.Params); err != nil {
		return RescoreResult{}, err
	}
	sc.sims = append(sc.sims[:0], sims...)
	return sc.rank(ctx, req)
}

// MaxRescoreQueries bounds the queries of one RescoreMany, and
// MaxRescoreSims the similarities it computes (queries × candidates).
const (
	MaxRescoreQueries = 1024
	MaxRescoreSims    = 1 << 25
)

// RescoreMany is Rescore for many query vectors over the same candidates:
// result j is what Rescore returns for queries[j] as req.Query. Every
// candidate needs a vector (a precomputed similarity belongs to one
// query), and req.Query must be empty. The candidates' vectors are
// normalised and packed once and every query's similarities come from one
// batched pass (simd.DotRows over cache-sized blocks of candidates), so a
// batch costs far less than its queries one by one; the temporal signals
// are then computed per query, with the explanation of each result.
func RescoreMany(ctx context.Context, req *RescoreRequest, queries [][]float32) ([]RescoreResult, error) {
	if len(req.Query) != 0 {
		return nil, fmt.Errorf("%w: RescoreMany takes its queries apart from RescoreRequest.Query", ErrInvalid)
	}
	m, n := len(queries), len(req.Candidates)
	if m > MaxRescoreQueries {
		return nil, fmt.Errorf("%w: %d queries, at most %d", ErrInvalid, m, MaxRescoreQueries)
	}
	if m > 0 && n > MaxRescoreSims/m {
		return nil, fmt.Errorf("%w: %d queries × %d candidates, at most %d similarities", ErrInvalid, m, n, MaxRescoreSims)
	}
	sc := rescorePool.Get().(*rescoreScratch)
	defer rescorePool.Put(sc)
	if err := sc.prepare(req, true); err != nil {
		return nil, err
	}
	if m == 0 {
		return nil, nil
	}
	if n > 0 {
		if err := sc.queries(queries); err != nil {
			return nil, err
		}
		sc.dot(m)
	}
	out := make([]RescoreResult, m)
	sc.sims = slices.Grow(sc.sims[:0], n)[:n]
	for j := range out {
		for i, d := range sc.dots[j*n : (j+1)*n] {
			sc.sims[i] = float64(d)
		}
		res, err := sc.rank(ctx, req)
		if err != nil {
			return nil, err
		}
		out[j] = res
	}
	return out, nil
}

// rescoreScratch is the per-call memory of Rescore and RescoreMany,
// reused through rescorePool: a metadata-only batch (the similarities are
// computed apart), the candidates' normalised vectors packed row-major,
// the queries', the similarities and the per-candidate buffers. A call in
// steady state allocates only its result.
type rescoreScratch struct {
	b       Batch
	dim     int   // the candidates' vector dimension; 0 when none has one
	withVec []int // the candidates with a vector, in order
	vecs    []float32
	qn      []float32
	dots    []float32 // query-major: len(withVec) per query
	tile    []float32 // one block's similarities, row-major (simd.DotRows)
	panels  simd.Panels
	sims    []float64
	reasons []temporal.Reason
	ranked  []Explained
	removed []temporal.Removed
	scored  []scored
}

// scored is a kept candidate's score before its explanation: row is its
// row in the scratch batch.
type scored struct {
	ID    uint64
	Score float64
	row   int
}

// checkCount checks a request's number of candidates and its k.
func checkCount(n, k int) error {
	if n > MaxRescoreCandidates {
		return fmt.Errorf("%w: %d candidates, at most %d", ErrInvalid, n, MaxRescoreCandidates)
	}
	if k < 0 {
		return fmt.Errorf("%w: k = %d", ErrInvalid, k)
	}
	return nil
}

// isCosine reports whether a given similarity is a cosine: finite and
// within [−1, 1] up to float32 rounding.
func isCosine(s float64) bool {
	return !math.IsNaN(s) && !math.IsInf(s, 0) && s >= -1.0001 && s <= 1.0001
}

// query is the request's time context as the epilogue's Query (the
// similarities come from elsewhere: the vector is a placeholder).
func (req *RescoreRequest) query() Query {
	return Query{Vector: []float32{1}, Time: req.Time, GroupLambda: req.GroupLambda}
}

// prepare validates the request's size, k, time and candidates, fills the
// metadata batch and packs the candidates' normalised vectors. allVectors
// requires every candidate to have one.
func (sc *rescoreScratch) prepare(req *RescoreRequest, allVectors bool) error {
	if err := checkCount(len(req.Candidates), req.K); err != nil {
		return err
	}
	b := &sc.b
	b.Reset()
	sc.dim, sc.withVec, sc.vecs = 0, sc.withVec[:0], sc.vecs[:0]
	for i := range req.Candidates {
		c := &req.Candidates[i]
		switch {
		case c.Vector != nil:
			if sc.dim == 0 {
				if sc.dim = len(c.Vector); sc.dim == 0 {
					return fmt.Errorf("%w: candidate %d has an empty vector", ErrDimension, c.Meta.ID)
				}
			}
			if len(c.Vector) != sc.dim {
				return fmt.Errorf("%w: candidate %d has dimension %d, candidate %d %d", ErrDimension,
					c.Meta.ID, len(c.Vector), req.Candidates[sc.withVec[0]].Meta.ID, sc.dim)
			}
			at := len(sc.vecs)
			sc.vecs = slices.Grow(sc.vecs, sc.dim)[:at+sc.dim]
			// The message is formatted only for a bad vector: a good one
			// costs no allocation.
			if p, _ := unitvec.Normalize(c.Vector, sc.vecs[at:]); p != unitvec.OK {
				return normalized(c.Vector, sc.vecs[at:], fmt.Sprintf("candidate %d", c.Meta.ID))
			}
			sc.withVec = append(sc.withVec, i)
		case allVectors:
			return fmt.Errorf("%w: candidate %d has no vector: every candidate of a batch needs one", ErrInvalid, c.Meta.ID)
		case c.HasSim:
			if !isCosine(c.Sim) {
				return fmt.Errorf("%w: candidate %d: similarity %v is not a cosine", ErrNotFinite, c.Meta.ID, c.Sim)
			}
		default:
			return fmt.Errorf("%w: candidate %d has neither a vector nor a similarity", ErrInvalid, c.Meta.ID)
		}
		if err := b.appendMeta(c.Meta, c.Group); err != nil {
			return err
		}
	}
	q := req.query()
	return checkTime(b, &q, &req.Params)
}

// queries normalises the query vectors into sc.qn, checking each against
// the candidates' dimension.
func (sc *rescoreScratch) queries(qs [][]float32) error {
	sc.qn = slices.Grow(sc.qn[:0], len(qs)*sc.dim)[:len(qs)*sc.dim]
	for j, q := range qs {
		what := "query"
		if len(qs) > 1 {
			what = fmt.Sprintf("query %d", j)
		}
		if len(q) != sc.dim {
			return fmt.Errorf("%w: %s has dimension %d, the candidates %d", ErrDimension, what, len(q), sc.dim)
		}
		if err := normalized(q, sc.qn[j*sc.dim:(j+1)*sc.dim], what); err != nil {
			return err
		}
	}
	return nil
}

// dot computes the similarity of every packed candidate vector to each of
// the m queries into sc.dots (query-major), block by block so that each
// block stays in cache while every query reads it.
func (sc *rescoreScratch) dot(m int) {
	n, d := len(sc.withVec), sc.dim
	sc.dots = slices.Grow(sc.dots[:0], m*n)[:m*n]
	if m == 1 {
		simd.DotBatch(sc.vecs, d, sc.qn, sc.dots)
		return
	}
	sc.panels.Pack(sc.qn, d)
	ld := sc.panels.Stride()
	step := max(6, blockBytes/(4*d)/6*6)
	for lo := 0; lo < n; lo += step {
		hi, next := min(n, lo+step), min(n, lo+2*step)
		nb := hi - lo
		sc.tile = slices.Grow(sc.tile[:0], nb*ld)[:nb*ld]
		simd.DotRows(sc.vecs[lo*d:hi*d], &sc.panels, sc.tile, sc.vecs[hi*d:next*d])
		for r := 0; r < nb; r++ {
			for j, v := range sc.tile[r*ld : r*ld+m] {
				sc.dots[j*n+lo+r] = v
			}
		}
	}
}

// rank masks and scores the candidates given their similarities (sc.sims)
// and returns the ranking with its explanations.
func (sc *rescoreScratch) rank(ctx context.Context, req *RescoreRequest) (RescoreResult, error) {
	b := &sc.b
	n := b.Len()
	sims := sc.sims
	q := req.query()
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
	// Every kept candidate's score, then the explanation of the k that
	// rank (signals(…, false) gives the same score: it skips only terms
	// whose weight is zero, and those terms are finite).
	sc.scored = sc.scored[:0]
	for i := 0; i < n; i++ {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return RescoreResult{}, err
			}
		}
		if reasons[i] != temporal.ReasonNone {
			continue
		}
		score, _ := e.signals(i, sims[i], false)
		sc.scored = append(sc.scored, scored{ID: b.ID[i], Score: score, row: i})
	}
	top := rankScored(sc.scored, req.K)
	for _, t := range top {
		score, sig := e.signals(t.row, sims[t.row], true)
		free := score
		if req.Params.Pooled() {
			free = temporal.PoolFreeScore(&req.Params, &sig)
		}
		res.Ranked = append(res.Ranked, Explained{ID: t.ID, Score: score, PoolFree: free, Signals: sig})
	}
	sc.ranked, sc.removed = res.Ranked, res.Removed
	// The result is the caller's: copies, not the pooled buffers.
	res.Ranked, res.Removed = slices.Clone(res.Ranked), slices.Clone(res.Removed)
	return res, nil
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

// rankScored orders the best k of ranked (all of them when k ≤ 0) first,
// best first, and returns them. For a k well below len(ranked) — a
// search's 10 of 80 candidates — it keeps a sorted prefix of k and
// inserts only what beats its last, instead of sorting everything.
func rankScored(ranked []scored, k int) []scored {
	less := func(a, b *scored) bool { return better(a.Score, a.ID, b.Score, b.ID) }
	if k <= 0 || 2*k >= len(ranked) {
		slices.SortFunc(ranked, func(a, b scored) int {
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
