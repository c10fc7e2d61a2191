package eval

import "errors"

// Errors returned by this package. They are wrapped with the detail of the
// offending input — for a file, inside a [*LineError] that names the line,
// the record's id and the field — so test for them with errors.Is.
var (
	// ErrMalformed: a line that is not one JSON object, or a value of the
	// wrong JSON type ("version": "2").
	ErrMalformed = errors.New("eval: malformed line")
	// ErrUnknownField: a field that the format does not define (the
	// names are exact and case-sensitive).
	ErrUnknownField = errors.New("eval: unknown field")
	// ErrDuplicateField: a field given twice on one line.
	ErrDuplicateField = errors.New("eval: duplicate field")
	// ErrLineTooLong: a line longer than [MaxLineBytes].
	ErrLineTooLong = errors.New("eval: line too long")
	// ErrEmpty: a file with no records, or an empty corpus or query set.
	ErrEmpty = errors.New("eval: no records")
	// ErrMissing: a required field that is absent, null or empty (id;
	// text unless a vector is given; a query's now and gold).
	ErrMissing = errors.New("eval: missing required field")
	// ErrDuplicateID: a record id used twice in one file, or an id listed
	// twice in one list (gold, stale, depends_on).
	ErrDuplicateID = errors.New("eval: duplicate id")
	// ErrUnknownID: gold, stale or depends_on naming an id the corpus does
	// not have, or a search result naming one.
	ErrUnknownID = errors.New("eval: unknown id")
	// ErrBadVector: an empty vector, or one holding NaN or ±Inf.
	ErrBadVector = errors.New("eval: bad vector")
	// ErrDimension: vectors of different lengths in one evaluation.
	ErrDimension = errors.New("eval: dimension mismatch")
	// ErrBadTime: a time that is not RFC 3339, or valid_from not before
	// valid_to.
	ErrBadTime = errors.New("eval: bad time")
	// ErrBadValue: any other value out of its domain: an unknown kind,
	// source or profile, a negative counter, version or chunk, k < 1, a
	// partial fact key, an id in both gold and stale.
	ErrBadValue = errors.New("eval: invalid value")
	// ErrBadResult: a [Searcher] answered with a confidence outside [0, 1]
	// or the same id twice.
	ErrBadResult = errors.New("eval: bad search result")
	// ErrNotIngested: Search on a [Memory] before a successful Ingest.
	ErrNotIngested = errors.New("eval: search before ingest")
	// ErrOptions: invalid [MemoryOptions].
	ErrOptions = errors.New("eval: invalid options")
)
