package eval

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// DefaultK is the number of results of a query that gives no k.
const DefaultK = 10

// CorpusLine is one memory of a corpus file: one JSON object per line, in
// the order the memories were learnt (DESIGN "Evaluation contract"). Only
// ID is always required; Text is required unless Vector is given. Every
// other field is optional and its zero value means "absent".
//
// Times are RFC 3339 strings or null in JSON; a nil time is an open bound.
type CorpusLine struct {
	// ID names the memory in results, gold and stale lists; unique.
	ID string `json:"id"`
	// Text is the evidence; embedded when Vector is absent.
	Text string `json:"text,omitempty"`
	// Vector is the embedding: finite, non-empty, the same dimension for
	// every vector of the corpus and the queries.
	Vector []float32 `json:"vector,omitempty"`
	// Kind is static (the default), versioned or event, any case.
	Kind temporal.Kind `json:"kind,omitzero"`
	// Source sets the base confidence prior (SmartVector Table 1); absent
	// is unknown (0.20).
	Source temporal.Source `json:"source,omitzero"`
	// Profile names a decay profile of [temporal.Profiles] (exact,
	// lower-case); absent means SmartVector's 30-day half-life and no
	// floor.
	Profile string `json:"profile,omitempty"`
	// DocID, Version and Chunk place the memory in a versioned document: a
	// higher Version of the same (DocID, Chunk) supersedes a lower one.
	// Version and Chunk are non-negative and need a DocID.
	DocID   string `json:"doc_id,omitempty"`
	Version int    `json:"version,omitempty"`
	Chunk   int    `json:"chunk,omitempty"`
	// ValidFrom and ValidTo bound the valid time [ValidFrom, ValidTo);
	// ValidFrom must be before ValidTo when both are given.
	ValidFrom *time.Time `json:"valid_from,omitempty"`
	ValidTo   *time.Time `json:"valid_to,omitempty"`
	// RecordedAt is the transaction time; absent, file order is
	// transaction time (see [FileOrderEpoch]).
	RecordedAt *time.Time `json:"recorded_at,omitempty"`
	// Subject, Relation and Object are an optional fact, given together:
	// the same (subject, relation) with another object supersedes, with
	// the same object is a duplicate (MemStrata).
	Subject  string `json:"subject,omitempty"`
	Relation string `json:"relation,omitempty"`
	Object   string `json:"object,omitempty"`
	// DependsOn lists ids of the corpus this memory depends on.
	DependsOn []string `json:"depends_on,omitempty"`
	// Positive, Negative and Access are the non-negative feedback and
	// access counters of the ConfidenceEngine.
	Positive int `json:"positive,omitempty"`
	Negative int `json:"negative,omitempty"`
	Access   int `json:"access,omitempty"`
}

// QueryLine is one query of a queries file.
type QueryLine struct {
	// ID names the query; unique.
	ID string `json:"id"`
	// Text is the query; embedded when Vector is absent.
	Text string `json:"text,omitempty"`
	// Vector is the query embedding (same rules as the corpus').
	Vector []float32 `json:"vector,omitempty"`
	// Now is the query's reference time; required. It is the transaction
	// time of the query, and its valid time unless AsOf is given.
	Now time.Time `json:"now"`
	// AsOf, when given, asks what was true at that valid time, with
	// everything known at Now.
	AsOf *time.Time `json:"as_of,omitempty"`
	// K is the number of results; 0 means [DefaultK]. In JSON omit it for
	// the default: an explicit 0 is an error.
	K int `json:"k,omitempty"`
	// Gold lists the correct ids (non-empty); Stale the ids that would be
	// a stale answer (superseded or expired). No id is in both.
	Gold  []string `json:"gold"`
	Stale []string `json:"stale,omitempty"`
	// Type groups queries in the report's by_type (e.g. "current",
	// "as_of"); empty leaves the query out of by_type.
	Type string `json:"type,omitempty"`
}

// TopK returns K, or DefaultK when K is 0.
func (q *QueryLine) TopK() int {
	if q.K == 0 {
		return DefaultK
	}
	return q.K
}

