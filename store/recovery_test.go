package store

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// buildLog writes n records of about size bytes each with NoSync and
// returns the directory and the payloads. With small segments the log
// has several.
func buildLog(t testing.TB, n, size int, segmentSize int64) (string, [][]byte) {
	t.Helper()
	dir := t.TempDir()
	w := mustOpen(t, dir, &Options{SegmentSize: segmentSize, NoSync: true})
	var want [][]byte
	for i := range n {
		p := makePayload(9, uint64(i), size+i%7)
		if _, err := w.Append(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	mustClose(t, w)
	return dir, want
}

// lastRecordStart returns the offset of the last record of the segment at
// path, whose last record has payload length n.
func lastRecordStart(t testing.TB, path string, n int) int64 {
	return fileSize(t, path) - headerSize - int64(n)
}

// expectRecovered opens dir, checks that it holds exactly want with a tail
// of cut bytes removed, appends one record and checks it follows.
func expectRecovered(t testing.TB, dir string, opts *Options, want [][]byte, cut int64) {
	t.Helper()
	w, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	rec := w.Recovery()
	if rec.TruncatedBytes != cut || rec.LastSeq != uint64(len(want)) || (cut > 0) != (rec.TruncatedSegment != "") {
		w.Close()
		t.Fatalf("Recovery() = %+v, want TruncatedBytes %d and LastSeq %d", rec, cut, len(want))
	}
	checkRecords(t, replayAll(t, w, 0), want, 1)
	next := []byte("appended after recovery")
	if seq, err := w.Append(context.Background(), next); err != nil || seq != uint64(len(want)+1) {
		w.Close()
		t.Fatalf("Append after recovery = %d, %v; want %d", seq, err, len(want)+1)
	}
	mustClose(t, w)
	w = mustOpen(t, dir, opts)
	defer mustClose(t, w)
	if rec := w.Recovery(); rec.TruncatedBytes != 0 {
		t.Fatalf("second recovery cut %d bytes", rec.TruncatedBytes)
	}
	checkRecords(t, replayAll(t, w, 0), append(append([][]byte(nil), want...), next), 1)
}

func mutate(t testing.TB, path string, f func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTornTailEveryOffset cuts the last segment at every byte inside its
// last record: recovery keeps every earlier record, cuts the partial one,
// and the next append takes its sequence number.
func TestTornTailEveryOffset(t *testing.T) {
	for _, tc := range []struct {
		name string
		seg  int64
	}{{"one segment", DefaultSegmentSize}, {"several segments", MinSegmentSize}} {
		t.Run(tc.name, func(t *testing.T) {
			pristine, want := buildLog(t, 30, 40, tc.seg)
			segs := segmentFiles(t, pristine)
			last := want[len(want)-1]
			start := lastRecordStart(t, segs[len(segs)-1], len(last))
			for k := int64(0); k < headerSize+int64(len(last)); k++ {
				dir := copyDir(t, pristine)
				path := segmentFiles(t, dir)[len(segs)-1]
				if err := os.Truncate(path, start+k); err != nil {
					t.Fatal(err)
				}
				opts := &Options{SegmentSize: tc.seg, NoSync: k%8 != 0} // real fsync now and then
				expectRecovered(t, dir, opts, want[:len(want)-1], k)
			}
		})
	}
}

// TestTornTailGarbage appends bytes that are not a whole record after the
// last one: zeros (a preallocated or unwritten tail), random bytes, the
// prefix of a valid next record.
func TestTornTailGarbage(t *testing.T) {
	pristine, want := buildLog(t, 20, 60, DefaultSegmentSize)
	r := rand.New(rand.NewPCG(1, 2))
	next := make([]byte, headerSize+70)
	putHeader(next, 21, make([]byte, 70))
	tails := [][]byte{make([]byte, 1), make([]byte, 15), make([]byte, 16), make([]byte, 4096), next[:17], next[:len(next)-1]}
	for n := 1; n < 200; n += 13 {
		g := make([]byte, n)
		for i := range g {
			g[i] = byte(r.Uint32())
		}
		tails = append(tails, g)
	}
	for i, tail := range tails {
		dir := copyDir(t, pristine)
		mutate(t, segmentFiles(t, dir)[0], func(b []byte) []byte { return append(b, tail...) })
		t.Logf("tail %d: %d bytes", i, len(tail))
		expectRecovered(t, dir, &Options{NoSync: true}, want, int64(len(tail)))
	}
}

// TestTornTailBitFlip flips each byte of the last record: it is cut.
func TestTornTailBitFlip(t *testing.T) {
	pristine, want := buildLog(t, 10, 30, DefaultSegmentSize)
	last := want[len(want)-1]
	start := lastRecordStart(t, segmentFiles(t, pristine)[0], len(last))
	recLen := int64(headerSize + len(last))
	for k := int64(0); k < recLen; k++ {
		for _, bit := range []byte{0x01, 0x80} {
			dir := copyDir(t, pristine)
			mutate(t, segmentFiles(t, dir)[0], func(b []byte) []byte { b[start+k] ^= bit; return b })
			expectRecovered(t, dir, &Options{NoSync: true}, want[:len(want)-1], recLen)
		}
	}
}

// TestCorruptionInTheMiddle flips a byte anywhere in the last segment
// except its last record: intact records follow the damage, so it is not
// a torn tail and Open must fail with ErrCorrupt — unless
// RecoverTruncateCorruptTail is asked for, which cuts at the damage.
func TestCorruptionInTheMiddle(t *testing.T) {
	pristine, want := buildLog(t, 8, 30, DefaultSegmentSize)
	path0 := segmentFiles(t, pristine)[0]
	lastStart := lastRecordStart(t, path0, len(want[len(want)-1]))
	// Record boundaries, to know which record a byte belongs to.
	var starts []int64
	off := int64(0)
	for _, p := range want {
		starts = append(starts, off)
		off += headerSize + int64(len(p))
	}
	for k := int64(0); k < lastStart; k++ {
		dir := copyDir(t, pristine)
		path := segmentFiles(t, dir)[0]
		mutate(t, path, func(b []byte) []byte { b[k] ^= 0x10; return b })
		_, err := Open(dir, &Options{NoSync: true})
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: Open = %v, want ErrCorrupt", k, err)
		}
		rec := 0
		for rec+1 < len(starts) && starts[rec+1] <= k {
			rec++
		}
		dir2 := copyDir(t, dir)
		info := func() RecoveryInfo {
			w := mustOpen(t, dir2, &Options{NoSync: true, Recovery: RecoverTruncateCorruptTail})
			defer mustClose(t, w)
			checkRecords(t, replayAll(t, w, 0), want[:rec], 1)
			return w.Recovery()
		}()
		if info.TruncatedBytes != off-starts[rec] {
			t.Fatalf("byte %d flipped, RecoverTruncateCorruptTail: cut %d bytes, want %d", k, info.TruncatedBytes, off-starts[rec])
		}
	}
}

// TestCorruptNonLastSegment damages a segment that is not the last:
// every kind of damage is ErrCorrupt, even at its end.
func TestCorruptNonLastSegment(t *testing.T) {
	pristine, _ := buildLog(t, 60, 200, MinSegmentSize)
	segs := segmentFiles(t, pristine)
	if len(segs) < 3 {
		t.Fatalf("%d segments, want ≥ 3", len(segs))
	}
	size0 := fileSize(t, segs[0])
	damage := map[string]func(dir string){
		"truncated by one byte": func(dir string) {
			os.Truncate(segmentFiles(t, dir)[0], size0-1)
		},
		"cut to its first record": func(dir string) {
			os.Truncate(segmentFiles(t, dir)[0], headerSize+200)
		},
		"garbage appended": func(dir string) {
			mutate(t, segmentFiles(t, dir)[0], func(b []byte) []byte { return append(b, 0, 0, 0, 0) })
		},
		"last byte flipped": func(dir string) {
			mutate(t, segmentFiles(t, dir)[0], func(b []byte) []byte { b[len(b)-1] ^= 1; return b })
		},
		"first byte flipped": func(dir string) {
			mutate(t, segmentFiles(t, dir)[1], func(b []byte) []byte { b[0] ^= 1; return b })
		},
		"middle segment missing": func(dir string) {
			os.Remove(segmentFiles(t, dir)[1])
		},
		"segment renamed": func(dir string) {
			p := segmentFiles(t, dir)[1]
			first, _ := parseSegmentName(filepath.Base(p))
			os.Rename(p, segmentPath(dir, first+1))
		},
		"segment emptied": func(dir string) {
			os.Truncate(segmentFiles(t, dir)[1], 0)
		},
	}
	for name, f := range damage {
		dir := copyDir(t, pristine)
		f(dir)
		for _, mode := range []RecoveryMode{RecoverStrict, RecoverTruncateCorruptTail} {
			if _, err := Open(dir, &Options{SegmentSize: MinSegmentSize, NoSync: true, Recovery: mode}); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s, %v: Open = %v, want ErrCorrupt", name, mode, err)
			}
		}
	}
}

// TestIntactRecordOutOfSequence: a record with a valid CRC whose sequence
// number does not follow cannot come from a torn write.
func TestIntactRecordOutOfSequence(t *testing.T) {
	pristine, want := buildLog(t, 5, 30, DefaultSegmentSize)
	for _, seq := range []uint64{5, 7, 0, 1} {
		dir := copyDir(t, pristine)
		p := []byte("out of sequence")
		rec := make([]byte, headerSize, headerSize+len(p))
		putHeader(rec, seq, p)
		rec = append(rec, p...)
		mutate(t, segmentFiles(t, dir)[0], func(b []byte) []byte { return append(b, rec...) })
		_, err := Open(dir, &Options{NoSync: true})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "sequence") {
			t.Fatalf("intact record with sequence %d after 5: Open = %v, want ErrCorrupt", seq, err)
		}
		expectRecovered(t, dir, &Options{NoSync: true, Recovery: RecoverTruncateCorruptTail}, want, int64(len(rec)))
	}
}

