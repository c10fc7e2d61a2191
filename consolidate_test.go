package tidemark

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// SmartVector's lifecycle: promotion on the first run, dormancy when the
// live confidence falls below 0.15 (a tech doc, C0 = 0.85, reaches 0.106
// at 90 days), reactivation by feedback, deprecated memories left alone;
// every change is an audit entry, and all of it survives a crash. The
// memories are versioned under SmartVector's method, whose clock decays
// them (tidemark's holds versioned and static memories, and every method's
// lifecycle holds static ones: TestStaticConfidenceDoesNotDecay).
func TestConsolidateLifecycle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	db := openTest(t, dir, &Options{Clock: func() time.Time { return clock }})
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4, Method: temporal.MethodSmartVector})
	if _, err := c.Put(ctx, []Memory{
		{ID: "doc", Text: "how to deploy", Vector: unit(4, 0), Kind: temporal.Versioned, Source: temporal.SourceTechDoc, Created: t0},
		{ID: "old", Text: "limit 1", Vector: unit(4, 1), Kind: temporal.Versioned, Subject: "api", Relation: "limit", Object: "1", Created: t0},
	}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Minute)
	if _, err := c.Put(ctx, []Memory{{ID: "new", Text: "limit 2", Vector: unit(4, 1), Kind: temporal.Versioned, Subject: "api", Relation: "limit", Object: "2", Created: t0}}); err != nil {
		t.Fatal(err)
	}
	status := func(id string) temporal.Status {
		m, err := c.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return m.Status
	}
	run := func(day int) ConsolidationReport {
		t.Helper()
		r, err := c.Consolidate(ctx, &ConsolidateOptions{Now: t0.AddDate(0, 0, day)})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Orphans) > 0 {
			t.Fatalf("orphans %v", r.Orphans)
		}
		return r
	}
	if r := run(1); r.Promoted != 2 || r.Contradictions != 1 || status("doc") != temporal.Active || status("old") != temporal.Deprecated {
		t.Fatalf("day 1: %+v; doc %v, old %v", r, status("doc"), status("old"))
	}
	// "new" (unknown source, C0 = 0.20) is at 0.05 by day 60.
	if r := run(60); r.Dormant != 1 || status("doc") != temporal.Active || status("new") != temporal.Dormant { // doc: 0.2125 ≥ 0.15
		t.Fatalf("day 60: %+v, doc %v", r, status("doc"))
	}
	if r := run(90); r.Dormant != 1 || status("doc") != temporal.Dormant { // 0.106 < 0.15
		t.Fatalf("day 90: %+v, doc %v", r, status("doc"))
	}
	for range 2 { // +0.06 → 0.166
		if err := c.Feedback(ctx, "doc", true); err != nil {
			t.Fatal(err)
		}
	}
	if r := run(90); r.Reactivated != 1 || status("doc") != temporal.Active {
		t.Fatalf("day 90 after feedback: %+v, doc %v", r, status("doc"))
	}
	if r := run(91); r.Seq != 0 || r.Promoted+r.Dormant+r.Reactivated+r.Contradictions != 0 {
		t.Fatalf("a run with nothing to do logged %+v", r)
	}
	audit, err := c.Audit(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range audit {
		got = append(got, a.ID+":"+a.Rule.String()+":"+a.Reason)
	}
	want := []string{"doc:lifecycle:CONFIDENCE_active", "new:lifecycle:CONFIDENCE_active", "new:same_key:CONTRADICTS_SAME_KEY",
		"new:lifecycle:CONFIDENCE_dormant", "doc:lifecycle:CONFIDENCE_dormant", "doc:lifecycle:CONFIDENCE_active"}
	if !slices.Equal(got, want) {
		t.Fatalf("audit\n got %v\nwant %v", got, want)
	}
	if n, _ := c.Get(ctx, "new"); !slices.Equal(n.Contradicts, []string{"old"}) {
		t.Fatalf("new contradicts %v", n.Contradicts)
	}
	// A crash: the edits come back from the log, the audit with them.
	db.wal.Close()
	db = openTest(t, dir, nil)
	defer db.Close()
	c, _ = db.Collection("c")
	if status("doc") != temporal.Active || status("new") != temporal.Dormant || status("old") != temporal.Deprecated {
		t.Fatalf("after a crash: doc %v new %v old %v", status("doc"), status("new"), status("old"))
	}
	if a, _ := c.Audit(ctx, 0); len(a) != len(want) {
		t.Fatalf("audit after a crash: %d entries, want %d", len(a), len(want))
	}
	if err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if a, _ := c.Audit(ctx, audit[3].Seq); len(a) != 2 {
		t.Fatalf("audit since seq %d: %v", audit[2].Seq, a)
	}
}

