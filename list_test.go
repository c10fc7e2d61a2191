package tidemark

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// List pages through the current memories in write order; Count agrees;
// as-of times, All and the filters select as search does.
func TestListAndCount(t *testing.T) {
	clock := time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)
	db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return clock }})
	defer db.Close()
	ctx := context.Background()
	c := createTest(t, db, "kb", &CollectionOptions{Dim: 4})
	var ms []Memory
	for i := range 25 {
		ms = append(ms, Memory{ID: fmt.Sprintf("m%02d", i), Text: fmt.Sprintf("note %d", i), Vector: unit(4, i), Source: temporal.Source(1 + i%2)})
	}
	if _, err := c.Put(ctx, ms); err != nil {
		t.Fatal(err)
	}
	before := clock
	clock = clock.Add(time.Hour)
	// m03 gets a new version, m04 is retracted: the listing's current view
	// has m03 once (its new version, last) and no m04.
	if _, err := c.Put(ctx, []Memory{{ID: "m03", Text: "note 3, revised", Vector: unit(4, 3)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Retract(ctx, "m04", nil); err != nil {
		t.Fatal(err)
	}
	pages := func(req ListRequest) (ids []string, n int) {
		t.Helper()
		for {
			res, err := c.List(ctx, &req)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Memories) > max(req.Limit, 0) && req.Limit > 0 {
				t.Fatalf("a page of %d over the limit %d", len(res.Memories), req.Limit)
			}
			for _, m := range res.Memories {
				ids = append(ids, fmt.Sprintf("%s@%d", m.ID, m.Revision))
			}
			n++
			if res.Next == "" {
				return ids, n
			}
			req.Cursor = res.Next
		}
	}
	var want []string
	for i := range 25 {
		if i != 3 && i != 4 {
			want = append(want, fmt.Sprintf("m%02d@1", i))
		}
	}
	want = append(want, "m03@2")
	got, n := pages(ListRequest{Limit: 7})
	if !slices.Equal(got, want) || n != 4 {
		t.Fatalf("current, pages of 7: %d pages %v", n, got)
	}
	if cnt, err := c.Count(ctx, nil); err != nil || cnt != len(want) {
		t.Fatalf("count %d %v, want %d", cnt, err, len(want))
	}
	// As of before the changes: the 25 first versions.
	got, _ = pages(ListRequest{Limit: 10, AsOfTx: before})
	if len(got) != 25 || got[3] != "m03@1" || got[4] != "m04@1" {
		t.Fatalf("as of before: %v", got)
	}
	// All: every version, the retracted one too.
	if cnt, _ := c.Count(ctx, &ListRequest{All: true}); cnt != 26 {
		t.Fatalf("all: %d, want 26", cnt)
	}
	if cnt, _ := c.Count(ctx, &ListRequest{Sources: []temporal.Source{1}}); cnt != 12 {
		t.Fatalf("source 1: %d, want 12", cnt)
	}
	for _, bad := range []ListRequest{{Limit: -1}, {Limit: MaxListLimit + 1}, {Cursor: "nonsense"}, {Cursor: "c1.Zm9v"}} {
		if _, err := c.List(ctx, &bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
	// A cursor of another collection (another incarnation) is refused.
	res, err := c.List(ctx, &ListRequest{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	other := createTest(t, db, "other", &CollectionOptions{Dim: 4})
	if _, err := other.List(ctx, &ListRequest{Cursor: res.Next}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("another collection's cursor: %v", err)
	}
}

// A listing that runs while others write sees every memory that was
// there when it began exactly once.
func TestListUnderConcurrentWrites(t *testing.T) {
	db := openTest(t, t.TempDir(), &Options{NoSync: true})
	defer db.Close()
	ctx := context.Background()
	c := createTest(t, db, "kb", &CollectionOptions{Dim: 4})
	var ms []Memory
	for i := range 300 {
		ms = append(ms, Memory{ID: fmt.Sprintf("old%03d", i), Vector: unit(4, i)})
	}
	if _, err := c.Put(ctx, ms); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := c.Put(ctx, []Memory{{ID: fmt.Sprintf("new%04d", i), Vector: unit(4, i)}}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	seen := map[string]int{}
	req := ListRequest{Limit: 13}
	for {
		res, err := c.List(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Memories {
			seen[m.ID]++
		}
		if res.Next == "" {
			break
		}
		req.Cursor = res.Next
	}
	close(stop)
	wg.Wait()
	for i := range 300 {
		if id := fmt.Sprintf("old%03d", i); seen[id] != 1 {
			t.Fatalf("%s listed %d times", id, seen[id])
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s listed %d times", id, n)
		}
	}
}
