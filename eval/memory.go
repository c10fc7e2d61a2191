package eval

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/tidemark/tidemark/embed"
	"github.com/tidemark/tidemark/temporal"
)

// FileOrderTime is the transaction time given to the corpus line at
// 0-based index i when it has no recorded_at: the Unix epoch
// (1970-01-01T00:00:00Z) plus i seconds. File order is then transaction
// order, every such line is recorded before any query time after 1970, and
// lines with a recorded_at keep theirs (so an undated line counts as
// learnt before every dated one).
func FileOrderTime(i int) time.Time { return time.Unix(int64(i), 0).UTC() }

// MemoryOptions configure a [Memory]. A nil *MemoryOptions, and a zero
// field, mean the default.
type MemoryOptions struct {
	// Method is the scoring preset (default temporal.MethodTidemark, the
	// zero value).
	Method temporal.Method
	// HalfLife is the decay half-life in days of a memory without a
	// profile (default temporal.SmartVectorHalfLife, 30 days; the
	// article's demo uses 60 for every document).
	HalfLife float64
	// Pool is MethodArticle's candidate pool: the Pool memories with the
	// highest raw cosine are scored, as the article's pipeline does
	// (default 20). Other methods scan every memory.
	Pool int
}

// DefaultPool is the default [MemoryOptions.Pool], the article's.
const DefaultPool = 20

// Validate reports the first invalid field; nil is valid.
func (o *MemoryOptions) Validate() error {
	if o == nil {
		return nil
	}
	if int(o.Method) >= len(temporal.Methods()) {
		return fmt.Errorf("%w: MemoryOptions.Method = %d", ErrOptions, o.Method)
	}
	if !(o.HalfLife >= 0) || math.IsInf(o.HalfLife, 0) {
		return fmt.Errorf("%w: MemoryOptions.HalfLife = %v, want a finite number ≥ 0 (0 for the default %v)",
			ErrOptions, o.HalfLife, temporal.SmartVectorHalfLife)
	}
	if o.Pool < 0 {
		return fmt.Errorf("%w: MemoryOptions.Pool = %d, want ≥ 0 (0 for the default %d)", ErrOptions, o.Pool, DefaultPool)
	}
	return nil
}

// WithDefaults returns a copy of o with every zero field set to its
// default; a nil o gives every default. It does not validate.
func (o *MemoryOptions) WithDefaults() MemoryOptions {
	var r MemoryOptions
	if o != nil {
		r = *o
	}
	if r.HalfLife == 0 {
		r.HalfLife = temporal.SmartVectorHalfLife
	}
	if r.Pool == 0 {
		r.Pool = DefaultPool
	}
	return r
}

