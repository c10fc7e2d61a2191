package tidemark

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tidemark/tidemark/internal/links"
	"github.com/tidemark/tidemark/temporal"
)

// Consolidation (SmartVector §6, All-Mem §3.3): a run reads the ledger,
// decides a list of edits, logs them as one record and applies them like a
// Put, so that recovery replays exactly the same edits and every edit is
// an audit entry. Nothing is deleted: memories leave the visible surface
// for the archive index, confidences are penalised, links are added.

// Rule names the consolidation rule behind an edit.
type Rule uint8

const (
	// RuleLifecycle: a status change from the live confidence
	// (temporal.NextStatus: active ↔ dormant at the dormant threshold,
	// unconsolidated → active).
	RuleLifecycle Rule = iota
	// RuleExpired: a memory whose valid window ended leaves the surface.
	RuleExpired
	// RuleSameKey: two versions of one fact key with different objects are
	// flagged as contradicting each other (the newer one superseded the
	// older when it was written).
	RuleSameKey
	// RuleRipple: a memory depending (directly or at the second hop) on a
	// superseded memory loses γ/(d+1) of its base confidence and is
	// flagged for review (SmartVector §6.3).
	RuleRipple
	// RuleMerge: a near-exact duplicate of an older current memory is
	// folded into it (All-Mem's coherence pre-check): it leaves the
	// surface, its belief is retired, a version link survivor → it keeps it
	// reachable, and its counters go to the survivor.
	RuleMerge
	// (A planner's Merge of 2 to 4 memories is RuleMerge too, reason
	// MERGED_PLANNER: each folds into the oldest.)
	//
	// RuleLineage: a chunk of a document depends on the document's first
	// chunk (SmartVector §6.2, structural depends_on).
	RuleLineage
	// RuleSimilar: a new memory depends on an older current one it is
	// very similar to (SmartVector §6.2, semantic depends_on).
	RuleSimilar
	// RuleTopicConflict: two memories about one topic (similar
	// embeddings) whose texts are one statement with one span changed
	// after the verb (extract.Compare: an update the write path did not
	// apply, or a conflict — a plain object or a negation changed) are
	// flagged as contradicting each other; the majority of recency,
	// authority and feedback ratio names the one to prefer (SmartVector
	// §6.1), and the other is penalised (RuleContradicted).
	RuleTopicConflict
	// RuleContradicted: the side of a topic conflict that lost the vote
	// loses ConsolidateOptions.ConflictPenalty of its base confidence, so
	// the contradiction counts in ranking (Memory.Penalty,
	// Memory.ContradictedBy).
	RuleContradicted
	// RuleSplit: a memory that states several separately keyable facts
	// was split into siblings, one per statement (All-Mem's Split, App.
	// B.2.1; CollectionOptions.Split): one entry per sibling, ID the
	// original and Other the sibling, reason SPLIT_RULES (extract.Split)
	// or SPLIT_PLANNER (a checked plan of CollectionOptions.Planner).
	// Splits made at Put are audited under the Put's record.
	RuleSplit
	// RuleUpdate: a planner's Update (All-Mem App. B.2.3), accepted at
	// confidence ≥ θ: the newer memory Other supersedes the older ID, as a
	// fact key's successor would (reason UPDATED_PLANNER).
	RuleUpdate
	// RuleRetract: the memory was retracted (Collection.Retract): no
	// longer believed from the entry's time on; By names who retracted it
	// (reason RETRACTED).
	RuleRetract
	// RulePurge: the memory's content was erased (RetractOptions.Purge);
	// the entry keeps only its id, the time and who asked (reason PURGED).
	RulePurge
	numRules
)

var ruleNames = [...]string{"lifecycle", "expired", "same_key", "ripple", "merge", "lineage", "similar", "topic_conflict", "contradicted", "split", "update", "retract", "purge"}

