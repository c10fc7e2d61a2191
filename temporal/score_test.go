package temporal

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func randCandidates(r *rand.Rand, n int) []Candidate {
	cs := make([]Candidate, n)
	for i := range cs {
		c := Candidate{
			ID: uint64(r.IntN(n * 4)), Sim: r.Float64()*2 - 1, Kind: Kind(r.IntN(3)), Status: Status(r.IntN(5)),
			CreatedAt: -r.Float64() * 800, Valid: Always, Recorded: Always,
			HalfLife: []float64{1, 7, 30, 90, 365}[r.IntN(5)], Floor: []float64{0, 0, 0.1, 0.7}[r.IntN(4)],
			Lambda: r.Float64(), BaseConfidence: r.Float64(), Access: float64(r.IntN(50)),
			Positive: float64(r.IntN(5)), Negative: float64(r.IntN(3)), Degree: float64(r.IntN(30)),
		}
		c.ConfidenceFrom = c.CreatedAt
		if r.IntN(3) == 0 {
			c.Valid = Window{From: c.CreatedAt, To: c.CreatedAt + r.Float64()*900}
		}
		if r.IntN(4) == 0 {
			c.Recorded = Window{From: c.CreatedAt + r.Float64()*5, To: c.CreatedAt + r.Float64()*1000}
		}
		if r.IntN(10) == 0 {
			c.Sim = cs[r.IntN(i+1)].Sim // ties
		}
		cs[i] = c
	}
	return cs
}

// Property: a masked candidate is never ranked, every candidate is either
// ranked or removed exactly once, and the ranking is sorted (score
// descending, then id).
func TestScorePoolProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 300; iter++ {
		cands := randCandidates(r, 1+r.IntN(60))
		q := At(0)
		if r.IntN(2) == 0 {
			q.HasRange, q.Range = true, Window{From: -400, To: -10}
		}
		if r.IntN(3) == 0 {
			q.Kinds = KindsOf(Static, Versioned)
		}
		if r.IntN(3) == 0 {
			q.Statuses = StatusesOf(Active, Unconsolidated)
		}
		for _, m := range Methods() {
			p := Preset(m)
			res, err := ScorePool(q, p, cands)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Ranked)+len(res.Removed) != len(cands) {
				t.Fatalf("%v: %d ranked + %d removed != %d", m, len(res.Ranked), len(res.Removed), len(cands))
			}
			removed := map[int]Reason{}
			ri := 0
			for i := range cands {
				if ri < len(res.Removed) && res.Removed[ri].ID == cands[i].ID && Mask(q, &p, &cands[i]) != ReasonNone {
					removed[i] = res.Removed[ri].Reason
					ri++
				}
			}
			if ri != len(res.Removed) {
				t.Fatalf("%v: removed list is not the masked candidates in input order", m)
			}
			for i, reason := range removed {
				if want := Mask(q, &p, &cands[i]); want != reason {
					t.Errorf("%v: candidate %d removed for %v, Mask says %v", m, i, reason, want)
				}
			}
			if !sort.SliceIsSorted(res.Ranked, func(a, b int) bool { return Less(res.Ranked[a], res.Ranked[b]) }) {
				t.Fatalf("%v: ranking not sorted", m)
			}
			for _, s := range res.Ranked {
				if math.IsNaN(s.Score) || math.IsInf(s.Score, 0) {
					t.Fatalf("%v: score %v", m, s.Score)
				}
				if p.MaskExpired && s.Signals.State == Expired {
					t.Fatalf("%v: an expired candidate was ranked", m)
				}
			}
		}
	}
}