// Memory is the in-memory reference [Searcher]: DESIGN's write path applied
// to a slice of rows, and an exact scan through [temporal.ScorePool] on the
// read path. It is the specification the engine is tested against, not a
// fast path: every query scores every memory.
//
// # Write path
//
// Ingest embeds the lines that have no vector with [embed.Hashing] (fitted
// on every text of the corpus; 1024 dimensions, or the corpus vectors'
// dimension when some lines have vectors — such lines are then in another
// space than the given vectors, so a benchmark should give vectors for all
// lines or none). It then writes the lines in file order:
//
//  1. Times. A line's transaction time is its recorded_at, or
//     [FileOrderTime] of its index. Its effective valid-from is valid_from,
//     or its transaction time when absent. Its age (the decay and
//     confidence clock) runs from recorded_at, else from valid_from, else
//     from its file-order transaction time — so a corpus without times is
//     uniformly old and ranks by the other signals.
//  2. Exact duplicate: a line whose text equals (case and spacing aside,
//     [temporal.NormalizeObject]) that of a row that is not superseded,
//     with the same kind, the same given valid_from and valid_to, the
//     same fact (or none) and the same document chunk and version (or
//     none: a new version of a chunk is stored even when its text repeats
//     the old one), is not stored: the row is reinforced — its
//     access count grows by 1 plus the line's access, and the line's
//     positive and negative counts are added.
//  3. Fact key ([temporal.NewFactKey], MemStrata): rows with the same
//     (subject, relation) form a chain in [temporal.Resolve]'s order
//     (valid-from, then transaction time, then file order). A line whose
//     predecessor in the chain has the same object is a duplicate and
//     reinforces it; otherwise it is stored and supersedes its
//     predecessor (and is superseded by its successor, when it arrived out
//     of order).
//  4. Document version: rows with the same (doc_id, chunk) form a chain
//     ordered by version, then file order; each supersedes the one before.
//
// A row that supersedes another and has no valid_from of its own is valid
// from its transaction time: it did not hold before it replaced its
// predecessor.
//
// Superseding closes the older row bi-temporally: its valid_to becomes the
// newer row's effective valid-from when that is earlier, and the belief
// with the old valid_to is retired in transaction time at the newer row's
// transaction time, replaced from then on by the belief with the closed
// window. So a query now sees the older row expired (tidemark's masks
// remove it), a query as of a past valid time still finds the version that
// was valid then, and a query at an earlier transaction time would see what
// was believed then.
//
// Degree (the relational signal) counts a row's depends_on links in both
// directions. A line folded into another (2, 3) is answered by that row's
// id, so gold that names a restated line should name the first statement
// too.
//
// # Read path
//
// Search scores every row with [temporal.ScorePool] and
// temporal.Preset(Method), at valid time as_of (or now) and transaction
// time now: "what was true at T, with everything known now". Each row is
// one candidate: its cosine to the query, kind, windows, decay half-life
// and floor from its profile ([temporal.ProfileFor], [temporal.DecayFloor];
// HalfLife and no floor without a profile), base confidence from its
// source's authority, its counters and degree. MethodVDD has no drift
// detector here: each row's λ is its static ln 2 / half-life. For
// MethodArticle only the Pool rows with the highest raw cosine (ties in
// file order) are scored, as in the article's pipeline, where a vector
// store hands a fixed pool to the temporal reranker; the pool-relative
// signals (normalised cosine, recency) depend on it.
//
// The answer is the top k ids and the top-1 row's live confidence: the
// ConfidenceEngine value of the method's parameters, computed for every
// method even when its weight is 0, with a static memory's clock held
// (temporal.ConfidenceParams.Reported), as the engine shows it.
//
// # Concurrency
//
// A Memory is safe for concurrent use: any number of Search calls may run
// together; Ingest waits for them and replaces the whole memory.
type Memory struct {
	opts   MemoryOptions
	params temporal.Params

	mu       sync.RWMutex // guards the fields below
	ingested bool
	rows     []row
	dim      int
	emb      *embed.Hashing
}

var _ Searcher = (*Memory)(nil)

// NewMemory returns an empty memory; nil opts means every default.
func NewMemory(opts *MemoryOptions) (*Memory, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.WithDefaults()
	return &Memory{opts: o, params: temporal.Preset(o.Method)}, nil
}

// Options returns the options in effect, defaults filled in.
func (m *Memory) Options() MemoryOptions { return m.opts }

// Len returns the number of stored rows (lines folded into others as
// duplicates are not rows).
func (m *Memory) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.rows)
}

// Belief is one bi-temporal belief about a stored memory: its valid
// window, believed during the transaction window (days since the Unix
// epoch; ±Inf is open).
type Belief struct {
	ValidFrom, ValidTo       float64
	RecordedFrom, RecordedTo float64
}

// Beliefs returns the beliefs held about the memory stored under id (a
// line folded into another is found under the other's id), oldest first,
// and whether a newer memory superseded it: the reference's ledger, for
// tests that hold an engine's write path to it.
func (m *Memory) Beliefs(id string) (beliefs []Belief, superseded, ok bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for i := range m.rows {
		r := &m.rows[i]
		if r.id != id {
			continue
		}
		for _, s := range r.states {
			beliefs = append(beliefs, Belief{s.valid.From, s.valid.To, s.recorded.From, s.recorded.To})
		}
		return beliefs, r.superseded, true
	}
	return nil, false, false
}

// state is one bi-temporal belief about a row: its valid window, believed
// during the transaction window.
type state struct {
	valid, recorded temporal.Window
}

