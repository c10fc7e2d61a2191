package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tidemark/tidemark/internal/pgstore"
	"github.com/tidemark/tidemark/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func open(t *testing.T, url, node string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, node)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Writers on two stores of one database get one gap-free sequence, and
// every reader sees the changes in it, each once, in order.
func TestAppendGapFree(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	a, b := open(t, url, "a"), open(t, url, "b")
	if a.ClusterID() == "" || a.ClusterID() != b.ClusterID() {
		t.Fatalf("cluster ids %q and %q", a.ClusterID(), b.ClusterID())
	}
	const per = 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[uint64]string{}
	for w, s := range []*pgstore.Store{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				p := fmt.Sprintf("w%d-%d", w, i)
				var seen uint64
				seq, err := s.Append(ctx, []byte(p), pgstore.Hooks{Before: func(seq uint64) { seen = seq }})
				if err != nil {
					t.Error(err)
					return
				}
				if seen != seq {
					t.Errorf("before saw %d, Append returned %d", seen, seq)
				}
				mu.Lock()
				if _, dup := got[seq]; dup {
					t.Errorf("sequence number %d handed out twice", seq)
				}
				got[seq] = p
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	head, err := b.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if head != 4*per || len(got) != 4*per {
		t.Fatalf("head %d, %d acknowledged; want %d", head, len(got), 4*per)
	}
	var next uint64
	for next < head {
		cs, err := b.Changes(ctx, next, 17)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.Seq != next+1 {
				t.Fatalf("change %d after %d", c.Seq, next)
			}
			if string(c.Payload) != got[c.Seq] {
				t.Fatalf("change %d holds %q, acknowledged %q", c.Seq, c.Payload, got[c.Seq])
			}
			next = c.Seq
		}
	}
	if first, err := a.FirstSeq(ctx); err != nil || first != 1 {
		t.Fatalf("FirstSeq = %d, %v", first, err)
	}
}

// A snapshot round-trips through its parts (larger than one), drops the
// older ones and trims the log up to the one before it; a corrupted part
// is caught by the checksum.
func TestSnapshot(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.Database(t), "a")
	if _, err := s.OpenSnapshot(ctx); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no snapshot yet: %v", err)
	}
	for range 10 {
		if _, err := s.Append(ctx, []byte("x"), pgstore.Hooks{}); err != nil {
			t.Fatal(err)
		}
	}
	body := bytes.Repeat([]byte("tidemark snapshot body "), (9<<20)/23+1) // two parts
	for _, seq := range []uint64{4, 8} {
		ok, err := s.WriteSnapshot(ctx, seq, func(w io.Writer) error { _, err := w.Write(body); return err })
		if err != nil || !ok {
			t.Fatalf("snapshot at %d: %v, %v", seq, ok, err)
		}
	}
	if ok, err := s.WriteSnapshot(ctx, 6, func(io.Writer) error { return nil }); ok || err != nil {
		t.Fatalf("an older snapshot than the stored one was written: %v, %v", ok, err)
	}
	snap, err := s.OpenSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(snap)
	snap.Close()
	if err != nil || snap.Seq != 8 || !bytes.Equal(got, body) {
		t.Fatalf("read back seq %d, %d bytes (%v); want 8, %d bytes", snap.Seq, len(got), err, len(body))
	}
	if first, err := s.FirstSeq(ctx); err != nil || first != 5 {
		t.Fatalf("after snapshots at 4 and 8 the log starts at %d (%v), want 5", first, err)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE tidemark_snapshot_parts SET data = overlay(data placing 'X' from 100) WHERE part = 1`); err != nil {
		t.Fatal(err)
	}
	snap, err = s.OpenSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if _, err := io.ReadAll(snap); !errors.Is(err, pgstore.ErrCorrupt) {
		t.Fatalf("a damaged part read back with %v, want ErrCorrupt", err)
	}
}

// The migrations run once; a database migrated by a newer tidemark is
// refused.
func TestMigrations(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	s := open(t, url, "a")
	open(t, url, "b") // a second Open finds the work done
	var n int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM tidemark_schema`).Scan(&n); err != nil || n != pgstore.SchemaVersion {
		t.Fatalf("%d migrations recorded (%v), want %d", n, err, pgstore.SchemaVersion)
	}
	if _, err := s.Pool().Exec(ctx, `INSERT INTO tidemark_schema (version) VALUES ($1)`, pgstore.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if _, err := pgstore.Open(ctx, url, "c"); !errors.Is(err, pgstore.ErrNewerSchema) {
		t.Fatalf("a newer schema opened with %v", err)
	}
}

