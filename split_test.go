package tidemark

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tidemark/tidemark/internal/links"
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// The example: a memory stating two facts is split at Put; an
// update of one fact supersedes only its sibling; the other stays current;
// the evidence stays reachable; all of it survives replay and a snapshot.
func TestSplitAtPut(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openTest(t, dir, &Options{CheckpointRecords: -1})
	c := createTest(t, db, "notes", &CollectionOptions{Dim: 256, Embedder: "hashing"})
	const text = "The API rate limit is 100 requests per minute and requests time out after 30 seconds."
	res, err := c.Put(ctx, []Memory{{ID: "m1", Text: text, ValidFrom: day(2025, 1, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Outcome != Stored || !slices.Equal(res[0].Split, []string{"m1#1", "m1#2"}) {
		t.Fatalf("put: %+v, want m1 stored and split into m1#1, m1#2", res)
	}
	res, err = c.Put(ctx, []Memory{{ID: "m2", Text: "The API rate limit is 250 requests per minute.", ValidFrom: day(2025, 6, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res[0].Superseded, []string{"m1#1"}) {
		t.Fatalf("update: %+v, want m1#1 superseded", res)
	}
	check := func(db *DB) {
		t.Helper()
		c, err := db.Collection("notes")
		if err != nil {
			t.Fatal(err)
		}
		orig, _ := c.Get(ctx, "m1")
		s1, _ := c.Get(ctx, "m1#1")
		s2, _ := c.Get(ctx, "m1#2")
		switch {
		case orig.Visible || orig.Status.String() != "archived" || !slices.Equal(orig.SplitInto, []string{"m1#1", "m1#2"}) || orig.SplitRule != "rules":
			t.Fatalf("original: visible %v, status %v, split into %v by %q", orig.Visible, orig.Status, orig.SplitInto, orig.SplitRule)
		case len(orig.Beliefs) != 1 || !orig.Beliefs[0].RetiredAt.Equal(orig.Beliefs[0].RecordedAt):
			t.Fatalf("original's beliefs %+v: split at Put, it was never believed on its own", orig.Beliefs)
		case s1.Text != "The API rate limit is 100 requests per minute" || s1.SplitFrom != "m1" || s1.SupersededBy != "m2" || s1.Visible:
			t.Fatalf("sibling 1: %q from %q, superseded by %q, visible %v", s1.Text, s1.SplitFrom, s1.SupersededBy, s1.Visible)
		case s2.Text != "requests time out after 30 seconds." || s2.SplitFrom != "m1" || !s2.Visible || s2.Subject == "" || !slices.Equal(s2.Supersedes, []string{"m1"}):
			t.Fatalf("sibling 2: %q from %q, visible %v, key %q, supersedes %v", s2.Text, s2.SplitFrom, s2.Visible, s2.Subject, s2.Supersedes)
		case !s1.ValidFrom.Equal(day(2025, 1, 1)) || !s2.ValidFrom.Equal(day(2025, 1, 1)):
			t.Fatalf("siblings' valid-from %v, %v: they hold the original's window", s1.ValidFrom, s2.ValidFrom)
		}
		// Current answers: the new limit and the untouched timeout, never
		// the old limit or the original's text.
		for _, q := range []string{"What is the API rate limit?", "When do requests time out?"} {
			got := hitIDs(t, c, &SearchRequest{Text: q, K: 10})
			if slices.Contains(got, "m1#1") || slices.Contains(got, "m1") || !slices.Contains(got, "m2") || !slices.Contains(got, "m1#2") {
				t.Fatalf("%q → %v, want m2 and m1#2 only", q, got)
			}
		}
		if got := hitIDs(t, c, &SearchRequest{Text: "When do requests time out?", K: 1}); !slices.Equal(got, []string{"m1#2"}) {
			t.Fatalf("timeout query → %v, want the untouched sibling m1#2", got)
		}
		// As of March 2025 the old limit held.
		got := hitIDs(t, c, &SearchRequest{Text: "What is the API rate limit?", K: 1, AsOf: day(2025, 3, 1)})
		if !slices.Equal(got, []string{"m1#1"}) {
			t.Fatalf("as of 2025-03-01 → %v, want m1#1", got)
		}
		// The lineage: the update's history reaches the evidence and all
		// its siblings.
		h, err := c.History(ctx, "m2")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range h {
			ids = append(ids, m.ID)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, []string{"m1", "m1#1", "m1#2", "m2"}) {
			t.Fatalf("history of m2: %v", ids)
		}
		audit, _ := c.Audit(ctx, 0)
		var splits []string
		for _, a := range audit {
			if a.Rule == RuleSplit {
				splits = append(splits, a.ID+">"+a.Other+":"+a.Reason)
			}
		}
		if !slices.Equal(splits, []string{"m1>m1#1:SPLIT_RULES", "m1>m1#2:SPLIT_RULES"}) {
			t.Fatalf("split audit %v", splits)
		}
		if err := c.checkLinks(); err != nil {
			t.Fatal(err)
		}
		if !c.links.Linked(links.Sibling) {
			t.Fatal("no sibling links")
		}
	}
	check(db)
	// A retry of the first Put changes nothing, splits nothing again, and
	// says what the first split made.
	res, err = c.Put(ctx, []Memory{{ID: "m1", Text: text, ValidFrom: day(2025, 1, 1)}})
	if err != nil || res[0].Outcome != Unchanged || !slices.Equal(res[0].Split, []string{"m1#1", "m1#2"}) {
		t.Fatalf("retry: %+v %v", res, err)
	}
	if n, _ := c.Len(); n != 4 {
		t.Fatalf("%d memories after the retry, want 4", n)
	}
	db.wal.Close() // a crash: recovery replays the log
	db = openTest(t, dir, nil)
	check(db)
	if err := db.Close(); err != nil { // a snapshot
		t.Fatal(err)
	}
	db = openTest(t, dir, nil)
	defer db.Close()
	if db.Recovery().Replayed != 0 {
		t.Fatalf("recovery %+v: want everything from the snapshot", db.Recovery())
	}
	check(db)
}

// What must stay whole does: narrative, explicit keys, vectors given by
// the caller, a collection that does not split, a sibling name taken.
func TestSplitKeepsWhole(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c := createTest(t, db, "notes", &CollectionOptions{Dim: 64, Embedder: "hashing"})
	off := createTest(t, db, "off", &CollectionOptions{Dim: 64, Embedder: "hashing", Split: SplitOff})
	const two = "The staging database runs on port 5433; the cache TTL is 60 seconds."
	vec := unit(64, 3)
	if _, err := c.Put(ctx, []Memory{{ID: "taken#2", Text: "A memory whose id looks like a sibling's.", Vector: vec}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c *Collection
		m Memory
	}{
		{c, Memory{ID: "story", Text: "Ana passed the ball to Marco, Marco dribbled past two defenders, and the keeper watched the shot curl in."}},
		{c, Memory{ID: "dialogue", Text: "User: what is the limit? Assistant: The limit is 100 and the timeout is 30 seconds."}},
		{c, Memory{ID: "pronoun", Text: "The warehouse is in Leeds. It has four loading bays."}},
		{c, Memory{ID: "shared", Text: "The clinic accepts Visa and the clinic accepts Mastercard."}},
		{c, Memory{ID: "keyed", Text: two, Subject: "staging", Relation: "config"}},
		{c, Memory{ID: "vector", Text: two, Vector: vec}},
		{c, Memory{ID: "taken", Text: two}},
		{off, Memory{ID: "off", Text: two}},
	} {
		res, err := tc.c.Put(ctx, []Memory{tc.m})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Split != nil {
			t.Errorf("%s was split into %v", tc.m.ID, res[0].Split)
		}
		if m, _ := tc.c.Get(ctx, tc.m.ID); !m.Visible || m.SplitInto != nil {
			t.Errorf("%s: visible %v, split into %v; want it whole on the surface", tc.m.ID, m.Visible, m.SplitInto)
		}
	}
	// Such a text splits once the names are free (the same text would be
	// a duplicate of "vector", and reinforce it).
	res, err := c.Put(ctx, []Memory{{ID: "free", Text: "The staging database runs on port 5434; the cache TTL is 90 seconds."}})
	if err != nil || len(res[0].Split) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	if err := c.checkLinks(); err != nil {
		t.Fatal(err)
	}
}

// A sibling that restates a current memory folds into it like any
// restatement: that memory gains no false sibling or version link, and
// the split lists only the siblings stored.
func TestSplitSiblingRestates(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c := createTest(t, db, "notes", &CollectionOptions{Dim: 64, Embedder: "hashing"})
	if _, err := c.Put(ctx, []Memory{{ID: "e", Text: "The cache TTL is 60 seconds."}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Put(ctx, []Memory{{ID: "x", Text: "The staging database runs on port 5433. The cache TTL is 60 seconds."}})
	if err != nil || !slices.Equal(res[0].Split, []string{"x#1"}) {
		t.Fatalf("%+v %v: want only x#1 stored as a sibling", res, err)
	}
	e, _ := c.Get(ctx, "e")
	if len(e.Supersedes) != 0 || !e.Visible || !slices.Contains(e.Aliases, "x#2") {
		t.Fatalf("e: supersedes %v, visible %v, aliases %v", e.Supersedes, e.Visible, e.Aliases)
	}
	x, _ := c.Get(ctx, "x")
	if !slices.Equal(x.SplitInto, []string{"x#1"}) || x.Visible {
		t.Fatalf("x: split into %v, visible %v", x.SplitInto, x.Visible)
	}
	// A text whose every statement restates a current memory is archived
	// with no sibling of its own, and is no orphan.
	res, err = c.Put(ctx, []Memory{{ID: "y", Text: "The staging database runs on port 5433; the cache TTL is 60 seconds."}})
	if err != nil || res[0].Split != nil {
		t.Fatalf("%+v %v", res, err)
	}
	if err := c.checkLinks(); err != nil {
		t.Fatal(err)
	}
}

// A memory the rules keep whole is split when an update restates one of
// its statements with one value changed: the update is the evidence. The
// update supersedes that statement's sibling; the other stays current.
func TestSplitOnUpdate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openTest(t, dir, nil)
	c := createTest(t, db, "notes", &CollectionOptions{Dim: 256, Embedder: "hashing"})
	// Nothing in it keys and "totals" is a verb the lists lack: whole.
	const whole = "The crew loads the truck at 6, then the driver leaves the depot at 7."
	res, err := c.Put(ctx, []Memory{{ID: "plan", Text: whole}, {ID: "other", Text: "The canteen opens at noon."}})
	if err != nil || res[0].Split != nil {
		t.Fatalf("%+v %v: want it kept whole", res, err)
	}
	res, err = c.Put(ctx, []Memory{{ID: "upd", Text: "The driver leaves the depot at 8."}})
	if err != nil || len(res) != 1 || !slices.Equal(res[0].Superseded, []string{"plan#2"}) {
		t.Fatalf("update: %+v %v: want plan split and plan#2 superseded", res, err)
	}
	check := func(db *DB) {
		t.Helper()
		c, _ := db.Collection("notes")
		p, _ := c.Get(ctx, "plan")
		if p.Visible || p.SplitRule != "update" || !slices.Equal(p.SplitInto, []string{"plan#1", "plan#2"}) {
			t.Fatalf("plan: visible %v, split into %v by %q", p.Visible, p.SplitInto, p.SplitRule)
		}
		s1, _ := c.Get(ctx, "plan#1")
		if !s1.Visible || s1.Text != "The crew loads the truck at 6" {
			t.Fatalf("plan#1: %q visible %v", s1.Text, s1.Visible)
		}
		got := hitIDs(t, c, &SearchRequest{Text: "When does the driver leave the depot?", K: 10})
		if slices.Contains(got, "plan#2") || slices.Contains(got, "plan") || !slices.Contains(got, "upd") || !slices.Contains(got, "plan#1") {
			t.Fatalf("driver → %v", got)
		}
		audit, _ := c.Audit(ctx, 0)
		n := 0
		for _, a := range audit {
			if a.Rule == RuleSplit && a.Reason == "SPLIT_UPDATE" {
				n++
			}
		}
		if n != 2 {
			t.Fatalf("audit %+v", audit)
		}
		if err := c.checkLinks(); err != nil {
			t.Fatal(err)
		}
	}
	check(db)
	db.wal.Close()
	db = openTest(t, dir, nil)
	defer db.Close()
	check(db)
}
