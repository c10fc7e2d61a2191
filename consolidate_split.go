package tidemark

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tidemark/tidemark/extract"
	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/internal/planner"
	"github.com/tidemark/tidemark/temporal"
)

// The first stage of a consolidation run (All-Mem §3.3, App. C): Split,
// then the planner's Merge and Update proposals, in All-Mem's operator
// order. Memories written before — by an older build, or at a Put that
// could not split them — are examined a bounded number per run
// (splitScan), oldest first; each is split by extract.Split, or, when the
// collection has a planner, by the planner's checked plan (and by the
// rules when the planner's endpoint fails). The siblings are embedded
// here, keyed like a Put's memories, and logged with the run's edits, so
// recovery replays the split without an embedder or a model.

// splitStage is what the first stage decided.
type splitStage struct {
	edits []edit   // RuleSplit, then RuleMerge and RuleUpdate from the planner
	mems  []Memory // the siblings, each run of them after its original's edit
	// used marks the rows these edits change: the rules' edits of the
	// same run leave them alone (All-Mem's applicability, App. C.2).
	used map[int]bool
	// next is where the scan resumes once the run is logged.
	next int
	// Asked counts the memories the planner was asked about; Rejected its
	// proposals refused (below θ, or failing a check); Failed its
	// requests that failed (the rules decided instead).
	asked, rejected, failed int
}

// splitTarget is a memory the stage examines, copied under the lock (as
// its siblings would copy it: ledger.evidence).
type splitTarget struct {
	row int
	mem Memory
	vec []float32
	t   time.Time // its transaction time, for the planner
}

// maxSplitScan bounds the memories one run examines for a split, and
// maxSplitsPerRun the splits it makes (the siblings' vectors travel in the
// run's one log record, which must also stay under half of
// Options.MaxRecordBytes).
const (
	maxSplitScan    = 50000
	maxSplitsPerRun = 1024
)

// plannerEditable reports whether the planner may merge or update row j:
// current, not a document chunk or an event (which chains and windows
// govern), and without a caller's key (an extracted one only when it is
// alone in its chain). c.mu held.
func (c *Collection) plannerEditable(j int) bool {
	r := c.rows.at(j)
	m := &r.mem
	if !r.visible || r.superseded || m.DocID != "" || m.Kind == temporal.Event {
		return false
	}
	return m.Subject == "" || m.KeyRule != "" && len(c.byKey[r.key]) == 1
}

// splitCandidate reports whether row j may be split by consolidation: on
// the surface and current, keyable text embedded by the collection, not a
// sibling or a split original, and without a caller's key (an extracted
// key only when the memory is alone in its chain). c.mu held.
func (c *Collection) splitCandidate(j int) bool {
	r := c.rows.at(j)
	m := &r.mem
	if !r.visible || r.superseded || !m.embedded || m.Text == "" || m.DocID != "" || m.Kind == temporal.Event ||
		m.SplitFrom != "" || len(m.SplitInto) > 0 {
		return false
	}
	if m.Subject != "" && (m.KeyRule == "" || len(c.byKey[r.key]) != 1) {
		return false
	}
	return true
}

