package api

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// MemoryList is the answer of GET /v1/collections/{c}/memories: one page
// of the memories the query parameters select (limit, cursor, as_of,
// as_of_tx, now, kinds, statuses, sources, filter, all), without vectors, in the
// order they were written.
type MemoryList struct {
	// Memories is the page (never null).
	Memories []Memory `json:"memories"`
	// NextCursor continues the listing (the cursor parameter); absent on
	// the last page. A cursor stays valid while others write: no memory
	// is skipped or listed twice.
	NextCursor string `json:"next_cursor,omitempty"`
}

// Count is the answer of GET /v1/collections/{c}/count: how many memories
// the same query parameters as a listing select (limit aside).
type Count struct {
	Count int `json:"count"`
}

// ListQuery is a listing's query parameters, as a client sends them to GET
// /v1/collections/{c}/memories (and, without Limit and Cursor, to GET
// /v1/collections/{c}/count). Zero fields are left out.
type ListQuery struct {
	// Limit is the page size (default 100, at most 1000); Cursor a
	// page's NextCursor.
	Limit  int
	Cursor string
	// Now, AsOf and AsOfTx are the reference, valid and transaction times
	// (default: now, current memories).
	Now, AsOf, AsOfTx time.Time
	// Kinds, Statuses and Sources keep the memories of those kinds,
	// statuses and sources.
	Kinds    []temporal.Kind
	Statuses []temporal.Status
	Sources  []temporal.Source
	// Filter keeps the memories whose metadata it matches (the JSON of a
	// search's filter).
	Filter string
	// All lists every stored version (superseded, expired, retracted).
	All bool
}

// Encode returns the query string (without "?").
func (q ListQuery) Encode() string {
	v := url.Values{}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	for name, t := range map[string]time.Time{"now": q.Now, "as_of": q.AsOf, "as_of_tx": q.AsOfTx} {
		if !t.IsZero() {
			v.Set(name, t.Format(time.RFC3339Nano))
		}
	}
	join := func(name string, n int, at func(int) string) {
		if n > 0 {
			parts := make([]string, n)
			for i := range parts {
				parts[i] = at(i)
			}
			v.Set(name, strings.Join(parts, ","))
		}
	}
	join("kinds", len(q.Kinds), func(i int) string { return q.Kinds[i].String() })
	join("statuses", len(q.Statuses), func(i int) string { return q.Statuses[i].String() })
	join("sources", len(q.Sources), func(i int) string { return q.Sources[i].String() })
	if q.Filter != "" {
		v.Set("filter", q.Filter)
	}
	if q.All {
		v.Set("all", "true")
	}
	return v.Encode()
}
