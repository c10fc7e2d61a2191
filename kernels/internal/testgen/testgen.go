// Package testgen makes the random inputs of the kernels tests: metadata
// that exercises every mask and signal, vectors, batches, queries and the
// parameter sets. It does not import kernels, so that both package
// kernels' own (internal) tests and kernels/backendtest, which imports
// kernels, can use it.
package testgen

import (
	"math/rand/v2"
	"testing"

	"github.com/tidemark/tidemark/temporal"
)

// F32 rounds x to a float32-representable float64, so that a reference
// sees exactly the metadata a batch stores.
func F32(x float64) float64 { return float64(float32(x)) }

// Meta returns random metadata with the given id that exercises every
// mask and signal.
func Meta(r *rand.Rand, id uint64) temporal.Candidate {
	created := F32(-r.Float64() * 800)
	c := temporal.Candidate{
		ID: id, Kind: temporal.Kind(r.IntN(3)), Status: temporal.Status(r.IntN(5)), CreatedAt: created,
		Valid: temporal.Always, Recorded: temporal.Always,
		HalfLife: []float64{1, 7, 30, 60, 90, 365, 0}[r.IntN(7)], Floor: []float64{0, 0, 0.1, 0.7}[r.IntN(4)],
		BaseConfidence: F32(r.Float64()), ConfidenceFrom: created,
		Access: float64(r.IntN(50)), Positive: float64(r.IntN(5)), Negative: float64(r.IntN(3)), Degree: float64(r.IntN(30)),
	}
	if r.IntN(3) == 0 {
		c.Valid = temporal.Window{From: F32(created - r.Float64()*10), To: F32(created + r.Float64()*900)}
	}
	if r.IntN(4) == 0 {
		c.Recorded = temporal.Window{From: F32(created + r.Float64()*5), To: F32(created + r.Float64()*1000)}
	}
	return c
}

// Vector returns a random non-zero vector (not normalised).
func Vector(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for {
		var ss float64
		for i := range v {
			v[i] = float32(r.NormFloat64())
			ss += float64(v[i]) * float64(v[i])
		}
		if ss > 0 {
			return v
		}
	}
}

// Batch builds a batch of n random candidates of dimension dim with
// newBatch and add (kernels.NewBatch and (*kernels.Batch).Append), each in
// one of groups drift groups, with Meta's metadata; about a quarter are
// near-copies of q so that scores spread. It fails t on an error.
func Batch[B any](t testing.TB, r *rand.Rand, n, dim, groups int, q []float32,
	newBatch func(dim, capacity int) (B, error), add func(b B, v []float32, c temporal.Candidate, group uint32) error) B {
	t.Helper()
	b, err := newBatch(dim, n)
	if err != nil {
		t.Fatal(err)
	}
	ids := r.Perm(4 * n)
	for i := 0; i < n; i++ {
		v := Vector(r, dim)
		if r.IntN(4) == 0 {
			for j := range v {
				v[j] = q[j] + 0.3*v[j]
			}
		}
		if err := add(b, v, Meta(r, uint64(ids[i])), uint32(r.IntN(groups))); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// Query returns a random query: its vector, its time context (now, as of
// a past valid or transaction time, or over a range; sometimes with kind
// and status filters) and a drift λ for each of groups groups.
func Query(r *rand.Rand, dim, groups int) ([]float32, temporal.Query, []float64) {
	v := Vector(r, dim)
	t := temporal.At(0)
	switch r.IntN(4) {
	case 1:
		t.At = -200 // as of a past valid time
	case 2:
		t.TxAt = -300 // as of a past transaction time
	case 3:
		t.HasRange, t.Range = true, temporal.Window{From: -500, To: -50}
	}
	if r.IntN(5) == 0 {
		t.Kinds = temporal.KindsOf(temporal.Static, temporal.Event)
	}
	if r.IntN(5) == 0 {
		t.Statuses = temporal.StatusesOf(temporal.Active, temporal.Unconsolidated, temporal.Dormant)
	}
	lambdas := make([]float64, groups)
	for g := range lambdas {
		lambdas[g] = r.Float64() * 0.05
	}
	return v, t, lambdas
}

// PresetsAndHolds are every preset, then SmartVector's and the article's
// with the confidence clock of static memories held (HoldStatic, the
// engine's shown confidence), so that the hold is tested where the
// confidence weighs most and with pool statistics.
func PresetsAndHolds() []temporal.Params {
	var out []temporal.Params
	for _, m := range temporal.Methods() {
		out = append(out, temporal.Preset(m))
	}
	for _, m := range []temporal.Method{temporal.MethodSmartVector, temporal.MethodArticle} {
		p := temporal.Preset(m)
		p.Confidence.HoldStatic = true
		out = append(out, p)
	}
	return out
}
