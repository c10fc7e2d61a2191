package temporal

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// stream returns n noisy unit-ish vectors around direction dir.
func stream(r *rand.Rand, dir []float64, n int, noise float64) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		v := make([]float64, len(dir))
		for j := range v {
			v[j] = dir[j] + noise*r.NormFloat64()
		}
		out[i] = v
	}
	return out
}

func axis(dim, i int) []float64 { v := make([]float64, dim); v[i] = 1; return v }

// VDD: λ stays at λ_base on a stable stream and rises toward λ_max after a
// regime shift.
func TestDriftLambdaStableThenShift(t *testing.T) {
	const dim = 32
	r := rand.New(rand.NewPCG(3, 4))
	opts := &DriftOptions{V0: 0.3, K: 10, LambdaBase: 0.2, LambdaMax: 0.9}
	d, err := NewDriftDetector(dim, opts)
	if err != nil {
		t.Fatal(err)
	}
	var warm int
	var maxStable float64
	for _, v := range stream(r, axis(dim, 0), 300, 0.05) {
		rd, err := d.Observe(v)
		if err != nil {
			t.Fatal(err)
		}
		if !rd.Warm {
			if rd.Lambda != 0.2 {
				t.Fatalf("warming-up λ = %v, want λ_base exactly", rd.Lambda)
			}
			continue
		}
		warm++
		maxStable = math.Max(maxStable, rd.Lambda)
	}
	if warm == 0 {
		t.Fatal("detector never warmed up")
	}
	// σ(10·(V − 0.3)) with V ≈ 0 is ≈ 0.047: λ within 0.04 of λ_base.
	if maxStable > 0.2+0.04 {
		t.Errorf("stable stream: max λ = %.4f, want ≤ %.4f (λ_base 0.2)", maxStable, 0.24)
	}
	// Regime shift: the topic moves to an orthogonal direction.
	var peak float64
	for _, v := range stream(r, axis(dim, 1), 5, 0.05) {
		rd, _ := d.Observe(v)
		peak = math.Max(peak, rd.Lambda)
	}
	if peak < 0.9-0.01 {
		t.Errorf("after a regime shift λ peaked at %.4f, want ≥ 0.89 (λ_max 0.9)", peak)
	}
	approx(t, "DriftLambda at V0", DriftLambda(0.3, 0.2, 0.9, 10, 0.3), 0.55, 1e-15)
}

// VDD Appendix D.1: auto-calibrated V0 is the 75th percentile of the
// burn-in volatilities.
func TestDriftAutoCalibration(t *testing.T) {
	const dim, burn = 16, 40
	for _, sm := range []Smoothing{SmoothingNone, SmoothingPeer} {
		r := rand.New(rand.NewPCG(5, 6))
		d, err := NewDriftDetector(dim, &DriftOptions{BurnIn: burn, RecentWindow: 4, ArchiveWindow: 50, Smoothing: sm})
		if err != nil {
			t.Fatal(err)
		}
		var vols []float64
		calibratedAt := -1
		for i, v := range stream(r, axis(dim, 2), 200, 0.3) {
			rd, err := d.Observe(v)
			if err != nil {
				t.Fatal(err)
			}
			if rd.Warm && len(vols) < burn {
				vols = append(vols, rd.Volatility)
				if rd.Calibrated != (len(vols) == burn) {
					t.Fatalf("reading %d: calibrated=%v after %d burn-in volatilities", i, rd.Calibrated, len(vols))
				}
				if len(vols) == burn {
					calibratedAt = i
				} else if rd.V0 != 0.1 {
					t.Fatalf("V0 during burn-in = %v, want the fallback 0.1", rd.V0)
				}
			}
		}
		if calibratedAt < 0 {
			t.Fatal("never calibrated")
		}
		v0, ok := d.V0()
		if !ok || math.Abs(v0-Percentile(vols, 75)) > 1e-15 {
			t.Errorf("smoothing %d: V0 = %v, want P75 of burn-in = %v", sm, v0, Percentile(vols, 75))
		}
		// Independent check of the percentile: the value such that 75% of the
		// gaps between sorted ranks lie below it.
		below := 0
		for _, x := range vols {
			if x <= v0 {
				below++
			}
		}
		if frac := float64(below) / burn; frac < 0.75 || frac > 0.80 {
			t.Errorf("smoothing %d: %.2f of burn-in volatilities ≤ V0, want ~0.75", sm, frac)
		}
	}
}

