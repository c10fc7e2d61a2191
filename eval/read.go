package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// MaxLineBytes bounds one line of a corpus or queries file, newline
// included: 16 MiB, room for a vector of about a million dimensions.
const MaxLineBytes = 16 << 20

// ReadCorpus reads a corpus file: JSON Lines, one [CorpusLine] per line,
// in file order. Blank lines are skipped (they still count for line
// numbers), as is a leading UTF-8 byte-order mark. Decoding is strict: a
// field the format does not define (names are exact and case-sensitive), a
// field given twice, anything but one JSON object on a line, and a value of
// the wrong type are errors; then every line is validated
// ([CorpusLine.Validate]) together with the rules across lines
// ([ValidateCorpus]). Every error is a [*LineError] naming the line number
// and wrapping a sentinel error of this package.
func ReadCorpus(r io.Reader) ([]CorpusLine, error) {
	c := newChecker("corpus")
	var (
		out   []CorpusLine
		lines []int
	)
	err := scanLines(r, c.file, func(n int, b []byte) error {
		var l CorpusLine
		if e := decodeLine(b, corpusFields, &l); e != nil {
			return c.locate(e, n, e.ID)
		}
		if err := c.addCorpus(n, &l); err != nil {
			return err
		}
		out = append(out, l)
		lines = append(lines, n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the corpus file has no records", ErrEmpty)
	}
	if err := c.finishCorpus(out, func(i int) int { return lines[i] }); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadQueries reads a queries file: JSON Lines, one [QueryLine] per line,
// decoded and validated as strictly as [ReadCorpus] does the corpus
// ([QueryLine.Validate], unique ids, one dimension). An explicit "k": 0 is
// an error (omit k for the default). That gold and stale name corpus ids is
// checked by [Check].
func ReadQueries(r io.Reader) ([]QueryLine, error) {
	c := newChecker("queries")
	var out []QueryLine
	err := scanLines(r, c.file, func(n int, b []byte) error {
		var q QueryLine
		if e := decodeLine(b, queryFields, &q); e != nil {
			return c.locate(e, n, e.ID)
		}
		if err := c.addQuery(n, &q); err != nil {
			return err
		}
		out = append(out, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the queries file has no records", ErrEmpty)
	}
	return out, nil
}

// WriteCorpus writes lines as JSON Lines in the format ReadCorpus reads;
// absent optional fields are left out. It does not validate.
func WriteCorpus(w io.Writer, lines []CorpusLine) error { return writeLines(w, lines) }

// WriteQueries writes queries as JSON Lines in the format ReadQueries
// reads. It does not validate.
func WriteQueries(w io.Writer, queries []QueryLine) error { return writeLines(w, queries) }

func writeLines[T any](w io.Writer, recs []T) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return fmt.Errorf("eval: record %d: %w", i+1, err)
		}
	}
	return bw.Flush()
}

var bom = []byte("\xef\xbb\xbf")

// scanLines calls fn with each non-blank line, trimmed, and its 1-based
// number.
func scanLines(r io.Reader, file string, fn func(n int, line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		b := sc.Bytes()
		if n == 1 {
			b = bytes.TrimPrefix(b, bom)
		}
		if b = bytes.TrimSpace(b); len(b) == 0 {
			continue
		}
		if err := fn(n, b); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &LineError{File: file, Line: n + 1,
				Err: fmt.Errorf("%w: longer than %d bytes (%d MiB)", ErrLineTooLong, MaxLineBytes, MaxLineBytes>>20)}
		}
		return fmt.Errorf("eval: reading the %s file after line %d: %w", file, n, err)
	}
	return nil
}

// fieldCheck is what decodeLine checks of a field's raw value before the
// line is decoded, so that its error can name the field.
type fieldCheck uint8

const (
	rawAny fieldCheck = iota
	rawTime
	rawKind
	rawSource
	rawPositive // k: a present value must be ≥ 1
)

// corpusFields and queryFields are the JSON names of the formats, from
// the struct tags, with the checks decodeLine applies to them.
var (
	corpusFields = jsonFields(reflect.TypeFor[CorpusLine](), map[string]fieldCheck{
		"valid_from": rawTime, "valid_to": rawTime, "recorded_at": rawTime,
		"kind": rawKind, "source": rawSource,
	})
	queryFields = jsonFields(reflect.TypeFor[QueryLine](), map[string]fieldCheck{
		"now": rawTime, "as_of": rawTime, "k": rawPositive,
	})
)

func jsonFields(t reflect.Type, checks map[string]fieldCheck) map[string]fieldCheck {
	out := make(map[string]fieldCheck, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = checks[name]
	}
	return out
}

// decodeLine decodes one JSON object into v (a *CorpusLine or *QueryLine)
// strictly. A first pass walks the object's keys: each must be a field of
// fields, given once, and the values that need it are checked with the
// field named in the error; then the line is decoded with unknown fields
// disallowed. The returned error carries the record's id when the line
// gave one.
func decodeLine(line []byte, fields map[string]fieldCheck, v any) *LineError {
	dec := json.NewDecoder(bytes.NewReader(line))
	malformed := func(format string, args ...any) *LineError {
		return fieldError("", ErrMalformed, format, args...)
	}
	if tok, err := dec.Token(); err != nil {
		return malformed("%v", jsonErr(err))
	} else if d, ok := tok.(json.Delim); !ok || d != '{' {
		return malformed("want one JSON object per line, got %s", describeToken(tok))
	}
	var (
		id    string
		first *LineError
		seen  = make(map[string]bool, len(fields))
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return malformed("%v", jsonErr(err))
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return malformed("%v", jsonErr(err))
		}
		check, known := fields[key]
		switch {
		case !known:
			return fieldError(key, ErrUnknownField, "unknown field %q", key)
		case seen[key]:
			return fieldError(key, ErrDuplicateField, "field %q given twice", key)
		}
		seen[key] = true
		if key == "id" {
			_ = json.Unmarshal(raw, &id)
		}
		if first == nil {
			first = checkRaw(key, check, raw)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return malformed("%v", jsonErr(err))
	}
	if tok, err := dec.Token(); err != io.EOF {
		if err != nil {
			return malformed("after the object: %v", jsonErr(err))
		}
		return malformed("more than one JSON value on the line (then %s)", describeToken(tok))
	}
	if first != nil {
		first.ID = id
		return first
	}
	full := json.NewDecoder(bytes.NewReader(line))
	full.DisallowUnknownFields()
	if err := full.Decode(v); err != nil {
		e := malformed("%v", jsonErr(err))
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			e.Field = te.Field
		}
		e.ID = id
		return e
	}
	return nil
}

