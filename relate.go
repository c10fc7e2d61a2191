package tidemark

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/tidemark/tidemark/extract"
	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/internal/links"
	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/temporal"
)

// relationships plans the relationship edits of a consolidation run for
// the new memories it promotes (unconsolidated and current, at most
// MaxNew, in write order): their nearest current memories come from
// batched passes of the fused stage over the column store
// (kernels.Backend.ScoreMany, plain cosine, on the DB's background
// backend, which uses half the cores), not one query at a time. It takes
// the collection's read lock per batch of relBatch memories, so a write
// waiting for the lock — and the searches queued behind it — wait for one
// batch, never for the whole run. more reports memories left for the
// next run.
func (c *Collection) relationships(ctx context.Context, o *ConsolidateOptions) (fresh []int, edits []edit, more bool, err error) {
	c.mu.RLock()
	for j := range c.rows.len() {
		if r := c.rows.at(j); r.visible && r.status == temporal.Unconsolidated {
			if len(fresh) == o.MaxNew {
				more = true
				break
			}
			fresh = append(fresh, j)
		}
	}
	// Lineage: a chunk depends on its document's first chunk.
	for _, j := range fresh {
		r := c.rows.at(j)
		if r.mem.DocID == "" || r.mem.Chunk == 0 {
			continue
		}
		chain := c.byDoc[docChunk{r.mem.DocID, 0}]
		if len(chain) == 0 {
			continue
		}
		if head := chain[len(chain)-1]; head != j && !c.deps[[2]int{j, head}] {
			edits = append(edits, edit{rule: RuleLineage, row: j, other: head})
		}
	}
	c.mu.RUnlock()
	merged := map[int]bool{}
	p := temporal.Preset(temporal.MethodPlain)
	// A scan costs the whole column store per batch: fine at thousands of
	// memories, hours at a million. Past the search's exact threshold the
	// surface index finds the neighbours (only current memories relate).
	c.mu.RLock()
	exact := o.Exact || c.visible <= c.opts.ExactThreshold
	c.mu.RUnlock()
	deadline := time.Now().Add(o.Budget)
	for start := 0; start < len(fresh); start += relBatch {
		if err := ctx.Err(); err != nil {
			return nil, nil, false, err
		}
		if start > 0 && time.Now().After(deadline) {
			// Out of time: promote what was related; the rest next run.
			// (Lineage edits of the rest are dropped with them.)
			done := make(map[int]bool, start)
			for _, j := range fresh[:start] {
				done[j] = true
			}
			kept := edits[:0]
			for _, e := range edits {
				if done[e.row] {
					kept = append(kept, e)
				}
			}
			return fresh[:start], kept, true, nil
		}
		part := fresh[start:min(start+relBatch, len(fresh))]
		c.mu.RLock()
		if c.dropped {
			c.mu.RUnlock()
			return nil, nil, false, fmt.Errorf("%w: collection %q", ErrNotFound, c.name)
		}
		var hits [][]kernels.Hit
		var err error
		if exact {
			qs := make([]kernels.Query, len(part))
			for i, j := range part {
				qs[i] = kernels.Query{Vector: c.unitVector(j), Time: temporal.Query{At: 0, TxAt: 1e9}}
			}
			// Beliefs of one memory appear once per belief: ask for extra.
			hits, err = c.db.bgBackend.ScoreMany(ctx, c.batch, qs, &p, o.Neighbors+8, nil)
		} else {
			hits, err = c.surfaceNeighbours(ctx, part, o.Neighbors+8)
		}
		if err != nil {
			c.mu.RUnlock()
			return nil, nil, false, err
		}
		for i, j := range part {
			edits = c.relate(j, hits[i], o, merged, edits)
		}
		c.mu.RUnlock()
	}
	return fresh, edits, more, nil
}

// relBatch is how many new memories one read-locked pass takes.
const relBatch = 256

// surfaceNeighbours finds the k nearest current memories of each row of
// part through the surface index, on half the cores (like the background
// backend), with a beam of at least 4k: the same hits, by cosine, that
// the exact scan gives for the memories the index finds (c.mu held
// shared; the index is safe alongside).
func (c *Collection) surfaceNeighbours(ctx context.Context, part []int, k int) ([][]kernels.Hit, error) {
	out := make([][]kernels.Hit, len(part))
	ef := max(c.opts.Ef, 4*k)
	workers := max(1, min(runtime.GOMAXPROCS(0)/2, len(part)))
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	next := make(chan int, len(part))
	for i := range part {
		next <- i
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				found, err := c.surface.Search(ctx, c.unitVector(part[i]), k, &index.SearchOptions{Ef: ef})
				if err != nil {
					once.Do(func() { first = err })
					return
				}
				hs := make([]kernels.Hit, len(found))
				for n, f := range found {
					hs[n] = kernels.Hit{ID: f.Key, Score: float64(f.Score), Sim: float64(f.Score)}
				}
				out[i] = hs
			}
		}()
	}
	wg.Wait()
	return out, first
}

