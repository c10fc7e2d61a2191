package tidemark

import (
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
// Candidates for (2) are the current memories whose text begins with the
// same two words (the subject and verb must be unchanged, so they share
// at least those), newest first, at most maxUpdateCandidates of them, and
// the batch's earlier memories.

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

// deriveKeys derives the keys of a batch about to be logged (c.mu held
// shared).
func (c *Collection) deriveKeys(batch []Memory) {
	if c.opts.Keys != KeysAuto {
		return
	}
	for i := range batch {
		m := &batch[i]
		if !keyable(m) {
			continue
		}
		if m.Subject == "" {
			if f, ok := extract.Key(m.Text); ok {
				m.Subject, m.Relation, m.Object, m.KeyRule = f.Subject, f.Relation, f.Object, "extract/"+f.Rule
			}
		}
		c.matchUpdate(m, batch[:i])
	}
}

// matchUpdate looks for the current memory m restates with another value
// and shares keys with it.
func (c *Collection) matchUpdate(m *Memory, earlier []Memory) {
	lead := leadWords(m.Text)
	if lead == "" {
		return
	}
	for j := len(earlier) - 1; j >= 0; j-- {
		if o := &earlier[j]; keyable(o) && leadWords(o.Text) == lead && shareKey(m, o) {
			return
		}
	}
	rows := c.byLead[lead]
	for k, n := len(rows)-1, 0; k >= 0 && n < maxUpdateCandidates; k-- {
		r := &c.rows[rows[k]]
		if !r.visible || r.superseded {
			continue
		}
		n++
		if shareKey(m, &r.mem) {
			return
		}
	}
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
func (c *Collection) adopt(m *Memory, touched map[int]bool) {
	if m.keyFromObject == "" || m.Subject == "" {
		return
	}
	j, ok := c.byID[m.KeyFrom]
	if !ok {
		return
	}
	o := &c.rows[j]
	key := temporal.NewFactKey(m.Subject, m.Relation)
	if !o.visible || o.superseded || o.key == key || !o.key.IsZero() && o.mem.KeyRule == "" {
		return // no longer current, or keyed by its caller meanwhile
	}
	if !o.key.IsZero() {
		chain := c.byKey[o.key]
		if len(chain) == 0 || chain[len(chain)-1] != j {
			return
		}
		if chain = chain[:len(chain)-1]; len(chain) == 0 {
			delete(c.byKey, o.key)
		} else {
			c.byKey[o.key] = chain
		}
	}
	o.mem.Subject, o.mem.Relation, o.mem.Object = m.Subject, m.Relation, m.keyFromObject
	o.mem.KeyRule, o.mem.KeyFrom = "adopted", m.ID
	o.key = key
	chain := c.byKey[key]
	a := o.assertion(j)
	pos := len(chain)
	for pos > 0 && temporal.Newer(c.rows[chain[pos-1]].assertion(chain[pos-1]), a) {
		pos--
	}
	var closed []int
	c.byKey[key] = c.link(chain, pos, j, touched, &closed)
}
