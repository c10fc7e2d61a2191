// Package pgstore keeps a tidemark ledger in PostgreSQL: the change log
// every node applies in commit order (tidemark_changes, numbered by a
// gap-free sequence that one row lock hands out), the snapshots nodes
// start from (tidemark_snapshots), the bi-temporal projection of the
// keyed beliefs (tidemark_beliefs), whose exclusion constraint lets no
// two beliefs of one fact key be open at once, and every memory version
// for SQL as of the last checkpoint (tidemark_memories). The tables are
// created and migrated by Open (versioned migrations in tidemark_schema).
//
// A write is one transaction: it takes the head row's lock (so writers
// from every node queue in one order, and a sequence number once handed
// out is committed or rolled back before the next is), inserts its change
// and notifies the listeners (LISTEN/NOTIFY wakes the other nodes;
// polling is the safety net).
package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	mrand "math/rand/v2"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Channel is the LISTEN/NOTIFY channel a commit notifies.
const Channel = "tidemark_changes"

// snapshotPart is the size of one stored piece of a snapshot body.
const snapshotPart = 8 << 20

// maxRetries bounds the retries of a write that PostgreSQL aborted for a
// serialization failure or a deadlock (under the default READ COMMITTED
// the head row's lock orders the writers and neither happens; a server
// whose default_transaction_isolation is serializable aborts all but one
// of the writers that queued on the lock).
const maxRetries = 10

// ErrNewerSchema is returned by Open when the database was migrated by a
// newer tidemark than this one.
var ErrNewerSchema = errors.New("pgstore: the database schema is newer than this tidemark knows")

// ErrUnknownOutcome wraps an error that struck while a write committed:
// the change may or may not be in the log (a node following the log
// applies it if it is).
var ErrUnknownOutcome = errors.New("pgstore: the commit's outcome is unknown")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Store is a connection pool to one tidemark database. It is safe for
// concurrent use.
type Store struct {
	pool      *pgxpool.Pool
	node      string
	clusterID string
	retries   atomic.Uint64
}

// Open connects to the database at url, creates or migrates tidemark's
// tables (one migration at a time across nodes, under an advisory lock)
// and refuses a schema newer than this code's. node names this process in
// the change log.
func Open(ctx context.Context, url, node string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	s := &Store{pool: pool, node: node}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if err := pool.QueryRow(ctx, `SELECT cluster_id FROM tidemark_head`).Scan(&s.clusterID); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	return s, nil
}

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// ClusterID identifies the database's log: it is chosen when the tables
// are created (a database restored from a backup keeps it; a new one gets
// another).
func (s *Store) ClusterID() string { return s.clusterID }

// Retries returns how many write transactions were retried after a
// serialization failure or deadlock since Open.
func (s *Store) Retries() uint64 { return s.retries.Load() }

// Pool returns the connection pool (for the projection and tests).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Hooks follow one write's attempts (Append): Before is called with the
// sequence number an attempt was given, after it is fixed and before the
// commit; Abort with the same number when that attempt then failed (the
// number is free again, or, after ErrUnknownOutcome, perhaps committed).
// Either may be nil.
type Hooks struct {
	Before, Abort func(seq uint64)
}

// Append writes payload as the next change in one transaction and returns
// its sequence number once committed; an error (ErrUnknownOutcome when it
// struck the commit itself) means the change was not acknowledged. The
// transaction runs at READ COMMITTED whatever the server's default: the
// head row's lock orders the writers. Serialization failures and
// deadlocks, which that leaves no room for, would be retried up to
// maxRetries times.
func (s *Store) Append(ctx context.Context, payload []byte, h Hooks) (uint64, error) {
	for try := 0; ; try++ {
		seq, err := s.appendOnce(ctx, payload, h)
		if err == nil || !retryable(err) || try == maxRetries {
			if err != nil && try > 0 {
				err = fmt.Errorf("%w (after %d retries)", err, try)
			}
			return seq, err
		}
		s.retries.Add(1)
		// A jittered, growing pause, so that the writers that lost to
		// one commit do not all collide again on the next.
		d := time.Duration(1+mrand.IntN(1<<min(try, 5))) * time.Millisecond
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(d):
		}
	}
}

