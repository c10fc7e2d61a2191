package kernels

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tidemark/tidemark/kernels/internal/testgen"
	"github.com/tidemark/tidemark/temporal"
)

// With precomputed similarities, Rescore agrees with the reference to
// float32 rounding of the stored metadata (floors, λ).
func TestRescoreMatchesReferenceWithSims(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 1))
	for _, p := range testgen.PresetsAndHolds() {
		m := p.Method
		cands := make([]temporal.Candidate, 200)
		req := RescoreRequest{Time: temporal.At(0), Params: p, GroupLambda: []float64{0.01, 0.03}}
		for i := range cands {
			cands[i] = testgen.Meta(r, uint64(i*3))
			cands[i].Sim = testgen.F32(r.Float64()*2 - 1)
			g := uint32(r.IntN(2))
			cands[i].Lambda = req.GroupLambda[g]
			if m != temporal.MethodVDD {
				cands[i].Lambda = 0
			}
			req.Candidates = append(req.Candidates, RescoreCandidate{Sim: cands[i].Sim, HasSim: true, Meta: cands[i], Group: g})
		}
		ref, err := temporal.ScorePool(req.Time, p, cands)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Rescore(context.Background(), &req)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Ranked) != len(ref.Ranked) || len(got.Removed) != len(ref.Removed) {
			t.Fatalf("%v: %d ranked %d removed, reference %d/%d", m, len(got.Ranked), len(got.Removed), len(ref.Ranked), len(ref.Removed))
		}
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
		for i := range ref.Ranked {
			g, w := got.Ranked[i], ref.Ranked[i]
			gs, ws := g.Signals, w.Signals
			if g.ID != w.ID || !near(g.Score, w.Score) || gs.State != ws.State || gs.EventGated != ws.EventGated ||
				gs.Penalty != ws.Penalty || !near(gs.Sim, ws.Sim) || !near(gs.SimNorm, ws.SimNorm) || !near(gs.Age, ws.Age) ||
				!near(gs.Decay, ws.Decay) || !near(gs.Recency, ws.Recency) || !near(gs.Temporal, ws.Temporal) ||
				!near(gs.Confidence, ws.Confidence) || !near(gs.Relational, ws.Relational) || !near(g.PoolFree, w.PoolFree) {
				t.Errorf("%v rank %d: got %+v, reference %+v", m, i, g, w)
			}
			if !p.Pooled() && g.PoolFree != g.Score {
				t.Errorf("%v rank %d: pool-free score %v ≠ score %v without pool statistics", m, i, g.PoolFree, g.Score)
			}
		}
		for i := range ref.Removed {
			if got.Removed[i] != ref.Removed[i] {
				t.Errorf("%v removed %d: %v, reference %v", m, i, got.Removed[i], ref.Removed[i])
			}
		}
	}
}

func TestRescoreWithVectorsAndK(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 1))
	q := testgen.Vector(r, 16)
	req := RescoreRequest{Query: q, Time: temporal.At(0), Params: temporal.Preset(temporal.MethodTidemark), K: 3}
	for i := 0; i < 20; i++ {
		c := RescoreCandidate{Meta: testgen.Meta(r, uint64(i))}
		if i%2 == 0 {
			c.Vector = testgen.Vector(r, 16)
		} else {
			c.Sim, c.HasSim = r.Float64(), true
		}
		req.Candidates = append(req.Candidates, c)
	}
	res, err := Rescore(context.Background(), &req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Ranked) > 3 || res.Stats.Scored+res.Stats.RemovedTotal() != 20 {
		t.Errorf("ranked %d, stats %+v", len(res.Ranked), res.Stats)
	}
	for i := 1; i < len(res.Ranked); i++ {
		if better(res.Ranked[i].Score, res.Ranked[i].ID, res.Ranked[i-1].Score, res.Ranked[i-1].ID) {
			t.Errorf("out of order at %d", i)
		}
	}
}

