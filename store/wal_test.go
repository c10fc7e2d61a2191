package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w := mustOpen(t, dir, nil)
	if rec := w.Recovery(); !rec.Created || rec.LastSeq != 0 || rec.FirstSeq != 1 || rec.Segments != 1 {
		t.Fatalf("new log: Recovery() = %+v", rec)
	}
	if w.LastSeq() != 0 || w.FirstSeq() != 1 {
		t.Fatalf("new log: LastSeq %d FirstSeq %d, want 0 1", w.LastSeq(), w.FirstSeq())
	}
	ctx := context.Background()
	var want [][]byte
	for i := range 50 {
		p := makePayload(1, uint64(i), 16+i*37)
		if i == 7 {
			p = nil // empty records are allowed
		}
		seq, err := w.Append(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if seq != uint64(i+1) {
			t.Fatalf("Append %d returned sequence %d", i, seq)
		}
		want = append(want, p)
	}
	batch := [][]byte{makePayload(2, 0, 100), makePayload(2, 1, 3000), makePayload(2, 2, 20)}
	first, last, err := w.AppendBatch(ctx, batch)
	if err != nil || first != 51 || last != 53 {
		t.Fatalf("AppendBatch = %d, %d, %v; want 51, 53, nil", first, last, err)
	}
	want = append(want, batch...)
	if f, l, err := w.AppendBatch(ctx, nil); f != 0 || l != 0 || err != nil {
		t.Fatalf("empty AppendBatch = %d, %d, %v", f, l, err)
	}
	checkRecords(t, replayAll(t, w, 0), want, 1)
	checkRecords(t, replayAll(t, w, 40), want[39:], 40)
	checkRecords(t, replayAll(t, w, 54), nil, 54)
	mustClose(t, w)

	w = mustOpen(t, dir, nil)
	defer mustClose(t, w)
	if rec := w.Recovery(); rec.Created || rec.LastSeq != 53 || rec.TruncatedBytes != 0 || rec.Segments != 1 {
		t.Fatalf("reopen: Recovery() = %+v", rec)
	}
	checkRecords(t, replayAll(t, w, 0), want, 1)
	if seq, err := w.Append(ctx, []byte("after reopen")); err != nil || seq != 54 {
		t.Fatalf("Append after reopen = %d, %v; want 54", seq, err)
	}
	stop := errors.New("stop")
	n := 0
	err = w.Replay(1, func(uint64, []byte) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Fatalf("Replay with failing fn: %v after %d records, want stop after 3", err, n)
	}
}

