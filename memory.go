package tidemark

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidemark/tidemark/temporal"
)

// Memory is one chunk of evidence with its embedding and metadata
// (DESIGN "The memory"). The fields a caller sets on Put are listed
// first; the engine fills in the rest on Get and History.
type Memory struct {
	// ID names the memory in its collection (required; at most MaxIDBytes
	// of UTF-8 without control characters).
	ID string
	// Text is the evidence; it is never changed once written.
	Text string
	// Vector is the embedding, of the collection's dimension; it may be
	// nil when the collection has an embedder and Text is set. The engine
	// keeps it normalised to unit length (scoring is cosine), so Get
	// returns the unit vector.
	Vector []float32

	Kind    temporal.Kind
	Source  temporal.Source
	Profile string // a temporal.Profiles name, or "" for the collection's HalfLife

	// DocID, Version and Chunk place the memory in a document: a higher
	// Version of the same (DocID, Chunk) supersedes the lower one.
	// Start and End are its byte offsets in the document.
	DocID               string
	Version, Chunk      int
	Start, End          int
	Subject, Relation   string // the fact key (MemStrata): both or neither
	Object              string // the fact's value; needs a Subject
	DependsOn           []string
	Access, Positive    int64
	Negative            int64
	ValidFrom, ValidTo  time.Time // the valid-time window; zero means open
	RecordedAt, Created time.Time // see below

	// RecordedAt is the transaction time: when tidemark learnt the memory.
	// Put sets it to the engine's clock when zero; a caller importing a
	// ledger may give it. Created is when the evidence was authored:
	// ages, decay and the confidence clock run from it (default ValidFrom
	// when given, else RecordedAt).

	// Filled in by the engine.

	// Beliefs holds every valid window tidemark has believed for the
	// memory, in transaction order: superseding a memory does not erase
	// what was believed before, it retires that belief (RetiredAt) and
	// records the closed window from then on.
	Beliefs []Belief
	// Status is the lifecycle status; Visible says the memory is on the
	// visible surface the index searches (not superseded, not expired at
	// write).
	Status  temporal.Status
	Visible bool
	// SupersededBy and Supersedes are version links (new → old).
	SupersededBy string
	Supersedes   []string
	// Aliases are the ids of later writes folded into this memory as
	// duplicates.
	Aliases []string
	// Contradicts lists the memories consolidation found this one
	// contradicting; Review the changed dependencies a ripple flagged it
	// against; Penalty the base confidence the ripples took.
	Contradicts, Review []string
	Penalty             float64
	// ContradictedBy lists the memories a topic conflict preferred over
	// this one; each took ConsolidateOptions.ConflictPenalty of its base
	// confidence (part of Penalty).
	ContradictedBy []string
	// RetractedAt and RetractedBy say when and by whom the memory was
	// retracted (Collection.Retract; the zero time when it was not).
	// Purged says its content was erased: only the id and the links
	// remain (a purged memory is only ever seen in another's history).
	RetractedAt time.Time
	RetractedBy string
	Purged      bool

	// KeyRule says where the fact key (Subject, Relation, Object) came
	// from when the caller gave none: "extract/RULE" — the rule-based
	// extractor (package extract) keyed the text at ingest, RULE being
	// extract.Fact.Rule; "update/RULE" — the text repeats the statement of
	// the memory KeyFrom with one value changed (extract.Compare), so it
	// took that memory's key; "adopted" — this memory's key was extracted
	// or missing, and a later memory (KeyFrom) restating it with another
	// value gave it its key. Empty for a key the caller gave, and for no
	// key. An explicit key always wins over an extracted one.
	KeyRule string
	// KeyFrom is the memory whose statement this one's key is shared with
	// (see KeyRule), or "".
	KeyFrom string
	// SplitInto, on a memory whose text held several separately keyable
	// statements, lists the sibling memories it was split into (All-Mem's
	// Split, App. B.2.1): each states one of them, its text an exact
	// substring of this one's, with its own key, vector and version link
	// back here. The memory itself is archived evidence: off the surface,
	// its belief retired when it was split (at once when split at Put).
	// SplitFrom, on a sibling, names that memory. SplitRule says what
	// decided the split: "rules" (extract.Split), "update" (a later
	// memory restated one of its statements with one value changed) or
	// "planner" (a consolidation's LLM planner, CollectionOptions.Planner).
	SplitInto []string
	SplitFrom string
	SplitRule string
	// Revision is the version of its id a memory is: 1 for the first
	// write of the id, one more for each Put of other content under the
	// id, which makes a new version superseding the one before (as a fact
	// key's successor does). Filled in by the engine.
	Revision int
	// IfRevision, when positive on a memory being written, is the
	// revision the writer expects the id to be at: the write is refused
	// (ErrExists; PutResult Rejected) when the id is at another one, or
	// does not exist — someone else wrote in between.
	IfRevision int
	// Metadata is the caller's own fields (see Metadata): returned with
	// the memory, and what a Filter tests.
	Metadata Metadata
	// metaJSON is Metadata as canonical JSON, set by validate (logged).
	metaJSON string
	// keyFromObject is, on a memory that gives KeyFrom its key, the value
	// KeyFrom states (logged, so replay needs no text analysis).
	keyFromObject string
	// embedded says Vector came from the collection's embedder, not the
	// caller (logged): a retry is recognised by its text, since a remote
	// model need not return the same bits twice.
	embedded bool
}