func TestRescoreRejectsBadInput(t *testing.T) {
	meta := temporal.Candidate{ID: 1, Valid: temporal.Always, Recorded: temporal.Always}
	for name, c := range map[string]struct {
		req  RescoreRequest
		want error
	}{
		"no vector, no sim": {RescoreRequest{Candidates: []RescoreCandidate{{Meta: meta}}}, ErrInvalid},
		"vector, no query":  {RescoreRequest{Candidates: []RescoreCandidate{{Vector: []float32{1, 0}, Meta: meta}}}, ErrInvalid},
		"dimension": {RescoreRequest{Query: []float32{1, 0, 0},
			Candidates: []RescoreCandidate{{Vector: []float32{1, 0}, Meta: meta}}}, ErrDimension},
		"NaN vector": {RescoreRequest{Query: []float32{1, 0},
			Candidates: []RescoreCandidate{{Vector: []float32{float32(math.NaN()), 0}, Meta: meta}}}, ErrNotFinite},
		"zero query": {RescoreRequest{Query: []float32{0, 0},
			Candidates: []RescoreCandidate{{Vector: []float32{1, 0}, Meta: meta}}}, ErrZeroVector},
		"NaN sim":           {RescoreRequest{Candidates: []RescoreCandidate{{Sim: math.NaN(), HasSim: true, Meta: meta}}}, ErrNotFinite},
		"sim out of [−1,1]": {RescoreRequest{Candidates: []RescoreCandidate{{Sim: 7, HasSim: true, Meta: meta}}}, ErrNotFinite},
		"bad meta": {RescoreRequest{Candidates: []RescoreCandidate{{Sim: 0.5, HasSim: true,
			Meta: temporal.Candidate{ID: 2, Access: -1}}}}, ErrInvalid},
		"negative k": {RescoreRequest{K: -1}, ErrInvalid},
		"bad params": {RescoreRequest{Params: temporal.Params{EventBoost: math.Inf(1)},
			Candidates: []RescoreCandidate{{Sim: 0.5, HasSim: true, Meta: meta}}}, ErrInvalid},
	} {
		if c.req.Params == (temporal.Params{}) {
			c.req.Params = temporal.Preset(temporal.MethodTidemark)
		}
		if _, err := Rescore(context.Background(), &c.req); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
}

// RescoreMany's result j equals Rescore's for query j: the same removals
// and the same ranking, scores within the float32 rounding of the two dot
// kernels (a swap is allowed only between scores that close).
func TestRescoreManyMatchesRescore(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 1))
	for _, dim := range []int{3, 17, 64, 768} {
		for _, n := range []int{0, 1, 5, 200, 1000} {
			qs := make([][]float32, 11)
			for j := range qs {
				qs[j] = testgen.Vector(r, dim)
			}
			req := RescoreRequest{Time: temporal.At(0), Params: temporal.Preset(temporal.MethodTidemark), K: 7}
			for i := 0; i < n; i++ {
				v := testgen.Vector(r, dim)
				if i%3 == 0 { // near the first query, so that scores spread
					for k := range v {
						v[k] = qs[0][k] + 0.3*v[k]
					}
				}
				req.Candidates = append(req.Candidates, RescoreCandidate{Vector: v, Meta: testgen.Meta(r, uint64(i))})
			}
			for _, m := range []temporal.Method{temporal.MethodTidemark, temporal.MethodArticle} {
				req.Params = temporal.Preset(m)
				many, err := RescoreMany(context.Background(), &req, qs)
				if err != nil {
					t.Fatal(err)
				}
				if len(many) != len(qs) {
					t.Fatalf("%d results for %d queries", len(many), len(qs))
				}
				for j, q := range qs {
					one := req
					one.Query = q
					want, err := Rescore(context.Background(), &one)
					if err != nil {
						t.Fatal(err)
					}
					got := many[j]
					what := fmt.Sprintf("dim %d n %d %v query %d", dim, n, m, j)
					if got.Stats != want.Stats || len(got.Ranked) != len(want.Ranked) || len(got.Removed) != len(want.Removed) {
						t.Fatalf("%s: stats %+v (%d ranked), Rescore %+v (%d ranked)", what, got.Stats, len(got.Ranked), want.Stats, len(want.Ranked))
					}
					for i := range got.Removed {
						if got.Removed[i] != want.Removed[i] {
							t.Fatalf("%s: removed %d = %+v, Rescore %+v", what, i, got.Removed[i], want.Removed[i])
						}
					}
					for i := range got.Ranked {
						g, w := got.Ranked[i], want.Ranked[i]
						// Rank by rank the scores agree; ids differ only
						// where two candidates' scores are that close.
						if math.Abs(g.Score-w.Score) > 1e-5 {
							t.Fatalf("%s: rank %d = %d (%v), Rescore %d (%v)", what, i, g.ID, g.Score, w.ID, w.Score)
						}
						if math.Abs(g.Signals.Sim-w.Signals.Sim) > 1e-6 && g.ID == w.ID {
							t.Fatalf("%s: rank %d sim %v, Rescore %v", what, i, g.Signals.Sim, w.Signals.Sim)
						}
					}
				}
			}
		}
	}
}

