package kernels

import (
	"context"
	"fmt"
	"sync"

	"github.com/tidemark/tidemark/temporal"
)

// Stats counts what one call did.
type Stats struct {
	// Scored is the number of candidates that passed the masks.
	Scored int
	// Removed counts the masked candidates by reason code.
	Removed [temporal.NumReasons]int
}

// RemovedTotal is the number of masked candidates.
func (s *Stats) RemovedTotal() int {
	n := 0
	for _, c := range s.Removed {
		n += c
	}
	return n
}

func (s *Stats) add(o *Stats) {
	s.Scored += o.Scored
	for i, c := range o.Removed {
		s.Removed[i] += c
	}
}

// Backend is one implementation of the fused stage. Every method validates
// its inputs (dimension, finite values, parameters) and returns an error
// wrapping one of this package's sentinel errors; ctx is checked between
// chunks of work.
type Backend interface {
	// Name says which implementation runs, e.g. "cpu/avx2+fma (vek)".
	Name() string
	// Score writes the score of every candidate to out and the reason it
	// was removed to reasons (ReasonNone for a scored candidate, whose
	// score is then finite; a removed candidate's score is NaN). Both
	// slices must have b.Len() entries.
	Score(ctx context.Context, b *Batch, q *Query, p *temporal.Params, out []float64, reasons []temporal.Reason) (Stats, error)
	// TopK appends the k best candidates to dst, best first (score
	// descending, ties by ascending id); a removed candidate never appears.
	TopK(ctx context.Context, b *Batch, q *Query, p *temporal.Params, k int, dst []Hit) ([]Hit, Stats, error)
	// ScoreMany is TopK for many queries at once, reading each block of
	// vectors once per group of queries. dst is reused when it has room.
	// It reports no Stats; use TopK for a query's reason counts.
	ScoreMany(ctx context.Context, b *Batch, qs []Query, p *temporal.Params, k int, dst [][]Hit) ([][]Hit, error)
}

var (
	defaultOnce sync.Once
	defaultCPU  *CPU
)

// Backends returns every backend available on this machine, fastest first.
// The CPU backend is always present.
func Backends() []Backend { return []Backend{DefaultCPU()} }

// DefaultCPU returns a process-wide CPU backend using every core.
func DefaultCPU() *CPU {
	defaultOnce.Do(func() { defaultCPU = NewCPU(nil) })
	return defaultCPU
}

// Prepare validates one call's inputs as every backend must — the batch's
// shape, the parameters, k, and each query (dimension, a finite non-zero
// vector, finite times, known drift groups) — and writes the queries' unit
// vectors to qn, len(qs)·b.Dim values. A backend outside this package
// (package cuda) calls it first, so that bad input gets the same errors
// on every backend.
func Prepare(b *Batch, qs []Query, p *temporal.Params, k int, qn []float32) error {
	if err := checkCall(b, p, k); err != nil {
		return err
	}
	if len(qn) != len(qs)*b.Dim {
		return fmt.Errorf("%w: %d values for %d unit vectors of dimension %d", ErrInvalid, len(qn), len(qs), b.Dim)
	}
	return checkQueries(b, qs, p, qn)
}

// checkCall validates what a call has besides its queries: the batch's
// shape, the parameters and k.
func checkCall(b *Batch, p *temporal.Params, k int) error {
	if err := b.checkShape(); err != nil {
		return err
	}
	if p == nil {
		return fmt.Errorf("%w: nil params", ErrInvalid)
	}
	if k < 0 {
		return fmt.Errorf("%w: k = %d", ErrInvalid, k)
	}
	return nil
}

// checkQueries validates each query and writes its unit vector to qn;
// with several queries an error names the query.
func checkQueries(b *Batch, qs []Query, p *temporal.Params, qn []float32) error {
	for j := range qs {
		if err := checkQuery(b, &qs[j], p, qn[j*b.Dim:(j+1)*b.Dim]); err != nil {
			if len(qs) > 1 {
				return fmt.Errorf("query %d: %w", j, err)
			}
			return err
		}
	}
	return nil
}