// LineError locates an invalid record: the file ("corpus" or "queries"),
// the 1-based line of the file — or, when Record is set, the 1-based
// position in a slice that was not read from a file —, the record's id when
// known, and the field. Err wraps one of the package's sentinel errors.
type LineError struct {
	File   string
	Line   int
	Record bool
	ID     string
	Field  string
	Err    error
}

func (e *LineError) Error() string {
	var b strings.Builder
	unit := "line"
	if e.Record {
		unit = "record"
	}
	fmt.Fprintf(&b, "%s %s %d", e.File, unit, e.Line)
	if e.ID != "" {
		fmt.Fprintf(&b, " (id %q)", e.ID)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

// Unwrap returns the wrapped error.
func (e *LineError) Unwrap() error { return e.Err }

// fieldError is a validation failure of one field, before it is located.
func fieldError(field string, sentinel error, format string, args ...any) *LineError {
	return &LineError{Field: field, Err: fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)}
}

// Validate checks one corpus line on its own: required fields, finite
// vector, known kind, source and profile, valid_from < valid_to, a complete
// fact key, non-negative counters. Checks across lines (unique ids, one
// dimension, depends_on targets) are [ValidateCorpus]'s. The error is a
// [*LineError] without a line number.
func (l *CorpusLine) Validate() error {
	err := l.validate()
	if err != nil {
		err.ID = l.ID
		return err
	}
	return nil
}

func (l *CorpusLine) validate() *LineError {
	if l.ID == "" {
		return fieldError("id", ErrMissing, "id is required")
	}
	if strings.TrimSpace(l.Text) == "" && l.Vector == nil {
		return fieldError("text", ErrMissing, "text (not only whitespace) is required unless a vector is given")
	}
	if e := checkVector(l.Vector); e != nil {
		return e
	}
	if l.Kind > temporal.Event {
		return fieldError("kind", ErrBadValue, "%v is not static, versioned or event", l.Kind)
	}
	if _, err := temporal.ParseSource(l.Source.String()); err != nil {
		return fieldError("source", ErrBadValue, "%v", err)
	}
	if l.Profile != "" {
		if _, err := temporal.LookupProfile(l.Profile); err != nil {
			return fieldError("profile", ErrBadValue, "unknown profile %q (want one of %s)", l.Profile, profileNames())
		}
	}
	if l.DocID == "" && (l.Version != 0 || l.Chunk != 0) {
		return fieldError("doc_id", ErrMissing, "version and chunk need a doc_id")
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"version", l.Version}, {"chunk", l.Chunk}, {"positive", l.Positive}, {"negative", l.Negative}, {"access", l.Access}} {
		if f.v < 0 {
			return fieldError(f.name, ErrBadValue, "%d is negative", f.v)
		}
	}
	if l.ValidFrom != nil && l.ValidTo != nil && !l.ValidFrom.Before(*l.ValidTo) {
		return fieldError("valid_to", ErrBadTime, "valid_from %s is not before valid_to %s",
			l.ValidFrom.Format(time.RFC3339Nano), l.ValidTo.Format(time.RFC3339Nano))
	}
	for _, t := range []struct {
		name string
		v    *time.Time
	}{{"valid_from", l.ValidFrom}, {"valid_to", l.ValidTo}, {"recorded_at", l.RecordedAt}} {
		if t.v != nil {
			if e := checkTime(t.name, *t.v); e != nil {
				return e
			}
		}
	}
	if l.Subject != "" || l.Relation != "" || l.Object != "" {
		if l.Subject == "" || l.Relation == "" || l.Object == "" {
			return fieldError("subject", ErrBadValue, "subject, relation and object go together (got %q, %q, %q)",
				l.Subject, l.Relation, l.Object)
		}
		if k := temporal.NewFactKey(l.Subject, l.Relation); k.Subject == "" || k.Relation == "" {
			return fieldError("subject", ErrBadValue, "subject %q and relation %q must each hold a letter or digit",
				l.Subject, l.Relation)
		}
		if temporal.NormalizeObject(l.Object) == "" {
			return fieldError("object", ErrBadValue, "object %q is blank", l.Object)
		}
	}
	seen := make(map[string]bool, len(l.DependsOn))
	for _, d := range l.DependsOn {
		switch {
		case d == "":
			return fieldError("depends_on", ErrMissing, "empty id")
		case d == l.ID:
			return fieldError("depends_on", ErrBadValue, "%q depends on itself", d)
		case seen[d]:
			return fieldError("depends_on", ErrDuplicateID, "%q listed twice", d)
		}
		seen[d] = true
	}
	return nil
}

