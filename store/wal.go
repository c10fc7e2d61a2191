package store

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// WAL is a write-ahead log: a directory of segment files holding records
// with consecutive sequence numbers. See the package documentation for the
// format and the guarantees.
//
// A WAL is safe for concurrent use: Append, AppendBatch, Replay, Checkpoint,
// LastSeq and FirstSeq may be called from any number of goroutines. All
// writes go through one writer goroutine that commits pending appends in
// groups with one fsync per group.
type WAL struct {
	dir  string
	opts Options
	lock *os.File // holds the directory lock
	rec  RecoveryInfo

	reqs    chan *request
	closing chan struct{} // closed by Close
	done    chan struct{} // closed when the writer goroutine exits
	closed  atomic.Bool
	// closeErr is set by the writer goroutine before it closes done.
	closeErr error

	// lastSeq is the last durable (acknowledged or recovered) sequence
	// number.
	lastSeq atomic.Uint64

	// Owned by the writer goroutine (and by Open before it starts it).
	f        *os.File      // the active segment
	bw       *bufio.Writer // buffers writes to f
	segSize  int64         // bytes in f
	next     uint64        // sequence number of the next record
	werr     error         // sticky failure, wraps ErrFailed
	hdr      [headerSize]byte
	unsynced bool             // records written since the last fsync
	hookTake func([]*request) // tests: runs when the writer takes a group
	hookAck  func(*request)   // tests: runs just before a request is answered

	// replayMu is held shared by Replay and exclusively by Checkpoint while
	// it deletes segments.
	replayMu sync.RWMutex

	// mu guards segs.
	mu sync.Mutex
	// segs holds the first sequence numbers of the segments, ascending;
	// the last one is the active segment.
	segs []uint64
}

// request is one Append or AppendBatch waiting for the writer.
type request struct {
	ctx         context.Context
	payloads    [][]byte
	one         [1][]byte // backing array of payloads for Append
	first, last uint64
	err         error
	done        chan struct{}
	// queued, when set, is called once the request's place in the log is
	// fixed (handed to the writer) or it failed before that.
	queued func()
	// rotate asks for a new segment (Rotate); it has no payloads.
	rotate bool
}

// RecoveryInfo describes what Open found and did.
type RecoveryInfo struct {
	// Created is true when the directory held no segment and a new log
	// was started at sequence number 1.
	Created bool
	// Segments is the number of segment files after recovery.
	Segments int
	// FirstSeq is the oldest record kept (LastSeq+1 when there is none).
	FirstSeq uint64
	// LastSeq is the last intact record, the one the next Append follows.
	LastSeq uint64
	// TruncatedBytes is the number of bytes cut from the tail of the last
	// segment (0 when nothing was cut).
	TruncatedBytes int64
	// TruncatedSegment is the file name of the segment that was cut, or "".
	TruncatedSegment string
	// Reason says why the tail was cut ("CRC mismatch", "short record …"),
	// or "".
	Reason string
}

// Open opens the log in dir, creating the directory and an empty log when
// there is none, and recovers it: it checks every record of every segment,
// cuts a torn tail off the last segment (see the package documentation,
// "Recovery"), and starts the writer goroutine. What recovery did is
// reported by [WAL.Recovery].
//
// A log that cannot be recovered without dropping records that may have
// been acknowledged is an error wrapping ErrCorrupt; a directory that
// another open WAL holds is ErrLocked.
func Open(dir string, opts *Options) (*WAL, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.WithDefaults()
	if err := mkdirDurable(dir, !o.NoSync); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	w := &WAL{dir: dir, opts: o, lock: lock}
	if err := w.recover(); err != nil {
		if w.f != nil {
			w.f.Close()
		}
		unlockDir(lock)
		return nil, err
	}
	w.bw = bufio.NewWriterSize(w.f, o.writeBufferSize)
	w.reqs = make(chan *request)
	w.closing = make(chan struct{})
	w.done = make(chan struct{})
	go w.run()
	return w, nil
}

