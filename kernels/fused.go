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
	// confLambda is the ConfidenceEngine's decay rate ln 2 / H.
	confLambda float64
	// prunable is true when scoreBound is a valid upper bound (weighted
	// sums); boundRest is the bound's similarity-independent part.
	prunable  bool
	boundRest float64
}

func newEpilogue(b *Batch, q *Query, p *temporal.Params) epilogue {
	e := epilogue{
		b: b, q: &q.Time, p: p, groupLambda: q.GroupLambda,
		pool:       p.Pooled(),
		confLambda: temporal.Lambda(p.Confidence.HalfLife),
	}
	if p.Combine != temporal.CombineProduct {
		// temporal = decay·recency·multiplier·gate ≤ 1·1·max(1, boost)·1, or
		// OutOfWindow; confidence ≤ Confidence.Max; relational ≤ 0.3. Decay floors are
		// in [0, 1] (Candidate.Validate, Batch.Validate), the weights and the boost are
		// non-negative and the gate and penalty within [0, 1] (Params.Validate).
		tmax := math.Max(math.Max(1, p.EventBoost), p.OutOfWindow)
		e.boundRest = p.Weights.Time*tmax + p.Weights.Conf*p.Confidence.Max + p.Weights.Rel*0.3
		e.prunable = true
	}
	return e
}

// scoreBound is an upper bound on the score of a row whose raw cosine is
// sim, from the similarity alone; the transcendental part of the epilogue
// is skipped for a row whose bound cannot beat the current k-th best.
func (e *epilogue) scoreBound(sim float64) float64 {
	x := sim
	if e.p.NormalizeSim {
		x = temporal.MinMax(sim, e.minSim, e.maxSim)
	}
	ub := e.p.Weights.Sim*x + e.boundRest
	if e.p.Combine == temporal.CombineGated {
		// x·(w_sim + rest) with rest in [0, boundRest]: largest at the
		// top of the range for x ≥ 0, at the bottom for x < 0.
		ub = e.p.Weights.Sim * x
		if x > 0 {
			ub = x * (e.p.Weights.Sim + e.boundRest)
		}
	}
	if pen := e.p.RelevancePenalty; e.p.RelevanceThreshold > 0 && pen*ub > ub {
		ub = pen * ub // a penalty in [0, 1) raises a negative score
	}
	return ub
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
	if p.MaskExpired && !(q.At >= from && q.At < to) && !(math.IsInf(from, -1) && math.IsInf(to, 1)) {
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
	if !(math.IsInf(from, -1) && math.IsInf(to, 1)) {
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
		if p.IgnoreValidity {
			s.Temporal = s.Decay * s.Recency
		}
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
	if explain || (w.Conf != 0 && p.Combine != temporal.CombineProduct) {
		// temporal.Confidence, with ln(1 + access) from the table.
		c := &p.Confidence
		decayed := float64(b.BaseConf[i]) * temporal.Decay(e.confLambda, c.Age(b.Kind[i], q.At, float64(b.ConfFrom[i])), 0)
		fb := math.Min(c.Max, math.Max(c.Min, decayed+c.AlphaPos*float64(b.Positive[i])-c.AlphaNeg*float64(b.Negative[i])))
		s.Confidence = math.Min(c.Max, fb+c.Beta*log1pCount(float64(b.Access[i])))
	}
	if explain || (w.Rel != 0 && p.Combine != temporal.CombineProduct) {
		// temporal.RelationalBonus, with ln(1 + degree) from the table.
		if d := float64(b.Degree[i]); d > 0 {
			s.Relational = math.Min(0.3, 0.1*log1pCount(d))
		}
	}
	if p.RelevanceThreshold > 0 && s.SimNorm < p.RelevanceThreshold {
		s.Penalty = p.RelevancePenalty
	}
	x := sim
	if p.NormalizeSim {
		x = s.SimNorm
	}
	switch p.Combine {
	case temporal.CombineProduct:
		return s.Penalty * x * s.Temporal, s
	case temporal.CombineGated:
		return s.Penalty * x * (w.Sim + w.Time*s.Temporal + w.Conf*s.Confidence + w.Rel*s.Relational), s
	}
	return s.Penalty * (w.Sim*x + w.Time*s.Temporal + w.Conf*s.Confidence + w.Rel*s.Relational), s
}

// log1pTable[i] is math.Log1p(i): counters (accesses, degree) are small
// integers, and a table lookup returns the identical float64.
var log1pTable = func() (t [1024]float64) {
	for i := range t {
		t[i] = math.Log1p(float64(i))
	}
	return t
}()

func log1pCount(x float64) float64 {
	if x >= 0 && x < float64(len(log1pTable)) && x == math.Trunc(x) {
		return log1pTable[int(x)]
	}
	return math.Log1p(x)
}
