package kernels

import (
	"fmt"
	"math"

	"github.com/tidemark/tidemark/temporal"
)

// Query is one query of the fused stage.
type Query struct {
	// Vector is the query embedding, of the batch's dimension. It need not be
	// normalised; the stage scores against its unit-norm copy.
	Vector []float32
	// Time holds the reference times, time range and filters.
	Time temporal.Query
	// GroupLambda is the drift λ(t) per day of each drift group, indexed by
	// Batch.Group; read only when Params.AdaptiveDecay is set.
	GroupLambda []float64
}

// Hit is one selected candidate.
type Hit struct {
	// Index is the candidate's row in the batch.
	Index int
	ID    uint64
	// Score is the method's score, the ranking order (relative to the
	// pool under pooled parameters: temporal.Params.Pooled).
	Score float64
	// Sim is the raw cosine similarity of the candidate to the query, as
	// the stage computed it (float32 dot product of unit vectors).
	Sim float64
}

// better is the ranking order: higher score, then lower id.
func better(as float64, aid uint64, bs float64, bid uint64) bool {
	if as != bs {
		return as > bs
	}
	return aid < bid
}

// checkQuery validates a query against a batch and parameters and writes
// the normalised query vector into qn.
func checkQuery(b *Batch, q *Query, p *temporal.Params, qn []float32) error {
	if len(q.Vector) != b.Dim {
		return fmt.Errorf("%w: query has dimension %d, batch has %d", ErrDimension, len(q.Vector), b.Dim)
	}
	if err := normalized(q.Vector, qn, "query"); err != nil {
		return err
	}
	return checkTime(b, q, p)
}

func checkTime(b *Batch, q *Query, p *temporal.Params) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	t := q.Time
	for _, v := range []float64{t.At, t.TxAt} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: query reference time %v", ErrNotFinite, v)
		}
	}
	if t.HasRange && (math.IsNaN(t.Range.From) || math.IsNaN(t.Range.To)) {
		return fmt.Errorf("%w: query time range %v", ErrNotFinite, t.Range)
	}
	if p.AdaptiveDecay {
		for i, l := range q.GroupLambda {
			if !(l >= 0) || math.IsInf(l, 0) {
				return fmt.Errorf("%w: GroupLambda[%d] = %v", ErrInvalid, i, l)
			}
		}
		n := uint32(len(q.GroupLambda))
		for i, g := range b.Group {
			if g >= n {
				return fmt.Errorf("%w: candidate %d is in drift group %d, the query has λ for %d groups", ErrInvalid, b.ID[i], g, n)
			}
		}
	}
	return nil
}
