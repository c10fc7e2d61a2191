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
}

// Age returns the age the ConfidenceEngine decays a memory of kind k by:
// at − from, or 0 for a versioned memory under HoldVersioned.
func (p ConfidenceParams) Age(k Kind, at, from float64) float64 {
	if p.HoldVersioned && k == Versioned {
		return 0
	}
	return at - from
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