func (r Rule) String() string {
	if r < numRules {
		return ruleNames[r]
	}
	return fmt.Sprintf("Rule(%d)", r)
}

// MarshalText implements encoding.TextMarshaler.
func (r Rule) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// edit is one consolidation change; Value is the new status (lifecycle)
// or the penalty (ripple); Other the memory it relates to.
type edit struct {
	rule       Rule
	row, other int
	value      float64
}

// AuditEntry is one consolidation edit as the audit log keeps it.
type AuditEntry struct {
	// Seq is the log record of the run; Time its transaction time.
	Seq  uint64
	Time time.Time
	Rule Rule
	// ID is the memory changed; Other the memory that caused it (the
	// changed dependency of a ripple, the other side of a contradiction).
	ID, Other string
	// From and To are the statuses of a lifecycle change; Penalty the
	// base-confidence penalty of a ripple; Depth its hop.
	From, To temporal.Status
	Penalty  float64
	// Reason is a machine-readable reason code; Prefer names the memory a
	// topic conflict's majority vote prefers.
	Reason string
	Prefer string `json:",omitempty"`
	// By names who retracted or purged the memory (RetractOptions.By).
	By string `json:",omitempty"`
}

// ConsolidationReport says what one run did.
type ConsolidationReport struct {
	Collection string
	// Seq is the log record holding the run's edits (0 when there were
	// none and nothing was logged).
	Seq uint64
	// Promoted, Dormant and Reactivated count lifecycle changes; Expired
	// the memories moved off the surface; Contradictions the pairs
	// flagged (same key and topic); Ripples the memories penalised;
	// Merged the near-duplicates folded; Dependencies the depends_on edges
	// added (lineage and similarity).
	Promoted, Dormant, Reactivated, Expired, Contradictions, Ripples int
	Merged, Dependencies                                             int
	// Contradicted counts the memories penalised for losing a topic
	// conflict's vote.
	Contradicted int
	// Split counts the memories split into siblings (RuleSplit);
	// Updated the planner's updates applied (RuleUpdate).
	Split, Updated int
	// PlannerAsked counts the memories the planner was asked about,
	// PlannerRejected its proposals refused (confidence below θ, or a
	// failed check), PlannerFailed its failed requests (the rules decided
	// instead).
	PlannerAsked, PlannerRejected, PlannerFailed int
	// Orphans lists superseded memories that no current memory reaches
	// through version links (All-Mem's no-orphan invariant); empty unless
	// something is broken.
	Orphans []string
	// Truncated is true when the run stopped at MaxEdits; the next run
	// continues.
	Truncated bool
	Duration  time.Duration
}

// Defaults of ConsolidateOptions.
const (
	DefaultMaxEdits    = 100000
	DefaultNeighbors   = 8
	DefaultMergeSim    = 0.97
	DefaultMergeWords  = 0.9
	DefaultDependSim   = 0.85
	DefaultConflictSim = 0.8
	// DefaultConflictPenalty is the base confidence the loser of a topic
	// conflict loses: half of it, so that with equal evidence the memory
	// the vote prefers outranks it.
	DefaultConflictPenalty = 0.5
	DefaultMaxNew          = 50000
	DefaultBudget          = 30 * time.Second
)

// MaxNeighbors is the largest ConsolidateOptions.Neighbors.
const MaxNeighbors = 1024

