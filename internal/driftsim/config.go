package driftsim

import (
	"fmt"
	"math"
	"runtime"

	"github.com/tidemark/tidemark/temporal"
)

// Config configures [Run]. A zero field means its default.
type Config struct {
	// Seeds is the number of seeds per scenario (default 30, VDD §4.1's
	// n = 30); they are FirstSeed, FirstSeed+1, ….
	Seeds int `json:"seeds"`
	// FirstSeed is the first seed (default 100: VDD §4 ran its n = 30
	// experiments on seeds 100–129). Seed 0 cannot be asked for.
	FirstSeed uint64 `json:"first_seed"`
	// Steps is the number of time steps T of every run (default 300; VDD
	// §4 used 300 or 500).
	Steps int `json:"steps"`
	// Dim is the embedding dimension D (default 64, VDD §3.6's hash
	// embeddings); at least 2.
	Dim int `json:"dim"`
	// Noise is σ, the standard deviation of the observation noise per
	// dimension around the unit-norm true state (default 0.1, as in the
	// VDD scripts; the noise then has norm ≈ σ·√D = 0.8). It cannot be 0.
	Noise float64 `json:"noise"`
	// Walk is ω, the per-dimension standard deviation of the true state's
	// random step inside a regime (default 0: regimes hold still).
	Walk float64 `json:"walk"`
	// Scenarios to run (default [Scenarios]: VDD §4's five), without
	// repeats.
	Scenarios []Scenario `json:"scenarios"`
	// Methods to rank (default [Methods]: all), without repeats.
	Methods []Method `json:"methods"`
	// Drift configures the detector of VDD and Tidemark (nil: the root
	// package's driftOpts, i.e. VDD's defaults — w_curr 5, w_arch 200,
	// λ_base 0.2, λ_max 0.9, k 10, V0 the 75th percentile of the first 50
	// warm volatilities, raw V_t).
	Drift *temporal.DriftOptions `json:"drift,omitempty"`
	// TidemarkRate is ρ, the rate per step that Tidemark's factor
	// λ(t)/λ_mid multiplies (default 0.2: static_0.2's rate, so that
	// tidemark against static_0.2 measures the drift factor alone).
	TidemarkRate float64 `json:"tidemark_rate"`
	// Workers is the number of goroutines (default GOMAXPROCS). The result
	// does not depend on it.
	Workers int `json:"-"`
}

// maxCells bounds Steps × Dim (the two float64 buffers per worker).
const maxCells = 1 << 24

func (c Config) withDefaults() Config {
	if c.Seeds == 0 {
		c.Seeds = 30
	}
	if c.FirstSeed == 0 {
		c.FirstSeed = 100
	}
	if c.Steps == 0 {
		c.Steps = 300
	}
	if c.Dim == 0 {
		c.Dim = 64
	}
	if c.Noise == 0 {
		c.Noise = 0.1
	}
	if c.Scenarios == nil {
		c.Scenarios = Scenarios()
	}
	if c.Methods == nil {
		c.Methods = Methods()
	}
	if c.TidemarkRate == 0 {
		c.TidemarkRate = 0.2
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c
}

// Validate returns an error naming the first field out of range, after
// defaults.
func (c *Config) Validate() error {
	d := c.withDefaults()
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case d.Seeds < 1:
		return fmt.Errorf("%w: Config.Seeds must be ≥ 1, got %d", ErrInvalidConfig, d.Seeds)
	case d.Steps < 1:
		return fmt.Errorf("%w: Config.Steps must be ≥ 1, got %d", ErrInvalidConfig, d.Steps)
	case d.Dim < 2:
		return fmt.Errorf("%w: Config.Dim must be ≥ 2, got %d", ErrInvalidConfig, d.Dim)
	case d.Steps > maxCells/d.Dim:
		return fmt.Errorf("%w: Config.Steps × Config.Dim must be ≤ %d, got %d × %d", ErrInvalidConfig, maxCells, d.Steps, d.Dim)
	case !(d.Noise > 0) || !finite(d.Noise):
		return fmt.Errorf("%w: Config.Noise must be positive and finite, got %v", ErrInvalidConfig, d.Noise)
	case !(d.Walk >= 0) || !finite(d.Walk):
		return fmt.Errorf("%w: Config.Walk must be ≥ 0 and finite, got %v", ErrInvalidConfig, d.Walk)
	case !(d.TidemarkRate > 0) || !finite(d.TidemarkRate):
		return fmt.Errorf("%w: Config.TidemarkRate must be positive and finite, got %v", ErrInvalidConfig, d.TidemarkRate)
	case d.Workers < 1:
		return fmt.Errorf("%w: Config.Workers must be ≥ 1, got %d", ErrInvalidConfig, d.Workers)
	case len(d.Scenarios) == 0:
		return fmt.Errorf("%w: Config.Scenarios is empty", ErrInvalidConfig)
	case len(d.Methods) == 0:
		return fmt.Errorf("%w: Config.Methods is empty", ErrInvalidConfig)
	}
	var seenS [numScenarios]bool
	for _, s := range d.Scenarios {
		if s >= numScenarios || seenS[s] {
			return fmt.Errorf("%w: Config.Scenarios has an unknown or repeated %v", ErrInvalidConfig, s)
		}
		seenS[s] = true
	}
	var seenM [numMethods]bool
	for _, m := range d.Methods {
		if m >= numMethods || seenM[m] {
			return fmt.Errorf("%w: Config.Methods has an unknown or repeated %v", ErrInvalidConfig, m)
		}
		seenM[m] = true
	}
	if err := d.Drift.Validate(); err != nil {
		return fmt.Errorf("%w: Config.Drift: %w", ErrInvalidConfig, err)
	}
	return nil
}

// lambdaMid is (λ_base + λ_max)/2 of the detector options, the sigmoid's
// midpoint that drift.go divides by (VDD's defaults 0.2 and 0.9 when
// unset, as there).
func lambdaMid(o *temporal.DriftOptions) float64 {
	base, top := 0.2, 0.9
	if o != nil && o.LambdaBase != 0 {
		base = o.LambdaBase
	}
	if o != nil && o.LambdaMax != 0 {
		top = o.LambdaMax
	}
	return (base + top) / 2
}
