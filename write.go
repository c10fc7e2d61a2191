package tidemark

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/internal/links"
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
func (c *Collection) applyPut(ms []Memory, tx float64, seq uint64) ([]PutResult, error) {
	c.mu.Lock()
	if c.dropped {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: collection %q", ErrNotFound, c.name)
	}
	newRows := c.rows.len()
	out, touched := c.put(ms, tx, seq)
	c.syncLinks()
	leave, toSurface, toArchive, vecs := c.surfaceMoves(touched, newRows)
	c.mu.Unlock()
	c.moveIndexed(leave, toSurface, toArchive, vecs)
	return out, nil
}

// moveIndexed mirrors a record's surface moves into the HNSW indexes,
// outside the ledger lock so searches go on. An error here would mean a
// broken invariant (a key inserted twice, a dimension mismatch): the
// ledger is the truth, the first such error is kept (indexErr, which
// checkLinks reports), and the next Open rebuilds the indexes
// (indexesAgree).
func (c *Collection) moveIndexed(leave, toSurface, toArchive []int, vecs map[int][]float32) {
	var errs []error
	for _, r := range leave {
		if err := c.surface.Delete(uint64(r)); err != nil {
			errs = append(errs, fmt.Errorf("surface: delete row %d: %w", r, err))
		}
	}
	if err := insertAll(c.surface, toSurface, vecs); err != nil {
		errs = append(errs, fmt.Errorf("surface: %w", err))
	}
	if err := insertAll(c.archive, toArchive, vecs); err != nil {
		errs = append(errs, fmt.Errorf("archive: %w", err))
	}
	if len(errs) > 0 {
		c.mu.Lock()
		if c.indexErr == nil {
			c.indexErr = errors.Join(errs...)
		}
		c.mu.Unlock()
	}
}

// put is the ledger's apply of a logged Put (record seq): the write path
// of each memory in batch order, a memory that names siblings with its
// siblings (putSplit). touched maps each earlier row it moved to whether
// it was on the surface before.
func (l *ledger) put(ms []Memory, tx float64, seq uint64) (out []PutResult, touched map[int]bool) {
	out = make([]PutResult, len(ms))
	touched = map[int]bool{}
	l.growColumns(len(ms))
	for i := 0; i < len(ms); i++ {
		if from := ms[i].SplitFrom; from != "" {
			// The siblings of a stored memory split on update (a sibling
			// of a memory of this batch follows it, and is consumed with
			// it below).
			end := i + 1
			for end < len(ms) && ms[end].SplitFrom == from {
				end++
			}
			copy(out[i:end], l.putSplitExisting(ms[i:end], tx, seq, touched))
			i = end - 1
			continue
		}
		if n := len(ms[i].SplitInto); n > 0 {
			end := i + 1
			for end < len(ms) && end <= i+n && ms[end].SplitFrom == ms[i].ID {
				end++
			}
			copy(out[i:end], l.putSplit(ms[i:end], tx, seq, touched))
			i = end - 1
			continue
		}
		out[i] = l.putOne(&ms[i], tx, seq, touched)
	}
	return out, touched
}

// surfaceMoves lists what a record's ledger changes mean for the HNSW
// indexes (mu held): the earlier rows that left the surface, the new rows
// for the surface and for the archive, with their unit vectors.
func (l *ledger) surfaceMoves(touched map[int]bool, newRows int) (leave, toSurface, toArchive []int, vecs map[int][]float32) {
	type move struct {
		row      int
		from, to bool // on the surface before / after
	}
	var moves []move
	for r, before := range touched {
		if r >= newRows {
			before = false
		}
		moves = append(moves, move{r, before, l.rows.at(r).visible})
	}
	for r := newRows; r < l.rows.len(); r++ {
		if _, ok := touched[r]; !ok {
			moves = append(moves, move{r, false, l.rows.at(r).visible})
		}
	}
	slices.SortFunc(moves, func(a, b move) int { return cmp.Compare(a.row, b.row) })
	for _, m := range moves {
		switch {
		case m.row >= newRows && m.to:
			toSurface = append(toSurface, m.row)
		case m.row >= newRows:
			toArchive = append(toArchive, m.row)
		case m.from && !m.to:
			toArchive = append(toArchive, m.row)
			leave = append(leave, m.row)
		}
	}
	vecs = make(map[int][]float32, len(toSurface)+len(toArchive))
	for _, r := range append(slices.Clone(toSurface), toArchive...) {
		vecs[r] = l.unitVector(r)
	}
	return leave, toSurface, toArchive, vecs
}

