package tidemark

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/tidemark/tidemark/extract"
	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/internal/links"
	"github.com/tidemark/tidemark/temporal"
)

// Split (All-Mem App. B.2.1, "semantic mitosis"; CollectionOptions.Split).
// A memory whose text states several separately keyable facts is one unit
// with at most one key: when one of its facts changes, either the whole
// memory is superseded (and its still-true facts leave current answers)
// or nothing is (and the stale value stays). Split stores such a memory
// as archived evidence and one visible sibling per statement:
//
//   - each sibling's text is an exact substring of the original's
//     (extract.Split; extract.Statements when a later update restates one
//     of them, the split on update below; or a checked planner plan: no
//     paraphrase), with the original's kind, source, profile, windows and
//     counters, its own key (keys at ingest) and its own vector; a
//     sibling that restates a current memory folds into it instead;
//   - a version link sibling → original keeps the evidence reachable (the
//     no-orphan invariant), and sibling links join the set (capped by
//     links.DefaultCapSibling, All-Mem's cap_β);
//   - the original's belief is retired at the split's transaction time
//     (at Put: it was never believed on its own), so a query as of an
//     earlier transaction time still sees it whole;
//   - the split is logged in the record that makes it (a Put, or a
//     consolidation run with the siblings' memories), audited (RuleSplit),
//     and replayed from the log without analysing text again.
//
// Siblings are named "ID#1", "ID#2", … after the original; a memory whose
// sibling names are taken (or too long) stays whole.

// maxSplit bounds the siblings of one split.
const maxSplit = extract.MaxSegments

// Split rules, as Memory.SplitRule and the audit name them.
const (
	splitByRules   = "rules"
	splitByPlanner = "planner"
	splitByUpdate  = "update"
)

// siblingID names the k-th sibling (from 0) of the memory id.
func siblingID(id string, k int) string { return id + "#" + strconv.Itoa(k+1) }

// splittable reports whether m may be split at Put: the collection keys at
// ingest, splits and embeds text; m is keyable, given as text without a
// key or vector.
func (c *Collection) splittable(m *Memory) bool {
	return c.opts.Split == SplitAuto && c.opts.Keys == KeysAuto && c.emb != nil &&
		keyable(m) && m.Subject == "" && m.Vector == nil
}

// siblings makes the sibling memories of m for the segments (their texts
// exact substrings of m.Text), or nil when their names are taken: by an id
// of the ledger (c.mu held shared) or of taken.
func (l *ledger) siblings(m *Memory, segs []extract.Segment, rule string, taken map[string]bool) []Memory {
	if len(segs) < 2 || len(segs) > maxSplit {
		return nil
	}
	out := make([]Memory, len(segs))
	for k, s := range segs {
		id := siblingID(m.ID, k)
		if _, ok := l.rowOf(id); ok || taken[id] || validID(id, "sibling id") != nil {
			return nil
		}
		out[k] = Memory{ID: id, Text: s.Text, Kind: m.Kind, Source: m.Source, Profile: m.Profile,
			ValidFrom: m.ValidFrom, ValidTo: m.ValidTo, RecordedAt: m.RecordedAt, Created: m.Created,
			Access: m.Access, Positive: m.Positive, Negative: m.Negative,
			SplitFrom: m.ID, SplitRule: rule}
	}
	return out
}

// splitBatch splits the batch's memories that state several facts: each
// such memory is followed by its siblings, and names them (SplitInto).
// It returns the batch unchanged when nothing splits.
func (c *Collection) splitBatch(batch []Memory) []Memory {
	if c.opts.Split != SplitAuto || c.opts.Keys != KeysAuto || c.emb == nil {
		return batch
	}
	type split struct {
		at   int
		sibs []Memory
	}
	var splits []split
	taken := make(map[string]bool, len(batch))
	// The siblings must not push the record past its limit: the batch's
	// size counts, and a memory whose siblings do not fit stays whole (the
	// next consolidation runs split it).
	room := c.db.opts.MaxRecordBytes * 3 / 4
	for i := range batch {
		taken[batch[i].ID] = true
		room -= memoryBytes(&batch[i], c.opts.Dim)
	}
	c.mu.RLock()
	for i := range batch {
		m := &batch[i]
		if !c.splittable(m) {
			continue
		}
		if _, ok := c.rowOf(m.ID); ok {
			continue // a retry: the first write decided
		}
		segs := extract.Split(m.Text)
		if segs == nil {
			continue
		}
		if sibs := c.siblings(m, segs, splitByRules, taken); sibs != nil {
			need := 0
			for k := range sibs {
				need += memoryBytes(&sibs[k], c.opts.Dim)
			}
			if need > room {
				continue
			}
			room -= need
			for _, s := range sibs {
				taken[s.ID] = true
			}
			splits = append(splits, split{i, sibs})
		}
	}
	c.mu.RUnlock()
	if len(splits) == 0 {
		return batch
	}
	out := make([]Memory, 0, len(batch)+2*len(splits))
	next := 0
	for _, s := range splits {
		out = append(out, batch[next:s.at+1]...)
		orig := &out[len(out)-1]
		orig.SplitRule = splitByRules
		for _, sib := range s.sibs {
			orig.SplitInto = append(orig.SplitInto, sib.ID)
		}
		out = append(out, s.sibs...)
		next = s.at + 1
	}
	return append(out, batch[next:]...)
}

