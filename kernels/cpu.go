package kernels

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"

	"github.com/tidemark/tidemark/simd"
	"github.com/tidemark/tidemark/temporal"
)

// CPUOptions configure a CPU backend. A nil *CPUOptions means the defaults.
type CPUOptions struct {
	// Workers is the number of goroutines a call is split across
	// (default runtime.GOMAXPROCS(0)).
	Workers int
	// ChunkRows is the number of rows a worker scores between context
	// checks; the dot products of a chunk are computed in one DotBatch
	// (default 512).
	ChunkRows int
	// BlockRows is the number of rows ScoreMany keeps in cache while it
	// runs every query over them (default: as many as fit in 256 KiB, a
	// multiple of 3 — 84 at d = 768 — so that the batched dot's 3-row
	// tiles cover the block; the block, the next one being prefetched and
	// 64 queries of 768 fit in a 1 MiB L2 together).
	BlockRows int
}

// blockBytes is the default size of ScoreMany's block of rows: it stays in
// a core's L2 cache while every group of queries reads it.
const blockBytes = 256 << 10

// CPU is the fused stage on the CPU: chunks of rows spread over a fixed set
// of worker goroutines, dot products through package simd (one query:
// simd.DotBatch per chunk; many: simd.DotRows per block of rows, every
// query over the block while it is in cache), the temporal epilogue in
// float64. It is safe for concurrent use. Its workers live until Close.
type CPU struct {
	workers, chunk, block int // block 0: blockBytes' worth per call
	tasks                 chan task
	pool                  sync.Pool
	closeOnce             sync.Once
}

// task is one worker's share of a call. j is a pointer held in an
// interface, so sending a task allocates nothing.
type task struct {
	j      job
	w      int
	lo, hi int
}

type job interface {
	run(w, lo, hi int)
}

