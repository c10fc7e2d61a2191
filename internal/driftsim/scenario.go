package driftsim

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Scenario is one drift pattern of VDD §4. Each is a deterministic function
// of a seed (a math/rand/v2 PCG stream) and of [Config]'s Steps (T), Dim (D),
// Noise (σ) and Walk (ω).
//
// Every scenario has a true state s_t, a unit vector of dimension D, and an
// observation o_t = s_t + σ·ν_t·n_t per step, n_t ~ N(0, I_D), ν_t = 1
// unless the scenario says otherwise. The first state is a random unit
// vector (a normalised Gaussian: VDD §3.6's hash embeddings are Gaussian
// vectors seeded by a hash; the PCG stream plays the hash's part here). A
// "shift with weights (a, b)" replaces the state by normalise(a·s + b·g),
// g ~ N(0, I_D), as in the VDD authors' scenario scripts; since ‖g‖ ≈ √D,
// the new regime is nearly orthogonal to the old one (cos ≈ a/(b·√D), 0.05
// for (0.3, 0.7) at D = 64). With Walk ω > 0 the state also takes a random
// step every step, s ← normalise(s + ω·ω_t·g), ω_t = 1 unless the scenario
// says otherwise (the scripts' tracked scalar random-walks with σ = 0.1 per
// step inside a regime; Walk is that part, off by default). Times are
// fractions of T, floored: "0.25T" is ⌊0.25·T⌋.
type Scenario uint8

const (
	// RegimeShifts (VDD §4.2, Table 8 "Regime Shifts", Exps 2, 8 and 20):
	// three sudden shifts with weights (0.3, 0.7) at 0.25T, 0.5T and 0.75T;
	// constant noise.
	RegimeShifts Scenario = iota
	// Mixed (VDD §4.3, Table 8 "Mixed Drift", Exps 4 and 17): about 70 %
	// stable and 30 % drift. Drift periods are [0.15T, 0.25T),
	// [0.50T, 0.60T) and [0.80T, 0.87T) (27 % of the steps); each starts
	// with a shift with weights (0.3, 0.7), and inside them ν_t = ω_t = 3,
	// outside ν_t = ω_t = 0.5 (the scripts' 0.3 and 0.05 against their
	// usual 0.1).
	Mixed
	// Bursty (VDD §4.3, Table 8 "Bursty", Exp 15): a stable era A on
	// [0, 0.4T); a burst on [0.4T, 0.5T) that opens with a large shift with
	// weights (0.1, 0.9) (Table 8's script) and then shifts again with
	// weights (0.3, 0.7) at each later burst step with probability 0.2
	// (Exp 15's burst, in which 80 % of the facts change within it); a new
	// stable era B from 0.5T on.
	Bursty
	// Reversion (VDD §4.3, Table 8 "Reversion", Exp 16): regime A on
	// [0, 0.25T); a shift with weights (0.2, 0.8) to B at 0.25T; at 0.5T a
	// return to A', normalise(A + 0.05·g), nearly A (cos ≈ 0.93 at D = 64);
	// a shift with weights (0.2, 0.8) away from A' at 0.75T.
	Reversion
	// Gradual (VDD Exp 9, the Gradual column of Tables 9 and 13): two
	// independent random regimes A and B; A on [0, 0.2T), a linear blend
	// normalise((1−α)·A + α·B), α = (t − 0.2T)/L, over L = max(1, ⌊0.1T⌋)
	// steps, B until 0.6T, the blend back from B to A over L steps, then A.
	// (Exp 9 used T = 500 and L from 10 to 100; 0.1T is its middle value
	// 50.) With Walk, A and B both walk.
	Gradual
	// Stable is VDD Table 11's "pure stable" control (Exp 19): one regime,
	// no shift. It is not in [Scenarios]' default set.
	Stable
	numScenarios
)

var scenarioNames = [numScenarios]string{"regime_shifts", "mixed", "bursty", "reversion", "gradual", "stable"}

// Scenarios returns VDD §4's five drift patterns, the default set, in the
// paper's order: regime shifts, mixed, bursty, reversion, gradual.
func Scenarios() []Scenario {
	return []Scenario{RegimeShifts, Mixed, Bursty, Reversion, Gradual}
}

// String returns the scenario's name, e.g. "regime_shifts".
func (s Scenario) String() string {
	if s < numScenarios {
		return scenarioNames[s]
	}
	return fmt.Sprintf("Scenario(%d)", uint8(s))
}

// MarshalText returns the scenario's name; an unknown value is an error.
func (s Scenario) MarshalText() ([]byte, error) {
	if s >= numScenarios {
		return nil, fmt.Errorf("%w: unknown scenario %d", ErrInvalidConfig, uint8(s))
	}
	return []byte(scenarioNames[s]), nil
}