func TestPercentileMatchesNumPy(t *testing.T) {
	// numpy.percentile(x, p) with the default linear method.
	approx(t, "p75 [1 2 3 4]", Percentile([]float64{4, 1, 3, 2}, 75), 3.25, 1e-15)
	approx(t, "p50 [1 2 3 4]", Percentile([]float64{1, 2, 3, 4}, 50), 2.5, 1e-15)
	approx(t, "p75 [10]", Percentile([]float64{10}, 75), 10, 0)
	approx(t, "p100", Percentile([]float64{1, 5, 2}, 100), 5, 0)
	approx(t, "p0", Percentile([]float64{1, 5, 2}, 0), 1, 0)
	if !math.IsNaN(Percentile(nil, 75)) {
		t.Error("Percentile of nothing is not NaN")
	}
}

func TestDriftPeerSmoothing(t *testing.T) {
	d, err := NewDriftDetector(4, &DriftOptions{Smoothing: SmoothingPeer, RecentWindow: 2, ArchiveWindow: 10, V0: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 12; i++ {
		if _, err := d.Observe([]float64{1, 0, 0, 0}); err != nil {
			t.Fatal(err)
		}
	}
	// One orthogonal embedding moves the recent centroid by 45°: distance
	// 1 − cos 45° ≈ 0.29 < θ; two make it orthogonal: distance 1 > θ → spike.
	rd, _ := d.Observe([]float64{0, 1, 0, 0})
	if rd.Volatility >= 0.8 {
		t.Errorf("below-threshold distance %.3f spiked volatility to %.3f", rd.Distance, rd.Volatility)
	}
	approx(t, "EMA step", rd.Volatility, 0.1*math.Min(1, rd.Distance/0.3), 1e-12)
	rd, _ = d.Observe([]float64{0, 1, 0, 0})
	if rd.Distance <= 0.3 || rd.Volatility < 0.8 {
		t.Errorf("distance %.3f > θ: volatility %.3f, want spike ≥ 0.8", rd.Distance, rd.Volatility)
	}
}

func TestDriftRejectsBadInput(t *testing.T) {
	if _, err := NewDriftDetector(0, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("dim 0: %v", err)
	}
	for name, o := range map[string]*DriftOptions{
		"negative window": {RecentWindow: -1},
		"max < base":      {LambdaBase: 0.9, LambdaMax: 0.2},
		"negative k":      {K: -1},
		"NaN V0":          {V0: math.NaN()},
		"alpha > 1":       {Smoothing: SmoothingPeer, PeerAlpha: 2},
	} {
		if _, err := NewDriftDetector(4, o); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	d, _ := NewDriftDetector(3, nil)
	if _, err := d.Observe([]float64{1, 2}); !errors.Is(err, ErrInvalid) {
		t.Errorf("wrong dimension: %v", err)
	}
	if _, err := d.Observe([]float64{1, math.Inf(1), 0}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Inf value: %v", err)
	}
	if len(d.narrow)+len(d.wide) != 0 {
		t.Error("rejected observations were kept")
	}
}

// ForgetAt replaces an embedding in the windows by a zero vector: the
// detector then reads exactly as one that observed a zero vector in its
// place.
func TestDriftForgetAt(t *testing.T) {
	opts := &DriftOptions{RecentWindow: 2, ArchiveWindow: 4}
	a, err := NewDriftDetector(3, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewDriftDetector(3, opts)
	secret := []float64{0.3, 0.9, 0.1}
	for i := range 9 {
		v := []float64{1, float64(i) / 10, 0.5}
		w := v
		if i == 6 {
			v, w = secret, []float64{0, 0, 0}
		}
		if _, err := a.Observe(v); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Observe(w); err != nil {
			t.Fatal(err)
		}
	}
	if a.Held() != 6 {
		t.Fatalf("held %d, want 6", a.Held())
	}
	a.ForgetAt(a.Held() - 1 - 2) // observation 6 of 0…8: two came after it
	a.ForgetAt(99)               // out of range: nothing
	for i := range 12 {          // on through the next exact recomputation of the sums
		v := []float64{0.2, 1, float64(i) / 7}
		ra, _ := a.Observe(v)
		rb, _ := b.Observe(v)
		if math.Abs(ra.Distance-rb.Distance) > 1e-12 || math.Abs(ra.Lambda-rb.Lambda) > 1e-12 {
			t.Fatalf("step %d: %+v after ForgetAt, %+v with a zero observed", i, ra, rb)
		}
	}
}
