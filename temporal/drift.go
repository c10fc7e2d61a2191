package temporal

import (
	"cmp"
	"fmt"
	"math"
	"sort"
)

// Smoothing selects how the drift detector turns the centroid distance into
// the volatility that drives λ(t).
type Smoothing uint8

const (
	// SmoothingNone uses the paper's V_t directly (VDD Eq. 2).
	SmoothingNone Smoothing = iota
	// SmoothingPeer is the VDD reference implementation's detector
	// (EmbeddingDistance): volatility ← α·min(1, d/θ) + (1−α)·volatility,
	// then raised to at least Spike when d > θ; α = 0.1, θ = 0.3,
	// Spike = 0.8. It reacts to a shift at once and forgets it slowly.
	SmoothingPeer
)

// DriftOptions configure a [DriftDetector]. A nil *DriftOptions means the
// defaults; a zero field means its default.
type DriftOptions struct {
	// RecentWindow is w_curr, the number of latest embeddings in the recent
	// centroid (default 5; VDD recommends 3–5).
	RecentWindow int
	// ArchiveWindow is w_arch, the number of embeddings before the recent
	// window in the archival centroid (default 200; VDD recommends
	// 100–200).
	ArchiveWindow int
	// LambdaBase and LambdaMax bound λ(t) (defaults 0.2 and 0.9, VDD §3.3's
	// recommended ranges [0.2, 0.3] and [0.9, 0.95]). λ is per step of
	// whatever clock the caller ages memories by.
	LambdaBase, LambdaMax float64
	// K is the sigmoid steepness (default 10; VDD recommends 5–10).
	K float64
	// V0 is the volatility threshold. Zero (the default) auto-calibrates it
	// as the 75th percentile of the first BurnIn volatilities (VDD
	// Appendix D.1); until then FallbackV0 is used.
	V0 float64
	// BurnIn is the number of warm readings collected before auto
	// calibration (default 50).
	BurnIn int
	// FallbackV0 is V0 during burn-in (default 0.1, VDD's hand-tuned value).
	FallbackV0 float64
	// Smoothing picks raw V_t (default) or the peer implementation's.
	Smoothing Smoothing
	// PeerAlpha, PeerThreshold and PeerSpike are SmoothingPeer's α, θ and
	// spike (defaults 0.1, 0.3, 0.8).
	PeerAlpha, PeerThreshold, PeerSpike float64
}

// DefaultDrift returns the defaults of DriftOptions (V0 0: calibrated
// from the burn-in; Smoothing SmoothingNone).
func DefaultDrift() DriftOptions {
	return DriftOptions{RecentWindow: 5, ArchiveWindow: 200, LambdaBase: 0.2, LambdaMax: 0.9, K: 10, BurnIn: 50,
		FallbackV0: 0.1, PeerAlpha: 0.1, PeerThreshold: 0.3, PeerSpike: 0.8}
}

// WithDefaults returns a copy of o with every zero field set to its
// default (DefaultDrift); a nil o gives every default. It does not
// validate.
func (o *DriftOptions) WithDefaults() DriftOptions {
	var d DriftOptions
	if o != nil {
		d = *o
	}
	def := DefaultDrift()
	d.RecentWindow = cmp.Or(d.RecentWindow, def.RecentWindow)
	d.ArchiveWindow = cmp.Or(d.ArchiveWindow, def.ArchiveWindow)
	d.BurnIn = cmp.Or(d.BurnIn, def.BurnIn)
	d.LambdaBase = cmp.Or(d.LambdaBase, def.LambdaBase)
	d.LambdaMax = cmp.Or(d.LambdaMax, def.LambdaMax)
	d.K = cmp.Or(d.K, def.K)
	d.FallbackV0 = cmp.Or(d.FallbackV0, def.FallbackV0)
	d.PeerAlpha = cmp.Or(d.PeerAlpha, def.PeerAlpha)
	d.PeerThreshold = cmp.Or(d.PeerThreshold, def.PeerThreshold)
	d.PeerSpike = cmp.Or(d.PeerSpike, def.PeerSpike)
	return d
}

