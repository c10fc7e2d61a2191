package tidemark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Metadata is a memory's own fields, a JSON object: the team that owns
// it, the tenant, a page number, tags. Keys are non-empty UTF-8 of at most
// MaxMetadataKeyBytes that do not start with "$" (the filter operators'
// prefix). Values are JSON values as encoding/json decodes them: strings,
// float64 numbers (integers beyond ±2^53 lose precision), booleans, nil,
// arrays, and objects nested at most MaxMetadataDepth deep in all. A
// memory's metadata is at most MaxMetadataBytes as JSON. A Filter tests
// the top-level keys.
type Metadata map[string]any

// Bounds of Metadata.
const (
	MaxMetadataBytes    = 16 << 10
	MaxMetadataKeyBytes = 256
	MaxMetadataDepth    = 4
)

// canonicalMetadata checks md and returns it as canonical JSON (keys
// sorted, numbers as float64 writes them; "" for none) and as a reader
// decodes that JSON (ints become float64, typed slices and maps plain
// ones): the form a row keeps.
func canonicalMetadata(md Metadata) (string, Metadata, error) {
	if len(md) == 0 {
		return "", nil, nil
	}
	if err := checkMetaValue(map[string]any(md), 1); err != nil {
		return "", nil, fmt.Errorf("%w: metadata: %v", ErrInvalid, err)
	}
	b, err := json.Marshal(md)
	if err != nil {
		return "", nil, fmt.Errorf("%w: metadata: %v", ErrInvalid, err)
	}
	if len(b) > MaxMetadataBytes {
		return "", nil, fmt.Errorf("%w: metadata is %d bytes as JSON, at most %d", ErrTooLarge, len(b), MaxMetadataBytes)
	}
	var back Metadata
	if err := json.Unmarshal(b, &back); err != nil {
		return "", nil, fmt.Errorf("%w: metadata: %v", ErrInvalid, err)
	}
	if b, err = json.Marshal(back); err != nil {
		return "", nil, fmt.Errorf("%w: metadata: %v", ErrInvalid, err)
	}
	if len(b) > MaxMetadataBytes { // numbers can grow on the way (1e20 is written out)
		return "", nil, fmt.Errorf("%w: metadata is %d bytes as stored JSON, at most %d", ErrTooLarge, len(b), MaxMetadataBytes)
	}
	return string(b), back, nil
}

// checkMetaValue checks one value at depth d (the top object is 1).
func checkMetaValue(v any, d int) error {
	if d > MaxMetadataDepth {
		return fmt.Errorf("nested deeper than %d", MaxMetadataDepth)
	}
	switch x := v.(type) {
	case nil, bool:
	case string:
		if !utf8.ValidString(x) {
			return fmt.Errorf("a string is not UTF-8")
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%v is not a JSON number", x)
		}
	case float32:
		return checkMetaValue(float64(x), d)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, json.Number:
	case []any:
		for _, e := range x {
			if err := checkMetaValue(e, d+1); err != nil {
				return err
			}
		}
	case []string, []float64, []int, []bool:
	case map[string]any:
		for k, e := range x {
			if k == "" || len(k) > MaxMetadataKeyBytes || !utf8.ValidString(k) {
				return fmt.Errorf("key %q: want 1…%d bytes of UTF-8", k, MaxMetadataKeyBytes)
			}
			if d == 1 && strings.HasPrefix(k, "$") {
				return fmt.Errorf("key %q: a top-level key may not start with $ (the filter operators')", k)
			}
			if err := checkMetaValue(e, d+1); err != nil {
				return fmt.Errorf("%s: %v", k, err)
			}
		}
	case Metadata:
		return checkMetaValue(map[string]any(x), d)
	default:
		return fmt.Errorf("a %T is not a JSON value", v)
	}
	return nil
}

// cloneMetadata deep-copies stored metadata (maps and arrays; the
// scalars are immutable), so that a caller may change what it was given.
func cloneMetadata(md Metadata) Metadata {
	if md == nil {
		return nil
	}
	return Metadata(cloneMetaValue(map[string]any(md)).(map[string]any))
}

func cloneMetaValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneMetaValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneMetaValue(e)
		}
		return out
	}
	return v
}

// parseMetadata decodes canonical metadata JSON ("" is none).
func parseMetadata(s string) Metadata {
	if s == "" {
		return nil
	}
	var md Metadata
	if json.Unmarshal([]byte(s), &md) != nil {
		return nil // checked when written
	}
	return md
}

// Filter selects memories by their metadata, in the shape Chroma's
// "where" made familiar, written as JSON (ParseFilter):
//
//	{"team": "red"}                      team is "red" (or an array holding "red")
//	{"n": {"$gte": 3, "$lt": 10}}        3 ≤ n < 10 ($gt, $gte, $lt, $lte, $eq, $ne)
//	{"team": {"$in": ["red", "blue"]}}   $in, $nin
//	{"reviewed": {"$exists": true}}      the key is present (false: absent)
//	{"$and": [f, …]}, {"$or": [f, …]}, {"$not": f}
//
// Several keys in one object must all hold. Ranges compare numbers as
// numbers, and strings that are both RFC 3339 times or YYYY-MM-DD dates as
// times; other strings by their bytes. A comparison with a missing key or
// a value of another type does not hold ($ne and $nin then hold, as they
// would in a store without the key). A Filter is safe for concurrent use.
type Filter struct {
	src  string
	root fnode
}

// fnode is one test of a Filter.
type fnode struct {
	op   string // "$and", "$or", "$not", or a comparison on key
	key  string
	val  any   // comparison operand
	vals []any // $in, $nin
	kids []fnode
}

// ParseFilter compiles a filter written as JSON; the error names what is
// wrong. An empty object matches everything.
func ParseFilter(b []byte) (*Filter, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: filter: %v", ErrInvalid, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: filter: trailing data", ErrInvalid)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: filter: want a JSON object, got %s", ErrInvalid, jsonKind(v))
	}
	root, err := parseFilterObject(obj, 1)
	if err != nil {
		return nil, fmt.Errorf("%w: filter: %v", ErrInvalid, err)
	}
	return &Filter{src: string(b), root: root}, nil
}

// String returns the filter's JSON as given.
func (f *Filter) String() string { return f.src }

// maxFilterDepth bounds the nesting of $and, $or and $not.
const maxFilterDepth = 16

func parseFilterObject(obj map[string]any, depth int) (fnode, error) {
	if depth > maxFilterDepth {
		return fnode{}, fmt.Errorf("nested deeper than %d", maxFilterDepth)
	}
	var all []fnode
	for _, k := range sortedKeys(obj) {
		v := obj[k]
		switch k {
		case "$and", "$or":
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				return fnode{}, fmt.Errorf("%s: want a non-empty array of filters", k)
			}
			n := fnode{op: k}
			for i, e := range list {
				o, ok := e.(map[string]any)
				if !ok {
					return fnode{}, fmt.Errorf("%s[%d]: want an object, got %s", k, i, jsonKind(e))
				}
				kid, err := parseFilterObject(o, depth+1)
				if err != nil {
					return fnode{}, fmt.Errorf("%s[%d]: %v", k, i, err)
				}
				n.kids = append(n.kids, kid)
			}
			all = append(all, n)
		case "$not":
			o, ok := v.(map[string]any)
			if !ok {
				return fnode{}, fmt.Errorf("$not: want an object, got %s", jsonKind(v))
			}
			kid, err := parseFilterObject(o, depth+1)
			if err != nil {
				return fnode{}, fmt.Errorf("$not: %v", err)
			}
			all = append(all, fnode{op: "$not", kids: []fnode{kid}})
		default:
			if strings.HasPrefix(k, "$") {
				return fnode{}, fmt.Errorf("unknown operator %q (keys starting with $ are operators: $and, $or, $not)", k)
			}
			ops, ok := v.(map[string]any)
			if !ok {
				if !isScalar(v) {
					return fnode{}, fmt.Errorf("%s: want a string, number, boolean or null, or an object of operators, got %s", k, jsonKind(v))
				}
				all = append(all, fnode{op: "$eq", key: k, val: v})
				continue
			}
			if len(ops) == 0 {
				return fnode{}, fmt.Errorf("%s: an empty object of operators", k)
			}
			for _, op := range sortedKeys(ops) {
				n, err := parseComparison(k, op, ops[op])
				if err != nil {
					return fnode{}, fmt.Errorf("%s: %v", k, err)
				}
				all = append(all, n)
			}
		}
	}
	if len(all) == 1 {
		return all[0], nil
	}
	return fnode{op: "$and", kids: all}, nil
}

