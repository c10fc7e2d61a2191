package tidemark

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

func openTest(t testing.TB, dir string, opts *Options) *DB {
	t.Helper()
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func unit(dim, hot int) []float32 {
	v := make([]float32, dim)
	v[hot%dim] = 1
	v[(hot+1)%dim] = 0.1
	return v
}

// Bad input gets a clear error and loses nothing.
func TestPutRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), &Options{MaxTextBytes: 64, MaxBatch: 3})
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	good := Memory{ID: "ok", Text: "fine", Vector: unit(4, 0)}
	if _, err := c.Put(ctx, []Memory{good}); err != nil {
		t.Fatal(err)
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		m    Memory
		want error
	}{
		{"empty id", Memory{Vector: unit(4, 0)}, ErrInvalid},
		{"control char in id", Memory{ID: "a\nb", Vector: unit(4, 0)}, ErrInvalid},
		{"long id", Memory{ID: strings.Repeat("x", MaxIDBytes+1), Vector: unit(4, 0)}, ErrTooLarge},
		{"wrong dimension", Memory{ID: "d", Vector: []float32{1, 0, 0}}, ErrDimension},
		{"NaN", Memory{ID: "n", Vector: []float32{1, nan, 0, 0}}, ErrNotFinite},
		{"Inf", Memory{ID: "i", Vector: []float32{1, inf, 0, 0}}, ErrNotFinite},
		{"zero vector", Memory{ID: "z", Vector: make([]float32, 4)}, ErrNotFinite},
		{"no vector, no embedder", Memory{ID: "v", Text: "text"}, ErrInvalid},
		{"text too long", Memory{ID: "t", Text: strings.Repeat("x", 65), Vector: unit(4, 0)}, ErrTooLarge},
		{"text not UTF-8", Memory{ID: "u", Text: "\xff", Vector: unit(4, 0)}, ErrInvalid},
		{"unknown kind", Memory{ID: "k", Kind: 9, Vector: unit(4, 0)}, ErrInvalid},
		{"unknown source", Memory{ID: "s", Source: 42, Vector: unit(4, 0)}, ErrInvalid},
		{"unknown profile", Memory{ID: "p", Profile: "gossip", Vector: unit(4, 0)}, ErrInvalid},
		{"empty window", Memory{ID: "w", ValidFrom: day, ValidTo: day, Vector: unit(4, 0)}, ErrInvalid},
		{"year 10000", Memory{ID: "y", ValidTo: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Vector: unit(4, 0)}, ErrInvalid},
		{"negative counter", Memory{ID: "neg", Positive: -1, Vector: unit(4, 0)}, ErrInvalid},
		{"object without key", Memory{ID: "o", Object: "x", Vector: unit(4, 0)}, ErrInvalid},
		{"subject without relation", Memory{ID: "sr", Subject: "x", Vector: unit(4, 0)}, ErrInvalid},
		{"depends on itself", Memory{ID: "self", DependsOn: []string{"self"}, Vector: unit(4, 0)}, ErrInvalid},
		{"offsets reversed", Memory{ID: "off", Start: 5, End: 2, Vector: unit(4, 0)}, ErrInvalid},
		{"id exists with other content", Memory{ID: "ok", Text: "different", Vector: unit(4, 0)}, ErrExists},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The bad memory rides with a good one: nothing of the batch is written.
			_, err := c.Put(ctx, []Memory{{ID: "companion", Text: "x", Vector: unit(4, 1)}, tc.m})
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if _, err := c.Get(ctx, "companion"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("the good memory of a refused batch was written: %v", err)
			}
		})
	}
	if _, err := c.Put(ctx, []Memory{{ID: "a", Vector: unit(4, 0)}, {ID: "a", Vector: unit(4, 1)}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an id twice in a batch: %v", err)
	}
	if _, err := c.Put(ctx, make([]Memory, 4)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a batch over MaxBatch: %v", err)
	}
	// A retry with the same content is acknowledged again, unchanged.
	res, err := c.Put(ctx, []Memory{good})
	if err != nil || res[0].Outcome != Unchanged {
		t.Fatalf("retry: %v %v", res, err)
	}
	if stored, _ := c.Len(); stored != 1 {
		t.Fatalf("%d memories stored, want 1", stored)
	}
	// Searches and collections validate too.
	for _, req := range []*SearchRequest{
		{Vector: []float32{1, 0}},
		{Vector: []float32{1, nan, 0, 0}},
		{Vector: unit(4, 0), K: MaxK + 1},
		{Vector: unit(4, 0), K: -1},
		{Text: "no embedder"},
		{Vector: unit(4, 0), Plan: 7},
		{Vector: unit(4, 0), AsOf: time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if _, err := c.Search(ctx, req); err == nil {
			t.Errorf("search %+v: no error", req)
		}
	}
	for _, o := range []*CollectionOptions{nil, {}, {Dim: MaxDim + 1}, {Dim: 4, Embedder: "openai"}, {Dim: 4, HalfLife: math.NaN()}, {Dim: 4, Method: 99}} {
		if _, err := db.CreateCollection(ctx, "bad", o); !errors.Is(err, ErrOptions) {
			t.Errorf("CreateCollection(%+v): %v", o, err)
		}
	}
	if _, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4}); !errors.Is(err, ErrExists) {
		t.Errorf("a taken name: %v", err)
	}
	if _, err := db.Collection("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown collection: %v", err)
	}
	if err := c.Feedback(ctx, "nope", true); !errors.Is(err, ErrNotFound) {
		t.Errorf("feedback on an unknown id: %v", err)
	}
}

