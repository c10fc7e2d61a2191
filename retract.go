package tidemark

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tidemark/tidemark/embed"
	"github.com/tidemark/tidemark/temporal"
)

// Retraction and purge: the two ways a memory leaves a collection.
//
// Retract is a belief change, as a bi-temporal ledger makes one: the
// memory stops being believed at the transaction time of the retraction.
// Current and as-of-now answers lose it; a query as of an earlier
// transaction time (SearchRequest.AsOfTx) still finds it, and its history
// says who retracted it and when. Nothing is erased: it is evidence.
// When the memory had superseded an earlier version of its fact key or
// document chunk, that version holds again from the retraction on (until
// the memory's successor, when it had one): retracting a wrong update
// brings back the value it replaced, as the ledger's own supersession rule
// would have had it.
//
// Purge is erasure, for privacy requests: the memory is retracted, then
// its text, vector and every value derived from them (fact key, content
// hash, normalised text, drift observation, int8 code, the remote
// embedder's cached vector) are overwritten in memory and the embedding
// cache file is rewritten without them; the next checkpoint writes a snapshot without them and removes
// every log segment that held them (DB.Checkpoint rotates the log first).
// A purge erases every version of the id (a Put of other content under
// an id keeps the earlier content as the version it superseded), and for
// a memory that was split the whole split family (the original and its
// siblings), since each sibling is a copy of part of the text. What remains is a tombstone: the id, the links to other memories
// and the audit entry saying it was purged. A purged id cannot be written
// again (ErrExists): the audit keeps it.

// RetractOptions configures Collection.Retract. A nil *RetractOptions
// retracts without naming who did.
type RetractOptions struct {
	// By names who retracted (a user, a token, a pipeline); it is kept in
	// the audit and in the memory's history. At most MaxIDBytes.
	By string
	// Purge erases the memory instead of only retracting it (see above).
	Purge bool
}

// RetractResult says what a Retract did.
type RetractResult struct {
	// IDs are the memories retracted or purged, the one asked for first:
	// a memory answers to its own id and to the ids of the writes folded
	// into it as duplicates (Memory.Aliases), and a purge adds the rest of
	// its split family. (A purge erases every version of the id too: they
	// share it.)
	IDs []string
	// Restored are the earlier versions the retracted memories had
	// superseded, which hold again.
	Restored []string
	// Unchanged says the memory was already retracted and nothing was
	// logged (a purge of a retracted memory is not unchanged).
	Unchanged bool
}

