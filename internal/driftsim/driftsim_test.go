package driftsim

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// small is a quick configuration for tests.
func small(scs ...Scenario) Config {
	return Config{Seeds: 4, Steps: 200, Scenarios: scs}
}

func run(t *testing.T, cfg Config) Result {
	t.Helper()
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func iaeOf(t *testing.T, sr ScenarioResult, m Method) float64 {
	t.Helper()
	for _, r := range sr.Methods {
		if r.Method == m {
			return r.MeanIAE
		}
	}
	t.Fatalf("%v: no %v", sr.Scenario, m)
	return 0
}

// The result is a function of the configuration alone: the same seeds give
// the same result, whatever the number of workers.
func TestRunDeterministic(t *testing.T) {
	cfg := Config{Seeds: 3, Steps: 150, Scenarios: []Scenario{RegimeShifts, Reversion}, Workers: 1}
	a := run(t, cfg)
	cfg.Workers = 4
	b := run(t, cfg)
	b.Config.Workers = a.Config.Workers
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs of one config differ")
	}
	cfg.FirstSeed = 7
	c := run(t, cfg)
	if c.Scenarios[0].Methods[0].MeanIAE == a.Scenarios[0].Methods[0].MeanIAE {
		t.Fatal("other seeds gave the same IAE")
	}
}

