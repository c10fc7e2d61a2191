package store

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// makePayload returns a payload that encodes its own identity (writer,
// counter) and a checksum, n ≥ 16 bytes long:
//
//	u32 writer, u64 counter, filler drawn from (writer, counter), u32 CRC-32 (IEEE) of the rest
func makePayload(writer uint32, counter uint64, n int) []byte {
	n = max(n, 16)
	p := make([]byte, n)
	binary.LittleEndian.PutUint32(p[0:], writer)
	binary.LittleEndian.PutUint64(p[4:], counter)
	r := rand.New(rand.NewPCG(uint64(writer), counter))
	for i := 12; i < n-4; i++ {
		p[i] = byte(r.Uint32())
	}
	binary.LittleEndian.PutUint32(p[n-4:], crc32.ChecksumIEEE(p[:n-4]))
	return p
}

// checkPayload verifies a payload made by makePayload.
func checkPayload(p []byte) error {
	if len(p) < 16 {
		return fmt.Errorf("payload of %d bytes", len(p))
	}
	if got, want := crc32.ChecksumIEEE(p[:len(p)-4]), binary.LittleEndian.Uint32(p[len(p)-4:]); got != want {
		return fmt.Errorf("payload checksum %08x, want %08x", got, want)
	}
	w, c := binary.LittleEndian.Uint32(p[0:]), binary.LittleEndian.Uint64(p[4:])
	if q := makePayload(w, c, len(p)); string(q) != string(p) {
		return fmt.Errorf("payload (writer %d, counter %d) has the wrong filler", w, c)
	}
	return nil
}

// payloadHash identifies a payload's content: its length and CRC-32C.
func payloadHash(p []byte) uint64 {
	return uint64(len(p))<<32 | uint64(crc32.Checksum(p, castagnoli))
}

type record struct {
	seq     uint64
	payload []byte
}

func mustOpen(t testing.TB, dir string, opts *Options) *WAL {
	t.Helper()
	w, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return w
}

func mustClose(t testing.TB, w *WAL) {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// replayAll returns every record from seq from on (0: all).
func replayAll(t testing.TB, w *WAL, from uint64) []record {
	t.Helper()
	var recs []record
	err := w.Replay(from, func(seq uint64, p []byte) error {
		recs = append(recs, record{seq, append([]byte(nil), p...)})
		return nil
	})
	if err != nil {
		t.Fatalf("Replay(%d): %v", from, err)
	}
	return recs
}

// checkRecords fails unless got holds want, in order.
func checkRecords(t testing.TB, got []record, want [][]byte, firstSeq uint64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("replayed %d records, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.seq != firstSeq+uint64(i) {
			t.Fatalf("record %d has sequence %d, want %d", i, r.seq, firstSeq+uint64(i))
		}
		if string(r.payload) != string(want[i]) {
			t.Fatalf("record %d (seq %d): payload differs (%d bytes, want %d)", i, r.seq, len(r.payload), len(want[i]))
		}
	}
}

// copyDir copies the regular files of src into a new temporary directory.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// segmentFiles returns the segment paths of dir, in order.
func segmentFiles(t testing.TB, dir string) []string {
	t.Helper()
	segs, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	paths := make([]string, len(segs))
	for i, s := range segs {
		paths[i] = segmentPath(dir, s)
	}
	return paths
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
