package kernels

import (
	"math"

	"github.com/tidemark/tidemark/temporal"
)

// epilogue is the scalar part of the fused stage for one query: everything
// after the dot product. It mirrors temporal.ScorePool line for line, in
// float64 over the float32 columns.
type epilogue struct {
	b *Batch
	q *temporal.Query
	p *temporal.Params
	// groupLambda is the query's drift λ per group (adaptive decay).
	groupLambda []float64
	// pool is true when a score needs pool statistics (min–max sim, pool
	// recency, the semantic penalty): then scoring takes a second pass over
	// the similarities, never over the vectors.
	pool bool
	// lo/hi are the pool statistics, filled between the passes.
	minSim, maxSim, minAge, maxAge float64
}

func newEpilogue(b *Batch, q *Query, p *temporal.Params) epilogue {
	return epilogue{
		b: b, q: &q.Time, p: p, groupLambda: q.GroupLambda,
		pool: p.NormalizeSim || p.PoolRecency || p.RelevanceThreshold > 0,
	}
}

// premask is every mask that needs no similarity (temporal.Mask minus the
// relevance gate).
func (e *epilogue) premask(i int) temporal.Reason {
	b, q, p := e.b, e.q, e.p
	if p.MaskRetired {
		if q.TxAt < float64(b.RecordedAt[i]) {
			return temporal.ReasonNotYetRecorded
		}
		if q.TxAt >= float64(b.RetiredAt[i]) {
			return temporal.ReasonSuperseded
		}
	}
	if !q.Kinds.Has(b.Kind[i]) {
		return temporal.ReasonFilteredKind
	}
	if !q.Statuses.Has(b.Status[i]) {
		return temporal.ReasonFilteredStatus
	}
	from, to := float64(b.ValidFrom[i]), float64(b.ValidTo[i])
	if p.MaskExpired && !(q.At >= from && q.At < to) && (!math.IsInf(from, 0) || !math.IsInf(to, 0)) {
		if q.At < from {
			return temporal.ReasonNotYetValid
		}
		return temporal.ExpiredReason(b.Kind[i])
	}
	if q.HasRange {
		c := float64(b.Created[i])
		if !(c >= q.Range.From && c < q.Range.To) {
			return temporal.ReasonOutOfTimeRange
		}
	}
	return temporal.ReasonNone
}

func (e *epilogue) age(i int) float64 { return math.Max(0, e.q.At-float64(e.b.Created[i])) }

func (e *epilogue) decay(i int, age float64) float64 {
	l := float64(e.b.Lambda[i])
	if e.p.AdaptiveDecay {
		l = e.groupLambda[e.b.Group[i]]
	}
	return math.Max(float64(e.b.Floor[i]), math.Exp(-l*age))
}

// postmask applies the masks that need the similarity or the decay.
func (e *epilogue) postmask(i int, sim float64) temporal.Reason {
	if e.p.MinSim > 0 && sim < e.p.MinSim {
		return temporal.ReasonBelowRelevanceGate
	}
	if e.p.StaleBelow > 0 && e.decay(i, e.age(i)) < e.p.StaleBelow {
		if e.b.Kind[i] == temporal.Static {
			return temporal.ReasonStaleStatic
		}
		return temporal.ReasonStale
	}
	return temporal.ReasonNone
}

// signals computes row i's signals and score; sim is its raw cosine. It
// skips signals whose weight is zero unless explain is set.
func (e *epilogue) signals(i int, sim float64, explain bool) (float64, temporal.Signals) {
	b, q, p := e.b, e.q, e.p
	age := e.age(i)
	s := temporal.Signals{Sim: sim, Age: age, Recency: 1, Penalty: 1, SimNorm: 1}
	s.Decay = e.decay(i, age)
	if e.pool {
		s.SimNorm = temporal.MinMax(sim, e.minSim, e.maxSim)
		if p.PoolRecency {
			s.Recency = temporal.Recency(age, e.minAge, e.maxAge)
		}
	}
	from, to := float64(b.ValidFrom[i]), float64(b.ValidTo[i])
	s.State = temporal.Valid
	if !math.IsInf(from, 0) || !math.IsInf(to, 0) {
		switch {
		case !(q.At >= from && q.At < to):
			s.State = temporal.Expired
		case b.Kind[i] == temporal.Event:
			s.State = temporal.Temporal
		}
	}
	switch s.State {
	case temporal.Expired:
		s.Temporal = p.OutOfWindow
	case temporal.Temporal:
		gate := 1.0
		if p.EventFloor > 0 && sim < p.EventFloor {
			gate, s.EventGated = p.EventGateFactor, true
		}
		s.Temporal = s.Decay * s.Recency * p.EventBoost * gate
	default:
		s.Temporal = s.Decay * s.Recency
	}
	w := p.Weights
	if explain || (w.Conf != 0 && p.Combine == temporal.CombineSum) {
		s.Confidence = temporal.Confidence(p.Confidence, float64(b.BaseConf[i]), q.At-float64(b.ConfFrom[i]),
			float64(b.Positive[i]), float64(b.Negative[i]), float64(b.Access[i]))
	}
	if explain || (w.Rel != 0 && p.Combine == temporal.CombineSum) {
		s.Relational = temporal.RelationalBonus(float64(b.Degree[i]))
	}
	if p.RelevanceThreshold > 0 && s.SimNorm < p.RelevanceThreshold {
		s.Penalty = p.RelevancePenalty
	}
	x := sim
	if p.NormalizeSim {
		x = s.SimNorm
	}
	if p.Combine == temporal.CombineProduct {
		return s.Penalty * x * s.Temporal, s
	}
	return s.Penalty * (w.Sim*x + w.Time*s.Temporal + w.Conf*s.Confidence + w.Rel*s.Relational), s
}
