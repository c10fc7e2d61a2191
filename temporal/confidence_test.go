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

// Under HoldVersioned (tidemark's preset) a versioned memory's confidence
// is its authority whatever its age; a static one still decays.
func TestConfidenceHoldVersioned(t *testing.T) {
	p := Preset(MethodTidemark)
	if !p.Confidence.HoldVersioned || Preset(MethodSmartVector).Confidence.HoldVersioned {
		t.Fatal("HoldVersioned is tidemark's alone")
	}
	cands := []Candidate{
		{ID: 1, Sim: 0.5, Kind: Versioned, CreatedAt: -300, Valid: Window{-300, Open}, Recorded: Window{-300, Open}, BaseConfidence: 0.9, ConfidenceFrom: -300},
		{ID: 2, Sim: 0.5, Kind: Static, CreatedAt: -300, Valid: Window{-Open, Open}, Recorded: Window{-300, Open}, BaseConfidence: 0.9, ConfidenceFrom: -300},
	}
	res, err := ScorePool(At(0), p, cands)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint64]float64{}
	for _, r := range res.Ranked {
		got[r.ID] = r.Signals.Confidence
	}
	if got[1] != 0.9 {
		t.Errorf("versioned confidence %v, want its authority 0.9", got[1])
	}
	if want := Confidence(p.Confidence, 0.9, 300, 0, 0, 0); math.Abs(got[2]-want) > 1e-12 || got[2] > 0.01 {
		t.Errorf("static confidence %v, want the decayed %v", got[2], want)
	}
	if a := p.Confidence.Age(Versioned, 10, 3); a != 0 {
		t.Errorf("Age(versioned) = %v", a)
	}
	if a := DefaultConfidence().Age(Versioned, 10, 3); a != 7 {
		t.Errorf("Age without hold = %v", a)
	}
}
