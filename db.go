package tidemark

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemark/tidemark/embed"
	"github.com/tidemark/tidemark/internal/wire"
	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/store"
	"github.com/tidemark/tidemark/temporal"
)

// DB is a tidemark database: a directory holding a write-ahead log and a
// snapshot, and the collections recovered from them. A DB is safe for
// concurrent use.
type DB struct {
	dir  string
	opts Options
	wal  *store.WAL
	info RecoveryInfo

	mu     sync.RWMutex // guards colls and closed
	colls  map[string]*Collection
	closed bool
	calls  sync.WaitGroup // writes in flight (Close waits for them)

	// The apply sequencer: records are applied in log order, one at a time.
	seqMu      sync.Mutex
	seqCond    *sync.Cond
	applied    uint64  // the last record applied
	lastTx     float64 // the latest transaction time given, days
	sinceCkpt  int     // records since the last snapshot
	bytesSince int64
	failed     error // set once the log failed: no more writes

	ckptMu      sync.Mutex // one checkpoint at a time
	ckptRunning atomic.Bool
	bg          sync.WaitGroup
	// ckptTries (guarded by seqMu) is 1 + the number of background
	// checkpoints that failed in a row; ckptErr the last one's error.
	ckptTries int
	ckptErr   error

	// embCache is the remote embedders' file cache, opened at first use
	// (embedder.go); embErr why it could not be.
	embMu     sync.Mutex
	embCache  *embed.FileCache
	embErr    error
	embClosed bool

	stop chan struct{} // closed by Close: background work ends
	// bgBackend runs consolidation's batched passes on half the cores, so
	// that searches keep the other half.
	bgBackend   kernels.Backend
	lastConsMu  sync.Mutex
	lastCons    []ConsolidationReport
	lastConsErr error
}

// RecoveryInfo says what Open found.
type RecoveryInfo struct {
	// SnapshotSeq is the log sequence number the snapshot included (0 when
	// there was none); Replayed the number of log records applied after it.
	SnapshotSeq uint64
	Replayed    int
	// IndexRebuilt names the collections whose HNSW indexes disagreed with
	// the ledger (or could not be read) and were rebuilt from it.
	IndexRebuilt []string
	// Log is what the write-ahead log's recovery did (a cut torn tail).
	Log store.RecoveryInfo
	// Duration is how long Open took.
	Duration time.Duration
}

const snapshotName = "snapshot"

// Open opens (creating when needed) the database in dir: it recovers the
// log (cutting a torn tail, refusing real corruption with ErrCorrupt),
// loads the snapshot with its HNSW indexes, checks the indexes against
// the ledger (rebuilding any that disagree), and replays the log records
// after the snapshot. A nil opts means the defaults.
func Open(dir string, opts *Options) (*DB, error) {
	start := time.Now()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.WithDefaults()
	o.Embedders = maps.Clone(o.Embedders) // the caller may change its map
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	wal, err := store.Open(dir, &store.Options{NoSync: o.NoSync, MaxRecordSize: o.MaxRecordBytes, OnSync: o.OnSync})
	if err != nil {
		return nil, mapStoreErr(err)
	}
	db := &DB{dir: dir, opts: o, wal: wal, colls: map[string]*Collection{}, ckptTries: 1}
	db.seqCond = sync.NewCond(&db.seqMu)
	db.info.Log = wal.Recovery()
	if err := db.recover(); err != nil {
		wal.Close()
		return nil, err
	}
	if err := db.checkEmbedders(); err != nil {
		wal.Close()
		return nil, err
	}
	db.info.Duration = time.Since(start)
	db.stop = make(chan struct{})
	db.bgBackend = kernels.NewCPU(&kernels.CPUOptions{Workers: max(1, runtime.GOMAXPROCS(0)/2)})
	if o.ConsolidateEvery > 0 {
		db.bg.Add(1)
		go db.consolidateLoop(o.ConsolidateEvery)
	}
	return db, nil
}

// consolidateLoop runs Consolidate every interval until Close.
func (db *DB) consolidateLoop(every time.Duration) {
	defer db.bg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-db.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-db.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		reps, err := db.Consolidate(ctx, nil)
		cancel()
		db.lastConsMu.Lock()
		db.lastCons, db.lastConsErr = reps, err
		db.lastConsMu.Unlock()
	}
}

