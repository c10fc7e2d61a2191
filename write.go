package tidemark

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/internal/unitvec"
	"github.com/tidemark/tidemark/temporal"
)

// The write path (DESIGN "Write path"), applied to one logged Put in log
// order. It must be deterministic: recovery replays the same records into
// the same ledger. It is the engine form of eval.Memory's reference write
// path, which the tests hold it to.

// applyPut applies a logged batch written at transaction time tx (days).
// The ledger changes under c.mu; the indexes change afterwards, before
// the caller's Put returns.
func (c *Collection) applyPut(ms []Memory, tx float64) []PutResult {
	out := make([]PutResult, len(ms))
	c.mu.Lock()
	if c.dropped {
		c.mu.Unlock()
		return nil
	}
	touched := map[int]bool{} // row → was it on the surface before this batch
	newRows := len(c.rows)
	for i := range ms {
		out[i] = c.applyOne(&ms[i], tx, touched)
	}
	type move struct {
		row      int
		from, to bool // on the surface before / after
	}
	var moves []move
	for r, before := range touched {
		if r >= newRows {
			before = false
		}
		moves = append(moves, move{r, before, c.rows[r].visible})
	}
	for r := newRows; r < len(c.rows); r++ {
		if _, ok := touched[r]; !ok {
			moves = append(moves, move{r, false, c.rows[r].visible})
		}
	}
	slices.SortFunc(moves, func(a, b move) int { return cmp.Compare(a.row, b.row) })
	vec := func(r int) []float32 {
		b := c.rows[r].beliefs[0]
		return c.batch.Vectors[b*c.opts.Dim : (b+1)*c.opts.Dim]
	}
	var toSurface, toArchive []int
	for _, m := range moves {
		switch {
		case m.row >= newRows && m.to:
			toSurface = append(toSurface, m.row)
		case m.row >= newRows:
			toArchive = append(toArchive, m.row)
		case m.from && !m.to:
			toArchive = append(toArchive, m.row)
		}
	}
	vecs := make(map[int][]float32, len(toSurface)+len(toArchive))
	for _, r := range append(slices.Clone(toSurface), toArchive...) {
		vecs[r] = vec(r)
	}
	var leave []int
	for _, m := range moves {
		if m.row < newRows && m.from && !m.to {
			leave = append(leave, m.row)
		}
	}
	c.mu.Unlock()

	// Index work, outside the ledger lock so searches go on. Errors here
	// would mean a broken invariant (a key inserted twice, a dimension
	// mismatch); the ledger is the truth and a later open rebuilds.
	for _, r := range leave {
		_ = c.surface.Delete(uint64(r))
	}
	insertAll(c.surface, toSurface, vecs)
	insertAll(c.archive, toArchive, vecs)
	return out
}

// insertAll inserts rows into h, in parallel for large batches.
func insertAll(h *index.HNSW, rows []int, vecs map[int][]float32) {
	workers := min(runtime.GOMAXPROCS(0), len(rows)/8)
	if workers <= 1 {
		for _, r := range rows {
			_ = h.Insert(uint64(r), vecs[r])
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, len(rows))
	for _, r := range rows {
		next <- r
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range next {
				_ = h.Insert(uint64(r), vecs[r])
			}
		}()
	}
	wg.Wait()
}