// Ripple propagation (SmartVector §6.3): a → b → c → d along depended_by;
// superseding a costs b 0.15 and c 0.075 of their base confidence, and
// stops there: depth 2, not 3.
func TestConsolidateRipple(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	src := temporal.SourcePolicy // C0 0.90
	if _, err := c.Put(ctx, []Memory{
		{ID: "sky", Text: "the sky is blue", Vector: unit(4, 0), Source: src, Subject: "sky", Relation: "color", Object: "blue"},
		{ID: "atmosphere", Text: "atmospheric model", Vector: unit(4, 1), Source: src, DependsOn: []string{"sky"}},
		{ID: "sensor", Text: "sensor calibration", Vector: unit(4, 2), Source: src, DependsOn: []string{"atmosphere"}},
		{ID: "report", Text: "weekly report", Vector: unit(4, 3), Source: src, DependsOn: []string{"sensor"}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, []Memory{{ID: "sky-2", Text: "the sky is green", Vector: unit(4, 0), Source: src, Subject: "sky", Relation: "color", Object: "green"}}); err != nil {
		t.Fatal(err)
	}
	r, err := c.Consolidate(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Ripples != 2 {
		t.Fatalf("%d ripples, want 2: %+v", r.Ripples, r)
	}
	for id, pen := range map[string]float64{"atmosphere": 0.15, "sensor": 0.075, "report": 0} {
		m, _ := c.Get(ctx, id)
		if math.Abs(m.Penalty-pen) > 1e-12 {
			t.Errorf("%s: penalty %v, want %v", id, m.Penalty, pen)
		}
		if (pen > 0) != slices.Equal(m.Review, []string{"sky"}) {
			t.Errorf("%s: review %v", id, m.Review)
		}
	}
	// The penalty lowers the live confidence searches report.
	res, err := c.Search(ctx, &SearchRequest{Vector: unit(4, 1), K: 1})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].ID != "atmosphere" {
		t.Fatalf("%+v %v", res, err)
	}
	if c0 := 0.90 - 0.15; res.Hits[0].Confidence > c0+1e-9 {
		t.Fatalf("atmosphere's confidence %v above its penalised C0 %v", res.Hits[0].Confidence, c0)
	}
	// The seed is consumed: a second run ripples nothing.
	if r, _ := c.Consolidate(ctx, nil); r.Ripples != 0 {
		t.Fatalf("second run: %+v", r)
	}
}

// An event whose window ends leaves the surface on the next run; a query
// as of a time inside the window still finds it (archive index).
func TestConsolidateExpired(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return clock }})
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4, ExactThreshold: 1})
	if _, err := c.Put(ctx, []Memory{
		{ID: "sale", Text: "spring sale", Vector: unit(4, 0), Kind: temporal.Event, ValidFrom: t0, ValidTo: t0.AddDate(0, 0, 7)},
		{ID: "faq", Text: "faq", Vector: unit(4, 2)},
		{ID: "faq2", Text: "faq 2", Vector: unit(4, 3)},
	}); err != nil {
		t.Fatal(err)
	}
	clock = t0.AddDate(0, 0, 10)
	r, err := c.Consolidate(ctx, nil)
	if err != nil || r.Expired != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	if _, visible := c.Len(); visible != 2 {
		t.Fatalf("%d visible, want 2", visible)
	}
	res, err := c.Search(ctx, &SearchRequest{Vector: unit(4, 0), AsOf: t0.AddDate(0, 0, 3), Plan: PlanANN})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].ID != "sale" {
		t.Fatalf("as of the sale: %+v %v", res, err)
	}
	res, err = c.Search(ctx, &SearchRequest{Vector: unit(4, 0), Plan: PlanANN})
	if err != nil || slices.ContainsFunc(res.Hits, func(h Hit) bool { return h.ID == "sale" }) {
		t.Fatalf("now: %+v %v", res, err)
	}
	if m, _ := c.Get(ctx, "sale"); m.Status != temporal.Archived || m.Visible {
		t.Fatalf("sale %+v", m)
	}
}