// recover scans the segments, cuts a torn tail and opens the active
// segment.
func (w *WAL) recover() error {
	segs, err := listSegments(w.dir)
	if err != nil {
		return fmt.Errorf("store: open %s: %w", w.dir, err)
	}
	if len(segs) == 0 {
		f, err := os.OpenFile(segmentPath(w.dir, 1), os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("store: create segment: %w", err)
		}
		w.f = f
		if err := w.syncDir(); err != nil {
			return fmt.Errorf("store: create segment: %w", err)
		}
		w.segs = []uint64{1}
		w.next = 1
		w.rec = RecoveryInfo{Created: true, Segments: 1, FirstSeq: 1}
		return nil
	}
	var last uint64
	var rb readBuffers
	for i, first := range segs {
		if i > 0 && first != last+1 {
			return fmt.Errorf("%w: %s: segment %s ends at sequence %d, the next one starts at %d",
				ErrCorrupt, w.dir, segmentName(segs[i-1]), last, first)
		}
		isLast := i == len(segs)-1
		flag := os.O_RDONLY
		if isLast {
			flag = os.O_RDWR | os.O_APPEND
		}
		path := segmentPath(w.dir, first)
		f, err := os.OpenFile(path, flag, 0)
		if err != nil {
			return fmt.Errorf("store: open segment: %w", err)
		}
		if isLast {
			w.f = f // closed by Open on error
		}
		last, err = w.checkSegment(f, first, isLast, &rb)
		if !isLast {
			f.Close()
		}
		if err != nil {
			return err
		}
	}
	if err := w.syncFile(); err != nil {
		return fmt.Errorf("store: sync %s: %w", w.f.Name(), err)
	}
	// A crash between a segment's creation and the directory's fsync can
	// leave the newest segment's entry only in the page cache: make it
	// durable before anything is appended to it.
	if err := w.syncDir(); err != nil {
		return fmt.Errorf("store: sync %s: %w", w.dir, err)
	}
	st, err := w.f.Stat()
	if err != nil {
		return fmt.Errorf("store: open segment: %w", err)
	}
	w.segSize = st.Size()
	w.segs = segs
	w.next = last + 1
	w.lastSeq.Store(last)
	w.rec.Segments = len(segs)
	w.rec.FirstSeq = segs[0]
	w.rec.LastSeq = last
	return nil
}

// checkSegment scans one segment and applies the recovery rule; it returns
// the last sequence number the segment holds after recovery.
func (w *WAL) checkSegment(f *os.File, first uint64, isLast bool, rb *readBuffers) (uint64, error) {
	name := segmentName(first)
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("store: open segment: %w", err)
	}
	size := st.Size()
	res, err := scanSegment(f, size, first, rb)
	if err != nil {
		return 0, fmt.Errorf("store: read %s: %w", name, err)
	}
	if res.damage == "" {
		return res.lastSeq, nil
	}
	if !isLast {
		return 0, fmt.Errorf("%w: %s: %s at offset %d of %d in a segment that is not the last",
			ErrCorrupt, name, res.damage, res.validEnd, size)
	}
	if w.opts.Recovery == RecoverStrict {
		if res.badSeq {
			return 0, fmt.Errorf("%w: %s: %s at offset %d", ErrCorrupt, name, res.damage, res.validEnd)
		}
		tail := make([]byte, size-res.validEnd)
		if _, err := f.ReadAt(tail, res.validEnd); err != nil && err != io.EOF {
			return 0, fmt.Errorf("store: read %s: %w", name, err)
		}
		if j := findIntact(tail, res.lastSeq); j >= 0 {
			return 0, fmt.Errorf("%w: %s: %s at offset %d is followed by an intact record at offset %d",
				ErrCorrupt, name, res.damage, res.validEnd, res.validEnd+int64(j))
		}
	}
	if err := f.Truncate(res.validEnd); err != nil {
		return 0, fmt.Errorf("store: truncate %s: %w", name, err)
	}
	w.rec.TruncatedBytes = size - res.validEnd
	w.rec.TruncatedSegment = name
	w.rec.Reason = res.damage
	return res.lastSeq, nil
}

// syncFile fsyncs the active segment unless Options.NoSync is set, and
// marks everything written so far as synced.
func (w *WAL) syncFile() error {
	if !w.opts.NoSync {
		start := time.Now()
		if err := w.f.Sync(); err != nil {
			return err
		}
		if w.opts.OnSync != nil {
			w.opts.OnSync(time.Since(start))
		}
	}
	w.unsynced = false
	return nil
}