// LastConsolidation returns the reports and error of the last background
// consolidation run (Options.ConsolidateEvery), or nil, nil before one.
func (db *DB) LastConsolidation() ([]ConsolidationReport, error) {
	db.lastConsMu.Lock()
	defer db.lastConsMu.Unlock()
	return slices.Clone(db.lastCons), db.lastConsErr
}

func mapStoreErr(err error) error {
	switch {
	case errors.Is(err, store.ErrCorrupt), errors.Is(err, store.ErrOutOfRange):
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	case errors.Is(err, store.ErrFailed):
		return fmt.Errorf("%w: %w", ErrFailed, err)
	case errors.Is(err, store.ErrClosed):
		return fmt.Errorf("%w: %w", ErrClosed, err)
	case errors.Is(err, store.ErrTooLarge):
		return fmt.Errorf("%w: %w", ErrTooLarge, err)
	}
	return err
}

func (db *DB) recover() error {
	snap, err := store.OpenSnapshot(db.dir, snapshotName)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return mapStoreErr(err)
	default:
		err = db.readState(snap)
		snap.Close()
		if err != nil {
			return err
		}
		db.info.SnapshotSeq = snap.Seq
		db.applied = snap.Seq
	}
	if first := db.wal.FirstSeq(); db.applied+1 < first {
		return fmt.Errorf("%w: the snapshot includes records up to %d but the log starts at %d", ErrCorrupt, db.applied, first)
	}
	err = db.wal.Replay(db.applied+1, func(seq uint64, payload []byte) error {
		rec, err := decodeRecord(payload)
		if err != nil {
			return fmt.Errorf("%w: log record %d: %w", ErrCorrupt, seq, err)
		}
		db.apply(rec, seq)
		db.applied = seq
		db.info.Replayed++
		db.sinceCkpt++
		db.bytesSince += int64(len(payload))
		return nil
	})
	return mapStoreErr(err)
}

// Backend names the fused scoring stage searches run on (for example
// "cpu/avx2+fma (vek)").
func (db *DB) Backend() string { return db.opts.Backend.Name() }

// Err returns nil while the DB takes writes: ErrClosed after Close, or an
// error wrapping ErrFailed after a log failure (reads go on then).
func (db *DB) Err() error { return db.usable() }

// CheckpointError returns the error of the last background checkpoint if
// it failed (nil once one succeeds). Writes go on while checkpoints fail,
// but the log grows and Open takes longer.
func (db *DB) CheckpointError() error {
	db.seqMu.Lock()
	defer db.seqMu.Unlock()
	return db.ckptErr
}

// Recovery returns what Open found and did.
func (db *DB) Recovery() RecoveryInfo { return db.info }

// Dir returns the database directory.
func (db *DB) Dir() string { return db.dir }

// readable returns ErrClosed after Close, else nil: reads go on after a
// log failure (the memory state is whole; only new writes are refused).
func (db *DB) readable() error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return ErrClosed
	}
	return nil
}

// usable returns why the DB takes no writes, or nil.
func (db *DB) usable() error {
	db.mu.RLock()
	closed := db.closed
	db.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	db.seqMu.Lock()
	defer db.seqMu.Unlock()
	return db.failed
}

// enter registers a call that Close must wait for (the caller calls
// db.calls.Done), or returns ErrClosed.
func (db *DB) enter() error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return ErrClosed
	}
	db.calls.Add(1)
	return nil
}

// commit logs rec, waits for fsync, and applies it in log order.
func (db *DB) commit(ctx context.Context, rec *record) (any, error) {
	return db.commitQueued(ctx, rec, nil)
}

