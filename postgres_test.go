package tidemark_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The engine answers as the reference memory does with its ledger in
// PostgreSQL, on the node that wrote it and on a second node that loaded
// it from the database.
func TestEngineMatchesReferencePostgres(t *testing.T) {
	engineMatchesReference(t, pgtest.Database)
}

func openNode(t testing.TB, url string) *tidemark.DB {
	t.Helper()
	db, err := tidemark.OpenPostgres(context.Background(), url, t.TempDir(), &tidemark.Options{CheckpointRecords: -1, CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func vec8(hot int) []float32 {
	v := make([]float32, 8)
	v[hot%8] = 1
	v[(hot+3)%8] = 0.25
	return v
}

// collOn returns the collection on db once db has applied seq.
func collOn(t testing.TB, db *tidemark.DB, seq uint64, name string) *tidemark.Collection {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.WaitApplied(ctx, seq); err != nil {
		t.Fatal(err)
	}
	c, err := db.Collection(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// notesOnTwoNodes opens two nodes of the database at url, creates the
// collection "notes" through the first, puts memory "m1" (text) there,
// and returns the nodes and the collection on each, once the second has
// applied the put.
func notesOnTwoNodes(t testing.TB, url, text string) (a, b *tidemark.DB, ca, cb *tidemark.Collection) {
	t.Helper()
	a, b = openNode(t, url), openNode(t, url)
	ca, err := a.CreateCollection(context.Background(), "notes", &tidemark.CollectionOptions{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Put(context.Background(), []tidemark.Memory{{ID: "m1", Text: text, Vector: vec8(1)}}); err != nil {
		t.Fatal(err)
	}
	return a, b, ca, collOn(t, b, a.Seq(), "notes")
}

// visible returns the ids of the collection's current memories.
func visible(t testing.TB, c *tidemark.Collection) []string {
	t.Helper()
	res, err := c.List(context.Background(), &tidemark.ListRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range res.Memories {
		ids = append(ids, m.ID)
	}
	return ids
}

// Write on A, read on B: with the sequence A's write returned, at once;
// without it, within the follower's poll interval.
func TestPostgresTwoNodes(t *testing.T) {
	ctx := context.Background()
	a, b, ca, cb := notesOnTwoNodes(t, pgtest.Database(t), "first")
	hits, err := cb.Search(ctx, &tidemark.SearchRequest{Vector: vec8(1), K: 1})
	if err != nil || len(hits.Hits) != 1 || hits.Hits[0].ID != "m1" {
		t.Fatalf("B after WaitApplied(A.Seq()): %+v, %v", hits, err)
	}
	// Without the sequence: B's follower finds it on its own.
	if _, err := ca.Put(ctx, []tidemark.Memory{{ID: "m2", Text: "second", Vector: vec8(2)}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		if _, err := cb.Get(ctx, "m2"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("m2 not on B 2 s after A acknowledged it: %+v", b.Replication())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// And back: B writes, A reads.
	if _, err := cb.Put(ctx, []tidemark.Memory{{ID: "m3", Text: "third", Vector: vec8(3)}}); err != nil {
		t.Fatal(err)
	}
	if got := visible(t, collOn(t, a, b.Seq(), "notes")); len(got) != 3 {
		t.Fatalf("A sees %v", got)
	}
	r := b.Replication()
	if r.Store != "postgres" || r.Applied != b.Seq() || r.Error != "" {
		t.Fatalf("B's replication: %+v", r)
	}
	// A sequence never written times out as unavailable.
	wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := b.WaitApplied(wctx, b.Seq()+100); !errors.Is(err, tidemark.ErrUnavailable) {
		t.Fatalf("WaitApplied of a future change: %v", err)
	}
}

// Both nodes supersede one fact key at the same moment, many times over:
// the database orders the writes, and both nodes end with exactly one
// current value, the same one, the rule's winner.
func TestPostgresConcurrentSupersession(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	a, b := openNode(t, url), openNode(t, url)
	if _, err := a.CreateCollection(ctx, "facts", &tidemark.CollectionOptions{Dim: 8}); err != nil {
		t.Fatal(err)
	}
	ca := collOn(t, a, a.Seq(), "facts")
	cb := collOn(t, b, a.Seq(), "facts")
	valid := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const rounds = 20
	for round := range rounds {
		var wg sync.WaitGroup
		for n, c := range []*tidemark.Collection{ca, cb} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.Put(ctx, []tidemark.Memory{{ID: fmt.Sprintf("r%d-%d", round, n), Text: "rate limit",
					Vector: vec8(round), Subject: "api", Relation: "rate limit", Object: fmt.Sprint(100*round + n),
					ValidFrom: valid.AddDate(0, 0, round)}})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	seq := max(a.Seq(), b.Seq())
	va := visible(t, collOn(t, a, seq, "facts"))
	vb := visible(t, collOn(t, b, seq, "facts"))
	if len(va) != 1 || len(vb) != 1 || va[0] != vb[0] {
		t.Fatalf("current values: A %v, B %v; want one, the same", va, vb)
	}
	// The winner is the rule's: the two writes of the last round share a
	// valid time, so the later recorded (then the larger id) wins; either
	// way it is one of the last round's.
	h, err := ca.FactHistory(ctx, "api", "rate limit")
	if err != nil {
		t.Fatal(err)
	}
	if last := h[len(h)-1].ID; last != va[0] || len(h) != 2*rounds {
		t.Fatalf("history ends with %s of %d, current %s", last, len(h), va[0])
	}
	// The database's projection agrees: one open belief, the same one.
	if open := openBeliefs(t, url, "facts"); len(open) != 1 || open[0] != va[0] {
		t.Fatalf("open beliefs in PostgreSQL: %v, current on the nodes: %s", open, va[0])
	}
	// Retracting it reopens the one before; a checkpoint's reconcile
	// changes nothing then.
	if _, err := cb.Retract(ctx, va[0], nil); err != nil {
		t.Fatal(err)
	}
	now := visible(t, collOn(t, a, b.Seq(), "facts"))
	if len(now) != 1 || now[0] == va[0] {
		t.Fatalf("after retracting %s, current: %v", va[0], now)
	}
	if open := openBeliefs(t, url, "facts"); len(open) != 1 || open[0] != now[0] {
		t.Fatalf("open beliefs after the retraction: %v, want [%s]", open, now[0])
	}
	if err := a.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if open := openBeliefs(t, url, "facts"); len(open) != 1 || open[0] != now[0] {
		t.Fatalf("open beliefs after a reconcile: %v, want [%s]", open, now[0])
	}
	if r := a.Replication(); r.ProjectionError != "" || r.ProjectionFailures != 0 {
		t.Fatalf("A's projection: %+v", r)
	}
}

// openBeliefs returns the memory ids of the collection's open beliefs in
// the database's projection.
func openBeliefs(t testing.TB, url, coll string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT memory_id FROM tidemark_beliefs WHERE collection = $1 AND upper_inf(tx) ORDER BY memory_id`, coll)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// PostgreSQL stops under a node: writes fail clearly (ErrUnavailable),
// searches go on from the state last applied and say how stale it is;
// when it is back, writes go through again and the other node catches up.
func TestPostgresRestart(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Start(t)
	a, b, ca, cb := notesOnTwoNodes(t, srv.Database(t), "before")
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := ca.Put(wctx, []tidemark.Memory{{ID: "m2", Text: "during", Vector: vec8(2)}})
	cancel()
	if !errors.Is(err, tidemark.ErrUnavailable) {
		t.Fatalf("a write with PostgreSQL down: %v, want ErrUnavailable", err)
	}
	if res, err := cb.Search(ctx, &tidemark.SearchRequest{Vector: vec8(1), K: 1}); err != nil || len(res.Hits) != 1 {
		t.Fatalf("a search on B with PostgreSQL down: %+v, %v", res, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for b.Replication().Error == "" {
		if time.Now().After(deadline) {
			t.Fatalf("B does not say it lost the database: %+v", b.Replication())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		_, err := ca.Put(ctx, []tidemark.Memory{{ID: "m3", Text: "after", Vector: vec8(3)}})
		if err == nil {
			break
		}
		if !errors.Is(err, tidemark.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("a write after PostgreSQL came back: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	got := visible(t, collOn(t, b, a.Seq(), "notes"))
	if len(got) != 2 || got[0] != "m1" || got[1] != "m3" {
		t.Fatalf("B after the restart sees %v, want [m1 m3]", got)
	}
	deadline = time.Now().Add(5 * time.Second)
	for b.Replication().Error != "" {
		if time.Now().After(deadline) {
			t.Fatalf("B still reports an error: %+v", b.Replication())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A checkpoint stores a snapshot in the database; a node that joins later
// starts from it and the changes after it, while writes go on; a purge is
// gone from every change and snapshot the database keeps once two
// checkpoints have passed.
func TestPostgresSnapshotJoinPurge(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	a := openNode(t, url)
	ca, err := a.CreateCollection(ctx, "notes", &tidemark.CollectionOptions{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	put := func(c *tidemark.Collection, id, text string, hot int) {
		t.Helper()
		if _, err := c.Put(ctx, []tidemark.Memory{{ID: id, Text: text, Vector: vec8(hot)}}); err != nil {
			t.Fatal(err)
		}
	}
	put(ca, "secret", "the launch code is 0000-SECRET-7731", 1)
	for i := range 20 {
		put(ca, fmt.Sprint("n", i), fmt.Sprint("note ", i), i)
	}
	if err := a.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	// A node joins while A keeps writing.
	stop := make(chan struct{})
	done := make(chan error)
	go func() {
		i := 0
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := ca.Put(ctx, []tidemark.Memory{{ID: fmt.Sprint("w", i), Text: "while joining", Vector: vec8(i)}}); err != nil {
				done <- err
				return
			}
			i++
		}
	}()
	time.Sleep(50 * time.Millisecond)
	c := openNode(t, url)
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c.Recovery().SnapshotSeq == 0 {
		t.Fatalf("the joining node did not start from the stored snapshot: %+v", c.Recovery())
	}
	cc := collOn(t, c, a.Seq(), "notes")
	if va, vc := visible(t, ca), visible(t, cc); len(va) != len(vc) || len(va) < 22 {
		t.Fatalf("A has %d current memories, the new node %d", len(va), len(vc))
	}
	if _, err := ca.Retract(ctx, "secret", &tidemark.RetractOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var n int
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		err = conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM tidemark_changes WHERE position('0000-SECRET-7731'::bytea in payload) > 0)
			+ (SELECT count(*) FROM tidemark_snapshot_parts WHERE position('0000-SECRET-7731'::bytea in data) > 0)
			+ (SELECT count(*) FROM tidemark_memories WHERE text LIKE '%0000-SECRET-7731%')`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count() == 0 {
		t.Fatal("the test is blind: the text was never found in the database")
	}
	for range 2 {
		put(ca, fmt.Sprint("x", a.Seq()), "after the purge", 5)
		if err := a.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(); n != 0 {
		t.Fatalf("the purged text is still in %d rows after two checkpoints", n)
	}
	if _, err := collOn(t, c, a.Seq(), "notes").Get(ctx, "secret"); !errors.Is(err, tidemark.ErrNotFound) {
		t.Fatalf("the purged memory on the other node: %v", err)
	}
	// The memories table holds every stored version as of the last
	// checkpoint: a NUL in a text and metadata included.
	if _, err := ca.Put(ctx, []tidemark.Memory{{ID: "nul", Text: "a\x00b", Vector: vec8(7), Metadata: tidemark.Metadata{"team": "ops\x00"}}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := ca.List(ctx, &tidemark.ListRequest{All: true, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows, visibleRows int
	var seq int64
	var text, team string
	if err := conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE visible), max(seq) FROM tidemark_memories WHERE collection = 'notes'`).Scan(&rows, &visibleRows, &seq); err != nil {
		t.Fatal(err)
	}
	if rows != len(all.Memories) || visibleRows != len(visible(t, ca)) || uint64(seq) != a.Seq() {
		t.Fatalf("tidemark_memories: %d rows (%d visible) as of %d; the ledger: %d versions (%d visible) at %d",
			rows, visibleRows, seq, len(all.Memories), len(visible(t, ca)), a.Seq())
	}
	if err := conn.QueryRow(ctx, `SELECT text, metadata->>'team' FROM tidemark_memories WHERE id = 'nul'`).Scan(&text, &team); err != nil || text != "a\uFFFDb" || team != "ops\uFFFD" {
		t.Fatalf("the NUL memory in SQL: %q, %q, %v", text, team, err)
	}
}

// ExampleOpenPostgres has no Output line (it needs a server): this runs it
// on one and checks what it prints.
func TestExampleOpenPostgresRuns(t *testing.T) {
	t.Setenv("TIDEMARK_PG_URL", pgtest.Database(t))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	func() {
		defer func() { os.Stdout = stdout }()
		ExampleOpenPostgres()
	}()
	w.Close()
	out, _ := io.ReadAll(r)
	if string(out) != "written on A <nil> 0\n" {
		t.Fatalf("ExampleOpenPostgres printed %q", out)
	}
}

// Plain text, no keys, and no key the extractor finds: the update is
// recognised only against the stored statement ("enabled" → "disabled",
// a one-span change after the verb). Written through B after the fact was
// written through A, it supersedes it — B catches up before it compares,
// even with its follower paused — and both nodes serve only the new
// value.
func TestPostgresPlainTextAcrossNodes(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	a, b := openNode(t, url), openNode(t, url)
	if _, err := a.CreateCollection(ctx, "ops", &tidemark.CollectionOptions{Dim: 128, Embedder: "hashing"}); err != nil {
		t.Fatal(err)
	}
	ca, cb := collOn(t, a, a.Seq(), "ops"), collOn(t, b, a.Seq(), "ops")
	// B does not follow the log on its own: it learns of A's write only by
	// catching up before it writes.
	tidemark.PauseFollower(b, true)
	if _, err := ca.Put(ctx, []tidemark.Memory{{ID: "mfa-1", Text: "Two-factor authentication is enabled for all contractor accounts."}}); err != nil {
		t.Fatal(err)
	}
	res, err := cb.Put(ctx, []tidemark.Memory{{ID: "mfa-2", Text: "Two-factor authentication is disabled for all contractor accounts."}})
	if err != nil || len(res) != 1 || len(res[0].Superseded) != 1 || res[0].Superseded[0] != "mfa-1" {
		t.Fatalf("the update through B: %+v, %v", res, err)
	}
	tidemark.PauseFollower(b, false)
	seq := max(a.Seq(), b.Seq())
	for n, db := range []*tidemark.DB{a, b} {
		got := visible(t, collOn(t, db, seq, "ops"))
		if len(got) != 1 || got[0] != "mfa-2" {
			t.Fatalf("node %d serves %v, want only [mfa-2]", n, got)
		}
	}
}

// A node that lags more than a snapshot interval finds the log trimmed
// past it: it says it needs a restart (it cannot catch up), and a node
// started then loads the newest snapshot and has everything.
func TestPostgresNodeBehindTrimmedLog(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	a, b := openNode(t, url), openNode(t, url)
	ca, err := a.CreateCollection(ctx, "notes", &tidemark.CollectionOptions{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	collOn(t, b, a.Seq(), "notes")
	tidemark.PauseFollower(b, true)
	for round := range 2 {
		for i := range 3 {
			if _, err := ca.Put(ctx, []tidemark.Memory{{ID: fmt.Sprint("r", round, "-", i), Text: fmt.Sprint("note ", round, "-", i), Vector: vec8(3*round + i)}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if b.Replication().NeedsRestart {
		t.Fatal("B says it needs a restart before it read the log")
	}
	tidemark.PauseFollower(b, false)
	for deadline := time.Now().Add(10 * time.Second); !b.Replication().NeedsRestart; {
		if time.Now().After(deadline) {
			t.Fatalf("B never noticed the trimmed log: %+v", b.Replication())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := b.Replication(); r.Error == "" || r.Applied >= a.Seq() {
		t.Fatalf("B's replication: %+v", r)
	}
	c := openNode(t, url)
	if got := visible(t, collOn(t, c, a.Seq(), "notes")); len(got) != 6 {
		t.Fatalf("a node started after the trim has %v", got)
	}
}

// Purging a fact's current belief removes its rows from the database's
// projection (text and all) and opens the belief it had superseded.
func TestPostgresPurgeKeyedBelief(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	a := openNode(t, url)
	c, err := a.CreateCollection(ctx, "facts", &tidemark.CollectionOptions{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	for i, obj := range []string{"100", "250"} {
		if _, err := c.Put(ctx, []tidemark.Memory{{ID: "v" + obj, Text: "limit", Vector: vec8(i), Subject: "api", Relation: "limit",
			Object: obj, ValidFrom: time.Date(2025, time.Month(1+i), 1, 0, 0, 0, 0, time.UTC)}}); err != nil {
			t.Fatal(err)
		}
	}
	if open := openBeliefs(t, url, "facts"); len(open) != 1 || open[0] != "v250" {
		t.Fatalf("open beliefs %v, want [v250]", open)
	}
	if _, err := c.Retract(ctx, "v250", &tidemark.RetractOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if open := openBeliefs(t, url, "facts"); len(open) != 1 || open[0] != "v100" {
		t.Fatalf("open beliefs after the purge %v, want [v100]", open)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM tidemark_beliefs WHERE memory_id = 'v250' OR object = '250'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d projection rows of the purged memory (%v)", n, err)
	}
}

// Two nodes consolidate one collection at the same moment (the runs take
// turns on the database's lock for the collection, whose exclusion
// pgstore's TestLock checks): both succeed, the edits of each reach the
// other, and the nodes end with the same memories current and no orphan.
func TestPostgresConsolidateTwoNodes(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	a, b := openNode(t, url), openNode(t, url)
	ca, err := a.CreateCollection(ctx, "ops", &tidemark.CollectionOptions{Dim: 128, Embedder: "hashing"})
	if err != nil {
		t.Fatal(err)
	}
	var batch []tidemark.Memory
	for i := range 40 {
		batch = append(batch, tidemark.Memory{ID: fmt.Sprint("m", i), Text: fmt.Sprintf("The deploy of service %d runs every night at %d o'clock.", i/2, 1+i/2)})
	}
	if _, err := ca.Put(ctx, batch); err != nil {
		t.Fatal(err)
	}
	cb := collOn(t, b, a.Seq(), "ops")
	var wg sync.WaitGroup
	reps := make([]tidemark.ConsolidationReport, 2)
	for i, c := range []*tidemark.Collection{ca, cb} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.Consolidate(ctx, nil)
			if err != nil {
				t.Error(err)
			}
			reps[i] = r
		}()
	}
	wg.Wait()
	t.Logf("runs: %+v", reps)
	edits := func(r tidemark.ConsolidationReport) int {
		return r.Promoted + r.Dormant + r.Reactivated + r.Expired + r.Contradictions + r.Merged + r.Dependencies + r.Split + r.Updated
	}
	if edits(reps[0])+edits(reps[1]) == 0 {
		t.Fatal("the test is blind: neither run edited anything")
	}
	seq := max(a.Seq(), b.Seq())
	va, vb := visible(t, collOn(t, a, seq, "ops")), visible(t, collOn(t, b, seq, "ops"))
	if !slices.Equal(va, vb) {
		t.Fatalf("after consolidating on both: A %v, B %v", va, vb)
	}
	if len(ca.Orphans()) != 0 || len(cb.Orphans()) != 0 {
		t.Fatalf("orphans: A %v, B %v", ca.Orphans(), cb.Orphans())
	}
}