// row is one stored memory.
type row struct {
	id   string
	line int // 0-based index of the line that created it
	vec  []float32
	norm float64

	kind     temporal.Kind
	halfLife float64
	floor    float64
	c0       float64

	rec     float64 // transaction time, days
	effFrom float64 // effective valid-from, days
	created float64 // age clock, days
	// givenFrom and givenTo are the line's own valid window, for the
	// duplicate test; hasFrom reports a given valid_from.
	givenFrom, givenTo float64
	hasFrom            bool

	states []state // in transaction-time order; the last is open

	version  int
	doc      docChunk // the document chunk, zero when the line has no doc_id
	normText string
	key      temporal.FactKey
	object   string
	// superseded is set once a newer row closed this one.
	superseded bool

	access, positive, negative, degree float64
}

// stateAt returns the belief visible at transaction time tx, or the first
// one when none is (the row is then masked as not yet recorded).
func (r *row) stateAt(tx float64) state {
	for _, s := range r.states {
		if s.recorded.Contains(tx) {
			return s
		}
	}
	return r.states[0]
}

func (r *row) assertion() temporal.Assertion {
	return temporal.Assertion{ID: uint64(r.line), Key: r.key, Object: r.object, ValidFrom: r.effFrom, RecordedAt: r.rec}
}

// days converts t to days since the Unix epoch, the time axis of the
// scoring math; nil is the open bound open. Unlike temporal.Days it takes
// every time of the format (years 0…9999) — time.Time.Sub saturates beyond
// 292 years — and the zero time.Time is a time like any other.
func days(t *time.Time, open float64) float64 {
	if t == nil {
		return open
	}
	return float64(t.Unix())/secondsPerDay + float64(t.Nanosecond())/(secondsPerDay*1e9)
}

const secondsPerDay = 24 * 60 * 60

// Ingest replaces the memory's contents with corpus, written in order (see
// [Memory]). It validates the corpus first ([ValidateCorpus]) and checks
// ctx every few hundred lines.
func (m *Memory) Ingest(ctx context.Context, corpus []CorpusLine) error {
	if err := ValidateCorpus(corpus); err != nil {
		return err
	}
	vecs, emb, dim, err := EmbedCorpus(ctx, corpus)
	if err != nil {
		return err
	}
	b := builder{opts: &m.opts, byText: map[string][]int{}, byKey: map[temporal.FactKey][]int{},
		byDoc: map[docChunk][]int{}, rowOf: map[string]int{}}
	for i := range corpus {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		b.add(i, &corpus[i], vecs[i])
	}
	b.degrees(corpus)

	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows, m.dim, m.emb, m.ingested = b.rows, dim, emb, true
	return nil
}

type docChunk struct {
	doc   string
	chunk int
}

// builder applies the write path.
type builder struct {
	opts   *MemoryOptions
	rows   []row
	byText map[string][]int           // normalised text → rows
	byKey  map[temporal.FactKey][]int // fact chain, oldest first
	byDoc  map[docChunk][]int         // version chain, lowest first
	rowOf  map[string]int             // every line id → its row
}