// commitQueued is commit, calling queued (when not nil) exactly once, as
// soon as the record's place in the log is fixed or the commit failed
// before that (store.WAL.AppendQueued).
func (db *DB) commitQueued(ctx context.Context, rec *record, queued func()) (any, error) {
	once := func() {
		if queued != nil {
			queued()
			queued = nil
		}
	}
	defer once()
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.calls.Done()
	db.seqMu.Lock()
	failed := db.failed
	db.seqMu.Unlock()
	if failed != nil {
		return nil, failed
	}
	rec.tx = db.opts.Clock().UTC()
	payload := rec.encode()
	if len(payload) > db.opts.MaxRecordBytes {
		return nil, fmt.Errorf("%w: the write encodes to %d bytes, at most %d (Options.MaxRecordBytes)", ErrTooLarge, len(payload), db.opts.MaxRecordBytes)
	}
	seq, err := db.wal.AppendQueued(ctx, payload, once)
	if err != nil {
		if errors.Is(err, store.ErrFailed) {
			db.seqMu.Lock()
			db.failed = fmt.Errorf("%w: %w", ErrFailed, err)
			db.seqCond.Broadcast()
			db.seqMu.Unlock()
		}
		return nil, mapStoreErr(err)
	}
	db.seqMu.Lock()
	for db.applied+1 != seq && db.failed == nil {
		db.seqCond.Wait()
	}
	if db.failed != nil && db.applied+1 != seq {
		err := db.failed
		db.seqMu.Unlock()
		return nil, err
	}
	res, aerr := db.apply(rec, seq)
	db.applied = seq
	db.sinceCkpt++
	db.bytesSince += int64(len(payload))
	kick := (db.opts.CheckpointRecords > 0 && db.sinceCkpt >= db.opts.CheckpointRecords*db.ckptTries) ||
		(db.opts.CheckpointBytes > 0 && db.bytesSince >= db.opts.CheckpointBytes*int64(db.ckptTries))
	db.seqCond.Broadcast()
	db.seqMu.Unlock()
	if kick && db.ckptRunning.CompareAndSwap(false, true) {
		db.bg.Add(1)
		go func() {
			defer db.bg.Done()
			defer db.ckptRunning.Store(false)
			err := db.Checkpoint(context.Background())
			db.seqMu.Lock()
			if err != nil {
				// Back off: try again after another interval's worth of
				// records, not on every write (a full disk would otherwise
				// stall every commit behind a snapshot attempt).
				db.ckptTries++
				db.ckptErr = err
			} else {
				db.ckptTries, db.ckptErr = 1, nil
			}
			db.seqMu.Unlock()
		}()
	}
	return res, aerr
}

// apply applies one logged record; it is deterministic, and the same on
// replay as when first written. Its error is the caller's (a name that
// was taken meanwhile), never a reason to stop replay.
func (db *DB) apply(rec *record, seq uint64) (any, error) {
	tx := max(days(rec.tx, 0), db.lastTx)
	db.lastTx = tx
	switch rec.typ {
	case recCreate:
		db.mu.Lock()
		defer db.mu.Unlock()
		if _, ok := db.colls[rec.coll]; ok {
			return nil, fmt.Errorf("%w: collection %q", ErrExists, rec.coll)
		}
		c, err := newCollection(db, rec.coll, rec.opts.createdAt(rec.tx))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOptions, err)
		}
		c.incarnation = seq
		db.colls[rec.coll] = c
		return c, nil
	case recDrop:
		db.mu.Lock()
		c, ok := db.colls[rec.coll]
		if ok && c.incarnation == rec.inc {
			delete(db.colls, rec.coll)
		}
		db.mu.Unlock()
		if !ok || c.incarnation != rec.inc {
			return nil, fmt.Errorf("%w: collection %q", ErrNotFound, rec.coll)
		}
		c.mu.Lock()
		c.dropped = true
		c.mu.Unlock()
		return nil, nil
	case recPut:
		c := db.lookupInc(rec.coll, rec.inc)
		if c == nil {
			return nil, nil
		}
		return c.applyPut(rec.mems, tx), nil
	case recPutDoc:
		c := db.lookupInc(rec.coll, rec.inc)
		if c == nil {
			return nil, fmt.Errorf("%w: collection %q", ErrNotFound, rec.coll)
		}
		return c.applyPutDoc(rec.mems, rec.replaced, rec.later, rec.shift, tx), nil
	case recFeedback:
		c := db.lookupInc(rec.coll, rec.inc)
		if c == nil {
			return nil, fmt.Errorf("%w: collection %q", ErrNotFound, rec.coll)
		}
		return nil, c.applyFeedback(rec.id, rec.source, rec.positive, rec.negative, tx)
	case recAccess:
		c := db.lookupInc(rec.coll, rec.inc)
		if c == nil {
			return nil, fmt.Errorf("%w: collection %q", ErrNotFound, rec.coll)
		}
		c.applyAccess(rec.access)
		return nil, nil
	case recConsolidate:
		c := db.lookupInc(rec.coll, rec.inc)
		if c == nil {
			return nil, fmt.Errorf("%w: collection %q", ErrNotFound, rec.coll)
		}
		return c.applyConsolidate(rec.edits, rec.seeds, seq, tx), nil
	}
	return nil, fmt.Errorf("%w: record %d has type %d", ErrCorrupt, seq, rec.typ)
}

