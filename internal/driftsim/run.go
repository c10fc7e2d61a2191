package driftsim

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tidemark/tidemark/temporal"
)

// Result is [Run]'s ranking. It marshals to JSON.
type Result struct {
	// Config is the configuration run, defaults filled in.
	Config Config `json:"config"`
	// Scenarios holds one entry per scenario, in Config.Scenarios order.
	Scenarios []ScenarioResult `json:"scenarios"`
	// MeanRanks holds each method's rank averaged over the scenarios, in
	// Config.Methods order.
	MeanRanks []MethodRank `json:"mean_ranks"`
}

// ScenarioResult is one scenario's ranking.
type ScenarioResult struct {
	Scenario Scenario `json:"scenario"`
	// Methods holds one entry per method, in Config.Methods order.
	Methods []MethodResult `json:"methods"`
	// VsTable8 and VsTable13 compare our order of the methods that VDD
	// Table 8 (Table 13) also ranks on this scenario with the paper's;
	// nil when fewer than two such methods ran.
	VsTable8  *RankAgreement `json:"vs_table8,omitempty"`
	VsTable13 *RankAgreement `json:"vs_table13,omitempty"`
}

// MethodResult is one method's IAE on one scenario.
type MethodResult struct {
	Method Method `json:"method"`
	// MeanIAE and StdIAE are the mean and the population standard
	// deviation (NumPy's np.std, as VDD reports) over the seeds of
	// IAE = Σ_t (1 − cos(estimate_t, s_t)).
	MeanIAE float64 `json:"mean_iae"`
	StdIAE  float64 `json:"std_iae"`
	// Rank is 1 for the lowest MeanIAE among the methods run; equal means
	// rank in Config.Methods order, so the ranks are a permutation of 1..n.
	Rank int `json:"rank"`
	// Table8IAE is VDD Table 8's IAE of this method on this scenario, 0
	// when the paper has none; Table8Rank its rank among Table 8's ten.
	Table8IAE  float64 `json:"table8_iae,omitempty"`
	Table8Rank int     `json:"table8_rank,omitempty"`
}

// RankAgreement is Spearman's ρ between our mean IAEs and the paper's over
// the N methods both rank (ties get average ranks; ρ is 0 when either side
// is all ties).
type RankAgreement struct {
	N   int     `json:"n"`
	Rho float64 `json:"rho"`
}

// MethodRank is a method's rank averaged over scenarios.
type MethodRank struct {
	Method   Method  `json:"method"`
	MeanRank float64 `json:"mean_rank"`
}

