package tidemark

import (
	"context"
	"errors"
	"testing"
	"time"
)

// One source cannot inflate a memory without bound: FeedbackPerDay per
// day, FeedbackPerSource in all; other sources count on their own; the
// limits hold across a crash.
func TestFeedbackRateLimits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db := openTest(t, dir, &Options{Clock: func() time.Time { return clock }})
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4, FeedbackPerDay: 2, FeedbackPerSource: 3})
	if _, err := c.Put(ctx, []Memory{{ID: "m", Text: "m", Vector: unit(4, 0)}}); err != nil {
		t.Fatal(err)
	}
	give := func(src string) error { return c.FeedbackFrom(ctx, "m", true, src) }
	for i := range 2 {
		if err := give("bot"); err != nil {
			t.Fatalf("judgement %d: %v", i, err)
		}
	}
	if err := give("bot"); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("third judgement in a day: %v", err)
	}
	if err := give("alice"); err != nil {
		t.Fatalf("another source: %v", err)
	}
	clock = clock.Add(25 * time.Hour)
	if err := give("bot"); err != nil {
		t.Fatalf("next day: %v", err)
	}
	db.wal.Close() // crash: the limiter state comes back from the log
	db = openTest(t, dir, &Options{Clock: func() time.Time { return clock }})
	defer db.Close()
	c, _ = db.Collection("c")
	if err := c.FeedbackFrom(ctx, "m", false, "bot"); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("fourth judgement in all: %v", err)
	}
	if m, _ := c.Get(ctx, "m"); m.Positive != 4 || m.Negative != 0 {
		t.Fatalf("counters %d/%d, want 4/0", m.Positive, m.Negative)
	}
	if err := c.FeedbackFrom(ctx, "m", true, "bad\x00source"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a bad source name: %v", err)
	}
}

// Retrievals with CountAccess become accesses at the next consolidation.
func TestAccessCounting(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	if _, err := c.Put(ctx, []Memory{{ID: "a", Text: "a", Vector: unit(4, 0)}, {ID: "b", Text: "b", Vector: unit(4, 2)}}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c.Search(ctx, &SearchRequest{Vector: unit(4, 0), K: 1, CountAccess: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Search(ctx, &SearchRequest{Vector: unit(4, 0), K: 1}); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Get(ctx, "a"); m.Access != 0 {
		t.Fatalf("access %d before the flush", m.Access)
	}
	if _, err := c.Consolidate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if a, _ := c.Get(ctx, "a"); a.Access != 3 {
		t.Fatalf("access %d, want 3", a.Access)
	}
	if b, _ := c.Get(ctx, "b"); b.Access != 0 {
		t.Fatalf("b access %d, want 0", b.Access)
	}
}
