package tidemark

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Feedback records a judgement of a memory from an anonymous source; see
// FeedbackFrom.
func (c *Collection) Feedback(ctx context.Context, id string, positive bool) error {
	return c.FeedbackFrom(ctx, id, positive, "")
}

// FeedbackFrom records a positive or negative judgement of a memory by
// source (a user, an agent; "" is anonymous): the ConfidenceEngine's
// counters (SmartVector §5), reconsolidation. It is logged like a Put.
// Each source counts at most CollectionOptions.FeedbackPerDay judgements
// of one memory per 24 hours of transaction time and FeedbackPerSource in
// all, so that repeating feedback cannot inflate a memory without bound
// (SmartVector §11.2); past the limits the judgement is not counted and
// the error wraps ErrRateLimited.
func (c *Collection) FeedbackFrom(ctx context.Context, id string, positive bool, source string) error {
	if source != "" {
		if err := validID(source, "feedback source"); err != nil {
			return err
		}
	}
	if err := c.db.catchUp(ctx); err != nil {
		return err
	}
	c.mu.RLock()
	_, ok := c.rowOf(id)
	dropped := c.dropped
	c.mu.RUnlock()
	if !ok || dropped {
		if err := c.db.usable(); err != nil {
			return err
		}
		return fmt.Errorf("%w: memory %q in collection %q", ErrNotFound, id, c.name)
	}
	rec := &record{typ: recFeedback, coll: c.name, inc: c.incarnation, id: id, source: source}
	if positive {
		rec.positive = 1
	} else {
		rec.negative = 1
	}
	_, err := c.db.commit(ctx, rec)
	return err
}

// fbState is one source's feedback on one memory.
type fbState struct {
	total int     // counted in all
	since float64 // start of the current 24-hour window, days
	inDay int     // counted in it
}

func (c *Collection) applyFeedback(id, source string, pos, neg int64, tx float64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped {
		return fmt.Errorf("%w: collection %q", ErrNotFound, c.name)
	}
	return c.judge(c.name, id, source, pos, neg, tx)
}

// judge is the ledger's apply of a logged feedback record: source's
// judgements of memory id, within the per-source limits (coll names the
// collection in errors).
func (l *ledger) judge(coll, id, source string, pos, neg int64, tx float64) error {
	j, ok := l.rowOf(id)
	if !ok {
		return fmt.Errorf("%w: memory %q in collection %q", ErrNotFound, id, coll)
	}
	k := fbKey{j, source}
	st := l.feedback[k]
	if tx >= st.since+1 {
		st.since, st.inDay = tx, 0
	}
	n := int(pos + neg)
	if st.total+n > l.opts.FeedbackPerSource || st.inDay+n > l.opts.FeedbackPerDay {
		return fmt.Errorf("%w: source %q has given memory %q %d judgements in all and %d today (limits %d and %d)",
			ErrRateLimited, source, id, st.total, st.inDay, l.opts.FeedbackPerSource, l.opts.FeedbackPerDay)
	}
	st.total += n
	st.inDay += n
	l.feedback[k] = st
	l.rows.at(j).positive += float64(pos)
	l.rows.at(j).negative += float64(neg)
	l.syncCounters(j)
	return nil
}

type fbKey struct {
	row    int
	source string
}

// sortedFeedback returns the limiter state in a fixed order (snapshots).
func (l *ledger) sortedFeedback() []fbKey {
	return slices.SortedFunc(maps.Keys(l.feedback), func(a, b fbKey) int {
		return cmp.Or(cmp.Compare(a.row, b.row), cmp.Compare(a.source, b.source))
	})
}

// Access counting: every retrieval with SearchRequest.CountAccess is a
// reconsolidation event (SmartVector §3.3, stage 3). The counts gather in
// memory and are logged as one record by the next Consolidate (or
// FlushAccess), so searches never wait for an fsync; a crash loses the
// counts not yet flushed, never an acknowledged write.

type accessCount struct{ row, n int }

type accessCounter struct {
	mu     sync.Mutex
	counts map[int]int
}

func (a *accessCounter) add(rows []int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.counts == nil {
		a.counts = map[int]int{}
	}
	for _, r := range rows {
		a.counts[r]++
	}
}

func (a *accessCounter) take() []accessCount {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]accessCount, 0, len(a.counts))
	for r, n := range a.counts {
		out = append(out, accessCount{r, n})
	}
	a.counts = nil
	slices.SortFunc(out, func(x, y accessCount) int { return cmp.Compare(x.row, y.row) })
	return out
}

// FlushAccess logs the access counts gathered since the last flush.
func (c *Collection) FlushAccess(ctx context.Context) error {
	counts := c.accesses.take()
	if len(counts) == 0 {
		return nil
	}
	_, err := c.db.commit(ctx, &record{typ: recAccess, coll: c.name, inc: c.incarnation, access: counts})
	if err != nil {
		c.accesses.mu.Lock()
		for _, a := range counts { // try again next time
			if c.accesses.counts == nil {
				c.accesses.counts = map[int]int{}
			}
			c.accesses.counts[a.row] += a.n
		}
		c.accesses.mu.Unlock()
	}
	return err
}

func (c *Collection) applyAccess(counts []accessCount) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped {
		return fmt.Errorf("%w: collection %q", ErrNotFound, c.name)
	}
	c.access(counts)
	return nil
}

// access is the ledger's apply of a logged access record: retrievals
// counted per row.
func (l *ledger) access(counts []accessCount) {
	for _, a := range counts {
		if a.row < l.rows.len() {
			l.rows.at(a.row).access += float64(a.n)
			l.syncCounters(a.row)
		}
	}
}
