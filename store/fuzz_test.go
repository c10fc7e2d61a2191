package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// validLog returns the bytes of a segment holding n records.
func validLog(n int) []byte {
	var b []byte
	for i := range n {
		p := bytes.Repeat([]byte{byte(i)}, 3+i*5)
		h := make([]byte, headerSize)
		putHeader(h, uint64(i+1), p)
		b = append(append(b, h...), p...)
	}
	return b
}

// FuzzOpen feeds arbitrary bytes as the only segment of a log. Open must
// never panic: it fails with ErrCorrupt, or it recovers a log whose
// records account for every byte it kept and that takes the next append.
// With RecoverTruncateCorruptTail it always recovers (the only segment is
// the last one).
func FuzzOpen(f *testing.F) {
	good := validLog(5)
	f.Add([]byte{})
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add(append(bytes.Clone(good), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
	mid := bytes.Clone(good)
	mid[headerSize+1] ^= 1
	f.Add(mid)
	f.Add(validLog(1)[:headerSize])
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(segmentPath(dir, 1), data, 0o644); err != nil {
			t.Fatal(err)
		}
		backup := bytes.Clone(data)
		opts := &Options{NoSync: true}
		w, err := Open(dir, opts)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v, want ErrCorrupt or success", err)
			}
			if now, _ := os.ReadFile(segmentPath(dir, 1)); !bytes.Equal(now, backup) {
				t.Fatal("a failed Open modified the segment")
			}
			opts = &Options{NoSync: true, Recovery: RecoverTruncateCorruptTail}
			if w, err = Open(dir, opts); err != nil {
				t.Fatalf("Open with RecoverTruncateCorruptTail: %v", err)
			}
		}
		rec := w.Recovery()
		kept := int64(0)
		n := uint64(0)
		err = w.Replay(0, func(seq uint64, p []byte) error {
			n++
			if seq != n {
				t.Fatalf("sequence %d, want %d", seq, n)
			}
			if string(p) != string(data[kept+headerSize:kept+headerSize+int64(len(p))]) {
				t.Fatalf("sequence %d: payload differs from the file", seq)
			}
			kept += headerSize + int64(len(p))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != rec.LastSeq || n != w.LastSeq() || kept+rec.TruncatedBytes != int64(len(data)) {
			t.Fatalf("recovery %+v: replayed %d records in %d bytes of %d", rec, n, kept, len(data))
		}
		if seq, err := w.Append(context.Background(), []byte("next")); err != nil || seq != n+1 {
			t.Fatalf("Append after recovery = %d, %v; want %d", seq, err, n+1)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		w, err = Open(dir, &Options{NoSync: true})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer w.Close()
		if rec := w.Recovery(); rec.TruncatedBytes != 0 || rec.LastSeq != n+1 {
			t.Fatalf("reopen: %+v, want LastSeq %d and nothing cut", rec, n+1)
		}
	})
}

// FuzzReadSnapshot feeds arbitrary bytes as a snapshot file: ReadSnapshot
// and OpenSnapshot (its body read to the end) never panic and agree,
// failing with ErrCorrupt or returning the same sequence number and body.
func FuzzReadSnapshot(f *testing.F) {
	dir := f.TempDir()
	if err := WriteSnapshot(dir, "s", 9, func(w io.Writer) error { _, err := io.WriteString(w, "body"); return err }); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, "s"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:20])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "s"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		seq, body, err := ReadSnapshot(dir, "s")
		sseq, streamed, serr := streamSnapshot(dir, "s")
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || !errors.Is(serr, ErrCorrupt) {
				t.Fatalf("ReadSnapshot: %v, OpenSnapshot read to the end: %v; want ErrCorrupt from both", err, serr)
			}
			return
		}
		if serr != nil || sseq != seq || !bytes.Equal(streamed, body) {
			t.Fatalf("OpenSnapshot disagrees with ReadSnapshot: %d vs %d, %v", sseq, seq, serr)
		}
	})
}
