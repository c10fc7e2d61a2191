package driftsim

import (
	"fmt"
	"math"
)

// Method is a decay strategy. Every method keeps each observation with its
// step and estimates the current state as a weighted mean of the stored
// observations, the one of the current step included (VDD §3.5's
// Algorithm: observe, then score); its rule is the weight of an
// observation of age a = t − t_m steps:
//
//   - NoDecay: 1 (the mean of everything).
//   - Static01, Static02, Recency05 and the TimeWeighted methods:
//     exp(−λ·a) with a fixed λ (VDD Eq. 1 with λ(t) ≡ λ). "Time-weighted
//     retrieval" is VDD §4.2's name for what vector stores offer natively,
//     score = similarity · exp(−α·age), kept over the whole history; in
//     this model it is the same rule as static decay with a small rate α,
//     the two families differ only in their rates. (The VDD scripts run
//     static and recency as a running average m ← (1−λ)·m + λ·o, i.e.
//     weights (1−λ)^a, a rate of −ln(1−λ): 0.105, 0.223 and 0.693 per step
//     for λ = 0.1, 0.2 and 0.5. That reparametrisation keeps the order of
//     the rates.)
//   - The Sliding methods: 1 for the N latest observations, 0 before.
//   - VDD: exp(−λ(t)·a), λ(t) the λ of a [temporal.DriftDetector] fed every
//     observation (VDD Eq. 1 and 3, §3.5: the current λ(t) applied to every
//     memory's whole age, as tidemark's engine applies it; the VDD scripts
//     instead compound, m ← (1−λ(t))·m + λ(t)·o).
//   - Tidemark: exp(−λ_m(t)·a) with λ_m(t) = λ(t)/λ_mid · ρ, the root
//     package's drift-adaptive decay (drift.go): λ(t) from the same
//     detector and options, λ_mid = (λ_base + λ_max)/2, and ρ =
//     [Config].TidemarkRate standing in for the profile's ln 2 / half-life
//     (the engine's profiles are per day; this clock has steps and no
//     profile); λ_m = ρ until the detector is warm, as in the engine.
type Method uint8

const (
	NoDecay         Method = iota // no_decay
	Static01                      // static_0.1: λ = 0.1
	Static02                      // static_0.2: λ = 0.2
	Recency05                     // recency_0.5: λ = 0.5
	TimeWeighted001               // time_weighted_0.01: α = 0.01
	TimeWeighted002               // time_weighted_0.02: α = 0.02
	TimeWeighted005               // time_weighted_0.05: α = 0.05
	Sliding20                     // sliding_window_20: N = 20
	Sliding50                     // sliding_window_50: N = 50
	Sliding100                    // sliding_window_100: N = 100
	VDD                           // vdd: λ(t) of temporal.DriftDetector
	Tidemark                      // tidemark: the engine's λ(t)/λ_mid factor
	numMethods
)

// rule is how a method weighs its history.
type rule uint8

const (
	ruleMean     rule = iota // weight 1
	ruleExp                  // exp(−param·age), incrementally
	ruleWindow               // the last param observations
	ruleVDD                  // exp(−λ(t)·age), rescanned
	ruleTidemark             // exp(−λ(t)/λ_mid·ρ·age), rescanned
)

var methodSpecs = [numMethods]struct {
	name  string
	rule  rule
	param float64
}{
	NoDecay:         {"no_decay", ruleMean, 0},
	Static01:        {"static_0.1", ruleExp, 0.1},
	Static02:        {"static_0.2", ruleExp, 0.2},
	Recency05:       {"recency_0.5", ruleExp, 0.5},
	TimeWeighted001: {"time_weighted_0.01", ruleExp, 0.01},
	TimeWeighted002: {"time_weighted_0.02", ruleExp, 0.02},
	TimeWeighted005: {"time_weighted_0.05", ruleExp, 0.05},
	Sliding20:       {"sliding_window_20", ruleWindow, 20},
	Sliding50:       {"sliding_window_50", ruleWindow, 50},
	Sliding100:      {"sliding_window_100", ruleWindow, 100},
	VDD:             {"vdd", ruleVDD, 0},
	Tidemark:        {"tidemark", ruleTidemark, 0},
}

// Methods returns every method, the default set, in declaration order.
func Methods() []Method {
	out := make([]Method, numMethods)
	for i := range out {
		out[i] = Method(i)
	}
	return out
}

// String returns the method's name, e.g. "static_0.1".
func (m Method) String() string {
	if m < numMethods {
		return methodSpecs[m].name
	}
	return fmt.Sprintf("Method(%d)", uint8(m))
}

// MarshalText returns the method's name; an unknown value is an error.
func (m Method) MarshalText() ([]byte, error) {
	if m >= numMethods {
		return nil, fmt.Errorf("%w: unknown method %d", ErrInvalidConfig, uint8(m))
	}
	return []byte(methodSpecs[m].name), nil
}

// UnmarshalText parses a name that String returns.
func (m *Method) UnmarshalText(b []byte) error {
	v, err := ParseMethod(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// ParseMethod returns the method named name (as String returns it).
func ParseMethod(name string) (Method, error) {
	for i, s := range methodSpecs {
		if s.name == name {
			return Method(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown method %q", ErrInvalidConfig, name)
}

// scanCutoff ends a rescan once an observation's weight, relative to the
// current one's 1, falls below it: the rest of the sum is then below
// 1e−18/(1 − e^−λ) of the total, under float64's resolution for λ ≥ 0.01.
const scanCutoff = 1e-18

// Kernels: unchecked, on equal-length slices.

// axpy is dst += a·x.
func axpy(dst []float64, a float64, x []float64) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] += a * x[i]
	}
}

// decayAdd is dst = q·dst + x.
func decayAdd(dst []float64, q float64, x []float64) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] = q*dst[i] + x[i]
	}
}

// scan sets dst to Σ_{a=0}^{t} exp(−λ·a)·o_{t−a}, stopping at scanCutoff.
func scan(dst []float64, st *stream, t int, lambda float64) {
	clear(dst)
	q, w := math.Exp(-lambda), 1.0
	for a := 0; a <= t && w >= scanCutoff; a++ {
		axpy(dst, w, st.obsAt(t-a))
		w *= q
	}
}

// cosDist is 1 − cos(x, y), clamped to [0, 2]; 1 when either is zero.
func cosDist(x, y []float64) float64 {
	y = y[:len(x)]
	var dot, nx, ny float64
	for i := range x {
		dot += x[i] * y[i]
		nx += x[i] * x[i]
		ny += y[i] * y[i]
	}
	if nx == 0 || ny == 0 {
		return 1
	}
	return min(2, max(0, 1-dot/math.Sqrt(nx*ny)))
}
