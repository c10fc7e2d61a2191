package tidemark

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tidemark/tidemark/internal/wire"
	"github.com/tidemark/tidemark/temporal"
)

// Regression tests for defects found in review.

// A topic conflict between memories with long ids survives a checkpoint.
func TestAuditLongIDsSurviveSnapshot(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openTest(t, dir, nil)
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4, Keys: KeysExplicit})
	a, b := strings.Repeat("a", 300), strings.Repeat("b", 300)
	if _, err := c.Put(ctx, []Memory{
		{ID: a, Text: "The API rate limit is 100 requests per minute.", Vector: []float32{1, 0.1, 0, 0}},
		{ID: b, Text: "The API rate limit is 200 requests per minute.", Vector: []float32{1, 0.12, 0, 0}},
	}); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Consolidate(ctx, nil); err != nil || r.Contradictions != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, dir, nil)
	defer db.Close()
	c, _ = db.Collection("c")
	audit, _ := c.Audit(ctx, 0)
	found := false
	for _, e := range audit {
		found = found || (e.Rule == RuleTopicConflict && (e.Prefer == a || e.Prefer == b))
	}
	if !found {
		t.Fatalf("no topic conflict with a preference in the audit after reopen (%d entries)", len(audit))
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
		return res.Hits[0].Score, c.batch.BaseConf[c.rows[c.byID["b"]].beliefs[0]]
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

// Documents: a case-only edit is a new version, offsets of later chunks
// move, a template fact key is refused.
func TestDocumentEditsReview(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), &Options{NoSync: true})
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 64, Embedder: "hashing"})
	text := "Refunds within 30 days.\n\nShipping is free above 50 euros.\n\nSupport answers within a day."
	rep, err := c.PutDocument(ctx, "d", text, &DocumentOptions{ChunkBytes: 40})
	if err != nil || rep.Chunks != 3 {
		t.Fatalf("%+v %v", rep, err)
	}
	edited := strings.Replace(text, "Refunds", "REFUNDS", 1)
	if up, err := c.UpdateDocument(ctx, "d", edited, nil); err != nil || up.Reembedded != 1 {
		t.Fatalf("case-only edit %+v %v", up, err)
	}
	longer := strings.Replace(edited, "30 days", "thirty calendar days", 1)
	if up, err := c.UpdateDocument(ctx, "d", longer, nil); err != nil || up.Reembedded != 1 {
		t.Fatalf("second edit %+v %v", up, err)
	}
	cur, _ := c.currentChunks("d")
	var sb strings.Builder
	for _, m := range cur {
		if m.Start != sb.Len() || m.End != sb.Len()+len(m.Text) {
			t.Fatalf("chunk %d offsets [%d, %d), want [%d, %d)", m.Chunk, m.Start, m.End, sb.Len(), sb.Len()+len(m.Text))
		}
		sb.WriteString(m.Text)
	}
	if sb.String() != longer {
		t.Fatalf("document reads %q", sb.String())
	}
	if _, err := c.PutDocument(ctx, "e", "x y z", &DocumentOptions{Template: Memory{Subject: "s", Relation: "r"}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("template with a fact key: %v", err)
	}
	if _, err := c.AssembleContext(ctx, &SearchRequest{Text: "refunds"}, &ContextOptions{TokenBudget: 5}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a budget below the instructions: %v", err)
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

// A consolidation record naming row -1 is refused by the decoder.
func TestDecodeHostileConsolidateRecord(t *testing.T) {
	var w wire.Writer
	encodeEdits(&w, []edit{{rule: RuleRipple, row: 0, other: -1, value: 0.1}}, nil)
	r := &record{typ: recConsolidate, coll: "c"}
	enc := r.encode()
	enc = append(enc[:len(enc)-2], w.B...) // replace the empty edit lists
	if _, err := decodeRecord(enc); err == nil {
		t.Fatal("a ripple edit with other = -1 decoded")
	}
}