// relate plans the edits between new row j and its nearest memories
// (c.mu held shared).
func (c *Collection) relate(j int, hits []kernels.Hit, o *ConsolidateOptions, merged map[int]bool, edits []edit) []edit {
	r := c.rows.at(j)
	seen := map[int]bool{j: true}
	n := 0
	for _, h := range hits {
		k := int(h.ID)
		if seen[k] || n >= o.Neighbors {
			continue
		}
		seen[k] = true
		ok := c.rows.at(k)
		if !ok.visible || merged[k] {
			continue
		}
		n++
		sim := h.Score
		// Older and newer by creation, then by write order.
		older := ok.created < r.created || (ok.created == r.created && k < j)
		switch {
		case sim >= o.MergeSim && older && c.nearDuplicate(j, k, o.MergeWords):
			edits = append(edits, edit{rule: RuleMerge, row: j, other: k})
			merged[j] = true
		case sim >= o.DependSim && older && !c.deps[[2]int{j, k}] && !c.deps[[2]int{k, j}]:
			edits = append(edits, edit{rule: RuleSimilar, row: j, other: k})
		}
		if merged[j] {
			break
		}
		if sim >= o.ConflictSim && (k > j || ok.status != temporal.Unconsolidated) && !slices.Contains(r.contradicts, k) &&
			(r.key.IsZero() || r.key != ok.key) {
			first, second := r, ok
			if older {
				first, second = ok, r
			}
			if extract.Compare(first.mem.Text, second.mem.Text).Verdict == extract.Unrelated {
				continue
			}
			v, pen := 0.0, -o.ConflictPenalty // j loses
			if c.prefer(j, k) {
				v, pen = 1, o.ConflictPenalty // k loses
			}
			edits = append(edits, edit{rule: RuleTopicConflict, row: j, other: k, value: v})
			if pen != 0 {
				edits = append(edits, edit{rule: RuleContradicted, row: j, other: k, value: pen})
			}
		}
	}
	return edits
}

// nearDuplicate: the same kind, fact key, document chunk and windows, and
// at least minWords of their words shared (Jaccard).
func (c *Collection) nearDuplicate(a, b int, minWords float64) bool {
	ra, rb := c.rows.at(a), c.rows.at(b)
	if ra.mem.Kind != rb.mem.Kind || ra.key != rb.key || ra.doc != rb.doc || ra.mem.DocID != "" ||
		ra.givenFrom != rb.givenFrom || ra.givenTo != rb.givenTo || !ra.key.IsZero() {
		return false
	}
	return jaccard(words(ra.normText), words(rb.normText)) >= minWords
}

// prefer is SmartVector §6.1's majority vote between rows a and b over
// recency, source authority and feedback ratio: true when a wins. A tie
// on a criterion abstains (SmartVector's sketch gives ties to its second
// argument, which would make the outcome depend on the order it is asked
// in); a split vote goes to the higher authority, then the more recent,
// then the earlier written.
func (c *Collection) prefer(a, b int) bool {
	ra, rb := c.rows.at(a), c.rows.at(b)
	ratio := func(r *row) float64 {
		if r.positive+r.negative == 0 {
			return 0.5
		}
		return r.positive / (r.positive + r.negative)
	}
	va, vb := 0, 0
	for _, d := range []float64{ra.created - rb.created, ra.c0 - rb.c0, ratio(ra) - ratio(rb)} {
		switch {
		case d > 0:
			va++
		case d < 0:
			vb++
		}
	}
	switch {
	case va != vb:
		return va > vb
	case ra.c0 != rb.c0:
		return ra.c0 > rb.c0
	case ra.created != rb.created:
		return ra.created > rb.created
	}
	return a < b
}

func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out[strings.ToLower(w)] = true
	}
	return out
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// merge folds row m into row into: m's belief is retired at tx, it leaves
// the surface, a version link into → m keeps it reachable, and its
// counters go to into.
func (l *ledger) merge(m, into int, tx float64) {
	r, s := l.rows.at(m), l.rows.at(into)
	// Retired from the run's transaction time on (an empty window when it
	// was written at that very time: it was never believed on its own).
	cur := &r.stateList()[len(r.stateList())-1]
	cur.recorded.To = max(tx, cur.recorded.From)
	l.batch.RetiredAt[r.beliefList()[len(r.beliefList())-1]] = l.day32(cur.recorded.To)
	l.batch.Changed(r.beliefList()[len(r.beliefList())-1])
	r.visible, r.superseded, r.supersededBy, r.status = false, true, into, temporal.Archived
	l.visible--
	s.lists().supersedes = append(s.lists().supersedes, m)
	s.access += 1 + r.access
	s.positive += r.positive
	s.negative += r.negative
	l.syncCounters(into)
	l.syncCounters(m)
	l.offSurface(m)
	l.hide(m)
	l.addEdge(links.Version, into, m)
}