// IAE is finite and ≥ 0, ranks are a permutation of 1..n ordered by mean
// IAE, mean ranks average them, and the paper columns are where Table 8
// has them.
func TestRunShape(t *testing.T) {
	cfg := small()
	cfg.Seeds = 2
	r := run(t, cfg)
	if len(r.Scenarios) != 5 || len(r.MeanRanks) != int(numMethods) {
		t.Fatalf("%d scenarios, %d mean ranks", len(r.Scenarios), len(r.MeanRanks))
	}
	sumRanks := make([]float64, numMethods)
	for _, sr := range r.Scenarios {
		seen := make([]bool, len(sr.Methods)+1)
		for _, m := range sr.Methods {
			if !(m.MeanIAE >= 0) || math.IsInf(m.MeanIAE, 0) || !(m.StdIAE >= 0) {
				t.Errorf("%v %v: IAE %v ± %v", sr.Scenario, m.Method, m.MeanIAE, m.StdIAE)
			}
			if m.MeanIAE > 2*float64(cfg.Steps) {
				t.Errorf("%v %v: IAE %v above 2T", sr.Scenario, m.Method, m.MeanIAE)
			}
			if m.Rank < 1 || m.Rank > len(sr.Methods) || seen[m.Rank] {
				t.Errorf("%v %v: rank %d repeated or out of range", sr.Scenario, m.Method, m.Rank)
			} else {
				seen[m.Rank] = true
			}
			for _, o := range sr.Methods {
				if o.Rank < m.Rank && o.MeanIAE > m.MeanIAE {
					t.Errorf("%v: %v ranks above %v with a higher IAE", sr.Scenario, o.Method, m.Method)
				}
			}
			sumRanks[m.Method] += float64(m.Rank)
			_, has := Table8IAE(sr.Scenario, m.Method)
			if has != (m.Table8IAE > 0) || has != (m.Table8Rank > 0) {
				t.Errorf("%v %v: Table 8 column %v, %d", sr.Scenario, m.Method, m.Table8IAE, m.Table8Rank)
			}
		}
		if (sr.VsTable8 != nil) != (sr.Scenario != Gradual) || (sr.VsTable13 != nil) != (sr.Scenario != Reversion) {
			t.Errorf("%v: Table 8 ρ %v, Table 13 ρ %v", sr.Scenario, sr.VsTable8, sr.VsTable13)
		}
		if a := sr.VsTable8; a != nil && (a.N != 10 || a.Rho < -1 || a.Rho > 1) {
			t.Errorf("%v: ρ vs Table 8 %+v", sr.Scenario, *a)
		}
	}
	for _, mr := range r.MeanRanks {
		if want := sumRanks[mr.Method] / 5; math.Abs(mr.MeanRank-want) > 1e-12 {
			t.Errorf("%v: mean rank %v, want %v", mr.Method, mr.MeanRank, want)
		}
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := r.WriteText(&sb); err != nil || !strings.Contains(sb.String(), "recency_0.5") {
		t.Fatalf("WriteText: %v\n%s", err, sb.String())
	}
}

// After regime shifts a memory that never forgets keeps pointing at the
// old regimes: recency must beat no decay. In a stationary stream forgetting
// only throws samples away: no decay and slow static decay must beat
// recency. (Both fail if the estimate, the error or the decay is wrong.)
func TestRunSanity(t *testing.T) {
	r := run(t, small(RegimeShifts, Bursty, Stable))
	for _, sr := range r.Scenarios[:2] {
		if rec, all := iaeOf(t, sr, Recency05), iaeOf(t, sr, NoDecay); !(rec < all/2) {
			t.Errorf("%v: recency IAE %v, no decay %v", sr.Scenario, rec, all)
		}
	}
	st := r.Scenarios[2]
	rec := iaeOf(t, st, Recency05)
	for _, m := range []Method{NoDecay, Static01, TimeWeighted001, Sliding100} {
		if v := iaeOf(t, st, m); !(v < rec) {
			t.Errorf("stable: %v IAE %v, recency %v", m, v, rec)
		}
	}
	if nd := st.Methods[0]; nd.Method != NoDecay || nd.Rank != 1 {
		t.Errorf("stable: no decay ranks %d", nd.Rank)
	}
}

// The incremental estimators agree with a direct weighted mean of the
// stored observations, step by step; VDD and Tidemark agree with the
// detector's λ(t) applied by hand.
func TestEstimatorsMatchDirect(t *testing.T) {
	for _, sc := range []Scenario{RegimeShifts, Mixed, Bursty, Gradual} {
		cfg := Config{Steps: 200, Dim: 16, Walk: 0.01}.withDefaults()
		s := newSim(&cfg)
		trace := make([][]float64, len(cfg.Methods))
		for i := range trace {
			trace[i] = make([]float64, cfg.Steps)
		}
		iae := make([]float64, len(cfg.Methods))
		if err := s.run(context.Background(), sc, 3, iae, trace); err != nil {
			t.Fatal(err)
		}
		det, err := temporal.NewDriftDetector(cfg.Dim, nil)
		if err != nil {
			t.Fatal(err)
		}
		est := make([]float64, cfg.Dim)
		for tt := range cfg.Steps {
			rd, err := det.Observe(s.st.obsAt(tt))
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range cfg.Methods {
				var weight func(age int) float64
				sp := methodSpecs[m]
				switch sp.rule {
				case ruleMean:
					weight = func(int) float64 { return 1 }
				case ruleExp:
					weight = func(a int) float64 { return math.Exp(-sp.param * float64(a)) }
				case ruleWindow:
					weight = func(a int) float64 {
						if a < int(sp.param) {
							return 1
						}
						return 0
					}
				case ruleVDD:
					weight = func(a int) float64 { return math.Exp(-rd.Lambda * float64(a)) }
				case ruleTidemark:
					l := 0.2
					if rd.Warm {
						l = 0.2 * rd.Lambda / 0.55
					}
					weight = func(a int) float64 { return math.Exp(-l * float64(a)) }
				}
				clear(est)
				var wsum float64
				for a := 0; a <= tt; a++ {
					w := weight(a)
					wsum += w
					for j, x := range s.st.obsAt(tt - a) {
						est[j] += w * x
					}
				}
				for j := range est {
					est[j] /= wsum
				}
				want := cosDist(est, s.st.truthAt(tt))
				if d := math.Abs(trace[i][tt] - want); d > 1e-9 {
					t.Fatalf("%v %v step %d: error %v, direct %v", sc, m, tt, trace[i][tt], want)
				}
			}
		}
		for i := range iae {
			var sum float64
			for _, e := range trace[i] {
				sum += e
			}
			if math.Abs(sum-iae[i]) > 1e-9 {
				t.Errorf("%v %v: IAE %v, Σ trace %v", sc, cfg.Methods[i], iae[i], sum)
			}
		}
	}
}

// The generator does what the Scenario doc comments say.
func TestScenarioSchedule(t *testing.T) {
	const T, D = 300, 64
	var st stream
	changes := func() []int {
		var out []int
		for tt := 1; tt < T; tt++ {
			if !reflect.DeepEqual(st.truthAt(tt), st.truthAt(tt-1)) {
				out = append(out, tt)
			}
		}
		return out
	}
	cos := func(a, b int) float64 { return 1 - cosDist(st.truthAt(a), st.truthAt(b)) }

	generate(&st, RegimeShifts, 1, T, D, 0.1, 0)
	if got := changes(); !reflect.DeepEqual(got, []int{75, 150, 225}) {
		t.Errorf("regime shifts at %v", got)
	}
	if c := cos(74, 75); c > 0.4 {
		t.Errorf("regime shift keeps cos %v", c)
	}
	generate(&st, Mixed, 1, T, D, 0.1, 0)
	if got := changes(); !reflect.DeepEqual(got, []int{45, 150, 240}) {
		t.Errorf("mixed shifts at %v", got)
	}
	noise := func(t0, t1 int) float64 { // mean squared noise per dimension
		var s float64
		for tt := t0; tt < t1; tt++ {
			o, x := st.obsAt(tt), st.truthAt(tt)
			for j := range o {
				s += (o[j] - x[j]) * (o[j] - x[j])
			}
		}
		return s / float64((t1-t0)*D)
	}
	if in, out := noise(45, 75), noise(0, 45); math.Abs(in-0.09) > 0.02 || math.Abs(out-0.0025) > 0.0006 {
		t.Errorf("mixed noise variance %v inside drift, %v outside", in, out)
	}
	generate(&st, Bursty, 1, T, D, 0.1, 0)
	if got := changes(); len(got) == 0 || got[0] != 120 || got[len(got)-1] >= 150 {
		t.Errorf("bursty changes at %v", got)
	}
	generate(&st, Reversion, 1, T, D, 0.1, 0)
	if got := changes(); !reflect.DeepEqual(got, []int{75, 150, 225}) {
		t.Errorf("reversion changes at %v", got)
	}
	if c := cos(0, 150); c < 0.85 {
		t.Errorf("reversion returns to cos %v of A", c)
	}
	generate(&st, Gradual, 1, T, D, 0.1, 0)
	if got := changes(); len(got) != 60 || got[0] != 61 || got[29] != 90 || got[30] != 181 {
		t.Errorf("gradual changes at %v", got)
	}
	if c := cos(0, 299); c < 1-1e-12 {
		t.Errorf("gradual ends at cos %v of A", c)
	}
	generate(&st, Stable, 1, T, D, 0.1, 0)
	if got := changes(); len(got) != 0 {
		t.Errorf("stable changes at %v", got)
	}
	generate(&st, Stable, 1, T, D, 0.1, 0.01)
	if got := changes(); len(got) != T-1 {
		t.Errorf("a walking state changed %d times", len(got))
	}
}

// countdown is a context whose Err turns Canceled after n calls.
type countdown struct {
	context.Context
	n int64
}

func (c *countdown) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, small()); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled before: %v", err)
	}
	// Canceled in the middle of a run (one worker: Err is not locked).
	cfg := small()
	cfg.Workers = 1
	if _, err := Run(&countdown{Context: context.Background(), n: 20}, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled during: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	cfg = Config{Seeds: 1000}
	if _, err := Run(ctx, cfg); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{Seeds: -1}, "Seeds"},
		{Config{Steps: -3}, "Steps"},
		{Config{Dim: 1}, "Dim"},
		{Config{Dim: 1 << 20, Steps: 1 << 10}, "Steps × Config.Dim"},
		{Config{Noise: -0.1}, "Noise"},
		{Config{Noise: math.Inf(1)}, "Noise"},
		{Config{Walk: math.NaN()}, "Walk"},
		{Config{TidemarkRate: -1}, "TidemarkRate"},
		{Config{Workers: -2}, "Workers"},
		{Config{Scenarios: []Scenario{}}, "Scenarios"},
		{Config{Scenarios: []Scenario{Mixed, Mixed}}, "Scenarios"},
		{Config{Scenarios: []Scenario{numScenarios}}, "Scenarios"},
		{Config{Methods: []Method{VDD, numMethods}}, "Methods"},
		{Config{Drift: &temporal.DriftOptions{K: -1}}, "Drift"},
	} {
		err := tc.cfg.Validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "Config."+tc.field) {
			t.Errorf("%+v: %v, want an error naming %s", tc.cfg, err, tc.field)
		}
		if _, err := Run(context.Background(), tc.cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("Run(%+v): %v", tc.cfg, err)
		}
	}
	if err := (&Config{}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestNames(t *testing.T) {
	for _, m := range Methods() {
		b, err := m.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Method
		if err := back.UnmarshalText(b); err != nil || back != m {
			t.Errorf("%v → %s → %v, %v", m, b, back, err)
		}
	}
	for s := range numScenarios {
		b, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Scenario
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Errorf("%v → %s → %v, %v", s, b, back, err)
		}
	}
	if _, err := ParseMethod("lru"); !errors.Is(err, ErrInvalidConfig) {
		t.Error(err)
	}
	if _, err := numScenarios.MarshalText(); err == nil {
		t.Error("an unknown scenario marshalled")
	}
}