// applyOne is the write path of one memory (c.mu held).
func (c *Collection) applyOne(m *Memory, tx float64, touched map[int]bool) PutResult {
	res := PutResult{ID: m.ID}
	h := contentHash(m)
	if j, ok := c.byID[m.ID]; ok {
		// A retry of a write that was applied (precheck refused other
		// content; two racing Puts with one id land here in log order).
		res.Outcome, res.Into = Unchanged, c.rows[j].mem.ID
		if !c.sameContent(j, m, h) {
			// Two Puts raced on one id with different content: the first
			// in log order stands.
			res.Outcome = Rejected
		}
		return res
	}
	r := row{mem: *m, hash: h, supersededBy: -1, status: temporal.Unconsolidated,
		access: float64(m.Access), positive: float64(m.Positive), negative: float64(m.Negative),
		normText: temporal.NormalizeObject(m.Text)}
	r.mem.Vector = nil
	r.halfLife, r.floor = c.opts.HalfLife, 0
	if m.Profile != "" {
		r.halfLife, r.floor = temporal.ProfileFor(m.Profile).HalfLife, temporal.DecayFloor(m.Profile, m.Kind)
	}
	r.c0 = m.Source.Authority()
	if m.DocID != "" {
		r.doc = docChunk{m.DocID, m.Chunk}
	}
	r.rec = tx
	if !m.RecordedAt.IsZero() {
		r.rec = days(m.RecordedAt, 0)
	}
	r.givenFrom, r.givenTo = days(m.ValidFrom, -temporal.Open), days(m.ValidTo, temporal.Open)
	r.effFrom = r.rec
	if !m.ValidFrom.IsZero() {
		r.effFrom, r.hasFrom = r.givenFrom, true
	}
	switch {
	case !m.Created.IsZero():
		r.created = days(m.Created, 0)
	case r.hasFrom:
		r.created = r.givenFrom
	default:
		r.created = r.rec
	}
	r.states = []state{{valid: temporal.Window{From: r.givenFrom, To: r.givenTo},
		recorded: temporal.Window{From: r.rec, To: temporal.Open}}}
	if m.Subject != "" {
		r.key = temporal.NewFactKey(m.Subject, m.Relation)
	}

	// Exact duplicate: same text, kind, windows, fact and document chunk as
	// a current memory → reinforce it.
	if r.normText != "" {
		for _, j := range c.byText[r.normText] {
			o := &c.rows[j]
			if !o.superseded && o.doc == r.doc && o.mem.Version == m.Version && o.mem.Kind == m.Kind && o.givenFrom == r.givenFrom && o.givenTo == r.givenTo &&
				o.key == r.key && temporal.NormalizeObject(o.mem.Object) == temporal.NormalizeObject(m.Object) {
				return c.reinforce(j, m, h)
			}
		}
	}
	// Fact key: the memory's place in its chain (temporal.Resolve's order);
	// the same object as its predecessor is a restatement. A memory that
	// restates a current one with another value first gives it its key.
	idx := len(c.rows)
	if m.KeyFrom != "" {
		c.adopt(m, touched)
	}
	var keyPos int
	if !r.key.IsZero() {
		chain := c.byKey[r.key]
		a := r.assertion(idx)
		keyPos = len(chain)
		for keyPos > 0 && temporal.Newer(c.rows[chain[keyPos-1]].assertion(chain[keyPos-1]), a) {
			keyPos--
		}
		if keyPos > 0 {
			pred := chain[keyPos-1]
			if temporal.Resolve(a, c.rows[pred].assertion(pred)) == temporal.Duplicate {
				return c.reinforce(pred, m, h)
			}
		}
	}

	// Store it.
	// A memory whose valid window had ended when tidemark learnt it (at the
	// batch's transaction time) never reaches the surface.
	r.visible = r.givenTo > tx
	if len(m.Vector) != c.opts.Dim { // Put checked it; never panic on a log record
		return PutResult{ID: m.ID, Outcome: Rejected}
	}
	if !r.visible {
		r.status = temporal.Archived
	}
	c.lastTx = max(c.lastTx, r.rec, tx)
	c.rows = append(c.rows, r)
	c.appendBelief(idx, m.Vector, true)
	c.observeDrift(idx)
	c.byID[m.ID] = idx
	if r.visible {
		c.visible++
	} else {
		c.offSurface(idx)
	}
	_ = c.links.AddNode(uint64(idx), r.created, r.visible)
	if r.normText != "" {
		c.byText[r.normText] = append(c.byText[r.normText], idx)
	}
	c.indexLead(idx)
	var closed []int
	if !r.key.IsZero() {
		c.byKey[r.key] = c.link(c.byKey[r.key], keyPos, idx, touched, &closed)
	}
	if m.DocID != "" {
		chain := c.byDoc[r.doc]
		pos := len(chain)
		for pos > 0 && c.rows[chain[pos-1]].mem.Version > m.Version {
			pos--
		}
		c.byDoc[r.doc] = c.link(chain, pos, idx, touched, &closed)
	}
	for _, o := range closed {
		if o == idx {
			res.SupersededBy = c.rows[c.rows[idx].supersededBy].mem.ID
		} else {
			res.Superseded = append(res.Superseded, c.rows[o].mem.ID)
		}
	}
	// Dependencies, in both directions, once per ordered pair; targets not
	// written yet are linked when they arrive.
	for _, d := range m.DependsOn {
		if t, ok := c.byID[d]; ok {
			c.addDep(idx, t)
		} else {
			c.pending[d] = append(c.pending[d], idx)
		}
	}
	if waiting, ok := c.pending[m.ID]; ok {
		delete(c.pending, m.ID)
		for _, w := range waiting {
			c.addDep(w, idx)
		}
	}
	return res
}