func TestRescoreManyRejectsBadInput(t *testing.T) {
	meta := temporal.Candidate{ID: 1, Valid: temporal.Always, Recorded: temporal.Always}
	p := temporal.Preset(temporal.MethodTidemark)
	vec := []RescoreCandidate{{Vector: []float32{1, 0}, Meta: meta}}
	for name, c := range map[string]struct {
		req  RescoreRequest
		qs   [][]float32
		want error
	}{
		"a similarity":  {RescoreRequest{Params: p, Candidates: []RescoreCandidate{{Sim: 0.5, HasSim: true, Meta: meta}}}, [][]float32{{1, 0}}, ErrInvalid},
		"Query set":     {RescoreRequest{Params: p, Query: []float32{1, 0}, Candidates: vec}, [][]float32{{1, 0}}, ErrInvalid},
		"dimension":     {RescoreRequest{Params: p, Candidates: vec}, [][]float32{{1, 0}, {1, 0, 0}}, ErrDimension},
		"NaN query":     {RescoreRequest{Params: p, Candidates: vec}, [][]float32{{float32(math.NaN()), 0}}, ErrNotFinite},
		"zero query":    {RescoreRequest{Params: p, Candidates: vec}, [][]float32{{0, 0}}, ErrZeroVector},
		"too many":      {RescoreRequest{Params: p, Candidates: vec}, make([][]float32, MaxRescoreQueries+1), ErrInvalid},
		"empty vector":  {RescoreRequest{Params: p, Candidates: []RescoreCandidate{{Vector: []float32{}, Meta: meta}}}, [][]float32{{1}}, ErrDimension},
		"negative k":    {RescoreRequest{Params: p, Candidates: vec, K: -1}, [][]float32{{1, 0}}, ErrInvalid},
		"bad candidate": {RescoreRequest{Params: p, Candidates: []RescoreCandidate{{Vector: []float32{1, 0}, Meta: temporal.Candidate{ID: 2, Access: -1}}}}, [][]float32{{1, 0}}, ErrInvalid},
	} {
		if _, err := RescoreMany(context.Background(), &c.req, c.qs); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
	if res, err := RescoreMany(context.Background(), &RescoreRequest{Params: p, Candidates: vec}, nil); err != nil || res != nil {
		t.Errorf("no queries: %v, %v", res, err)
	}
}

// Rescore and RescoreMany allocate per call (their results), not per
// candidate: a pool ten times larger allocates no more.
func TestRescoreAllocatesPerCallNotPerCandidate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	r := rand.New(rand.NewPCG(24, 1))
	allocs := func(n int) (one, many float64) {
		req := RescoreRequest{Time: temporal.At(0), Params: temporal.Preset(temporal.MethodTidemark), K: 5}
		for i := 0; i < n; i++ {
			req.Candidates = append(req.Candidates, RescoreCandidate{Vector: testgen.Vector(r, 32), Meta: testgen.Meta(r, uint64(i))})
		}
		qs := [][]float32{testgen.Vector(r, 32), testgen.Vector(r, 32)}
		single := req
		single.Query = qs[0]
		ctx := context.Background()
		Rescore(ctx, &single) // warm the pool
		RescoreMany(ctx, &req, qs)
		one = testing.AllocsPerRun(10, func() { Rescore(ctx, &single) })
		many = testing.AllocsPerRun(10, func() { RescoreMany(ctx, &req, qs) })
		return one, many
	}
	one100, many100 := allocs(100)
	one1000, many1000 := allocs(1000)
	if one1000 > one100+2 || many1000 > many100+2 {
		t.Errorf("allocations grow with the candidates: Rescore %v → %v, RescoreMany %v → %v (100 → 1000)", one100, one1000, many100, many1000)
	}
}

