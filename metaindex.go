package tidemark

import (
	"math/bits"
	"strings"
	"time"
)

// metaIndex holds the collection's metadata by key, one column per key
// with a value per row, so that a Filter is evaluated over every row as a
// few tight loops into a bitmap (eval) rather than a map lookup per row:
// at 100,000 memories that is well under a millisecond instead of about
// ten. It is derived from the rows (putOne, load; a purge builds it
// again without the purged rows, rebuildMeta) and never persisted. Values that are
// arrays or objects are marked complex and tested through the row's own
// metadata.
type metaIndex struct {
	cols map[string]*metaCol
	// Interned strings, and each one read as a time when it is one
	// (RFC 3339 or YYYY-MM-DD: ranges compare those as times).
	ids    map[string]uint32
	strs   []string
	times  []time.Time
	isTime []bool
	rows   int
}

// Value kinds in a column.
const (
	mvAbsent uint8 = iota
	mvNumber
	mvString
	mvTrue
	mvFalse
	mvNull
	mvComplex // an array or an object: tested through the row's map
)

type metaCol struct {
	kind []uint8
	num  []float64 // mvNumber
	str  []uint32  // mvString: interned
}

// set records row j's metadata (rows are added in order; a row's
// metadata is set once, and cleared by a purge).
func (x *metaIndex) set(j int, md Metadata) {
	if x.cols == nil {
		x.cols, x.ids = map[string]*metaCol{}, map[string]uint32{}
	}
	x.rows = max(x.rows, j+1)
	for k, v := range md {
		c := x.cols[k]
		if c == nil {
			c = &metaCol{}
			x.cols[k] = c
		}
		c.grow(x.rows)
		switch v := v.(type) {
		case float64:
			c.kind[j], c.num[j] = mvNumber, v
		case string:
			c.kind[j], c.str[j] = mvString, x.intern(v)
		case bool:
			c.kind[j] = boolKind(v)
		case nil:
			c.kind[j] = mvNull
		default:
			c.kind[j] = mvComplex
		}
	}
}

func (c *metaCol) grow(n int) {
	for len(c.kind) < n {
		c.kind = append(c.kind, mvAbsent)
		c.num = append(c.num, 0)
		c.str = append(c.str, 0)
	}
}

func (x *metaIndex) intern(s string) uint32 {
	if id, ok := x.ids[s]; ok {
		return id
	}
	id := uint32(len(x.strs))
	x.ids[s] = id
	x.strs = append(x.strs, s)
	t, ok := metaTime(s)
	x.times, x.isTime = append(x.times, t), append(x.isTime, ok)
	return id
}

// bitmap is a set of rows.
type bitmap []uint64

func newBitmap(n int) bitmap    { return make(bitmap, (n+63)/64) }
func (b bitmap) has(j int) bool { return b[j/64]&(1<<(j%64)) != 0 }
func (b bitmap) add(j int)      { b[j/64] |= 1 << (j % 64) }
func (b bitmap) and(o bitmap) {
	for i := range b {
		b[i] &= o[i]
	}
}
func (b bitmap) or(o bitmap) {
	for i := range b {
		b[i] |= o[i]
	}
}
func (b bitmap) not(n int) {
	for i := range b {
		b[i] = ^b[i]
	}
	if r := n % 64; r != 0 && len(b) > 0 {
		b[len(b)-1] &= 1<<r - 1
	}
}

func (b bitmap) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// each calls f for every row in b, in order, until f returns false.
func (b bitmap) each(f func(j int) bool) {
	for i, w := range b {
		for w != 0 {
			j := i*64 + bits.TrailingZeros64(w)
			if !f(j) {
				return
			}
			w &= w - 1
		}
	}
}

// eval returns the rows 0 … n−1 whose metadata f matches, exactly as
// f.Match would say of each (TestMetaIndexAgreesWithMatch); meta(j) is
// row j's metadata, read only for complex values.
func (x *metaIndex) eval(f *Filter, n int, meta func(j int) Metadata) bitmap {
	return x.evalNode(&f.root, n, meta)
}

func (x *metaIndex) evalNode(nd *fnode, n int, meta func(int) Metadata) bitmap {
	switch nd.op {
	case "$and", "":
		out := newBitmap(n)
		out.not(n) // every row
		for i := range nd.kids {
			out.and(x.evalNode(&nd.kids[i], n, meta))
		}
		return out
	case "$or":
		out := newBitmap(n)
		for i := range nd.kids {
			out.or(x.evalNode(&nd.kids[i], n, meta))
		}
		return out
	case "$not":
		out := x.evalNode(&nd.kids[0], n, meta)
		out.not(n)
		return out
	}
	out := newBitmap(n)
	c := x.cols[nd.key]
	rows := 0
	if c != nil {
		rows = min(n, len(c.kind))
	}
	// A row whose value is an array or an object is tested the slow way.
	slow := func(j int) bool { return nd.match(meta(j)) }
	switch nd.op {
	case "$exists":
		want := nd.val.(bool)
		for j := range n {
			if (j < rows && c.kind[j] != mvAbsent) == want {
				out.add(j)
			}
		}
		return out
	case "$eq", "$in", "$ne", "$nin":
		vals := nd.vals
		if nd.op == "$eq" || nd.op == "$ne" {
			vals = []any{nd.val}
		}
		for j := range rows {
			if c.kind[j] == mvComplex {
				if slow(j) != (nd.op == "$ne" || nd.op == "$nin") {
					out.add(j)
				}
				continue
			}
			for _, v := range vals {
				if x.equal(c, j, v) {
					out.add(j)
					break
				}
			}
		}
		if nd.op == "$ne" || nd.op == "$nin" {
			out.not(n) // absent rows hold; complex rows were set inverted
		}
		return out
	}
	// Ranges.
	for j := range rows {
		var ok bool
		switch c.kind[j] {
		case mvNumber:
			if w, isNum := nd.val.(float64); isNum {
				ok = rangeHolds(nd.op, cmpFloat(c.num[j], w))
			}
		case mvString:
			if w, isStr := nd.val.(string); isStr {
				id := c.str[j]
				if wt, wIsTime := metaTime(w); wIsTime && x.isTime[id] {
					ok = rangeHolds(nd.op, x.times[id].Compare(wt))
				} else {
					ok = rangeHolds(nd.op, strings.Compare(x.strs[id], w))
				}
			}
		case mvComplex:
			ok = slow(j)
		}
		if ok {
			out.add(j)
		}
	}
	return out
}

// equal reports whether row j's scalar in c equals v.
func (x *metaIndex) equal(c *metaCol, j int, v any) bool {
	switch v := v.(type) {
	case float64:
		return c.kind[j] == mvNumber && c.num[j] == v
	case string:
		id, ok := x.ids[v]
		return ok && c.kind[j] == mvString && c.str[j] == id
	case bool:
		return c.kind[j] == boolKind(v)
	case nil:
		return c.kind[j] == mvNull
	}
	return false
}

func boolKind(v bool) uint8 {
	if v {
		return mvTrue
	}
	return mvFalse
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func rangeHolds(op string, c int) bool {
	switch op {
	case "$gt":
		return c > 0
	case "$gte":
		return c >= 0
	case "$lt":
		return c < 0
	}
	return c <= 0 // $lte
}
