package temporal

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// DriftDetectorState is everything a [DriftDetector] holds except the
// embeddings in its ring: with those (the last Held observations) it
// restores the detector exactly ([RestoreDriftDetector]), so that it goes
// on giving the readings the original would have. A caller that keeps the
// embeddings itself (a store that logs them) persists this and not them;
// [DriftDetector.MarshalBinary] writes both.
type DriftDetectorState struct {
	Dim int
	// Options are the detector's, defaults filled in.
	Options DriftOptions
	// Held is the number of embeddings in the ring: min(observations,
	// RecentWindow+ArchiveWindow).
	Held int
	// RecentSum and ArchiveSum are the running sums of the recent and
	// archival windows, nil until warm (Held ≥ 2·RecentWindow);
	// SinceExact counts the observations since they were recomputed from
	// the ring (less than RecentWindow+ArchiveWindow).
	RecentSum, ArchiveSum []float64
	SinceExact            int
	// Volatility is the smoothed volatility (the last distance without
	// smoothing); V0 and Calibrated the threshold in force.
	Volatility, V0 float64
	Calibrated     bool
	// Burn holds the warm volatilities collected for calibration so far
	// (empty once calibrated).
	Burn []float64
}

// State returns the detector's state (copies of its slices).
func (d *DriftDetector) State() DriftDetectorState {
	return DriftDetectorState{Dim: d.dim, Options: d.opt, Held: d.held,
		RecentSum: slices.Clone(d.recent), ArchiveSum: slices.Clone(d.archive), SinceExact: d.sinceExact,
		Volatility: d.volatility, V0: d.v0, Calibrated: d.calibrated, Burn: slices.Clone(d.burn)}
}

// RestoreDriftDetector returns the detector whose state is s and whose
// ring holds ring (s.Held embeddings, oldest first; they are copied). It
// returns an error wrapping ErrInvalid for a state no detector could be
// in.
func RestoreDriftDetector(s DriftDetectorState, ring [][]float64) (*DriftDetector, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if len(ring) != s.Held {
		return nil, fmt.Errorf("%w: drift state holds %d embeddings, got %d", ErrInvalid, s.Held, len(ring))
	}
	d := &DriftDetector{opt: s.Options, dim: s.Dim, held: s.Held, sinceExact: s.SinceExact,
		volatility: s.Volatility, v0: s.V0, calibrated: s.Calibrated}
	for i, v := range ring {
		if len(v) != s.Dim || !allFinite(v) {
			return nil, fmt.Errorf("%w: drift state embedding %d: %d values, not all finite or not %d", ErrInvalid, i, len(v), s.Dim)
		}
		if !exact32(v) {
			d.isWide = true
		}
	}
	if d.isWide {
		d.wide = make([]float64, 0, s.Held*s.Dim)
	} else {
		d.narrow = make([]float32, 0, s.Held*s.Dim)
	}
	for i, v := range ring {
		d.put(i, v)
	}
	if s.RecentSum != nil {
		d.recent, d.archive = slices.Clone(s.RecentSum), slices.Clone(s.ArchiveSum)
	}
	if len(s.Burn) > 0 {
		d.burn = slices.Clone(s.Burn)
	}
	return d, nil
}

// check validates a state, all but the ring.
func (s *DriftDetectorState) check() error {
	bad := func(what string) error { return fmt.Errorf("%w: drift state: %s", ErrInvalid, what) }
	o := s.Options
	switch {
	case s.Dim <= 0 || s.Dim > math.MaxInt32:
		return bad(fmt.Sprintf("dimension %d", s.Dim))
	case o != o.WithDefaults():
		return bad("options without their defaults")
	}
	if err := o.Validate(); err != nil {
		return err
	}
	capn, warm := o.RecentWindow+o.ArchiveWindow, s.Held >= 2*o.RecentWindow
	switch {
	case s.Held < 0 || s.Held > capn:
		return bad(fmt.Sprintf("%d embeddings held, the ring holds %d", s.Held, capn))
	case warm != (s.RecentSum != nil) || warm != (s.ArchiveSum != nil):
		return bad("running sums present iff warm")
	case warm && (len(s.RecentSum) != s.Dim || len(s.ArchiveSum) != s.Dim):
		return bad("running sums of the wrong dimension")
	case s.SinceExact < 0 || s.SinceExact >= capn || (!warm && s.SinceExact != 0):
		return bad(fmt.Sprintf("%d observations since the exact sums", s.SinceExact))
	case s.Volatility < 0 || (!warm && s.Volatility != 0):
		return bad(fmt.Sprintf("volatility %v", s.Volatility))
	case s.V0 < 0:
		return bad(fmt.Sprintf("V0 %v", s.V0))
	case s.Calibrated && len(s.Burn) > 0, !s.Calibrated && (len(s.Burn) >= o.BurnIn || s.V0 != o.FallbackV0 || o.V0 > 0):
		return bad("calibration")
	case !warm && len(s.Burn) > 0:
		return bad("burn-in volatilities")
	}
	// The sums, the volatility and V0 are not checked for finiteness:
	// finite embeddings large enough to overflow a sum make them infinite
	// or NaN, as they do the reference centroids; the ring is finite
	// (Observe refuses anything else).
	return nil
}

func allFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// driftStateVersion is the version byte of MarshalBinary's format.
const driftStateVersion = 1

