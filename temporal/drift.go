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
	// 100–200). Each window is at most 2^30.
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
	case d.RecentWindow < 1 || d.RecentWindow > maxDriftWindow:
		return fmt.Errorf("%w: DriftOptions.RecentWindow must be in [1, 2^30], got %d", ErrInvalid, d.RecentWindow)
	case d.ArchiveWindow < 1 || d.ArchiveWindow > maxDriftWindow:
		return fmt.Errorf("%w: DriftOptions.ArchiveWindow must be in [1, 2^30], got %d", ErrInvalid, d.ArchiveWindow)
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
// The centroids are kept as running sums of the two windows: an
// observation adds the new embedding to the recent sum, moves the one it
// pushes out of the recent window to the archival sum and drops the oldest
// from it, so Observe costs O(dim) whatever the windows. The sums are
// recomputed from the held embeddings (in order, as a fresh centroid
// would be) when the detector first warms up and then every
// RecentWindow+ArchiveWindow observations, which bounds the rounding the
// running sums accumulate (and makes the reading right after a
// recomputation bit-identical to centroids taken from scratch). The
// calibration of V0 keeps the first BurnIn warm volatilities and takes
// their percentile once.
//
// A DriftDetector is not safe for concurrent use.
type DriftDetector struct {
	opt DriftOptions
	dim int
	// The ring holds the last min(observations, RecentWindow+ArchiveWindow)
	// embeddings, flat: position i (0 the oldest) is slot (head+i) mod
	// capacity. It grows by appending until full (head 0), then each
	// observation overwrites the oldest. It is narrow (float32) while
	// every value observed is exactly a float32, as the unit vectors of a
	// float32 column store are: half the memory, and the same values, so
	// the same readings. The first value that is not widens it to
	// float64 for good.
	narrow []float32
	wide   []float64
	isWide bool
	held   int
	head   int
	// recent and archive are the sums of the recent window (the last
	// RecentWindow embeddings) and of the archival window (the ones before
	// them); nil until warm. sinceExact counts the observations since they
	// were last recomputed from the ring.
	recent, archive []float64
	sinceExact      int
	volatility      float64
	v0              float64
	calibrated      bool
	burn            []float64
}

// maxDriftWindow bounds RecentWindow and ArchiveWindow (and so the ring's
// arithmetic).
const maxDriftWindow = 1 << 30

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

// capacity is the ring's size in embeddings, RecentWindow+ArchiveWindow;
// it is also the period of the exact recomputation of the sums.
func (d *DriftDetector) capacity() int { return d.opt.RecentWindow + d.opt.ArchiveWindow }

// warm reports whether both windows hold data (the ring holds at least
// 2·RecentWindow embeddings); once warm, a detector stays warm.
func (d *DriftDetector) warm() bool { return d.held >= 2*d.opt.RecentWindow }

// slot is the ring slot of position i, 0 the oldest.
func (d *DriftDetector) slot(i int) int {
	s := d.head + i
	if c := d.capacity(); s >= c {
		s -= c
	}
	return s
}

// at returns a copy of the embedding at position i of the ring, 0 the
// oldest, appended to dst.
func (d *DriftDetector) at(dst []float64, i int) []float64 {
	s := d.slot(i) * d.dim
	if d.isWide {
		return append(dst, d.wide[s:s+d.dim]...)
	}
	for _, x := range d.narrow[s : s+d.dim] {
		dst = append(dst, float64(x))
	}
	return dst
}

// exact32 reports whether every value of v is exactly a float32.
func exact32(v []float64) bool {
	for _, x := range v {
		if float64(float32(x)) != x {
			return false
		}
	}
	return true
}

// widen moves the ring to float64 (once, for good).
func (d *DriftDetector) widen() {
	w := make([]float64, len(d.narrow), cap(d.narrow))
	for i, x := range d.narrow {
		w[i] = float64(x)
	}
	d.wide, d.narrow, d.isWide = w, nil, true
}

// put writes v into ring slot s (s == held of a ring not full appends).
func (d *DriftDetector) put(s int, v []float64) {
	if !d.isWide && !exact32(v) {
		d.widen()
	}
	if d.isWide {
		if s*d.dim == len(d.wide) {
			d.wide = append(d.wide, v...)
		} else {
			copy(d.wide[s*d.dim:], v)
		}
		return
	}
	if s*d.dim == len(d.narrow) {
		for _, x := range v {
			d.narrow = append(d.narrow, float32(x))
		}
		return
	}
	for i, x := range v {
		d.narrow[s*d.dim+i] = float32(x)
	}
}

// slide moves the embedding in slot moved from the recent sum to the
// archival sum as v enters the recent one, and drops the one in slot old
// (−1: none) from the archival sum.
func slide[T float32 | float64](ring []T, dim int, v, recent, archive []float64, moved, old int) {
	m := ring[moved*dim : (moved+1)*dim]
	if old < 0 {
		for i, x := range m {
			recent[i] += v[i] - float64(x)
			archive[i] += float64(x)
		}
		return
	}
	o := ring[old*dim : (old+1)*dim]
	for i, x := range m {
		recent[i] += v[i] - float64(x)
		archive[i] += float64(x) - float64(o[i])
	}
}

// addSlot adds sign (1 or −1) times the embedding in ring slot s to sum:
// a product by ±1 is exact, so subtracting this way rounds as a − x does.
func (d *DriftDetector) addSlot(s int, sum []float64, sign float64) {
	if d.isWide {
		addRing(d.wide[s*d.dim:(s+1)*d.dim], sum, sign)
	} else {
		addRing(d.narrow[s*d.dim:(s+1)*d.dim], sum, sign)
	}
}

