package tidemark

import (
	"context"
	"slices"
	"strings"
	"unicode"

	"github.com/tidemark/tidemark/extract"
	"github.com/tidemark/tidemark/temporal"
)

// Keys at ingest (CollectionOptions.Keys = KeysAuto). Put derives fact
// keys before it logs a batch, so the log holds every key the engine
// derived and recovery replays them without analysing text again (a later
// build with other rules replays the same ledger):
//
//  1. a memory with text and no key is keyed by extract.Key;
//  2. a memory whose text repeats the statement of a current memory with
//     one value changed after the verb (extract.Compare's Update) shares
//     that memory's key: the memory with no key, or with one the extractor
//     derived, takes the key of the other (a caller's key wins; the older
//     memory "adopts" the newer one's key when only the newer has one or
//     both have none), so temporal.Resolve's order supersedes the older
//     value.
//
// Candidates for (2) are the memories whose text begins with the same two
// words (the subject and verb must be unchanged, so they share at least
// those): the batch's earlier memories, those of Puts logged but not yet
// applied, and at most maxUpdateCandidates current memories of the
// ledger, newest first (commitDerived).

// maxUpdateCandidates bounds the current memories one new memory is
// compared with.
const maxUpdateCandidates = 64

// keyable reports whether a memory takes part in keys at ingest: it has
// text, is not a document chunk (documents supersede by version) and is
// not an event (events hold in their windows; a new one adds, it does not
// replace).
func keyable(m *Memory) bool {
	return m.Text != "" && m.DocID == "" && m.Kind != temporal.Event
}