// Options.ConsolidateEvery runs consolidation in the background, and
// Close stops it.
func TestConsolidateInBackground(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), &Options{ConsolidateEvery: 5 * time.Millisecond})
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	if _, err := c.Put(ctx, []Memory{{ID: "a", Text: "a", Vector: unit(4, 0)}}); err != nil {
		t.Fatal(err)
	}
	// A run promotes the memory before it records its report, so wait for
	// both: the promotion seen by Get, then a report naming the collection.
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, _ := c.Get(ctx, "a")
		reps, err := db.LastConsolidation()
		if err != nil {
			t.Fatalf("last consolidation: %v", err)
		}
		if m.Status == temporal.Active && len(reps) > 0 {
			if reps[0].Collection != "c" {
				t.Fatalf("last consolidation: %+v", reps)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("in 10 s: status %v, last consolidation %+v", m.Status, reps)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// Relationship building: a near-exact duplicate is merged (evidence kept,
// reachable by a version link), a very similar memory gets a semantic
// dependency, chunks depend on their document's first chunk, and two
// memories about one topic that disagree on a number are flagged, the
// majority of recency, authority and feedback naming the one to prefer.
func TestConsolidateRelationships(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return clock }})
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 8, Keys: KeysExplicit}) // consolidation, not ingest, relates them
	v := func(xs ...float32) []float32 { return append(xs, make([]float32, 8-len(xs))...) }
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	if _, err := c.Put(ctx, []Memory{
		{ID: "hours", Text: "The office opens at 9 am on weekdays.", Vector: v(1, 0.05), Created: day(1), Source: temporal.SourcePolicy},
		{ID: "hours-copy", Text: "The office opens at 9 am on weekdays!", Vector: v(1, 0.06), Created: day(2), Source: temporal.SourceChat},
		{ID: "hours-rumour", Text: "The office opens at 10 am on weekdays.", Vector: v(1, 0.3), Created: day(3), Source: temporal.SourceChat},
		{ID: "parking", Text: "Parking is behind the office building.", Vector: v(1, 0, 0.5), Created: day(4)},
		{ID: "far", Text: "Quarterly revenue grew.", Vector: v(0, 0, 0, 1), Created: day(5)},
		{ID: "d-0", Text: "Preamble.", Vector: v(0, 0, 0, 0, 1), DocID: "d", Chunk: 0},
		{ID: "d-1", Text: "Section one.", Vector: v(0, 0, 0, 0, 0, 1), DocID: "d", Chunk: 1},
	}); err != nil {
		t.Fatal(err)
	}
	r, err := c.Consolidate(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if r.Merged != 1 || r.Contradictions != 1 || r.Dependencies < 2 || len(r.Orphans) != 0 {
		t.Fatalf("report %+v", r)
	}
	// A merge, a contradiction and dependencies: the graph follows the
	// ledger, and a reopen derives the same graph from the snapshot.
	checkConsistent(t, db)
	if err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openTest(t, db.Dir(), &Options{Clock: func() time.Time { return clock }})
	defer db.Close()
	checkConsistent(t, db)
	c, _ = db.Collection("c")
	cp, _ := c.Get(ctx, "hours-copy")
	h, _ := c.Get(ctx, "hours")
	if cp.Visible || cp.SupersededBy != "hours" || h.Access != 1 {
		t.Fatalf("merge: copy %+v, survivor access %d", cp, h.Access)
	}
	res, _ := c.Search(ctx, &SearchRequest{Vector: v(1, 0.05), K: 5})
	for _, hit := range res.Hits {
		if hit.ID == "hours-copy" {
			t.Fatal("a merged duplicate is still served")
		}
	}
	if ru, _ := c.Get(ctx, "hours-rumour"); !slices.Equal(ru.Contradicts, []string{"hours"}) {
		t.Fatalf("rumour contradicts %v", ru.Contradicts)
	}
	var prefer string
	audit, _ := c.Audit(ctx, 0)
	for _, a := range audit {
		if a.Rule == RuleTopicConflict {
			prefer = a.Prefer
		}
	}
	// hours: older, policy; rumour: newer, chat; no feedback on either.
	// Recency votes rumour, authority hours, feedback abstains: the split
	// goes to the higher authority, hours.
	if prefer != "hours" {
		t.Fatalf("conflict resolution %q", prefer)
	}
	if d1, _ := c.Get(ctx, "d-1"); d1.ID == "" {
		t.Fatal("d-1 missing")
	}
	c.mu.RLock()
	lineage := c.deps[[2]int{c.idRow("d-1"), c.idRow("d-0")}]
	similar := c.deps[[2]int{c.idRow("parking"), c.idRow("hours")}] || c.deps[[2]int{c.idRow("hours-rumour"), c.idRow("hours")}]
	far := c.deps[[2]int{c.idRow("far"), c.idRow("hours")}]
	c.mu.RUnlock()
	if !lineage || !similar || far {
		t.Fatalf("dependencies: lineage %v, similar %v, unrelated %v", lineage, similar, far)
	}
	// Every archived memory is reachable from the surface within the
	// expansion hop budget (All-Mem's Cov(H) = 1).
	if cov := c.links.Coverage(c.opts.ExpandHops); cov != 1 {
		t.Fatalf("coverage within %d hops = %v", c.opts.ExpandHops, cov)
	}
	// A second run adds nothing new.
	if r, _ := c.Consolidate(ctx, nil); r.Merged+r.Contradictions+r.Dependencies != 0 {
		t.Fatalf("second run %+v", r)
	}
}