// The beliefs table refuses a second open belief of one key: the
// exclusion constraint, not the code, enforces it.
func TestBeliefsExclusion(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.Database(t), "a")
	ins := `INSERT INTO tidemark_beliefs (collection, subject, relation, memory_id, object, valid, tx, seq)
		VALUES ('c', 'api', 'rate limit', $1, $2, tstzrange('2025-01-01', NULL), tstzrange($3, NULL), $4)`
	if _, err := s.Pool().Exec(ctx, ins, "m1", "100", "2026-01-01", 1); err != nil {
		t.Fatal(err)
	}
	_, err := s.Pool().Exec(ctx, ins, "m2", "250", "2026-02-01", 2)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23P01" {
		t.Fatalf("a second open belief of one key: %v, want exclusion_violation (23P01)", err)
	}
	// Closing the first one's period lets the second open.
	if _, err := s.Pool().Exec(ctx, `UPDATE tidemark_beliefs SET tx = tstzrange(lower(tx), '2026-02-01') WHERE memory_id = 'm1'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, ins, "m2", "250", "2026-02-01", 2); err != nil {
		t.Fatal(err)
	}
}

// On a server whose transactions are serializable by default, the writes
// still run at READ COMMITTED: writers that queue on the head row are not
// aborted, every write lands once, in one gap-free order, and none needed
// a retry.
func TestAppendReadCommittedOnSerializableServer(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	admin := open(t, url, "admin")
	var name string
	if err := admin.Pool().QueryRow(ctx, `SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Pool().Exec(ctx, `ALTER DATABASE `+name+` SET default_transaction_isolation TO 'serializable'`); err != nil {
		t.Fatal(err)
	}
	s := open(t, url, "a") // new connections: serializable by default
	var iso string
	if err := s.Pool().QueryRow(ctx, `SHOW transaction_isolation`).Scan(&iso); err != nil || iso != "serializable" {
		t.Fatalf("isolation %q, %v", iso, err)
	}
	const writers, per = 8, 20
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				if _, err := s.Append(ctx, []byte("x"), pgstore.Hooks{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if head, err := s.Head(ctx); err != nil || head != writers*per {
		t.Fatalf("head %d (%v), want %d", head, err, writers*per)
	}
	if n := s.Retries(); n != 0 {
		t.Fatalf("%d writes were retried: the write transactions did not run at READ COMMITTED", n)
	}
}

// An attempt that fails after it was given a sequence number reports it
// (Hooks.Abort): here its context ends before the commit, so the
// transaction rolls back and the next write gets the same number.
func TestAppendAbortHook(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.Database(t), "a")
	var before, aborted []uint64
	cctx, cancel := context.WithCancel(ctx)
	h := pgstore.Hooks{
		Before: func(seq uint64) { before = append(before, seq); cancel() }, // the commit then fails
		Abort:  func(seq uint64) { aborted = append(aborted, seq) },
	}
	if _, err := s.Append(cctx, []byte("x"), h); err == nil {
		t.Fatal("a write whose context ended before its commit was acknowledged")
	}
	if len(before) != 1 || len(aborted) != 1 || aborted[0] != before[0] {
		t.Fatalf("before %v, aborted %v", before, aborted)
	}
	seq, err := s.Append(ctx, []byte("y"), pgstore.Hooks{})
	if err != nil || seq != before[0] {
		t.Fatalf("the next write got %d (%v), want the freed %d", seq, err, before[0])
	}
}

// Lock excludes: a second holder waits until the first releases (and a
// wait bounded by its context ends in an error meanwhile).
func TestLock(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	a, b := open(t, url, "a"), open(t, url, "b")
	unlock, err := a.Lock(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := b.Lock(short, "x"); err == nil {
		t.Fatal("a second node took a held lock")
	}
	if u, err := b.Lock(ctx, "y"); err != nil {
		t.Fatalf("another lock: %v", err)
	} else {
		u()
	}
	got := make(chan error, 1)
	go func() {
		u, err := b.Lock(ctx, "x")
		if err == nil {
			u()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("took the lock while held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the lock was not handed over after its release")
	}
}