// syncDir fsyncs the directory unless Options.NoSync is set.
func (w *WAL) syncDir() error {
	if w.opts.NoSync {
		return nil
	}
	return syncDir(w.dir)
}

// Recovery reports what Open found and did.
func (w *WAL) Recovery() RecoveryInfo { return w.rec }

// Dir returns the directory of the log.
func (w *WAL) Dir() string { return w.dir }

// LastSeq returns the sequence number of the last durable record: the
// last one acknowledged, or found by Open; 0 for an empty new log.
func (w *WAL) LastSeq() uint64 { return w.lastSeq.Load() }

// FirstSeq returns the sequence number of the oldest record kept, or
// LastSeq()+1 when the log holds none.
func (w *WAL) FirstSeq() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.segs[0]
}

// Append writes one record and returns its sequence number once it is
// durable: a nil error means the record was written and fsynced (unless
// Options.NoSync) and will be replayed after any crash. Append does not
// retain payload, which must not be modified until Append returns.
//
// A payload longer than Options.MaxRecordSize fails with ErrTooLarge.
// ctx is honoured until the writer takes the record: if ctx is done before
// then, Append returns ctx.Err() and nothing is written; once taken, the
// record is written and Append waits for it whatever ctx does. After Close,
// Append returns ErrClosed; after a failed write or fsync, an error
// wrapping ErrFailed (the record may or may not be in the log).
func (w *WAL) Append(ctx context.Context, payload []byte) (uint64, error) {
	return w.AppendQueued(ctx, payload, nil)
}

// AppendQueued is Append, calling queued (when not nil) as soon as the
// record's sequence number is fixed — handed to the writer, before it is
// durable — or the call failed before that; exactly once. A caller that
// holds a lock across AppendQueued and releases it in queued orders its
// records as it orders its lock, without waiting for the fsync under it.
func (w *WAL) AppendQueued(ctx context.Context, payload []byte, queued func()) (uint64, error) {
	r := &request{ctx: ctx, queued: queued}
	r.one[0] = payload
	r.payloads = r.one[:]
	if err := w.submit(r); err != nil {
		return 0, err
	}
	return r.first, r.err
}

// AppendBatch writes payloads as records with consecutive sequence numbers
// first…last, all in one group commit, and returns once all of them are
// durable. It is not atomic across a crash: if the process dies before it
// returns, recovery may find any prefix of the batch. Payloads longer than
// Options.MaxRecordSize fail the whole call with ErrTooLarge before
// anything is written. An empty batch writes nothing and returns 0, 0, nil.
// Everything else is as for Append.
func (w *WAL) AppendBatch(ctx context.Context, payloads [][]byte) (first, last uint64, err error) {
	if len(payloads) == 0 {
		if w.closed.Load() {
			return 0, 0, ErrClosed
		}
		return 0, 0, nil
	}
	r := &request{ctx: ctx, payloads: payloads}
	if err := w.submit(r); err != nil {
		return 0, 0, err
	}
	return r.first, r.last, r.err
}

// Rotate ends the active segment, when it holds any record, and starts a
// new one: a Checkpoint that then covers every record so far removes
// every file that held them (the active segment is never removed, so
// without a rotation the records of a dropped collection would stay in it
// until it filled). Errors are as for Append.
func (w *WAL) Rotate(ctx context.Context) error {
	r := &request{ctx: ctx, rotate: true}
	if err := w.submit(r); err != nil {
		return err
	}
	return r.err
}

// submit checks r, hands it to the writer and waits for the outcome, which
// the writer stores in r.
func (w *WAL) submit(r *request) error {
	queued := r.queued
	defer func() {
		if queued != nil {
			queued()
		}
	}()
	for i, p := range r.payloads {
		if len(p) > w.opts.MaxRecordSize {
			return fmt.Errorf("%w: payload %d is %d bytes, Options.MaxRecordSize is %d", ErrTooLarge, i, len(p), w.opts.MaxRecordSize)
		}
	}
	if w.closed.Load() {
		return ErrClosed
	}
	if err := r.ctx.Err(); err != nil {
		return err
	}
	r.done = make(chan struct{})
	select {
	case w.reqs <- r:
	case <-r.ctx.Done():
		return r.ctx.Err()
	case <-w.closing:
		return ErrClosed
	}
	if queued != nil {
		queued()
		queued = nil
	}
	<-r.done
	if r.err != nil {
		r.first, r.last = 0, 0
	}
	return nil
}