// Key supersession, restatement, document versions, expired events and
// as-of queries on both time axes.
func TestWritePathAndAsOf(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return clock }})
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	day := func(m, d int) time.Time { return time.Date(2025, time.Month(m), d, 0, 0, 0, 0, time.UTC) }
	put := func(ms ...Memory) []PutResult {
		t.Helper()
		res, err := c.Put(ctx, ms)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	q := unit(4, 0)
	top := func(req SearchRequest) []string {
		t.Helper()
		req.Vector, req.K = q, 10
		res, err := c.Search(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		return res.ids()
	}
	put(Memory{ID: "ceo-1", Text: "Alice is CEO", Vector: q, Subject: "Acme", Relation: "ceo", Object: "Alice", ValidFrom: day(1, 1)})
	clock = clock.Add(time.Hour)
	res := put(Memory{ID: "ceo-2", Text: "Bob is CEO", Vector: q, Subject: "acme ", Relation: "CEO", Object: "Bob", ValidFrom: day(6, 1)})
	if !slices.Equal(res[0].Superseded, []string{"ceo-1"}) {
		t.Fatalf("ceo-2 superseded %v", res[0].Superseded)
	}
	// The same fact restated is a reinforcement, not a second row.
	clock = clock.Add(time.Hour)
	res = put(Memory{ID: "ceo-2b", Text: "Bob runs Acme", Vector: q, Subject: "Acme", Relation: "ceo", Object: "bob", ValidFrom: day(7, 1)})
	if res[0].Outcome != Reinforced || res[0].Into != "ceo-2" {
		t.Fatalf("restatement: %+v", res[0])
	}
	if got := top(SearchRequest{}); !slices.Equal(got, []string{"ceo-2"}) {
		t.Fatalf("now: %v, want only ceo-2", got)
	}
	if got := top(SearchRequest{AsOf: day(3, 1)}); !slices.Equal(got, []string{"ceo-1"}) {
		t.Fatalf("as of March: %v, want ceo-1", got)
	}
	// What tidemark believed before it learnt of Bob: Alice, still open.
	if got := top(SearchRequest{AsOfTx: time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC)}); !slices.Equal(got, []string{"ceo-1"}) {
		t.Fatalf("as of the first transaction: %v, want ceo-1", got)
	}
	old, err := c.Get(ctx, "ceo-1")
	if err != nil {
		t.Fatal(err)
	}
	if old.Visible || old.SupersededBy != "ceo-2" || len(old.Beliefs) != 2 || !old.Beliefs[0].ValidTo.IsZero() ||
		!old.Beliefs[1].ValidTo.Equal(day(6, 1)) || !old.Beliefs[0].RetiredAt.Equal(clock.Add(-time.Hour)) {
		t.Fatalf("ceo-1 after supersession: %+v", old)
	}
	if al, _ := c.Get(ctx, "ceo-2b"); al.ID != "ceo-2" || al.Access != 1 || !slices.Equal(al.Aliases, []string{"ceo-2b"}) {
		t.Fatalf("the restatement's id: %+v", al)
	}
	h, err := c.History(ctx, "ceo-2")
	if err != nil || len(h) != 2 || h[0].ID != "ceo-1" || h[1].ID != "ceo-2" {
		t.Fatalf("history: %v %v", h, err)
	}
	// Out of order: an older version arriving late goes straight to the
	// archive and does not displace the current one.
	res = put(Memory{ID: "ceo-0", Text: "Carol was CEO", Vector: q, Subject: "Acme", Relation: "ceo", Object: "Carol", ValidFrom: day(1, 1).AddDate(-1, 0, 0)})
	if res[0].SupersededBy != "ceo-1" {
		t.Fatalf("a late older version: %+v", res[0])
	}
	if got := top(SearchRequest{AsOf: day(1, 1).AddDate(0, -6, 0)}); !slices.Equal(got, []string{"ceo-0"}) {
		t.Fatalf("as of mid 2024: %v", got)
	}
	// Document versions, and an event that ended before it was written.
	c2, _ := db.CreateCollection(ctx, "docs", &CollectionOptions{Dim: 4})
	if _, err := c2.Put(ctx, []Memory{
		{ID: "d-v1", Text: "v1", Vector: q, DocID: "d", Version: 1},
		{ID: "d-v2", Text: "v2", Vector: q, DocID: "d", Version: 2},
		{ID: "e", Text: "sale", Vector: q, Kind: temporal.Event, ValidFrom: day(1, 1), ValidTo: day(2, 1)},
	}); err != nil {
		t.Fatal(err)
	}
	if stored, visible := c2.Len(); stored != 3 || visible != 1 {
		t.Fatalf("docs: %d stored, %d visible; want 3, 1", stored, visible)
	}
	r, err := c2.Search(ctx, &SearchRequest{Vector: q, Explain: true})
	if err != nil || len(r.Hits) != 1 || r.Hits[0].ID != "d-v2" || r.Hits[0].Signals == nil {
		t.Fatalf("docs now: %+v %v", r, err)
	}
	reasons := map[string]temporal.Reason{}
	for _, x := range r.Removed {
		reasons[x.ID] = x.Reason
	}
	if reasons["e"] != temporal.ExpiredReason(temporal.Event) || reasons["d-v1"] == temporal.ReasonNone {
		t.Fatalf("removed: %v", r.Removed)
	}
	if r, err := c2.Search(ctx, &SearchRequest{Vector: q, AsOf: day(1, 15), Plan: PlanANN}); err != nil || len(r.Hits) != 2 || !r.Historical {
		t.Fatalf("as of mid January (ANN): %+v %v", r, err)
	}
	// Kind filters and time ranges (on the creation time).
	if r, err := c2.Search(ctx, &SearchRequest{Vector: q, AsOf: day(1, 15), Kinds: temporal.KindsOf(temporal.Event)}); err != nil || len(r.Hits) != 1 || r.Hits[0].ID != "e" {
		t.Fatalf("events as of mid January: %+v %v", r, err)
	}
	rng := &temporal.TimeRange{From: day(1, 1), To: day(1, 2)}
	if r, err := c2.Search(ctx, &SearchRequest{Vector: q, AsOf: day(1, 15), Range: rng, Explain: true}); err != nil || len(r.Hits) != 1 || r.Hits[0].ID != "e" {
		t.Fatalf("created in the first day of 2025: %+v %v", r, err)
	}
	if r, err := c2.Search(ctx, &SearchRequest{Vector: q, Text: "what happened since 2026", ParseRange: true, Now: clock.Add(time.Hour)}); err != nil || len(r.Hits) != 1 || r.Hits[0].ID != "d-v2" {
		t.Fatalf("a range parsed from the text: %+v %v", r, err)
	}
}