func (b *builder) add(i int, l *CorpusLine, vec []float32) {
	r := row{id: l.ID, line: i, vec: vec, kind: l.Kind, version: l.Version, normText: temporal.NormalizeObject(l.Text),
		access: float64(l.Access), positive: float64(l.Positive), negative: float64(l.Negative)}
	var n float64
	for _, x := range vec {
		n += float64(x) * float64(x)
	}
	r.norm = math.Sqrt(n)
	r.halfLife, r.floor = b.opts.HalfLife, 0
	if l.Profile != "" {
		r.halfLife, r.floor = temporal.ProfileFor(l.Profile).HalfLife, temporal.DecayFloor(l.Profile, l.Kind)
	}
	r.c0 = l.Source.Authority()
	if l.DocID != "" {
		r.doc = docChunk{l.DocID, l.Chunk}
	}
	r.rec = float64(i) / secondsPerDay
	if l.RecordedAt != nil {
		r.rec = days(l.RecordedAt, 0)
	}
	r.givenFrom, r.givenTo = days(l.ValidFrom, -temporal.Open), days(l.ValidTo, temporal.Open)
	r.effFrom = r.rec
	if l.ValidFrom != nil {
		r.effFrom, r.hasFrom = r.givenFrom, true
	}
	r.created = r.rec
	if l.RecordedAt == nil && l.ValidFrom != nil {
		r.created = r.givenFrom
	}
	r.states = []state{{valid: temporal.Window{From: r.givenFrom, To: r.givenTo},
		recorded: temporal.Window{From: r.rec, To: temporal.Open}}}
	if l.Subject != "" {
		r.key, r.object = temporal.NewFactKey(l.Subject, l.Relation), l.Object
	}

	// 2. Exact duplicate.
	if r.normText != "" {
		for _, j := range b.byText[r.normText] {
			o := &b.rows[j]
			// A restatement folds only into a row of the same document
			// chunk (or when neither has one): a new version whose text
			// repeats another document's row must still supersede its own
			// predecessor.
			if !o.superseded && o.doc == r.doc && (o.doc == docChunk{} || o.version == r.version) && o.kind == r.kind &&
				o.givenFrom == r.givenFrom && o.givenTo == r.givenTo &&
				o.key == r.key && temporal.NormalizeObject(o.object) == temporal.NormalizeObject(r.object) {
				b.reinforce(j, l)
				return
			}
		}
	}
	// 3. Fact key: find the line's place in its chain.
	var keyPos int
	if !r.key.IsZero() {
		chain := b.byKey[r.key]
		a := r.assertion()
		keyPos = len(chain)
		for keyPos > 0 && temporal.Newer(b.rows[chain[keyPos-1]].assertion(), a) {
			keyPos--
		}
		if keyPos > 0 {
			pred := chain[keyPos-1]
			if temporal.Resolve(a, b.rows[pred].assertion()) == temporal.Duplicate {
				b.reinforce(pred, l)
				return
			}
		}
	}
	idx := len(b.rows)
	b.rows = append(b.rows, r)
	b.rowOf[l.ID] = idx
	if r.normText != "" {
		b.byText[r.normText] = append(b.byText[r.normText], idx)
	}
	if !r.key.IsZero() {
		b.byKey[r.key] = b.link(b.byKey[r.key], keyPos, idx)
	}
	// 4. Document version.
	if l.DocID != "" {
		dc := docChunk{l.DocID, l.Chunk}
		chain := b.byDoc[dc]
		pos := len(chain)
		for pos > 0 && b.rows[chain[pos-1]].version > l.Version {
			pos--
		}
		b.byDoc[dc] = b.link(chain, pos, idx)
	}
}

// link inserts row idx into chain at pos; the row before it is superseded
// by it, and it by the row after it. A row that supersedes another and has
// no valid_from is valid from its effective valid-from (its transaction
// time): it did not hold before it replaced its predecessor.
func (b *builder) link(chain []int, pos, idx int) []int {
	chain = slices.Insert(chain, pos, idx)
	if pos > 0 {
		b.supersede(chain[pos-1], idx)
	}
	if pos+1 < len(chain) {
		b.supersede(idx, chain[pos+1])
	}
	return chain
}

// supersede closes row old because of row nw: its valid window ends at
// nw's effective valid-from, from nw's transaction time on (or from its own
// recording, if it was learnt after nw).
func (b *builder) supersede(old, nw int) {
	o, n := &b.rows[old], &b.rows[nw]
	o.superseded = true
	if !n.hasFrom {
		// A successor cannot hold before the version it replaces began
		// (its own transaction time may be the synthetic file-order time).
		n.effFrom = max(n.effFrom, o.effFrom)
		for i := range n.states {
			n.states[i].valid.From = n.effFrom
		}
	}
	cur := &o.states[len(o.states)-1]
	if n.effFrom >= cur.valid.To {
		return // it had ended already
	}
	if n.rec <= cur.recorded.From {
		cur.valid.To = n.effFrom
		return
	}
	cur.recorded.To = n.rec
	o.states = append(o.states, state{valid: temporal.Window{From: cur.valid.From, To: n.effFrom},
		recorded: temporal.Window{From: n.rec, To: temporal.Open}})
}

