package tidemark

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// Put of other content under an existing id makes the id's next version:
// current answers find the new content, a query as of an earlier
// transaction time the old, History lists both with their revisions, and
// IfRevision refuses a write that expected another revision — the same
// after a log replay and after a snapshot.
func TestPutOfOtherContentIsTheNextVersion(t *testing.T) {
	dir := t.TempDir()
	clock := time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)
	opts := &Options{Clock: func() time.Time { return clock }}
	db := openTest(t, dir, opts)
	ctx := context.Background()
	c := createTest(t, db, "kb", &CollectionOptions{Dim: 4})
	put := func(m Memory) PutResult {
		t.Helper()
		res, err := c.Put(ctx, []Memory{m})
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	put(Memory{ID: "cfg", Text: "Backups run nightly.", Vector: unit(4, 0)})
	put(Memory{ID: "other", Text: "The office opens at nine.", Vector: unit(4, 2)})
	first := clock
	clock = clock.Add(time.Hour)
	if r := put(Memory{ID: "cfg", Text: "Backups run nightly.", Vector: unit(4, 0)}); r.Outcome != Unchanged {
		t.Fatalf("the same content again: %+v", r)
	}
	r := put(Memory{ID: "cfg", Text: "Backups run every six hours.", Vector: unit(4, 1)})
	if r.Outcome != Stored || !slices.Equal(r.Superseded, []string{"cfg"}) {
		t.Fatalf("other content: %+v", r)
	}
	// A writer that read revision 1 is refused; one that read 2 writes 3.
	if _, err := c.Put(ctx, []Memory{{ID: "cfg", Text: "Backups run weekly.", Vector: unit(4, 1), IfRevision: 1}}); !errors.Is(err, ErrConflict) {
		t.Fatalf("a stale expected revision: %v", err)
	}
	clock = clock.Add(time.Hour)
	put(Memory{ID: "cfg", Text: "Backups run every four hours.", Vector: unit(4, 1), IfRevision: 2})

	check := func(c *Collection, how string) {
		t.Helper()
		m, err := c.Get(ctx, "cfg")
		if err != nil {
			t.Fatal(err)
		}
		if m.Text != "Backups run every four hours." || m.Revision != 3 || !m.Visible {
			t.Fatalf("%s: Get: %q revision %d visible %v", how, m.Text, m.Revision, m.Visible)
		}
		for _, plan := range []Plan{PlanExact, PlanANN} {
			res, err := c.Search(ctx, &SearchRequest{Vector: unit(4, 1), K: 5, Plan: plan})
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, h := range res.Hits {
				if h.ID == "cfg" {
					texts = append(texts, h.Memory.Text)
				}
			}
			if !slices.Equal(texts, []string{"Backups run every four hours."}) {
				t.Fatalf("%s, plan %v: current hits of cfg %q", how, plan, texts)
			}
			res, err = c.Search(ctx, &SearchRequest{Vector: unit(4, 0), K: 1, Plan: plan, AsOfTx: first})
			if err != nil || len(res.Hits) != 1 || res.Hits[0].Memory.Text != "Backups run nightly." || res.Hits[0].Memory.Revision != 1 {
				t.Fatalf("%s, plan %v: as of the first write: %+v %v", how, plan, res, err)
			}
		}
		h, err := c.History(ctx, "cfg")
		if err != nil {
			t.Fatal(err)
		}
		var revs []int
		for _, v := range h {
			if v.ID == "cfg" {
				revs = append(revs, v.Revision)
			}
		}
		if !slices.Equal(revs, []int{1, 2, 3}) {
			t.Fatalf("%s: history revisions %v", how, revs)
		}
		checkConsistent(t, c.db)
	}
	check(c, "live")
	afterReopening(t, db, dir, opts, "kb", func(c *Collection, how string) {
		check(c, how)
		if _, err := c.Put(ctx, []Memory{{ID: "cfg", Text: "x", Vector: unit(4, 1), IfRevision: 2}}); !errors.Is(err, ErrConflict) {
			t.Fatalf("%s: a stale expected revision: %v", how, err)
		}
	})
}

