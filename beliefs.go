package tidemark

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/tidemark/tidemark/internal/pgstore"
	"github.com/tidemark/tidemark/temporal"
)

// The bi-temporal projection of a PostgreSQL store's keyed beliefs
// (pgstore's tidemark_beliefs): per fact key, one row per memory that was
// the key's current belief, with its valid period and the transaction
// period it was current for. The exclusion constraint over (collection,
// subject, relation, tx) lets PostgreSQL refuse a second open belief of a
// key, whichever node writes it. The node that commits a change projects
// the keys it touched right after applying it; a checkpoint reconciles
// every key (so a node killed between its commit and its projection
// leaves the projection behind only until the next checkpoint). A row
// carries the change sequence of the state it was projected from: a node
// never overwrites a projection made from a later state.

// openBelief is a key's current belief as the projection stores it.
type openBelief struct {
	id, object         string
	validFrom, validTo time.Time
}

// currentBeliefs returns, for each key asked (every key when keys is nil),
// its current belief: the memory of its chain neither superseded,
// retracted nor purged (the newest by the rule if several are). A key
// without one maps to nothing. c.mu is held for reading.
func (c *Collection) currentBeliefs(keys []temporal.FactKey) map[temporal.FactKey]*openBelief {
	if keys == nil {
		keys = slices.Collect(maps.Keys(c.byKey))
	}
	out := make(map[temporal.FactKey]*openBelief, len(keys))
	for _, k := range keys {
		if k.IsZero() {
			continue
		}
		best := -1
		for _, j := range c.byKey[k] {
			r := c.rows.at(j)
			if r.superseded || r.retracted || r.purged {
				continue
			}
			if best < 0 || temporal.Newer(r.assertion(j), c.rows.at(best).assertion(best)) {
				best = j
			}
		}
		if best < 0 {
			out[k] = nil
			continue
		}
		m := c.memory(best)
		obj := m.Object
		if r := c.rows.at(best); obj == "" && r.mem.storedRest != nil {
			obj = r.mem.keyFromObject
		}
		out[k] = &openBelief{id: m.ID, object: obj, validFrom: m.ValidFrom, validTo: m.ValidTo}
	}
	return out
}

