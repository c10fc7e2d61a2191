package temporal

import (
	"math"
	"strconv"
	"strings"
)

// Tier is a confidence tier of an answer (Temporal RAG, "When the score
// looks good but the answer isn't certain").
type Tier uint8

// Tiers.
const (
	TierLow Tier = iota
	TierMedium
	TierHigh
)

var tierNames = [...]string{"LOW", "MEDIUM", "HIGH"}

// String returns "LOW", "MEDIUM" or "HIGH".
func (t Tier) String() string {
	if int(t) < len(tierNames) {
		return tierNames[t]
	}
	return "Tier(?)"
}

// MarshalText implements encoding.TextMarshaler.
func (t Tier) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// TierParams configure [Assess]. The article publishes the outputs, not the
// constants; these were solved from its five published breakdowns
// (advanced.py, "Improvement 2") and reproduce every one of them to the
// printed precision (see the tests).
type TierParams struct {
	// Steepness and Center of the logistic confidence: σ(k·(x − c)),
	// k = 8, c = 0.5.
	Steepness, Center float64
	// High and Medium are the tier thresholds on confidence (0.70, 0.50).
	High, Medium float64
	// Margin: a winner less than Margin ahead of the runner-up is a close
	// race and loses MarginPenalty (0.05 and 0.20; the article's example
	// is 0.73 against 0.72).
	Margin, MarginPenalty float64
	// ConflictBoost and ConflictPenalty scale the conflict severity into a
	// score boost (0.2·severity) and a confidence penalty (0.1·severity)
	// (advanced.py, "Improvement 4").
	ConflictBoost, ConflictPenalty float64
}

// DefaultTiers returns the constants that reproduce the article.
func DefaultTiers() TierParams {
	return TierParams{Steepness: 8, Center: 0.5, High: 0.70, Medium: 0.50,
		Margin: 0.05, MarginPenalty: 0.20, ConflictBoost: 0.2, ConflictPenalty: 0.1}
}

// BreakdownWeights are the article's confidence-scoring weights for a
// content type with temporal weight tw: (relevance 0.6, temporal tw,
// authority 0.1), normalised to sum to 1. For a policy (tw = 0.45) that is
// 0.522 / 0.391 / 0.087, as printed in the article.
func BreakdownWeights(tw float64) (relevance, temporal, authority float64) {
	s := 0.6 + tw + 0.1
	return 0.6 / s, tw / s, 0.1 / s
}

// BreakdownScore is the article's base score: the weighted sum of
// relevance, temporal and authority with [BreakdownWeights](tw).
func BreakdownScore(relevance, temporal, authority, tw float64) float64 {
	wr, wt, wa := BreakdownWeights(tw)
	return wr*relevance + wt*temporal + wa*authority
}

// Assessment is the outcome of [Assess].
type Assessment struct {
	// Final is the base score plus the conflict boost.
	Final float64
	// MarginPenalty and ConflictPenalty are the confidence adjustments.
	MarginPenalty, ConflictPenalty float64
	// Confidence = σ(k·(Final − MarginPenalty − ConflictPenalty − c)).
	Confidence float64
	Tier       Tier
}

// Assess turns a winner's base score into a calibrated confidence with a
// tier (Temporal RAG, "confidence tiers that check the margin and flag
// conflicts"):
//
//	final      = base + ConflictBoost·severity
//	confidence = σ(k·(final − margin_pen − ConflictPenalty·severity − c))
//
// where margin_pen = MarginPenalty when a runner-up (hasRunnerUp) scores
// within Margin of base. The tier is HIGH at confidence ≥ High, MEDIUM at
// ≥ Medium, else LOW — and LOW whenever a penalty applied: "a close race or
// contradiction drops the result to LOW regardless of the raw score".
// severity is [ConflictSeverity] of the values in conflict, 0 for none.
func Assess(tp TierParams, base, runnerUp float64, hasRunnerUp bool, severity float64) Assessment {
	a := Assessment{Final: base + tp.ConflictBoost*severity}
	if hasRunnerUp && base-runnerUp < tp.Margin {
		a.MarginPenalty = tp.MarginPenalty
	}
	a.ConflictPenalty = tp.ConflictPenalty * severity
	a.Confidence = sigmoid(tp.Steepness * (a.Final - a.MarginPenalty - a.ConflictPenalty - tp.Center))
	switch {
	case a.MarginPenalty > 0 || a.ConflictPenalty > 0:
		a.Tier = TierLow
	case a.Confidence >= tp.High:
		a.Tier = TierHigh
	case a.Confidence >= tp.Medium:
		a.Tier = TierMedium
	default:
		a.Tier = TierLow
	}
	return a
}

// ConflictSeverity measures how far apart two values of the same fact are
// (Temporal RAG, "When the fact changed significantly between versions"):
// for two numbers, |new − old| / max(|old|, |new|) ("1000"→"500" is 0.5,
// "100"→"5000" is 0.98); for anything else, 0 when equal (after trimming and
// case folding) and 1 otherwise. Thousands separators are ignored.
func ConflictSeverity(oldValue, newValue string) float64 {
	a, aok := parseNumber(oldValue)
	b, bok := parseNumber(newValue)
	if aok && bok {
		m := math.Max(math.Abs(a), math.Abs(b))
		if m == 0 {
			return 0
		}
		return math.Abs(b-a) / m
	}
	if strings.EqualFold(strings.TrimSpace(oldValue), strings.TrimSpace(newValue)) {
		return 0
	}
	return 1
}

func parseNumber(s string) (float64, bool) {
	s = strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// FreshnessGrade is the article's freshness grade of a decay score
// (advanced.py, freshness_report): "A" ≥ 0.90, "B" ≥ 0.70, "C" ≥ 0.50,
// "D" ≥ 0.25, else "F"; an expired memory is "F".
func FreshnessGrade(decay float64, expired bool) string {
	switch {
	case expired:
		return "F"
	case decay >= 0.90:
		return "A"
	case decay >= 0.70:
		return "B"
	case decay >= 0.50:
		return "C"
	case decay >= 0.25:
		return "D"
	}
	return "F"
}
