package temporal

import (
	"math"
	"testing"
)

func TestDecay(t *testing.T) {
	// λ = ln 2 / half-life: one half-life halves the signal.
	approx(t, "λ(60)", Lambda(60), math.Ln2/60, 1e-18)
	approx(t, "one half-life", Decay(Lambda(60), 60, 0), 0.5, 1e-15)
	approx(t, "article announcement (0.25 d, H=60)", Decay(Lambda(60), 0.25, 0), 0.997, 0.0005)
	approx(t, "article policy_v2 (175 d, H=60)", Decay(Lambda(60), 175, 0), 0.132, 0.0005)
	approx(t, "SmartVector 2^(−45/30)", Decay(Lambda(30), 45, 0), 0.3536, 0.00005)
	approx(t, "negative age is zero", Decay(Lambda(30), -5, 0), 1, 0)
	approx(t, "no half-life never decays", Decay(Lambda(0), 1e6, 0), 1, 0)
	approx(t, "infinite half-life never decays", Decay(Lambda(math.Inf(1)), 1e6, 0), 1, 0)
	// Floors: a theorem from 1954 keeps competing on meaning.
	m := ProfileFor("mathematics")
	f := DecayFloor("mathematics", Static)
	approx(t, "mathematics/static floor", f, 0.95, 0)
	approx(t, "floored theorem", Decay(m.Lambda(), 365*70, f), 0.95, 0)
	approx(t, "reference/static floor", DecayFloor("reference", Static), 0.70, 0)
	approx(t, "research/static floor", DecayFloor("research", Static), 0.10, 0)
	approx(t, "no floor for news", DecayFloor("news", Static), 0, 0)
	approx(t, "no floor for versioned research", DecayFloor("research", Versioned), 0, 0)
	if len(DecayFloors()) != 3 {
		t.Errorf("DecayFloors = %v", DecayFloors())
	}
}

func TestProfiles(t *testing.T) {
	want := []Profile{{"breaking_news", 1, 0.70}, {"news", 7, 0.55}, {"policy", 90, 0.45},
		{"research", 180, 0.35}, {"legal", 365, 0.25}, {"reference", 1825, 0.10}, {"mathematics", 36500, 0.01}}
	got := Profiles()
	if len(got) != len(want) {
		t.Fatalf("Profiles() = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("profile %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if p := ProfileFor("tutorial"); p.Name != "reference" {
		t.Errorf("unknown profile falls back to %q, want reference", p.Name)
	}
	if _, err := LookupProfile("tutorial"); err == nil {
		t.Error("LookupProfile accepted an unknown profile")
	}
}

func TestSmartVectorTemporal(t *testing.T) {
	w := Window{From: -100, To: 10}
	approx(t, "inside", SmartVectorTemporal(w, 0, 30, 30, 0.05), 0.5, 1e-15)
	approx(t, "after", SmartVectorTemporal(w, 20, 30, 30, 0.05), 0.05, 0)
	approx(t, "before", SmartVectorTemporal(w, -200, 30, 30, 0.05), 0.05, 0)
}

func TestPoolNormalisation(t *testing.T) {
	approx(t, "minmax", MinMax(0.3, 0.1, 0.5), 0.5, 1e-15)
	approx(t, "minmax flat", MinMax(0.3, 0.3, 0.3), 1, 0)
	approx(t, "recency newest", Recency(10, 10, 110), 1, 0)
	approx(t, "recency oldest", Recency(110, 10, 110), 0, 0)
	approx(t, "recency flat", Recency(5, 5, 5), 1, 0)
	approx(t, "cosine", Cosine([]float64{1, 0}, []float64{1, 1}), math.Sqrt2/2, 1e-15)
	approx(t, "cosine zero", Cosine([]float64{0, 0}, []float64{1, 1}), 0, 0)
}
