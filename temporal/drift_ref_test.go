package temporal

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refDetector is the detector before the running sums (at a433123): it
// recomputes both centroids from its ring on every observation. It is the
// reference the incremental DriftDetector is checked against.
type refDetector struct {
	opt        DriftOptions
	dim        int
	ring       [][]float64
	volatility float64
	v0         float64
	calibrated bool
	burn       []float64
}

func newRefDetector(dim int, opts *DriftOptions) *refDetector {
	o := opts.WithDefaults()
	d := &refDetector{opt: o, dim: dim, v0: o.FallbackV0}
	if o.V0 > 0 {
		d.v0, d.calibrated = o.V0, true
	}
	return d
}

func (d *refDetector) observe(v []float64) DriftReading {
	cw, aw := d.opt.RecentWindow, d.opt.ArchiveWindow
	if len(d.ring) == cw+aw {
		copy(d.ring, d.ring[1:])
		d.ring = d.ring[:len(d.ring)-1]
	}
	d.ring = append(d.ring, append([]float64(nil), v...))

	r := DriftReading{V0: d.v0, Calibrated: d.calibrated, Lambda: d.opt.LambdaBase}
	if len(d.ring) < 2*cw {
		return r
	}
	split := len(d.ring) - cw
	r.Warm = true
	r.Distance = 1 - refCosineClamped(refCentroid(d.ring[:split], d.dim), refCentroid(d.ring[split:], d.dim))
	switch d.opt.Smoothing {
	case SmoothingPeer:
		raw := math.Min(1, r.Distance/d.opt.PeerThreshold)
		d.volatility = d.opt.PeerAlpha*raw + (1-d.opt.PeerAlpha)*d.volatility
		if r.Distance > d.opt.PeerThreshold {
			d.volatility = math.Max(d.volatility, d.opt.PeerSpike)
		}
	default:
		d.volatility = r.Distance
	}
	r.Volatility = d.volatility
	if !d.calibrated {
		d.burn = append(d.burn, d.volatility)
		if len(d.burn) == d.opt.BurnIn {
			d.v0, d.calibrated = Percentile(d.burn, 75), true
			d.burn = nil
		}
	}
	r.V0, r.Calibrated = d.v0, d.calibrated
	r.Lambda = DriftLambda(d.volatility, d.opt.LambdaBase, d.opt.LambdaMax, d.opt.K, d.v0)
	return r
}

func refCentroid(vs [][]float64, dim int) []float64 {
	c := make([]float64, dim)
	for _, v := range vs {
		for i, x := range v {
			c[i] += x
		}
	}
	n := float64(len(vs))
	for i := range c {
		c[i] /= n
	}
	return c
}

func refCosineClamped(a, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na < 1e-20 || nb < 1e-20 {
		return 1
	}
	return math.Max(-1, math.Min(1, dot/(math.Sqrt(na)*math.Sqrt(nb))))
}

// driftSeq is a named generator of an embedding stream.
type driftSeq struct {
	name string
	gen  func(r *rand.Rand, dim, n int) [][]float64
}

var driftSeqs = []driftSeq{
	{"gaussian", func(r *rand.Rand, dim, n int) [][]float64 {
		out := make([][]float64, n)
		for i := range out {
			out[i] = make([]float64, dim)
			for j := range out[i] {
				out[i][j] = r.NormFloat64()
			}
		}
		return out
	}},
	// Regime shifts: a topic direction that jumps to a new random one
	// every 50–400 observations, with noise.
	{"regimes", func(r *rand.Rand, dim, n int) [][]float64 {
		out := make([][]float64, n)
		dir := randDir(r, dim)
		next := 50 + r.IntN(350)
		for i := range out {
			if i == next {
				dir, next = randDir(r, dim), i+50+r.IntN(350)
			}
			out[i] = make([]float64, dim)
			for j := range out[i] {
				out[i][j] = dir[j] + 0.1*r.NormFloat64()
			}
		}
		return out
	}},
	// Gradual drift: the direction rotates a little every step, unit
	// vectors (the engine's inputs), with rare large outliers.
	{"gradual", func(r *rand.Rand, dim, n int) [][]float64 {
		out := make([][]float64, n)
		dir := randDir(r, dim)
		for i := range out {
			for j := range dir {
				dir[j] += 0.02 * r.NormFloat64()
			}
			v := make([]float64, dim)
			var ss float64
			for j := range v {
				v[j] = dir[j] + 0.05*r.NormFloat64()
				if r.IntN(1000) == 0 {
					v[j] *= 1e3
				}
				ss += v[j] * v[j]
			}
			for j := range v {
				v[j] /= math.Sqrt(ss)
			}
			out[i] = v
		}
		return out
	}},
	// A large common offset with small variation: the sums are large and
	// the distances small, the hardest case for running sums.
	{"offset", func(r *rand.Rand, dim, n int) [][]float64 {
		out := make([][]float64, n)
		for i := range out {
			out[i] = make([]float64, dim)
			for j := range out[i] {
				out[i][j] = 100 + float64(j%3) + 0.5*r.NormFloat64()
			}
		}
		return out
	}},
}

