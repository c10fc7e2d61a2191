package tidemark

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemark/tidemark/internal/pgstore"
)

// PostgreSQL as the shared ledger (issue 20). The embedded store's design
// carries over whole: the ledger is the state the log's records give when
// applied in order, and apply is deterministic. With a PostgreSQL store
// the log is the database's tidemark_changes table, numbered by a gap-free
// sequence that one row lock hands out, so the writers of every node queue
// in one commit order, and every node applies every change in that order
// exactly as the embedded engine replays its log. Two nodes superseding
// one key at once can therefore never both win: PostgreSQL orders the two
// changes, and the rule (temporal.Resolve) decides on that order, the same
// on every node.
//
// A node is stateless: OpenPostgres loads the newest snapshot stored in
// the database (written by whichever node checkpointed last) and the
// changes after it, then follows the log (LISTEN/NOTIFY to wake, polling
// as the safety net). A write returns once committed and applied on the
// node that made it; Seq then covers it, and WaitApplied(seq) on another
// node gives read-your-writes across nodes.

// pollInterval is how often a node polls the log when no notification
// came (the safety net for a lost LISTEN connection).
const pollInterval = 500 * time.Millisecond

// maxBackoff bounds the wait between reconnection attempts.
const maxBackoff = 5 * time.Second

// replication is a PostgreSQL node's follower state.
type replication struct {
	// pending maps the changes this node committed, and will apply
	// itself, to their writes: the follower leaves them to their writers.
	// pendMu guards it; it is a leaf, taken inside seq.mu and inside a
	// write's transaction (which holds the database's head row).
	pendMu  sync.Mutex
	pending map[uint64]*record
	kick    chan struct{}

	// paused stops the follower (tests: a node that lags); stuck is set
	// once the log was trimmed past this node. stoppedAt is the pending
	// change the follower last stopped at (0 when none). pullMu is held
	// while the follower pulls, so that pausing can wait out a pull
	// already under way (pull checks paused between batches).
	paused, stuck atomic.Bool
	stoppedAt     atomic.Uint64
	pullMu        sync.Mutex

	// mu guards the follower's status, below.
	mu      sync.Mutex
	head    uint64    // the newest committed change seen in the database
	contact time.Time // the last time the follower reached the database
	err     error     // the follower's last error, nil after a success
	// projErr is the last error of the beliefs projection (beliefs.go),
	// nil once a reconcile succeeds; projFails and projRetries count
	// failed projections and retried ones.
	projErr     error
	projFails   atomic.Uint64
	projRetries atomic.Uint64
}

// OpenPostgres opens a node of the tidemark database kept in PostgreSQL at
// url (a postgres:// URL or key=value string, as pgx parses it): it
// creates or migrates the tables, loads the newest stored snapshot and the
// changes after it, and follows the log from then on. dir is the node's
// local directory for caches (the embedding cache); "" keeps none. Every
// node of one database sees the same collections and memories; see
// Replication and WaitApplied for how far behind this one is.
func OpenPostgres(ctx context.Context, url, dir string, opts *Options) (*DB, error) {
	began := time.Now()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.WithDefaults()
	o.Embedders = maps.Clone(o.Embedders)
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	host, _ := os.Hostname()
	pg, err := pgstore.Open(ctx, url, fmt.Sprintf("%s/%d", host, os.Getpid()))
	if err != nil {
		return nil, err
	}
	db := newDB(dir, o)
	db.pg = pg
	db.repl.pending = map[uint64]*record{}
	db.repl.kick = make(chan struct{}, 1)
	if err := db.open(began, func() error { return db.recoverPostgres(ctx) }, pg.Close); err != nil {
		return nil, err
	}
	db.bg.Add(1)
	go db.follow()
	return db, nil
}

// recoverPostgres loads the newest snapshot and applies the changes after
// it.
func (db *DB) recoverPostgres(ctx context.Context) error {
	snap, err := db.pg.OpenSnapshot(ctx)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		err = db.loadSnapshot(snap, snap.Size, snap.Seq)
		snap.Close()
		if err != nil {
			return err
		}
	}
	first, err := db.pg.FirstSeq(ctx)
	if err != nil {
		return err
	}
	if db.seq.applied+1 < first {
		if db.seq.applied == 0 {
			return fmt.Errorf("%w: the database holds no snapshot but its log starts at change %d", ErrCorrupt, first)
		}
		// Two checkpoints replaced the snapshot while this node read it.
		return fmt.Errorf("%w: the snapshot read includes changes up to %d but the log now starts at %d: start the node again", ErrUnavailable, db.seq.applied, first)
	}
	for {
		cs, err := db.pg.Changes(ctx, db.seq.applied, 512)
		if err != nil {
			return err
		}
		for _, c := range cs {
			if c.Seq != db.seq.applied+1 {
				// Trimmed by two checkpoints while this node started.
				return fmt.Errorf("%w: the log was trimmed past change %d while this node started: start it again", ErrUnavailable, db.seq.applied)
			}
			rec, err := decodeRecord(c.Payload)
			if err != nil {
				return fmt.Errorf("%w: change %d: %w", ErrCorrupt, c.Seq, err)
			}
			db.apply(rec, c.Seq)
			db.seq.applied = c.Seq
			db.seq.sinceCkpt++
			db.seq.bytesSince += int64(len(c.Payload))
			db.info.Replayed++
		}
		if len(cs) < 512 {
			break
		}
	}
	db.repl.head = db.seq.applied
	db.repl.contact = time.Now()
	return nil
}