// MaxNew bounds a run: the new memories past it wait for the next one.
func TestConsolidateMaxNew(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 8})
	for i := range 5 {
		if _, err := c.Put(ctx, []Memory{{ID: string(rune('a' + i)), Text: string(rune('a' + i)), Vector: unit(8, i)}}); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []int{2, 2, 1, 0} {
		r, err := c.Consolidate(ctx, &ConsolidateOptions{MaxNew: 2})
		if err != nil || r.Promoted != want || r.Truncated != (i < 2) {
			t.Fatalf("run %d: %+v %v (want %d promoted)", i, r, err, want)
		}
	}
}

// A spent time budget promotes what was related and leaves the rest for
// the next run.
func TestConsolidateBudget(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), &Options{NoSync: true})
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 8})
	var ms []Memory
	for i := range relBatch + 10 {
		ms = append(ms, Memory{ID: fmt.Sprint("m", i), Text: fmt.Sprint("memory ", i), Vector: unit(8, i)})
	}
	if _, err := c.Put(ctx, ms); err != nil {
		t.Fatal(err)
	}
	r, err := c.Consolidate(ctx, &ConsolidateOptions{Budget: time.Nanosecond})
	if err != nil || r.Promoted != relBatch || !r.Truncated {
		t.Fatalf("first run %+v %v", r, err)
	}
	if r, _ := c.Consolidate(ctx, nil); r.Promoted != 10 || r.Truncated {
		t.Fatalf("second run %+v", r)
	}
}