// reinforce folds line l into row j: a restatement is an access.
func (b *builder) reinforce(j int, l *CorpusLine) {
	r := &b.rows[j]
	r.access += 1 + float64(l.Access)
	r.positive += float64(l.Positive)
	r.negative += float64(l.Negative)
	b.rowOf[l.ID] = j
}

// degrees counts each row's depends_on links, both directions, once per
// pair of distinct rows.
func (b *builder) degrees(corpus []CorpusLine) {
	type edge struct{ from, to int }
	seen := map[edge]bool{}
	for i := range corpus {
		from := b.rowOf[corpus[i].ID]
		for _, d := range corpus[i].DependsOn {
			to := b.rowOf[d]
			e := edge{from, to}
			if from == to || seen[e] {
				continue
			}
			seen[e] = true
			b.rows[from].degree++
			b.rows[to].degree++
		}
	}
}

// Search answers q (see [Memory]): the top q.TopK() ids and the top-1
// row's confidence. It validates q, embeds its text when it has no vector,
// and checks ctx every few thousand rows.
func (m *Memory) Search(ctx context.Context, q QueryLine) (Ranking, error) {
	if err := q.Validate(); err != nil {
		return Ranking{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !m.ingested {
		return Ranking{}, ErrNotIngested
	}
	qv, err := EmbedQuery(ctx, m.emb, m.dim, &q)
	if err != nil {
		return Ranking{}, err
	}
	var qn float64
	for _, x := range qv {
		qn += float64(x) * float64(x)
	}
	qn = math.Sqrt(qn)
	sims := make([]float64, len(m.rows))
	for i := range m.rows {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return Ranking{}, err
			}
		}
		r := &m.rows[i]
		if r.norm == 0 || qn == 0 {
			continue
		}
		var dot float64
		for j, x := range r.vec {
			dot += float64(x) * float64(qv[j])
		}
		sims[i] = dot / (r.norm * qn)
	}
	pool := make([]int, len(m.rows))
	for i := range pool {
		pool[i] = i
	}
	if m.opts.Method == temporal.MethodArticle && len(pool) > m.opts.Pool {
		slices.SortStableFunc(pool, func(a, b int) int { return cmp.Compare(sims[b], sims[a]) })
		pool = pool[:m.opts.Pool]
	}
	now := days(&q.Now, 0)
	tq := temporal.Query{At: now, TxAt: now}
	if q.AsOf != nil {
		tq.At = days(q.AsOf, 0)
	}
	cands := make([]temporal.Candidate, len(pool))
	for j, i := range pool {
		cands[j] = m.rows[i].candidate(uint64(i), sims[i], tq)
	}
	res, err := temporal.ScorePool(tq, m.params, cands)
	if err != nil {
		return Ranking{}, err
	}
	top := res.TopK(q.TopK())
	out := Ranking{IDs: make([]string, len(top))}
	for j, s := range top {
		out.IDs[j] = m.rows[s.ID].id
	}
	if len(top) > 0 {
		c := m.rows[top[0].ID].candidate(top[0].ID, top[0].Signals.Sim, tq)
		out.Confidence = temporal.LiveConfidence(m.params.Confidence.Reported(), &c, tq.At)
	}
	return out, nil
}

// candidate is row r as the scoring stage sees it for query q.
func (r *row) candidate(id uint64, sim float64, q temporal.Query) temporal.Candidate {
	st := r.stateAt(q.TxAt)
	return temporal.Candidate{
		ID: id, Sim: sim, Kind: r.kind, Status: temporal.Active,
		CreatedAt: r.created, Valid: st.valid, Recorded: st.recorded,
		HalfLife: r.halfLife, Floor: r.floor, Lambda: temporal.Lambda(r.halfLife),
		BaseConfidence: r.c0, ConfidenceFrom: r.created,
		Access: r.access, Positive: r.positive, Negative: r.negative, Degree: r.degree,
	}
}
