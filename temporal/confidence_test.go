package temporal

import (
	"fmt"
	"math"
	"testing"
)

func approx(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol || math.IsNaN(got) {
		t.Errorf("%s = %.6f, want %.6f ± %g", name, got, want, tol)
	}
}

// SmartVector §5.1: "For C0 = 0.85, H = 30, and no feedback or access, the
// closed form gives 0.85 → 0.425 at day 30, 0.21 at 60, 0.11 at 90 (DORMANT
// threshold crossed), 0.013 at 180."
func TestConfidenceDecayTrajectory(t *testing.T) {
	p := DefaultConfidence()
	for _, c := range []struct {
		day, want, tol float64
		dormant        bool
	}{
		{0, 0.85, 1e-12, false},
		{30, 0.425, 1e-12, false},
		{60, 0.21, 0.005, false},
		{90, 0.11, 0.005, true},
		{180, 0.013, 0.0005, true},
	} {
		got := Confidence(p, 0.85, c.day, 0, 0, 0)
		approx(t, fmt.Sprint("confidence at day ", c.day), got, c.want, c.tol)
		if st := NextStatus(Active, got, p); (st == Dormant) != c.dormant {
			t.Errorf("day %v: confidence %.4f → status %v, want dormant=%v", c.day, got, st, c.dormant)
		}
	}
	// The exact closed form at 60 and 90 days.
	approx(t, "day 60 exact", Confidence(p, 0.85, 60, 0, 0, 0), 0.2125, 1e-12)
	approx(t, "day 90 exact", Confidence(p, 0.85, 90, 0, 0, 0), 0.10625, 1e-12)
}

func TestConfidenceFeedbackAndAccess(t *testing.T) {
	p := DefaultConfidence()
	// Feedback is linear inside the clip: +0.03 per positive, −0.08 per negative.
	approx(t, "2 positive", Confidence(p, 0.5, 0, 2, 0, 0), 0.56, 1e-12)
	approx(t, "1 negative", Confidence(p, 0.5, 0, 0, 1, 0), 0.42, 1e-12)
	// Clamps at both ends.
	approx(t, "clamp high", Confidence(p, 0.9, 0, 100, 0, 0), 1.0, 0)
	approx(t, "clamp low", Confidence(p, 0.2, 0, 0, 100, 0), 0.01, 1e-15)
	// No access boost at 0 accesses; β·ln(1+n) otherwise, capped at 1.
	if Confidence(p, 0.5, 10, 0, 0, 0) != Confidence(p, 0.5, 10, 0, 0, 0)+0.01*math.Log1p(0) {
		t.Error("zero accesses changed the confidence")
	}
	approx(t, "9 accesses", Confidence(p, 0.5, 0, 0, 0, 9), 0.5+0.01*math.Log(10), 1e-12)
	approx(t, "access cap", Confidence(p, 1.0, 0, 0, 0, 1e9), 1.0, 0)
	// The access term is added after the clip: a floored memory still gains it.
	approx(t, "floor then access", Confidence(p, 0.2, 0, 0, 100, 9), 0.01+0.01*math.Log(10), 1e-12)
	// A negative age (dated in the future) does not raise confidence above C0.
	approx(t, "future", Confidence(p, 0.5, -10, 0, 0, 0), 0.5, 0)
}

func TestRelationalBonus(t *testing.T) {
	approx(t, "degree 0", RelationalBonus(0), 0, 0)
	approx(t, "degree 1", RelationalBonus(1), 0.1*math.Ln2, 1e-15)
	approx(t, "degree 10", RelationalBonus(10), 0.1*math.Log(11), 1e-15)
	// Capped at 0.3 from degree e³ − 1 ≈ 19.09 on.
	approx(t, "degree 20", RelationalBonus(20), 0.3, 0)
	approx(t, "degree 1e6", RelationalBonus(1e6), 0.3, 0)
	if RelationalBonus(19) >= 0.3 {
		t.Errorf("degree 19 already capped: %v", RelationalBonus(19))
	}
}

