package temporal

import "math"

// Lambda returns the exponential decay rate for a half-life in days:
// λ = ln 2 / halfLife. A half-life that is not positive and finite means
// "never decays" and gives λ = 0.
func Lambda(halfLife float64) float64 {
	if !(halfLife > 0) || math.IsInf(halfLife, 1) {
		return 0
	}
	return math.Ln2 / halfLife
}

// Decay is exponential time decay with a floor:
//
//	decay = max(floor, exp(−λ·age)),  age = max(0, age)
//
// With λ = ln 2 / H this is the article's 0.5^(age/H) ("decay_score") and
// SmartVector's 2^(−age/H) (§4, Signal 2); the floor is the article's
// DECAY_FLOORS. A negative age (a memory dated after the reference time)
// counts as zero, as the article's age_in_days does.
func Decay(lambda, age, floor float64) float64 {
	if age < 0 {
		age = 0
	}
	return math.Max(floor, math.Exp(-lambda*age))
}

// SmartVectorTemporal is SmartVector §4's Signal 2: when t falls outside the
// validity window the signal collapses to a small floor (outOfWindow, 0.05
// in the paper); otherwise it is 2^(−age/H).
func SmartVectorTemporal(w Window, t, age, halfLife, outOfWindow float64) float64 {
	if !w.Contains(t) {
		return outOfWindow
	}
	return Decay(Lambda(halfLife), age, 0)
}

// Recency is the article's pool-relative freshness ("recency_score"): 1 for
// the newest candidate, 0 for the oldest,
//
//	recency = 1 − (age − minAge) / (maxAge − minAge)
//
// and 1 for every candidate when all ages are equal.
func Recency(age, minAge, maxAge float64) float64 {
	if maxAge == minAge {
		return 1
	}
	return 1 - (age-minAge)/(maxAge-minAge)
}

// MinMax is the article's pool normalisation of the vector score
// ("vector_score: cosine similarity, normalized to fall between 0 and 1
// relative to the candidate pool"):
//
//	norm = (s − min) / (max − min),  1 when max = min.
func MinMax(s, min, max float64) float64 {
	if max > min {
		return (s - min) / (max - min)
	}
	return 1
}

// Cosine is the cosine similarity of a and b in float64; zero when either
// vector is zero. It panics if the lengths differ.
func Cosine(a, b []float64) float64 {
	if len(a) != len(b) {
		panic("temporal: Cosine of vectors with different lengths")
	}
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}