func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// ReadCommitted is the isolation of tidemark's write transactions.
var ReadCommitted = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}

func (s *Store) appendOnce(ctx context.Context, payload []byte, h Hooks) (seq uint64, err error) {
	tx, err := s.pool.BeginTx(ctx, ReadCommitted)
	if err != nil {
		return 0, fmt.Errorf("pgstore: begin: %w", err)
	}
	defer tx.Rollback(context.Background())
	given := false
	defer func() {
		if err != nil && given && h.Abort != nil {
			h.Abort(seq)
		}
	}()
	if err := tx.QueryRow(ctx, `UPDATE tidemark_head SET seq = seq + 1 RETURNING seq`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("pgstore: next sequence number: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO tidemark_changes (seq, node, payload) VALUES ($1, $2, $3)`, int64(seq), s.node, payload); err != nil {
		return 0, fmt.Errorf("pgstore: insert change %d: %w", seq, err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, fmt.Sprint(seq)); err != nil {
		return 0, fmt.Errorf("pgstore: notify: %w", err)
	}
	if h.Before != nil {
		h.Before(seq)
	}
	given = true
	if err := tx.Commit(ctx); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			// The server answered: the transaction rolled back.
			return seq, fmt.Errorf("pgstore: commit change %d: %w", seq, err)
		}
		return seq, fmt.Errorf("%w: change %d: %w", ErrUnknownOutcome, seq, err)
	}
	return seq, nil
}

// Lock takes the database's advisory lock named name, waiting for it (ctx
// bounds the wait), and returns its release. The lock is held by one
// connection kept out of the pool meanwhile; if that connection dies,
// PostgreSQL releases the lock.
func (s *Store) Lock(ctx context.Context, name string) (unlock func(), err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("pgstore: lock %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext($1))`, name); err != nil {
		conn.Release()
		return nil, fmt.Errorf("pgstore: lock %s: %w", name, err)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtext($1))`, name); err != nil {
			// The session may still hold it: end the session.
			conn.Hijack().Close(ctx)
			return
		}
		conn.Release()
	}, nil
}

// Head returns the last committed sequence number.
func (s *Store) Head(ctx context.Context) (uint64, error) {
	var seq int64
	err := s.pool.QueryRow(ctx, `SELECT seq FROM tidemark_head`).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("pgstore: head: %w", err)
	}
	return uint64(seq), nil
}

// FirstSeq returns the oldest change the log still holds (head+1 when it
// holds none): a node whose state is older than that must start again
// from a snapshot.
func (s *Store) FirstSeq(ctx context.Context) (uint64, error) {
	var first int64
	err := s.pool.QueryRow(ctx, `SELECT COALESCE((SELECT min(seq) FROM tidemark_changes), (SELECT seq + 1 FROM tidemark_head))`).Scan(&first)
	if err != nil {
		return 0, fmt.Errorf("pgstore: first change: %w", err)
	}
	return uint64(first), nil
}

// Change is one committed change.
type Change struct {
	Seq       uint64
	Committed time.Time
	Payload   []byte
}

// Changes returns up to limit changes after seq after, in order. The
// changes are gap-free: one committed after another's sequence number was
// handed out is never seen without it.
func (s *Store) Changes(ctx context.Context, after uint64, limit int) ([]Change, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, committed_at, payload FROM tidemark_changes WHERE seq > $1 ORDER BY seq LIMIT $2`, int64(after), limit)
	if err != nil {
		return nil, fmt.Errorf("pgstore: changes after %d: %w", after, err)
	}
	var out []Change
	for rows.Next() {
		var c Change
		var seq int64
		if err := rows.Scan(&seq, &c.Committed, &c.Payload); err != nil {
			rows.Close()
			return nil, fmt.Errorf("pgstore: changes after %d: %w", after, err)
		}
		c.Seq = uint64(seq)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: changes after %d: %w", after, err)
	}
	return out, nil
}