func addRing[T float32 | float64](e []T, sum []float64, sign float64) {
	for i, x := range e {
		sum[i] += sign * float64(x)
	}
}

// Observe adds one embedding and returns the new reading. It returns an
// error for a wrong dimension or a non-finite value, and then changes
// nothing. It costs O(dim), plus O(dim·(RecentWindow+ArchiveWindow)) once
// every RecentWindow+ArchiveWindow observations (the exact recomputation
// of the sums) and one sort of BurnIn volatilities at calibration.
func (d *DriftDetector) Observe(v []float64) (DriftReading, error) {
	if len(v) != d.dim {
		return DriftReading{}, fmt.Errorf("%w: drift detector got dimension %d, want %d", ErrInvalid, len(v), d.dim)
	}
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return DriftReading{}, fmt.Errorf("%w: drift detector got %v at index %d", ErrInvalid, x, i)
		}
	}
	cw, capn := d.opt.RecentWindow, d.capacity()
	if d.recent != nil {
		// The embedding at the recent window's start moves to the archive;
		// a full ring drops its oldest from the archive.
		moved, old := d.slot(d.held-cw), -1
		if d.held == capn {
			old = d.slot(0)
		}
		if d.isWide {
			slide(d.wide, d.dim, v, d.recent, d.archive, moved, old)
		} else {
			slide(d.narrow, d.dim, v, d.recent, d.archive, moved, old)
		}
	}
	if d.held == capn {
		d.put(d.slot(0), v)
		if d.head++; d.head == capn {
			d.head = 0
		}
	} else {
		d.grow()
		d.put(d.held, v)
		d.held++
	}

	r := DriftReading{V0: d.v0, Calibrated: d.calibrated, Lambda: d.opt.LambdaBase}
	if !d.warm() {
		return r, nil
	}
	if d.recent == nil {
		d.recent, d.archive = make([]float64, d.dim), make([]float64, d.dim)
		d.resum()
	} else if d.sinceExact++; d.sinceExact == capn {
		d.resum()
	}
	r.Warm = true
	r.Distance = 1 - centroidCosine(d.archive, d.recent, float64(d.held-cw), float64(cw))
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

// Held is the number of embeddings the windows hold: the latest
// min(observations, RecentWindow+ArchiveWindow).
func (d *DriftDetector) Held() int { return d.held }

// Embedding returns a copy of the embedding at position p of the windows
// (0 the oldest held), or nil for a p out of range.
func (d *DriftDetector) Embedding(p int) []float64 {
	if p < 0 || p >= d.held {
		return nil
	}
	return d.at(make([]float64, 0, d.dim), p)
}

// ForgetAt overwrites the embedding at position p of the windows (0 the
// oldest held, Held()−1 the latest) with a zero vector, taking it out of
// its window's sum. A zero embedding moves neither centroid: the detector
// then reads as if that observation had had no direction. It is for
// erasure (an erased memory's embedding must not outlive it); the
// readings already returned do not change. A p out of range does
// nothing.
func (d *DriftDetector) ForgetAt(p int) {
	if p < 0 || p >= d.held {
		return
	}
	s := d.slot(p)
	if d.recent != nil {
		sum := d.archive
		if p >= d.held-d.opt.RecentWindow {
			sum = d.recent
		}
		d.addSlot(s, sum, -1)
	}
	if d.isWide {
		clear(d.wide[s*d.dim : (s+1)*d.dim])
	} else {
		clear(d.narrow[s*d.dim : (s+1)*d.dim])
	}
}

// grow makes room for one more embedding in a ring that is not full,
// never beyond the ring's capacity.
func (d *DriftDetector) grow() {
	if d.isWide {
		d.wide = growRing(d.wide, d.dim, d.capacity())
	} else {
		d.narrow = growRing(d.narrow, d.dim, d.capacity())
	}
}

func growRing[T float32 | float64](ring []T, dim, capacity int) []T {
	if len(ring)+dim <= cap(ring) {
		return ring
	}
	n := max(2*cap(ring), len(ring)+dim)
	n = min(n, capacity*dim)
	out := make([]T, len(ring), n)
	copy(out, ring)
	return out
}

// resum recomputes the two sums from the ring, oldest first, as a
// centroid from scratch adds them up.
func (d *DriftDetector) resum() {
	clear(d.recent)
	clear(d.archive)
	split := d.held - d.opt.RecentWindow
	for p := range d.held {
		dst := d.archive
		if p >= split {
			dst = d.recent
		}
		d.addSlot(d.slot(p), dst, 1)
	}
	d.sinceExact = 0
}

// V0 returns the threshold in force and whether it is calibrated.
func (d *DriftDetector) V0() (float64, bool) { return d.v0, d.calibrated }

// centroidCosine is the cosine of the centroids sa/na and sb/nb clamped to
// [−1, 1]; a zero centroid has cosine 1 (distance 0), as in the reference
// implementation.
func centroidCosine(sa, sb []float64, na, nb float64) float64 {
	var dot, qa, qb float64
	for i := range sa {
		a, b := sa[i]/na, sb[i]/nb
		dot += a * b
		qa += a * a
		qb += b * b
	}
	if qa < 1e-20 || qb < 1e-20 {
		return 1
	}
	return math.Max(-1, math.Min(1, dot/(math.Sqrt(qa)*math.Sqrt(qb))))
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