// Belief is one bi-temporal belief about a memory: its valid window, as
// believed during the transaction window [RecordedAt, RetiredAt). Zero
// times are open bounds.
type Belief struct {
	ValidFrom, ValidTo    time.Time
	RecordedAt, RetiredAt time.Time
}

// Limits on a memory.
const (
	MaxIDBytes       = 512
	MaxKeyBytes      = 1024 // Subject, Relation, Object, DocID, Profile
	MaxDependsOn     = 1024
	MaxCounter       = 1 << 40
	minYear, maxYear = 1, 9999
)

// validID checks an id.
func validID(id, what string) error {
	if id == "" {
		return fmt.Errorf("%w: %s is empty", ErrInvalid, what)
	}
	if len(id) > MaxIDBytes {
		return fmt.Errorf("%w: %s is %d bytes, at most %d", ErrTooLarge, what, len(id), MaxIDBytes)
	}
	if !utf8.ValidString(id) {
		return fmt.Errorf("%w: %s %q is not UTF-8", ErrInvalid, what, id)
	}
	if strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("%w: %s %q has a control character", ErrInvalid, what, id)
	}
	return nil
}

func validTime(t time.Time, what string) error {
	if t.IsZero() {
		return nil
	}
	if y := t.Year(); y < minYear || y > maxYear {
		return fmt.Errorf("%w: %s %v is outside the years %d…%d", ErrInvalid, what, t, minYear, maxYear)
	}
	return nil
}

func validKeyPart(s, what string) error {
	if len(s) > MaxKeyBytes {
		return fmt.Errorf("%w: %s is %d bytes, at most %d", ErrTooLarge, what, len(s), MaxKeyBytes)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s is not UTF-8", ErrInvalid, what)
	}
	return nil
}

