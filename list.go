package tidemark

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// Listing and counting: the memories of a collection that hold at a time,
// page by page, as a vector store lists its points.

// ListRequest selects the memories List and Count return: by default the
// current ones (believed now and valid now), in the order they were
// written.
type ListRequest struct {
	// Cursor continues a listing where the page that returned it ended
	// (ListResult.Next); empty starts at the beginning.
	Cursor string
	// Limit is the most memories a page holds (default DefaultListLimit,
	// at most MaxListLimit). Count ignores it.
	Limit int
	// Now is the reference time (default the DB's clock). AsOf lists what
	// was true at a past valid time, AsOfTx what tidemark believed at a
	// past transaction time; each defaults to Now (SearchRequest's times).
	Now, AsOf, AsOfTx time.Time
	// Kinds and Statuses keep the memories of those kinds and lifecycle
	// statuses (the zero sets keep all); Sources, when not empty, the
	// memories from those sources.
	Kinds    temporal.KindSet
	Statuses temporal.StatusSet
	Sources  []temporal.Source
	// Filter, when set, keeps the memories whose metadata it matches.
	Filter *Filter
	// All lists every stored version instead: superseded, expired and
	// retracted memories too (purged ones never), still filtered by kind,
	// status and source.
	All bool
}

// ListResult is one page of a listing.
type ListResult struct {
	// Memories are the page's memories, without vectors, in the order they
	// were written.
	Memories []Memory
	// Next continues the listing; empty on the last page.
	Next string
}

// Page sizes of List.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// List returns a page of the memories req selects. Pages follow the order
// memories were written, and a cursor stays valid while others write: a
// memory written after the listing began comes on a later page (or
// none, if the listing had ended), and no memory is skipped or listed
// twice. (A new version of an id is a memory of its own: a listing may
// hold an id's old version from an early page and its new one from a
// later page, when the new one was written meanwhile.)
func (c *Collection) List(ctx context.Context, req *ListRequest) (*ListResult, error) {
	if req == nil {
		req = &ListRequest{}
	}
	limit := req.Limit
	switch {
	case limit == 0:
		limit = DefaultListLimit
	case limit < 0 || limit > MaxListLimit:
		return nil, fmt.Errorf("%w: limit %d, want 1…%d", ErrInvalid, limit, MaxListLimit)
	}
	res := &ListResult{}
	err := c.scan(ctx, req, func(j int) bool {
		if len(res.Memories) == limit {
			res.Next = c.cursor(j)
			return false
		}
		res.Memories = append(res.Memories, c.memory(j))
		return true
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Count returns how many memories req selects (all pages of List from
// req.Cursor on).
func (c *Collection) Count(ctx context.Context, req *ListRequest) (int, error) {
	if req == nil {
		req = &ListRequest{}
	}
	n := 0
	err := c.scan(ctx, req, func(int) bool { n++; return true })
	return n, err
}

// scan calls f for each row req selects, from its cursor on, in row order,
// until f returns false; it holds the read lock, checking ctx every few
// thousand rows.
func (c *Collection) scan(ctx context.Context, req *ListRequest, f func(j int) bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.db.readable(); err != nil {
		return err
	}
	_, at, tx, err := queryTimes(req.Now, req.AsOf, req.AsOfTx, c.db.opts.Clock)
	if err != nil {
		return err
	}
	start, err := c.fromCursor(req.Cursor)
	if err != nil {
		return err
	}
	q := temporal.Query{At: c.dayQ(at, 0), TxAt: c.dayQ(tx, 0), Kinds: req.Kinds, Statuses: req.Statuses}
	p := temporal.Params{MaskExpired: !req.All, MaskRetired: !req.All}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.dropped {
		return fmt.Errorf("%w: collection %q", ErrNotFound, c.name)
	}
	var pass bitmap
	if req.Filter != nil {
		pass = c.filtered(req.Filter)
	}
	for j := start; j < c.rows.len(); j++ {
		if j%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if pass != nil && pass[j/64] == 0 {
			j |= 63 // none of this word's 64 rows passes
			continue
		}
		if pass != nil && !pass.has(j) {
			continue
		}
		r := c.rows.at(j)
		if r.purged || len(req.Sources) > 0 && !slices.Contains(req.Sources, r.mem.Source) {
			continue
		}
		if !req.All && c.withdrawn(j, q.TxAt) {
			continue
		}
		cand := c.batch.Candidate(c.beliefAt(j, q.TxAt), 0, 0)
		if temporal.Mask(q, &p, &cand) != temporal.ReasonNone {
			continue
		}
		if !f(j) {
			return nil
		}
	}
	return nil
}

// A cursor is the row a listing goes on from, with the collection's
// incarnation (a cursor of a dropped collection is refused by one created
// under its name), base64url-encoded: opaque to callers.
const cursorPrefix = "c1."

func (c *Collection) cursor(j int) string {
	return cursorPrefix + base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d:%d", c.incarnation, j))
}

// fromCursor is the row cursor s goes on from (0 for the empty cursor).
func (c *Collection) fromCursor(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	bad := fmt.Errorf("%w: cursor %q is not one this collection gave", ErrInvalid, s)
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, cursorPrefix))
	if err != nil || !strings.HasPrefix(s, cursorPrefix) {
		return 0, bad
	}
	inc, row, ok := strings.Cut(string(b), ":")
	if !ok || inc != strconv.FormatUint(c.incarnation, 10) {
		return 0, bad
	}
	j, err := strconv.Atoi(row)
	if err != nil || j < 0 {
		return 0, bad
	}
	return j, nil
}