// ConsolidateOptions bound one run. A nil pointer means the defaults.
type ConsolidateOptions struct {
	// Now is the time the run judges confidence and expiry at (default the
	// DB's clock, which Consolidate reads).
	Now time.Time
	// MaxEdits bounds the edits of one run (default DefaultMaxEdits,
	// 100000); the rest waits for the next run.
	MaxEdits int
	// Ripple bounds ripple propagation (default temporal.DefaultRipple():
	// γ = 0.15, D_max = 2, fan-out 32; a given FanOut of 0 is replaced by
	// that default).
	Ripple *temporal.RippleParams
	// Relationship building looks at the Neighbors most similar current
	// memories of each memory promoted in the run (default 8, at most
	// MaxNeighbors), found in batches (Exact says how): a
	// cosine of at least MergeSim with at least MergeWords of the words
	// shared (Jaccard) is a near-exact duplicate (defaults 0.97, 0.9); at
	// least DependSim a semantic dependency (default 0.85); at least
	// ConflictSim with texts that extract.Compare finds to be one
	// statement with one span changed a topic conflict (default 0.8),
	// whose loser loses ConflictPenalty of its base confidence (default
	// DefaultConflictPenalty; negative: none; above 1: all). The
	// thresholds are in (0, 1]; each default is the Default… constant of
	// the field's name.
	Neighbors              int
	MergeSim, MergeWords   float64
	DependSim, ConflictSim float64
	ConflictPenalty        float64
	// MaxNew bounds how many new memories one run promotes and relates
	// (default DefaultMaxNew, 50000); the rest wait for the next run.
	MaxNew int
	// Budget bounds the time a run spends relating new memories (default
	// DefaultBudget, 30 s): when it is spent, the memories related so far
	// are promoted and the rest wait for the next run (the report says
	// Truncated). The planner (CollectionOptions.Planner) is asked about
	// no more memories once the run's budget is spent; a request already
	// made can overrun it by its timeout and retries.
	Budget time.Duration
	// Exact finds the neighbours by a scan of the whole column store (the
	// fused stage's ScoreMany), the reference. By default a collection
	// with more current memories than CollectionOptions.ExactThreshold
	// finds them through its surface index instead (approximate: the
	// tests hold its edits to the exact pass's), and a smaller one scans.
	Exact bool
}

// Validate reports the first invalid field, by name, in an error wrapping
// ErrInvalid; a nil o is valid. It does not change o.
func (o *ConsolidateOptions) Validate() error {
	if o == nil {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: ConsolidateOptions."+format, append([]any{ErrInvalid}, args...)...)
	}
	if err := validTime(o.Now, "ConsolidateOptions.Now"); err != nil {
		return err
	}
	switch {
	case o.MaxEdits < 0:
		return bad("MaxEdits = %d, want ≥ 0", o.MaxEdits)
	case o.MaxNew < 0:
		return bad("MaxNew = %d, want ≥ 0", o.MaxNew)
	case o.Budget < 0:
		return bad("Budget = %v, want ≥ 0", o.Budget)
	case o.Neighbors < 0 || o.Neighbors > MaxNeighbors:
		return bad("Neighbors = %d, want 0 (the default) … %d", o.Neighbors, MaxNeighbors)
	case math.IsNaN(o.ConflictPenalty):
		return bad("ConflictPenalty is NaN")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"MergeSim", o.MergeSim}, {"MergeWords", o.MergeWords}, {"DependSim", o.DependSim}, {"ConflictSim", o.ConflictSim}} {
		if f.v != 0 && !(f.v > 0 && f.v <= 1) {
			return bad("%s = %v, want a threshold in (0, 1] (or 0 for the default)", f.name, f.v)
		}
	}
	if rp := o.Ripple; rp != nil && (!(rp.Gamma >= 0 && rp.Gamma <= 1) || rp.MaxDepth < 0 || rp.MaxDepth > 16 || rp.FanOut < 0) {
		return bad("Ripple = %+v, want Gamma in [0, 1], MaxDepth 0…16, FanOut ≥ 0", *rp)
	}
	return nil
}

