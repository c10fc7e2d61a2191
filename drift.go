package tidemark

import (
	"fmt"

	"slices"
	"time"

	"github.com/tidemark/tidemark/simd"

	"github.com/tidemark/tidemark/temporal"
)

// Drift-adaptive decay (VDD, "Volatility-Driven Decay"): a drift detector
// per collection group — the normalised fact subject when a memory has
// one, else one of 16 coarse clusters of the collection — is fed every stored memory's
// embedding at write time, in log order. Its λ(t) = λ_base + (λ_max −
// λ_base)·σ(k·(V_t − V0)) (VDD Eq. 3) rises with the distance between the
// group's recent and archival centroids. tidemark applies it as a factor
// on each memory's own decay rate, relative to the sigmoid's midpoint:
// λ_memory = λ(t)/λ_mid · ln 2 / half-life with λ_mid = (λ_base +
// λ_max)/2, the λ at V_t = V0 (V0 is auto-calibrated to the 75th
// percentile of the group's early volatility, so a group drifting as
// usual sits near it). A group drifting as usual decays as its profiles
// say; a volatile one up to λ_max/λ_mid (1.64× with VDD's defaults)
// faster, a calm one down to λ_base/λ_mid (0.36×) slower — the profiles'
// per-day units are kept. (λ(t)/λ_base would decay a group at its usual
// drift 2.75× faster than its profile, since VDD's soft sigmoid, k = 10,
// never comes near λ_base for volatilities of a few tenths.) The fused stage uses it when the parameters
// ask for adaptive decay (temporal.MethodVDD) and the collection does not
// set StaticDecay. The detectors are derived data, a function of the
// memories in log order: replaying the log rebuilds them, and the
// snapshot (format 5 on) stores their state — each detector's running
// sums and counters, its group's last reading and history, the anchors
// and every row's kernel group — so that Open after Close does not feed
// every memory through them again; the embeddings in a detector's ring
// are its group's last rows' unit vectors, taken from the rows.

// DriftPoint is one reading of a group's detector.
type DriftPoint struct {
	Time       time.Time `json:"time"`
	Lambda     float64   `json:"lambda"`
	Volatility float64   `json:"volatility"`
}

// DriftState is one drift group's detector now, with its recent history.
type DriftState struct {
	// Group is the normalised fact subject, or "cluster:N" for memories
	// without one.
	Group        string `json:"group"`
	Observations int    `json:"observations"`
	// Lambda is λ(t) in the detector's units (per step); Factor the
	// multiplier it puts on the group's decay rates.
	Lambda, Factor float64
	Volatility, V0 float64
	Calibrated     bool
	Warm           bool
	// History holds the last readings (at most DriftHistory), oldest first.
	History []DriftPoint `json:"history"`
}

// DriftHistory is how many readings each group keeps for DriftState.
const DriftHistory = 256

type driftGroup struct {
	det     *temporal.DriftDetector
	last    temporal.DriftReading
	n       int
	history []DriftPoint
}

// kernelGroup is one column-store decay group: a drift group and a
// half-life, whose λ the fused stage reads from Query.GroupLambda.
type kernelGroup struct {
	drift    string
	halfLife float64
}

// driftOpts are the detectors' options (VDD's defaults).
var driftOpts = temporal.DriftOptions{}

// driftClusters is the number of coarse clusters memories without a fact
// subject fall into.
const driftClusters = 16

// driftName is row j's drift group: its normalised fact subject (of a key
// the caller gave), else a coarse cluster — the nearest (by cosine) of
// the first driftClusters subject-less memories' vectors, taken as
// anchors in log order, so the grouping is deterministic and replays the
// same (c.mu held; row j's unit vector is in the batch).
func (l *ledger) driftName(j int) string {
	// A caller's key only: a derived one may be adopted later (keys.go),
	// and the group must be the one the memory joined when written.
	r := l.rows.at(j)
	if !r.key.IsZero() && r.mem.KeyRule == "" {
		return r.key.Subject
	}
	if len(l.anchors) < driftClusters {
		l.anchors = append(l.anchors, j)
		return fmt.Sprintf("cluster:%d", len(l.anchors)-1)
	}
	vec := l.unitVector(j)
	best, bi := float32(-2), 0
	for i, a := range l.anchors {
		if d := simd.Dot(l.unitVector(a), vec); d > best {
			best, bi = d, i
		}
	}
	return fmt.Sprintf("cluster:%d", bi)
}