// Run simulates every scenario of cfg for every seed, runs every method on
// each stream and ranks the methods by mean IAE per scenario. It is
// deterministic: the result depends on cfg alone, not on Workers or
// scheduling. It returns ctx.Err() when ctx ends before it does, and an
// error wrapping [ErrInvalidConfig] for a bad cfg.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	c := cfg.withDefaults()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	nm, jobs := len(c.Methods), len(c.Scenarios)*c.Seeds
	iae := make([]float64, jobs*nm) // [scenario][seed][method]
	var next atomic.Int64
	errs := make([]error, min(c.Workers, jobs))
	var wg sync.WaitGroup
	for w := range errs {
		wg.Go(func() {
			sim := newSim(&c)
			for {
				j := int(next.Add(1) - 1)
				if j >= jobs {
					return
				}
				sc, seed := c.Scenarios[j/c.Seeds], c.FirstSeed+uint64(j%c.Seeds)
				if err := sim.run(ctx, sc, seed, iae[j*nm:(j+1)*nm], nil); err != nil {
					errs[w] = err
					next.Store(int64(jobs)) // stop the others
					return
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	for _, err := range errs {
		if err != nil {
			return Result{}, err
		}
	}
	return aggregate(c, iae), nil
}

// sim runs the methods of one configuration on one stream at a time; a
// worker owns one.
type sim struct {
	c     *Config
	st    stream
	sums  [][]float64 // per method: Σ weight·observation
	rates []float64   // per method: exp(−rate) for ruleExp
	mid   float64     // λ_mid for Tidemark
	need  bool        // whether a method needs the detector
}

func newSim(c *Config) *sim {
	s := &sim{c: c, sums: make([][]float64, len(c.Methods)), rates: make([]float64, len(c.Methods)), mid: lambdaMid(c.Drift)}
	for i, m := range c.Methods {
		s.sums[i] = make([]float64, c.Dim)
		sp := methodSpecs[m]
		switch sp.rule {
		case ruleExp:
			s.rates[i] = math.Exp(-sp.param)
		case ruleVDD, ruleTidemark:
			s.need = true
		}
	}
	return s
}

// run simulates scenario sc for seed and adds each method's IAE to
// iae[i] (which must be zero); when trace is not nil, trace[i][t] gets
// method i's error at step t.
func (s *sim) run(ctx context.Context, sc Scenario, seed uint64, iae []float64, trace [][]float64) error {
	c := s.c
	generate(&s.st, sc, seed, c.Steps, c.Dim, c.Noise, c.Walk)
	var det *temporal.DriftDetector
	if s.need {
		var err error
		if det, err = temporal.NewDriftDetector(c.Dim, c.Drift); err != nil {
			return fmt.Errorf("%w: Config.Drift: %w", ErrInvalidConfig, err)
		}
	}
	for i := range s.sums {
		clear(s.sums[i])
	}
	for t := range c.Steps {
		if t%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		o, truth := s.st.obsAt(t), s.st.truthAt(t)
		var rd temporal.DriftReading
		if det != nil {
			var err error
			if rd, err = det.Observe(o); err != nil {
				return fmt.Errorf("driftsim: %v seed %d step %d: %w", sc, seed, t, err)
			}
		}
		for i, m := range c.Methods {
			sum := s.sums[i]
			switch sp := methodSpecs[m]; sp.rule {
			case ruleMean:
				axpy(sum, 1, o)
			case ruleExp:
				decayAdd(sum, s.rates[i], o)
			case ruleWindow:
				axpy(sum, 1, o)
				if n := int(sp.param); t >= n {
					axpy(sum, -1, s.st.obsAt(t-n))
				}
			case ruleVDD:
				scan(sum, &s.st, t, rd.Lambda)
			case ruleTidemark:
				lambda := c.TidemarkRate
				if rd.Warm {
					lambda *= rd.Lambda / s.mid
				}
				scan(sum, &s.st, t, lambda)
			}
			e := cosDist(sum, truth)
			iae[i] += e
			if trace != nil {
				trace[i][t] = e
			}
		}
	}
	return nil
}

// aggregate turns the per-run IAEs into the ranking.
func aggregate(c Config, iae []float64) Result {
	nm := len(c.Methods)
	res := Result{Config: c, Scenarios: make([]ScenarioResult, len(c.Scenarios)), MeanRanks: make([]MethodRank, nm)}
	for i, m := range c.Methods {
		res.MeanRanks[i].Method = m
	}
	for si, sc := range c.Scenarios {
		sr := ScenarioResult{Scenario: sc, Methods: make([]MethodResult, nm)}
		for i, m := range c.Methods {
			var sum, sq float64
			for k := range c.Seeds {
				sum += iae[(si*c.Seeds+k)*nm+i]
			}
			mean := sum / float64(c.Seeds)
			for k := range c.Seeds {
				d := iae[(si*c.Seeds+k)*nm+i] - mean
				sq += d * d
			}
			sr.Methods[i] = MethodResult{Method: m, MeanIAE: mean, StdIAE: math.Sqrt(sq / float64(c.Seeds))}
			if v, ok := Table8IAE(sc, m); ok {
				sr.Methods[i].Table8IAE = v
				sr.Methods[i].Table8Rank = table8Rank(sc, m)
			}
		}
		order := make([]int, nm)
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			x, y := sr.Methods[a].MeanIAE, sr.Methods[b].MeanIAE
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		})
		for r, i := range order {
			sr.Methods[i].Rank = r + 1
			res.MeanRanks[i].MeanRank += float64(r+1) / float64(len(c.Scenarios))
		}
		sr.VsTable8 = agreement(sr.Methods, func(m Method) (float64, bool) { return Table8IAE(sc, m) })
		sr.VsTable13 = agreement(sr.Methods, func(m Method) (float64, bool) { return Table13IAE(sc, m) })
		res.Scenarios[si] = sr
	}
	return res
}

// table8Rank is m's rank by IAE among Table 8's methods on s.
func table8Rank(s Scenario, m Method) int {
	v, _ := Table8IAE(s, m)
	r := 1
	for _, row := range table8 {
		if w, _ := Table8IAE(s, row.method); w < v {
			r++
		}
	}
	return r
}

// agreement is Spearman's ρ between ms' mean IAEs and paper's, over the
// methods paper has.
func agreement(ms []MethodResult, paper func(Method) (float64, bool)) *RankAgreement {
	var ours, theirs []float64
	for _, r := range ms {
		if v, ok := paper(r.Method); ok {
			ours = append(ours, r.MeanIAE)
			theirs = append(theirs, v)
		}
	}
	if len(ours) < 2 {
		return nil
	}
	return &RankAgreement{N: len(ours), Rho: spearman(ours, theirs)}
}

// spearman is Spearman's ρ: Pearson's correlation of the average ranks of
// x and y (equal lengths); 0 when either has no spread.
func spearman(x, y []float64) float64 {
	rx, ry := avgRanks(x), avgRanks(y)
	n := float64(len(rx))
	var mx, my float64
	for i := range rx {
		mx += rx[i]
		my += ry[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range rx {
		dx, dy := rx[i]-mx, ry[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// avgRanks returns the 1-based ranks of x, equal values sharing the mean of
// their ranks.
func avgRanks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}