// WithDefaults returns a copy of o with every zero field set to its
// default (Ripple a fresh copy) and ConflictPenalty clamped to [0, 1]; a
// nil o gives every default. Now stays zero: its default is the DB's
// clock, which Consolidate reads. It does not validate.
func (o *ConsolidateOptions) WithDefaults() ConsolidateOptions {
	var r ConsolidateOptions
	if o != nil {
		r = *o
	}
	if r.MaxEdits == 0 {
		r.MaxEdits = DefaultMaxEdits
	}
	rp := temporal.DefaultRipple()
	if r.Ripple != nil {
		rp = *r.Ripple
	}
	if rp.FanOut == 0 {
		rp.FanOut = temporal.DefaultRipple().FanOut
	}
	r.Ripple = &rp
	if r.Neighbors == 0 {
		r.Neighbors = DefaultNeighbors
	}
	if r.MergeSim == 0 {
		r.MergeSim = DefaultMergeSim
	}
	if r.MergeWords == 0 {
		r.MergeWords = DefaultMergeWords
	}
	if r.DependSim == 0 {
		r.DependSim = DefaultDependSim
	}
	if r.ConflictSim == 0 {
		r.ConflictSim = DefaultConflictSim
	}
	if r.ConflictPenalty == 0 {
		r.ConflictPenalty = DefaultConflictPenalty
	}
	r.ConflictPenalty = min(max(r.ConflictPenalty, 0), 1)
	if r.MaxNew == 0 {
		r.MaxNew = DefaultMaxNew
	}
	if r.Budget == 0 {
		r.Budget = DefaultBudget
	}
	return r
}