// lookupInc returns the collection name if it is incarnation inc.
func (db *DB) lookupInc(name string, inc uint64) *Collection {
	if c := db.lookup(name); c != nil && c.incarnation == inc {
		return c
	}
	return nil
}

func (db *DB) lookup(name string) *Collection {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.colls[name]
}

// CreateCollection creates a collection; its options are fixed from then
// on. A taken name is ErrExists.
func (db *DB) CreateCollection(ctx context.Context, name string, opts *CollectionOptions) (*Collection, error) {
	if err := validID(name, "collection name"); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o, err := db.creatable(name, opts)
	if err != nil {
		return nil, err
	}
	if db.lookup(name) != nil {
		return nil, fmt.Errorf("%w: collection %q", ErrExists, name)
	}
	res, err := db.commit(ctx, &record{typ: recCreate, coll: name, opts: o})
	if err != nil {
		return nil, err
	}
	return res.(*Collection), nil
}

// Collection returns the named collection, or ErrNotFound.
func (db *DB) Collection(name string) (*Collection, error) {
	if err := db.readable(); err != nil {
		return nil, err
	}
	if c := db.lookup(name); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("%w: collection %q", ErrNotFound, name)
}

// Collections returns the collection names, sorted.
func (db *DB) Collections() []string {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return slices.Sorted(maps.Keys(db.colls))
}

// DropCollection removes a collection and all its memories, the one
// purge the engine has: the log keeps the records until the next
// checkpoint, the snapshot after it no longer holds them.
func (db *DB) DropCollection(ctx context.Context, name string) error {
	c := db.lookup(name)
	if c == nil {
		if err := db.usable(); err != nil {
			return err
		}
		return fmt.Errorf("%w: collection %q", ErrNotFound, name)
	}
	_, err := db.commit(ctx, &record{typ: recDrop, coll: name, inc: c.incarnation})
	return err
}

// Checkpoint writes a snapshot of every collection (ledger and HNSW
// indexes) tagged with the last applied log record, then drops the log
// segments it makes unnecessary. Writes wait while the snapshot is
// written; searches go on. The DB checkpoints on its own after
// Options.CheckpointRecords records or CheckpointBytes bytes, and on Close.
func (db *DB) Checkpoint(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	db.seqMu.Lock()
	if db.failed != nil {
		err := db.failed
		db.seqMu.Unlock()
		return err
	}
	seq := db.applied
	for _, c := range db.snapshotColls() {
		if c.surface.Deleted() > c.surface.Len()/4 {
			c.surface.Compact()
		}
	}
	err := store.WriteSnapshot(db.dir, snapshotName, seq, db.writeState)
	if err == nil {
		db.sinceCkpt, db.bytesSince = 0, 0
	}
	db.seqMu.Unlock()
	if err != nil {
		return mapStoreErr(err)
	}
	return mapStoreErr(db.wal.Checkpoint(seq))
}

func (db *DB) snapshotColls() []*Collection {
	db.mu.RLock()
	defer db.mu.RUnlock()
	names := slices.Sorted(maps.Keys(db.colls))
	out := make([]*Collection, len(names))
	for i, n := range names {
		out[i] = db.colls[n]
	}
	return out
}

// Close waits for the writes in flight, writes a final snapshot when the
// log holds records after the last one, and closes the log. Calls after
// Close return ErrClosed.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return ErrClosed
	}
	db.closed = true
	db.mu.Unlock()
	close(db.stop)
	db.calls.Wait()
	db.bg.Wait()
	var err error
	db.seqMu.Lock()
	pending := db.sinceCkpt > 0 && db.failed == nil
	db.seqMu.Unlock()
	if pending {
		err = db.Checkpoint(context.Background())
	}
	if cpu, ok := db.bgBackend.(*kernels.CPU); ok {
		cpu.Close()
	}
	return errors.Join(err, db.closeEmbedCache(), mapStoreErr(db.wal.Close()))
}