func TestLifecycle(t *testing.T) {
	p := DefaultConfidence()
	for _, c := range []struct {
		from Status
		conf float64
		want Status
	}{
		{Unconsolidated, 0.9, Active},
		{Unconsolidated, 0.05, Active}, // promoted first, judged next run
		{Active, 0.15, Active},
		{Active, 0.1499, Dormant},
		{Dormant, 0.2, Active},
		{Dormant, 0.1, Dormant},
		{Deprecated, 0.9, Deprecated},
		{Archived, 0.9, Archived},
	} {
		if got := NextStatus(c.from, c.conf, p); got != c.want {
			t.Errorf("NextStatus(%v, %v) = %v, want %v", c.from, c.conf, got, c.want)
		}
	}
}

// SmartVector §6.3: "an update to a 'sky color' vector propagates a 15%
// penalty to a directly dependent 'atmospheric model' vector and a 7.5%
// penalty to a second-hop 'sensor calibration' vector"; the traversal halts
// at D_max = 2.
func TestRipple(t *testing.T) {
	p := DefaultRipple()
	approx(t, "depth 0", RipplePenalty(p, 0), 0.15, 1e-15)
	approx(t, "depth 1", RipplePenalty(p, 1), 0.075, 1e-15)
	approx(t, "depth 2", RipplePenalty(p, 2), 0, 0)

	// sky(1) ← atmosphere(2) ← sensors(3) ← dashboard(4), and a cycle back
	// to sky, and a diamond: 1 ← 5 ← 3.
	graph := map[uint64][]uint64{1: {2, 5}, 2: {3}, 3: {4, 1}, 5: {3}}
	hits := Ripple(p, 1, func(id uint64) []uint64 { return graph[id] })
	want := map[uint64]float64{2: 0.15, 5: 0.15, 3: 0.075}
	if len(hits) != len(want) {
		t.Fatalf("ripple hit %v, want %v", hits, want)
	}
	for _, h := range hits {
		if w, ok := want[h.ID]; !ok || math.Abs(h.Penalty-w) > 1e-15 {
			t.Errorf("ripple hit %d with %v, want %v", h.ID, h.Penalty, w)
		}
	}

	// The fan-out cap follows only the first FanOut dependants.
	p.FanOut = 1
	hits = Ripple(p, 1, func(id uint64) []uint64 { return graph[id] })
	for _, h := range hits {
		if h.ID == 5 {
			t.Errorf("fan-out 1 still reached the second dependant: %v", hits)
		}
	}
}