// unitVector is row j's unit vector (its first belief's columns).
func (l *ledger) unitVector(j int) []float32 {
	b, d := l.rows.at(j).beliefList()[0], l.opts.Dim
	return l.batch.Vectors[b*d : (b+1)*d]
}

// insertAll inserts rows into h, in parallel for large batches, and
// returns the first error.
func insertAll(h *index.HNSW, rows []int, vecs map[int][]float32) error {
	workers := min(runtime.GOMAXPROCS(0), len(rows)/8)
	if workers <= 1 {
		for _, r := range rows {
			if err := h.Insert(uint64(r), vecs[r]); err != nil {
				return fmt.Errorf("insert row %d: %w", r, err)
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	var once sync.Once
	var first error
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
				if err := h.Insert(uint64(r), vecs[r]); err != nil {
					once.Do(func() { first = fmt.Errorf("insert row %d: %w", r, err) })
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// putOne is the write path of one memory.
func (l *ledger) putOne(m *Memory, tx float64, seq uint64, touched map[int]bool) PutResult {
	res := PutResult{ID: m.ID}
	h := contentHash(m)
	prev := -1 // the id's current version, which this write replaces
	if j, ok := l.rowOf(m.ID); ok {
		switch {
		case m.IfRevision > 0 && m.IfRevision != l.revision(j):
			// Someone else wrote the id since the writer read it (in log
			// order: the precheck saw the revision it expected).
			res.Outcome = Rejected
			return res
		case l.rows.at(j).purged:
			res.Outcome = Rejected // a purged id stays retired
			return res
		case l.sameContent(j, m, h) && !l.rows.at(j).retracted:
			// A retry of a write that was applied.
			res.Outcome, res.Into = Unchanged, l.rows.at(j).mem.ID
			if res.Into == m.ID {
				res.Split = slices.Clone(l.rows.at(j).mem.SplitInto) // a retry of a split memory
			}
			return res
		}
		// Other content (or a retracted memory written again): a new
		// version of the id, below — unless the id was only folded into
		// another memory as a duplicate (an alias): it then gets content
		// of its own, and that memory keeps its own.
		if o := l.rows.at(j); o.mem.ID != m.ID {
			ls := o.lists()
			ls.aliases = slices.DeleteFunc(ls.aliases, func(a string) bool { return a == m.ID })
			delete(l.aliasHash, m.ID)
			l.dropID(m.ID)
		} else {
			prev = j
		}
	} else if m.IfRevision > 0 {
		res.Outcome = Rejected // it expected a version that does not exist
		return res
	}
	if prev >= 0 {
		// The id's earlier version no longer asserts its fact: out of its
		// chains, so that it cannot supersede (or be the predecessor of)
		// anything from now on; the new version takes its own place.
		l.leaveChains(prev, tx, false)
	}
	r := row{rowNum: &rowNum{hash: h, supersededBy: -1, status: temporal.Unconsolidated,
		access: float64(m.Access), positive: float64(m.Positive), negative: float64(m.Negative)}, mem: storeFields(m)}
	r.derive()
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
	r.setState(state{valid: temporal.Window{From: r.givenFrom, To: r.givenTo},
		recorded: temporal.Window{From: r.rec, To: temporal.Open}})

	// Exact duplicate: same text, kind, windows, fact and document chunk as
	// a current memory → reinforce it. (Not a new version of an id: its
	// content must be stored under the id.)
	if r.normText != "" && prev < 0 {
		for _, j := range l.byText[r.normText] {
			o := l.rows.at(j)
			if !o.superseded && !o.retracted && o.mem.metaJSON == m.metaJSON && o.doc == r.doc && o.mem.Version == m.Version && o.mem.Kind == m.Kind && o.givenFrom == r.givenFrom && o.givenTo == r.givenTo &&
				o.key == r.key && temporal.NormalizeObject(o.mem.Object) == temporal.NormalizeObject(m.Object) {
				return l.reinforce(j, m, h)
			}
		}
	}
	// Fact key: the memory's place in its chain (temporal.Resolve's order);
	// the same object as its predecessor is a restatement. A memory that
	// restates a current one with another value first gives it its key.
	idx := l.rows.len()
	if m.KeyFrom != "" {
		l.adopt(m, touched)
	}
	var keyPos int
	if !r.key.IsZero() {
		chain := l.byKey[r.key]
		a := r.assertion(idx)
		keyPos = len(chain)
		for keyPos > 0 && temporal.Newer(l.rows.at(chain[keyPos-1]).assertion(chain[keyPos-1]), a) {
			keyPos--
		}
		if keyPos > 0 && prev < 0 {
			pred := chain[keyPos-1]
			if temporal.Resolve(a, l.rows.at(pred).assertion(pred)) == temporal.Duplicate && l.rows.at(pred).mem.metaJSON == m.metaJSON {
				return l.reinforce(pred, m, h)
			}
		}
	}

	// Store it.
	// A memory whose valid window had ended when tidemark learnt it (at the
	// batch's transaction time) never reaches the surface.
	// Nor does one about to be split (putSplit): it is evidence.
	split := len(m.SplitInto) > 0
	r.visible = r.givenTo > tx && !split
	if len(m.Vector) != l.opts.Dim { // Put checked it; never panic on a log record
		return PutResult{ID: m.ID, Outcome: Rejected}
	}
	if !r.visible {
		r.status = temporal.Archived
	}
	l.lastTx = max(l.lastTx, r.rec, tx)
	l.rows.add(r)
	if r.mem.meta != nil {
		l.meta.set(idx, r.mem.meta)
	}
	l.appendBelief(idx, m.Vector, true)
	l.observeDrift(idx)
	l.setID(m.ID, idx)
	if r.visible {
		l.visible++
	} else {
		l.offSurface(idx)
	}
	l.addNode(idx)
	if r.normText != "" {
		l.byText[r.normText] = append(l.byText[r.normText], idx)
	}
	l.indexLead(idx)
	var closed []int
	if !r.key.IsZero() {
		l.byKey[r.key] = l.link(l.byKey[r.key], keyPos, idx, touched, &closed)
	}
	if m.DocID != "" {
		chain := l.byDoc[r.doc]
		pos := len(chain)
		for pos > 0 && l.rows.at(chain[pos-1]).mem.Version > m.Version {
			pos--
		}
		l.byDoc[r.doc] = l.link(chain, pos, idx, touched, &closed)
	}
	if prev >= 0 {
		// The id's earlier version: superseded by this one whatever their
		// keys (unless its chain did it already above), as a fact key's
		// successor supersedes; its revision follows.
		if p := l.rows.at(prev); p.supersededBy != idx {
			l.replaceVersion(prev, idx, touched)
			closed = append(closed, prev)
		}
		l.rows.at(idx).lists().revision = l.revision(prev) + 1
		// The earlier version's statements, if it was split, go with it.
		for _, s := range l.rows.at(prev).splitInto {
			if sr := l.rows.at(s); !sr.retracted && !sr.purged {
				if _, ok := touched[s]; !ok {
					touched[s] = sr.visible
				}
				l.withdraw(s, tx, "", false)
				l.audit = append(l.audit, AuditEntry{Seq: seq, Time: fromDays(tx), Rule: RuleRetract, ID: sr.mem.ID, Other: m.ID, Reason: "REPLACED"})
			}
		}
	}
	for _, o := range closed {
		if o == idx {
			res.SupersededBy = l.rows.at(l.rows.at(idx).supersededBy).mem.ID
		} else {
			res.Superseded = append(res.Superseded, l.rows.at(o).mem.ID)
		}
	}
	// Dependencies, in both directions, once per ordered pair; targets not
	// written yet are linked when they arrive.
	for _, d := range m.DependsOn {
		if t, ok := l.rowOf(d); ok {
			l.addDep(idx, t)
		} else {
			l.pending[d] = append(l.pending[d], idx)
		}
	}
	if waiting, ok := l.pending[m.ID]; ok {
		delete(l.pending, m.ID)
		for _, w := range waiting {
			l.addDep(w, idx)
		}
	}
	return res
}

// revision is row j's revision: 1 for an id's first version, one more
// for each later version of the id (Put of other content).
func (l *ledger) revision(j int) int { return max(1, l.rows.at(j).revision) }

// replaceVersion makes row nw the next version of the id of row old: old
// is superseded as a fact key's predecessor is, or, when it was retracted
// (no longer believed), only linked to nw for its history.
func (l *ledger) replaceVersion(old, nw int, touched map[int]bool) {
	o := l.rows.at(old)
	if !o.retracted {
		l.supersede(old, nw, touched)
		return
	}
	n := l.rows.at(nw)
	o.superseded, o.supersededBy = true, nw
	n.lists().supersedes = append(n.lists().supersedes, old)
	l.addEdge(links.Version, nw, old)
}

func (r *row) assertion(idx int) temporal.Assertion {
	return temporal.Assertion{ID: uint64(idx), Key: r.key, Object: r.mem.Object, ValidFrom: r.effFrom, RecordedAt: r.rec}
}

// link inserts row idx into chain at pos: the row before it is superseded
// by it, and it by the row after it.
func (l *ledger) link(chain []int, pos, idx int, touched map[int]bool, closed *[]int) []int {
	chain = slices.Insert(chain, pos, idx)
	if pos > 0 {
		l.supersede(chain[pos-1], idx, touched)
		*closed = append(*closed, chain[pos-1])
	}
	if pos+1 < len(chain) {
		l.supersede(idx, chain[pos+1], touched)
		*closed = append(*closed, idx)
	}
	return chain
}

// supersede closes row old because of row nw (eval.Memory's rule): old's
// valid window ends at nw's effective valid-from, believed from nw's
// transaction time on; a successor without a valid-from of its own holds
// from no earlier than old began. old leaves the surface; a version link
// nw → old keeps it reachable.
func (l *ledger) supersede(old, nw int, touched map[int]bool) {
	o, n := l.rows.at(old), l.rows.at(nw)
	if _, ok := touched[old]; !ok {
		touched[old] = o.visible
	}
	if o.visible {
		o.visible = false
		l.visible--
	}
	if !o.superseded {
		l.rippleSeeds = append(l.rippleSeeds, old)
	}
	o.superseded, o.supersededBy, o.status = true, nw, temporal.Deprecated
	l.syncCounters(old) // the status column of its beliefs
	defer l.offSurface(old)
	n.lists().supersedes = append(n.lists().supersedes, old)
	l.hide(old)
	l.addEdge(links.Version, nw, old)
	if !n.hasFrom {
		n.effFrom = max(n.effFrom, o.effFrom)
		for i := range n.stateList() {
			n.stateList()[i].valid.From = n.effFrom
			l.batch.ValidFrom[n.beliefList()[i]] = l.day32(n.effFrom)
			l.batch.Changed(n.beliefList()[i])
		}
	}
	cur := &o.stateList()[len(o.stateList())-1]
	b := o.beliefList()[len(o.beliefList())-1]
	if n.effFrom >= cur.valid.To {
		return // it had ended already
	}
	if n.rec <= cur.recorded.From {
		cur.valid.To = n.effFrom
		l.batch.ValidTo[b] = l.day32(n.effFrom)
		l.batch.Changed(b)
		return
	}
	cur.recorded.To = n.rec
	l.batch.RetiredAt[b] = l.day32(n.rec)
	l.batch.Changed(b)
	o.appendState(state{valid: temporal.Window{From: cur.valid.From, To: n.effFrom},
		recorded: temporal.Window{From: n.rec, To: temporal.Open}})
	l.appendBelief(old, l.batch.Vectors[b*l.opts.Dim:(b+1)*l.opts.Dim], false)
}

// offSurface notes that row j is off the surface: queries at valid times
// before its window's end may need the archive.
func (l *ledger) offSurface(j int) {
	if to := l.rows.at(j).stateList()[len(l.rows.at(j).stateList())-1].valid.To; !math.IsInf(to, 0) {
		l.histUntil = max(l.histUntil, to)
	}
}

// reinforce folds write m into row j: a restatement is an access.
func (l *ledger) reinforce(j int, m *Memory, h [32]byte) PutResult {
	r := l.rows.at(j)
	r.access += 1 + float64(m.Access)
	r.positive += float64(m.Positive)
	r.negative += float64(m.Negative)
	r.lists().aliases = append(r.lists().aliases, m.ID)
	l.setID(m.ID, j)
	l.aliasHash[m.ID] = h
	l.syncCounters(j)
	if waiting, ok := l.pending[m.ID]; ok {
		delete(l.pending, m.ID)
		for _, w := range waiting {
			l.addDep(w, j)
		}
	}
	for _, d := range m.DependsOn {
		if t, ok := l.rowOf(d); ok {
			l.addDep(j, t)
		} else {
			l.pending[d] = append(l.pending[d], j)
		}
	}
	return PutResult{ID: m.ID, Outcome: Reinforced, Into: r.mem.ID}
}

// indexLead adds row j to the update candidates when it can be one.
func (l *ledger) indexLead(j int) {
	s := &l.rows.at(j).mem
	// keyable's three fields, not the whole Memory: building one clones
	// its dependencies and metadata, for every row at Open.
	if m := (Memory{Text: s.Text, DocID: s.DocID, Kind: s.Kind}); keyable(&m) {
		if lead := leadWords(m.Text); lead != "" {
			l.byLead[lead] = append(l.byLead[lead], j)
		}
	}
}

// addDep records that row a depends on row b.
func (l *ledger) addDep(a, b int) {
	if a == b || l.deps[[2]int{a, b}] {
		return
	}
	l.deps[[2]int{a, b}] = true
	l.rows.at(a).degree++
	l.rows.at(b).degree++
	l.dependents[b] = append(l.dependents[b], a)
	l.syncCounters(a)
	l.syncCounters(b)
	l.addEdge(links.DependsOn, a, b)
}

// syncCounters copies row j's counters, status and base confidence into
// its batch rows.
func (l *ledger) syncCounters(j int) {
	r := l.rows.at(j)
	for _, b := range r.beliefList() {
		l.batch.Access[b], l.batch.Positive[b], l.batch.Negative[b] = float32(r.access), float32(r.positive), float32(r.negative)
		l.batch.Degree[b] = float32(r.degree)
		l.batch.Status[b] = r.status
		l.batch.BaseConf[b] = float32(r.c0)
	}
	l.batch.Changed(r.beliefList()...)
}

// day32 is a time in days since the Unix epoch on the batch's clock.
func (l *ledger) day32(d float64) float32 {
	if math.IsInf(d, 0) {
		return float32(d)
	}
	return float32(d - l.epochDays)
}

// appendBelief adds the batch row of row j's next state without one
// (states and beliefs run in step).
func (l *ledger) appendBelief(j int, vec []float32, normalize bool) {
	r := l.rows.at(j)
	st := r.stateList()[len(r.beliefList())]
	b := l.batch
	n := b.Len()
	d := l.opts.Dim
	l.growColumns(1)
	b.Vectors = b.Vectors[:len(b.Vectors)+d]
	switch dst := b.Vectors[n*d : (n+1)*d]; {
	case normalize:
		unitvec.Normalize(vec, dst)
	case unsafe.SliceData(vec) != unsafe.SliceData(dst): // else decodeRows parsed it in place
		copy(dst, vec)
	}
	b.ID = append(b.ID, uint64(j))
	b.Kind = append(b.Kind, r.mem.Kind)
	b.Status = append(b.Status, r.status)
	b.Created = append(b.Created, l.day32(r.created))
	b.ValidFrom = append(b.ValidFrom, l.day32(st.valid.From))
	b.ValidTo = append(b.ValidTo, l.day32(st.valid.To))
	b.RecordedAt = append(b.RecordedAt, l.day32(st.recorded.From))
	b.RetiredAt = append(b.RetiredAt, l.day32(st.recorded.To))
	hl, floor := l.decay(j)
	b.Lambda = append(b.Lambda, float32(temporal.Lambda(hl)))
	b.Floor = append(b.Floor, float32(floor))
	b.Group = append(b.Group, r.kgroup)
	b.BaseConf = append(b.BaseConf, float32(r.c0))
	b.ConfFrom = append(b.ConfFrom, l.day32(r.created))
	b.Access = append(b.Access, float32(r.access))
	b.Positive = append(b.Positive, float32(r.positive))
	b.Negative = append(b.Negative, float32(r.negative))
	b.Degree = append(b.Degree, float32(r.degree))
	r.addBelief(n)
}