// Retract withdraws memory id (or, with opts.Purge, erases it), logged and
// durable when it returns. An unknown or purged id is ErrNotFound.
func (c *Collection) Retract(ctx context.Context, id string, opts *RetractOptions) (*RetractResult, error) {
	var o RetractOptions
	if opts != nil {
		o = *opts
	}
	if err := validID(id, "memory id"); err != nil {
		return nil, err
	}
	if err := c.db.catchUp(ctx); err != nil {
		return nil, err
	}
	if o.By != "" {
		if err := validID(o.By, "retracted by"); err != nil {
			return nil, err
		}
	}
	c.mu.RLock()
	j, ok := c.rowOf(id)
	var retracted, purged bool
	if ok {
		r := c.rows.at(j)
		retracted, purged = r.retracted, r.purged
	}
	dropped := c.dropped
	c.mu.RUnlock()
	if !ok || dropped || purged {
		if err := c.db.usable(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: memory %q in collection %q", ErrNotFound, id, c.name)
	}
	if retracted && !o.Purge {
		return &RetractResult{IDs: []string{id}, Unchanged: true}, nil
	}
	rec := &record{typ: recRetract, coll: c.name, inc: c.incarnation, id: id, source: o.By, purge: o.Purge}
	res, err := c.db.commit(ctx, rec)
	if err != nil {
		return nil, err
	}
	return res.retract, nil
}

// applyRetract applies a logged retraction (record seq, transaction time
// tx): the ledger under c.mu, a purge's erasure of its vectors under c.mu
// and both indexes' write locks (EraseAll), and the moves between the
// indexes afterwards, as applyPut does.
func (c *Collection) applyRetract(id, by string, purge bool, tx float64, seq uint64) (*RetractResult, error) {
	c.mu.Lock()
	if c.dropped {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: collection %q", ErrNotFound, c.name)
	}
	res, mv, err := c.retract(id, by, purge, tx, seq)
	if err != nil {
		c.mu.Unlock()
		return nil, err
	}
	c.syncLinks()
	var errs []error
	if len(mv.erased) > 0 {
		// Both indexes (one holds a row, the other may keep a deleted
		// node of it from before it moved, with its own int8 code and,
		// where the column store moved since, its own view of the
		// vector), and the column store's vectors, which the indexes
		// read, zeroed while both indexes are write-locked (in that
		// order: nothing takes them the other way).
		keys := make([]uint64, len(mv.erased))
		for i, k := range mv.erased {
			keys[i] = uint64(k)
		}
		c.surface.EraseAll(keys, func() {
			c.archive.EraseAll(keys, func() {
				for _, k := range mv.erased {
					c.eraseVectors(k)
				}
			})
		})
	}
	vecs := make(map[int][]float32, len(mv.toArchive)+len(mv.restored))
	for _, k := range slices.Concat(mv.toArchive, mv.restored) {
		vecs[k] = c.unitVector(k)
	}
	c.mu.Unlock()
	for _, k := range mv.restored {
		if err := c.archive.Delete(uint64(k)); err != nil {
			errs = append(errs, fmt.Errorf("archive: delete row %d: %w", k, err))
		}
	}
	c.moveIndexed(mv.leave, mv.restored, mv.toArchive, vecs)
	if rm, ok := c.emb.(*embed.Remote); ok && len(mv.embedded) > 0 && c.db.opts.EmbedCacheEntries >= 0 {
		keys := make([][32]byte, len(mv.embedded))
		for i, t := range mv.embedded {
			keys[i] = rm.CacheKey(t)
		}
		(&dbCache{db: c.db}).Delete(keys...)
	}
	if len(errs) > 0 {
		c.mu.Lock()
		if c.indexErr == nil {
			c.indexErr = errors.Join(errs...)
		}
		c.mu.Unlock()
	}
	return res, nil
}

// retractMoves is what a retraction means for the indexes: rows that
// leave the surface (and go to the archive unless purged), rows restored
// to the surface from the archive, rows whose vectors are erased.
type retractMoves struct {
	leave, toArchive, restored, erased []int
	// embedded are the erased texts whose vectors an embedder made.
	embedded []string
}

// retract is the ledger's apply of a logged retraction of id by by (a
// purge when purge is set), at transaction time tx in record seq.
func (l *ledger) retract(id, by string, purge bool, tx float64, seq uint64) (*RetractResult, retractMoves, error) {
	var mv retractMoves
	j, ok := l.rowOf(id)
	if !ok || l.rows.at(j).purged {
		return nil, mv, fmt.Errorf("%w: memory %q", ErrNotFound, id)
	}
	// A memory that was split is withdrawn with its siblings: they are
	// its statements.
	rows := append([]int{j}, l.rows.at(j).splitInto...)
	if purge {
		rows = l.purgeSet(j)
	}
	res := &RetractResult{IDs: []string{id}}
	at := fromDays(tx)
	for _, k := range rows {
		r := l.rows.at(k)
		// A row answers to its id and to the ids folded into it.
		for _, o := range append([]string{r.mem.ID}, r.aliases...) {
			if !slices.Contains(res.IDs, o) {
				res.IDs = append(res.IDs, o)
			}
		}
		if !r.retracted {
			wasVisible := r.visible
			for _, p := range l.withdraw(k, tx, by, true) {
				res.Restored = append(res.Restored, l.rows.at(p).mem.ID)
				mv.restored = append(mv.restored, p)
			}
			if wasVisible && !purge { // a purged row leaves its index by Erase
				mv.leave = append(mv.leave, k)
				mv.toArchive = append(mv.toArchive, k)
			}
			l.audit = append(l.audit, AuditEntry{Seq: seq, Time: at, Rule: RuleRetract, ID: r.mem.ID, By: by, Reason: "RETRACTED"})
		}
		if purge {
			if r.mem.embedded {
				mv.embedded = append(mv.embedded, r.mem.Text)
			}
			l.erase(k)
			mv.erased = append(mv.erased, k)
			l.audit = append(l.audit, AuditEntry{Seq: seq, Time: at, Rule: RulePurge, ID: r.mem.ID, By: by, Reason: "PURGED"})
		}
	}
	if purge {
		l.rebuildMeta()
	}
	// A version restored by one retraction of a purge may be purged by
	// another: it stays where the purge put it.
	mv.restored = slices.DeleteFunc(mv.restored, func(p int) bool { return l.rows.at(p).purged })
	return res, mv, nil
}

// purgeSet is what a purge of row j erases, j first: every version of
// its id (the rows its id's Puts of other content superseded, which hold
// the id's earlier content) and each one's split family.
func (l *ledger) purgeSet(j int) []int {
	var out []int
	for _, v := range l.versions(j) {
		for _, k := range l.splitFamily(v) {
			if !slices.Contains(out, k) && !l.rows.at(k).purged {
				out = append(out, k)
			}
		}
	}
	return out
}

// versions is row j and every earlier version of its id (the rows its
// id's Puts of other content superseded), j first.
func (l *ledger) versions(j int) []int {
	id := l.rows.at(j).mem.ID
	vs := []int{j}
	for i := 0; i < len(vs); i++ {
		for _, o := range l.rows.at(vs[i]).supersedes {
			if l.rows.at(o).mem.ID == id && !slices.Contains(vs, o) {
				vs = append(vs, o)
			}
		}
	}
	return vs
}

// splitFamily is row j and, when j was split or is a sibling of a split,
// the rest of its family (the original and every sibling), j first.
func (l *ledger) splitFamily(j int) []int {
	orig := j
	if from := l.rows.at(j).mem.SplitFrom; from != "" {
		// The version of the original that j was split from (a later
		// version of its id need not be split, or may be split anew).
		if o, ok := l.rowOf(from); ok {
			for _, v := range l.versions(o) {
				if slices.Contains(l.rows.at(v).splitInto, j) {
					orig = v
				}
			}
		}
	}
	out := []int{j}
	for _, k := range append([]int{orig}, l.rows.at(orig).splitInto...) {
		if !slices.Contains(out, k) && !l.rows.at(k).purged {
			out = append(out, k)
		}
	}
	return out
}

// withdraw retracts row k at tx: its current belief is retired, it leaves
// the surface and its fact key's and document chunk's chains, and, with
// restore, the version it had superseded, if any, holds again (the rows
// returned).
func (l *ledger) withdraw(k int, tx float64, by string, restore bool) (restored []int) {
	r := l.rows.at(k)
	r.retracted = true
	ls := r.lists()
	ls.retractedBy, ls.retractedAt = by, tx
	last := len(r.stateList()) - 1
	if cur := &r.stateList()[last]; cur.recorded.To > tx {
		cur.recorded.To = max(tx, cur.recorded.From)
		l.batch.RetiredAt[r.beliefList()[last]] = l.day32(cur.recorded.To)
		l.batch.Changed(r.beliefList()[last])
	}
	if r.visible {
		r.visible = false
		l.visible--
		l.hide(k)
	}
	r.status = temporal.Archived
	l.syncCounters(k)
	l.offSurface(k)
	return l.leaveChains(k, tx, restore)
}

// leaveChains takes row k out of its fact key's and document chunk's
// chains at tx (unchain), and returns the rows put back on the surface.
func (l *ledger) leaveChains(k int, tx float64, restore bool) (restored []int) {
	r := l.rows.at(k)
	if !r.key.IsZero() {
		chain, p := l.unchain(l.byKey[r.key], k, tx, restore)
		if p >= 0 {
			restored = append(restored, p)
		}
		if len(chain) > 0 {
			l.byKey[r.key] = chain
		} else {
			delete(l.byKey, r.key) // (a purge must leave no key behind)
		}
	}
	if r.mem.DocID != "" {
		chain, p := l.unchain(l.byDoc[r.doc], k, tx, restore)
		if p >= 0 {
			restored = append(restored, p)
		}
		if len(chain) > 0 {
			l.byDoc[r.doc] = chain
		} else {
			delete(l.byDoc, r.doc)
		}
	}
	return restored
}

// unchain takes row k out of a version chain at tx. When k had closed the
// version before it (supersede), a memory of another id, that version is
// reopened (with restore): its valid
// window runs again to its own end, or to the start of k's successor,
// believed from tx on. It returns the chain and the row put back on the
// surface, or −1.
func (l *ledger) unchain(chain []int, k int, tx float64, restore bool) ([]int, int) {
	pos := slices.Index(chain, k)
	if pos < 0 {
		return chain, -1
	}
	chain = slices.Delete(chain, pos, pos+1)
	if !restore || pos == 0 || l.rows.at(chain[pos-1]).supersededBy != k || l.rows.at(chain[pos-1]).mem.ID == l.rows.at(k).mem.ID {
		// Nothing k closed; or an earlier version of k's own id, which a
		// retraction of the id does not bring back.
		return chain, -1
	}
	pred := chain[pos-1]
	succ := -1
	if pos < len(chain) {
		succ = chain[pos]
	}
	p := l.rows.at(pred)
	to := p.givenTo
	if succ >= 0 {
		to = min(to, l.rows.at(succ).effFrom)
	}
	last := len(p.stateList()) - 1
	cur, b := p.stateList()[last], p.beliefList()[last]
	switch {
	case cur.valid.To == to && cur.recorded.To == temporal.Open:
		// Closed by nothing k did (it had ended already).
	case cur.recorded.From >= tx:
		// Closed in this transaction: there is no belief to retire.
		p.stateList()[last].valid.To = to
		l.batch.ValidTo[b] = l.day32(to)
		l.batch.Changed(b)
	default:
		if cur.recorded.To > tx {
			p.stateList()[last].recorded.To = tx
			l.batch.RetiredAt[b] = l.day32(tx)
			l.batch.Changed(b)
		}
		p.appendState(state{valid: temporal.Window{From: cur.valid.From, To: to},
			recorded: temporal.Window{From: tx, To: temporal.Open}})
		l.appendBelief(pred, l.batch.Vectors[b*l.opts.Dim:(b+1)*l.opts.Dim], false)
	}
	if succ >= 0 {
		p.supersededBy = succ
		return chain, -1
	}
	p.superseded, p.supersededBy, p.status = false, -1, temporal.Active
	l.syncCounters(pred)
	if to <= tx || p.retracted {
		return chain, -1
	}
	p.visible = true
	l.visible++
	l.show(pred)
	return chain, pred
}

// erase overwrites what row k holds of its memory's content (purge): the
// caller's fields but the id, kind and source; the text and everything
// derived from it; the content hash; the aliases (their hashes are of the
// same content); the drift detector's copy of its vector; and, in the
// rows that adopted its fact key, the object they copied from its text.
// Its beliefs are never believed again; the caller rebuilds the metadata
// columns once the purge's rows are erased. The vectors themselves are
// zeroed by the caller (eraseVectors, index Erase), which holds the
// indexes' locks. The links (ids and rows) stay: they are no content.
func (l *ledger) erase(k int) {
	r := l.rows.at(k)
	r.purged = true
	l.purgedRows++
	l.scrubDrift(k)
	// Out of the maps keyed by its content.
	drop := func(m map[string][]int, key string) {
		if rows := slices.DeleteFunc(m[key], func(j int) bool { return j == k }); len(rows) > 0 {
			m[key] = rows
		} else {
			delete(m, key)
		}
	}
	if r.normText != "" {
		drop(l.byText, r.normText)
	}
	if lead := leadWords(r.mem.Text); lead != "" {
		drop(l.byLead, lead)
	}
	// The ids folded into it were writes of the same content: they go too.
	for _, a := range r.aliases {
		delete(l.aliasHash, a)
		l.dropID(a)
	}
	rest := &storedRest{SplitInto: r.mem.SplitInto, SplitFrom: r.mem.SplitFrom, DependsOn: r.mem.DependsOn, Profile: r.mem.Profile}
	if rest.isZero() {
		rest = &noRest
	}
	r.mem = stored{ID: r.mem.ID, Kind: r.mem.Kind, Source: r.mem.Source, storedRest: rest}
	r.rowText, r.hash = &noText, [32]byte{}
	if r.rowLists != &noLists {
		r.lists().aliases = nil
	}
	for i := range r.stateList() {
		// Never recorded: every transaction-time mask removes it, and the
		// snapshot's states give the columns the same on load.
		r.stateList()[i].recorded = temporal.Window{}
		b := r.beliefList()[i]
		l.batch.RecordedAt[b], l.batch.RetiredAt[b] = l.day32(0), l.day32(0)
		l.batch.Changed(b)
	}
	for j := range l.rows.len() {
		if o := l.rows.at(j); o.mem.KeyFrom == r.mem.ID && o.mem.keyFromObject != "" {
			o.mem.own().keyFromObject = ""
		}
	}
}

// rebuildMeta builds the metadata columns again from the rows: after a
// purge, so that no interned string of it stays.
func (l *ledger) rebuildMeta() {
	l.meta = metaIndex{}
	for j := range l.rows.len() {
		if md := l.rows.at(j).mem.meta; md != nil {
			l.meta.set(j, md)
		}
	}
}

// eraseVectors zeroes row k's vectors in the column store (c.mu and both
// indexes' write locks held: the indexes read them).
func (c *Collection) eraseVectors(k int) {
	d := c.opts.Dim
	for _, b := range c.rows.at(k).beliefList() {
		clear(c.batch.Vectors[b*d : (b+1)*d])
	}
	c.batch.Changed(c.rows.at(k).beliefList()...)
}

// scrubDrift replaces row k's observation in its drift group's window,
// if the window still holds it, by a zero vector (no direction: it moves
// no centroid), so that no copy of the vector outlives a purge. The
// window holds the group's latest observations, its rows in order (as a
// snapshot's load rebuilds it), so k's place is counted from the end.
// When the group is named by the purged memory's own fact subject and no
// other memory of the group remains, the group is renamed: its name was
// part of the erased content.
func (l *ledger) scrubDrift(k int) {
	r := l.rows.at(k)
	if int(r.kgroup) >= len(l.kgroups) {
		return
	}
	name := l.kgroups[r.kgroup].drift
	g := l.drift[name]
	if g == nil {
		return
	}
	after, others := 0, false
	for j := range l.rows.len() {
		if j == k || int(l.rows.at(j).kgroup) >= len(l.kgroups) || l.kgroups[l.rows.at(j).kgroup].drift != name {
			continue
		}
		if j > k {
			after++
		}
		others = others || !l.rows.at(j).purged
	}
	if held := g.det.Held(); after < held {
		g.det.ForgetAt(held - 1 - after)
	}
	if others || strings.HasPrefix(name, "cluster:") {
		return
	}
	renamed := fmt.Sprintf("purged:%d", k)
	delete(l.drift, name)
	l.drift[renamed] = g
	for i, kg := range l.kgroups {
		if kg.drift == name {
			delete(l.kgIndex, kg)
			kg.drift = renamed
			l.kgroups[i] = kg
			l.kgIndex[kg] = uint32(i)
		}
	}
	l.lambdas.Store(nil)
}
