package tidemark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemark/tidemark/embed"
	"github.com/tidemark/tidemark/internal/pgstore"
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
	wal  *store.WAL     // the embedded store's log, or nil
	pg   *pgstore.Store // a PostgreSQL store, or nil (postgres.go)
	info RecoveryInfo
	repl replication // a PostgreSQL store's follower (postgres.go)
	// appliedSeq mirrors seq.applied for readers that must not wait for
	// an apply in progress (Seq).
	appliedSeq atomic.Uint64

	// Lock order, outermost first: a collection's consMu and derive.mu
	// (collection.go), ckptMu, seq.mu, mu, then a collection's mu; embMu
	// and lastConsMu are leaves.

	ckptMu      sync.Mutex // one checkpoint at a time
	ckptRunning atomic.Bool
	bg          sync.WaitGroup

	// seq is the apply sequencer: records are applied in log order, one
	// at a time, under seq.mu.
	seq struct {
		mu         sync.Mutex
		cond       *sync.Cond // signalled when applied or failed changes
		applied    uint64     // the last record applied
		lastTx     float64    // the latest transaction time given, days
		sinceCkpt  int        // records since the last snapshot
		bytesSince int64
		failed     error // set once the log failed: no more writes
		// ckptTries is 1 + the number of background checkpoints that
		// failed in a row; ckptErr the last one's error.
		ckptTries int
		ckptErr   error
		ckptFails uint64 // background checkpoints failed since Open
	}

	mu     sync.RWMutex // guards colls and closed
	colls  map[string]*Collection
	closed bool
	calls  sync.WaitGroup // writes in flight (Close waits for them)

	// embCache is the remote embedders' file cache, opened at first use
	// (embedder.go); embErr why it could not be. Guarded by embMu.
	embMu     sync.Mutex
	embCache  *embed.FileCache
	embErr    error
	embClosed bool

	stop chan struct{} // closed by Close: background work ends
	// bgBackend runs consolidation's batched passes on half the cores, so
	// that searches keep the other half.
	bgBackend kernels.Backend
	// lastCons is the last background consolidation's reports and error,
	// guarded by lastConsMu.
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
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	wal, err := store.Open(dir, &store.Options{NoSync: o.NoSync, MaxRecordSize: o.MaxRecordBytes, OnSync: o.OnSync})
	if err != nil {
		return nil, mapStoreErr(err)
	}
	db := newDB(dir, o)
	db.wal = wal
	db.info.Log = wal.Recovery()
	if err := db.open(start, db.recover, func() { wal.Close() }); err != nil {
		return nil, err
	}
	return db, nil
}

// open is the end of Open and OpenPostgres: load the state, check the
// embedders, start the background work; closeStore releases the store
// when one of them fails.
func (db *DB) open(began time.Time, load func() error, closeStore func()) error {
	err := load()
	if err == nil {
		err = db.checkEmbedders()
	}
	if err != nil {
		closeStore()
		return err
	}
	db.start(began)
	return nil
}

func newDB(dir string, o Options) *DB {
	db := &DB{dir: dir, opts: o, colls: map[string]*Collection{}}
	db.seq.ckptTries = 1
	db.seq.cond = sync.NewCond(&db.seq.mu)
	return db
}