// planSplits runs the first stage: it examines up to maxSplitScan memories
// from the scan cursor (c.consMu held).
func (c *Collection) planSplits(ctx context.Context, o *ConsolidateOptions, deadline time.Time) (splitStage, error) {
	st := splitStage{used: map[int]bool{}, next: c.splitScan}
	if c.opts.Split != SplitAuto || c.opts.Keys != KeysAuto || c.emb == nil {
		return st, nil
	}
	var targets []splitTarget
	c.mu.RLock()
	n := c.rows.len()
	end := min(n, c.splitScan+maxSplitScan)
	for j := c.splitScan; j < end; j++ {
		if !c.splitCandidate(j) {
			continue
		}
		targets = append(targets, splitTarget{row: j, mem: c.evidence(j), vec: c.unitVector(j), t: fromDays(c.rows.at(j).rec)})
	}
	c.mu.RUnlock()
	st.next = end

	used := st.used // rows an earlier edit of this run changes
	taken := map[string]bool{}
	room := c.db.opts.MaxRecordBytes / 2
	type split struct {
		t    splitTarget
		segs []extract.Segment
		rule string
	}
	var splits []split
	var merges, updates []edit
	asked := 0
	for _, t := range targets {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if len(splits) == maxSplitsPerRun || room <= 0 || len(st.edits) >= o.MaxEdits/2 {
			st.next = t.row // the rest wait for the next run
			break
		}
		if used[t.row] {
			continue
		}
		segs, rule := []extract.Segment(nil), ""
		if c.planner != nil && asked < c.opts.Planner.MaxTargets && time.Now().Before(deadline) {
			asked++
			st.asked++
			ps, ms, us, err := c.askPlanner(ctx, t, used, &st)
			switch {
			case err != nil && ctx.Err() != nil:
				return st, err
			case err != nil:
				st.failed++
				segs, rule = extract.Split(t.mem.Text), splitByRules // the endpoint failed: the rules decide
			default:
				if ps != nil {
					segs, rule = ps, splitByPlanner
				}
				merges, updates = append(merges, ms...), append(updates, us...)
			}
		} else {
			segs, rule = extract.Split(t.mem.Text), splitByRules
		}
		if segs == nil || used[t.row] {
			continue
		}
		splits = append(splits, split{t, segs, rule})
		used[t.row] = true
		for _, sg := range segs {
			room -= memoryBytes(&Memory{Text: sg.Text}, c.opts.Dim)
		}
	}
	if len(splits) == 0 && len(merges) == 0 && len(updates) == 0 {
		return st, nil
	}
	// The siblings, named and made under the lock (their names must be
	// free), embedded after it in one call.
	var texts []string
	c.mu.RLock()
	for _, s := range splits {
		sibs := c.siblings(&s.t.mem, s.segs, s.rule, taken)
		if sibs == nil {
			continue
		}
		for _, sib := range sibs {
			taken[sib.ID] = true
			texts = append(texts, sib.Text)
		}
		st.edits = append(st.edits, edit{rule: RuleSplit, row: s.t.row, other: s.t.row, value: float64(len(sibs))})
		st.mems = append(st.mems, sibs...)
	}
	c.mu.RUnlock()
	if len(texts) > 0 {
		vs, err := c.embedTexts(ctx, texts)
		if err != nil {
			return st, fmt.Errorf("embedding the siblings of a split: %w", err)
		}
		for i := range st.mems {
			st.mems[i].Vector, st.mems[i].embedded = vs[i], true
		}
	}
	st.edits = append(append(st.edits, merges...), updates...)
	return st, nil
}

