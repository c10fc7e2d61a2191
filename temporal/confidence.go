package temporal

import "math"

// ConfidenceParams are the ConfidenceEngine's constants (SmartVector §5).
// The zero value is not useful; start from [DefaultConfidence].
type ConfidenceParams struct {
	// HalfLife H in days of the Ebbinghaus decay (default 30).
	HalfLife float64
	// AlphaPos is added per positive feedback (default 0.03).
	AlphaPos float64
	// AlphaNeg is subtracted per negative feedback (default 0.08): one
	// correction outweighs several silent accepts.
	AlphaNeg float64
	// Beta scales the log access reinforcement (default 0.01).
	Beta float64
	// Min and Max clip the feedback step (defaults 0.01 and 1.0).
	Min, Max float64
	// DormantThreshold: below it an active memory becomes dormant
	// (default 0.15).
	DormantThreshold float64
	// HoldVersioned stops the clock for versioned memories: their age in
	// the decay is 0, so their confidence is their authority and feedback.
	// A versioned memory is retired by its successor, not by time; the
	// ConfidenceEngine's decay stands for "unvalidated, so maybe stale",
	// which supersession already answers. Off in SmartVector's defaults,
	// on in tidemark's preset.
	HoldVersioned bool
	// HoldStatic stops the clock for static memories: their age in the
	// decay is 0, so only evidence moves their confidence — the authority
	// prior (less ripple penalties from contradicted dependencies), positive
	// and negative feedback, accesses. A static fact (a definition, a
	// published finding, a wiki page on how a thing works) is not less true
	// for being old: a wiki fact of 0.75 that nobody has contradicted must
	// not report 0.01 after 18 months, as SmartVector's clock makes it.
	// Staleness of a static memory is the decay signal's business (its
	// profile's half-life and floor), not the confidence's. Off in every
	// preset's scoring (SmartVector §5 decays every memory; in tidemark's
	// preset the decayed signal is a recency prior among unversioned
	// documents), and always set for the confidence the engine reports and
	// lifecycles by ([ConfidenceParams.Reported]).
	HoldStatic bool
}

// Age returns the age the ConfidenceEngine decays a memory of kind k by:
// at − from, or 0 for a versioned memory under HoldVersioned and for a
// static one under HoldStatic.
func (p ConfidenceParams) Age(k Kind, at, from float64) float64 {
	if (p.HoldVersioned && k == Versioned) || (p.HoldStatic && k == Static) {
		return 0
	}
	return at - from
}

// Reported returns p with HoldStatic set: the parameters of the confidence
// a user is shown (the engine's Hit.Confidence, the evaluation contract's
// top-1 confidence) and of the lifecycle (dormancy at DormantThreshold),
// whatever the scoring method. A method's score may follow its source to
// the letter — the SmartVector and article presets decay every memory's
// confidence by age, and their published numbers are reproduced with
// that — but the confidence tidemark states about a static fact is moved
// by evidence only, under every method. HoldVersioned stays the method's.
func (p ConfidenceParams) Reported() ConfidenceParams {
	p.HoldStatic = true
	return p
}

// DefaultConfidence returns SmartVector §5's defaults: α_pos = 0.03,
// α_neg = 0.08, β = 0.01, H = 30 days, clip [0.01, 1.0], dormant at 0.15.
func DefaultConfidence() ConfidenceParams {
	return ConfidenceParams{
		HalfLife:         SmartVectorHalfLife,
		AlphaPos:         0.03,
		AlphaNeg:         0.08,
		Beta:             0.01,
		Min:              0.01,
		Max:              1.0,
		DormantThreshold: 0.15,
	}
}

// Confidence is SmartVector §5's ConfidenceEngine, exactly:
//
//	C_decayed = C0 · 2^(−age/H)
//	C_fb      = clip(C_decayed + α_pos·n_pos − α_neg·n_neg, 0.01, 1.0)
//	C_final   = min(1.0, C_fb + β·ln(1 + n_access))
//
// age is in days (negative counts as zero); the counts are non-negative.
func Confidence(p ConfidenceParams, c0, age, pos, neg, access float64) float64 {
	decayed := c0 * Decay(Lambda(p.HalfLife), age, 0)
	fb := math.Min(p.Max, math.Max(p.Min, decayed+p.AlphaPos*pos-p.AlphaNeg*neg))
	return math.Min(p.Max, fb+p.Beta*math.Log1p(access))
}

// LiveConfidence is [Confidence] of candidate c at valid time at: its C0,
// its age p.Age(c.Kind, at, c.ConfidenceFrom) and its counters. The score's
// confidence signal is LiveConfidence(p.Confidence, c, q.At); the confidence
// shown with a result is LiveConfidence(p.Confidence.Reported(), c, q.At).
func LiveConfidence(p ConfidenceParams, c *Candidate, at float64) float64 {
	return Confidence(p, c.BaseConfidence, p.Age(c.Kind, at, c.ConfidenceFrom), c.Positive, c.Negative, c.Access)
}

// RelationalBonus is SmartVector §4's Signal 4, a log-saturating bonus for
// well-connected memories capped at 0.3 (DESIGN "Scoring" step 6):
//
//	relational = min(0.3, 0.1 · ln(1 + degree))
func RelationalBonus(degree float64) float64 {
	if degree <= 0 {
		return 0
	}
	return math.Min(0.3, 0.1*math.Log1p(degree))
}

// NextStatus is one lifecycle step of SmartVector §3.3 and §6.4 for a memory
// whose live confidence is conf, taken by a consolidation run:
// active → dormant when conf falls below the dormant threshold, dormant →
// active when it recovers (reconsolidation), and unconsolidated → active
// (promotion; §6.4 promotes after recomputing the others' confidence, so a
// promoted memory is judged for dormancy on the next run). Deprecated and
// archived memories do not move.
func NextStatus(s Status, conf float64, p ConfidenceParams) Status {
	switch s {
	case Unconsolidated:
		return Active
	case Active, Dormant:
		if conf < p.DormantThreshold {
			return Dormant
		}
		return Active
	}
	return s
}