// Listen holds one connection LISTENing on Channel and sends on wake
// (without blocking) at every notification, until ctx ends or the
// connection fails; its error says which.
func (s *Store) Listen(ctx context.Context, wake chan<- struct{}) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: listen: %w", err)
	}
	// A listening connection is not given back to the pool: its session
	// state (the LISTEN) must not leak into other work.
	pc := conn.Hijack()
	defer pc.Close(context.Background())
	if _, err := pc.Exec(ctx, "LISTEN "+Channel); err != nil {
		return fmt.Errorf("pgstore: listen: %w", err)
	}
	select {
	case wake <- struct{}{}: // changes may have come before the LISTEN
	default:
	}
	for {
		if _, err := pc.WaitForNotification(ctx); err != nil {
			return fmt.Errorf("pgstore: listen: %w", err)
		}
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}

// WriteSnapshot stores a snapshot tagged with seq whose body write
// produces, in one transaction, then drops older snapshots and the changes
// the previous snapshot covered (the log keeps one snapshot interval, for
// nodes that lag). It does nothing and returns false when another node is
// writing one (an advisory lock) or one at seq or later is stored.
func (s *Store) WriteSnapshot(ctx context.Context, seq uint64, write func(io.Writer) error) (bool, error) {
	tx, err := s.pool.BeginTx(ctx, ReadCommitted)
	if err != nil {
		return false, fmt.Errorf("pgstore: snapshot: %w", err)
	}
	defer tx.Rollback(context.Background())
	var locked bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtext('tidemark_snapshot'))`).Scan(&locked); err != nil {
		return false, fmt.Errorf("pgstore: snapshot: %w", err)
	}
	if !locked {
		return false, nil
	}
	var latest int64
	if err := tx.QueryRow(ctx, `SELECT COALESCE(max(seq), 0) FROM tidemark_snapshots`).Scan(&latest); err != nil {
		return false, fmt.Errorf("pgstore: snapshot: %w", err)
	}
	if uint64(latest) >= seq {
		return false, nil
	}
	if _, err := tx.Exec(ctx, `INSERT INTO tidemark_snapshots (seq, size, parts, crc, node) VALUES ($1, 0, 0, 0, $2)`, int64(seq), s.node); err != nil {
		return false, fmt.Errorf("pgstore: snapshot: %w", err)
	}
	pw := &partWriter{ctx: ctx, tx: tx, seq: int64(seq), buf: make([]byte, 0, snapshotPart)}
	if err := write(pw); err != nil {
		return false, fmt.Errorf("pgstore: snapshot: %w", err)
	}
	if err := pw.flush(); err != nil {
		return false, err
	}
	if _, err := tx.Exec(ctx, `UPDATE tidemark_snapshots SET size = $2, parts = $3, crc = $4 WHERE seq = $1`,
		int64(seq), pw.size, pw.parts, int64(pw.crc)); err != nil {
		return false, fmt.Errorf("pgstore: snapshot: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM tidemark_changes WHERE seq <= $1`, latest); err != nil {
		return false, fmt.Errorf("pgstore: snapshot: trim the log: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM tidemark_snapshots WHERE seq < $1`, int64(seq)); err != nil {
		return false, fmt.Errorf("pgstore: snapshot: drop older ones: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("pgstore: snapshot: commit: %w", err)
	}
	return true, nil
}

type partWriter struct {
	ctx   context.Context
	tx    pgx.Tx
	seq   int64
	buf   []byte
	parts int
	size  int64
	crc   uint32
}

func (w *partWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), snapshotPart-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == snapshotPart {
			if err := w.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (w *partWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.tx.Exec(w.ctx, `INSERT INTO tidemark_snapshot_parts (seq, part, data) VALUES ($1, $2, $3)`, w.seq, w.parts, w.buf); err != nil {
		return fmt.Errorf("pgstore: snapshot part %d: %w", w.parts, err)
	}
	w.crc = crc32.Update(w.crc, castagnoli, w.buf)
	w.size += int64(len(w.buf))
	w.parts++
	w.buf = w.buf[:0]
	return nil
}

// Snapshot streams the newest stored snapshot's body; its checksum is
// checked as the last part is read. Close it when done.
type Snapshot struct {
	Seq  uint64
	Size int64
	crc  uint32
	sum  uint32
	rows pgx.Rows
	tx   pgx.Tx
	cur  []byte
	read int64
	err  error
}

// OpenSnapshot opens the newest snapshot; without one it returns an error
// wrapping os.ErrNotExist. Its description and its parts are read in one
// REPEATABLE READ transaction, so a checkpoint that replaces it meanwhile
// does not take its parts away.
func (s *Store) OpenSnapshot(ctx context.Context) (*Snapshot, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("pgstore: snapshot: %w", err)
	}
	var seq, size, crc int64
	var parts int
	err = tx.QueryRow(ctx, `SELECT seq, size, parts, crc FROM tidemark_snapshots ORDER BY seq DESC LIMIT 1`).Scan(&seq, &size, &parts, &crc)
	if err != nil {
		tx.Rollback(context.Background())
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("pgstore: no snapshot: %w", os.ErrNotExist)
		}
		return nil, fmt.Errorf("pgstore: snapshot: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT data FROM tidemark_snapshot_parts WHERE seq = $1 ORDER BY part`, seq)
	if err != nil {
		tx.Rollback(context.Background())
		return nil, fmt.Errorf("pgstore: snapshot %d: %w", seq, err)
	}
	return &Snapshot{Seq: uint64(seq), Size: size, crc: uint32(crc), rows: rows, tx: tx}, nil
}

// ErrCorrupt says a stored snapshot does not match its checksum or size.
var ErrCorrupt = errors.New("pgstore: corrupt snapshot")

func (r *Snapshot) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	for len(r.cur) == 0 {
		if !r.rows.Next() {
			r.err = r.rows.Err()
			if r.err == nil {
				r.err = io.EOF
				if r.read != r.Size {
					r.err = fmt.Errorf("%w: %d bytes of %d", ErrCorrupt, r.read, r.Size)
				}
			}
			return 0, r.err
		}
		var b []byte
		if err := r.rows.Scan(&b); err != nil {
			r.err = err
			return 0, err
		}
		r.sum = crc32.Update(r.sum, castagnoli, b)
		r.read += int64(len(b))
		if r.read > r.Size {
			r.err = fmt.Errorf("%w: snapshot %d: more than its %d bytes", ErrCorrupt, r.Seq, r.Size)
			return 0, r.err
		}
		if r.read == r.Size && r.sum != r.crc {
			r.err = fmt.Errorf("%w: snapshot %d: checksum mismatch", ErrCorrupt, r.Seq)
			return 0, r.err
		}
		r.cur = b
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// Close ends the read.
func (r *Snapshot) Close() error {
	r.rows.Close()
	return r.tx.Rollback(context.Background())
}

// migrations are applied in order; each runs once, in its own
// transaction, and its number is recorded in tidemark_schema.
var migrations = []string{
	// 1: the change log, its head and the snapshots.
	`CREATE TABLE tidemark_head (
		one boolean PRIMARY KEY DEFAULT true CHECK (one),
		seq bigint NOT NULL,
		cluster_id text NOT NULL
	);
	INSERT INTO tidemark_head (seq, cluster_id) VALUES (0, md5(random()::text || clock_timestamp()::text));
	CREATE TABLE tidemark_changes (
		seq bigint PRIMARY KEY,
		committed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
		node text NOT NULL,
		payload bytea NOT NULL
	);
	CREATE TABLE tidemark_snapshots (
		seq bigint PRIMARY KEY,
		size bigint NOT NULL,
		parts int NOT NULL,
		crc bigint NOT NULL,
		node text NOT NULL,
		created_at timestamptz NOT NULL DEFAULT clock_timestamp()
	);
	CREATE TABLE tidemark_snapshot_parts (
		seq bigint NOT NULL REFERENCES tidemark_snapshots ON DELETE CASCADE,
		part int NOT NULL,
		data bytea NOT NULL,
		PRIMARY KEY (seq, part)
	);`,
	// 2: the bi-temporal projection of keyed beliefs. A belief's tx
	// period runs from when the projection recorded it as its key's
	// current belief (just after the change that made it so, or at the
	// checkpoint that reconciled it) to when it recorded its end; seq
	// and ended_seq are those changes. The exclusion constraint keeps the
	// periods of one key from overlapping, so at most one is open.
	`CREATE EXTENSION IF NOT EXISTS btree_gist;
	CREATE TABLE tidemark_beliefs (
		collection text NOT NULL,
		subject text NOT NULL,
		relation text NOT NULL,
		memory_id text NOT NULL,
		object text NOT NULL,
		valid tstzrange NOT NULL,
		tx tstzrange NOT NULL,
		seq bigint NOT NULL,
		ended_seq bigint,
		EXCLUDE USING gist (collection WITH =, subject WITH =, relation WITH =, tx WITH &&)
	);
	CREATE INDEX tidemark_beliefs_open ON tidemark_beliefs (collection, subject, relation) WHERE upper_inf(tx);`,
	// 3: every stored memory version (purged ones excepted) for SQL, with
	// its valid period and its transaction period (recorded until
	// superseded, retracted or replaced): refreshed whole, by binary COPY,
	// by the node that stores a checkpoint, as of that checkpoint's change
	// (seq).
	`CREATE TABLE tidemark_memories (
		collection text NOT NULL,
		row_no int NOT NULL,
		id text NOT NULL,
		text text NOT NULL,
		kind text NOT NULL,
		source text NOT NULL,
		subject text NOT NULL,
		relation text NOT NULL,
		object text NOT NULL,
		doc_id text NOT NULL,
		doc_version int NOT NULL,
		chunk int NOT NULL,
		metadata jsonb,
		valid tstzrange NOT NULL,
		tx tstzrange NOT NULL,
		status text NOT NULL,
		visible boolean NOT NULL,
		superseded_by text NOT NULL,
		seq bigint NOT NULL,
		PRIMARY KEY (collection, row_no)
	);
	CREATE INDEX tidemark_memories_id ON tidemark_memories (collection, id);`,
}

// SchemaVersion is the number of migrations this code knows.
var SchemaVersion = len(migrations)

func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: connect: %w", err)
	}
	defer conn.Release()
	// One node migrates at a time: the others wait here, then find the
	// work done.
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext('tidemark_migrate'))`); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock(hashtext('tidemark_migrate'))`)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS tidemark_schema (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())`); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	var have int
	if err := conn.QueryRow(ctx, `SELECT COALESCE(max(version), 0) FROM tidemark_schema`).Scan(&have); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	if have > len(migrations) {
		return fmt.Errorf("%w: version %d, this tidemark knows %d", ErrNewerSchema, have, len(migrations))
	}
	for v := have + 1; v <= len(migrations); v++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, migrations[v-1]); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO tidemark_schema (version) VALUES ($1)`, v)
			return err
		})
		if err != nil {
			return fmt.Errorf("pgstore: migration %d: %w", v, err)
		}
	}
	return nil
}

// Redacted returns url without its password, for logs and errors.
func Redacted(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" {
		return u.Redacted()
	}
	cfg, err := pgconn.ParseConfig(raw)
	if err != nil || cfg.Password == "" {
		return raw
	}
	return strings.ReplaceAll(raw, cfg.Password, "xxxxx")
}

// CreateDatabase creates a database named prefix and a random suffix on
// the server of admin (a postgres:// URL whose user may create databases)
// and returns the database's URL and its removal (DROP … WITH (FORCE),
// bounded to a minute). Tests and benchmarks run in databases of their
// own this way.
func CreateDatabase(ctx context.Context, admin, prefix string) (string, func(), error) {
	u, err := url.Parse(admin)
	if err != nil || u.Scheme == "" {
		return "", nil, fmt.Errorf("pgstore: %q is not a postgres:// URL", Redacted(admin))
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	defer conn.Close(ctx)
	var b [6]byte
	rand.Read(b[:])
	name := prefix + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("pgstore: create database (the URL's user needs CREATEDB): %w", err)
	}
	u.Path = "/" + name
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if conn, err := pgx.Connect(ctx, admin); err == nil {
			conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			conn.Close(ctx)
		}
	}
	return u.String(), drop, nil
}
