package tidemark

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark/tidemark/store"
)

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
	for j := range c.rows.len() {
		if c.rows.at(j).visible {
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

// A snapshot whose body was damaged where every frame still parses (a
// low bit of one stored vector component) is refused at the end of the
// body, where its CRC is checked as it is read: Open fails with
// ErrCorrupt and serves nothing of it.
func TestOpenRefusesDamagedSnapshotBody(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openTest(t, dir, &Options{CheckpointRecords: -1})
	c := createTest(t, db, "c", &CollectionOptions{Dim: 4})
	if _, err := c.Put(ctx, []Memory{{ID: "a", Vector: []float32{0.6, 0.8, 0, 0}}, {ID: "b", Vector: []float32{0, 0, 1, 0}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "snapshot")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pat []byte
	for _, x := range []float32{0.6, 0.8} {
		pat = binary.LittleEndian.AppendUint32(pat, math.Float32bits(x))
	}
	i := bytes.Index(b, pat)
	if i < 0 || bytes.Contains(b[i+1:], pat) {
		t.Fatalf("the vector's bytes are at %d in the snapshot, want exactly once", i)
	}
	good := bytes.Clone(b)
	b[i] ^= 1 // 0.6 becomes its float32 neighbour: finite, still unit
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if db, err := Open(dir, nil); !errors.Is(err, ErrCorrupt) {
		if db != nil {
			db.Close()
		}
		t.Fatalf("Open of a damaged snapshot: %v, want ErrCorrupt", err)
	}
	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, dir, nil)
	c, err = db.Collection("c")
	if err != nil {
		t.Fatal(err)
	}
	if m, err := c.Get(ctx, "a"); err != nil || m.ID != "a" {
		t.Fatalf("the restored snapshot: %+v, %v", m, err)
	}
}

// A snapshot file cut short while it is mapped (by another process: this
// one never rewrites a snapshot in place) faults where it is read past its
// new end. The fault is an error wrapping ErrCorrupt from whichever
// goroutine reads there (the frame reader or a row parser of decodeRows,
// or the goroutine reading the rest), not a crash. And a mapped body that
// is damaged is refused wherever the damage lies (its CRC is computed as
// it is parsed, by several goroutines).
func TestMappedSnapshotCutShort(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openTest(t, dir, nil)
	c := createTest(t, db, "c", &CollectionOptions{Dim: 16})
	var ms []Memory
	for i := range 3000 {
		v := make([]float32, 16)
		v[i%16], v[(i/16)%16] = 1, 0.5
		ms = append(ms, Memory{ID: fmt.Sprintf("m%d", i), Text: fmt.Sprintf("note %d", i), Vector: v})
	}
	if _, err := c.Put(ctx, ms); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{1, 2} {
		m, err := store.MapSnapshot(dir, "snapshot")
		if errors.Is(err, errors.ErrUnsupported) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Body) < 64<<10 {
			t.Fatalf("a %d-byte body: too short to cut past a page", len(m.Body))
		}
		whole, err := os.ReadFile(filepath.Join(dir, "snapshot"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(filepath.Join(dir, "snapshot"), 8<<10); err != nil {
			t.Fatal(err)
		}
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			src := &mappedSource{body: m.Body, crc: m.Seed()}
			d := &DB{opts: (*Options)(nil).WithDefaults(), colls: map[string]*Collection{}}
			err = src.guarded(func() error { return d.readSource(src, int64(len(m.Body))) })
		}()
		m.Close()
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "faulted") {
			t.Fatalf("GOMAXPROCS %d: reading a mapped snapshot cut short: %v, want a fault as ErrCorrupt", procs, err)
		}
		t.Logf("GOMAXPROCS %d: %v", procs, err)
		if err := os.WriteFile(filepath.Join(dir, "snapshot"), whole, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A damaged byte anywhere (a stored vector's low bit: every frame
	// still parses) is refused, in the rows the parsers check chunk by
	// chunk (GOMAXPROCS 2) and after them.
	whole, err := os.ReadFile(filepath.Join(dir, "snapshot"))
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{len(whole) / 3, len(whole) / 2, len(whole) - 40} {
		for _, procs := range []int{1, 2} {
			b := bytes.Clone(whole)
			b[at] ^= 1
			if err := os.WriteFile(filepath.Join(dir, "snapshot"), b, 0o600); err != nil {
				t.Fatal(err)
			}
			func() {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				db, err = Open(dir, nil)
			}()
			if err == nil {
				db.Close()
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("GOMAXPROCS %d: Open with byte %d of %d damaged: %v, want ErrCorrupt", procs, at, len(whole), err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "snapshot"), whole, 0o600); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, dir, nil) // the file whole again
	defer db.Close()
	if c, err := db.Collection("c"); err != nil || c.rows.len() != 3000 {
		t.Fatalf("reopened whole: %v", err)
	}
}