// Validate checks one query on its own: id, text or vector, a finite
// vector, now, k ≥ 0 (0 is the default), a non-empty gold list without
// repeats, no id in both gold and stale. That the ids exist in the corpus
// is [Check]'s job. The error is a [*LineError] without a line number.
func (q *QueryLine) Validate() error {
	err := q.validate()
	if err != nil {
		err.ID = q.ID
		return err
	}
	return nil
}

func (q *QueryLine) validate() *LineError {
	if q.ID == "" {
		return fieldError("id", ErrMissing, "id is required")
	}
	if strings.TrimSpace(q.Text) == "" && q.Vector == nil {
		return fieldError("text", ErrMissing, "text (not only whitespace) is required unless a vector is given")
	}
	if e := checkVector(q.Vector); e != nil {
		return e
	}
	if q.Now.IsZero() {
		return fieldError("now", ErrMissing, "now is required (the query's reference time, RFC 3339; not 0001-01-01T00:00:00Z, Go's zero time)")
	}
	if e := checkTime("now", q.Now); e != nil {
		return e
	}
	if q.AsOf != nil {
		if e := checkTime("as_of", *q.AsOf); e != nil {
			return e
		}
	}
	if q.K < 0 {
		return fieldError("k", ErrBadValue, "k = %d, want ≥ 1", q.K)
	}
	if len(q.Gold) == 0 {
		return fieldError("gold", ErrMissing, "gold must list at least one corpus id")
	}
	gold := make(map[string]bool, len(q.Gold))
	for _, g := range q.Gold {
		if g == "" {
			return fieldError("gold", ErrMissing, "empty id")
		}
		if gold[g] {
			return fieldError("gold", ErrDuplicateID, "%q listed twice", g)
		}
		gold[g] = true
	}
	stale := make(map[string]bool, len(q.Stale))
	for _, s := range q.Stale {
		switch {
		case s == "":
			return fieldError("stale", ErrMissing, "empty id")
		case stale[s]:
			return fieldError("stale", ErrDuplicateID, "%q listed twice", s)
		case gold[s]:
			return fieldError("stale", ErrBadValue, "%q is in both gold and stale", s)
		}
		stale[s] = true
	}
	return nil
}

func checkVector(v []float32) *LineError {
	if v == nil {
		return nil
	}
	if len(v) == 0 {
		return fieldError("vector", ErrBadVector, "vector is empty")
	}
	for i, x := range v {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return fieldError("vector", ErrBadVector, "element %d is %v", i, x)
		}
	}
	return nil
}

// checkTime rejects a time JSON cannot carry (a year outside 0…9999), so
// that every valid line can be written back.
func checkTime(field string, t time.Time) *LineError {
	if y := t.Year(); y < 0 || y > 9999 {
		return fieldError(field, ErrBadTime, "year %d is outside 0…9999", y)
	}
	return nil
}