// commitPostgres is commitQueued's second half on a PostgreSQL store:
// commit the change, wait until the follower applied the changes before
// it, apply it.
func (db *DB) commitPostgres(ctx context.Context, rec *record, payload []byte, queued func()) (applied, error) {
	seq, err := db.pg.Append(ctx, payload, pgstore.Hooks{
		Before: func(seq uint64) {
			db.repl.pendMu.Lock()
			db.repl.pending[seq] = rec
			db.repl.pendMu.Unlock()
			queued()
		},
		Abort: func(seq uint64) {
			// Not acknowledged: the number is free again, or, if the
			// commit happened after all, the follower applies the change
			// like any other node's.
			db.dropPending(seq, rec)
			db.wake()
		},
	})
	if err != nil {
		if ctx.Err() != nil {
			return applied{}, fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return applied{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	stop := context.AfterFunc(ctx, func() {
		db.seq.mu.Lock()
		db.seq.cond.Broadcast()
		db.seq.mu.Unlock()
	})
	defer stop()
	if db.Seq()+1 < seq {
		// Other nodes' changes come first: read and apply them here (the
		// follower may be asleep), up to this one.
		db.pull(ctx)
	}
	db.seq.mu.Lock()
	if db.seq.applied+1 < seq {
		db.wake()
	}
	for db.seq.applied+1 < seq {
		if err := ctx.Err(); err != nil || db.stopping() {
			// Committed, and every node (this one too, once its follower
			// gets there) applies it: the caller learns it is durable but
			// not yet visible here.
			db.seq.mu.Unlock()
			db.dropPending(seq, rec)
			db.wake()
			if err == nil {
				err = ErrClosed
			}
			return applied{}, fmt.Errorf("the write committed as change %d but this node has not applied it yet: %w", seq, err)
		}
		db.seq.cond.Wait()
	}
	if db.seq.applied >= seq {
		// Never while the change is pending here; a broken invariant is
		// said, not applied twice.
		db.seq.mu.Unlock()
		db.dropPending(seq, rec)
		return applied{}, fmt.Errorf("%w: change %d was applied before its writer", ErrCorrupt, seq)
	}
	res, aerr := db.apply(rec, seq)
	kick := db.appliedLocked(seq, len(payload))
	db.dropPending(seq, rec)
	db.seq.mu.Unlock()
	if db.repl.stoppedAt.CompareAndSwap(seq, 0) {
		db.wake()
	}
	if aerr == nil {
		db.project(rec, res)
	}
	if kick {
		db.checkpointInBackground()
	}
	return res, aerr
}

// catchUp brings a node of a PostgreSQL store up to the newest change
// committed before a write reads the state it builds its record from (the
// fact keys it derives from text, a document's current chunks, feedback
// limits): a write through one node sees every write acknowledged before
// it through any other. It does nothing on the embedded store.
func (db *DB) catchUp(ctx context.Context) error {
	if db.pg == nil {
		return nil
	}
	if err := db.enter(); err != nil {
		return err
	}
	defer db.calls.Done()
	head, err := db.pg.Head(ctx)
	if err == nil && db.Seq() < head {
		// Read and apply here rather than wait for the follower: the
		// changes are committed, and a concurrent pull skips what this one
		// applied (and stops, like it, at this node's own writes).
		err = db.pull(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return db.WaitApplied(ctx, head)
}

// dropPending forgets that this node's write rec holds change seq (the
// number may since have gone to another write: only rec's entry goes).
func (db *DB) dropPending(seq uint64, rec *record) {
	db.repl.pendMu.Lock()
	if db.repl.pending[seq] == rec {
		delete(db.repl.pending, seq)
	}
	db.repl.pendMu.Unlock()
}

// isPending reports whether change seq is this node's own write, which its
// writer applies.
func (db *DB) isPending(seq uint64) bool {
	db.repl.pendMu.Lock()
	defer db.repl.pendMu.Unlock()
	return db.repl.pending[seq] != nil
}

// CatchUp brings a node of a PostgreSQL store up to the newest change
// committed to the database (any node's), so that what it answers next
// includes every write acknowledged before the call. Writes do it on their
// own; a reader that must see another node's latest writes calls it (or
// WaitApplied with that node's Seq). It does nothing on the embedded
// store.
func (db *DB) CatchUp(ctx context.Context) error { return db.catchUp(ctx) }

// stopping reports whether Close has begun.
func (db *DB) stopping() bool {
	select {
	case <-db.stop:
		return true
	default:
		return false
	}
}

// wake asks the follower to read the log now.
func (db *DB) wake() {
	select {
	case db.repl.kick <- struct{}{}:
	default:
	}
}

// follow applies the changes other nodes commit, in order, until Close.
func (db *DB) follow() {
	defer db.bg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-db.stop
		cancel()
	}()
	notified := make(chan struct{}, 1)
	db.bg.Add(1)
	go func() {
		defer db.bg.Done()
		backoff := 100 * time.Millisecond
		for ctx.Err() == nil {
			start := time.Now()
			db.pg.Listen(ctx, notified) // returns when the connection fails
			if time.Since(start) > maxBackoff {
				backoff = 100 * time.Millisecond
			}
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
		}
	}()
	backoff := 100 * time.Millisecond
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		var err error
		db.repl.pullMu.Lock()
		if !db.repl.paused.Load() {
			err = db.pull(ctx)
		}
		db.repl.pullMu.Unlock()
		wait := pollInterval
		if err != nil && ctx.Err() == nil {
			wait, backoff = backoff, min(2*backoff, maxBackoff)
		} else {
			backoff = 100 * time.Millisecond
		}
		timer.Reset(wait) // (since Go 1.23 a Reset timer delivers no stale tick)
		select {
		case <-ctx.Done():
			return
		case <-notified:
		case <-db.repl.kick:
		case <-timer.C:
		}
	}
}

// pull applies the committed changes after the last applied one, stopping
// at a change this node committed itself (its writer applies it).
func (db *DB) pull(ctx context.Context) error {
	for {
		head, err := db.pg.Head(ctx)
		if err == nil {
			db.repl.mu.Lock()
			db.repl.head = max(db.repl.head, head)
			db.repl.mu.Unlock()
			var cs []pgstore.Change
			if from := db.Seq(); head > from {
				cs, err = db.pg.Changes(ctx, from, pullBatch)
			}
			if err == nil {
				more, err := db.applyChanges(cs)
				db.repl.mu.Lock()
				db.repl.err = err
				if err == nil {
					db.repl.contact = time.Now()
				}
				db.repl.mu.Unlock()
				if err != nil || !more || db.repl.paused.Load() {
					return err
				}
				continue
			}
		}
		db.repl.mu.Lock()
		db.repl.err = err
		db.repl.mu.Unlock()
		return err
	}
}

// pullBatch is the most changes one read of the log returns.
const pullBatch = 256

// applyChanges applies cs (read from the log) in order after the last
// applied change, one at a time (so that writers and readers of the
// sequence wait for one change at most), and reports whether the log may
// hold more.
func (db *DB) applyChanges(cs []pgstore.Change) (more bool, err error) {
	for _, c := range cs {
		db.seq.mu.Lock()
		if c.Seq <= db.seq.applied {
			db.seq.mu.Unlock()
			continue
		}
		if db.seq.applied+1 < c.Seq {
			// The log was trimmed past this node (it lagged more than a
			// snapshot interval): it must start again from the snapshot.
			err := fmt.Errorf("%w: this node applied changes up to %d, the log now starts at %d: restart it to load the newest snapshot", ErrUnavailable, db.seq.applied, c.Seq)
			db.seq.mu.Unlock()
			db.repl.stuck.Store(true)
			return false, err
		}
		if db.isPending(c.Seq) {
			// This node's own write: its writer applies it, then wakes the
			// follower for what came after.
			db.repl.stoppedAt.Store(c.Seq)
			db.seq.mu.Unlock()
			return false, nil
		}
		rec, err := decodeRecord(c.Payload)
		if err != nil {
			db.seq.mu.Unlock()
			return false, fmt.Errorf("%w: change %d: %w", ErrCorrupt, c.Seq, err)
		}
		db.apply(rec, c.Seq)
		kick := db.appliedLocked(c.Seq, len(c.Payload))
		db.seq.mu.Unlock()
		if kick {
			db.checkpointInBackground()
		}
	}
	return len(cs) == pullBatch, nil
}

// Seq returns the sequence number of the last change this DB applied: a
// write that returned is covered by the Seq read after it, so another
// node of the same PostgreSQL store given it (WaitApplied) reads that
// write.
func (db *DB) Seq() uint64 { return db.appliedSeq.Load() }

// WaitApplied waits until this DB has applied change seq (or a later one)
// or ctx ends (an error wrapping ErrUnavailable and ctx's error). On an
// embedded store every acknowledged change is applied: it returns at once,
// or says that seq was never handed out.
func (db *DB) WaitApplied(ctx context.Context, seq uint64) error {
	if err := db.readable(); err != nil {
		return err
	}
	db.seq.mu.Lock()
	defer db.seq.mu.Unlock()
	if db.seq.applied >= seq {
		return nil
	}
	if db.pg == nil {
		return fmt.Errorf("%w: change %d was never written here (the last is %d)", ErrInvalid, seq, db.seq.applied)
	}
	db.wake()
	stop := context.AfterFunc(ctx, func() {
		db.seq.mu.Lock()
		db.seq.cond.Broadcast()
		db.seq.mu.Unlock()
	})
	defer stop()
	for db.seq.applied < seq {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w: change %d not applied yet (this node is at %d): %w", ErrUnavailable, seq, db.seq.applied, err)
		}
		if db.stopping() {
			return ErrClosed
		}
		db.seq.cond.Wait()
	}
	return nil
}

// Replication says how far this DB is behind its store's log.
type Replication struct {
	// Store is "embedded" (the local log) or "postgres".
	Store string `json:"store"`
	// Applied is the last change this DB applied; Head the newest one
	// committed to the store that it has seen (Applied for the embedded
	// store); Behind their difference.
	Applied uint64 `json:"applied"`
	Head    uint64 `json:"head"`
	Behind  uint64 `json:"behind"`
	// LastContact is when the node last read the database (zero for the
	// embedded store); Error why its last attempt failed, if it did.
	LastContact time.Time `json:"last_contact,omitzero"`
	Error       string    `json:"error,omitempty"`
	// NeedsRestart is set when the database's log was trimmed past the
	// changes this node applied (it lagged more than a snapshot
	// interval): it can no longer catch up, and must be started again.
	NeedsRestart bool `json:"needs_restart,omitempty"`
	// WriteRetries counts the writes PostgreSQL aborted (serialization
	// failure, deadlock) and this node retried. ProjectionFailures counts
	// the beliefs projections that failed (a checkpoint reconciles them),
	// ProjectionRetries those retried after losing a race to another
	// node; ProjectionError is the last failure's, until a reconcile.
	WriteRetries       uint64 `json:"write_retries,omitempty"`
	ProjectionFailures uint64 `json:"projection_failures,omitempty"`
	ProjectionRetries  uint64 `json:"projection_retries,omitempty"`
	ProjectionError    string `json:"projection_error,omitempty"`
}

// Replication returns how far behind the store's log this DB is.
func (db *DB) Replication() Replication {
	applied := db.Seq()
	r := Replication{Store: "embedded", Applied: applied, Head: applied}
	if db.pg == nil {
		return r
	}
	db.repl.mu.Lock()
	defer db.repl.mu.Unlock()
	r.Store = "postgres"
	r.Head = max(db.repl.head, applied)
	r.Behind = r.Head - r.Applied
	r.LastContact = db.repl.contact
	if db.repl.err != nil {
		r.Error = db.repl.err.Error()
	}
	r.NeedsRestart = db.repl.stuck.Load()
	r.WriteRetries = db.pg.Retries()
	r.ProjectionFailures, r.ProjectionRetries = db.repl.projFails.Load(), db.repl.projRetries.Load()
	if db.repl.projErr != nil {
		r.ProjectionError = db.repl.projErr.Error()
	}
	return r
}

// stageSnapshot writes the state to a temporary file in the node's
// directory (the system's temporary directory without one) and returns
// it, rewound (db.seq.mu held).
func (db *DB) stageSnapshot() (*os.File, error) {
	f, err := os.CreateTemp(db.dir, ".snapshot-upload-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // unlinked: gone with the file, even after a crash
	bw := bufio.NewWriterSize(f, 1<<20)
	err = db.writeState(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("snapshot: stage it: %w", err)
	}
	return f, nil
}

// uploadSnapshot stores the staged snapshot of change seq in the
// database (unless another node is storing one, or a later one is
// stored), which trims the log there; the node that stored it then
// reconciles the beliefs projection and refreshes the memories table.
func (db *DB) uploadSnapshot(ctx context.Context, seq uint64, f *os.File) error {
	defer f.Close()
	stored, err := db.pg.WriteSnapshot(ctx, seq, func(w io.Writer) error {
		_, err := io.Copy(w, f)
		return err
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if !stored {
		return nil // another node's checkpoint is, or was, the newer one
	}
	return errors.Join(db.reconcileBeliefs(ctx), db.refreshMemories(ctx))
}