// TestConcurrentAppend runs many appenders with real fsync, and a Replay
// alongside them; every acknowledged sequence number must be replayed
// exactly once, in order, with its payload.
func TestConcurrentAppend(t *testing.T) {
	dir := t.TempDir()
	w := mustOpen(t, dir, &Options{SegmentSize: 64 << 10})
	groups, grouped := 0, 0 // written by the writer goroutine, read after Close
	w.hookTake = func(g []*request) {
		groups++
		grouped += len(g)
	}
	ctx := context.Background()
	const writers, perWriter = 8, 60
	acked := make([]map[uint64][]byte, writers)
	var wg sync.WaitGroup
	errc := make(chan error, writers+1)
	for g := range writers {
		acked[g] = map[uint64][]byte{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; {
				if i%5 == 4 && i+2 <= perWriter {
					batch := [][]byte{makePayload(uint32(g), uint64(i), 50+i*13), makePayload(uint32(g), uint64(i+1), 40)}
					first, last, err := w.AppendBatch(ctx, batch)
					if err != nil {
						errc <- err
						return
					}
					if last != first+1 {
						errc <- fmt.Errorf("AppendBatch of 2 returned %d…%d", first, last)
						return
					}
					acked[g][first], acked[g][last] = batch[0], batch[1]
					i += 2
					continue
				}
				p := makePayload(uint32(g), uint64(i), 20+i*29)
				seq, err := w.Append(ctx, p)
				if err != nil {
					errc <- err
					return
				}
				acked[g][seq] = p
				i++
			}
		}()
	}
	done := make(chan struct{})
	var replayer sync.WaitGroup
	replayer.Add(1)
	go func() { // a Replay running alongside the appends sees a consistent prefix
		defer replayer.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			next := uint64(1)
			err := w.Replay(0, func(seq uint64, p []byte) error {
				if seq != next {
					return fmt.Errorf("concurrent Replay: sequence %d, want %d", seq, next)
				}
				next++
				return checkPayload(p)
			})
			if err != nil {
				errc <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	wg.Wait()
	close(done)
	replayer.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	mustClose(t, w)
	t.Logf("%d appends in %d group commits", grouped, groups)
	if groups >= grouped {
		t.Errorf("%d appends took %d group commits: no fsync was shared", grouped, groups)
	}

	all := map[uint64][]byte{}
	for _, m := range acked {
		for seq, p := range m {
			if _, dup := all[seq]; dup {
				t.Fatalf("sequence %d acknowledged twice", seq)
			}
			all[seq] = p
		}
	}
	if len(all) != writers*perWriter {
		t.Fatalf("%d records acknowledged, want %d", len(all), writers*perWriter)
	}
	w = mustOpen(t, dir, &Options{SegmentSize: 64 << 10})
	defer mustClose(t, w)
	recs := replayAll(t, w, 0)
	if len(recs) != len(all) {
		t.Fatalf("replayed %d records, want %d", len(recs), len(all))
	}
	for i, r := range recs {
		if r.seq != uint64(i+1) {
			t.Fatalf("record %d has sequence %d", i, r.seq)
		}
		if string(r.payload) != string(all[r.seq]) {
			t.Fatalf("sequence %d: payload differs from the acknowledged one", r.seq)
		}
	}
}

func TestSegmentRollover(t *testing.T) {
	dir := t.TempDir()
	opts := &Options{SegmentSize: MinSegmentSize, NoSync: true}
	w := mustOpen(t, dir, opts)
	ctx := context.Background()
	var want [][]byte
	for i := range 120 {
		n := 100 + (i*97)%900
		if i == 60 {
			n = 3 * MinSegmentSize // larger than a segment: one of its own
		}
		p := makePayload(3, uint64(i), n)
		if _, err := w.Append(ctx, p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	mustClose(t, w)

	paths := segmentFiles(t, dir)
	if len(paths) < 10 {
		t.Fatalf("%d segments, want ≥ 10", len(paths))
	}
	seq := uint64(1)
	for i, p := range paths {
		first, _ := parseSegmentName(filepath.Base(p))
		if first != seq {
			t.Fatalf("segment %s: name says %d, its first record is %d", p, first, seq)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		size := fileSize(t, p)
		res, err := scanSegment(f, size, first, &readBuffers{})
		f.Close()
		if err != nil || res.damage != "" || res.validEnd != size {
			t.Fatalf("segment %s: %+v, %v", p, res, err)
		}
		n := res.lastSeq - first + 1
		if n == 0 {
			t.Fatalf("segment %s is empty", p)
		}
		if size > MinSegmentSize && n != 1 {
			t.Fatalf("segment %s has %d bytes in %d records: only a single record may exceed SegmentSize", p, size, n)
		}
		if i > 0 && size+int64(headerSize+len(want[seq-2])) <= MinSegmentSize && fileSize(t, paths[i-1])+int64(headerSize+len(want[seq-1])) <= MinSegmentSize {
			t.Fatalf("segment %s started although record %d fit in the previous one", p, seq)
		}
		seq = res.lastSeq + 1
	}
	w = mustOpen(t, dir, opts)
	defer mustClose(t, w)
	if rec := w.Recovery(); rec.Segments != len(paths) || rec.LastSeq != 120 {
		t.Fatalf("Recovery() = %+v", rec)
	}
	checkRecords(t, replayAll(t, w, 0), want, 1)
	checkRecords(t, replayAll(t, w, 61), want[60:], 61)
}

func TestCheckpoint(t *testing.T) {
	dir := t.TempDir()
	opts := &Options{SegmentSize: MinSegmentSize, NoSync: true}
	w := mustOpen(t, dir, opts)
	ctx := context.Background()
	var want [][]byte
	for i := range 100 {
		p := makePayload(4, uint64(i), 300)
		if _, err := w.Append(ctx, p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	before, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) < 5 {
		t.Fatalf("%d segments, want ≥ 5", len(before))
	}
	// Checkpoint just before the first record of segment 3 deletes
	// segments 0–1 and keeps segment 2 (which holds that record's predecessor).
	cut := before[3] - 2
	if err := w.Checkpoint(cut); err != nil {
		t.Fatal(err)
	}
	after, _ := listSegments(dir)
	if len(after) != len(before)-2 || after[0] != before[2] {
		t.Fatalf("after Checkpoint(%d): segments %v, had %v", cut, after, before)
	}
	if w.FirstSeq() != before[2] {
		t.Fatalf("FirstSeq = %d, want %d", w.FirstSeq(), before[2])
	}
	checkRecords(t, replayAll(t, w, 0), want[before[2]-1:], before[2])
	if err := w.Replay(before[2]-1, func(uint64, []byte) error { return nil }); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("Replay before FirstSeq: %v, want ErrOutOfRange", err)
	}
	if err := w.Replay(102, func(uint64, []byte) error { return nil }); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("Replay after LastSeq+1: %v, want ErrOutOfRange", err)
	}
	if err := w.Checkpoint(101); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("Checkpoint past LastSeq: %v, want ErrOutOfRange", err)
	}
	if err := w.Checkpoint(100); err != nil {
		t.Fatal(err)
	}
	if segs, _ := listSegments(dir); len(segs) != 1 || segs[0] != before[len(before)-1] {
		t.Fatalf("Checkpoint(LastSeq) left segments %v, want only the active one %d", segs, before[len(before)-1])
	}
	mustClose(t, w)

	w = mustOpen(t, dir, opts)
	defer mustClose(t, w)
	active := before[len(before)-1]
	if rec := w.Recovery(); rec.FirstSeq != active || rec.LastSeq != 100 || rec.Segments != 1 {
		t.Fatalf("reopen after Checkpoint: %+v", rec)
	}
	checkRecords(t, replayAll(t, w, 0), want[active-1:], active)
	if seq, err := w.Append(ctx, []byte("x")); err != nil || seq != 101 {
		t.Fatalf("Append after Checkpoint = %d, %v", seq, err)
	}
}

func TestClose(t *testing.T) {
	dir := t.TempDir()
	w := mustOpen(t, dir, nil)
	if _, err := Open(dir, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open of an open log: %v, want ErrLocked", err)
	}
	ctx := context.Background()
	if _, err := w.Append(ctx, []byte("one")); err != nil {
		t.Fatal(err)
	}
	// Appenders racing with Close: each either succeeds (and its record is
	// in the log) or fails with ErrClosed (and it is not).
	var mu sync.Mutex
	outcome := map[string]error{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				p := fmt.Sprintf("g%d-%d", g, i)
				_, err := w.Append(ctx, []byte(p))
				mu.Lock()
				outcome[p] = err
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	mustClose(t, w)
	wg.Wait()

	if _, err := w.Append(ctx, []byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	if _, _, err := w.AppendBatch(ctx, [][]byte{[]byte("x")}); !errors.Is(err, ErrClosed) {
		t.Fatalf("AppendBatch after Close: %v", err)
	}
	if err := w.Replay(0, func(uint64, []byte) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Replay after Close: %v", err)
	}
	if err := w.Checkpoint(0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Checkpoint after Close: %v", err)
	}
	if err := w.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}

	w = mustOpen(t, dir, nil) // the lock is released
	defer mustClose(t, w)
	present := map[string]bool{}
	for _, r := range replayAll(t, w, 0) {
		present[string(r.payload)] = true
	}
	ok, closed := 0, 0
	for p, err := range outcome {
		switch {
		case err == nil:
			ok++
			if !present[p] {
				t.Errorf("acknowledged %q is missing", p)
			}
		case errors.Is(err, ErrClosed):
			closed++
			if present[p] {
				t.Errorf("%q failed with ErrClosed but is in the log", p)
			}
		default:
			t.Errorf("%q: unexpected error %v", p, err)
		}
	}
	if closed != 8 || ok+1 != len(present) {
		t.Fatalf("%d acknowledged, %d ErrClosed, %d in the log", ok, closed, len(present))
	}
}

func TestTooLarge(t *testing.T) {
	dir := t.TempDir()
	w := mustOpen(t, dir, &Options{MaxRecordSize: 100})
	defer mustClose(t, w)
	ctx := context.Background()
	if _, err := w.Append(ctx, make([]byte, 100)); err != nil {
		t.Fatalf("Append at MaxRecordSize: %v", err)
	}
	seg := segmentFiles(t, dir)[0]
	size := fileSize(t, seg)
	if _, err := w.Append(ctx, make([]byte, 101)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Append over MaxRecordSize: %v, want ErrTooLarge", err)
	}
	if _, _, err := w.AppendBatch(ctx, [][]byte{make([]byte, 10), make([]byte, 101), make([]byte, 10)}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("AppendBatch with one payload over MaxRecordSize: %v, want ErrTooLarge", err)
	}
	if got := fileSize(t, seg); got != size || w.LastSeq() != 1 {
		t.Fatalf("after rejected appends: segment %d bytes (was %d), LastSeq %d (want 1)", got, size, w.LastSeq())
	}
	if seq, err := w.Append(ctx, []byte("next")); err != nil || seq != 2 {
		t.Fatalf("Append after rejections = %d, %v; want 2", seq, err)
	}
}

func TestContextCancelled(t *testing.T) {
	dir := t.TempDir()
	w := mustOpen(t, dir, &Options{NoSync: true})
	defer mustClose(t, w)

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.Append(cancelled, []byte("never")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a cancelled context: %v", err)
	}
	if _, _, err := w.AppendBatch(cancelled, [][]byte{[]byte("never")}); !errors.Is(err, context.Canceled) {
		t.Fatalf("AppendBatch with a cancelled context: %v", err)
	}

	// Cancelled while the writer is busy: the append is never taken.
	release := make(chan struct{})
	var hookOnce sync.Once
	w.hookTake = func([]*request) { hookOnce.Do(func() { <-release }) }
	first := make(chan error, 1)
	go func() {
		_, err := w.Append(context.Background(), []byte("first"))
		first <- err
	}()
	time.Sleep(10 * time.Millisecond) // the writer is now blocked in the hook with "first"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := w.Append(ctx, []byte("waiting")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Append cancelled while waiting for the writer: %v", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}

	// Cancelled after the writer received the request but before it took
	// it for writing: nothing written either. The hook sees the group.
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithCancel(context.Background())
		block, seen := make(chan struct{}), false
		var target *request
		var once sync.Once
		w.hookTake = func(group []*request) {
			once.Do(func() { <-block })
			for _, r := range group {
				if string(r.payloads[0]) == "cancel me" {
					target = r
					seen = true
					cancel()
				}
			}
		}
		go w.Append(context.Background(), []byte("blocker")) // parks the writer in the hook
		time.Sleep(5 * time.Millisecond)
		res := make(chan error, 1)
		go func() {
			_, err := w.Append(ctx, []byte("cancel me"))
			res <- err
		}()
		time.Sleep(10 * time.Millisecond) // "cancel me" is waiting to be received
		close(block)
		err := <-res
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("attempt %d: Append cancelled after being received: %v", attempt, err)
		}
		if seen && target != nil {
			break
		}
		if attempt == 20 {
			t.Skip("the writer never received the request before it was cancelled")
		}
	}
	w.hookTake = nil
	for _, r := range replayAll(t, w, 0) {
		if s := string(r.payload); s == "never" || s == "waiting" || s == "cancel me" {
			t.Fatalf("cancelled payload %q was written (seq %d)", s, r.seq)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	var nilOpts *Options
	if err := nilOpts.Validate(); err != nil {
		t.Fatalf("nil Options: %v", err)
	}
	for _, tc := range []struct {
		opts  Options
		field string
	}{
		{Options{SegmentSize: 100}, "SegmentSize"},
		{Options{SegmentSize: -1}, "SegmentSize"},
		{Options{MaxRecordSize: -1}, "MaxRecordSize"},
		{Options{MaxRecordSize: MaxRecordSizeLimit + 1}, "MaxRecordSize"},
		{Options{MaxGroupBytes: -5}, "MaxGroupBytes"},
		{Options{Recovery: 9}, "Recovery"},
	} {
		err := tc.opts.Validate()
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "Options."+tc.field) {
			t.Errorf("%+v: Validate() = %v, want ErrOptions naming %s", tc.opts, err, tc.field)
		}
		if _, err := Open(t.TempDir(), &tc.opts); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: Open = %v, want ErrOptions", tc.opts, err)
		}
	}
	for _, m := range []RecoveryMode{RecoverStrict, RecoverTruncateCorruptTail} {
		b, err := m.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back RecoveryMode
		if err := back.UnmarshalText(b); err != nil || back != m {
			t.Fatalf("%v: round trip gave %v, %v", m, back, err)
		}
	}
	if _, err := RecoveryMode(9).MarshalText(); !errors.Is(err, ErrOptions) {
		t.Fatalf("MarshalText of an unknown mode: %v", err)
	}
}

// TestAckAfterFsync checks, at the moment each append is answered, that
// its records have left the write buffer, are in the file as another
// reader sees it, and have been fsynced: nothing is acknowledged early.
// (The crash test cannot see fsync ordering: a killed process leaves the
// page cache intact.)
func TestAckAfterFsync(t *testing.T) {
	dir := t.TempDir()
	w := mustOpen(t, dir, &Options{SegmentSize: 16 << 10})
	var violations []string
	w.hookAck = func(r *request) { // runs on the writer goroutine
		if r.err != nil {
			return
		}
		if w.unsynced || w.bw.Buffered() > 0 {
			violations = append(violations, fmt.Sprintf("seq %d…%d answered with unsynced or buffered records", r.first, r.last))
		}
		f, err := os.Open(segmentPath(dir, w.segs[len(w.segs)-1]))
		if err != nil {
			violations = append(violations, err.Error())
			return
		}
		defer f.Close()
		st, _ := f.Stat()
		res, err := scanSegment(f, st.Size(), w.segs[len(w.segs)-1], &readBuffers{})
		if err != nil || res.damage != "" || res.lastSeq < r.last {
			violations = append(violations, fmt.Sprintf("seq %d…%d answered, the file holds up to %d (%s, %v)", r.first, r.last, res.lastSeq, res.damage, err))
		}
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				var err error
				if i%3 == 0 {
					_, _, err = w.AppendBatch(ctx, [][]byte{makePayload(uint32(g), uint64(i), 500), makePayload(uint32(g), uint64(i)+1000, 900)})
				} else {
					_, err = w.Append(ctx, makePayload(uint32(g), uint64(i), 700))
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	mustClose(t, w) // the writer has exited: violations is ours
	for _, v := range violations {
		t.Error(v)
	}
	if w.LastSeq() != 4*(40+14) {
		t.Fatalf("LastSeq %d, want %d", w.LastSeq(), 4*(40+14))
	}
}

// Options.OnSync sees every fsync of an acknowledged group.
func TestOnSync(t *testing.T) {
	var n atomic.Int64
	w, err := Open(t.TempDir(), &Options{OnSync: func(d time.Duration) {
		if d >= 0 {
			n.Add(1)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := range 3 {
		if _, err := w.Append(context.Background(), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if n.Load() < 3 {
		t.Fatalf("%d fsyncs observed for 3 sequential appends", n.Load())
	}
}