// start starts the background work of a recovered DB.
func (db *DB) start(began time.Time) {
	db.appliedSeq.Store(db.seq.applied)
	db.info.Duration = time.Since(began)
	db.stop = make(chan struct{})
	db.bgBackend = kernels.NewCPU(&kernels.CPUOptions{Workers: max(1, runtime.GOMAXPROCS(0)/2)})
	if db.opts.ConsolidateEvery > 0 {
		db.bg.Add(1)
		go db.consolidateLoop(db.opts.ConsolidateEvery)
	}
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

// loadSnapshotFile loads the snapshot file, if there is one: mapped into
// memory where the platform can (store.MapSnapshot; its CRC is computed
// as the body is parsed, and checked before anything is used), else read
// as a stream.
func (db *DB) loadSnapshotFile() error {
	m, err := store.MapSnapshot(db.dir, snapshotName)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case errors.Is(err, errors.ErrUnsupported):
		snap, err := store.OpenSnapshot(db.dir, snapshotName)
		if err != nil {
			return mapStoreErr(err)
		}
		defer snap.Close()
		return db.loadSnapshot(snap, snap.Size, snap.Seq)
	case err != nil:
		return mapStoreErr(err)
	}
	defer m.Close()
	src := &mappedSource{body: m.Body, crc: m.Seed()}
	err = src.guarded(func() error { return db.readSource(src, int64(len(m.Body))) })
	if err != nil {
		// A damaged body may fail to parse: then the CRC says so.
		if cerr := src.guarded(m.Check); cerr != nil {
			return mapStoreErr(cerr)
		}
		return err
	}
	// A damaged body may parse: nothing read stands unless the CRC holds.
	if src.crcOff != len(m.Body) {
		return fmt.Errorf("%w: snapshot: %d of its %d bytes checked", ErrCorrupt, src.crcOff, len(m.Body)) // cannot happen: readSource reads to the end
	}
	if err := m.CheckSum(src.crc); err != nil {
		return mapStoreErr(err)
	}
	db.info.SnapshotSeq, db.seq.applied = m.Seq, m.Seq
	return nil
}

// loadSnapshot reads a snapshot's body, size bytes, tagged with log
// sequence number seq.
func (db *DB) loadSnapshot(body io.Reader, size int64, seq uint64) error {
	if err := db.readState(body, size); err != nil {
		return err
	}
	db.info.SnapshotSeq, db.seq.applied = seq, seq
	return nil
}

