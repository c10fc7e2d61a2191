package tidemark

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/internal/links"
	"github.com/tidemark/tidemark/internal/prefetch"
	"github.com/tidemark/tidemark/internal/unitvec"
	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/simd"
	"github.com/tidemark/tidemark/temporal"
)

// Plan is how a search finds its candidates.
type Plan uint8

const (
	// PlanAuto scans exactly when the visible surface has at most
	// CollectionOptions.ExactThreshold memories, and asks the index
	// otherwise.
	PlanAuto Plan = iota
	// PlanExact runs the fused stage over every memory and every belief
	// about it (archived ones too): exact, and linear in the collection.
	PlanExact
	// PlanANN asks the HNSW index of the visible surface for
	// k·Overfetch candidates by cosine; a historical query also asks the
	// archive index and follows version links from those candidates to
	// the versions they superseded. The fused stage scores the union.
	PlanANN
)

var planNames = [...]string{"auto", "exact", "ann"}

func (p Plan) String() string {
	if int(p) < len(planNames) {
		return planNames[p]
	}
	return fmt.Sprintf("Plan(%d)", p)
}

// MarshalText implements encoding.TextMarshaler.
func (p Plan) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Plan) UnmarshalText(b []byte) error {
	v, err := ParsePlan(string(b))
	*p = v
	return err
}