func (r *row) assertion(idx int) temporal.Assertion {
	return temporal.Assertion{ID: uint64(idx), Key: r.key, Object: r.mem.Object, ValidFrom: r.effFrom, RecordedAt: r.rec}
}

// link inserts row idx into chain at pos: the row before it is superseded
// by it, and it by the row after it.
func (c *Collection) link(chain []int, pos, idx int, touched map[int]bool, closed *[]int) []int {
	chain = slices.Insert(chain, pos, idx)
	if pos > 0 {
		c.supersede(chain[pos-1], idx, touched)
		*closed = append(*closed, chain[pos-1])
	}
	if pos+1 < len(chain) {
		c.supersede(idx, chain[pos+1], touched)
		*closed = append(*closed, idx)
	}
	return chain
}

// supersede closes row old because of row nw (eval.Memory's rule): old's
// valid window ends at nw's effective valid-from, believed from nw's
// transaction time on; a successor without a valid-from of its own holds
// from no earlier than old began. old leaves the surface; a version link
// nw → old keeps it reachable.
func (c *Collection) supersede(old, nw int, touched map[int]bool) {
	o, n := &c.rows[old], &c.rows[nw]
	if _, ok := touched[old]; !ok {
		touched[old] = o.visible
	}
	if o.visible {
		o.visible = false
		c.visible--
	}
	if !o.superseded {
		c.rippleSeeds = append(c.rippleSeeds, old)
	}
	o.superseded, o.supersededBy, o.status = true, nw, temporal.Deprecated
	c.syncCounters(old) // the status column of its beliefs
	defer c.offSurface(old)
	n.supersedes = append(n.supersedes, old)
	_ = c.links.SetVisible(uint64(old), false)
	_ = c.links.AddEdge(index.LinkVersion, uint64(nw), uint64(old), 0)
	if !n.hasFrom {
		n.effFrom = max(n.effFrom, o.effFrom)
		for i := range n.states {
			n.states[i].valid.From = n.effFrom
			c.batch.ValidFrom[n.beliefs[i]] = c.day32(n.effFrom)
		}
	}
	cur := &o.states[len(o.states)-1]
	b := o.beliefs[len(o.beliefs)-1]
	if n.effFrom >= cur.valid.To {
		return // it had ended already
	}
	if n.rec <= cur.recorded.From {
		cur.valid.To = n.effFrom
		c.batch.ValidTo[b] = c.day32(n.effFrom)
		return
	}
	cur.recorded.To = n.rec
	c.batch.RetiredAt[b] = c.day32(n.rec)
	o.states = append(o.states, state{valid: temporal.Window{From: cur.valid.From, To: n.effFrom},
		recorded: temporal.Window{From: n.rec, To: temporal.Open}})
	c.appendBelief(old, c.batch.Vectors[b*c.opts.Dim:(b+1)*c.opts.Dim], false)
}

// offSurface notes that row j is off the surface: queries at valid times
// before its window's end may need the archive.
func (c *Collection) offSurface(j int) {
	if to := c.rows[j].states[len(c.rows[j].states)-1].valid.To; !math.IsInf(to, 0) {
		c.histUntil = max(c.histUntil, to)
	}
}