// Consolidate runs one consolidation cycle over every collection.
func (db *DB) Consolidate(ctx context.Context, opts *ConsolidateOptions) ([]ConsolidationReport, error) {
	var out []ConsolidationReport
	for _, c := range db.snapshotColls() {
		r, err := c.Consolidate(ctx, opts)
		if err != nil {
			return out, fmt.Errorf("collection %q: %w", c.name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Consolidate runs one consolidation cycle (SmartVector §6.4): live
// confidence recomputed and the lifecycle stepped (active ↔ dormant at the
// dormant threshold, unconsolidated → active; the confidence is the one a
// search shows, Hit.Confidence, so a static memory goes dormant through
// negative evidence, never through age), memories whose valid
// window has ended moved off the surface, versions of a fact key with
// different objects flagged as contradicting, ripples from the memories
// superseded since the last run propagated along depended_by (penalty
// γ/(d+1), d < D_max, a fan-out cap), then the no-orphan invariant
// checked. The plan is made under a read lock (searches go on), logged as
// one record, and applied in log order like a write.
func (c *Collection) Consolidate(ctx context.Context, opts *ConsolidateOptions) (ConsolidationReport, error) {
	start := time.Now()
	rep := ConsolidationReport{Collection: c.name}
	if err := c.db.enter(); err != nil {
		return rep, err
	}
	defer c.db.calls.Done()
	if err := c.db.usable(); err != nil {
		return rep, err
	}
	// One run at a time per collection: a second plan made before the
	// first is applied would repeat its edits. On a PostgreSQL store the
	// run also holds the database's lock for the collection, so that the
	// nodes take turns too, each planning on the state the last run left
	// (catchUp).
	c.consMu.Lock()
	defer c.consMu.Unlock()
	if c.db.pg != nil {
		unlock, err := c.db.pg.Lock(ctx, "tidemark_consolidate/"+c.name)
		if err != nil {
			return rep, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		defer unlock()
	}
	if err := c.db.catchUp(ctx); err != nil {
		return rep, err
	}
	if err := opts.Validate(); err != nil {
		return rep, err
	}
	o := opts.WithDefaults()
	if o.Now.IsZero() {
		o.Now = c.db.opts.Clock()
		if err := validTime(o.Now, "the clock's now"); err != nil {
			return rep, err
		}
	}
	rp := *o.Ripple
	// Retrievals counted since the last run enter the confidence first.
	if err := c.FlushAccess(ctx); err != nil {
		return rep, err
	}
	// Split, and the planner's proposals, first (All-Mem's operator
	// order: Split → Merge → Update, then the rules below).
	sp, err := c.planSplits(ctx, &o, start.Add(o.Budget))
	rep.PlannerAsked, rep.PlannerRejected, rep.PlannerFailed = sp.asked, sp.rejected, sp.failed
	if err != nil {
		return rep, err
	}
	edits, seeds, truncated, err := c.plan(ctx, days(o.Now, 0), rp, &o)
	if err != nil {
		return rep, err
	}
	// The rules leave alone what the first stage changes (a row the
	// planner merged away gets no dependency; a row being split no
	// lifecycle step): the next run judges them afresh.
	edits = slices.DeleteFunc(edits, func(e edit) bool { return sp.used[e.row] || e.linksRows() && sp.used[e.other] })
	edits = append(sp.edits, edits...)
	rep.Truncated = truncated
	var done []edit
	if len(edits) > 0 || len(seeds) > 0 {
		rec := &record{typ: recConsolidate, coll: c.name, inc: c.incarnation, edits: edits, seeds: seeds, mems: sp.mems}
		var res applied
		if len(rec.mems) > 0 {
			res, err = c.commitDerived(ctx, rec) // the siblings are keyed like a Put's memories
		} else {
			res, err = c.db.commit(ctx, rec)
		}
		if err != nil {
			return rep, err
		}
		rep.Seq, done = res.cons.seq, res.cons.applied
	}
	c.splitScan = sp.next // only once the run is logged
	// The counts are of the edits applied (an edit a concurrent write made
	// moot is skipped).
	for _, e := range done {
		switch e.rule {
		case RuleLifecycle:
			switch temporal.Status(e.value) {
			case temporal.Dormant:
				rep.Dormant++
			case temporal.Active:
				if e.other == int(temporal.Unconsolidated) {
					rep.Promoted++
				} else {
					rep.Reactivated++
				}
			}
		case RuleExpired:
			rep.Expired++
		case RuleSameKey, RuleTopicConflict:
			rep.Contradictions++
		case RuleContradicted:
			rep.Contradicted++
		case RuleRipple:
			rep.Ripples++
		case RuleMerge:
			rep.Merged++
		case RuleLineage, RuleSimilar:
			rep.Dependencies++
		case RuleSplit:
			rep.Split++
		case RuleUpdate:
			rep.Updated++
		}
	}
	rep.Orphans = c.Orphans()
	rep.Duration = time.Since(start)
	return rep, nil
}

// plan decides a run's edits at time now (days) and how many ripple
// seeds it consumes.
func (c *Collection) plan(ctx context.Context, now float64, rp temporal.RippleParams, o *ConsolidateOptions) (edits []edit, seeds []int, truncated bool, err error) {
	maxEdits := o.MaxEdits
	// 3. (first, with its own short read locks) Relationships of the new
	// memories this run promotes.
	fresh, rel, more, err := c.relationships(ctx, o)
	if err != nil {
		return nil, nil, false, err
	}
	defer func() { truncated = truncated || more }()
	isNew := make(map[int]bool, len(fresh))
	for _, j := range fresh {
		isNew[j] = true
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.dropped {
		return nil, nil, false, fmt.Errorf("%w: collection %q", ErrNotFound, c.name)
	}
	// The lifecycle judges the confidence the engine shows (Hit.Confidence):
	// a static memory is not made dormant by age, only by evidence.
	cp := temporal.Preset(c.opts.Method).Confidence.Reported()
	full := func() bool {
		if len(edits) >= maxEdits {
			truncated = true
		}
		return truncated
	}
	// 1. Live confidence and the lifecycle; 5. promotion (NextStatus does
	// both, a promoted memory being judged for dormancy on the next run).
	for j := range c.rows.len() {
		if j%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, false, err
			}
		}
		r := c.rows.at(j)
		if !r.visible || full() {
			continue
		}
		if r.status == temporal.Unconsolidated && !isNew[j] {
			continue // written after this run began, or past MaxNew: the next run
		}
		conf := temporal.Confidence(cp, r.c0, cp.Age(r.mem.Kind, now, r.created), r.positive, r.negative, r.access)
		if next := temporal.NextStatus(r.status, conf, cp); next != r.status {
			edits = append(edits, edit{rule: RuleLifecycle, row: j, other: int(r.status), value: float64(next)})
		}
		// Expired: the current belief's window has ended.
		if st := r.stateList()[len(r.stateList())-1]; st.valid.To <= now && !full() {
			edits = append(edits, edit{rule: RuleExpired, row: j})
		}
	}
	// 2. Contradictions of one fact key: neighbours in the chain with
	// different objects, flagged once (sorted: map order must not reach
	// the log).
	var sk []edit
	for _, chain := range c.byKey {
		for i := 1; i < len(chain); i++ {
			a, b := chain[i], chain[i-1]
			if !slices.Contains(c.rows.at(a).contradicts, b) &&
				temporal.NormalizeObject(c.rows.at(a).mem.Object) != temporal.NormalizeObject(c.rows.at(b).mem.Object) {
				sk = append(sk, edit{rule: RuleSameKey, row: a, other: b})
			}
		}
	}
	slices.SortFunc(sk, func(x, y edit) int { return cmp.Or(cmp.Compare(x.row, y.row), cmp.Compare(x.other, y.other)) })
	for _, e := range sk {
		if full() {
			break
		}
		edits = append(edits, e)
	}
	// 3. The relationships found above. A row whose relationship edits do
	// not all fit is not promoted either: it stays new, and the next run
	// relates it again.
	cut := map[int]bool{}
	for _, e := range rel {
		if !c.rows.at(e.row).visible || (e.rule == RuleMerge && !c.rows.at(e.other).visible) {
			continue
		}
		if cut[e.row] || full() {
			cut[e.row] = true
			continue
		}
		edits = append(edits, e)
	}
	if len(cut) > 0 {
		edits = slices.DeleteFunc(edits, func(e edit) bool {
			return cut[e.row] && (e.rule != RuleLifecycle || e.other == int(temporal.Unconsolidated))
		})
	}
	// 4. Ripples from the memories superseded since the last run.
	dependedBy := func(k uint64) []uint64 { return c.links.Neighbors(k, links.DependedBy) }
	for _, seed := range c.rippleSeeds {
		if full() {
			break
		}
		for _, h := range temporal.Ripple(rp, uint64(seed), dependedBy) {
			edits = append(edits, edit{rule: RuleRipple, row: int(h.ID), other: seed, value: h.Penalty})
		}
		seeds = append(seeds, seed)
	}
	return edits, seeds, truncated, nil
}

// consolidated is what applying a run's record returns.
type consolidated struct {
	seq     uint64
	applied []edit
}

// applyConsolidate applies a run's edits (in log order), skipping those a
// write since the plan made moot, and returns the ones applied.
func (c *Collection) applyConsolidate(edits []edit, seeds []int, mems []Memory, seq uint64, tx float64) (consolidated, error) {
	c.mu.Lock()
	if c.dropped {
		c.mu.Unlock()
		return consolidated{}, fmt.Errorf("%w: collection %q", ErrNotFound, c.name)
	}
	newRows := c.rows.len()
	touched := map[int]bool{}
	res := c.consolidate(edits, seeds, mems, seq, tx, touched)
	c.syncLinks()
	leave, toSurface, toArchive, vecs := c.surfaceMoves(touched, newRows)
	c.mu.Unlock()
	c.moveIndexed(leave, toSurface, toArchive, vecs)
	return res, nil
}

// consolidate is the ledger's apply of a logged consolidation run: its
// edits in order, skipping those a write since the plan made moot; mems
// are the siblings its splits create. It returns the edits applied;
// touched maps each earlier row it moved to whether it was on the surface
// before (surfaceMoves).
func (l *ledger) consolidate(edits []edit, seeds []int, mems []Memory, seq uint64, tx float64, touched map[int]bool) (res consolidated) {
	res.seq = seq
	at := fromDays(tx)
	linked := map[[2]int]bool{} // pairs this record's topic conflicts linked
	leave := func(j int) {
		if _, ok := touched[j]; !ok {
			touched[j] = true
		}
	}
	if len(mems) > 0 {
		l.growColumns(len(mems))
	}
	for _, e := range edits {
		if !e.valid(l.rows.len()) {
			continue // cannot happen for a record this build wrote
		}
		r := l.rows.at(e.row)
		a := AuditEntry{Seq: seq, Time: at, Rule: e.rule, ID: r.mem.ID}
		switch e.rule {
		case RuleSplit:
			// Audited by splitOff, one entry per sibling.
			if l.applySplitEdit(e, mems, tx, seq, touched) {
				res.applied = append(res.applied, e)
			}
			continue
		case RuleUpdate:
			nw := l.rows.at(e.other)
			a.Other, a.Reason = nw.mem.ID, "UPDATED_PLANNER"
			if !r.visible || r.superseded || !nw.visible || nw.superseded {
				continue
			}
			l.supersede(e.row, e.other, touched)
			l.leaveChain(e.row)
		case RuleLifecycle:
			if !r.visible || r.superseded || r.status != temporal.Status(e.other) {
				continue // superseded, expired or moved since the plan
			}
			a.From, a.To = r.status, temporal.Status(e.value)
			a.Reason = "CONFIDENCE_" + a.To.String()
			r.status = a.To
		case RuleExpired:
			a.Reason = "EXPIRED"
			if !r.visible {
				continue
			}
			leave(e.row)
			r.visible = false
			l.visible--
			r.status = temporal.Archived
			l.offSurface(e.row)
			l.hide(e.row)
		case RuleSameKey:
			a.Other, a.Reason = l.rows.at(e.other).mem.ID, "CONTRADICTS_SAME_KEY"
			if slices.Contains(r.contradicts, e.other) {
				continue
			}
			r.lists().contradicts = append(r.lists().contradicts, e.other)
			l.rows.at(e.other).lists().contradicts = append(l.rows.at(e.other).lists().contradicts, e.row)
			l.addEdge(links.Contradicts, e.row, e.other)
		case RuleRipple:
			a.Other, a.Penalty, a.Reason = l.rows.at(e.other).mem.ID, e.value, "DEPENDENCY_CHANGED"
			r.penalty += e.value
			r.c0 = max(0, r.mem.Source.Authority()-r.penalty)
			if !slices.Contains(r.review, e.other) {
				r.lists().review = append(r.lists().review, e.other)
			}
		case RuleMerge:
			a.Other, a.Reason = l.rows.at(e.other).mem.ID, "MERGED_NEAR_DUPLICATE"
			if e.value == 1 {
				a.Reason = "MERGED_PLANNER"
			}
			if !r.visible || r.superseded || !l.rows.at(e.other).visible {
				continue
			}
			leave(e.row)
			l.merge(e.row, e.other, tx)
		case RuleLineage, RuleSimilar:
			a.Other, a.Reason = l.rows.at(e.other).mem.ID, "DEPENDS_ON_LINEAGE"
			if e.rule == RuleSimilar {
				a.Reason = "DEPENDS_ON_SIMILAR"
			}
			if l.deps[[2]int{e.row, e.other}] {
				continue
			}
			l.addDep(e.row, e.other)
		case RuleTopicConflict:
			a.Other, a.Reason, a.Prefer = l.rows.at(e.other).mem.ID, "CONTRADICTS_TOPIC", r.mem.ID
			if e.value == 0 {
				a.Prefer = l.rows.at(e.other).mem.ID
			}
			if slices.Contains(r.contradicts, e.other) {
				continue
			}
			r.lists().contradicts = append(r.lists().contradicts, e.other)
			l.rows.at(e.other).lists().contradicts = append(l.rows.at(e.other).lists().contradicts, e.row)
			l.addEdge(links.Contradicts, e.row, e.other)
			linked[[2]int{min(e.row, e.other), max(e.row, e.other)}] = true
		case RuleContradicted:
			// The edit belongs to the conflict's row (so a run cut short
			// keeps or drops it with the conflict); a positive value
			// penalises the other memory, a negative one this row. Only for
			// a pair this record linked: a replayed or repeated conflict
			// costs nothing twice.
			loser, winner, pen := e.other, e.row, e.value
			if pen < 0 {
				loser, winner, pen = e.row, e.other, -pen
			}
			lr := l.rows.at(loser)
			a.ID, a.Other, a.Penalty, a.Reason = lr.mem.ID, l.rows.at(winner).mem.ID, pen, "CONTRADICTED"
			if !linked[[2]int{min(e.row, e.other), max(e.row, e.other)}] || slices.Contains(lr.contradictedBy, winner) {
				continue
			}
			lr.lists().contradictedBy = append(lr.lists().contradictedBy, winner)
			lr.penalty += pen
			lr.c0 = max(0, lr.mem.Source.Authority()-lr.penalty)
			l.syncCounters(loser)
		}
		l.syncCounters(e.row)
		l.audit = append(l.audit, a)
		res.applied = append(res.applied, e)
	}
	// Drop the seeds this run rippled (and only those: seeds that arrived
	// since its plan wait for the next run).
	done := make(map[int]bool, len(seeds))
	for _, sd := range seeds {
		done[sd] = true
	}
	l.rippleSeeds = slices.DeleteFunc(l.rippleSeeds, func(sd int) bool { return done[sd] })
	return res
}

// linksRows reports whether the edit's other field names a row (not a
// status, as a lifecycle edit's does).
func (e *edit) linksRows() bool { return e.rule != RuleLifecycle && e.rule != RuleExpired }

// valid checks an edit's rows and values against a ledger of n rows.
func (e *edit) valid(n int) bool {
	if e.row < 0 || e.row >= n || e.rule >= numRules {
		return false
	}
	switch e.rule {
	case RuleLifecycle:
		return e.other >= 0 && e.other <= int(temporal.Archived) && e.value >= 0 && e.value <= float64(temporal.Archived) && e.value == math.Trunc(e.value)
	case RuleExpired:
		return true
	case RuleRipple:
		return e.other >= 0 && e.other < n && e.other != e.row && e.value >= 0 && e.value <= 1
	case RuleContradicted:
		return e.other >= 0 && e.other < n && e.other != e.row && e.value >= -1 && e.value <= 1
	case RuleSplit:
		return e.other == e.row && e.value >= 2 && e.value <= maxSplit && e.value == math.Trunc(e.value)
	default:
		return e.other >= 0 && e.other < n && e.other != e.row && !math.IsNaN(e.value)
	}
}

// Orphans returns the superseded or merged memories that no root reaches
// through version links (new → old) — All-Mem's no-orphan invariant,
// which must hold (the list is empty) after every write and run. Roots are
// the current memories and the memories archived because their window
// ended (which the archive index keeps reachable): a chain whose newest
// version expired is still whole.
func (c *Collection) Orphans() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for _, j := range c.orphans() {
		out = append(out, c.rows.at(j).mem.ID)
	}
	return out
}

// Audit returns the consolidation edits recorded since seq (0: all), in
// order.
func (c *Collection) Audit(ctx context.Context, since uint64) ([]AuditEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	i, _ := slices.BinarySearchFunc(c.audit, since+1, func(a AuditEntry, s uint64) int {
		switch {
		case a.Seq < s:
			return -1
		case a.Seq > s:
			return 1
		}
		return 0
	})
	return slices.Clone(c.audit[i:]), nil
}