// MarshalBinary writes the detector's state and its ring: byte version
// (1), uvarint dimension, the options (uvarint RecentWindow,
// ArchiveWindow, BurnIn, byte Smoothing, float64 LambdaBase, LambdaMax,
// K, V0, FallbackV0, PeerAlpha, PeerThreshold, PeerSpike), uvarint held
// and held × dim float64 (the ring, oldest first), bool warm and if warm
// dim float64 recent sum, dim float64 archival sum and uvarint the
// observations since they were exact, float64 volatility and V0, bool
// calibrated, uvarint n and n × float64 burn-in volatilities. Integers are
// varints, floats 8 little-endian bytes (encoding/binary).
func (d *DriftDetector) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 128+8*(d.held+2)*d.dim+8*len(d.burn))
	b = append(b, driftStateVersion)
	b = binary.AppendUvarint(b, uint64(d.dim))
	o := &d.opt
	for _, x := range []int{o.RecentWindow, o.ArchiveWindow, o.BurnIn} {
		b = binary.AppendUvarint(b, uint64(x))
	}
	b = append(b, byte(o.Smoothing))
	for _, x := range []float64{o.LambdaBase, o.LambdaMax, o.K, o.V0, o.FallbackV0, o.PeerAlpha, o.PeerThreshold, o.PeerSpike} {
		b = appendFloat(b, x)
	}
	b = binary.AppendUvarint(b, uint64(d.held))
	buf := make([]float64, 0, d.dim)
	for p := range d.held {
		b = appendFloats(b, d.at(buf[:0], p))
	}
	b = appendBool(b, d.recent != nil)
	if d.recent != nil {
		b = appendFloats(b, d.recent)
		b = appendFloats(b, d.archive)
		b = binary.AppendUvarint(b, uint64(d.sinceExact))
	}
	b = appendFloat(b, d.volatility)
	b = appendFloat(b, d.v0)
	b = appendBool(b, d.calibrated)
	b = binary.AppendUvarint(b, uint64(len(d.burn)))
	return appendFloats(b, d.burn), nil
}

// UnmarshalBinary replaces d with the detector MarshalBinary wrote. It
// returns an error wrapping ErrInvalid, and leaves d as it was, for bytes
// that are not such a detector; it never panics.
func (d *DriftDetector) UnmarshalBinary(b []byte) error {
	r := stateReader{b: b}
	if v := r.byte(); r.err == nil && v != driftStateVersion {
		return fmt.Errorf("%w: drift state version %d, this build reads %d", ErrInvalid, v, driftStateVersion)
	}
	var s DriftDetectorState
	if s.Dim = r.count(math.MaxInt32, 0); s.Dim == 0 {
		r.fail("dimension")
	}
	o := &s.Options
	for _, p := range []*int{&o.RecentWindow, &o.ArchiveWindow, &o.BurnIn} {
		*p = r.count(math.MaxInt32, 0)
	}
	o.Smoothing = Smoothing(r.byte())
	for _, p := range []*float64{&o.LambdaBase, &o.LambdaMax, &o.K, &o.V0, &o.FallbackV0, &o.PeerAlpha, &o.PeerThreshold, &o.PeerSpike} {
		*p = r.float()
	}
	s.Held = r.count(maxDriftWindow*2, 8*s.Dim)
	var ring [][]float64
	if r.err == nil {
		ring = make([][]float64, s.Held)
		for i := range ring {
			ring[i] = r.floats(s.Dim)
		}
	}
	if r.bool() {
		s.RecentSum, s.ArchiveSum = r.floats(s.Dim), r.floats(s.Dim)
		s.SinceExact = r.count(maxDriftWindow*2, 0)
	}
	s.Volatility, s.V0, s.Calibrated = r.float(), r.float(), r.bool()
	if n := r.count(math.MaxInt32, 8); n > 0 {
		s.Burn = r.floats(n)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d trailing bytes", len(r.b))
	}
	if r.err != nil {
		return fmt.Errorf("%w: drift state: %w", ErrInvalid, r.err)
	}
	nd, err := RestoreDriftDetector(s, ring)
	if err != nil {
		return err
	}
	*d = *nd
	return nil
}

func appendFloat(b []byte, x float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
}

func appendFloats(b []byte, xs []float64) []byte {
	for _, x := range xs {
		b = appendFloat(b, x)
	}
	return b
}

func appendBool(b []byte, x bool) []byte {
	if x {
		return append(b, 1)
	}
	return append(b, 0)
}

// stateReader reads MarshalBinary's values; the first error sticks and
// every later read returns zero.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("bad or short %s", what)
	}
}

func (r *stateReader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.fail("byte")
		return 0
	}
	x := r.b[0]
	r.b = r.b[1:]
	return x
}

func (r *stateReader) bool() bool {
	switch r.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail("bool")
	return false
}

// count reads a uvarint of at most max that announces that many values of
// at least minBytes bytes each (which must be left).
func (r *stateReader) count(max, minBytes int) int {
	if r.err != nil {
		return 0
	}
	x, n := binary.Uvarint(r.b)
	if n <= 0 || x > uint64(max) || (minBytes > 0 && x > uint64(len(r.b)-n)/uint64(minBytes)) {
		r.fail("count")
		return 0
	}
	r.b = r.b[n:]
	return int(x)
}

func (r *stateReader) float() float64 {
	if r.err != nil || len(r.b) < 8 {
		r.fail("float64")
		return 0
	}
	x := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return x
}

// floats reads n float64 values.
func (r *stateReader) floats(n int) []float64 {
	if r.err != nil || n > len(r.b)/8 {
		r.fail("float64 values")
		return nil
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(r.b[8*i:]))
	}
	r.b = r.b[8*n:]
	return out
}