// Validate names the first field out of range (after defaults). It does
// not change o; a nil o is valid.
func (o *DriftOptions) Validate() error {
	d := o.WithDefaults()
	switch {
	case d.RecentWindow < 1:
		return fmt.Errorf("%w: DriftOptions.RecentWindow must be ≥ 1, got %d", ErrInvalid, d.RecentWindow)
	case d.ArchiveWindow < 1:
		return fmt.Errorf("%w: DriftOptions.ArchiveWindow must be ≥ 1, got %d", ErrInvalid, d.ArchiveWindow)
	case d.BurnIn < 1:
		return fmt.Errorf("%w: DriftOptions.BurnIn must be ≥ 1, got %d", ErrInvalid, d.BurnIn)
	case !(d.LambdaBase >= 0) || !(d.LambdaMax >= d.LambdaBase) || math.IsInf(d.LambdaMax, 0):
		return fmt.Errorf("%w: DriftOptions needs 0 ≤ LambdaBase ≤ LambdaMax < ∞, got %v, %v", ErrInvalid, d.LambdaBase, d.LambdaMax)
	case !(d.K > 0) || math.IsInf(d.K, 0):
		return fmt.Errorf("%w: DriftOptions.K must be positive, got %v", ErrInvalid, d.K)
	case d.V0 < 0 || math.IsNaN(d.V0) || d.FallbackV0 < 0 || math.IsNaN(d.FallbackV0):
		return fmt.Errorf("%w: DriftOptions.V0 and FallbackV0 must be ≥ 0", ErrInvalid)
	case !(d.PeerAlpha > 0 && d.PeerAlpha <= 1) || !(d.PeerThreshold > 0) || !(d.PeerSpike >= 0 && d.PeerSpike <= 1):
		return fmt.Errorf("%w: DriftOptions.Peer* out of range (α in (0,1], θ > 0, spike in [0,1])", ErrInvalid)
	case d.Smoothing > SmoothingPeer:
		return fmt.Errorf("%w: DriftOptions.Smoothing is %d", ErrInvalid, d.Smoothing)
	}
	return nil
}

// DriftLambda is VDD Eq. 3:
//
//	λ(t) = λ_base + (λ_max − λ_base) · σ(k · (V_t − V0))
func DriftLambda(v, base, max, k, v0 float64) float64 {
	return base + (max-base)*sigmoid(k*(v-v0))
}

// DriftReading is the detector's state after one observation.
type DriftReading struct {
	// Distance is V_t = 1 − cos(μ_recent, μ_archival) (VDD Eq. 2); 0 while
	// warming up.
	Distance float64
	// Volatility is what drives λ: Distance, or its smoothing.
	Volatility float64
	// V0 is the threshold in force; Calibrated reports whether it came from
	// the burn-in (or was set explicitly) rather than FallbackV0.
	V0         float64
	Calibrated bool
	// Lambda is λ(t); exactly LambdaBase while warming up.
	Lambda float64
	// Warm is false until both windows hold data.
	Warm bool
}

// DriftDetector is VDD's volatility detector (§3.2–3.3): it keeps the latest
// RecentWindow embeddings and the ArchiveWindow embeddings before them,
// measures the cosine distance between their centroids and maps it to a
// decay rate λ(t). It is warm once the recent window is full and the archive
// holds at least RecentWindow embeddings.
//
// A DriftDetector is not safe for concurrent use.
type DriftDetector struct {
	opt        DriftOptions
	dim        int
	ring       [][]float64 // the last RecentWindow+ArchiveWindow embeddings, oldest first
	volatility float64
	v0         float64
	calibrated bool
	burn       []float64
}

// NewDriftDetector returns a detector for embeddings of dimension dim.
func NewDriftDetector(dim int, opts *DriftOptions) (*DriftDetector, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("%w: drift detector dimension must be positive, got %d", ErrInvalid, dim)
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.WithDefaults()
	d := &DriftDetector{opt: o, dim: dim, v0: o.FallbackV0}
	if o.V0 > 0 {
		d.v0, d.calibrated = o.V0, true
	}
	return d, nil
}

// Observe adds one embedding and returns the new reading. It returns an
// error for a wrong dimension or a non-finite value, and then changes
// nothing.
func (d *DriftDetector) Observe(v []float64) (DriftReading, error) {
	if len(v) != d.dim {
		return DriftReading{}, fmt.Errorf("%w: drift detector got dimension %d, want %d", ErrInvalid, len(v), d.dim)
	}
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return DriftReading{}, fmt.Errorf("%w: drift detector got %v at index %d", ErrInvalid, x, i)
		}
	}
	cw, aw := d.opt.RecentWindow, d.opt.ArchiveWindow
	if len(d.ring) == cw+aw {
		copy(d.ring, d.ring[1:])
		d.ring = d.ring[:len(d.ring)-1]
	}
	d.ring = append(d.ring, append([]float64(nil), v...))

	r := DriftReading{V0: d.v0, Calibrated: d.calibrated, Lambda: d.opt.LambdaBase}
	if len(d.ring) < 2*cw {
		return r, nil
	}
	split := len(d.ring) - cw
	r.Warm = true
	r.Distance = 1 - cosineClamped(centroid(d.ring[:split], d.dim), centroid(d.ring[split:], d.dim))
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
	return r, nil
}

// V0 returns the threshold in force and whether it is calibrated.
func (d *DriftDetector) V0() (float64, bool) { return d.v0, d.calibrated }

func centroid(vs [][]float64, dim int) []float64 {
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

// cosineClamped is the cosine clamped to [−1, 1]; a zero centroid has
// cosine 1 (distance 0), as in the reference implementation.
func cosineClamped(a, b []float64) float64 {
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

// Percentile is the p-th percentile (0–100) of xs with linear interpolation
// between closest ranks (NumPy's default "linear" method, which VDD's
// auto-calibration used). It does not modify xs and returns NaN for an empty
// slice.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	pos := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	if lo < 0 {
		return s[0]
	}
	frac := pos - float64(lo)
	return s[lo] + frac*(s[lo+1]-s[lo])
}
