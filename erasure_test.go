package tidemark

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// After a collection is dropped and the DB checkpoints, no file of the
// data directory holds a byte of its memories' text (the log's segment
// that held them is rotated out and deleted); the directory is 0700 and
// its files 0600.
func TestDropThenCheckpointErases(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	secret := "the launch code is tangerine-4471-zebra"
	for _, name := range []string{"private", "kept"} {
		c, err := db.CreateCollection(ctx, name, &CollectionOptions{Dim: 3})
		if err != nil {
			t.Fatal(err)
		}
		text := secret
		if name == "kept" {
			text = "nothing to hide"
		}
		if _, err := c.Put(ctx, []Memory{{ID: "m", Text: text, Vector: []float32{1, 0, 0}}}); err != nil {
			t.Fatal(err)
		}
	}
	scan := func() (found []string) {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte("tangerine-4471")) {
				found = append(found, filepath.Base(p))
			}
			return nil
		})
		return found
	}
	if len(scan()) == 0 {
		t.Fatal("the text is in no file before the drop: the scan sees nothing")
	}
	if err := db.DropCollection(ctx, "private"); err != nil {
		t.Fatal(err)
	}
	if err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if found := scan(); len(found) > 0 {
		t.Fatalf("after the drop and a checkpoint the text is still in %v", found)
	}
	// What was kept survives a reopen.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(dir, nil); err != nil {
		t.Fatal(err)
	}
	c, err := db.Collection("kept")
	if err != nil {
		t.Fatal(err)
	}
	if m, err := c.Get(ctx, "m"); err != nil || m.Text != "nothing to hide" {
		t.Fatalf("kept memory: %+v %v", m, err)
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s is %v, want %v", p, info.Mode().Perm(), want)
		}
		return nil
	})
}

// An explanation lists at most MaxRemoved removed memories and counts
// them all.
func TestRemovedIsCapped(t *testing.T) {
	db, err := Open(t.TempDir(), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 3})
	if err != nil {
		t.Fatal(err)
	}
	const n = 3 * MaxRemoved
	for i := range n {
		m := Memory{ID: "v" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Subject: "service", Relation: "version",
			Object: strconv.Itoa(i), Vector: []float32{1, float32(i) / n, 0}}
		if _, err := c.Put(ctx, []Memory{m}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := c.Search(ctx, &SearchRequest{Vector: []float32{1, 0, 0}, K: 1, Explain: true, Plan: PlanExact})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != MaxRemoved || res.RemovedTotal != n-1 {
		t.Fatalf("%d removed listed, %d counted; want %d and %d", len(res.Removed), res.RemovedTotal, MaxRemoved, n-1)
	}
}