// askPlanner asks the planner about target t and returns what passed the
// executor's gates and checks: the segments of a split of t (nil for
// none), merge and update edits. Rows it proposes to change are marked in
// used. An error means the endpoint failed.
func (c *Collection) askPlanner(ctx context.Context, t splitTarget, used map[int]bool, st *splitStage) (segs []extract.Segment, merges, updates []edit, err error) {
	theta := c.opts.Planner.Threshold
	ctxNodes, err := c.plannerContext(ctx, t)
	if err != nil {
		return nil, nil, nil, err
	}
	target := planner.Node{ID: t.mem.ID, Text: t.mem.Text, Time: t.t}
	d, err := c.planner.Diagnose(ctx, target, ctxNodes)
	if err != nil {
		return nil, nil, nil, err
	}
	// current resolves an id the planner named to a row that is current
	// and untouched in this run (hallucinated and stale ids fail).
	current := func(id string) (int, bool) {
		c.mu.RLock()
		defer c.mu.RUnlock()
		j, ok := c.rowOf(id)
		if !ok || c.rows.at(j).mem.ID != id || used[j] {
			return 0, false
		}
		return j, c.plannerEditable(j)
	}
	for _, task := range d.Split {
		if task.NodeID != t.mem.ID || !(task.Confidence >= theta) || segs != nil {
			st.rejected++
			continue
		}
		plan, err := c.planner.PlanSplit(ctx, target, task.Reason)
		if err != nil {
			return nil, nil, nil, err
		}
		if !plan.DoSplit {
			continue
		}
		texts := make([]string, len(plan.Segments))
		for i, s := range plan.Segments {
			texts[i] = s.Text
		}
		checked, err := extract.CheckSegments(t.mem.Text, texts)
		if err != nil {
			st.rejected++
			continue
		}
		segs = checked
	}
	for _, task := range d.Merge {
		ids := slices.Compact(slices.Sorted(slices.Values(task.NodeIDs)))
		if !(task.Confidence >= theta) || len(ids) < 2 || len(ids) > 4 {
			st.rejected++
			continue
		}
		var rows []int
		for _, id := range ids {
			if j, ok := current(id); ok && (j != t.row || segs == nil) {
				rows = append(rows, j)
			}
		}
		if len(rows) != len(ids) {
			st.rejected++
			continue
		}
		// The oldest memory survives (the existing merge rule's
		// direction); the others fold into it.
		c.mu.RLock()
		slices.SortFunc(rows, func(a, b int) int {
			return cmp.Or(cmp.Compare(c.rows.at(a).created, c.rows.at(b).created), cmp.Compare(a, b))
		})
		c.mu.RUnlock()
		for _, j := range rows[1:] {
			merges = append(merges, edit{rule: RuleMerge, row: j, other: rows[0], value: 1})
		}
		for _, j := range rows {
			used[j] = true
		}
	}
	for _, task := range d.Update {
		oldRow, ok1 := current(task.OldNodeID)
		newRow, ok2 := current(task.NewNodeID)
		if !(task.Confidence >= theta) || !ok1 || !ok2 || oldRow == newRow || (segs != nil && (oldRow == t.row || newRow == t.row)) {
			st.rejected++
			continue
		}
		c.mu.RLock()
		newer := temporal.Newer(c.rows.at(newRow).assertion(newRow), c.rows.at(oldRow).assertion(oldRow))
		c.mu.RUnlock()
		if !newer {
			st.rejected++ // an update must be newer than what it supersedes
			continue
		}
		updates = append(updates, edit{rule: RuleUpdate, row: oldRow, other: newRow, value: 1})
		used[oldRow], used[newRow] = true, true
	}
	return segs, merges, updates, nil
}

// plannerNeighbors is how many current neighbours the planner sees with a
// target (All-Mem's anchor neighbourhood).
const plannerNeighbors = 5

// plannerContext returns the target's nearest current memories.
func (c *Collection) plannerContext(ctx context.Context, t splitTarget) ([]planner.Node, error) {
	found, err := c.surface.Search(ctx, t.vec, plannerNeighbors+1, &index.SearchOptions{})
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []planner.Node
	for _, f := range found {
		j := int(f.Key)
		if j == t.row || j >= c.rows.len() {
			continue
		}
		r := c.rows.at(j)
		out = append(out, planner.Node{ID: r.mem.ID, Text: r.mem.Text, Time: fromDays(r.rec)})
	}
	return out, nil
}

// applySplitEdit applies a logged RuleSplit edit: row e.row is split into
// the siblings of mems that name it (SplitFrom), stored by the write path
// at tx (splitStored), when there are as many as the edit says. It
// reports whether it applied.
func (l *ledger) applySplitEdit(e edit, mems []Memory, tx float64, seq uint64, touched map[int]bool) bool {
	id := l.rows.at(e.row).mem.ID
	var sibs []Memory
	for i := range mems {
		if mems[i].SplitFrom == id {
			sibs = append(sibs, mems[i])
		}
	}
	if len(sibs) != int(e.value) || len(sibs) < 2 {
		return false
	}
	return l.splitStored(e.row, sibs, make([]PutResult, len(sibs)), sibs[0].SplitRule, tx, seq, touched)
}