// A database closed and opened again — or dropped without a final
// snapshot — answers exactly as before.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openTest(t, dir, &Options{CheckpointRecords: -1})
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 8, ExactThreshold: 10})
	for i := range 40 {
		v := unit(8, i)
		v[(i+3)%8] = float32(i) / 40
		m := Memory{ID: "m" + string(rune('A'+i)), Text: "text " + string(rune('A'+i)), Vector: v,
			Subject: "s" + string(rune('a'+i%7)), Relation: "r", Object: string(rune('a' + i%3))}
		if _, err := c.Put(ctx, []Memory{m}); err != nil {
			t.Fatal(err)
		}
		if i == 20 {
			if err := db.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := c.Feedback(ctx, "mA", true); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateCollection(ctx, "gone", &CollectionOptions{Dim: 2}); err != nil {
		t.Fatal(err)
	}
	if err := db.DropCollection(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	answers := func(db *DB) []string {
		c, err := db.Collection("c")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i := range 8 {
			for _, p := range []Plan{PlanExact, PlanANN} {
				r, err := c.Search(ctx, &SearchRequest{Vector: unit(8, i), Plan: p, K: 5})
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range r.Hits {
					out = append(out, h.ID)
				}
			}
		}
		m, _ := c.Get(ctx, "mA")
		return append(out, m.ID, string(rune('0'+m.Positive)))
	}
	want := answers(db)
	checkConsistent(t, db)
	db.wal.Close() // a crash: no final snapshot
	db = openTest(t, dir, nil)
	if db.Recovery().SnapshotSeq == 0 || db.Recovery().Replayed == 0 {
		t.Fatalf("recovery: %+v (want a snapshot and records after it)", db.Recovery())
	}
	if got := answers(db); !slices.Equal(got, want) {
		t.Fatalf("after a crash:\n got %v\nwant %v", got, want)
	}
	if names := db.Collections(); !slices.Equal(names, []string{"c"}) {
		t.Fatalf("collections %v", names)
	}
	checkConsistent(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, dir, nil)
	if r := db.Recovery(); r.Replayed != 0 {
		t.Fatalf("after Close the snapshot holds everything: %+v", r)
	}
	if got := answers(db); !slices.Equal(got, want) {
		t.Fatalf("after Close:\n got %v\nwant %v", got, want)
	}
	// An index that disagrees with the ledger is rebuilt.
	c, _ = db.Collection("c")
	for j := range c.rows {
		if c.rows[j].visible {
			_ = c.surface.Delete(uint64(j))
			break
		}
	}
	if err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	db.wal.Close()
	db = openTest(t, dir, nil)
	defer db.Close()
	if r := db.Recovery(); !slices.Equal(r.IndexRebuilt, []string{"c"}) {
		t.Fatalf("recovery: %+v, want the index of c rebuilt", r)
	}
	if got := answers(db); !slices.Equal(got, want) {
		t.Fatalf("after the rebuild:\n got %v\nwant %v", got, want)
	}
	checkConsistent(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("c"); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if _, err := c.Put(ctx, []Memory{{ID: "late", Vector: unit(8, 0)}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close: %v", err)
	}
}

// Source filters on both plans, and a fact's lineage by its key.
func TestSourceFilterAndFactHistory(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	if _, err := c.Put(ctx, []Memory{
		{ID: "wiki", Text: "w", Vector: unit(4, 0), Source: temporal.SourceWiki, Subject: "API ", Relation: "Limit", Object: "1"},
		{ID: "chat", Text: "c", Vector: unit(4, 0), Source: temporal.SourceChat},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, []Memory{{ID: "wiki2", Text: "w2", Vector: unit(4, 0), Source: temporal.SourceWiki, Subject: "api", Relation: "limit", Object: "2"}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Plan{PlanExact, PlanANN} {
		res, err := c.Search(ctx, &SearchRequest{Vector: unit(4, 0), Sources: []temporal.Source{temporal.SourceChat}, Plan: p})
		if err != nil || len(res.Hits) != 1 || res.Hits[0].ID != "chat" {
			t.Fatalf("plan %v: %+v %v", p, res, err)
		}
	}
	h, err := c.FactHistory(ctx, "api", "limit")
	if err != nil || len(h) != 2 || h[0].ID != "wiki" || h[1].ID != "wiki2" {
		t.Fatalf("fact history %v %v", h, err)
	}
	if _, err := c.FactHistory(ctx, "nope", "limit"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown fact: %v", err)
	}
}

// SearchRequest.FirstStage hands only the most similar memories to the
// fused stage, before the masks: a first stage of one that finds only a
// superseded version answers nothing, two find its successor.
func TestSearchFirstStage(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), &Options{NoSync: true})
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	mems := []Memory{
		{ID: "old", Text: "limit 10", Vector: []float32{1, 0.05, 0, 0}, Kind: temporal.Versioned, DocID: "d", Version: 1, ValidFrom: day},
		{ID: "new", Text: "limit 20", Vector: []float32{1, 0.4, 0, 0}, Kind: temporal.Versioned, DocID: "d", Version: 2, ValidFrom: day.AddDate(0, 1, 0)},
		{ID: "far", Text: "other", Vector: []float32{0.3, 0, 1, 0}},
	}
	if _, err := c.Put(ctx, mems); err != nil {
		t.Fatal(err)
	}
	q := []float32{1, 0, 0, 0}
	ids := func(plan Plan, fs int) []string {
		res, err := c.Search(ctx, &SearchRequest{Vector: q, K: 5, Plan: plan, FirstStage: fs})
		if err != nil {
			t.Fatal(err)
		}
		return res.ids()
	}
	for _, tc := range []struct {
		fs   int
		want []string
	}{{0, []string{"new", "far"}}, {1, nil}, {2, []string{"new"}}, {3, []string{"new", "far"}}, {10, []string{"new", "far"}}} {
		if got := ids(PlanExact, tc.fs); !slices.Equal(got, tc.want) {
			t.Errorf("exact, first stage %d: %v, want %v", tc.fs, got, tc.want)
		}
	}
	// The ANN plan finds candidates on the visible surface only, so its
	// first stage of one is the successor.
	if got := ids(PlanANN, 1); !slices.Equal(got, []string{"new"}) {
		t.Errorf("ann, first stage 1: %v", got)
	}
	if _, err := c.Search(ctx, &SearchRequest{Vector: q, FirstStage: -1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("first stage -1: %v, want ErrInvalid", err)
	}
}