// Writers racing on one id with the revision they read: exactly one of
// each round wins, the others are told ErrConflict, and nothing is lost.
func TestIfRevisionUnderConcurrentWriters(t *testing.T) {
	db := openTest(t, t.TempDir(), &Options{NoSync: true})
	defer db.Close()
	ctx := context.Background()
	c := createTest(t, db, "kb", &CollectionOptions{Dim: 4})
	if _, err := c.Put(ctx, []Memory{{ID: "doc", Text: "v0", Vector: unit(4, 0)}}); err != nil {
		t.Fatal(err)
	}
	for round := range 10 {
		m, err := c.Get(ctx, "doc")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		won, conflicts := 0, 0
		for w := range 4 {
			wg.Go(func() {
				_, err := c.Put(ctx, []Memory{{ID: "doc", Text: string(rune('a'+w)) + " in round " + string(rune('0'+round)),
					Vector: unit(4, w), IfRevision: m.Revision}})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case errors.Is(err, ErrConflict):
					conflicts++
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if won != 1 || conflicts != 3 {
			t.Fatalf("round %d: %d writers won, %d conflicts; want 1 and 3", round, won, conflicts)
		}
		if got, _ := c.Get(ctx, "doc"); got.Revision != m.Revision+1 {
			t.Fatalf("round %d: revision %d after %d", round, got.Revision, m.Revision)
		}
	}
	checkConsistent(t, db)
}

// Retracting the latest version of an id withdraws the id: an earlier
// version of it does not come back, even when the versions share a fact
// key (the text collection derives one), while a retracted update of
// another id brings back what it replaced.
func TestRetractingAnIDsLatestVersionWithdrawsTheID(t *testing.T) {
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	ctx := context.Background()
	c := createTest(t, db, "kb", &CollectionOptions{Dim: 64, Embedder: "hashing"})
	if _, err := c.Put(ctx, []Memory{{ID: "limit", Text: "The API rate limit is 100 requests per minute."}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, []Memory{{ID: "limit", Text: "The API rate limit is 250 requests per minute."}}); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Get(ctx, "limit"); m.Revision != 2 || m.KeyRule == "" {
		t.Fatalf("the second version: revision %d, key rule %q", m.Revision, m.KeyRule)
	}
	res, err := c.Retract(ctx, "limit", nil)
	if err != nil || len(res.Restored) != 0 {
		t.Fatalf("retract: %+v %v", res, err)
	}
	if n, _ := c.Count(ctx, nil); n != 0 {
		t.Fatalf("%d current memories after the id was retracted, want 0", n)
	}
	checkConsistent(t, db)
}

// A purge erases every version of the id: the earlier content is gone
// too, from the rows and, after a checkpoint, from every file.
func TestPurgeErasesEveryVersion(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir, nil)
	defer db.Close()
	ctx := context.Background()
	c := createTest(t, db, "kb", &CollectionOptions{Dim: 4})
	for _, text := range []string{"first draft mentions tangerine-4471", "second draft", "third draft"} {
		if _, err := c.Put(ctx, []Memory{{ID: "doc", Text: text, Vector: unit(4, len(text))}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Retract(ctx, "doc", &RetractOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	c.mu.RLock()
	for j := range c.rows.len() {
		if r := c.rows.at(j); !r.purged || r.mem.Text != "" {
			t.Errorf("row %d (%s, revision %d): purged %v, text %q", j, r.mem.ID, max(1, r.revision), r.purged, r.mem.Text)
		}
	}
	c.mu.RUnlock()
	if n, _ := c.Count(ctx, &ListRequest{All: true}); n != 0 {
		t.Fatalf("%d versions listed after the purge", n)
	}
	if err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if bytes.Contains(b, []byte("tangerine-4471")) {
			t.Fatalf("%s still holds the first version's text", e.Name())
		}
	}
	checkConsistent(t, db)
}

// An id's earlier version leaves its fact key's chain when the id is
// written again: rewriting two statements of one fact with their valid
// times keeps the later one current and the earlier one true as of its
// time (the earlier versions, recorded now, no longer compete).
func TestNewVersionsOfKeyedMemoriesTakeTheirOwnPlace(t *testing.T) {
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	ctx := context.Background()
	c := createTest(t, db, "kb", &CollectionOptions{Dim: 64, Embedder: "hashing"})
	a, b := "The API rate limit is 100 requests per minute.", "The API rate limit is 250 requests per minute."
	for _, batch := range [][]Memory{
		{{ID: "jan", Text: a}, {ID: "jun", Text: b}},
		{{ID: "jan", Text: a, ValidFrom: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}, {ID: "jun", Text: b, ValidFrom: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)}},
	} {
		if _, err := c.Put(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	if got := searchIDs(t, c, &SearchRequest{Text: "What is the API rate limit?", K: 1}); !slices.Equal(got, []string{"jun"}) {
		t.Fatalf("current: %v", got)
	}
	if got := searchIDs(t, c, &SearchRequest{Text: "What is the API rate limit?", K: 1, AsOf: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)}); !slices.Equal(got, []string{"jan"}) {
		t.Fatalf("as of March 2025: %v", got)
	}
	checkConsistent(t, db)
}