// validate checks what the caller may set; vector checks are the
// collection's (they need its dimension).
func (m *Memory) validate(maxText int) error {
	if err := validID(m.ID, "id"); err != nil {
		return err
	}
	if len(m.Text) > maxText {
		return fmt.Errorf("%w: text is %d bytes, at most %d", ErrTooLarge, len(m.Text), maxText)
	}
	if !utf8.ValidString(m.Text) {
		return fmt.Errorf("%w: text is not UTF-8", ErrInvalid)
	}
	if m.IfRevision < 0 || m.IfRevision > 1<<40 {
		return fmt.Errorf("%w: expected revision (if_version) %d out of range", ErrInvalid, m.IfRevision)
	}
	var err error
	// The stored form replaces the caller's map, which is left alone.
	if m.metaJSON, m.Metadata, err = canonicalMetadata(m.Metadata); err != nil {
		return err
	}
	if _, err := m.Kind.MarshalText(); err != nil {
		return fmt.Errorf("%w: kind %d is unknown", ErrInvalid, m.Kind)
	}
	if _, err := m.Source.MarshalText(); err != nil {
		return fmt.Errorf("%w: source %d is unknown", ErrInvalid, m.Source)
	}
	if m.Profile != "" {
		if _, err := temporal.LookupProfile(m.Profile); err != nil {
			return fmt.Errorf("%w: profile %q is unknown", ErrInvalid, m.Profile)
		}
	}
	for _, f := range []struct{ s, what string }{{m.DocID, "doc id"}, {m.Subject, "subject"}, {m.Relation, "relation"}, {m.Object, "object"}} {
		if err := validKeyPart(f.s, f.what); err != nil {
			return err
		}
	}
	if m.Version < 0 || m.Chunk < 0 || m.Start < 0 || m.End < m.Start || m.Version > math.MaxInt32 || m.Chunk > math.MaxInt32 {
		return fmt.Errorf("%w: version %d, chunk %d, offsets [%d, %d): want non-negative and start ≤ end", ErrInvalid, m.Version, m.Chunk, m.Start, m.End)
	}
	if (m.Subject == "") != (m.Relation == "") || (m.Object != "" && m.Subject == "") {
		return fmt.Errorf("%w: a fact key needs both subject and relation (and an object needs them)", ErrInvalid)
	}
	if m.Subject != "" && temporal.NewFactKey(m.Subject, m.Relation).IsZero() {
		return fmt.Errorf("%w: subject %q and relation %q normalise to nothing", ErrInvalid, m.Subject, m.Relation)
	}
	if len(m.DependsOn) > MaxDependsOn {
		return fmt.Errorf("%w: %d depends_on ids, at most %d", ErrTooLarge, len(m.DependsOn), MaxDependsOn)
	}
	for _, d := range m.DependsOn {
		if err := validID(d, "depends_on id"); err != nil {
			return err
		}
		if d == m.ID {
			return fmt.Errorf("%w: memory %q depends on itself", ErrInvalid, m.ID)
		}
	}
	for _, c := range []struct {
		v    int64
		what string
	}{{m.Access, "access"}, {m.Positive, "positive"}, {m.Negative, "negative"}} {
		if c.v < 0 || c.v > MaxCounter {
			return fmt.Errorf("%w: %s = %d, want 0…%d", ErrInvalid, c.what, c.v, int64(MaxCounter))
		}
	}
	for _, t := range []struct {
		t    time.Time
		what string
	}{{m.ValidFrom, "valid_from"}, {m.ValidTo, "valid_to"}, {m.RecordedAt, "recorded_at"}, {m.Created, "created"}} {
		if err := validTime(t.t, t.what); err != nil {
			return err
		}
	}
	if !m.ValidFrom.IsZero() && !m.ValidTo.IsZero() && !m.ValidFrom.Before(m.ValidTo) {
		return fmt.Errorf("%w: valid_from %s is not before valid_to %s", ErrInvalid, m.ValidFrom.Format(time.RFC3339Nano), m.ValidTo.Format(time.RFC3339Nano))
	}
	return nil
}

// callerView is the memory as its caller gave it: without the key the
// engine derived at Put.
func (m *Memory) callerView() Memory {
	v := *m
	if v.KeyRule != "" {
		v.Subject, v.Relation, v.Object = "", "", ""
	}
	v.KeyRule, v.KeyFrom, v.keyFromObject = "", "", ""
	v.SplitInto, v.SplitFrom, v.SplitRule = nil, "", ""
	if v.embedded {
		v.Vector = nil
	}
	v.embedded = false
	return v
}
