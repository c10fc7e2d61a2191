package tidemark

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// RescoreMany's result j is Rescore's for vector j: the same removals, the
// same hits rank by rank (scores within float32 rounding of the two dot
// kernels), and bad input refused with this package's sentinels.
func TestRescoreManyMatchesRescore(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 1))
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	vec := func() []float32 {
		v := make([]float32, 24)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	req := &RescoreRequest{Now: now, K: 5}
	for i := 0; i < 60; i++ {
		m := Memory{ID: string(rune('a'+i%26)) + string(rune('a'+i/26)), Vector: vec(),
			Kind: temporal.Kind(i % 3), RecordedAt: now.AddDate(0, 0, -r.IntN(400))}
		if i%5 == 0 {
			m.ValidFrom, m.ValidTo = now.AddDate(0, -3, 0), now.AddDate(0, -1, 0) // expired
		}
		req.Candidates = append(req.Candidates, RescoreCandidate{Memory: m})
	}
	queries := [][]float32{vec(), vec(), vec(), vec(), vec(), vec(), vec(), vec(), vec()}
	many, err := RescoreMany(context.Background(), req, queries)
	if err != nil {
		t.Fatal(err)
	}
	if len(many) != len(queries) {
		t.Fatalf("%d results for %d vectors", len(many), len(queries))
	}
	for j, q := range queries {
		one := *req
		one.Vector = q
		want, err := Rescore(context.Background(), &one)
		if err != nil {
			t.Fatal(err)
		}
		got := many[j]
		if len(got.Hits) != len(want.Hits) || len(got.Removed) != len(want.Removed) || len(got.Removed) == 0 {
			t.Fatalf("vector %d: %d hits %d removed, Rescore %d and %d", j, len(got.Hits), len(got.Removed), len(want.Hits), len(want.Removed))
		}
		for i := range got.Hits {
			if math.Abs(got.Hits[i].Score-want.Hits[i].Score) > 1e-5 {
				t.Errorf("vector %d rank %d: %s %v, Rescore %s %v", j, i, got.Hits[i].ID, got.Hits[i].Score, want.Hits[i].ID, want.Hits[i].Score)
			}
		}
	}
	withSim := *req
	withSim.Candidates = append([]RescoreCandidate{{Memory: Memory{ID: "s"}, Sim: 0.5, HasSim: true}}, req.Candidates...)
	nanQuery := vec()
	nanQuery[7] = float32(math.NaN())
	withVector := *req
	withVector.Vector = queries[0]
	for name, c := range map[string]struct {
		req  *RescoreRequest
		qs   [][]float32
		want error
	}{
		"nil request":      {nil, queries, ErrInvalid},
		"a similarity":     {&withSim, queries, ErrInvalid},
		"Vector set":       {&withVector, queries, ErrInvalid},
		"wrong dimension":  {req, [][]float32{make([]float32, 3)}, ErrDimension},
		"NaN in a query":   {req, [][]float32{nanQuery}, ErrNotFinite},
		"zero query":       {req, [][]float32{make([]float32, 24)}, ErrNotFinite},
		"too many vectors": {req, make([][]float32, 2000), ErrInvalid},
	} {
		if _, err := RescoreMany(context.Background(), c.req, c.qs); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
}