// VDD Table 8 lists its rows best first in every column; a typo in the
// transcription would break that.
func TestTable8Transcription(t *testing.T) {
	for _, s := range []Scenario{RegimeShifts, Mixed, Bursty, Reversion} {
		prev := 0.0
		for i, r := range table8 {
			v, ok := Table8IAE(s, r.method)
			if !ok || v <= prev {
				t.Errorf("%v row %d (%v): %v after %v", s, i, r.method, v, prev)
			}
			if got := table8Rank(s, r.method); got != i+1 {
				t.Errorf("%v %v: rank %d, want %d", s, r.method, got, i+1)
			}
			prev = v
		}
	}
	if v, ok := Table8IAE(Mixed, VDD); !ok || v != 43.3 {
		t.Errorf("Table 8 mixed VDD = %v", v)
	}
	if _, ok := Table8IAE(Gradual, VDD); ok {
		t.Error("Table 8 has no gradual column")
	}
	if _, ok := Table8IAE(RegimeShifts, NoDecay); ok {
		t.Error("Table 8 has no no_decay row")
	}
	if v, ok := Table13IAE(Gradual, NoDecay); !ok || v != 40.57 {
		t.Errorf("Table 13 gradual no decay = %v", v)
	}
}

// Worked values of Spearman's ρ.
func TestSpearman(t *testing.T) {
	for _, tc := range []struct {
		x, y []float64
		rho  float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{[]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		// Ranks (1, 2.5, 2.5, 4) and (1, 3, 2, 4): 4.5/√(4.5·5).
		{[]float64{1, 2, 2, 3}, []float64{1, 3, 2, 4}, 4.5 / math.Sqrt(22.5)},
		// Σd² = 2 over n = 5: 1 − 6·2/(5·24) = 0.9.
		{[]float64{1, 2, 3, 4, 5}, []float64{2, 1, 3, 4, 5}, 0.9},
		{[]float64{1, 1, 1}, []float64{1, 2, 3}, 0},
	} {
		if got := spearman(tc.x, tc.y); math.Abs(got-tc.rho) > 1e-12 {
			t.Errorf("ρ(%v, %v) = %v, want %v", tc.x, tc.y, got, tc.rho)
		}
	}
}

func BenchmarkRunDefault(b *testing.B) {
	for b.Loop() {
		if _, err := Run(context.Background(), Config{}); err != nil {
			b.Fatal(err)
		}
	}
}