// run is the writer goroutine.
func (w *WAL) run() {
	defer close(w.done)
	var group []*request
	for {
		select {
		case <-w.closing:
			w.closeErr = w.shutdown()
			return
		default:
		}
		var r *request
		select {
		case r = <-w.reqs:
		case <-w.closing:
			w.closeErr = w.shutdown()
			return
		}
		group = append(group[:0], r)
		bytes := r.size()
	gather:
		for bytes < w.opts.MaxGroupBytes {
			select {
			case r := <-w.reqs:
				group = append(group, r)
				bytes += r.size()
			default:
				break gather
			}
		}
		w.commit(group)
		clear(group)
	}
}

func (r *request) size() int {
	n := 0
	for _, p := range r.payloads {
		n += headerSize + len(p)
	}
	return n
}

// commit writes a group, fsyncs once and acknowledges every request.
func (w *WAL) commit(group []*request) {
	if w.hookTake != nil {
		w.hookTake(group)
	}
	if w.werr == nil {
		for _, r := range group {
			if err := r.ctx.Err(); err != nil {
				r.err = err // not taken: nothing written
				continue
			}
			if r.rotate {
				if w.segSize > 0 {
					if err := w.rollover(); err != nil {
						w.fail(err)
						break
					}
				}
				continue
			}
			r.first = w.next
			for _, p := range r.payloads {
				if err := w.writeRecord(p); err != nil {
					w.fail(err)
					break
				}
			}
			r.last = w.next - 1
			if w.werr != nil {
				break
			}
		}
	}
	if w.werr == nil {
		if err := w.bw.Flush(); err != nil {
			w.fail(err)
		} else if err := w.syncFile(); err != nil {
			w.fail(err)
		} else {
			w.lastSeq.Store(w.next - 1)
		}
	}
	for _, r := range group {
		if w.werr != nil && r.err == nil {
			r.err = w.werr
		}
		w.ack(r)
	}
}

// ack answers a request.
func (w *WAL) ack(r *request) {
	if w.hookAck != nil {
		w.hookAck(r)
	}
	close(r.done)
}

// writeRecord buffers one record, rolling over to a new segment first when
// it does not fit in a non-empty active one.
func (w *WAL) writeRecord(p []byte) error {
	size := int64(headerSize + len(p))
	if w.segSize > 0 && w.segSize+size > w.opts.SegmentSize {
		if err := w.rollover(); err != nil {
			return err
		}
	}
	putHeader(w.hdr[:], w.next, p)
	if _, err := w.bw.Write(w.hdr[:]); err != nil {
		return err
	}
	if _, err := w.bw.Write(p); err != nil {
		return err
	}
	w.segSize += size
	w.next++
	w.unsynced = true
	return nil
}

// rollover makes the active segment durable and starts a new one whose
// name is the next sequence number. The old segment is fsynced before the
// new one exists, so that a segment that is not the last is always whole.
func (w *WAL) rollover() error {
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if err := w.syncFile(); err != nil {
		return err
	}
	if err := w.f.Close(); err != nil {
		return err
	}
	f, err := os.OpenFile(segmentPath(w.dir, w.next), os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		w.f = nil
		return err
	}
	w.f = f
	w.bw.Reset(f)
	w.segSize = 0
	w.mu.Lock()
	w.segs = append(w.segs, w.next)
	w.mu.Unlock()
	return w.syncDir()
}

// fail makes the WAL refuse every later append.
func (w *WAL) fail(err error) {
	if w.werr == nil {
		w.werr = fmt.Errorf("%w: %w", ErrFailed, err)
	}
}