func TestMaskReasons(t *testing.T) {
	base := Candidate{ID: 1, Sim: 0.5, Kind: Versioned, Status: Active, CreatedAt: -10, Valid: Always,
		Recorded: Window{From: -10, To: Open}, HalfLife: 30}
	p := Preset(MethodTidemark)
	for _, c := range []struct {
		name string
		mod  func(*Candidate, *Query, *Params)
		want Reason
	}{
		{"kept", func(*Candidate, *Query, *Params) {}, ReasonNone},
		{"not yet recorded", func(c *Candidate, q *Query, _ *Params) { q.TxAt = -20 }, ReasonNotYetRecorded},
		{"superseded", func(c *Candidate, _ *Query, _ *Params) { c.Recorded.To = -1 }, ReasonSuperseded},
		{"superseded at the instant", func(c *Candidate, _ *Query, _ *Params) { c.Recorded.To = 0 }, ReasonSuperseded},
		{"as of before the retirement", func(c *Candidate, q *Query, _ *Params) { c.Recorded.To = -1; q.TxAt = -2 }, ReasonNone},
		{"kind filter", func(_ *Candidate, q *Query, _ *Params) { q.Kinds = KindsOf(Event) }, ReasonFilteredKind},
		{"status filter", func(_ *Candidate, q *Query, _ *Params) { q.Statuses = StatusesOf(Archived) }, ReasonFilteredStatus},
		{"not yet valid", func(c *Candidate, _ *Query, _ *Params) { c.Valid.From = 3 }, ReasonNotYetValid},
		{"expired versioned", func(c *Candidate, _ *Query, _ *Params) { c.Valid.To = -1 }, ReasonExpiredVersioned},
		{"expired event", func(c *Candidate, _ *Query, _ *Params) { c.Kind = Event; c.Valid.To = -1 }, ReasonExpiredEvent},
		{"expired static", func(c *Candidate, _ *Query, _ *Params) { c.Kind = Static; c.Valid.To = -1 }, ReasonExpiredStatic},
		{"as of inside the window", func(c *Candidate, q *Query, _ *Params) { c.Valid.To = -1; q.At = -5 }, ReasonNone},
		{"out of range", func(_ *Candidate, q *Query, _ *Params) { q.HasRange, q.Range = true, Window{-5, 0} }, ReasonOutOfTimeRange},
		{"relevance gate", func(_ *Candidate, _ *Query, p *Params) { p.MinSim = 0.6 }, ReasonBelowRelevanceGate},
		{"stale versioned", func(_ *Candidate, _ *Query, p *Params) { p.StaleBelow = 0.9 }, ReasonStale},
		{"stale static", func(c *Candidate, _ *Query, p *Params) { c.Kind = Static; p.StaleBelow = 0.9 }, ReasonStaleStatic},
		{"plain ignores time", func(c *Candidate, _ *Query, p *Params) { *p = Preset(MethodPlain); c.Valid.To = -1; c.Recorded.To = -1 }, ReasonNone},
	} {
		cand, q, pp := base, At(0), p
		c.mod(&cand, &q, &pp)
		res, err := ScorePool(q, pp, []Candidate{cand})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := ReasonNone
		if len(res.Removed) == 1 {
			got = res.Removed[0].Reason
		}
		if got != c.want || len(res.Ranked)+len(res.Removed) != 1 {
			t.Errorf("%s: reason %v, want %v (%d ranked)", c.name, got, c.want, len(res.Ranked))
		}
	}
}

// The four-signal sum, computed by hand for one candidate.
func TestFourSignalScore(t *testing.T) {
	c := Candidate{ID: 7, Sim: 0.8, Kind: Static, CreatedAt: -30, Valid: Always, Recorded: Always, HalfLife: 30,
		BaseConfidence: 0.85, ConfidenceFrom: -30, Access: 4, Positive: 2, Negative: 1, Degree: 3}
	res, err := ScorePool(At(0), Preset(MethodSmartVector), []Candidate{c})
	if err != nil {
		t.Fatal(err)
	}
	conf := math.Min(1, math.Min(1, math.Max(0.01, 0.425+0.06-0.08))+0.01*math.Log(5))
	want := 0.35*0.8 + 0.25*0.5 + 0.25*conf + 0.15*0.1*math.Log(4)
	approx(t, "four-signal score", res.Ranked[0].Score, want, 1e-12)
	approx(t, "confidence signal", res.Ranked[0].Signals.Confidence, conf, 1e-12)

	// SmartVector's temporal signal collapses to 0.05 outside the window.
	c.Valid = Window{From: -Open, To: -1}
	res, _ = ScorePool(At(0), Preset(MethodTemporal), []Candidate{c})
	approx(t, "out-of-window temporal", res.Ranked[0].Signals.Temporal, 0.05, 0)
	approx(t, "M2 score", res.Ranked[0].Score, 0.6*0.8+0.4*0.05, 1e-12)

	// VDD: sim × exp(−λ(t)·age), with the candidate's drift λ.
	c.Valid, c.Lambda = Always, 0.02
	res, _ = ScorePool(At(0), Preset(MethodVDD), []Candidate{c})
	approx(t, "vdd score", res.Ranked[0].Score, 0.8*math.Exp(-0.02*30), 1e-12)
}

