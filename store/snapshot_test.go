package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestSnapshotRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, body := range [][]byte{nil, []byte("ledger state"), bytes.Repeat([]byte{0xab, 0x01}, 3<<20)} {
		err := WriteSnapshot(dir, "index", 4242, func(w io.Writer) error {
			_, err := w.Write(body)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		seq, got, err := ReadSnapshot(dir, "index")
		if err != nil || seq != 4242 || !bytes.Equal(got, body) {
			t.Fatalf("ReadSnapshot = %d, %d bytes, %v; want 4242, %d bytes", seq, len(got), err, len(body))
		}
		r, err := OpenSnapshot(dir, "index")
		if err != nil {
			t.Fatal(err)
		}
		streamed, err := io.ReadAll(r)
		if err != nil || r.Seq != 4242 || r.Size != int64(len(body)) || !bytes.Equal(streamed, body) {
			t.Fatalf("OpenSnapshot: seq %d size %d, read %d bytes, %v", r.Seq, r.Size, len(streamed), err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		seq, mapped, err := mapSnapshot(dir, "index")
		if errors.Is(err, errors.ErrUnsupported) {
			continue
		}
		if err != nil || seq != 4242 || !bytes.Equal(mapped, body) {
			t.Fatalf("MapSnapshot: seq %d, %d bytes, %v", seq, len(mapped), err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only the snapshot", len(entries))
	}
}

// TestSnapshotWriteFails: a failing body leaves the previous snapshot
// whole and no temporary file behind.
func TestSnapshotWriteFails(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSnapshot(dir, "s", 1, func(w io.Writer) error { _, err := io.WriteString(w, "v1"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteSnapshot(dir, "s", 2, func(w io.Writer) error {
		io.WriteString(w, "half of v2")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WriteSnapshot with a failing body: %v, want it wrapped", err)
	}
	seq, body, err := ReadSnapshot(dir, "s")
	if err != nil || seq != 1 || string(body) != "v1" {
		t.Fatalf("after a failed write: %d %q %v, want the previous snapshot", seq, body, err)
	}
	// A temporary file left by a crash is removed by the next write.
	if err := os.WriteFile(filepath.Join(dir, ".s.tmp-123"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteSnapshot(dir, "s", 3, func(w io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "s" {
		t.Fatalf("directory holds %v, want only the snapshot", entries)
	}
}

// TestSnapshotCorrupt flips every byte and cuts at every length: every
// damaged file is ErrCorrupt.
func TestSnapshotCorrupt(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSnapshot(dir, "s", 77, func(w io.Writer) error { _, err := io.WriteString(w, "a small snapshot body"); return err }); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "bad"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadSnapshot(dir, "bad"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: ReadSnapshot = %v, want ErrCorrupt", what, err)
		}
		if _, _, err := streamSnapshot(dir, "bad"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: OpenSnapshot and reading to the end = %v, want ErrCorrupt", what, err)
		}
		if _, _, err := mapSnapshot(dir, "bad"); !errors.Is(err, ErrCorrupt) && !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("%s: MapSnapshot and Check = %v, want ErrCorrupt", what, err)
		}
	}
	for i := range good {
		b := bytes.Clone(good)
		b[i] ^= 0x04
		check("flipped byte", b)
	}
	for n := range len(good) {
		check("truncated", good[:n])
	}
	check("extended", append(bytes.Clone(good), 0))

	// A damaged body opens (its header and trailer are whole) and is
	// refused at its end, not before: the reader streams it once.
	b := bytes.Clone(good)
	b[snapHeaderSize+2] ^= 0x10
	if err := os.WriteFile(filepath.Join(dir, "bad"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenSnapshot(dir, "bad")
	if err != nil {
		t.Fatalf("OpenSnapshot of a damaged body: %v, want the error at its end", err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if !errors.Is(err, ErrCorrupt) || len(got) != len(b)-snapHeaderSize-snapTrailerSize {
		t.Fatalf("read %d bytes, %v; want the whole body, then ErrCorrupt", len(got), err)
	}
	if _, err := r.Read(make([]byte, 8)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a read after the refused end: %v, want ErrCorrupt again", err)
	}
}

// streamSnapshot opens a snapshot and reads its body to the end, as a
// caller of OpenSnapshot must before trusting it.
func streamSnapshot(dir, name string) (uint64, []byte, error) {
	r, err := OpenSnapshot(dir, name)
	if err != nil {
		return 0, nil, err
	}
	defer r.Close()
	body, err := io.ReadAll(r)
	return r.Seq, body, err
}

// mapSnapshot maps a snapshot and checks it, as a caller of MapSnapshot
// must before trusting its body, and returns a copy of the body.
func mapSnapshot(dir, name string) (uint64, []byte, error) {
	m, err := MapSnapshot(dir, name)
	if err != nil {
		return 0, nil, err
	}
	defer m.Close()
	if err := m.Check(); err != nil {
		return 0, nil, err
	}
	return m.Seq, bytes.Clone(m.Body), nil
}

func TestSnapshotErrors(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := ReadSnapshot(dir, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadSnapshot of a missing file: %v", err)
	}
	if _, err := OpenSnapshot(dir, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenSnapshot of a missing file: %v", err)
	}
	if _, err := MapSnapshot(dir, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("MapSnapshot of a missing file: %v", err)
	}
	for _, name := range []string{"", ".", "..", "a/b", `a\b`, ".hidden", "LOCK", segmentName(1)} {
		err := WriteSnapshot(dir, name, 1, func(io.Writer) error { return nil })
		if !errors.Is(err, ErrOptions) {
			t.Errorf("WriteSnapshot(%q) = %v, want ErrOptions", name, err)
		}
		if _, _, err := ReadSnapshot(dir, name); !errors.Is(err, ErrOptions) {
			t.Errorf("ReadSnapshot(%q) = %v, want ErrOptions", name, err)
		}
		if _, err := MapSnapshot(dir, name); !errors.Is(err, ErrOptions) {
			t.Errorf("MapSnapshot(%q) = %v, want ErrOptions", name, err)
		}
	}
	// A snapshot may live next to a WAL without disturbing it.
	w := mustOpen(t, dir, &Options{NoSync: true})
	if _, err := w.Append(context.Background(), []byte("r")); err != nil {
		t.Fatal(err)
	}
	if err := WriteSnapshot(dir, "snap", w.LastSeq(), func(io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	mustClose(t, w)
	w = mustOpen(t, dir, &Options{NoSync: true})
	defer mustClose(t, w)
	if rec := w.Recovery(); rec.LastSeq != 1 || rec.Segments != 1 || rec.TruncatedBytes != 0 {
		t.Fatalf("WAL next to a snapshot: %+v", rec)
	}
}