// TestEmptyLastSegment: a crash right after a rollover leaves an empty
// last segment; appends continue in it.
func TestEmptyLastSegment(t *testing.T) {
	pristine, want := buildLog(t, 10, 50, DefaultSegmentSize)
	dir := copyDir(t, pristine)
	if err := os.WriteFile(segmentPath(dir, 11), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	expectRecovered(t, dir, &Options{NoSync: true}, want, 0)
	if segs, _ := listSegments(dir); len(segs) != 2 || segs[1] != 11 {
		t.Fatalf("segments %v, want [1 11]", segs)
	}
	// A torn record that was the only one of the last segment leaves it
	// empty.
	dir = copyDir(t, pristine)
	rec := make([]byte, headerSize+20)
	putHeader(rec, 11, rec[headerSize:])
	if err := os.WriteFile(segmentPath(dir, 11), rec[:25], 0o644); err != nil {
		t.Fatal(err)
	}
	expectRecovered(t, dir, &Options{NoSync: true}, want, 25)
}

// TestFindIntact checks the search for an intact record behind damage.
func TestFindIntact(t *testing.T) {
	p := []byte("payload")
	rec := make([]byte, headerSize+len(p))
	putHeader(rec, 12, p)
	copy(rec[headerSize:], p)
	for _, tc := range []struct {
		gap   int
		after uint64
		want  int
	}{
		{1, 11, 1}, {1, 10, -1}, {16, 10, 16}, {15, 10, -1}, {40, 9, 40}, {3, 12, -1}, {3, 13, -1},
	} {
		tail := append(make([]byte, tc.gap), rec...)
		if got := findIntact(tail, tc.after); got != tc.want {
			t.Errorf("gap %d, after %d: findIntact = %d, want %d", tc.gap, tc.after, got, tc.want)
		}
	}
	binary.LittleEndian.PutUint32(rec[4:], 0)
	if got := findIntact(append([]byte{0}, rec...), 11); got != -1 {
		t.Errorf("record with a bad CRC found at %d", got)
	}
}

// A record damaged after Open (so recovery never saw it) claims 4 GiB:
// Replay checks the length against the segment before allocating.
func TestReplayRejectsLengthBeyondSegment(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := 0; i < 3; i++ {
		if _, err := w.Append(context.Background(), []byte("payload")); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(segmentPath(dir, 1), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff, 0xff, 0xff, 0xff}, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = w.Replay(0, func(uint64, []byte) error { return nil })
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Replay of a damaged length: %v, want ErrCorrupt", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("Replay allocated %d MiB for a damaged length", grew>>20)
	}
}