// projectKeys brings the projection of the keys (every key of the
// collection when keys is nil: a reconcile) up to this node's state, and
// deletes the rows of the purged memory ids (a reconcile adds every id
// purged here). A key whose rows were projected from a later state than
// this node's (a newer belief, or the end of one) is left alone.
func (db *DB) projectKeys(ctx context.Context, c *Collection, keys []temporal.FactKey, purged []string) error {
	db.seq.mu.Lock()
	seq := db.seq.applied
	c.mu.RLock()
	dropped := c.dropped
	cur := c.currentBeliefs(keys)
	if keys == nil {
		for j := range c.rows.len() {
			if r := c.rows.at(j); r.purged {
				purged = append(purged, r.mem.ID)
			}
		}
	}
	c.mu.RUnlock()
	db.seq.mu.Unlock()
	if dropped {
		return db.projectDrop(ctx, c.name, seq)
	}
	subj, rel := []string{}, []string{}
	for k := range cur {
		subj, rel = append(subj, k.Subject), append(rel, k.Relation)
	}
	if keys != nil && len(subj) == 0 && len(purged) == 0 {
		return nil
	}
	return db.projectTx(ctx, func(tx pgx.Tx) error {
		if len(purged) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM tidemark_beliefs WHERE collection = $1 AND memory_id = ANY($2)`, c.name, purged); err != nil {
				return err
			}
		}
		var now time.Time
		if err := tx.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
			return err
		}
		q := `SELECT subject, relation, memory_id, seq, COALESCE(ended_seq, 0), upper_inf(tx), lower(tx) FROM tidemark_beliefs
			WHERE collection = $1 AND (upper_inf(tx) OR seq > $2 OR ended_seq > $2)`
		args := []any{c.name, int64(seq)}
		if keys != nil {
			q += ` AND (subject, relation) IN (SELECT * FROM unnest($3::text[], $4::text[]))`
			args = append(args, subj, rel)
		}
		type open struct {
			id    string
			lower time.Time
		}
		have := map[temporal.FactKey]open{}
		later := map[temporal.FactKey]bool{}
		rows, err := tx.Query(ctx, q+` FOR UPDATE`, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k temporal.FactKey
			var id string
			var rs, ended int64
			var isOpen bool
			var lower time.Time
			if err := rows.Scan(&k.Subject, &k.Relation, &id, &rs, &ended, &isOpen, &lower); err != nil {
				rows.Close()
				return err
			}
			if rs > int64(seq) || ended > int64(seq) {
				later[k] = true
			}
			if isOpen {
				have[k] = open{id, lower}
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if keys == nil {
			// A reconcile also closes the keys this node no longer has.
			for k := range have {
				if _, ok := cur[k]; !ok {
					cur[k] = nil
				}
			}
		}
		for _, k := range slices.SortedFunc(maps.Keys(cur), cmpKey) {
			b := cur[k]
			o, isOpen := have[k]
			if later[k] || isOpen && b != nil && o.id == b.id {
				continue // projected from a later state, or already so
			}
			// One instant ends the old period and starts the new one, never
			// before the old one's start (the server's clock may step back).
			at := now
			if isOpen && !at.After(o.lower) {
				at = o.lower.Add(time.Microsecond)
			}
			if isOpen {
				if _, err := tx.Exec(ctx, `UPDATE tidemark_beliefs SET tx = tstzrange(lower(tx), $4), ended_seq = $5
					WHERE collection = $1 AND subject = $2 AND relation = $3 AND upper_inf(tx)`, c.name, k.Subject, k.Relation, at, int64(seq)); err != nil {
					return err
				}
			}
			if b == nil {
				continue
			}
			if _, err := tx.Exec(ctx, `INSERT INTO tidemark_beliefs (collection, subject, relation, memory_id, object, valid, tx, seq)
				VALUES ($1, $2, $3, $4, $5, tstzrange($6, $7), tstzrange($8, NULL), $9)`,
				pgText(c.name), pgText(k.Subject), pgText(k.Relation), pgText(b.id), pgText(b.object), nullTime(b.validFrom), nullTime(b.validTo), at, int64(seq)); err != nil {
				return err
			}
		}
		return nil
	})
}

func cmpKey(a, b temporal.FactKey) int {
	return cmp.Or(strings.Compare(a.Subject, b.Subject), strings.Compare(a.Relation, b.Relation))
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// projectDrop closes every open belief of a dropped collection.
func (db *DB) projectDrop(ctx context.Context, coll string, seq uint64) error {
	return db.projectTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE tidemark_beliefs SET tx = tstzrange(lower(tx), greatest(clock_timestamp(), lower(tx) + interval '1 microsecond')), ended_seq = $2
			WHERE collection = $1 AND upper_inf(tx) AND seq <= $2`, coll, int64(seq))
		return err
	})
}

// projectTx runs fn in a transaction, retrying (a bounded number of
// times) when another node's projection of the same keys won a race: an
// exclusion violation, a serialization failure or a deadlock.
func (db *DB) projectTx(ctx context.Context, fn func(pgx.Tx) error) error {
	var err error
	for try := 0; try <= 5; try++ {
		err = pgx.BeginTxFunc(ctx, db.pg.Pool(), pgstore.ReadCommitted, fn)
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || (pe.Code != "23P01" && pe.Code != "40001" && pe.Code != "40P01") {
			break
		}
		db.repl.projRetries.Add(1)
	}
	if err != nil {
		return fmt.Errorf("beliefs projection: %w", err)
	}
	return nil
}

// project runs after this node applied its own record rec: it projects
// the keys the record touched. An error is counted and kept (the next
// checkpoint reconciles); the write itself is committed and applied.
func (db *DB) project(rec *record, res applied) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	switch rec.typ {
	case recDrop:
		err = db.projectDrop(ctx, rec.coll, db.Seq())
	case recPut, recPutDoc, recRetract, recConsolidate:
		c := db.lookupInc(rec.coll, rec.inc)
		if c == nil {
			return
		}
		var keys []temporal.FactKey
		var purged []string
		switch rec.typ {
		case recConsolidate:
			keys = nil // every key: edits reach across the collection
		case recRetract:
			if res.retract == nil {
				return
			}
			if rec.purge {
				// A purge erased the keys of what it purged: every key is
				// projected again (purges are rare), and its ids' rows go.
				purged = res.retract.IDs
				break
			}
			c.mu.RLock()
			for _, id := range res.retract.IDs {
				if j, ok := c.rowOf(id); ok {
					keys = append(keys, c.rows.at(j).key)
				}
			}
			c.mu.RUnlock()
			if keys == nil {
				keys = []temporal.FactKey{}
			}
		default:
			c.mu.RLock()
			seen := map[temporal.FactKey]bool{}
			for _, m := range rec.mems {
				if j, ok := c.rowOf(m.ID); ok {
					if k := c.rows.at(j).key; !k.IsZero() && !seen[k] {
						seen[k] = true
						keys = append(keys, k)
					}
				}
			}
			c.mu.RUnlock()
			if len(keys) == 0 {
				return
			}
		}
		err = db.projectKeys(ctx, c, keys, purged)
	default:
		return
	}
	if err != nil {
		db.repl.mu.Lock()
		db.repl.projErr = err
		db.repl.mu.Unlock()
		db.repl.projFails.Add(1)
	}
}