// leadWords is the bucket of a text for update candidates: its first two
// words, lower-case, without punctuation ("" for a shorter text).
func leadWords(text string) string {
	f := strings.FieldsFunc(text, unicode.IsSpace)
	if len(f) < 3 {
		return ""
	}
	trim := func(w string) string {
		return strings.ToLower(strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
	}
	return trim(f[0]) + " " + trim(f[1])
}

// commitDerived derives the keys of a Put's batch and commits it, in an
// order that sees every earlier Put: derivation runs under c.deriveMu,
// which is held until the record's place in the log is fixed, and the
// candidates are the ledger's current memories, the memories of Puts
// logged but not yet applied (c.derive.inflight), and the batch's earlier
// memories. So two concurrent Puts of an update and its predecessor
// share a key whichever arrives first, and the one logged second is
// applied after the other.
func (c *Collection) commitDerived(ctx context.Context, rec *record) (applied, error) {
	c.derive.mu.Lock()
	locked := true
	unlock := func() {
		if locked {
			locked = false
			c.derive.mu.Unlock()
		}
	}
	defer unlock()
	cands := c.candidates(rec.mems)
	for _, ms := range c.derive.inflight {
		for i := range ms {
			cands.add(&ms[i])
		}
	}
	deriveKeys(rec.mems, cands)
	if c.derive.inflight == nil {
		c.derive.inflight = map[*record][]Memory{}
	}
	c.derive.inflight[rec] = rec.mems
	defer func() {
		c.derive.mu.Lock()
		delete(c.derive.inflight, rec)
		c.derive.mu.Unlock()
	}()
	return c.db.commitQueued(ctx, rec, unlock)
}

// candidateSet holds copies of the memories a batch may restate, by
// leadWords, newest last.
type candidateSet map[string][]*Memory

func (cs candidateSet) add(m *Memory) {
	if !keyable(m) {
		return
	}
	if l := leadWords(m.Text); l != "" {
		cs[l] = append(cs[l], m)
	}
}

// candidates copies the current memories that the batch's memories may
// restate: those whose text begins with the same two words, newest first,
// at most maxUpdateCandidates per bucket (c.mu held shared briefly; the
// comparisons run outside the lock).
func (c *Collection) candidates(batch []Memory) candidateSet {
	cs := candidateSet{}
	c.mu.RLock()
	defer c.mu.RUnlock()
	for i := range batch {
		l := leadWords(batch[i].Text)
		if l == "" || !keyable(&batch[i]) || cs[l] != nil {
			continue
		}
		rows := c.byLead[l]
		var found []*Memory
		for k := len(rows) - 1; k >= 0 && len(found) < maxUpdateCandidates; k-- {
			if r := c.rows.at(rows[k]); r.visible && !r.superseded {
				m := r.mem.memory() // a copy: the ledger may change once the lock is released
				found = append(found, &m)
			}
		}
		slices.Reverse(found)
		cs[l] = append(found, nil)[:len(found)] // non-nil: the bucket was read
	}
	return cs
}

// deriveKeys derives the keys of a batch about to be logged, against the
// candidates (which it extends with the batch's own memories).
func deriveKeys(batch []Memory, cands candidateSet) {
	for i := range batch {
		m := &batch[i]
		if !keyable(m) || len(m.SplitInto) > 0 {
			continue // a memory split into siblings is keyed through them
		}
		caller := *m
		if m.Subject == "" {
			if f, ok := extract.Key(m.Text); ok {
				m.Subject, m.Relation, m.Object, m.KeyRule = f.Subject, f.Relation, f.Object, "extract/"+f.Rule
			}
		}
		if l := leadWords(m.Text); l != "" {
			bucket := cands[l]
			for k := len(bucket) - 1; k >= max(0, len(bucket)-2*maxUpdateCandidates); k-- {
				if m.SplitFrom != "" && bucket[k].ID == m.SplitFrom {
					continue // a sibling does not restate its own original
				}
				if shareKey(m, bucket[k]) {
					break
				}
			}
		}
		if !derivedValid(m) {
			*m = caller // a derived key past the limits (MaxKeyBytes) is dropped, never logged
		}
		cands.add(m)
	}
}

// derivedValid checks a derived key as Put checks a caller's.
func derivedValid(m *Memory) bool {
	if m.KeyRule == "" && m.KeyFrom == "" {
		return true
	}
	for _, p := range []struct{ s, what string }{{m.Subject, "subject"}, {m.Relation, "relation"}, {m.Object, "object"},
		{m.keyFromObject, "object"}, {m.KeyRule, "key rule"}} {
		if validKeyPart(p.s, p.what) != nil {
			return false
		}
	}
	return m.Subject == "" || !temporal.NewFactKey(m.Subject, m.Relation).IsZero()
}

// shareKey compares new memory m with the earlier memory o and, when m
// restates o with another value, gives the two one key. It reports
// whether the search for m is over.
func shareKey(m, o *Memory) bool {
	ch := extract.Compare(o.Text, m.Text)
	if ch.Verdict != extract.Update {
		return false
	}
	mExplicit := m.Subject != "" && m.KeyRule == ""
	oExplicit := o.Subject != "" && o.KeyRule == ""
	km, ko := temporal.NewFactKey(m.Subject, m.Relation), temporal.NewFactKey(o.Subject, o.Relation)
	switch {
	case !km.IsZero() && km == ko:
		return true // one key already: the chain decides
	case mExplicit && oExplicit:
		return true // the callers' keys decide
	case mExplicit:
		// o's key was derived (or missing): the caller's key overrides it.
		m.KeyFrom, m.keyFromObject = o.ID, ch.Old
		return true
	case oExplicit || !ko.IsZero() && temporal.NormalizeObject(o.Object) == temporal.NormalizeObject(ch.Old):
		// o's key names this fact (a caller's key, or the extractor keyed
		// o on the value that changed): m takes it.
		m.Subject, m.Relation, m.Object = o.Subject, o.Relation, ch.New
		m.KeyRule, m.KeyFrom = "update/"+ch.Rule, o.ID
		return true
	case !km.IsZero() && temporal.NormalizeObject(m.Object) == temporal.NormalizeObject(ch.New):
		// m's extracted key names the value that changed: o adopts it.
		m.KeyFrom, m.keyFromObject = o.ID, ch.Old
		return true
	}
	// Neither has a key that names the change (the extractor chose another
	// value slot, or none): the change keys both, o adopting the key.
	m.Subject, m.Relation, m.Object = ch.Subject, ch.Relation, ch.New
	m.KeyRule, m.KeyFrom, m.keyFromObject = "update/"+ch.Rule, o.ID, ch.Old
	return true
}

// adopt gives current row o the key of the memory being applied, m (row
// idx), when m's log record says so: o's key was derived or missing, and
// m restates o with another value (c.mu held). o leaves its old key's
// chain — it is current, so its tail — and joins m's at its place in
// temporal.Resolve's order.
func (l *ledger) adopt(m *Memory, touched map[int]bool) {
	if m.keyFromObject == "" || m.Subject == "" {
		return
	}
	j, ok := l.rowOf(m.KeyFrom)
	if !ok {
		return
	}
	o := l.rows.at(j)
	key := temporal.NewFactKey(m.Subject, m.Relation)
	if !o.visible || o.superseded || o.key == key || !o.key.IsZero() && o.mem.KeyRule == "" {
		return // no longer current, or keyed by its caller meanwhile
	}
	if !o.key.IsZero() {
		// Only a memory alone in its chain moves: one that superseded
		// others under its derived key keeps that history where it is (m
		// then stands under its own key).
		if chain := l.byKey[o.key]; len(chain) != 1 || chain[0] != j {
			return
		}
		delete(l.byKey, o.key)
	}
	keyed := o.mem.own()
	keyed.Subject, keyed.Relation, keyed.Object = m.Subject, m.Relation, m.keyFromObject
	keyed.KeyRule, keyed.KeyFrom = "adopted", m.ID
	t := *o.rowText
	t.key = key
	o.setText(t)
	chain := l.byKey[key]
	a := o.assertion(j)
	pos := len(chain)
	for pos > 0 && temporal.Newer(l.rows.at(chain[pos-1]).assertion(chain[pos-1]), a) {
		pos--
	}
	var closed []int
	l.byKey[key] = l.link(chain, pos, j, touched, &closed)
}
