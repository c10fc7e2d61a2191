package temporal

import (
	"strings"
	"unicode"
)

// FactKey is the normalised (subject, relation) key of MemStrata's
// supersession rule: two assertions with the same key and different objects
// are a contradiction, and the newer supersedes the older (MemStrata §4.1,
// "Deterministic assertion path").
type FactKey struct {
	Subject, Relation string
}

// NewFactKey normalises subject and relation with [NormalizeKeyPart].
func NewFactKey(subject, relation string) FactKey {
	return FactKey{NormalizeKeyPart(subject), NormalizeKeyPart(relation)}
}

// IsZero reports whether the key is empty (the memory asserts no fact).
func (k FactKey) IsZero() bool { return k.Subject == "" && k.Relation == "" }

// String joins the parts with a unit separator, which normalisation removes
// from the parts, so distinct keys have distinct strings.
func (k FactKey) String() string { return k.Subject + "\x1f" + k.Relation }

// NormalizeKeyPart folds the spellings of one key part together: lower-case,
// every run of characters that are not letters or digits becomes one space,
// and the ends are trimmed. "API Rate-Limit", "api_rate_limit" and
// " api  rate limit " all normalise to "api rate limit".
func NormalizeKeyPart(s string) string {
	var b strings.Builder
	pendingSpace := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if pendingSpace && b.Len() > 0 {
				b.WriteByte(' ')
			}
			pendingSpace = false
			b.WriteRune(r)
			continue
		}
		pendingSpace = true
	}
	return b.String()
}

// NormalizeObject folds the spellings of a fact's value for the duplicate
// test: case and surrounding or repeated whitespace do not matter, but
// punctuation does ("1.2.3" and "1 2 3" are different versions).
func NormalizeObject(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// Assertion is one (subject, relation, object) fact with its times, as the
// supersession rule sees it.
type Assertion struct {
	ID     uint64
	Key    FactKey
	Object string
	// ValidFrom and RecordedAt are days since the epoch.
	ValidFrom, RecordedAt float64
}

// Relation is how an incoming assertion relates to a stored one.
type Relation uint8

// Relations between two assertions.
const (
	// Unrelated: different keys (or no key).
	Unrelated Relation = iota
	// Duplicate: same key, same object — reinforce, do not store twice.
	Duplicate
	// Supersedes: same key, different object, and the first is newer.
	Supersedes
	// SupersededBy: same key, different object, and the second is newer.
	SupersededBy
)

var relationNames = [...]string{"unrelated", "duplicate", "supersedes", "superseded_by"}

// String returns the relation's name.
func (r Relation) String() string {
	if int(r) < len(relationNames) {
		return relationNames[r]
	}
	return "Relation(?)"
}

// Resolve applies MemStrata's deterministic rule to a and b: same key and
// same (normalised) object is a Duplicate; same key and a different object
// means the newer supersedes the older, where newer is the later ValidFrom,
// then the later RecordedAt, then the larger ID — a total order, so the
// outcome never depends on arrival order or on similarity.
func Resolve(a, b Assertion) Relation {
	if a.Key.IsZero() || a.Key != b.Key {
		return Unrelated
	}
	if NormalizeObject(a.Object) == NormalizeObject(b.Object) {
		return Duplicate
	}
	if Newer(a, b) {
		return Supersedes
	}
	return SupersededBy
}

// Newer is Resolve's order, a total order on assertions: a is newer than b
// when its ValidFrom is later, then its RecordedAt, then its ID.
func Newer(a, b Assertion) bool {
	if a.ValidFrom != b.ValidFrom {
		return a.ValidFrom > b.ValidFrom
	}
	if a.RecordedAt != b.RecordedAt {
		return a.RecordedAt > b.RecordedAt
	}
	return a.ID > b.ID
}
