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
		{"an expected revision the id is not at", Memory{ID: "ok", Text: "different", Vector: unit(4, 0), IfRevision: 2}, ErrConflict},
		{"an expected revision of an id that does not exist", Memory{ID: "new", Vector: unit(4, 0), IfRevision: 1}, ErrConflict},
		{"a negative expected revision", Memory{ID: "ok", Vector: unit(4, 0), IfRevision: -1}, ErrInvalid},
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

// A record for a collection dropped after the write was checked is
// refused with ErrNotFound, whatever its kind (a Put used to get nothing
// and no error), and changes nothing.
func TestRecordForDroppedCollection(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, []Memory{{ID: "a", Vector: unit(4, 0)}}); err != nil {
		t.Fatal(err)
	}
	inc := c.incarnation
	if err := db.DropCollection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	for _, rec := range []*record{
		{typ: recPut, coll: "c", inc: inc, mems: []Memory{{ID: "b", Vector: unit(4, 1)}}},
		{typ: recPutDoc, coll: "c", inc: inc, mems: []Memory{{ID: "d#0@v1", Vector: unit(4, 1), DocID: "d"}}},
		{typ: recFeedback, coll: "c", inc: inc, id: "a", positive: 1},
		{typ: recAccess, coll: "c", inc: inc, access: []accessCount{{row: 0, n: 1}}},
		{typ: recConsolidate, coll: "c", inc: inc},
		{typ: recDrop, coll: "c", inc: inc},
	} {
		if _, err := db.commit(ctx, rec); !errors.Is(err, ErrNotFound) {
			t.Errorf("record type %d for a dropped collection: %v, want ErrNotFound", rec.typ, err)
		}
	}
	if stored, _ := c.Len(); stored != 1 {
		t.Fatalf("the dropped collection's ledger changed: %d memories", stored)
	}
}