func TestTiesBrokenByID(t *testing.T) {
	cs := []Candidate{{ID: 9}, {ID: 3}, {ID: 5}}
	for i := range cs {
		cs[i].Sim, cs[i].Valid, cs[i].Recorded = 0.5, Always, Always
	}
	res, err := ScorePool(At(0), Preset(MethodPlain), cs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ranked[0].ID != 3 || res.Ranked[1].ID != 5 || res.Ranked[2].ID != 9 {
		t.Errorf("tie order %v, want ids 3, 5, 9", res.Ranked)
	}
	if got := res.TopK(2); len(got) != 2 || got[1].ID != 5 {
		t.Errorf("TopK(2) = %v", got)
	}
}

func TestScorePoolRejectsBadInput(t *testing.T) {
	good := Candidate{ID: 1, Sim: 0.5, Valid: Always, Recorded: Always}
	for name, mod := range map[string]func(*Candidate, *Params){
		"NaN sim":           func(c *Candidate, _ *Params) { c.Sim = math.NaN() },
		"Inf sim":           func(c *Candidate, _ *Params) { c.Sim = math.Inf(1) },
		"NaN created":       func(c *Candidate, _ *Params) { c.CreatedAt = math.NaN() },
		"NaN window":        func(c *Candidate, _ *Params) { c.Valid.To = math.NaN() },
		"negative access":   func(c *Candidate, _ *Params) { c.Access = -1 },
		"bad kind":          func(c *Candidate, _ *Params) { c.Kind = 7 },
		"NaN weight":        func(_ *Candidate, p *Params) { p.Weights.Sim = math.NaN() },
		"negative weight":   func(_ *Candidate, p *Params) { p.Weights.Time = -0.1 },
		"Inf event boost":   func(_ *Candidate, p *Params) { p.EventBoost = math.Inf(1) },
		"bad combine":       func(_ *Candidate, p *Params) { p.Combine = 9 },
		"negative beta":     func(_ *Candidate, p *Params) { p.Confidence.Beta = -2 },
		"negative min":      func(_ *Candidate, p *Params) { p.Confidence.Min = -0.5 },
		"max below min":     func(_ *Candidate, p *Params) { p.Confidence.Max = 0.005 },
		"NaN confidence H":  func(_ *Candidate, p *Params) { p.Confidence.HalfLife = math.NaN() },
		"negative halflife": func(c *Candidate, _ *Params) { c.HalfLife = -1 },
		"negative boost":    func(_ *Candidate, p *Params) { p.EventBoost = -3 },
		"gate above 1":      func(_ *Candidate, p *Params) { p.EventGateFactor = 2 },
		"negative penalty":  func(_ *Candidate, p *Params) { p.RelevancePenalty = -2 },
		"negative outside":  func(_ *Candidate, p *Params) { p.OutOfWindow = -0.1 },
		"floor above 1":     func(c *Candidate, _ *Params) { c.Floor = 1.5 },
	} {
		c, p := good, Preset(MethodTidemark)
		mod(&c, &p)
		if _, err := ScorePool(At(0), p, []Candidate{c}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := ScorePool(At(0), Preset(MethodTidemark), []Candidate{good}); err != nil {
		t.Errorf("good candidate rejected: %v", err)
	}
}

func TestParseMethod(t *testing.T) {
	for _, name := range []string{"plain", "temporal", "confidence", "smartvector", "article", "vdd", "tidemark"} {
		m, err := ParseMethod(name)
		if err != nil || m.String() != name {
			t.Errorf("ParseMethod(%q) = %v, %v", name, m, err)
		}
		if err := Preset(m).Validate(); err != nil {
			t.Errorf("preset %s invalid: %v", name, err)
		}
	}
	if _, err := ParseMethod("bm25"); err == nil {
		t.Error("unknown method accepted")
	}
}

// VDD's preset has no notion of validity: a memory past its window decays
// by its age like any other instead of keeping SmartVector's floor.
func TestIgnoreValidity(t *testing.T) {
	old := Candidate{ID: 1, Sim: 0.9, Kind: Versioned, CreatedAt: -300, Valid: Window{-300, -150},
		Recorded: Window{-300, Open}, HalfLife: 30, BaseConfidence: 0.9, ConfidenceFrom: -300}
	cur := Candidate{ID: 2, Sim: 0.8, Kind: Versioned, CreatedAt: -150, Valid: Window{-150, Open},
		Recorded: Window{-150, Open}, HalfLife: 30, BaseConfidence: 0.9, ConfidenceFrom: -150}
	p := Preset(MethodVDD)
	p.AdaptiveDecay = false // the half-life's λ, not a drift group's
	res, err := ScorePool(At(0), p, []Candidate{old, cur})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ranked[0].ID != 2 {
		t.Fatalf("the older version outranks its successor: %+v", res.Ranked)
	}
	for _, r := range res.Ranked {
		if want := r.Signals.Decay; r.Signals.Temporal != want {
			t.Errorf("%d: temporal %v, want its decay %v", r.ID, r.Signals.Temporal, want)
		}
	}
	p.IgnoreValidity = false
	res, _ = ScorePool(At(0), p, []Candidate{old, cur})
	if res.Ranked[0].ID != 1 {
		t.Fatalf("without IgnoreValidity the floor 0.05 should lift the old version: %+v", res.Ranked)
	}
}

// The pool-free score of the article's reranker, worked by hand. x is a
// static memory with cosine 0.5, 10 days old, half-life 10 (decay 0.5).
// Beside a closer, older y (cosine 0.9, 20 days) x is the pool's minimum:
// sim_norm 0, penalised (0 < 0.15), recency 1, score 0.3 × (0.6·0 +
// 0.4·0.5·1) = 0.06. Beside a weaker, fresh z (cosine 0.3, 0 days) x is the
// maximum: sim_norm 1, recency 0, score 0.6·1 + 0.4·0.5·0 = 0.6. Its
// pool-free score is the formula with the raw cosine, recency 1 and no
// penalty in both pools: 0.6·0.5 + 0.4·0.5 = 0.5.
func TestPoolFreeScoreWorked(t *testing.T) {
	cand := func(id uint64, sim, age float64) Candidate {
		return Candidate{ID: id, Sim: sim, Kind: Static, CreatedAt: -age, Valid: Always, Recorded: Always,
			HalfLife: 10, BaseConfidence: 0.75, ConfidenceFrom: -age}
	}
	x, y, z := cand(1, 0.5, 10), cand(2, 0.9, 20), cand(3, 0.3, 0)
	p := Preset(MethodArticle)
	if !p.Pooled() {
		t.Fatal("the article's reranker pools")
	}
	for _, c := range []struct {
		name        string
		pool        []Candidate
		score, free float64
	}{
		{"beside y", []Candidate{x, y}, 0.06, 0.5},
		{"beside z", []Candidate{x, z}, 0.6, 0.5},
		{"alone", []Candidate{x}, 0.6*1 + 0.4*0.5*1, 0.5},
	} {
		res, err := ScorePool(At(0), p, c.pool)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Ranked {
			if r.ID != 1 {
				continue
			}
			approx(t, c.name+" score", r.Score, c.score, 1e-12)
			approx(t, c.name+" pool-free", r.PoolFree, c.free, 1e-12)
			approx(t, c.name+" PoolFreeScore", PoolFreeScore(&p, &r.Signals), c.free, 1e-12)
		}
	}
	// An open event keeps its boost and its gate: cosine 0.1 < floor 0.2
	// halves the boost, so temporal = 0.5 × 1.2 × 0.5 = 0.3.
	e := cand(4, 0.1, 10)
	e.Kind, e.Valid = Event, Window{From: -10, To: 5}
	res, err := ScorePool(At(0), p, []Candidate{e, y})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Ranked {
		if r.ID == 4 {
			approx(t, "gated event pool-free", r.PoolFree, 0.6*0.1+0.4*0.3, 1e-12)
		}
	}
}

// Property: without pool statistics the pool-free score is the score,
// bit for bit; with them it does not depend on the pool — the same
// candidate scored in random pools of random others gets one pool-free
// score.
func TestPoolFreeScoreProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 200; iter++ {
		cands := randCandidates(r, 2+r.IntN(40))
		for i := range cands {
			cands[i].ID = uint64(i) // unique, to find candidate 0 again
		}
		for _, m := range Methods() {
			p := Preset(m)
			res, err := ScorePool(At(0), p, cands)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range res.Ranked {
				if !p.Pooled() && s.PoolFree != s.Score {
					t.Fatalf("%v: pool-free %v ≠ score %v without pool statistics", m, s.PoolFree, s.Score)
				}
			}
			if !p.Pooled() {
				continue
			}
			// Candidate 0 in a random sub-pool.
			sub := []Candidate{cands[0]}
			for _, c := range cands[1:] {
				if r.IntN(2) == 0 {
					sub = append(sub, c)
				}
			}
			a, err := ScorePool(At(0), p, sub)
			if err != nil {
				t.Fatal(err)
			}
			free := map[uint64]float64{}
			for _, s := range res.Ranked {
				free[s.ID] = s.PoolFree
			}
			for _, s := range a.Ranked {
				if w, ok := free[s.ID]; ok && s.ID == 0 && s.PoolFree != w {
					t.Fatalf("%v: candidate %d pool-free %v in one pool, %v in another", m, s.ID, s.PoolFree, w)
				}
			}
		}
	}
}