func randDir(r *rand.Rand, dim int) []float64 {
	v := make([]float64, dim)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}

// relDiff is |a−b| / max(|a|, |b|), 0 when both are 0.
func relDiff(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / math.Max(math.Abs(a), math.Abs(b))
}

// The incremental detector gives the reference's readings, over long
// random and drifting streams, several dimensions, window sizes and
// smoothing modes: Warm and Calibrated exactly, λ within 1e-9 relative,
// and the distance, the volatility and V0 within 1e-9 relative or 1e-15
// absolute. The running sums round differently from centroids summed
// afresh (a relative difference of ~1e-16 in each centroid), and V_t =
// 1 − cos(μ_recent, μ_archival) cancels when the centroids are nearly
// parallel: there both computations carry an absolute error of a few
// 1e-16 (the reference's own rounding of 1 − cos), which is more than
// 1e-9 of a distance below ~1e-7. λ is a smooth function of V_t bounded
// below by λ_base, so it keeps the relative bound.
func TestDriftIncrementalMatchesReference(t *testing.T) {
	const tol, abs = 1e-9, 1e-15
	steps := 4000 // in -short mode
	type win struct{ cw, aw, burn int }
	worst, worstAbs := map[string]float64{}, map[string]float64{}
	var exact, total int
	for _, dim := range []int{1, 3, 16, 128} {
		if dim == 1 && !testing.Short() {
			steps = 50000 // one dimension: long streams cheaply
		} else if !testing.Short() {
			steps = 10000
		}
		for _, w := range []win{{5, 200, 50}, {1, 1, 3}, {3, 7, 20}, {4, 50, 10}, {2, 1, 5}, {8, 8, 100}} {
			for _, sm := range []Smoothing{SmoothingNone, SmoothingPeer} {
				for _, v0 := range []float64{0, 0.05} {
					for si, seq := range driftSeqs {
						n := min(steps, steps*4/dim)
						r := rand.New(rand.NewPCG(uint64(dim), uint64(1000*w.cw+w.aw+7*si)))
						opts := &DriftOptions{RecentWindow: w.cw, ArchiveWindow: w.aw, BurnIn: w.burn, Smoothing: sm, V0: v0}
						d, err := NewDriftDetector(dim, opts)
						if err != nil {
							t.Fatal(err)
						}
						ref := newRefDetector(dim, opts)
						name := fmt.Sprintf("dim %d windows %d+%d smoothing %d V0 %v %s", dim, w.cw, w.aw, sm, v0, seq.name)
						for i, v := range seq.gen(r, dim, n) {
							got, err := d.Observe(v)
							if err != nil {
								t.Fatal(err)
							}
							want := ref.observe(v)
							if got.Warm != want.Warm || got.Calibrated != want.Calibrated {
								t.Fatalf("%s, observation %d: %+v, reference %+v", name, i, got, want)
							}
							for f, pair := range map[string][2]float64{"λ": {got.Lambda, want.Lambda}, "distance": {got.Distance, want.Distance},
								"volatility": {got.Volatility, want.Volatility}, "V0": {got.V0, want.V0}} {
								rd, ad := relDiff(pair[0], pair[1]), math.Abs(pair[0]-pair[1])
								if rd > tol && (f == "λ" || ad > abs) {
									t.Fatalf("%s, observation %d: %s %v, reference %v (relative difference %.3g)", name, i, f, pair[0], pair[1], rd)
								}
								worst[f] = math.Max(worst[f], rd)
								worstAbs[f] = math.Max(worstAbs[f], ad)
							}
							total++
							if got == want {
								exact++
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d readings, %d bit-identical to the reference", total, exact)
	for _, f := range []string{"λ", "distance", "volatility", "V0"} {
		t.Logf("%-10s max relative difference %.3g, max absolute %.3g", f, worst[f], worstAbs[f])
	}
}

// A detector restored from its state (State and RestoreDriftDetector, or
// MarshalBinary and UnmarshalBinary) goes on exactly as the original.
func TestDriftStateRestoresExactly(t *testing.T) {
	const dim = 7
	for _, sm := range []Smoothing{SmoothingNone, SmoothingPeer} {
		opts := &DriftOptions{RecentWindow: 3, ArchiveWindow: 20, BurnIn: 30, Smoothing: sm}
		r := rand.New(rand.NewPCG(9, uint64(sm)))
		vs := driftSeqs[1].gen(r, dim, 400)
		d, _ := NewDriftDetector(dim, opts)
		for cut, v := range vs {
			if cut%13 == 0 {
				b, err := d.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				var u DriftDetector
				if err := u.UnmarshalBinary(b); err != nil {
					t.Fatalf("cut %d: %v", cut, err)
				}
				if b2, _ := u.MarshalBinary(); !bytes.Equal(b, b2) {
					t.Fatalf("cut %d: the state re-encodes to other bytes", cut)
				}
				s := d.State()
				ring := make([][]float64, s.Held)
				for i := range ring {
					ring[i] = d.at(nil, i)
				}
				w, err := RestoreDriftDetector(s, ring)
				if err != nil {
					t.Fatalf("cut %d: %v", cut, err)
				}
				a, restored := d.clone(t), []*DriftDetector{&u, w}
				for _, x := range vs[cut:] {
					want, _ := a.Observe(x)
					for k, o := range restored {
						if got, _ := o.Observe(x); got != want {
							t.Fatalf("smoothing %d, restored (%d) at %d: %+v, original %+v", sm, k, cut, got, want)
						}
					}
				}
			}
			if _, err := d.Observe(v); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Embeddings large enough to overflow the sums give a state that still
// restores (non-finite sums and volatility are reachable).
func TestDriftStateOverflowRestores(t *testing.T) {
	d, _ := NewDriftDetector(2, &DriftOptions{RecentWindow: 1, ArchiveWindow: 3, BurnIn: 2})
	for i := range 6 {
		x := math.MaxFloat64
		if i%2 == 1 {
			x = -x
		}
		if _, err := d.Observe([]float64{x, x}); err != nil {
			t.Fatal(err)
		}
	}
	if s := d.State(); allFinite(s.RecentSum) && allFinite(s.ArchiveSum) && !math.IsNaN(s.Volatility) {
		t.Fatalf("the sums did not overflow: %+v", s)
	}
	c := d.clone(t)
	if a, b := c.State(), d.State(); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("restored %+v, was %+v", a, b)
	}
}

// clone copies d through its binary state.
func (d *DriftDetector) clone(t *testing.T) *DriftDetector {
	t.Helper()
	b, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var c DriftDetector
	if err := c.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestDriftStateRejectsInconsistent(t *testing.T) {
	d, _ := NewDriftDetector(2, &DriftOptions{RecentWindow: 1, ArchiveWindow: 2, BurnIn: 10})
	for range 5 {
		d.Observe([]float64{1, 2})
	}
	ring := [][]float64{{1, 2}, {1, 2}, {1, 2}}
	for name, mod := range map[string]func(s *DriftDetectorState, ring *[][]float64){
		"held":        func(s *DriftDetectorState, _ *[][]float64) { s.Held = 4 },
		"ring":        func(_ *DriftDetectorState, r *[][]float64) { *r = (*r)[:2] },
		"ring dim":    func(_ *DriftDetectorState, r *[][]float64) { (*r)[1] = []float64{1} },
		"ring NaN":    func(_ *DriftDetectorState, r *[][]float64) { (*r)[1] = []float64{1, math.NaN()} },
		"no sums":     func(s *DriftDetectorState, _ *[][]float64) { s.RecentSum = nil },
		"sum dim":     func(s *DriftDetectorState, _ *[][]float64) { s.ArchiveSum = []float64{1} },
		"since exact": func(s *DriftDetectorState, _ *[][]float64) { s.SinceExact = 3 },
		"volatility":  func(s *DriftDetectorState, _ *[][]float64) { s.Volatility = -1 },
		"burn":        func(s *DriftDetectorState, _ *[][]float64) { s.Burn = make([]float64, 10) },
		"options":     func(s *DriftDetectorState, _ *[][]float64) { s.Options.K = 0 },
		"dim":         func(s *DriftDetectorState, _ *[][]float64) { s.Dim = 0 },
	} {
		s := d.State()
		r := append([][]float64(nil), ring...)
		if _, err := RestoreDriftDetector(s, r); err != nil {
			t.Fatalf("the unmodified state: %v", err)
		}
		mod(&s, &r)
		if _, err := RestoreDriftDetector(s, r); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

// UnmarshalBinary never panics, and what it accepts observes, re-encodes
// and decodes to the same bytes.
func FuzzDriftDetectorUnmarshal(f *testing.F) {
	for _, sm := range []Smoothing{SmoothingNone, SmoothingPeer} {
		d, _ := NewDriftDetector(3, &DriftOptions{RecentWindow: 2, ArchiveWindow: 3, BurnIn: 4, Smoothing: sm})
		r := rand.New(rand.NewPCG(1, 2))
		for i := range 12 {
			b, _ := d.MarshalBinary()
			f.Add(b)
			d.Observe([]float64{r.NormFloat64(), r.NormFloat64(), float64(i)})
		}
	}
	f.Add([]byte{1, 0})
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x07})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d DriftDetector
		if err := d.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		out, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var e DriftDetector
		if err := e.UnmarshalBinary(out); err != nil {
			t.Fatalf("re-encoded state does not decode: %v", err)
		}
		if again, _ := e.MarshalBinary(); !bytes.Equal(again, out) {
			t.Fatal("re-encoded state decodes to another")
		}
		if d.dim > 1<<16 {
			return
		}
		v := make([]float64, d.dim)
		for i := range 3 {
			v[0] = float64(i)
			if _, err := d.Observe(v); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A ring of float32-exact embeddings is kept narrow (float32) and reads
// bit for bit as a float64 ring would; the first embedding that is not a
// float32 widens it mid-stream without changing a reading; ForgetAt and
// the binary state work on either.
func TestDriftNarrowRing(t *testing.T) {
	const dim = 16
	opts := &DriftOptions{RecentWindow: 3, ArchiveWindow: 20, BurnIn: 10}
	for si, seq := range driftSeqs {
		r := rand.New(rand.NewPCG(11, uint64(si)))
		vs := seq.gen(r, dim, 600)
		for _, v := range vs[:400] { // float32 values; the rest stay float64
			for j := range v {
				v[j] = float64(float32(v[j]))
			}
		}
		narrow, _ := NewDriftDetector(dim, opts)
		wide, _ := NewDriftDetector(dim, opts)
		wide.isWide = true
		for i, v := range vs {
			if i == 150 || i == 450 {
				narrow.ForgetAt(7)
				wide.ForgetAt(7)
			}
			got, err := narrow.Observe(v)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := wide.Observe(v)
			if got != want {
				t.Fatalf("%s, observation %d: narrow %+v, wide %+v", seq.name, i, got, want)
			}
			if narrow.isWide != (i >= 400) {
				t.Fatalf("%s, observation %d: ring wide = %v", seq.name, i, narrow.isWide)
			}
			if i == 399 {
				if len(narrow.narrow) == 0 || narrow.wide != nil {
					t.Fatalf("%s: the float32 stream is not held narrow", seq.name)
				}
				a, _ := narrow.MarshalBinary()
				b, _ := wide.MarshalBinary()
				if !bytes.Equal(a, b) {
					t.Fatalf("%s: narrow and wide rings encode differently", seq.name)
				}
				var u DriftDetector
				if err := u.UnmarshalBinary(a); err != nil || u.isWide {
					t.Fatalf("%s: restored a narrow ring wide (%v) or failed: %v", seq.name, u.isWide, err)
				}
			}
		}
	}
}