// Under tidemark's preset the clock stops for versioned memories
// (HoldVersioned): their confidence is their authority and feedback
// whatever their age; static memories' scoring signal keeps the decay (a
// recency prior; their reported confidence holds, see
// TestStaticWikiFactKeepsItsPrior), an event's decays, and SmartVector's
// preset decays all three, as its §5 does.
func TestConfidenceHolds(t *testing.T) {
	p := Preset(MethodTidemark)
	if !p.Confidence.HoldVersioned || p.Confidence.HoldStatic || !p.Confidence.Reported().HoldStatic {
		t.Fatal("tidemark's preset must hold versioned memories in scoring, and static ones in what it reports")
	}
	for _, m := range Methods() {
		if c := Preset(m).Confidence; m != MethodTidemark && (c.HoldVersioned || c.HoldStatic) {
			t.Errorf("%v holds a clock (%+v): the reproduction presets decay as their sources do", m, c)
		}
	}
	cand := func(id uint64, k Kind) Candidate {
		return Candidate{ID: id, Sim: 0.5, Kind: k, CreatedAt: -300, Valid: Always, Recorded: Window{-300, Open},
			BaseConfidence: 0.9, ConfidenceFrom: -300}
	}
	cands := []Candidate{cand(1, Versioned), cand(2, Static), cand(3, Event)}
	conf := func(p Params) map[uint64]float64 {
		res, err := ScorePool(At(0), p, cands)
		if err != nil {
			t.Fatal(err)
		}
		got := map[uint64]float64{}
		for _, r := range res.Ranked {
			got[r.ID] = r.Signals.Confidence
		}
		return got
	}
	decayed := Confidence(p.Confidence, 0.9, 300, 0, 0, 0) // 0.9·2^(−10) → clipped to 0.01
	if decayed != 0.01 {
		t.Fatalf("decayed confidence %v, want the clip 0.01", decayed)
	}
	got := conf(p)
	if got[1] != 0.9 || got[2] != decayed || got[3] != decayed {
		t.Errorf("tidemark: versioned %v static %v event %v, want 0.9 %v %v", got[1], got[2], got[3], decayed, decayed)
	}
	got = conf(Preset(MethodSmartVector))
	if got[1] != decayed || got[2] != decayed || got[3] != decayed {
		t.Errorf("smartvector: versioned %v static %v event %v, want %v for all", got[1], got[2], got[3], decayed)
	}
	for _, c := range []struct {
		p    ConfidenceParams
		k    Kind
		want float64
	}{
		{p.Confidence, Versioned, 0}, {p.Confidence, Static, 7}, {p.Confidence, Event, 7},
		{p.Confidence.Reported(), Static, 0},
		{DefaultConfidence(), Versioned, 7}, {DefaultConfidence(), Static, 7},
		{DefaultConfidence().Reported(), Static, 0}, {DefaultConfidence().Reported(), Versioned, 7},
		{DefaultConfidence().Reported(), Event, 7},
	} {
		if a := c.p.Age(c.k, 10, 3); a != c.want {
			t.Errorf("Age(%v) with hold versioned %v static %v = %v, want %v", c.k, c.p.HoldVersioned, c.p.HoldStatic, a, c.want)
		}
	}
}

// The observation: a true static fact from a wiki (C0 = 0.75)
// reported confidence 0.01 after 18 months. The confidence shown for it
// (Reported) is its authority prior under every method; evidence still
// moves it: two positive feedbacks +0.06, one negative −0.08, twelve
// accesses +0.01·ln 13.
func TestStaticWikiFactKeepsItsPrior(t *testing.T) {
	const age = 548 // 18 months in days
	wiki := Candidate{ID: 1, Sim: 0.6, Kind: Static, CreatedAt: -age, Valid: Always, Recorded: Always,
		HalfLife: SmartVectorHalfLife, BaseConfidence: SourceWiki.Authority(), ConfidenceFrom: -age}
	for _, m := range Methods() {
		p := Preset(m)
		if got := LiveConfidence(p.Confidence.Reported(), &wiki, 0); got != 0.75 {
			t.Errorf("%v: shown confidence %v after 18 months, want the wiki prior 0.75", m, got)
		}
	}
	// SmartVector's own clock is what produced the observation.
	if got := LiveConfidence(DefaultConfidence(), &wiki, 0); got != 0.01 {
		t.Errorf("SmartVector §5 after 18 months: %v, want the clip 0.01", got)
	}
	shown := DefaultConfidence().Reported()
	w := wiki
	w.Positive, w.Negative, w.Access = 2, 1, 12
	approx(t, "evidence", LiveConfidence(shown, &w, 0), 0.75+0.06-0.08+0.01*math.Log(13), 1e-12)
	w = wiki
	w.BaseConfidence = 0.75 - 0.15 // a ripple from a superseded dependency
	approx(t, "ripple", LiveConfidence(shown, &w, 0), 0.60, 1e-12)
	w = wiki
	w.Negative = 9 // 0.75 − 0.72 = 0.03: dormant through evidence alone
	approx(t, "refuted", LiveConfidence(shown, &w, 0), 0.03, 1e-12)
	if NextStatus(Active, LiveConfidence(shown, &w, 0), shown) != Dormant {
		t.Error("a refuted static fact must go dormant")
	}
	// Every preset reports the held confidence, whatever its scoring
	// signal (tidemark's keeps the decay as a recency prior).
	for _, m := range Methods() {
		if got := LiveConfidence(Preset(m).Confidence.Reported(), &wiki, 0); got != 0.75 {
			t.Errorf("%v reports %v, want 0.75", m, got)
		}
	}
}