// shutdown flushes, fsyncs and closes the active segment.
func (w *WAL) shutdown() error {
	if w.f == nil {
		return w.werr
	}
	err := w.werr
	if err == nil {
		if err = w.bw.Flush(); err == nil {
			err = w.syncFile()
		}
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}

// Close stops the writer after the group it is committing, fsyncs and
// closes the active segment and releases the directory. Appends waiting to
// be taken, and every later call, fail with ErrClosed; a Replay in progress
// finishes. Close returns the error of the final fsync, or of an earlier
// failure (ErrFailed); a second Close returns ErrClosed.
func (w *WAL) Close() error {
	if !w.closed.CompareAndSwap(false, true) {
		return ErrClosed
	}
	close(w.closing)
	<-w.done
	// Wait for a running Replay or Checkpoint before releasing the
	// directory lock: a Checkpoint must not delete segments after another
	// process may have opened the log.
	w.replayMu.Lock()
	defer w.replayMu.Unlock()
	err := w.closeErr
	if uerr := unlockDir(w.lock); err == nil {
		err = uerr
	}
	return err
}

// Replay calls fn for every record with a sequence number from from to
// LastSeq() as of the start of the call, in order. from = 0 means the
// oldest record kept (FirstSeq); a from before FirstSeq() or after
// LastSeq()+1 is ErrOutOfRange (records before FirstSeq were removed by
// Checkpoint). Every record is checked again as it is read; a damaged one
// is an error wrapping ErrCorrupt. An error from fn stops the replay and is
// returned as is.
//
// payload is only valid until fn returns. Replay may run concurrently with
// appends; fn must not call Checkpoint (it would wait for Replay to end).
func (w *WAL) Replay(from uint64, fn func(seq uint64, payload []byte) error) error {
	if w.closed.Load() {
		return ErrClosed
	}
	w.replayMu.RLock()
	defer w.replayMu.RUnlock()
	last := w.lastSeq.Load()
	w.mu.Lock()
	segs := slices.Clone(w.segs)
	w.mu.Unlock()
	if from == 0 {
		from = segs[0]
	}
	if from < segs[0] || from > last+1 {
		return fmt.Errorf("%w: replay from %d, the log holds %d…%d", ErrOutOfRange, from, segs[0], last)
	}
	var rb readBuffers
	for i, first := range segs {
		if first > last {
			break // no durable record yet
		}
		end := last
		if i+1 < len(segs) {
			end = min(end, segs[i+1]-1)
		}
		if end < from {
			continue
		}
		if err := w.replaySegment(first, from, end, &rb, fn); err != nil {
			return err
		}
	}
	return nil
}

// replaySegment calls fn for the records from…end of the segment whose
// first record is first.
func (w *WAL) replaySegment(first, from, end uint64, rb *readBuffers, fn func(uint64, []byte) error) error {
	f, err := os.Open(segmentPath(w.dir, first))
	if err != nil {
		return fmt.Errorf("store: replay: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("store: replay: %w", err)
	}
	s := segmentReader{name: segmentName(first), br: rb.reader(f), rb: rb, expect: first, size: st.Size()}
	for s.expect <= end {
		seq, payload, err := s.next()
		if err != nil {
			return err
		}
		if seq >= from {
			if err := fn(seq, payload); err != nil {
				return err
			}
		}
	}
	return nil
}

// Checkpoint declares that every record up to seq is no longer needed —
// typically because a snapshot that includes it is durable — and deletes
// the segments whose records are all ≤ seq, oldest first, fsyncing the
// directory after each. The active segment is never deleted, so FirstSeq
// may stay ≤ seq. seq > LastSeq() is ErrOutOfRange. Checkpoint waits for
// Replays in progress.
func (w *WAL) Checkpoint(seq uint64) error {
	if w.closed.Load() {
		return ErrClosed
	}
	if last := w.lastSeq.Load(); seq > last {
		return fmt.Errorf("%w: checkpoint at %d, the last record is %d", ErrOutOfRange, seq, last)
	}
	w.replayMu.Lock()
	defer w.replayMu.Unlock()
	for {
		w.mu.Lock()
		removable := len(w.segs) > 1 && w.segs[1]-1 <= seq
		first := w.segs[0]
		w.mu.Unlock()
		if !removable {
			return nil
		}
		if err := os.Remove(segmentPath(w.dir, first)); err != nil {
			return fmt.Errorf("store: checkpoint: %w", err)
		}
		w.mu.Lock()
		w.segs = w.segs[1:]
		w.mu.Unlock()
		if err := w.syncDir(); err != nil {
			return fmt.Errorf("store: checkpoint: %w", err)
		}
	}
}