// reconcileBeliefs projects every key of every collection (a
// checkpoint's last step on a PostgreSQL store).
func (db *DB) reconcileBeliefs(ctx context.Context) error {
	var errs []error
	for _, c := range db.snapshotColls() {
		errs = append(errs, db.projectKeys(ctx, c, nil, nil))
	}
	// Collections dropped here lose their open beliefs (those projected
	// from a later state than this node's stay).
	db.seq.mu.Lock()
	seq := db.seq.applied
	names := append([]string{}, db.Collections()...)
	db.seq.mu.Unlock()
	err := db.projectTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE tidemark_beliefs SET tx = tstzrange(lower(tx), greatest(clock_timestamp(), lower(tx) + interval '1 microsecond')), ended_seq = $2
			WHERE upper_inf(tx) AND NOT (collection = ANY($1)) AND seq <= $2`, names, int64(seq))
		return err
	})
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	db.repl.mu.Lock()
	db.repl.projErr = nil
	db.repl.mu.Unlock()
	return nil
}

// pgText is s as PostgreSQL's text type can hold it: a NUL (which a
// memory's text may hold) becomes U+FFFD.
func pgText(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// memoryColumns are tidemark_memories' columns, in COPY order.
var memoryColumns = []string{"collection", "row_no", "id", "text", "kind", "source", "subject", "relation", "object",
	"doc_id", "doc_version", "chunk", "metadata", "valid", "tx", "status", "visible", "superseded_by", "seq"}

// tstzrange is a [from, to) period for COPY: the zero times are open ends.
func tstzrange(from, to time.Time) pgtype.Range[pgtype.Timestamptz] {
	r := pgtype.Range[pgtype.Timestamptz]{LowerType: pgtype.Unbounded, UpperType: pgtype.Unbounded, Valid: true}
	if !from.IsZero() {
		r.Lower, r.LowerType = pgtype.Timestamptz{Time: from, Valid: true}, pgtype.Inclusive
	}
	if !to.IsZero() {
		r.Upper, r.UpperType = pgtype.Timestamptz{Time: to, Valid: true}, pgtype.Exclusive
	}
	return r
}

// memoryRows returns tidemark_memories' rows of every collection as of
// change seq (db.seq.mu held, so that no change lands meanwhile).
func (db *DB) memoryRows(seq uint64) [][]any {
	var out [][]any
	for _, c := range db.snapshotColls() {
		c.mu.RLock()
		for j := range c.rows.len() {
			if c.rows.at(j).purged {
				continue
			}
			m := c.memory(j)
			var meta any
			if len(m.Metadata) > 0 {
				if b, err := json.Marshal(m.Metadata); err == nil {
					meta = strings.ReplaceAll(string(b), `\u0000`, `\ufffd`)
				}
			}
			var retired time.Time
			if n := len(m.Beliefs); n > 0 {
				retired = m.Beliefs[n-1].RetiredAt
			}
			out = append(out, []any{pgText(c.name), int32(j), pgText(m.ID), pgText(m.Text), m.Kind.String(), m.Source.String(),
				pgText(m.Subject), pgText(m.Relation), pgText(m.Object), pgText(m.DocID), int32(m.Version), int32(m.Chunk), meta,
				tstzrange(m.ValidFrom, m.ValidTo), tstzrange(m.RecordedAt, retired), m.Status.String(), m.Visible, pgText(m.SupersededBy), int64(seq)})
		}
		c.mu.RUnlock()
	}
	return out
}

// refreshMemories replaces tidemark_memories with this node's ledger as of
// its last applied change, by binary COPY, in one transaction (a
// checkpoint's step on the node that stored it).
func (db *DB) refreshMemories(ctx context.Context) error {
	db.seq.mu.Lock()
	rows := db.memoryRows(db.seq.applied)
	db.seq.mu.Unlock()
	err := pgx.BeginTxFunc(ctx, db.pg.Pool(), pgstore.ReadCommitted, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM tidemark_memories`); err != nil {
			return err
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"tidemark_memories"}, memoryColumns, pgx.CopyFromRows(rows))
		return err
	})
	if err != nil {
		return fmt.Errorf("memories table: %w", err)
	}
	return nil
}