// memoryBytes estimates what a memory adds to a log record (its vector
// of dim dimensions, once embedded, its text, and the rest).
func memoryBytes(m *Memory, dim int) int { return 4*dim + len(m.Text) + 256 }

// foldSplits folds the results of a batch's siblings into their
// original's (the siblings it was split into, and what they superseded),
// and drops those of the siblings of a stored memory split on update
// (which precede the memory whose update split it).
func foldSplits(ms []Memory, res []PutResult) []PutResult {
	if !slices.ContainsFunc(ms, func(m Memory) bool { return m.SplitFrom != "" }) {
		return res
	}
	out := make([]PutResult, 0, len(res))
	for i := range res {
		if ms[i].SplitFrom == "" {
			out = append(out, res[i])
			continue
		}
		if len(out) > 0 && ms[i].SplitFrom == out[len(out)-1].ID {
			o := &out[len(out)-1]
			o.Superseded = append(o.Superseded, res[i].Superseded...)
		}
	}
	return out
}

// Split on update. A memory the rules kept whole may still state a fact
// on its own: when a new memory restates one of its statements
// (extract.Statements) with one value changed (extract.Compare's Update),
// the update is the evidence. Put then splits the stored memory in the
// same record, its siblings before the update, so that the update
// supersedes the one statement it changes and the others stay current
// (Memory.SplitRule "update").

// splitNeighbors is how many nearest current memories a new memory's
// update may restate a statement of.
const splitNeighbors = 8