// A ripple's penalty reaches the fused stage's column, live and after a
// reopen, and the score agrees with the reported confidence's C0.
func TestRipplePenaltyInColumnStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openTest(t, dir, nil)
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	src := temporal.SourcePolicy
	if _, err := c.Put(ctx, []Memory{
		{ID: "a", Text: "a", Vector: unit(4, 0), Source: src, Subject: "x", Relation: "y", Object: "1"},
		{ID: "b", Text: "b", Vector: unit(4, 2), Source: src, DependsOn: []string{"a"}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, []Memory{{ID: "a2", Text: "a2", Vector: unit(4, 0), Source: src, Subject: "x", Relation: "y", Object: "2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Consolidate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	score := func(c *Collection) (float64, float32) {
		res, err := c.Search(ctx, &SearchRequest{Vector: unit(4, 2), K: 1})
		if err != nil || len(res.Hits) != 1 {
			t.Fatal(err)
		}
		c.mu.RLock()
		defer c.mu.RUnlock()
		return res.Hits[0].Score, c.batch.BaseConf[c.rows.at(c.idRow("b")).beliefList()[0]]
	}
	live, c0 := score(c)
	if math.Abs(float64(c0)-0.75) > 1e-6 {
		t.Fatalf("b's BaseConf column %v, want 0.75", c0)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, dir, nil)
	defer db.Close()
	c, _ = db.Collection("c")
	if again, _ := score(c); math.Abs(again-live) > 1e-6 {
		t.Fatalf("score %v live, %v after reopen", live, again)
	}
}

// A lifecycle edit planned before a concurrent supersession does not
// resurrect the superseded memory's status.
func TestLifecycleEditAfterSupersession(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	if _, err := c.Put(ctx, []Memory{{ID: "a", Text: "a", Vector: unit(4, 0), Subject: "s", Relation: "r", Object: "1"}}); err != nil {
		t.Fatal(err)
	}
	o := (*ConsolidateOptions)(nil).WithDefaults()
	o.MaxEdits = 1000
	edits, seeds, _, err := c.plan(ctx, days(time.Now(), 0), temporal.DefaultRipple(), &o)
	if err != nil || len(edits) == 0 {
		t.Fatalf("plan %v %v", edits, err)
	}
	if _, err := c.Put(ctx, []Memory{{ID: "a2", Text: "a2", Vector: unit(4, 0), Subject: "s", Relation: "r", Object: "2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.commit(ctx, &record{typ: recConsolidate, coll: "c", inc: c.incarnation, edits: edits, seeds: seeds}); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Get(ctx, "a"); m.Status != temporal.Deprecated {
		t.Fatalf("a's status %v after a stale lifecycle edit", m.Status)
	}
}

// A chain whose newest version expired is not an orphan.
func TestNoOrphanAfterExpiry(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return clock }})
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	if _, err := c.Put(ctx, []Memory{{ID: "v1", Text: "v1", Vector: unit(4, 0), DocID: "d", Version: 1, ValidTo: t0.AddDate(0, 1, 0)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, []Memory{{ID: "v2", Text: "v2", Vector: unit(4, 0), DocID: "d", Version: 2, ValidTo: t0.AddDate(0, 1, 0)}}); err != nil {
		t.Fatal(err)
	}
	clock = t0.AddDate(0, 2, 0)
	r, err := c.Consolidate(ctx, nil)
	if err != nil || r.Expired != 1 || len(r.Orphans) != 0 {
		t.Fatalf("%+v %v", r, err)
	}
}

// Consolidation runs do not overlap: several at once leave every seed
// rippled once.
func TestConsolidateRunsSerialised(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	if _, err := c.Put(ctx, []Memory{
		{ID: "a", Text: "a", Vector: unit(4, 0), Subject: "x", Relation: "y", Object: "1"},
		{ID: "b", Text: "b", Vector: unit(4, 2), DependsOn: []string{"a"}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, []Memory{{ID: "a2", Text: "a2", Vector: unit(4, 0), Subject: "x", Relation: "y", Object: "2"}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 4)
	for range 4 {
		go func() { _, err := c.Consolidate(ctx, nil); done <- err }()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if m, _ := c.Get(ctx, "b"); math.Abs(m.Penalty-0.15) > 1e-12 || len(m.Review) != 1 {
		t.Fatalf("b after 4 concurrent runs: penalty %v, review %v", m.Penalty, m.Review)
	}
}

// Past the exact threshold, consolidation finds each new memory's
// neighbours through the surface index: its relationship edits agree with
// the exact scan's (the reference) on a clustered collection with
// dependencies, topic conflicts and near-duplicates — recall of the exact
// pass's edits at least 0.95.
func TestConsolidateIndexAgreesWithExact(t *testing.T) {
	ctx := context.Background()
	const n, dim = 3000, 64
	db := openTest(t, t.TempDir(), &Options{NoSync: true})
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: dim, ExactThreshold: 200, Keys: KeysExplicit})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	const clusters = 400
	centres := make([][]float32, clusters)
	for i := range centres {
		centres[i] = make([]float32, dim)
		for j := range centres[i] {
			centres[i][j] = float32(rng.NormFloat64())
		}
	}
	var batch []Memory
	for i := range n {
		k := rng.IntN(clusters)
		v := make([]float32, dim)
		for j := range v {
			v[j] = centres[k][j] + 0.3*float32(rng.NormFloat64())
		}
		text := fmt.Sprintf("The service %d rate limit is %d requests per minute.", k, 100+rng.IntN(50))
		if rng.IntN(4) == 0 {
			text = fmt.Sprintf("Service %d note %d: retries back off after errors.", k, i)
		}
		batch = append(batch, Memory{ID: fmt.Sprintf("m%d", i), Text: text, Vector: v, Created: time.Unix(int64(1e9+i*60), 0)})
		if len(batch) == 500 {
			if _, err := c.Put(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	o := (*ConsolidateOptions)(nil).WithDefaults()
	type key struct {
		rule       Rule
		row, other int
	}
	edits := func(exact bool) map[key]bool {
		o.Exact = exact
		_, es, _, err := c.relationships(ctx, &o)
		if err != nil {
			t.Fatal(err)
		}
		out := map[key]bool{}
		for _, e := range es {
			out[key{e.rule, e.row, e.other}] = true
		}
		return out
	}
	ref, got := edits(true), edits(false)
	found, extra := 0, 0
	for e := range ref {
		if got[e] {
			found++
		}
	}
	for e := range got {
		if !ref[e] {
			extra++
		}
	}
	recall := float64(found) / float64(len(ref))
	t.Logf("exact pass %d edits; through the index %d, recall %.4f, %d not in the exact pass", len(ref), len(got), recall, extra)
	if len(ref) < 500 {
		t.Fatalf("the exact pass found %d edits: too few to compare", len(ref))
	}
	if recall < 0.95 {
		t.Fatalf("recall of the exact pass's edits %.4f < 0.95", recall)
	}
}