// reinforce folds write m into row j: a restatement is an access.
func (c *Collection) reinforce(j int, m *Memory, h [32]byte) PutResult {
	r := &c.rows[j]
	r.access += 1 + float64(m.Access)
	r.positive += float64(m.Positive)
	r.negative += float64(m.Negative)
	r.aliases = append(r.aliases, m.ID)
	c.byID[m.ID] = j
	c.aliasHash[m.ID] = h
	c.syncCounters(j)
	if waiting, ok := c.pending[m.ID]; ok {
		delete(c.pending, m.ID)
		for _, w := range waiting {
			c.addDep(w, j)
		}
	}
	for _, d := range m.DependsOn {
		if t, ok := c.byID[d]; ok {
			c.addDep(j, t)
		} else {
			c.pending[d] = append(c.pending[d], j)
		}
	}
	return PutResult{ID: m.ID, Outcome: Reinforced, Into: r.mem.ID}
}

// indexLead adds row j to the update candidates when it can be one.
func (c *Collection) indexLead(j int) {
	if m := &c.rows[j].mem; keyable(m) {
		if l := leadWords(m.Text); l != "" {
			c.byLead[l] = append(c.byLead[l], j)
		}
	}
}

// addDep records that row a depends on row b.
func (c *Collection) addDep(a, b int) {
	if a == b || c.deps[[2]int{a, b}] {
		return
	}
	c.deps[[2]int{a, b}] = true
	c.rows[a].degree++
	c.rows[b].degree++
	c.syncCounters(a)
	c.syncCounters(b)
	_ = c.links.AddEdge(index.LinkDependsOn, uint64(a), uint64(b), 0)
}

// syncCounters copies row j's counters, status and base confidence into
// its batch rows.
func (c *Collection) syncCounters(j int) {
	r := &c.rows[j]
	for _, b := range r.beliefs {
		c.batch.Access[b], c.batch.Positive[b], c.batch.Negative[b] = float32(r.access), float32(r.positive), float32(r.negative)
		c.batch.Degree[b] = float32(r.degree)
		c.batch.Status[b] = r.status
		c.batch.BaseConf[b] = float32(r.c0)
	}
}

// day32 is a time in days since the Unix epoch on the batch's clock.
func (c *Collection) day32(d float64) float32 {
	if math.IsInf(d, 0) {
		return float32(d)
	}
	return float32(d - c.epochDays)
}

// appendBelief adds the batch row of row j's next state without one
// (states and beliefs run in step).
func (c *Collection) appendBelief(j int, vec []float32, normalize bool) {
	r := &c.rows[j]
	st := r.states[len(r.beliefs)]
	b := c.batch
	n := b.Len()
	d := c.opts.Dim
	b.Vectors = slices.Grow(b.Vectors, d)[:len(b.Vectors)+d]
	if normalize {
		unitvec.Normalize(vec, b.Vectors[n*d:(n+1)*d])
	} else {
		copy(b.Vectors[n*d:(n+1)*d], vec)
	}
	b.ID = append(b.ID, uint64(j))
	b.Kind = append(b.Kind, r.mem.Kind)
	b.Status = append(b.Status, r.status)
	b.Created = append(b.Created, c.day32(r.created))
	b.ValidFrom = append(b.ValidFrom, c.day32(st.valid.From))
	b.ValidTo = append(b.ValidTo, c.day32(st.valid.To))
	b.RecordedAt = append(b.RecordedAt, c.day32(st.recorded.From))
	b.RetiredAt = append(b.RetiredAt, c.day32(st.recorded.To))
	b.Lambda = append(b.Lambda, float32(temporal.Lambda(r.halfLife)))
	b.Floor = append(b.Floor, float32(r.floor))
	b.Group = append(b.Group, r.kgroup)
	b.BaseConf = append(b.BaseConf, float32(r.c0))
	b.ConfFrom = append(b.ConfFrom, c.day32(r.created))
	b.Access = append(b.Access, float32(r.access))
	b.Positive = append(b.Positive, float32(r.positive))
	b.Negative = append(b.Negative, float32(r.negative))
	b.Degree = append(b.Degree, float32(r.degree))
	r.beliefs = append(r.beliefs, n)
}
