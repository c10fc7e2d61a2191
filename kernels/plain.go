package kernels

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/tidemark/tidemark/temporal"
)

// Plain is the fused stage written the way a straightforward Go program
// would write it: one goroutine, a scalar dot-product loop per row, every
// kept candidate collected and fully sorted. It is the baseline the
// benchmarks compare against ("ratio to a plain Go loop") and one more
// implementation for the shared test body; it is not meant for production.
type Plain struct{}

// Name implements Backend.
func (Plain) Name() string { return "plain-go" }

func plainDot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// plainScores computes every row's score, similarity and reason.
func (Plain) plainScores(ctx context.Context, b *Batch, q *Query, p *temporal.Params) ([]float64, []float64, []temporal.Reason, Stats, error) {
	var st Stats
	if err := b.checkShape(); err != nil {
		return nil, nil, nil, st, err
	}
	if p == nil {
		return nil, nil, nil, st, fmt.Errorf("%w: nil params", ErrInvalid)
	}
	qn := make([]float32, b.Dim)
	if err := checkQuery(b, q, p, qn); err != nil {
		return nil, nil, nil, st, err
	}
	e := newEpilogue(b, q, p)
	n := b.Len()
	sims := make([]float64, n)
	reasons := make([]temporal.Reason, n)
	e.minSim, e.maxSim, e.minAge, e.maxAge = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i := 0; i < n; i++ {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, nil, st, err
			}
		}
		sims[i] = float64(plainDot(b.Vectors[i*b.Dim:(i+1)*b.Dim], qn))
		r := e.premask(i)
		if r == temporal.ReasonNone {
			r = e.postmask(i, sims[i])
		}
		reasons[i] = r
		if r != temporal.ReasonNone {
			st.Removed[r]++
			continue
		}
		st.Scored++
		e.minSim, e.maxSim = math.Min(e.minSim, sims[i]), math.Max(e.maxSim, sims[i])
		e.minAge, e.maxAge = math.Min(e.minAge, e.age(i)), math.Max(e.maxAge, e.age(i))
	}
	out := make([]float64, n)
	for i := range out {
		if reasons[i] != temporal.ReasonNone {
			out[i] = math.NaN()
			continue
		}
		out[i], _ = e.signals(i, sims[i], false)
	}
	return out, sims, reasons, st, nil
}

// Score implements Backend.
func (pl Plain) Score(ctx context.Context, b *Batch, q *Query, p *temporal.Params, out []float64, reasons []temporal.Reason) (Stats, error) {
	if len(out) != b.Len() || len(reasons) != b.Len() {
		return Stats{}, fmt.Errorf("%w: output has %d scores and %d reasons for %d candidates", ErrInvalid, len(out), len(reasons), b.Len())
	}
	scores, _, rs, st, err := pl.plainScores(ctx, b, q, p)
	if err != nil {
		return Stats{}, err
	}
	copy(out, scores)
	copy(reasons, rs)
	return st, nil
}

// TopK implements Backend with a full sort.
func (pl Plain) TopK(ctx context.Context, b *Batch, q *Query, p *temporal.Params, k int, dst []Hit) ([]Hit, Stats, error) {
	if k < 0 {
		return dst, Stats{}, fmt.Errorf("%w: k = %d", ErrInvalid, k)
	}
	scores, sims, rs, st, err := pl.plainScores(ctx, b, q, p)
	if err != nil {
		return dst, Stats{}, err
	}
	var all []Hit
	for i, s := range scores {
		if rs[i] == temporal.ReasonNone {
			all = append(all, Hit{Index: i, ID: b.ID[i], Score: s, Sim: sims[i]})
		}
	}
	sort.Slice(all, func(a, c int) bool { return better(all[a].Score, all[a].ID, all[c].Score, all[c].ID) })
	return append(dst, all[:min(k, len(all))]...), st, nil
}

// ScoreMany implements Backend, one query after another.
func (pl Plain) ScoreMany(ctx context.Context, b *Batch, qs []Query, p *temporal.Params, k int, dst [][]Hit) ([][]Hit, error) {
	dst = dst[:0]
	for j := range qs {
		hits, _, err := pl.TopK(ctx, b, &qs[j], p, k, nil)
		if err != nil {
			if len(qs) > 1 {
				return nil, fmt.Errorf("query %d: %w", j, err)
			}
			return nil, err
		}
		dst = append(dst, hits)
	}
	return dst, nil
}