// RescoreRows over rows of a batch ranks, removes and explains exactly as
// Rescore over the same rows given as candidates (scores within the
// float32 round trip of λ through the half-life), for every preset, with
// random time contexts, rows in random order, repeated rows and k = 0, 1
// and 10.
func TestRescoreRowsMatchesRescore(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 1))
	const dim, groups = 8, 3
	q := testgen.Vector(r, dim)
	b := testgen.Batch(t, r, 400, dim, groups, q, NewBatch, (*Batch).Append)
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
	for _, p := range testgen.PresetsAndHolds() {
		for trial := range 20 {
			_, tq, lambdas := testgen.Query(r, dim, groups)
			rows := make([]int, r.IntN(150))
			sims := make([]float64, len(rows))
			req := RescoreRequest{Time: tq, Params: p, GroupLambda: lambdas, K: []int{0, 1, 10}[trial%3]}
			for i := range rows {
				rows[i] = r.IntN(b.Len())
				if i > 0 && r.IntN(10) == 0 {
					rows[i] = rows[i-1]
				}
				sims[i] = testgen.F32(r.Float64()*2 - 1)
				req.Candidates = append(req.Candidates, RescoreCandidate{Sim: sims[i], HasSim: true,
					Meta: b.Candidate(rows[i], sims[i], 0), Group: b.Group[rows[i]]})
			}
			want, err := Rescore(context.Background(), &req)
			if err != nil {
				t.Fatal(err)
			}
			req.Candidates = nil
			got, err := RescoreRows(context.Background(), b, rows, sims, &req)
			if err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("%v trial %d (k %d, %d rows)", p.Method, trial, req.K, len(rows))
			if len(got.Ranked) != len(want.Ranked) || len(got.Removed) != len(want.Removed) || got.Stats != want.Stats {
				t.Fatalf("%s: %d ranked, %d removed, %+v; Rescore %d, %d, %+v", what,
					len(got.Ranked), len(got.Removed), got.Stats, len(want.Ranked), len(want.Removed), want.Stats)
			}
			for i, w := range want.Ranked {
				g := got.Ranked[i]
				if g.ID != w.ID || !near(g.Score, w.Score) || !near(g.PoolFree, w.PoolFree) ||
					!near(g.Signals.Decay, w.Signals.Decay) || !near(g.Signals.Confidence, w.Signals.Confidence) ||
					g.Signals.State != w.Signals.State || g.Signals.Sim != w.Signals.Sim {
					t.Fatalf("%s rank %d: %+v, Rescore %+v", what, i, g, w)
				}
			}
			for i, w := range want.Removed {
				if got.Removed[i] != w {
					t.Fatalf("%s removed %d: %v, Rescore %v", what, i, got.Removed[i], w)
				}
			}
		}
	}
}

func TestRescoreRowsRejectsBadInput(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 1))
	b := testgen.Batch(t, r, 10, 4, 1, testgen.Vector(r, 4), NewBatch, (*Batch).Append)
	p := temporal.Preset(temporal.MethodTidemark)
	short := testgen.Batch(t, r, 10, 4, 1, testgen.Vector(r, 4), NewBatch, (*Batch).Append)
	short.Degree = short.Degree[:9] // a column filled by hand, one short
	for name, c := range map[string]struct {
		rows  []int
		sims  []float64
		req   RescoreRequest
		batch *Batch
	}{
		"NaN similarity":    {[]int{0, 1}, []float64{0.1, math.NaN()}, RescoreRequest{Params: p}, nil},
		"similarity past 1": {[]int{0}, []float64{1.5}, RescoreRequest{Params: p}, nil},
		"infinite sim":      {[]int{0}, []float64{math.Inf(-1)}, RescoreRequest{Params: p}, nil},
		"a short column":    {[]int{0}, []float64{0.1}, RescoreRequest{Params: p}, short},
		"row past the end":  {[]int{0, 10}, []float64{0.1, 0.2}, RescoreRequest{Params: p}, nil},
		"negative row":      {[]int{-1}, []float64{0.1}, RescoreRequest{Params: p}, nil},
		"sims ≠ rows":       {[]int{0, 1}, []float64{0.1}, RescoreRequest{Params: p}, nil},
		"negative k":        {[]int{0}, []float64{0.1}, RescoreRequest{Params: p, K: -1}, nil},
		"candidates too":    {[]int{0}, []float64{0.1}, RescoreRequest{Params: p, Candidates: []RescoreCandidate{{Sim: 0.1, HasSim: true}}}, nil},
		"a query vector":    {[]int{0}, []float64{0.1}, RescoreRequest{Params: p, Query: []float32{1, 0, 0, 0}}, nil},
		"NaN time":          {[]int{0}, []float64{0.1}, RescoreRequest{Params: p, Time: temporal.At(math.NaN())}, nil},
		"bad params":        {[]int{0}, []float64{0.1}, RescoreRequest{Params: temporal.Params{EventBoost: math.Inf(1)}}, nil},
		"group without λ":   {[]int{0}, []float64{0.1}, RescoreRequest{Params: temporal.Preset(temporal.MethodVDD)}, nil},
	} {
		bb := b
		if c.batch != nil {
			bb = c.batch
		}
		if _, err := RescoreRows(context.Background(), bb, c.rows, c.sims, &c.req); !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrNotFinite) {
			t.Errorf("%s: err = %v, want ErrInvalid or ErrNotFinite", name, err)
		}
	}
	if _, err := RescoreRows(context.Background(), nil, nil, nil, &RescoreRequest{Params: p}); !errors.Is(err, ErrInvalid) {
		t.Errorf("no batch: err = %v, want ErrInvalid", err)
	}
}