func parseComparison(key, op string, v any) (fnode, error) {
	n := fnode{op: op, key: key}
	switch op {
	case "$eq", "$ne":
		if !isScalar(v) {
			return n, fmt.Errorf("%s: want a string, number, boolean or null, got %s", op, jsonKind(v))
		}
		n.val = v
	case "$gt", "$gte", "$lt", "$lte":
		switch v.(type) {
		case float64, string:
		default:
			return n, fmt.Errorf("%s: want a number, a time or a string, got %s", op, jsonKind(v))
		}
		n.val = v
	case "$in", "$nin":
		list, ok := v.([]any)
		if !ok {
			return n, fmt.Errorf("%s: want an array, got %s", op, jsonKind(v))
		}
		for i, e := range list {
			if !isScalar(e) {
				return n, fmt.Errorf("%s[%d]: want a string, number, boolean or null, got %s", op, i, jsonKind(e))
			}
		}
		n.vals = list
	case "$exists":
		b, ok := v.(bool)
		if !ok {
			return n, fmt.Errorf("$exists: want true or false, got %s", jsonKind(v))
		}
		n.val = b
	default:
		return n, fmt.Errorf("unknown operator %q (want $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin or $exists)", op)
	}
	return n, nil
}

// Match reports whether metadata md passes the filter (a nil filter
// passes everything).
func (f *Filter) Match(md Metadata) bool {
	if f == nil {
		return true
	}
	return f.root.match(md)
}

func (n *fnode) match(md Metadata) bool {
	switch n.op {
	case "":
		return true // the empty filter
	case "$and":
		for i := range n.kids {
			if !n.kids[i].match(md) {
				return false
			}
		}
		return true
	case "$or":
		for i := range n.kids {
			if n.kids[i].match(md) {
				return true
			}
		}
		return false
	case "$not":
		return !n.kids[0].match(md)
	}
	v, ok := md[n.key]
	switch n.op {
	case "$exists":
		return ok == n.val.(bool)
	case "$eq":
		return ok && holds(v, n.val)
	case "$ne":
		return !ok || !holds(v, n.val)
	case "$in", "$nin":
		in := ok && slices.ContainsFunc(n.vals, func(w any) bool { return holds(v, w) })
		return in == (n.op == "$in")
	}
	if !ok {
		return false
	}
	c, comparable := compareMeta(v, n.val)
	return comparable && rangeHolds(n.op, c)
}

// holds reports whether stored value v equals w, or is an array holding
// it.
func holds(v, w any) bool {
	if list, ok := v.([]any); ok {
		return slices.ContainsFunc(list, func(e any) bool { return e == w })
	}
	return v == w
}

// compareMeta orders stored value v against operand w: numbers as
// numbers, two times (RFC 3339 or YYYY-MM-DD) as times, other strings by
// their bytes.
func compareMeta(v, w any) (int, bool) {
	switch x := v.(type) {
	case float64:
		y, ok := w.(float64)
		if !ok {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case string:
		y, ok := w.(string)
		if !ok {
			return 0, false
		}
		if tx, okx := metaTime(x); okx {
			if ty, oky := metaTime(y); oky {
				return tx.Compare(ty), true
			}
		}
		return strings.Compare(x, y), true
	}
	return 0, false
}

// metaTime reads a string as an RFC 3339 time or a YYYY-MM-DD date.
func metaTime(s string) (time.Time, bool) {
	if len(s) < 10 || s[4] != '-' {
		return time.Time{}, false
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

func isScalar(v any) bool {
	switch v.(type) {
	case nil, bool, float64, string:
		return true
	}
	return false
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