// UnmarshalText parses a name that String returns.
func (s *Scenario) UnmarshalText(b []byte) error {
	v, err := ParseScenario(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseScenario returns the scenario named name (as String returns it).
func ParseScenario(name string) (Scenario, error) {
	for i, n := range scenarioNames {
		if n == name {
			return Scenario(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown scenario %q", ErrInvalidConfig, name)
}

// Scenario parameters that the doc comments above state.
const (
	burstJumpP    = 0.2  // Bursty: probability of a further shift per burst step
	revertJitter  = 0.05 // Reversion: A' = normalise(A + 0.05·g)
	mixedDriftMul = 3.0  // Mixed: ν, ω inside drift periods
	mixedCalmMul  = 0.5  // Mixed: ν, ω outside them
)

// stream is one seed's run of a scenario: the true state and the
// observation of every step, row-major steps × dim. Its buffers are reused
// from run to run.
type stream struct {
	steps, dim int
	truth, obs []float64
}

func (s *stream) truthAt(t int) []float64 { return s.truth[t*s.dim : (t+1)*s.dim] }
func (s *stream) obsAt(t int) []float64   { return s.obs[t*s.dim : (t+1)*s.dim] }

// gen draws the scenario's Gaussian vectors.
type gen struct {
	r   *rand.Rand
	dim int
	g   []float64 // scratch
}

// gauss fills g.g with N(0, 1) draws.
func (g *gen) gauss() []float64 {
	for i := range g.g {
		g.g[i] = g.r.NormFloat64()
	}
	return g.g
}

// unit sets dst to a random unit vector.
func (g *gen) unit(dst []float64) {
	copy(dst, g.gauss())
	normalize(dst)
}

// shift sets s to normalise(a·s + b·g), g ~ N(0, I).
func (g *gen) shift(s []float64, a, b float64) {
	n := g.gauss()
	for i := range s {
		s[i] = a*s[i] + b*n[i]
	}
	normalize(s)
}

// walk sets s to normalise(s + w·g) when w > 0.
func (g *gen) walk(s []float64, w float64) {
	if w > 0 {
		g.shift(s, 1, w)
	}
}

func normalize(v []float64) {
	var n float64
	for _, x := range v {
		n += x * x
	}
	if n == 0 {
		return
	}
	n = 1 / math.Sqrt(n)
	for i := range v {
		v[i] *= n
	}
}

// generate fills st with scenario sc for seed (T = steps, D = dim); noise
// and walk are σ and ω. The PCG stream is seeded by (seed, sc), so one seed
// gives each scenario its own draws.
func generate(st *stream, sc Scenario, seed uint64, steps, dim int, noise, walk float64) {
	st.steps, st.dim = steps, dim
	st.truth = grow(st.truth, steps*dim)
	st.obs = grow(st.obs, steps*dim)
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x5bd1e995+uint64(sc))), dim: dim, g: make([]float64, dim)}
	at := func(f float64) int { return int(f * float64(steps)) }

	s := make([]float64, dim) // the state
	g.unit(s)
	var a, b []float64 // Reversion's A, Gradual's A and B
	switch sc {
	case Reversion:
		a = append([]float64(nil), s...)
	case Gradual:
		a = append([]float64(nil), s...)
		b = make([]float64, dim)
		g.unit(b)
	}
	inMixedDrift := func(t int) bool {
		return (t >= at(0.15) && t < at(0.25)) || (t >= at(0.50) && t < at(0.60)) || (t >= at(0.80) && t < at(0.87))
	}

	for t := range steps {
		nu, om := 1.0, 1.0
		switch sc {
		case RegimeShifts:
			if t > 0 && (t == at(0.25) || t == at(0.5) || t == at(0.75)) {
				g.shift(s, 0.3, 0.7)
			}
			g.walk(s, walk)
		case Mixed:
			nu, om = mixedCalmMul, mixedCalmMul
			if inMixedDrift(t) {
				nu, om = mixedDriftMul, mixedDriftMul
				if t > 0 && !inMixedDrift(t-1) {
					g.shift(s, 0.3, 0.7)
				}
			}
			g.walk(s, walk*om)
		case Bursty:
			b0, b1 := at(0.4), at(0.5)
			switch {
			case t == b0 && t > 0:
				g.shift(s, 0.1, 0.9)
			case t > b0 && t < b1 && g.r.Float64() < burstJumpP:
				g.shift(s, 0.3, 0.7)
			}
			g.walk(s, walk)
		case Reversion:
			switch {
			case t == 0:
			case t == at(0.25):
				g.shift(s, 0.2, 0.8)
			case t == at(0.5):
				n := g.gauss()
				for i := range s {
					s[i] = a[i] + revertJitter*n[i]
				}
				normalize(s)
			case t == at(0.75):
				g.shift(s, 0.2, 0.8)
			}
			g.walk(s, walk)
		case Gradual:
			g.walk(a, walk)
			g.walk(b, walk)
			t0, t1, l := at(0.2), at(0.6), max(1, at(0.1))
			switch {
			case t < t0:
				copy(s, a)
			case t < t0+l:
				blend(s, a, b, float64(t-t0)/float64(l))
			case t < t1:
				copy(s, b)
			case t < t1+l:
				blend(s, b, a, float64(t-t1)/float64(l))
			default:
				copy(s, a)
			}
		case Stable:
			g.walk(s, walk)
		}
		copy(st.truthAt(t), s)
		o, n := st.obsAt(t), g.gauss()
		for i := range o {
			o[i] = s[i] + noise*nu*n[i]
		}
	}
}

// blend sets dst to normalise((1−α)·x + α·y); x itself, to the bit, at
// α = 0.
func blend(dst, x, y []float64, alpha float64) {
	if alpha == 0 {
		copy(dst, x)
		return
	}
	for i := range dst {
		dst[i] = (1-alpha)*x[i] + alpha*y[i]
	}
	normalize(dst)
}

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}