// observeDrift feeds row j's unit vector (its first belief's) to its
// group's detector and sets its beliefs' kernel group (c.mu held; in log
// order).
func (l *ledger) observeDrift(j int) {
	r := l.rows.at(j)
	name := l.driftName(j)
	g := l.drift[name]
	if g == nil {
		det, err := temporal.NewDriftDetector(l.opts.Dim, &driftOpts)
		if err != nil {
			panic(fmt.Sprintf("tidemark: drift detector: %v", err)) // the options are constants
		}
		g = &driftGroup{det: det}
		l.drift[name] = g
	}
	v := l.driftVector(j)
	if rd, err := g.det.Observe(v); err == nil {
		g.last = rd
		g.n++
		if len(g.history) == DriftHistory {
			g.history = slices.Delete(g.history, 0, 1)
		}
		g.history = append(g.history, DriftPoint{Time: fromDays(r.rec), Lambda: rd.Lambda, Volatility: rd.Volatility})
	}
	hl, _ := l.decay(j)
	k := kernelGroup{name, hl}
	idx, ok := l.kgIndex[k]
	if !ok {
		idx = uint32(len(l.kgroups))
		l.kgIndex[k] = idx
		l.kgroups = append(l.kgroups, k)
	}
	r.kgroup = idx
	for _, b := range r.beliefList() {
		l.batch.Group[b] = idx
	}
	l.batch.Changed(r.beliefList()...)
	l.lambdas.Store(nil)
}

// driftVector is row j's unit vector in float64, what its group's
// detector observes (in a buffer reused by the next call; the detector
// copies it).
func (l *ledger) driftVector(j int) []float64 {
	vec := l.unitVector(j)
	l.driftBuf = slices.Grow(l.driftBuf[:0], len(vec))[:len(vec)]
	for i, x := range vec {
		l.driftBuf[i] = float64(x)
	}
	return l.driftBuf
}

// groupLambdas returns the fused stage's λ per kernel group (c.mu held).
func (l *ledger) groupLambdas() []float64 {
	if p := l.lambdas.Load(); p != nil {
		return *p
	}
	out := make([]float64, len(l.kgroups))
	for i, k := range l.kgroups {
		f := 1.0
		if g := l.drift[k.drift]; g != nil && g.last.Warm {
			f = g.last.Lambda / driftMid
		}
		out[i] = f * temporal.Lambda(k.halfLife)
	}
	l.lambdas.Store(&out)
	return out
}

// driftMid is (λ_base + λ_max)/2 of the detectors' options (VDD's
// defaults 0.2 and 0.9: 0.55).
var driftMid = func() float64 {
	o := driftOpts
	if o.LambdaBase == 0 {
		o.LambdaBase = 0.2
	}
	if o.LambdaMax == 0 {
		o.LambdaMax = 0.9
	}
	return (o.LambdaBase + o.LambdaMax) / 2
}()

// Drift returns every drift group's detector state, groups sorted by name.
func (c *Collection) Drift() []DriftState {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []DriftState
	for name, g := range c.drift {
		v0, cal := g.det.V0()
		f := 1.0 // until the detector is warm
		if g.last.Warm {
			f = g.last.Lambda / driftMid
		}
		out = append(out, DriftState{Group: name, Observations: g.n, Lambda: g.last.Lambda, Factor: f,
			Volatility: g.last.Volatility, V0: v0, Calibrated: cal, Warm: g.last.Warm, History: slices.Clone(g.history)})
	}
	slices.SortFunc(out, func(a, b DriftState) int {
		switch {
		case a.Group < b.Group:
			return -1
		case a.Group > b.Group:
			return 1
		}
		return 0
	})
	return out
}
