package tidemark

import "github.com/tidemark/tidemark/eval"

// LedgerBeliefs applies ms as one logged Put, written at transaction time
// tx, to a new collection's ledger — no log, no indexes — and returns the
// beliefs and supersession of each memory stored, by id, and the ledger's
// link-graph check: the parity test holds the ledger itself to the
// reference memory (eval.Memory.Beliefs).
func LedgerBeliefs(o *CollectionOptions, ms []Memory, tx float64) (map[string][]eval.Belief, map[string]bool, error) {
	opts := o.createdAt(fromDays(tx))
	c := &Collection{opts: opts}
	if err := c.ledger.init(&c.opts); err != nil {
		return nil, nil, err
	}
	var err error
	if c.links, err = c.buildLinks(); err != nil {
		return nil, nil, err
	}
	c.put(ms, tx, 0)
	c.syncLinks()
	beliefs, superseded := map[string][]eval.Belief{}, map[string]bool{}
	for j := range c.rows.len() {
		r := c.rows.at(j)
		for _, s := range r.stateList() {
			beliefs[r.mem.ID] = append(beliefs[r.mem.ID], eval.Belief{ValidFrom: s.valid.From, ValidTo: s.valid.To,
				RecordedFrom: s.recorded.From, RecordedTo: s.recorded.To})
		}
		superseded[r.mem.ID] = r.superseded
	}
	return beliefs, superseded, c.checkLinks()
}

// PauseFollower stops (or restarts) a PostgreSQL node's follower, so that
// a test can make the node lag behind the others. Pausing returns once a
// pull under way has finished its batch: the follower applies nothing
// after it.
func PauseFollower(db *DB, paused bool) {
	db.repl.paused.Store(paused)
	if paused {
		db.repl.pullMu.Lock()
		//lint:ignore SA2001 the empty section waits out the pull under way
		db.repl.pullMu.Unlock()
		return
	}
	db.wake()
}

// idRow is id's row, 0 when there is none (as the map it replaced read).
func (l *ledger) idRow(id string) int {
	j, _ := l.rowOf(id)
	return j
}