// checkRaw checks the raw value of one field.
func checkRaw(field string, check fieldCheck, raw json.RawMessage) *LineError {
	if check == rawAny || string(raw) == "null" {
		return nil
	}
	var s string
	switch check {
	case rawTime:
		var t time.Time
		if err := t.UnmarshalJSON(raw); err != nil {
			return fieldError(field, ErrBadTime, "%s is not an RFC 3339 time (want e.g. \"2025-01-02T15:04:05Z\") or null", raw)
		}
		return nil
	case rawPositive:
		var k int
		if err := json.Unmarshal(raw, &k); err == nil && k < 1 {
			return fieldError(field, ErrBadValue, "k = %d, want ≥ 1 (omit k for the default %d)", k, DefaultK)
		}
		return nil // a type error is reported by the full decode
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return fieldError(field, ErrMalformed, "%s is not a string", raw)
	}
	var err error
	switch check {
	case rawKind:
		_, err = temporal.ParseKind(s)
	case rawSource:
		_, err = temporal.ParseSource(s)
	}
	if err != nil {
		return fieldError(field, ErrBadValue, "%v", err)
	}
	return nil
}

// jsonErr rewords the decoder's errors without Go type names (the caller
// names the field).
func jsonErr(err error) error {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		want := te.Type.String()
		switch te.Type.Kind() {
		case reflect.Float32:
			want = "a float32 (a finite number within ±3.4e38)"
		case reflect.Int:
			want = "an integer"
		case reflect.String:
			want = "a string"
		case reflect.Slice:
			want = "an array"
		case reflect.Struct:
			if te.Type == reflect.TypeFor[time.Time]() {
				want = "an RFC 3339 time"
			} else {
				want = "an object"
			}
		}
		return fmt.Errorf("JSON %s is not %s", te.Value, want)
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Errorf("%v (at byte %d)", se, se.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("unexpected end of line")
	}
	return err
}

func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", string(t))
	case string:
		return fmt.Sprintf("the string %q", t)
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%v", t)
	}
}
