package eval

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Searcher is what an evaluation runs: a memory that ingests a corpus once
// and then answers queries. [Memory] is the in-memory reference; the engine
// implements the same interface.
type Searcher interface {
	// Ingest writes the corpus in order: file order is transaction time
	// for lines without recorded_at.
	Ingest(ctx context.Context, corpus []CorpusLine) error
	// Search answers one query with at most q.TopK() ids, best first.
	Search(ctx context.Context, q QueryLine) (Ranking, error)
}

// Ranking is a [Searcher]'s answer to one query.
type Ranking struct {
	// IDs are corpus ids, best first, each at most once.
	IDs []string
	// Confidence is the searcher's confidence in IDs[0], in [0, 1]
	// (ignored when IDs is empty).
	Confidence float64
}

// Run evaluates s on a corpus and its queries: it checks them ([Check]),
// ingests the corpus, runs the queries one at a time in order, timing each
// Search call, and summarises the answers ([NewReport]) under the name
// method; an answer's top-1 kind (by_kind) is its corpus line's. Results
// beyond a query's k are ignored; an answer that names an id outside the
// corpus, names one twice, or gives a confidence outside [0, 1] is an
// error wrapping [ErrBadResult] or [ErrUnknownID]. Run checks ctx between
// queries.
func Run(ctx context.Context, s Searcher, corpus []CorpusLine, queries []QueryLine, method string) (Report, error) {
	if err := Check(corpus, queries); err != nil {
		return Report{}, err
	}
	ids := make(map[string]bool, len(corpus))
	kinds := make(map[string]string, len(corpus))
	for i := range corpus {
		ids[corpus[i].ID] = true
		kinds[corpus[i].ID] = corpus[i].Kind.String()
	}
	if err := s.Ingest(ctx, corpus); err != nil {
		return Report{}, fmt.Errorf("eval: ingest: %w", err)
	}
	outcomes := make([]Outcome, len(queries))
	for i := range queries {
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
		q := &queries[i]
		start := time.Now()
		r, err := s.Search(ctx, *q)
		elapsed := time.Since(start)
		if err != nil {
			return Report{}, fmt.Errorf("eval: query %q: %w", q.ID, err)
		}
		if err := checkRanking(r, ids); err != nil {
			return Report{}, fmt.Errorf("query %q: %w", q.ID, err)
		}
		outcomes[i] = Outcome{ID: q.ID, Type: q.Type, K: q.TopK(), Gold: q.Gold, Stale: q.Stale,
			Ranked: r.IDs, Confidence: r.Confidence, Latency: elapsed}
		if len(r.IDs) > 0 {
			outcomes[i].Kind = kinds[r.IDs[0]]
		}
	}
	return NewReport(method, outcomes), nil
}

func checkRanking(r Ranking, ids map[string]bool) error {
	seen := make(map[string]bool, len(r.IDs))
	for _, id := range r.IDs {
		if !ids[id] {
			return fmt.Errorf("%w: the searcher returned %q, which is not a corpus id", ErrUnknownID, id)
		}
		if seen[id] {
			return fmt.Errorf("%w: the searcher returned %q twice", ErrBadResult, id)
		}
		seen[id] = true
	}
	if len(r.IDs) > 0 && !(r.Confidence >= 0 && r.Confidence <= 1) {
		return fmt.Errorf("%w: top-1 confidence %v is outside [0, 1]", ErrBadResult, r.Confidence)
	}
	if math.IsNaN(r.Confidence) {
		return fmt.Errorf("%w: top-1 confidence is NaN", ErrBadResult)
	}
	return nil
}