// ParsePlan parses "auto", "exact" or "ann".
func ParsePlan(s string) (Plan, error) {
	for i, n := range planNames {
		if n == s {
			return Plan(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown plan %q (auto, exact, ann)", ErrInvalid, s)
}

// MaxK is the largest number of results one search returns; DefaultK the
// number a SearchRequest with no K returns.
const (
	MaxK     = 10000
	DefaultK = 10
)

// SearchRequest is one query.
type SearchRequest struct {
	// Vector is the query embedding; when nil, Text is embedded with the
	// collection's embedder.
	Vector []float32
	Text   string
	// K is the number of results (default DefaultK, 10; at most MaxK).
	K int
	// Params are the scoring parameters (default
	// temporal.Preset(CollectionOptions.Method)).
	Params *temporal.Params
	// Now is the reference time (default the DB's clock). AsOf asks what
	// was true at a past valid time, AsOfTx what tidemark believed at a
	// past transaction time; each defaults to Now.
	Now, AsOf, AsOfTx time.Time
	// Range keeps only memories created inside it. With ParseRange, a
	// range written in Text ("since March 2024", "2021-2023") is used
	// when Range is nil (temporal.ParseTimeRange).
	Range      *temporal.TimeRange
	ParseRange bool
	// Kinds and Statuses filter the memories (the zero sets allow all);
	// Sources, when not empty, keeps only memories from those sources.
	Kinds    temporal.KindSet
	Statuses temporal.StatusSet
	Sources  []temporal.Source
	// Filter, when set, keeps only the memories whose metadata it matches
	// (ParseFilter). Both plans apply it while finding candidates, so a
	// selective filter still finds k hits: the ANN plan scores every
	// matching memory exactly when few match (at most FilterExactLimit),
	// and otherwise walks the index passing over the others.
	Filter *Filter
	// Plan chooses how candidates are found (default PlanAuto); Ef is the
	// HNSW beam width of PlanANN (default max(CollectionOptions.Ef,
	// candidates asked)).
	Plan Plan
	Ef   int
	// Explain makes sure every hit carries its per-signal scores
	// (Hit.Signals) and the result lists each removed candidate with its
	// reason (SearchResult.Removed). Without it they are filled all the
	// same except on the exact plan's fast path (see Hit.Signals).
	Explain bool
	// CountAccess counts the retrieval as an access of every hit
	// (reconsolidation, SmartVector §3.3): the counts are logged by the
	// next Consolidate or FlushAccess.
	CountAccess bool
	// FirstStage, when > 0, scores only the FirstStage memories with the
	// highest raw cosine among the candidates the plan finds, before the
	// masks — as a separate first-stage retriever hands its candidates to a
	// reranker (SmartVector §9.2: "the same first-stage retriever …, K = 8
	// candidates"). The exact plan's candidates are every memory of the
	// collection, superseded and retired ones included, as a retriever that
	// indexes everything would see them (a memory ranks by its vector,
	// whatever belief the query's transaction time picks); the ANN plan's
	// are what the index finds: the visible surface, and for historical
	// queries the archive and version links. Sources filter first. The
	// masks then remove what is not visible, so fewer than FirstStage may
	// remain, none when every candidate is superseded. Default 0: every
	// candidate is scored.
	FirstStage int
	// MinScore, when not nil, drops the hits whose Score is below it (a
	// hit scoring exactly MinScore is kept). It is applied to the top K,
	// so a search returns at most K hits and fewer when some score below
	// it; since Hit.Score does not depend on the other candidates, a
	// threshold means the same in every query. It must be finite. Default
	// nil: no threshold.
	MinScore *float64
}

// Hit is one search result.
type Hit struct {
	ID string
	// Score is the method's score of the memory for this query (the
	// fused stage's formula: temporal.ScorePool). It depends only on the
	// memory, the query's times and Cosine, never on the other
	// candidates, so a memory at the same cosine scores the same in any
	// result set and scores of different queries compare (MinScore
	// relies on it). For a method that normalises within the candidate
	// pool — the article's reranker min–max normalises the cosine and the
	// age over the pool and penalises by the normalised cosine
	// (temporal.Params.Pooled) — that pooled value still decides the
	// order, as the method defines it, but Score is
	// temporal.PoolFreeScore: the same formula with the raw cosine, a
	// pool recency of 1 and no penalty; the hits of such a method need
	// not be in descending Score, and Signals (Explain) show the pooled
	// inputs. For every other method Score is the ranking score.
	Score float64
	// Cosine is the raw cosine similarity of the memory's vector to the
	// query's, as the fused stage computed it (float32).
	Cosine float64
	// Confidence is the memory's live confidence at the query's time
	// (SmartVector §5's ConfidenceEngine), whatever the method's weights.
	// A static memory's confidence does not decay with age under any
	// method (temporal.ConfidenceParams.Reported): only evidence —
	// feedback, accesses, ripple penalties from contradicted dependencies
	// — moves it, so an uncontradicted wiki fact reports its authority
	// prior, 0.75, however old it is.
	Confidence float64
	// Memory is the memory without its vector.
	Memory Memory
	// Signals explain Score. They are nil only when the exact plan
	// took its fast path, one top-k scan of the whole column store, which
	// it does when the request has no Explain, Sources or FirstStage and
	// the method masks retired beliefs (temporal.Params.MaskRetired) and
	// is not pooled (temporal.Params.Pooled) — of the presets only
	// MethodTidemark, the default. Every other search (the ANN plan, or
	// Explain, Sources, FirstStage or another preset) and every Rescore
	// sets them.
	Signals *temporal.Signals `json:",omitempty"`
}

// Removed is a candidate the masks removed, with the reason.
type Removed struct {
	ID     string
	Reason temporal.Reason
}

// MaxRemoved bounds SearchResult.Removed: an exact plan over a
// collection with many superseded memories removes thousands, and an
// explanation of ten hits need not list them all.
const MaxRemoved = 100

// SearchResult is the answer to a search.
type SearchResult struct {
	// Hits are the top K by the method's ranking, best first (see
	// Hit.Score for the methods whose ranking is pool-relative).
	Hits []Hit
	// Removed lists the candidates the masks removed, one entry per
	// memory (none for a memory another belief of which was kept). It is
	// filled whenever Hit.Signals are, and stays empty on the exact
	// plan's fast path, which does not report removals (see Hit.Signals).
	// It holds at most MaxRemoved entries, the first in candidate order;
	// RemovedTotal counts them all.
	Removed      []Removed
	RemovedTotal int
	// Plan is the plan that ran; Candidates the number of memories the
	// fused stage scored (each with every belief the query may see);
	// Expanded the archived versions that version-link expansion added.
	Plan                 Plan
	Candidates, Expanded int
	// Historical is true when the query asked about a past time, or its
	// method does not mask superseded and expired memories: the ANN plan
	// then also searched the archive.
	Historical bool
}

// query is a validated request.
type query struct {
	vec        []float32 // unit
	k          int
	params     temporal.Params
	tq         temporal.Query // days since the collection's epoch
	nowDays    float64        // days since the Unix epoch
	historical bool
}

func (c *Collection) prepare(ctx context.Context, req *SearchRequest) (query, error) {
	var q query
	if req == nil {
		return q, fmt.Errorf("%w: nil SearchRequest", ErrInvalid)
	}
	q.k = req.K
	if q.k == 0 {
		q.k = DefaultK
	}
	if m := req.MinScore; m != nil && (math.IsNaN(*m) || math.IsInf(*m, 0)) {
		return q, fmt.Errorf("%w: min score %v, want a finite number", ErrInvalid, *m)
	}
	if req.FirstStage < 0 {
		return q, fmt.Errorf("%w: first stage %d, want ≥ 0", ErrInvalid, req.FirstStage)
	}
	if q.k < 0 || q.k > MaxK {
		return q, fmt.Errorf("%w: k = %d, want 1…%d", ErrInvalid, req.K, MaxK)
	}
	v := req.Vector
	if v == nil {
		if c.emb == nil || req.Text == "" {
			return q, fmt.Errorf("%w: the query has no vector and the collection cannot embed text (embedder %q)", ErrInvalid, c.opts.Embedder)
		}
		vs, err := c.embedTexts(ctx, []string{req.Text})
		if err != nil {
			return q, err
		}
		v = vs[0]
	}
	if err := checkVector(v, c.opts.Dim, "the query"); err != nil {
		return q, err
	}
	q.vec = make([]float32, len(v))
	unitvec.Normalize(v, q.vec)
	q.params = temporal.Preset(c.opts.Method)
	if req.Params != nil {
		q.params = *req.Params
	}
	// Drift-adaptive decay uses the collection's drift detectors (drift.go)
	// unless it is off for the collection.
	q.params.AdaptiveDecay = q.params.AdaptiveDecay && !c.opts.StaticDecay
	if err := q.params.Validate(); err != nil {
		return q, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	now, at, tx, err := queryTimes(req.Now, req.AsOf, req.AsOfTx, c.db.opts.Clock)
	if err != nil {
		return q, err
	}
	q.nowDays = days(now, 0)
	// Query times are rounded to the column store's float32 clock, so that
	// a memory recorded or valid from exactly the query's time compares
	// equal rather than a rounding error apart.
	q.tq = temporal.Query{At: c.dayQ(at, 0), TxAt: c.dayQ(tx, 0), Kinds: req.Kinds, Statuses: req.Statuses}
	rng := req.Range
	if rng == nil && req.ParseRange && req.Text != "" {
		if r, ok := temporal.ParseTimeRange(req.Text, now); ok {
			rng = &r
		}
	}
	if rng != nil {
		if err := validTime(rng.From, "range from"); err != nil {
			return q, err
		}
		if err := validTime(rng.To, "range to"); err != nil {
			return q, err
		}
		q.tq.HasRange = true
		q.tq.Range = temporal.Window{From: c.dayQ(rng.From, -temporal.Open), To: c.dayQ(rng.To, temporal.Open)}
	}
	c.mu.RLock()
	last, histUntil := c.lastTx, c.histUntil
	c.mu.RUnlock()
	// A past time needs the archive, and so does a valid time before the
	// end of a window that left the surface (a successor that takes effect
	// in the future archives its predecessor at once); so does a method
	// that does not mask
	// superseded and expired memories (the baselines score everything, as
	// a plain vector store would).
	q.historical = at.Before(now) || tx.Before(now) || q.nowDays < last || days(at, 0) < histUntil ||
		!q.params.MaskExpired || !q.params.MaskRetired
	return q, nil
}

// queryTimes checks a query's reference time, valid time and transaction
// time and fills the defaults: now from clock, the other two from now.
func queryTimes(now, asOf, asOfTx time.Time, clock func() time.Time) (n, at, tx time.Time, err error) {
	for _, t := range []struct {
		t    time.Time
		what string
	}{{now, "now"}, {asOf, "as_of"}, {asOfTx, "as_of_tx"}} {
		if err := validTime(t.t, t.what); err != nil {
			return n, at, tx, err
		}
	}
	if now.IsZero() {
		now = clock()
	}
	at, tx = now, now
	if !asOf.IsZero() {
		at = asOf
	}
	if !asOfTx.IsZero() {
		tx = asOfTx
	}
	return now, at, tx, nil
}

// dayQ is t on the column store's clock (days since the epoch, rounded
// to float32); the zero time is open.
func (c *Collection) dayQ(t time.Time, open float64) float64 {
	return float64(c.day32(days(t, open)))
}

// Search answers a query (DESIGN "Read path"): candidates from the plan,
// the fused stage over them (masks, decay, validity, confidence, the
// method's weights), the top k. Superseded and expired memories are
// removed by the masks at the query's valid and transaction times, so a
// query as of a past time finds the version that held then.
func (c *Collection) Search(ctx context.Context, req *SearchRequest) (*SearchResult, error) {
	if err := c.db.readable(); err != nil {
		return nil, err
	}
	q, err := c.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	plan := req.Plan
	if plan > PlanANN {
		return nil, fmt.Errorf("%w: plan %d", ErrInvalid, plan)
	}
	_, visible := c.Len()
	if plan == PlanAuto {
		plan = PlanExact
		if visible > c.opts.ExactThreshold {
			plan = PlanANN
		}
	}
	res := &SearchResult{Plan: plan, Historical: q.historical}
	if plan == PlanExact {
		err = c.searchExact(ctx, &q, req, res)
	} else {
		err = c.searchANN(ctx, &q, req, res)
	}
	if err != nil {
		return nil, err
	}
	if m := req.MinScore; m != nil {
		res.Hits = slices.DeleteFunc(res.Hits, func(h Hit) bool { return h.Score < *m })
	}
	if req.CountAccess && len(res.Hits) > 0 {
		c.mu.RLock()
		rows := make([]int, 0, len(res.Hits))
		for _, h := range res.Hits {
			if j, ok := c.rowOf(h.ID); ok {
				rows = append(rows, j)
			}
		}
		c.mu.RUnlock()
		c.accesses.add(rows)
	}
	return res, nil
}

func (c *Collection) searchExact(ctx context.Context, q *query, req *SearchRequest, res *SearchResult) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.dropped {
		return fmt.Errorf("%w: collection %q", ErrNotFound, c.name)
	}
	n := c.batch.Len()
	res.Candidates = c.rows.len() - c.purgedRows // every memory's beliefs are scored
	if n == 0 {
		return nil
	}
	if !req.Explain && q.params.MaskRetired && len(req.Sources) == 0 && req.Filter == nil && req.FirstStage == 0 && !q.params.Pooled() {
		// At most one belief per memory passes the transaction-time mask,
		// so the fused stage can scan the whole column store. (A pooled
		// method takes the explained path below: its Hit.Score is the
		// pool-free score, computed from the signals.)
		kq := &kernels.Query{Vector: q.vec, Time: q.tq}
		if q.params.AdaptiveDecay {
			kq.GroupLambda = c.groupLambdas()
		}
		hits, _, err := c.db.opts.Backend.TopK(ctx, c.batch, kq, &q.params, q.k, nil)
		if err != nil {
			return err
		}
		for _, h := range hits {
			res.Hits = append(res.Hits, c.hit(int(h.ID), h.Score, h.Sim, nil, q))
		}
		return nil
	}
	var beliefs []int
	switch {
	case len(req.Sources) > 0 || req.Filter != nil:
		c.filtered(req.Filter).each(func(j int) bool {
			if !c.keep(j, req) || c.withdrawn(j, q.tq.TxAt) {
				return true
			}
			if q.params.MaskRetired {
				beliefs = append(beliefs, c.rows.at(j).beliefList()...)
			} else {
				beliefs = append(beliefs, c.beliefAt(j, q.tq.TxAt))
			}
			return true
		})
	case q.params.MaskRetired:
		beliefs = make([]int, n)
		for i := range beliefs {
			beliefs[i] = i
		}
	default:
		for j := range c.rows.len() {
			if !c.withdrawn(j, q.tq.TxAt) {
				beliefs = append(beliefs, c.beliefAt(j, q.tq.TxAt))
			}
		}
	}
	var sims []float32
	if len(beliefs) == n {
		sims = make([]float32, n)
		simd.DotBatch(c.batch.Vectors, c.opts.Dim, q.vec, sims)
	} else {
		sims = c.cosines(q, beliefs)
	}
	beliefs, sims = c.firstStage(beliefs, sims, req.FirstStage)
	sc := c.scratch()
	defer searchPool.Put(sc)
	err := c.rescoreBeliefs(ctx, q, beliefs, sims, res, sc)
	if len(beliefs) == n {
		// Every belief in batch order (a memory's beliefs need not be
		// adjacent): every memory but the purged ones was scored.
		res.Candidates = c.rows.len() - c.purgedRows
	}
	return err
}

// firstStage keeps the beliefs of the n memories with the highest cosine
// (all when n ≤ 0); ties go to the lower row (c.mu held).
func (c *Collection) firstStage(beliefs []int, sims []float32, n int) ([]int, []float32) {
	if n <= 0 {
		return beliefs, sims
	}
	best := make(map[uint64]float32, len(beliefs))
	for i, b := range beliefs {
		id := c.batch.ID[b]
		if s, ok := best[id]; !ok || sims[i] > s {
			best[id] = sims[i]
		}
	}
	if len(best) <= n {
		return beliefs, sims
	}
	ids := make([]uint64, 0, len(best))
	for id := range best {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b uint64) int {
		if c := cmp.Compare(best[b], best[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	keep := make(map[uint64]bool, n)
	for _, id := range ids[:n] {
		keep[id] = true
	}
	var kb []int
	var ks []float32
	for i, b := range beliefs {
		if keep[c.batch.ID[b]] {
			kb, ks = append(kb, b), append(ks, sims[i])
		}
	}
	return kb, ks
}

func (c *Collection) searchANN(ctx context.Context, q *query, req *SearchRequest, res *SearchResult) error {
	want := max(q.k*c.opts.Overfetch, 64)
	ef := max(req.Ef, c.opts.Ef, want)
	// The index's candidates by their codes' distance: their exact cosines
	// are computed below for the fused stage anyway.
	so := &index.SearchOptions{Ef: ef, CodeScores: true}
	if req.Filter != nil || len(req.Sources) > 0 {
		// The rows the walk may return. Few of them: score them all,
		// exactly (a walk through a graph mostly of others would miss
		// some); otherwise the walk passes over the others, with a beam
		// widened as the filter narrows.
		pass, done, err := c.filterANN(ctx, q, req, res)
		if err != nil || done {
			return err
		}
		// The walk's results are only rows the filter passes, and it goes
		// on until it has ef of them: its beam needs no widening.
		so.Filter = func(key uint64) bool { return int(key) < len(pass)*64 && pass.has(int(key)) }
	}
	found, err := c.surface.Search(ctx, q.vec, want, so)
	if err != nil {
		return err
	}
	if q.historical {
		more, err := c.archive.Search(ctx, q.vec, want, so)
		if err != nil {
			return err
		}
		found = append(found, more...)
	}
	sc := c.scratch()
	defer searchPool.Put(sc)
	// The surface and the archive hold disjoint rows, each once.
	rows := sc.rows[:0]
	for _, f := range found {
		rows = append(rows, int(f.Key))
	}
	if q.historical && len(rows) > 0 && (c.links.Linked(links.Version) || c.links.Linked(links.Sibling)) {
		anchors := make([]uint64, len(rows))
		for i, r := range rows {
			anchors[i] = uint64(r)
		}
		hits, err := c.links.Expand(anchors, c.opts.ExpandHops, c.opts.ExpandBudget, versionLinks)
		if err != nil {
			return err
		}
		var seen map[int]bool
		if len(hits) > 0 {
			seen = make(map[int]bool, len(rows)+len(hits))
			for _, r := range rows {
				seen[r] = true
			}
		}
		for _, h := range hits {
			if r := int(h.Key); !seen[r] {
				seen[r] = true
				rows = append(rows, r)
				res.Expanded++
			}
		}
	}
	sc.rows = rows
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.dropped {
		return fmt.Errorf("%w: collection %q", ErrNotFound, c.name)
	}
	// The candidates' rows are cold (the walk read only their codes):
	// their numbers are fetched all at once, then read.
	ids := sc.ids[:0]
	for _, r := range rows {
		if r < c.rows.len() { // else cannot happen: the ledger is applied before the index
			ids = append(ids, uint32(r))
		}
	}
	if len(ids) > 0 {
		prefetch.Rows(unsafe.Pointer(c.rows.num(0)), unsafe.Sizeof(rowNum{}), ids, 1)
	}
	beliefs := sc.beliefs[:0]
	for _, r := range ids {
		j := int(r)
		n := c.rows.num(j)
		switch {
		case n.purged || n.retracted && c.withdrawn(j, q.tq.TxAt):
		case !c.keep(j, req):
		case n.oneBelief:
			beliefs = append(beliefs, n.b0) // its only one, whatever the time
		case q.params.MaskRetired:
			beliefs = append(beliefs, c.rows.at(j).beliefList()...)
		default:
			beliefs = append(beliefs, c.beliefAt(j, q.tq.TxAt))
		}
	}
	sc.beliefs, sc.ids = beliefs, ids
	sc.sims = slices.Grow(sc.sims[:0], len(beliefs))[:len(beliefs)]
	sims := sc.sims
	// Their metadata in the column store is fetched now, to be there for
	// the fused stage.
	ids = ids[:0]
	for _, b := range beliefs {
		ids = append(ids, uint32(b))
	}
	c.batch.Prefetch(ids)
	d := c.opts.Dim
	// The vectors too: keep the next ones loading while each cosine runs,
	// as the index's walk does, so their cache misses overlap.
	lines := min(8, (4*d+63)/64)
	vecs := c.batch.Vectors
	for i, b := range beliefs {
		if j := i + candLookAhead; j < len(beliefs) {
			prefetch.Lines(unsafe.Pointer(&vecs[beliefs[j]*d]), lines)
		}
		sims[i] = simd.Dot(q.vec, vecs[b*d:(b+1)*d])
	}
	beliefs, sims = c.firstStage(beliefs, sims, req.FirstStage)
	return c.rescoreBeliefs(ctx, q, beliefs, sims, res, sc)
}

// cosines returns the query's cosine with each belief's vector (c.mu
// held).
func (c *Collection) cosines(q *query, beliefs []int) []float32 {
	sims := make([]float32, len(beliefs))
	d := c.opts.Dim
	for i, b := range beliefs {
		sims[i] = simd.Dot(q.vec, c.batch.Vectors[b*d:(b+1)*d])
	}
	return sims
}

// FilterExactLimit is the most memories a filtered search on the ANN plan
// scores exactly, all of them, instead of walking the index.
const FilterExactLimit = 4096

// filtered is the rows metadata filter f passes (all of them for nil),
// from the metadata columns (c.mu held).
func (c *Collection) filtered(f *Filter) bitmap {
	n := c.rows.len()
	if f == nil {
		all := newBitmap(n)
		all.not(n)
		return all
	}
	return c.meta.eval(f, n, func(j int) Metadata { return c.rows.at(j).mem.meta })
}

// keep reports whether row j passes req's source and metadata filters
// (c.mu held).
func (c *Collection) keep(j int, req *SearchRequest) bool {
	if len(req.Sources) == 0 && req.Filter == nil {
		return true // without reading the row: a search's candidates are cold
	}
	r := c.rows.at(j)
	return (len(req.Sources) == 0 || slices.Contains(req.Sources, r.mem.Source)) && req.Filter.Match(r.mem.meta)
}

// filterANN finds the rows a filtered search may return, as a bitmap by
// row: those that pass req's filters (and, when few enough to score all,
// that the query can see). When there are at most FilterExactLimit, it
// scores them all into res and says done.
func (c *Collection) filterANN(ctx context.Context, q *query, req *SearchRequest, res *SearchResult) (pass bitmap, done bool, err error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.dropped {
		return nil, false, fmt.Errorf("%w: collection %q", ErrNotFound, c.name)
	}
	// The metadata filter over the columns; then, while there may be
	// few enough to score, each match's own tests (a row visible to the
	// query, its source).
	bm := c.filtered(req.Filter)
	if bm.count() > FilterExactLimit && len(req.Sources) == 0 {
		return bm, false, nil // the walk searches only its index's rows
	}
	var rows []int
	n := 0
	bm.each(func(j int) bool {
		r := c.rows.at(j)
		if r.purged || !r.visible && !q.historical || !c.keep(j, req) || c.withdrawn(j, q.tq.TxAt) {
			bm[j/64] &^= 1 << (j % 64)
			return true
		}
		n++
		if n <= FilterExactLimit {
			rows = append(rows, j)
		}
		return true
	})
	if n > FilterExactLimit {
		return bm, false, nil
	}
	var beliefs []int
	for _, j := range rows {
		if q.params.MaskRetired {
			beliefs = append(beliefs, c.rows.at(j).beliefList()...)
		} else {
			beliefs = append(beliefs, c.beliefAt(j, q.tq.TxAt))
		}
	}
	beliefs, sims := c.firstStage(beliefs, c.cosines(q, beliefs), req.FirstStage)
	sc := c.scratch()
	defer searchPool.Put(sc)
	return nil, true, c.rescoreBeliefs(ctx, q, beliefs, sims, res, sc)
}

// candLookAhead is how many candidate rows ahead searchANN prefetches.
const candLookAhead = 3

// versionLinks is the link types a historical search follows (All-Mem's
// expansion priority: the siblings of a split first, then versions).
var versionLinks = []links.Type{links.Sibling, links.Version}

// searchScratch is one search's reusable memory (searchPool): the rows
// the index found, their beliefs, and the cosines (as computed, and
// clamped to [−1, 1] in float64 for the fused stage). A search in steady
// state allocates its result and little else.
type searchScratch struct {
	rows    []int
	ids     []uint32 // rows or beliefs, for prefetching
	beliefs []int
	sims    []float32
	sims64  []float64
}

var searchPool = sync.Pool{New: func() any { return new(searchScratch) }}

// scratch takes a searchScratch from the pool; the caller puts it back.
func (c *Collection) scratch() *searchScratch { return searchPool.Get().(*searchScratch) }

// beliefAt is the batch row of what row j was believed to be at
// transaction time tx (days on the collection's clock), or of its first
// belief when it was not recorded yet: a method that does not mask by
// transaction time scores each memory once, as it was believed then.
func (c *Collection) beliefAt(j int, tx float64) int {
	r := c.rows.at(j)
	if len(r.beliefList()) == 1 {
		return r.beliefList()[0] // the only one, whatever tx
	}
	for i, b := range r.beliefList() {
		if float64(c.batch.RecordedAt[b]) <= tx && tx < float64(c.batch.RetiredAt[b]) {
			return r.beliefList()[i]
		}
	}
	return r.beliefList()[0]
}

// withdrawn reports whether row j was retracted at or before transaction
// time tx (on the column store's clock, as Query.TxAt), or purged: no
// method finds it then, not even one that masks nothing (a superseded
// memory is a past belief; a retracted one was withdrawn). c.mu held.
func (c *Collection) withdrawn(j int, tx float64) bool {
	r := c.rows.at(j)
	return r.purged || r.retracted && tx >= float64(c.day32(r.retractedAt))
}

// rescoreBeliefs runs the fused stage, with explanations, over the given
// batch rows, reading their metadata where it is stored
// (kernels.RescoreRows; c.mu held).
func (c *Collection) rescoreBeliefs(ctx context.Context, q *query, beliefs []int, sims []float32, res *SearchResult, sc *searchScratch) error {
	var gl []float64
	if q.params.AdaptiveDecay {
		gl = c.groupLambdas()
	}
	sc.sims64 = slices.Grow(sc.sims64[:0], len(beliefs))[:len(beliefs)]
	for i, s := range sims[:len(beliefs)] {
		sc.sims64[i] = math.Max(-1, math.Min(1, float64(s)))
	}
	// The memories scored: a memory's beliefs are adjacent (each plan
	// appends them together).
	ids := c.batch.ID
	res.Candidates = 0
	for i, b := range beliefs {
		if i == 0 || ids[b] != ids[beliefs[i-1]] {
			res.Candidates++
		}
	}
	rr, err := kernels.RescoreRows(ctx, c.batch, beliefs, sc.sims64, &kernels.RescoreRequest{Time: q.tq, Params: q.params, K: q.k, GroupLambda: gl})
	if err != nil {
		return err
	}
	res.Hits = slices.Grow(res.Hits, len(rr.Ranked))
	sigs := make([]temporal.Signals, len(rr.Ranked)) // one allocation for the hits' explanations
	for i, e := range rr.Ranked {
		sigs[i] = e.Signals
		res.Hits = append(res.Hits, c.hit(int(e.ID), e.PoolFree, e.Signals.Sim, &sigs[i], q))
	}
	if len(rr.Removed) == 0 {
		return nil
	}
	// One removed entry per memory, and none for a memory another belief
	// of which was kept (a superseded belief beside the current one).
	reported := map[uint64]bool{}
	removedBy := map[uint64]temporal.Reason{}
	var order []uint64
	for _, r := range rr.Removed {
		if _, ok := removedBy[r.ID]; !ok {
			removedBy[r.ID] = r.Reason
			order = append(order, r.ID)
		}
	}
	keptAny := map[uint64]bool{}
	for _, b := range beliefs {
		id := ids[b]
		if _, removed := removedBy[id]; !removed {
			keptAny[id] = true
		}
	}
	for _, id := range order {
		if keptAny[id] || reported[id] {
			continue // another belief about the memory was kept
		}
		reported[id] = true
		res.addRemoved(c.rows.at(int(id)).mem.ID, removedBy[id])
	}
	return nil
}

// hit builds a result for row j with its shown score and cosine (c.mu
// held). Its confidence holds a static memory's clock whatever the method
// (temporal.ConfidenceParams.Reported).
func (c *Collection) hit(j int, score, cosine float64, sig *temporal.Signals, q *query) Hit {
	r := c.rows.at(j)
	age := q.tq.At + c.epochDays - r.created
	cp := q.params.Confidence.Reported()
	conf := temporal.Confidence(cp, r.c0, cp.Age(r.mem.Kind, age, 0), r.positive, r.negative, r.access)
	return Hit{ID: r.mem.ID, Score: score, Cosine: cosine, Confidence: conf, Memory: c.memory(j), Signals: sig}
}

// memory is row j as the public type, without its vector (c.mu held).
func (c *Collection) memory(j int) Memory {
	r := c.rows.at(j)
	m := r.mem.memory()
	m.RecordedAt = fromDays(r.rec)
	st := r.stateList()[len(r.stateList())-1]
	m.ValidFrom, m.ValidTo = fromDays(st.valid.From), fromDays(st.valid.To)
	if !r.hasFrom && r.supersedes == nil {
		m.ValidFrom = time.Time{}
	}
	for _, s := range r.stateList() {
		m.Beliefs = append(m.Beliefs, Belief{ValidFrom: fromDays(s.valid.From), ValidTo: fromDays(s.valid.To),
			RecordedAt: fromDays(s.recorded.From), RetiredAt: fromDays(s.recorded.To)})
	}
	m.Created = fromDays(r.created)
	m.Status, m.Visible = r.status, r.visible
	if r.supersededBy >= 0 {
		m.SupersededBy = c.rows.at(r.supersededBy).mem.ID
	}
	for _, o := range r.supersedes {
		m.Supersedes = append(m.Supersedes, c.rows.at(o).mem.ID)
	}

	m.Aliases = slices.Clone(r.aliases)
	for _, o := range r.contradicts {
		m.Contradicts = append(m.Contradicts, c.rows.at(o).mem.ID)
	}
	for _, o := range r.review {
		m.Review = append(m.Review, c.rows.at(o).mem.ID)
	}
	for _, o := range r.contradictedBy {
		m.ContradictedBy = append(m.ContradictedBy, c.rows.at(o).mem.ID)
	}
	m.Penalty = r.penalty
	m.Access, m.Positive, m.Negative = int64(r.access), int64(r.positive), int64(r.negative)
	if r.retracted {
		m.RetractedAt, m.RetractedBy = fromDays(r.retractedAt), r.retractedBy
	}
	m.Purged = r.purged
	m.Revision = max(1, r.revision)
	return m
}

// addRemoved counts one removed memory and lists it while the list is
// under MaxRemoved.
func (res *SearchResult) addRemoved(id string, why temporal.Reason) {
	res.RemovedTotal++
	if len(res.Removed) < MaxRemoved {
		res.Removed = append(res.Removed, Removed{ID: id, Reason: why})
	}
}