func profileNames() string {
	var names []string
	for _, p := range temporal.Profiles() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// checker accumulates the checks across the records of one file.
type checker struct {
	file string
	// record marks positions in a slice rather than lines of a file.
	record bool
	ids    map[string]int // id → line
	dim    int            // first vector's length, 0 before one
	// dimLine and dimID locate the first vector.
	dimLine int
	dimID   string
}

func newChecker(file string) *checker { return &checker{file: file, ids: make(map[string]int)} }

func (c *checker) unit() string {
	if c.record {
		return "record"
	}
	return "line"
}

func (c *checker) locate(e *LineError, line int, id string) *LineError {
	e.File, e.Line, e.Record, e.ID = c.file, line, c.record, id
	return e
}

// add checks a record's id and vector against the earlier records.
func (c *checker) add(line int, id string, vec []float32) *LineError {
	if first, ok := c.ids[id]; ok {
		return c.locate(fieldError("id", ErrDuplicateID, "%q is also the id of %s %d", id, c.unit(), first), line, id)
	}
	c.ids[id] = line
	if vec != nil {
		if c.dim == 0 {
			c.dim, c.dimLine, c.dimID = len(vec), line, id
		} else if len(vec) != c.dim {
			return c.locate(fieldError("vector", ErrDimension, "%d dimensions, but %s %d (id %q) has %d",
				len(vec), c.unit(), c.dimLine, c.dimID, c.dim), line, id)
		}
	}
	return nil
}

func (c *checker) addCorpus(line int, l *CorpusLine) error {
	if e := l.validate(); e != nil {
		return c.locate(e, line, l.ID)
	}
	if e := c.add(line, l.ID, l.Vector); e != nil {
		return e
	}
	return nil
}

func (c *checker) addQuery(line int, q *QueryLine) error {
	if e := q.validate(); e != nil {
		return c.locate(e, line, q.ID)
	}
	if e := c.add(line, q.ID, q.Vector); e != nil {
		return e
	}
	return nil
}

// finishCorpus checks that every depends_on target exists.
func (c *checker) finishCorpus(lines []CorpusLine, lineOf func(i int) int) error {
	for i := range lines {
		for _, d := range lines[i].DependsOn {
			if _, ok := c.ids[d]; !ok {
				return c.locate(fieldError("depends_on", ErrUnknownID, "%q is not an id of the corpus", d), lineOf(i), lines[i].ID)
			}
		}
	}
	return nil
}

// ValidateCorpus checks every line ([CorpusLine.Validate]) and the rules
// across lines: unique ids, one vector dimension, depends_on naming ids of
// the corpus, at least one line. A [*LineError] gives the 1-based position.
func ValidateCorpus(lines []CorpusLine) error {
	_, err := validateCorpus(lines)
	return err
}

func validateCorpus(lines []CorpusLine) (*checker, error) {
	if len(lines) == 0 {
		return nil, fmt.Errorf("%w: the corpus is empty", ErrEmpty)
	}
	c := newChecker("corpus")
	c.record = true
	for i := range lines {
		if err := c.addCorpus(i+1, &lines[i]); err != nil {
			return nil, err
		}
	}
	return c, c.finishCorpus(lines, func(i int) int { return i + 1 })
}

// ValidateQueries checks every query ([QueryLine.Validate]) and the rules
// across queries: unique ids, one vector dimension, at least one query.
func ValidateQueries(queries []QueryLine) error {
	_, err := validateQueries(queries)
	return err
}

func validateQueries(queries []QueryLine) (*checker, error) {
	if len(queries) == 0 {
		return nil, fmt.Errorf("%w: there are no queries", ErrEmpty)
	}
	c := newChecker("queries")
	c.record = true
	for i := range queries {
		if err := c.addQuery(i+1, &queries[i]); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Check validates a corpus and its queries together: each on its own
// ([ValidateCorpus], [ValidateQueries]), then across them — corpus and
// query vectors share one dimension, and every gold and stale id is an id
// of the corpus. [Run] calls it first.
func Check(corpus []CorpusLine, queries []QueryLine) error {
	cc, err := validateCorpus(corpus)
	if err != nil {
		return err
	}
	qc, err := validateQueries(queries)
	if err != nil {
		return err
	}
	if cc.dim != 0 && qc.dim != 0 && cc.dim != qc.dim {
		return &LineError{File: "queries", Line: qc.dimLine, Record: true, ID: qc.dimID, Field: "vector",
			Err: fmt.Errorf("%w: %d dimensions, but the corpus vectors (record %d, id %q) have %d",
				ErrDimension, qc.dim, cc.dimLine, cc.dimID, cc.dim)}
	}
	for i := range queries {
		q := &queries[i]
		for _, list := range []struct {
			name string
			ids  []string
		}{{"gold", q.Gold}, {"stale", q.Stale}} {
			for _, id := range list.ids {
				if _, ok := cc.ids[id]; !ok {
					return &LineError{File: "queries", Line: i + 1, Record: true, ID: q.ID, Field: list.name,
						Err: fmt.Errorf("%w: %q is not an id of the corpus", ErrUnknownID, id)}
				}
			}
		}
	}
	return nil
}