// splitOnUpdate finds the stored memories that the batch's memories
// update a statement of, and returns the batch with their siblings,
// embedded, before the memories whose update splits them (c.opts allow
// splitting; vectors already embedded).
func (c *Collection) splitOnUpdate(ctx context.Context, batch []Memory) ([]Memory, error) {
	if c.opts.Split != SplitAuto || c.opts.Keys != KeysAuto || c.emb == nil {
		return batch, nil
	}
	type plan struct {
		before int // the batch index of the update
		sibs   []Memory
	}
	var plans []plan
	taken := map[string]bool{}
	planned := map[int]bool{}
	for i := range batch {
		taken[batch[i].ID] = true
	}
	for i := range batch {
		m := &batch[i]
		if !keyable(m) || m.Subject != "" || m.SplitFrom != "" || len(m.SplitInto) > 0 || len(m.Vector) != c.opts.Dim {
			continue
		}
		lead := leadWords(m.Text)
		if lead == "" {
			continue
		}
		found, err := c.surface.Search(ctx, m.Vector, splitNeighbors, &index.SearchOptions{})
		if err != nil {
			return nil, err
		}
		c.mu.RLock()
		for _, f := range found {
			j := int(f.Key)
			if j >= c.rows.len() || planned[j] || !c.splitCandidate(j) {
				continue
			}
			o := c.rows.at(j)
			segs := extract.Statements(o.mem.Text)
			hit := slices.IndexFunc(segs, func(s extract.Segment) bool {
				return leadWords(s.Text) == lead && extract.Compare(s.Text, m.Text).Verdict == extract.Update
			})
			if hit < 0 {
				continue
			}
			om := c.evidence(j)
			if sibs := c.siblings(&om, segs, splitByUpdate, taken); sibs != nil {
				for _, sb := range sibs {
					taken[sb.ID] = true
				}
				planned[j] = true
				plans = append(plans, plan{i, sibs})
				break
			}
		}
		c.mu.RUnlock()
	}
	if len(plans) == 0 {
		return batch, nil
	}
	var texts []string
	for _, p := range plans {
		for _, sb := range p.sibs {
			texts = append(texts, sb.Text)
		}
	}
	vs, err := c.embedTexts(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([]Memory, 0, len(batch)+len(texts))
	next, v := 0, 0
	for _, p := range plans {
		out = append(out, batch[next:p.before]...)
		for _, sb := range p.sibs {
			sb.Vector, sb.embedded = vs[v], true
			v++
			out = append(out, sb)
		}
		next = p.before
	}
	return append(out, batch[next:]...), nil
}

// putSplitExisting applies the siblings ms of a stored memory split on
// update (all naming it, SplitFrom) at tx (splitStored); the results say
// Unchanged for siblings not stored.
func (l *ledger) putSplitExisting(ms []Memory, tx float64, seq uint64, touched map[int]bool) []PutResult {
	out := make([]PutResult, len(ms))
	for k := range out {
		out[k] = PutResult{ID: ms[k].ID, Outcome: Unchanged}
	}
	if j, ok := l.rowOf(ms[0].SplitFrom); ok && l.rows.at(j).mem.ID == ms[0].SplitFrom {
		l.splitStored(j, ms, out, splitByUpdate, tx, seq, touched)
	}
	return out
}

// splitStored splits stored row j into the siblings sibs at tx, their
// results into out — unless the row is no longer current, was split
// meanwhile, or a sibling's name was taken (or its vector is not of the
// collection's dimension) since the split was planned. It reports whether
// it split. A split on update (Put) and a consolidation's split share it.
func (l *ledger) splitStored(j int, sibs []Memory, out []PutResult, rule string, tx float64, seq uint64, touched map[int]bool) bool {
	r := l.rows.at(j)
	if len(sibs) < 2 || !r.visible || r.superseded || len(r.splitInto) > 0 || len(r.mem.SplitInto) > 0 {
		return false
	}
	for k := range sibs {
		if _, taken := l.rowOf(sibs[k].ID); taken || len(sibs[k].Vector) != l.opts.Dim {
			return false
		}
	}
	rows, ids := l.putSiblings(sibs, out, tx, seq, touched)
	l.splitOff(j, rows, ids, tx, seq, rule, touched)
	return true
}

// evidence is stored row j as the memory its siblings copy (Memory's
// caller fields): with its effective valid-from when it has none of its
// own (so its siblings take its place in their fact chains) and its
// creation time, but no transaction time — the siblings are learnt when
// the split is logged (c.mu held shared).
func (l *ledger) evidence(j int) Memory {
	r := l.rows.at(j)
	m := r.mem.memory()
	if !r.hasFrom {
		m.ValidFrom = fromDays(r.effFrom)
	}
	m.Created, m.RecordedAt = fromDays(r.created), time.Time{}
	return m
}

// putSplit applies a logged memory that names siblings (ms[0], its
// siblings ms[1:]) at transaction time tx: the original is stored as
// archived evidence, each sibling by the write path, then the original is
// split off (splitOff). When a sibling's name is taken by now (a Put that
// raced with this one), or ms does not hold the siblings the original
// names, the original is stored whole and the siblings are dropped;
// when the original is a retry or a duplicate, so are they.
func (l *ledger) putSplit(ms []Memory, tx float64, seq uint64, touched map[int]bool) []PutResult {
	out := make([]PutResult, len(ms))
	orig := &ms[0]
	ok := len(ms) == len(orig.SplitInto)+1
	for k := 1; ok && k < len(ms); k++ {
		_, taken := l.rowOf(ms[k].ID)
		ok = !taken && ms[k].ID == orig.SplitInto[k-1] && ms[k].SplitFrom == orig.ID
	}
	if _, exists := l.rowOf(orig.ID); exists || !ok {
		whole := *orig
		whole.SplitInto, whole.SplitRule = nil, ""
		out[0] = l.putOne(&whole, tx, seq, touched)
		for k := 1; k < len(ms); k++ {
			out[k] = PutResult{ID: ms[k].ID, Outcome: Unchanged, Into: out[0].Into}
		}
		return out
	}
	out[0] = l.putOne(orig, tx, seq, touched)
	j, stored := l.rowOf(orig.ID)
	if out[0].Outcome != Stored || !stored {
		for k := 1; k < len(ms); k++ {
			out[k] = PutResult{ID: ms[k].ID, Outcome: Unchanged, Into: out[0].Into}
		}
		return out
	}
	rows, ids := l.putSiblings(ms[1:], out[1:], tx, seq, touched)
	out[0].Split = ids
	l.splitOff(j, rows, ids, tx, seq, orig.SplitRule, touched)
	return out
}

// putSiblings writes the siblings of a split by the write path (results
// into out) and returns the rows and ids of those stored as memories of
// their own. A sibling that restates a current memory is folded into it
// (Reinforced) like any restatement and is no sibling: that memory is not
// linked to the split, so no memory gains a false version or sibling link.
func (l *ledger) putSiblings(sibs []Memory, out []PutResult, tx float64, seq uint64, touched map[int]bool) (rows []int, ids []string) {
	for k := range sibs {
		out[k] = l.putOne(&sibs[k], tx, seq, touched)
		if out[k].Outcome != Stored {
			continue
		}
		if j, ok := l.rowOf(sibs[k].ID); ok && l.rows.at(j).mem.ID == sibs[k].ID {
			rows, ids = append(rows, j), append(ids, sibs[k].ID)
		}
	}
	return rows, ids
}

// splitOff archives row j as the evidence its siblings (the rows sibs,
// named ids) were split from, at transaction time tx: its belief retired,
// off the surface, out of its fact chain (a later restatement of its text
// must not fold into the evidence), a version link from each sibling and
// sibling links among them; audited in the record seq. The memory records
// its siblings' ids (Memory.SplitInto), from which a snapshot's load
// derives the links. With no sibling of its own (each restated a current
// memory) it is archived all the same, and stays a root of its own.
func (l *ledger) splitOff(j int, sibs []int, ids []string, tx float64, seq uint64, rule string, touched map[int]bool) {
	r := l.rows.at(j)
	if _, ok := touched[j]; !ok {
		touched[j] = r.visible
	}
	rest := r.mem.own()
	rest.SplitInto, rest.SplitRule = slices.Clone(ids), rule
	l.leaveChain(j)
	cur := &r.stateList()[len(r.stateList())-1]
	cur.recorded.To = max(tx, cur.recorded.From)
	l.batch.RetiredAt[r.beliefList()[len(r.beliefList())-1]] = l.day32(cur.recorded.To)
	l.batch.Changed(r.beliefList()[len(r.beliefList())-1])
	if r.visible {
		l.visible--
	}
	r.visible, r.status = false, temporal.Archived
	if len(sibs) > 0 {
		r.superseded, r.supersededBy = true, sibs[0]
		r.lists().splitInto = slices.Clone(sibs)
	}
	l.syncCounters(j)
	l.offSurface(j)
	l.hide(j)
	at := fromDays(tx)
	if len(sibs) == 0 {
		l.audit = append(l.audit, AuditEntry{Seq: seq, Time: at, Rule: RuleSplit, ID: r.mem.ID,
			Reason: "SPLIT_" + ruleReason(rule) + "_RESTATED"})
	}
	for _, s := range sibs {
		sr := l.rows.at(s)
		if !slices.Contains(sr.supersedes, j) {
			sr.lists().supersedes = append(sr.lists().supersedes, j)
		}
		l.addEdge(links.Version, s, j)
		l.audit = append(l.audit, AuditEntry{Seq: seq, Time: at, Rule: RuleSplit, ID: r.mem.ID, Other: sr.mem.ID,
			Reason: "SPLIT_" + ruleReason(rule)})
	}
	for _, a := range sibs {
		for _, b := range sibs {
			if a != b {
				l.addEdge(links.Sibling, a, b)
			}
		}
	}
}

// leaveChain takes row j, which an operator archives, out of its fact
// chain, where it is the current tail (operators archive only current
// memories that are alone in their chain or have no key): a restatement
// of its value then starts the chain again instead of folding into
// archived evidence.
func (l *ledger) leaveChain(j int) {
	r := l.rows.at(j)
	if r.key.IsZero() {
		return
	}
	chain := slices.DeleteFunc(slices.Clone(l.byKey[r.key]), func(x int) bool { return x == j })
	if len(chain) == 0 {
		delete(l.byKey, r.key)
	} else {
		l.byKey[r.key] = chain
	}
}

// ruleReason is the audit reason suffix of a split rule.
func ruleReason(rule string) string {
	switch rule {
	case splitByPlanner:
		return "PLANNER"
	case splitByUpdate:
		return "UPDATE"
	}
	return "RULES"
}

// linkSplits derives each split memory's sibling rows from its SplitInto
// ids (on load: the rows keep the ids, the lists are derived).
func (l *ledger) linkSplits() error {
	for j := range l.rows.len() {
		r := l.rows.at(j)
		if len(r.mem.SplitInto) == 0 {
			continue
		}
		sibs := make([]int, 0, len(r.mem.SplitInto))
		for _, id := range r.mem.SplitInto {
			s, ok := l.rowOf(id)
			if !ok || l.rows.at(s).mem.ID != id {
				return fmt.Errorf("memory %q: sibling %q is missing", r.mem.ID, id)
			}
			sibs = append(sibs, s)
		}
		r.lists().splitInto = sibs
	}
	return nil
}
