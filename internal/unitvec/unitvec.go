// Package unitvec checks a vector and scales it to unit length: the one
// boundary check behind every package that stores or queries embeddings
// (each maps the outcome to its own sentinel error).
package unitvec

import "math"

// Problem is why a vector cannot be normalised.
type Problem uint8

const (
	// OK: the vector was normalised.
	OK Problem = iota
	// NotFinite: an element is NaN or ±Inf.
	NotFinite
	// Zero: the vector has norm zero and so no direction.
	Zero
)

// Normalize writes v/‖v‖ (computed in float64) to dst, which must be at
// least as long as v and may be v itself. On a problem it returns it with
// the index of the offending element (NotFinite) and leaves dst unchanged.
func Normalize(v, dst []float32) (Problem, int) {
	var ss float64
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return NotFinite, i
		}
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return Zero, 0
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		dst[i] = float32(float64(x) * inv)
	}
	return OK, 0
}