// NewCPU returns a CPU backend and starts its workers.
func NewCPU(opts *CPUOptions) *CPU {
	var o CPUOptions
	if opts != nil {
		o = *opts
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.ChunkRows <= 0 {
		o.ChunkRows = 512
	}
	c := &CPU{workers: o.Workers, chunk: o.ChunkRows, block: o.BlockRows, tasks: make(chan task)}
	for i := 0; i < c.workers; i++ {
		go func() {
			for t := range c.tasks {
				t.j.run(t.w, t.lo, t.hi)
			}
		}()
	}
	return c
}

// Close stops the workers. A closed CPU must not be used.
func (c *CPU) Close() { c.closeOnce.Do(func() { close(c.tasks) }) }

// Name reports the backend and the SIMD path it uses.
func (c *CPU) Name() string { return "cpu/" + simd.Path() }

// scratch is the per-call working memory, reused through the pool.
type scratch struct {
	c   *CPU
	ctx context.Context
	b   *Batch
	p   *temporal.Params
	nq  int
	// step is the rows a worker takes at a time: ChunkRows for one query,
	// the block for many.
	step int
	qn   []float32 // normalised query vectors, query-major
	// panels packs qn for simd.DotRows when there are many queries; ld is
	// the stride between two rows' similarities in a worker's sims (1 for
	// one query, panels.Stride() for many).
	panels simd.Panels
	ld     int
	epi    []epilogue
	// phase selects what run does; pool is true when scores need pool
	// statistics, so that pass one stores similarities and reasons and pass
	// two scores them.
	phase int
	pool  bool
	sims  []float32         // pool mode: every row's similarity, query-major
	rsn   []temporal.Reason // pool mode: every row's mask reason, query-major
	one   [1]Query          // the query of a single-query call
	// shared is true for many queries with one time context and no pool
	// statistics: the query-independent part of each row's score (masks,
	// decay, confidence, relational) is computed once per row and shared.
	shared bool
	out    []float64         // Score: every row's score
	outR   []temporal.Reason // Score: every row's reason
	ws     []workerState
	wg     sync.WaitGroup
}

type workerState struct {
	// sims holds the similarities of the current chunk or block:
	// row-major, ld entries per row (query j of row r at r·ld + j).
	sims []float32
	// live lists the rows of the current block (offsets in it) that
	// survive every query-independent mask, when queries share a time
	// context.
	live []int32
	// Per-row values of the current block when queries share a time
	// context: the score is a·sim + c, or ag·sim + cg for an open event
	// (event true) whose similarity is under the event gate.
	a, c, ag, cg []float64
	event        []bool
	fast         []float64 // c, or +Inf for an event row: a·sim + fast bounds the score
	// a and fast in float32 for simd.AboveLines, each query's lowered
	// threshold, and the masks of the pairs that pass.
	a32, c32, thr32 []float32
	masks           []uint16
	pending         []bool // the row's a, c, … are not computed yet
	heaps           []topk
	stats           []Stats
	// pool statistics per query over this worker's kept rows
	minSim, maxSim, minAge, maxAge []float64
	err                            error
}

const (
	phaseFused = iota // dot + masks + score in one pass
	phasePool1        // dot + masks, store similarity, gather pool statistics
	phasePool2        // score the stored similarities
)

func (c *CPU) get(b *Batch, p *temporal.Params, nq int, pool bool) *scratch {
	s, _ := c.pool.Get().(*scratch)
	if s == nil {
		s = &scratch{c: c, ws: make([]workerState, c.workers)}
	}
	s.b, s.p, s.nq, s.pool = b, p, nq, pool
	s.qn = grow(s.qn, nq*b.Dim)
	s.epi = grow(s.epi, nq)
	if pool {
		s.sims = grow(s.sims, nq*b.Len())
		s.rsn = grow(s.rsn, nq*b.Len())
	}
	chunk := c.chunk
	s.ld = 1
	if nq > 1 {
		s.ld = (nq + simd.PanelWidth - 1) / simd.PanelWidth * simd.PanelWidth
		chunk = c.block
		if chunk == 0 {
			// Whole strips of simd.DotRows' six-row tiles.
			chunk = max(6, blockBytes/(4*b.Dim)/6*6)
		}
	}
	s.step = chunk
	for w := range s.ws {
		ws := &s.ws[w]
		ws.sims = grow(ws.sims, chunk*s.ld)
		ws.live = grow(ws.live, chunk)
		ws.a, ws.c, ws.ag, ws.cg = grow(ws.a, chunk), grow(ws.c, chunk), grow(ws.ag, chunk), grow(ws.cg, chunk)
		ws.event, ws.fast, ws.pending = grow(ws.event, chunk), grow(ws.fast, chunk), grow(ws.pending, chunk)
		ws.a32, ws.c32, ws.thr32 = grow(ws.a32, chunk), grow(ws.c32, chunk), grow(ws.thr32, s.ld)
		ws.masks = grow(ws.masks, chunk*s.ld/simd.PanelWidth)
		ws.heaps = grow(ws.heaps, nq)
		ws.stats = grow(ws.stats, nq)
		ws.minSim, ws.maxSim = grow(ws.minSim, nq), grow(ws.maxSim, nq)
		ws.minAge, ws.maxAge = grow(ws.minAge, nq), grow(ws.maxAge, nq)
		for j := 0; j < nq; j++ {
			ws.stats[j] = Stats{}
			ws.minSim[j], ws.maxSim[j] = math.Inf(1), math.Inf(-1)
			ws.minAge[j], ws.maxAge[j] = math.Inf(1), math.Inf(-1)
		}
		ws.err = nil
	}
	return s
}

func (c *CPU) put(s *scratch) {
	s.ctx, s.b, s.p, s.out, s.outR = nil, nil, nil, nil, nil
	s.one[0] = Query{}
	clear(s.epi)
	c.pool.Put(s)
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// parallel runs one phase over rows [0, n): one contiguous range per
// worker, or inline on the calling goroutine when the input is small.
func (c *CPU) parallel(s *scratch, phase, n int) error {
	s.phase = phase
	if c.workers == 1 || n < 2*s.step {
		s.work(0, 0, n)
	} else {
		per := (n + c.workers - 1) / c.workers
		s.wg.Add(c.workers)
		for w := 0; w < c.workers; w++ {
			c.tasks <- task{j: s, w: w, lo: min(n, w*per), hi: min(n, (w+1)*per)}
		}
		s.wg.Wait()
	}
	for w := range s.ws {
		if err := s.ws[w].err; err != nil {
			return err
		}
	}
	return nil
}

// run is a worker's share of a parallel phase.
func (s *scratch) run(w, lo, hi int) {
	s.work(w, lo, hi)
	s.wg.Done()
}

// work processes rows [lo, hi) in chunks (one query) or blocks (many),
// checking the context between them. The similarities of a chunk or block
// to every query are computed first — the only pass over its vectors, one
// simd.DotRows over the packed queries for many — then the epilogue runs
// over them.
func (s *scratch) work(w, lo, hi int) {
	ws := &s.ws[w]
	b, d := s.b, s.b.Dim
	for start := lo; start < hi; start += s.step {
		if err := s.ctx.Err(); err != nil {
			ws.err = err
			return
		}
		end := min(hi, start+s.step)
		nb := end - start
		if s.phase == phasePool2 {
			for j := 0; j < s.nq; j++ {
				s.scoreStored(ws, j, start, end)
			}
			continue
		}
		rows := b.Vectors[start*d : end*d]
		sims := ws.sims[:nb*s.ld]
		if s.nq == 1 {
			simd.DotBatch(rows, d, s.qn[:d], sims)
		} else {
			// The worker's next block is prefetched while this one
			// computes: its vectors spread over the tiles, its columns
			// (a few lines each) now.
			nextEnd := min(hi, end+s.step)
			if nextEnd > end {
				b.prefetchColumns(end, nextEnd)
			}
			simd.DotRows(rows, &s.panels, sims, b.Vectors[end*d:nextEnd*d])
		}
		if s.shared && s.phase == phaseFused {
			s.sharedBlock(ws, start, end, sims)
			continue
		}
		for j := 0; j < s.nq; j++ {
			s.maskAndScore(ws, j, start, end, sims[j:])
		}
	}
}

// maskAndScore masks rows [lo, hi) for query j given their similarities
// (row r's at sims[r·ld]) and, in the fused phase, scores them; in pool
// phase one it stores the similarity and reason.
func (s *scratch) maskAndScore(ws *workerState, j, lo, hi int, sims []float32) {
	b := s.b
	e := &s.epi[j]
	st := &ws.stats[j]
	for r, i := 0, lo; i < hi; r, i = r+1, i+1 {
		sim := float64(sims[r*s.ld])
		reason := e.premask(i)
		if reason == temporal.ReasonNone {
			reason = e.postmask(i, sim)
		}
		if reason != temporal.ReasonNone {
			st.Removed[reason]++
		} else {
			st.Scored++
		}
		if s.phase == phasePool1 {
			s.sims[j*b.Len()+i] = sims[r*s.ld]
			s.rsn[j*b.Len()+i] = reason
			if reason == temporal.ReasonNone {
				age := e.age(i)
				ws.minSim[j], ws.maxSim[j] = math.Min(ws.minSim[j], sim), math.Max(ws.maxSim[j], sim)
				ws.minAge[j], ws.maxAge[j] = math.Min(ws.minAge[j], age), math.Max(ws.maxAge[j], age)
			}
			continue
		}
		s.emit(ws, j, i, sim, reason)
	}
}

// sharedBlock scores rows [lo, hi) for every query when the queries share
// one time context: the query-independent part of each row (its masks,
// decay, confidence, relational bonus) is computed once and shared by
// every query. Without pool statistics each combination is linear in the
// similarity — sum w_sim·sim + rest, gated sim·(w_sim + rest), product
// sim·T — so a row's score is a·sim + c, with a second pair for an open
// event whose similarity falls under the event gate; each query then costs
// a multiply-add per surviving row on top of its similarities (sims,
// row-major, ld per row).
func (s *scratch) sharedBlock(ws *workerState, lo, hi int, sims []float32) {
	e0 := &s.epi[0]
	p := s.p
	// Lazily: when a row's score has a similarity-only upper bound (the
	// weighted sums) and no staleness mask needs its decay first, its
	// signals wait until some query's similarity could make it enter that
	// query's top k; most rows of a large scan never get there, and their
	// exponentials are never computed.
	lazy := e0.prunable && p.StaleBelow <= 0
	// A pending row's a and fast are the bound's line: w_sim·sim + rest_max
	// for sums, sim·(w_sim + rest_max) for gated sums — an upper bound for
	// sim > 0, and for sim ≤ 0 as long as the threshold is positive (the
	// score is then at most w_sim·sim ≤ 0). The margin, relative to the
	// bound's size, covers float64 rounding between bound and score.
	ka, kc := p.Weights.Sim, e0.boundRest
	gated := p.Combine == temporal.CombineGated
	if gated {
		ka, kc = p.Weights.Sim+e0.boundRest, 0
	}
	kc += 1e-9 * (1 + math.Abs(ka) + math.Abs(kc))
	live := ws.live[:0]
	for r, i := 0, lo; i < hi; r, i = r+1, i+1 {
		if e0.premask(i) != temporal.ReasonNone {
			continue
		}
		// postmask with sim = +Inf tests staleness alone; the relevance
		// gate is tested per query.
		if p.StaleBelow > 0 && e0.postmask(i, math.Inf(1)) != temporal.ReasonNone {
			continue
		}
		ws.pending[r] = lazy
		if lazy {
			ws.a[r], ws.fast[r] = ka, kc
		} else {
			s.rowLinear(ws, r, i)
		}
		live = append(live, int32(r))
	}
	b, nb, ld, np := s.b, hi-lo, s.ld, s.ld/simd.PanelWidth
	a, c, fast, pending := ws.a[:nb], ws.c[:nb], ws.fast[:nb], ws.pending[:nb]
	// The filter: every row's line a·sim + fast in float32 against every
	// query's threshold, sixteen queries per vector comparison
	// (simd.AboveLines); the rows masked above (a 0, fast −Inf) are not
	// visited below.
	// Unit vectors bound |sim| by 1, so float32 rounding of the line and
	// its inputs stays within 1e-5·(1 + |a| + |fast| + |thr|): each
	// threshold is lowered by that, and every pair that passes is checked
	// exactly below. A query whose bound may not prune a pending row
	// (gated, threshold ≤ 0) takes every row; its padding lanes none.
	a32, c32, thr32 := ws.a32[:nb], ws.c32[:nb], ws.thr32[:ld]
	for r := range a32 {
		a32[r], c32[r] = 0, float32(math.Inf(-1))
	}
	size := 0.0
	for _, r := range live {
		a32[r], c32[r] = float32(a[r]), float32(fast[r])
		if !math.IsInf(fast[r], 0) {
			size = math.Max(size, math.Abs(a[r])+math.Abs(fast[r]))
		}
	}
	for j := range thr32 {
		thr32[j] = float32(math.Inf(1))
		if j >= s.nq || ws.heaps[j].k == 0 {
			continue
		}
		thr := ws.heaps[j].threshold()
		if gated && thr <= 0 || math.IsInf(thr, -1) || unfiltered {
			thr32[j] = float32(math.Inf(-1))
			continue
		}
		thr32[j] = below(thr - 1e-5*(1+size+math.Abs(thr)))
	}
	masks := ws.masks[:nb*np]
	simd.AboveLines(sims, ld, a32, c32, thr32, masks)
	for _, r := range live {
		for pi, m := range masks[int(r)*np : int(r+1)*np] {
			for ; m != 0; m &= m - 1 {
				j := pi*simd.PanelWidth + bits.TrailingZeros16(m)
				if j >= s.nq {
					break
				}
				h := &ws.heaps[j]
				if h.k == 0 {
					continue
				}
				thr := h.threshold()
				boundOK := !gated || thr > 0
				sim := float64(sims[int(r)*ld+j])
				// fast[r] is c[r], +Inf for a row whose score the event
				// gate may change, or the bound's line for a pending row:
				// a·sim + fast[r] bounds the score.
				if a[r]*sim+fast[r] < thr && (boundOK || !pending[r]) {
					continue
				}
				if pending[r] {
					s.rowLinear(ws, int(r), lo+int(r))
					pending[r] = false
					if a[r]*sim+fast[r] < thr {
						continue
					}
				}
				if p.MinSim > 0 && sim < p.MinSim {
					continue // ScoreMany reports no Stats: nothing to count
				}
				score := a[r]*sim + c[r]
				if ws.event[r] && sim < p.EventFloor {
					score = ws.ag[r]*sim + ws.cg[r]
				}
				if score < thr {
					continue
				}
				i := lo + int(r)
				h.push(Hit{Index: i, ID: b.ID[i], Score: score, Sim: sim})
			}
		}
	}
}

// unfiltered lets every pair through sharedBlock's filter to the exact
// check: tests compare the filtered results with these.
var unfiltered = false

// below returns the largest float32 not above x.
func below(x float64) float32 {
	f := float32(x)
	if float64(f) > x {
		f = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	return f
}

// rowLinear computes row i's (block offset r) query-independent signals
// and stores its score as a·sim + c, and ag·sim + cg for an open event
// under the event gate.
func (s *scratch) rowLinear(ws *workerState, r, i int) {
	p := s.p
	w := p.Weights
	// The signals with sim = +Inf: no event gate, so T is the ungated
	// temporal signal.
	_, sig := s.epi[0].signals(i, math.Inf(1), false)
	t := sig.Temporal
	rest := w.Conf*sig.Confidence + w.Rel*sig.Relational
	ws.a[r], ws.c[r] = linear(p, t, rest)
	ws.event[r] = sig.State == temporal.Temporal && p.EventFloor > 0
	ws.fast[r] = ws.c[r]
	if ws.event[r] {
		ws.fast[r] = math.Inf(1)
		// As signals gates it: T·factor.
		ws.ag[r], ws.cg[r] = linear(p, t*p.EventGateFactor, rest)
	}
}

// linear returns a and c with score = a·sim + c for a row whose temporal
// signal is t and whose confidence and relational terms weigh rest, under
// parameters without pool statistics (no normalisation, no penalty).
func linear(p *temporal.Params, t, rest float64) (a, c float64) {
	w := p.Weights
	switch p.Combine {
	case temporal.CombineProduct:
		return t, 0
	case temporal.CombineGated:
		return w.Sim + w.Time*t + rest, 0
	}
	return w.Sim, w.Time*t + rest
}

// sameTime reports whether two queries share every input of the
// query-independent part of the score.
func sameTime(a, b *Query, adaptive bool) bool {
	if a.Time != b.Time {
		return false
	}
	if adaptive {
		if len(a.GroupLambda) != len(b.GroupLambda) {
			return false
		}
		for i := range a.GroupLambda {
			if a.GroupLambda[i] != b.GroupLambda[i] {
				return false
			}
		}
	}
	return true
}

// scoreStored is pool phase two over rows [lo, hi) of query j.
func (s *scratch) scoreStored(ws *workerState, j, lo, hi int) {
	n := s.b.Len()
	for i := lo; i < hi; i++ {
		s.emit(ws, j, i, float64(s.sims[j*n+i]), s.rsn[j*n+i])
	}
}

// emit scores row i for query j (unless masked) and hands the score to
// Score's output or to the worker's heap.
func (s *scratch) emit(ws *workerState, j, i int, sim float64, reason temporal.Reason) {
	if s.out != nil {
		s.outR[i] = reason
		if reason != temporal.ReasonNone {
			s.out[i] = math.NaN()
			return
		}
		s.out[i], _ = s.epi[j].signals(i, sim, false)
		return
	}
	if reason != temporal.ReasonNone {
		return
	}
	e := &s.epi[j]
	if h := &ws.heaps[j]; len(h.h) == h.k && e.prunable {
		// The heap is full: a row whose bound is below the worst kept score
		// cannot enter it. The margin, relative to the bound's size, covers
		// float64 rounding between the bound and the score, so no result
		// ever changes.
		if ub := e.scoreBound(sim); h.k == 0 || ub+1e-9*(1+math.Abs(ub)) < h.h[0].Score {
			return
		}
	}
	score, _ := e.signals(i, sim, false)
	ws.heaps[j].push(Hit{Index: i, ID: s.b.ID[i], Score: score, Sim: sim})
}

// prepare validates the batch and the queries, and sets up the epilogues.
// A single query (q non-nil) is copied into the scratch so that nothing
// escapes to the heap.
func (c *CPU) prepare(ctx context.Context, b *Batch, q *Query, qs []Query, p *temporal.Params, k int) (*scratch, error) {
	if err := checkCall(b, p, k); err != nil {
		return nil, err
	}
	nq := len(qs)
	if q != nil {
		nq = 1
	}
	pool := p.Pooled()
	s := c.get(b, p, nq, pool)
	s.ctx = ctx
	if q != nil {
		s.one[0] = *q
		qs = s.one[:]
	}
	if err := checkQueries(b, qs, p, s.qn[:nq*b.Dim]); err != nil {
		c.put(s)
		return nil, err
	}
	for j := range qs {
		s.epi[j] = newEpilogue(b, &qs[j], p)
		for w := range s.ws {
			s.ws[w].heaps[j].reset(k)
		}
	}
	if nq > 1 {
		s.panels.Pack(s.qn[:nq*b.Dim], b.Dim)
	}
	s.shared = len(qs) > 1 && !pool
	for j := 1; j < len(qs) && s.shared; j++ {
		s.shared = sameTime(&qs[0], &qs[j], p.AdaptiveDecay)
	}
	return s, nil
}

// execute runs the phases: one fused pass, or two when the scores need
// pool statistics (which are merged across workers in between).
func (c *CPU) execute(s *scratch) error {
	n := s.b.Len()
	if !s.pool {
		return c.parallel(s, phaseFused, n)
	}
	if err := c.parallel(s, phasePool1, n); err != nil {
		return err
	}
	for j := range s.epi {
		e := &s.epi[j]
		e.minSim, e.maxSim = math.Inf(1), math.Inf(-1)
		e.minAge, e.maxAge = math.Inf(1), math.Inf(-1)
		for w := range s.ws {
			ws := &s.ws[w]
			e.minSim, e.maxSim = math.Min(e.minSim, ws.minSim[j]), math.Max(e.maxSim, ws.maxSim[j])
			e.minAge, e.maxAge = math.Min(e.minAge, ws.minAge[j]), math.Max(e.maxAge, ws.maxAge[j])
		}
	}
	return c.parallel(s, phasePool2, n)
}

// Score implements Backend.
func (c *CPU) Score(ctx context.Context, b *Batch, q *Query, p *temporal.Params, out []float64, reasons []temporal.Reason) (Stats, error) {
	if len(out) != b.Len() || len(reasons) != b.Len() {
		return Stats{}, fmt.Errorf("%w: output has %d scores and %d reasons for %d candidates", ErrInvalid, len(out), len(reasons), b.Len())
	}
	s, err := c.prepare(ctx, b, q, nil, p, 0)
	if err != nil {
		return Stats{}, err
	}
	defer c.put(s)
	s.out, s.outR = out, reasons
	if err := c.execute(s); err != nil {
		return Stats{}, err
	}
	return s.stats(0), nil
}

// TopK implements Backend.
func (c *CPU) TopK(ctx context.Context, b *Batch, q *Query, p *temporal.Params, k int, dst []Hit) ([]Hit, Stats, error) {
	s, err := c.prepare(ctx, b, q, nil, p, k)
	if err != nil {
		return dst, Stats{}, err
	}
	defer c.put(s)
	if err := c.execute(s); err != nil {
		return dst, Stats{}, err
	}
	return s.merge(0, k, dst), s.stats(0), nil
}

// ScoreMany implements Backend. The rows are split across workers; each
// worker takes BlockRows rows at a time and runs every query over them while
// they are in cache, so each block is read from memory once per call.
func (c *CPU) ScoreMany(ctx context.Context, b *Batch, qs []Query, p *temporal.Params, k int, dst [][]Hit) ([][]Hit, error) {
	if len(qs) == 0 {
		return dst[:0], nil
	}
	s, err := c.prepare(ctx, b, nil, qs, p, k)
	if err != nil {
		return dst, err
	}
	defer c.put(s)
	if err := c.execute(s); err != nil {
		return dst, err
	}
	dst = grow(dst, len(qs))
	for j := range qs {
		dst[j] = s.merge(j, k, dst[j][:0])
	}
	return dst, nil
}

// merge combines the workers' heaps of query j into the final top k.
func (s *scratch) merge(j, k int, dst []Hit) []Hit {
	final := &s.ws[0].heaps[j]
	for w := 1; w < len(s.ws); w++ {
		for _, h := range s.ws[w].heaps[j].h {
			final.push(h)
		}
		s.ws[w].heaps[j].reset(k)
	}
	return final.sorted(dst)
}

// stats sums query j's counts over the workers (only the pass over the
// vectors counts).
func (s *scratch) stats(j int) Stats {
	var st Stats
	for w := range s.ws {
		st.add(&s.ws[w].stats[j])
	}
	return st
}