// Get returns the memory with id (or the memory it was folded into as a
// duplicate, whose ID then differs), with its unit vector.
func (c *Collection) Get(ctx context.Context, id string) (Memory, error) {
	if err := ctx.Err(); err != nil {
		return Memory{}, err
	}
	if err := c.db.readable(); err != nil {
		return Memory{}, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	j, ok := c.byID[id]
	if !ok || c.dropped {
		return Memory{}, fmt.Errorf("%w: memory %q in collection %q", ErrNotFound, id, c.name)
	}
	m := c.memory(j)
	b := c.rows[j].beliefs[0]
	m.Vector = slices.Clone(c.batch.Vectors[b*c.opts.Dim : (b+1)*c.opts.Dim])
	return m, nil
}

// History returns every version linked to the memory with id through
// version links (key and document supersession), oldest first — what
// was believed, when, and which version replaced which. Vectors are left
// out.
func (c *Collection) History(ctx context.Context, id string) ([]Memory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := c.db.readable(); err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	j, ok := c.byID[id]
	if !ok || c.dropped {
		return nil, fmt.Errorf("%w: memory %q in collection %q", ErrNotFound, id, c.name)
	}
	seen := map[int]bool{j: true}
	stack := []int{j}
	for len(stack) > 0 {
		r := &c.rows[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		next := slices.Clone(r.supersedes)
		if r.supersededBy >= 0 {
			next = append(next, r.supersededBy)
		}
		for _, o := range next {
			if !seen[o] {
				seen[o] = true
				stack = append(stack, o)
			}
		}
	}
	rows := slices.Collect(maps.Keys(seen))
	sort.Slice(rows, func(a, b int) bool {
		return temporal.Newer(c.rows[rows[b]].assertion(rows[b]), c.rows[rows[a]].assertion(rows[a]))
	})
	out := make([]Memory, len(rows))
	for i, r := range rows {
		out[i] = c.memory(r)
	}
	return out, nil
}

// FactHistory returns every memory stated about the fact (subject,
// relation) — normalised as the write path normalises keys — in the
// order supersession ranks them, oldest first: the fact's lineage.
func (c *Collection) FactHistory(ctx context.Context, subject, relation string) ([]Memory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := c.db.readable(); err != nil {
		return nil, err
	}
	k := temporal.NewFactKey(subject, relation)
	c.mu.RLock()
	defer c.mu.RUnlock()
	chain := c.byKey[k]
	if k.IsZero() || len(chain) == 0 || c.dropped {
		return nil, fmt.Errorf("%w: fact (%q, %q) in collection %q", ErrNotFound, subject, relation, c.name)
	}
	out := make([]Memory, len(chain))
	for i, j := range chain {
		out[i] = c.memory(j)
	}
	return out, nil
}

// The log record.

type recType byte

const (
	recCreate recType = iota + 1
	recDrop
	recPut
	recFeedback
	recConsolidate
	recAccess
	recPutDoc
)

type record struct {
	typ  recType
	coll string
	// inc is the incarnation of the collection the record is for (the
	// sequence number of its create record): a record written through a
	// handle of a dropped collection never lands in a new one of the same
	// name.
	inc                uint64
	tx                 time.Time
	opts               CollectionOptions // recCreate
	mems               []Memory          // recPut
	id, source         string            // recFeedback
	positive, negative int64
	access             []accessCount // recAccess
	replaced, later    []string      // recPutDoc (with mems)
	shift              int
	edits              []edit // recConsolidate
	seeds              []int
}

// recordVersion is the log record format: 2 adds the derived fact key of
// a memory (Memory.KeyRule, KeyFrom) and a collection's key policy and
// remote embedder. Version 1 records are still read: their collections
// key explicitly and their "hashing" embedder is "hashing-words".
const recordVersion = 2

func (r *record) encode() []byte {
	var w wire.Writer
	w.Byte(recordVersion)
	w.Byte(byte(r.typ))
	w.String(r.coll)
	w.Uvarint(r.inc)
	w.Time(r.tx)
	switch r.typ {
	case recCreate:
		encodeCollOpts(&w, &r.opts)
	case recPut, recPutDoc:
		w.Uvarint(uint64(len(r.mems)))
		for i := range r.mems {
			r.mems[i].encode(&w)
		}
		if r.typ == recPutDoc {
			encodeReplaced(&w, r.replaced)
			encodeReplaced(&w, r.later)
			w.Varint(int64(r.shift))
		}
	case recFeedback:
		w.String(r.id)
		w.String(r.source)
		w.Varint(r.positive)
		w.Varint(r.negative)
	case recAccess:
		w.Uvarint(uint64(len(r.access)))
		for _, a := range r.access {
			w.Uvarint(uint64(a.row))
			w.Uvarint(uint64(a.n))
		}
	case recConsolidate:
		encodeEdits(&w, r.edits, r.seeds)
	}
	return w.B
}

func decodeRecord(b []byte) (*record, error) {
	rd := wire.NewReader(b)
	v := rd.Byte()
	if (v < 1 || v > recordVersion) && rd.Err() == nil {
		return nil, fmt.Errorf("record version %d, this build reads 1…%d", v, recordVersion)
	}
	r := &record{typ: recType(rd.Byte())}
	r.coll = rd.String(MaxIDBytes)
	r.inc = rd.Uvarint()
	r.tx = rd.Time()
	switch r.typ {
	case recCreate:
		r.opts = decodeCollOpts(rd, v)
	case recDrop:
	case recPut, recPutDoc:
		n := rd.Count(1<<30, 8)
		r.mems = make([]Memory, 0, n)
		for range n {
			r.mems = append(r.mems, decodeMemory(rd, v))
		}
		if r.typ == recPutDoc {
			r.replaced = decodeReplaced(rd)
			r.later = decodeReplaced(rd)
			r.shift = int(rd.Int(-maxDocBytes, maxDocBytes))
		}
	case recFeedback:
		r.id = rd.String(MaxIDBytes)
		r.source = rd.String(MaxIDBytes)
		r.positive = rd.Int(0, MaxCounter)
		r.negative = rd.Int(0, MaxCounter)
	case recConsolidate:
		r.edits, r.seeds = decodeEdits(rd)
	case recAccess:
		n := rd.Count(1<<30, 2)
		for range n {
			r.access = append(r.access, accessCount{row: int(rd.Int64Max(1 << 40)), n: int(rd.Int64Max(MaxCounter))})
		}
	default:
		rd.Fail(fmt.Errorf("unknown record type %d", r.typ))
	}
	if rd.Err() == nil && rd.Len() != 0 {
		rd.Fail(fmt.Errorf("%d trailing bytes", rd.Len()))
	}
	return r, rd.Err()
}

func encodeCollOpts(w *wire.Writer, o *CollectionOptions) {
	w.Uvarint(uint64(o.Dim))
	w.Byte(byte(o.Method))
	w.Float64(o.HalfLife)
	w.Time(o.Epoch)
	w.String(o.Embedder)
	for _, x := range []int{o.ExactThreshold, o.Overfetch, o.M, o.EfConstruction, o.Ef, o.ExpandHops, o.ExpandBudget, o.FeedbackPerDay, o.FeedbackPerSource} {
		w.Uvarint(uint64(x))
	}
	w.Bool(o.StaticDecay)
	w.Byte(byte(o.Keys))
	w.String(o.Remote.BaseURL)
	w.String(o.Remote.Model)
	w.String(o.Remote.APIKeyEnv)
}

// decodeCollOpts reads what encodeCollOpts wrote in format version v.
func decodeCollOpts(r *wire.Reader, v byte) CollectionOptions {
	var o CollectionOptions
	o.Dim = r.Count(MaxDim, 0)
	o.Method = temporal.Method(r.Byte())
	o.HalfLife = r.Float64()
	o.Epoch = r.Time()
	o.Embedder = r.String(64)
	for _, p := range []*int{&o.ExactThreshold, &o.Overfetch, &o.M, &o.EfConstruction, &o.Ef, &o.ExpandHops, &o.ExpandBudget, &o.FeedbackPerDay, &o.FeedbackPerSource} {
		*p = r.Count(1<<30, 0)
	}
	o.StaticDecay = r.Bool()
	if v >= 2 {
		o.Keys = KeyPolicy(r.Byte())
		o.Remote.BaseURL = r.String(2048)
		o.Remote.Model = r.String(256)
		o.Remote.APIKeyEnv = r.String(256)
	} else {
		o.Keys = KeysExplicit
		if o.Embedder == "hashing" {
			o.Embedder = "hashing-words"
		}
	}
	if r.Err() == nil {
		if err := o.Validate(); err != nil {
			r.Fail(err)
		}
	}
	return o
}