func (db *DB) recover() error {
	if err := db.loadSnapshotFile(); err != nil {
		return err
	}
	if first := db.wal.FirstSeq(); db.seq.applied+1 < first {
		return fmt.Errorf("%w: the snapshot includes records up to %d but the log starts at %d", ErrCorrupt, db.seq.applied, first)
	}
	err := db.wal.Replay(db.seq.applied+1, func(seq uint64, payload []byte) error {
		rec, err := decodeRecord(payload)
		if err != nil {
			return fmt.Errorf("%w: log record %d: %w", ErrCorrupt, seq, err)
		}
		db.apply(rec, seq)
		db.seq.applied = seq
		db.info.Replayed++
		db.seq.sinceCkpt++
		db.seq.bytesSince += int64(len(payload))
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
	db.seq.mu.Lock()
	defer db.seq.mu.Unlock()
	return db.seq.ckptErr
}

// CheckpointFailures returns how many background checkpoints have failed
// since Open.
func (db *DB) CheckpointFailures() uint64 {
	db.seq.mu.Lock()
	defer db.seq.mu.Unlock()
	return db.seq.ckptFails
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
	db.seq.mu.Lock()
	defer db.seq.mu.Unlock()
	return db.seq.failed
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

// applied is what applying one record gives its writer: the field of the
// record's kind.
type applied struct {
	coll    *Collection    // recCreate
	puts    []PutResult    // recPut
	doc     docApplied     // recPutDoc
	cons    consolidated   // recConsolidate
	retract *RetractResult // recRetract
}

// commit logs rec, waits for fsync, and applies it in log order.
func (db *DB) commit(ctx context.Context, rec *record) (applied, error) {
	return db.commitQueued(ctx, rec, nil)
}

// commitQueued is commit, calling queued (when not nil) exactly once, as
// soon as the record's place in the log is fixed or the commit failed
// before that (store.WAL.AppendQueued).
// recordBufs recycles record encodings: a Put of 1000 768-d vectors
// encodes to 3 MB, which a load of a million memories would otherwise
// allocate a thousand times over (and collect). Buffers past
// maxPooledRecord are left to the collector.
var recordBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledRecord = 16 << 20

func (db *DB) commitQueued(ctx context.Context, rec *record, queued func()) (applied, error) {
	once := func() {
		if queued != nil {
			queued()
			queued = nil
		}
	}
	defer once()
	if err := db.enter(); err != nil {
		return applied{}, err
	}
	defer db.calls.Done()
	db.seq.mu.Lock()
	failed := db.seq.failed
	db.seq.mu.Unlock()
	if failed != nil {
		return applied{}, failed
	}
	rec.tx = db.opts.Clock().UTC()
	buf := recordBufs.Get().(*[]byte)
	payload := rec.encodeTo((*buf)[:0])
	// The log is done with the bytes once the append returns (it waits
	// for the writer either way).
	defer func() {
		if cap(payload) <= maxPooledRecord {
			*buf = payload[:0]
			recordBufs.Put(buf)
		}
	}()
	if len(payload) > db.opts.MaxRecordBytes {
		return applied{}, fmt.Errorf("%w: the write encodes to %d bytes, at most %d (Options.MaxRecordBytes)", ErrTooLarge, len(payload), db.opts.MaxRecordBytes)
	}
	if db.pg != nil {
		return db.commitPostgres(ctx, rec, payload, once)
	}
	seq, err := db.wal.AppendQueued(ctx, payload, once)
	if err != nil {
		if errors.Is(err, store.ErrFailed) {
			db.seq.mu.Lock()
			db.seq.failed = fmt.Errorf("%w: %w", ErrFailed, err)
			db.seq.cond.Broadcast()
			db.seq.mu.Unlock()
		}
		return applied{}, mapStoreErr(err)
	}
	db.seq.mu.Lock()
	for db.seq.applied+1 != seq && db.seq.failed == nil {
		db.seq.cond.Wait()
	}
	if db.seq.failed != nil && db.seq.applied+1 != seq {
		err := db.seq.failed
		db.seq.mu.Unlock()
		return applied{}, err
	}
	res, aerr := db.apply(rec, seq)
	kick := db.appliedLocked(seq, len(payload))
	db.seq.mu.Unlock()
	if kick {
		db.checkpointInBackground()
	}
	return res, aerr
}

// appliedLocked records that record seq, payload bytes long, was applied
// (seq.mu held), wakes the writers waiting for their turn, and reports
// whether a background checkpoint is due.
func (db *DB) appliedLocked(seq uint64, payload int) bool {
	db.seq.applied = seq
	db.appliedSeq.Store(seq)
	db.seq.sinceCkpt++
	db.seq.bytesSince += int64(payload)
	db.seq.cond.Broadcast()
	return (db.opts.CheckpointRecords > 0 && db.seq.sinceCkpt >= db.opts.CheckpointRecords*db.seq.ckptTries) ||
		(db.opts.CheckpointBytes > 0 && db.seq.bytesSince >= db.opts.CheckpointBytes*int64(db.seq.ckptTries))
}

// checkpointInBackground starts a checkpoint unless one runs.
func (db *DB) checkpointInBackground() {
	if db.stopping() {
		return // Close writes the last one (the embedded store)
	}
	if db.ckptRunning.CompareAndSwap(false, true) {
		db.bg.Add(1)
		go func() {
			defer db.bg.Done()
			defer db.ckptRunning.Store(false)
			ctx := context.Background()
			if db.pg != nil {
				// An upload to an unreachable database does not hold
				// Close up.
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				go func() {
					select {
					case <-db.stop:
						cancel()
					case <-ctx.Done():
					}
				}()
				defer cancel()
			}
			err := db.Checkpoint(ctx)
			db.seq.mu.Lock()
			if err != nil {
				// Back off: try again after another interval's worth of
				// records, not on every write (a full disk would otherwise
				// stall every commit behind a snapshot attempt).
				db.seq.ckptTries++
				db.seq.ckptErr = err
				db.seq.ckptFails++
			} else {
				db.seq.ckptTries, db.seq.ckptErr = 1, nil
			}
			db.seq.mu.Unlock()
			if err != nil && db.opts.OnCheckpointError != nil {
				db.opts.OnCheckpointError(err)
			}
		}()
	}
}

// apply applies one logged record; it is deterministic, and the same on
// replay as when first written. Its error is the caller's (a name that
// was taken meanwhile), never a reason to stop replay.
func (db *DB) apply(rec *record, seq uint64) (res applied, err error) {
	tx := max(days(rec.tx, 0), db.seq.lastTx)
	db.seq.lastTx = tx
	if rec.typ == recCreate {
		db.mu.Lock()
		defer db.mu.Unlock()
		if _, ok := db.colls[rec.coll]; ok {
			return res, fmt.Errorf("%w: collection %q", ErrExists, rec.coll)
		}
		c, err := newCollection(db, rec.coll, rec.opts.createdAt(rec.tx))
		if err != nil {
			return res, fmt.Errorf("%w: %w", ErrOptions, err)
		}
		c.incarnation = seq
		db.colls[rec.coll] = c
		res.coll = c
		return res, nil
	}
	if rec.typ == 0 || rec.typ > recRetract {
		return res, fmt.Errorf("%w: record %d has type %d", ErrCorrupt, seq, rec.typ)
	}
	// Every other record names a collection incarnation: a record for a
	// collection dropped meanwhile (or re-created since) is refused.
	c := db.lookupInc(rec.coll, rec.inc)
	if c == nil {
		return res, fmt.Errorf("%w: collection %q", ErrNotFound, rec.coll)
	}
	switch rec.typ {
	case recDrop:
		db.mu.Lock()
		if db.colls[rec.coll] == c {
			delete(db.colls, rec.coll)
		}
		db.mu.Unlock()
		c.mu.Lock()
		c.dropped = true
		c.mu.Unlock()
	case recPut:
		res.puts, err = c.applyPut(rec.mems, tx, seq)
	case recPutDoc:
		res.doc, err = c.applyPutDoc(rec.mems, rec.replaced, rec.later, rec.shift, tx)
	case recFeedback:
		err = c.applyFeedback(rec.id, rec.source, rec.positive, rec.negative, tx)
	case recAccess:
		err = c.applyAccess(rec.access)
	case recConsolidate:
		res.cons, err = c.applyConsolidate(rec.edits, rec.seeds, rec.mems, seq, tx)
	case recRetract:
		res.retract, err = c.applyRetract(rec.id, rec.source, rec.purge, tx, seq)
	}
	return res, err
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
	return res.coll, nil
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
	if c == nil && db.pg != nil {
		if err := db.catchUp(ctx); err != nil {
			return err
		}
		c = db.lookup(name)
	}
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
// indexes) tagged with the last applied log record, then starts a new log
// segment and deletes the segments it makes unnecessary. Writes wait while the snapshot is
// written; searches go on. The DB checkpoints on its own after
// Options.CheckpointRecords records or CheckpointBytes bytes, and on Close.
//
// Only Close's snapshot is written through the page cache, for the next
// Open to read; the others go past it where the system allows
// (store.WriteSnapshotDirect), as a later checkpoint usually replaces
// them unread, so that writers wait less. Close writes none when nothing
// was logged since the last checkpoint: the next Open then reads that
// one, and a direct-written snapshot comes from the disk (at 1M × 768 on
// the development VM, Open took 6.4 s against 2.9 s from the page
// cache).
func (db *DB) Checkpoint(ctx context.Context) error { return db.checkpoint(ctx, true) }

// checkpoint is Checkpoint, its snapshot written with direct I/O or not.
func (db *DB) checkpoint(ctx context.Context, direct bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	db.seq.mu.Lock()
	if db.seq.failed != nil {
		err := db.seq.failed
		db.seq.mu.Unlock()
		return err
	}
	seq := db.seq.applied
	for _, c := range db.snapshotColls() {
		if c.surface.Deleted() > c.surface.Len()/4 {
			c.surface.Compact()
		}
	}
	if db.pg != nil {
		// A node of a PostgreSQL store: the state is written to a local
		// file while writes wait, then sent to the database while they go
		// on (postgres.go).
		f, err := db.stageSnapshot()
		if err == nil {
			db.seq.sinceCkpt, db.seq.bytesSince = 0, 0
		}
		db.seq.mu.Unlock()
		if err != nil {
			return err
		}
		return db.uploadSnapshot(ctx, seq, f)
	}
	write := store.WriteSnapshot
	if direct {
		write = store.WriteSnapshotDirect
	}
	err := write(db.dir, snapshotName, seq, db.writeState)
	if err == nil {
		db.seq.sinceCkpt, db.seq.bytesSince = 0, 0
	}
	db.seq.mu.Unlock()
	if err != nil {
		return mapStoreErr(err)
	}
	// A new segment first, so that the one the snapshot covers can go:
	// after a Drop and a checkpoint no file holds the dropped records
	// (unless writes raced the checkpoint into the old segment; the next
	// checkpoint removes it then).
	if err := db.wal.Rotate(ctx); err != nil {
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
	if db.pg != nil {
		// Writers waiting for the follower to apply the changes before
		// theirs give up now (their changes are committed; every other
		// node applies them).
		db.seq.mu.Lock()
		db.seq.cond.Broadcast()
		db.seq.mu.Unlock()
	}
	db.calls.Wait()
	db.bg.Wait()
	var err error
	db.seq.mu.Lock()
	pending := db.seq.sinceCkpt > 0 && db.seq.failed == nil && db.pg == nil
	db.seq.mu.Unlock()
	if pending {
		err = db.checkpoint(context.Background(), false)
	}
	if cpu, ok := db.bgBackend.(*kernels.CPU); ok {
		cpu.Close()
	}
	if db.pg != nil {
		db.pg.Close()
		return db.closeEmbedCache()
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
	j, ok := c.rowOf(id)
	if !ok || c.dropped {
		return Memory{}, fmt.Errorf("%w: memory %q in collection %q", ErrNotFound, id, c.name)
	}
	if c.rows.at(j).purged {
		return Memory{}, fmt.Errorf("%w: memory %q in collection %q was purged", ErrNotFound, id, c.name)
	}
	m := c.memory(j)
	m.Vector = slices.Clone(c.unitVector(j))
	return m, nil
}

// History returns every version linked to the memory with id through
// version links (key and document supersession, merges, splits: a split
// memory with all its siblings), oldest first — what was believed, when,
// and which version replaced which. Vectors are left out.
func (c *Collection) History(ctx context.Context, id string) ([]Memory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := c.db.readable(); err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	j, ok := c.rowOf(id)
	if !ok || c.dropped {
		return nil, fmt.Errorf("%w: memory %q in collection %q", ErrNotFound, id, c.name)
	}
	if c.rows.at(j).purged {
		return nil, fmt.Errorf("%w: memory %q in collection %q was purged", ErrNotFound, id, c.name)
	}
	seen := map[int]bool{j: true}
	stack := []int{j}
	for len(stack) > 0 {
		r := c.rows.at(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		next := slices.Concat(r.supersedes, r.splitInto)
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
		return temporal.Newer(c.rows.at(rows[b]).assertion(rows[b]), c.rows.at(rows[a]).assertion(rows[a]))
	})
	out := make([]Memory, len(rows))
	for i, r := range rows {
		out[i] = c.memory(r)
	}
	return out, nil
}

// FactHistory returns every memory stated about the fact (subject,
// relation) — normalised as the write path normalises keys — in the
// order supersession ranks them, oldest first: the fact's lineage; then
// the ones that left it (retracted, or replaced by a new version of their
// id), in the order they were written. Purged ones are gone.
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
	if !k.IsZero() && !c.dropped {
		// The rows that left the chain keep their key (a scan: this is
		// no hot path, and no index of them needs keeping).
		for j := range c.rows.len() {
			if r := c.rows.at(j); r.key == k && (r.retracted || r.superseded && r.supersededBy >= 0 && c.rows.at(r.supersededBy).mem.ID == r.mem.ID) && !slices.Contains(chain, j) {
				chain = append(slices.Clip(chain), j)
			}
		}
	}
	if k.IsZero() || len(chain) == 0 || c.dropped {
		return nil, fmt.Errorf("%w: fact (%q, %q) in collection %q", ErrNotFound, subject, relation, c.name)
	}
	out := make([]Memory, len(chain))
	for i, j := range chain {
		out[i] = c.memory(j)
	}
	return out, nil
}
