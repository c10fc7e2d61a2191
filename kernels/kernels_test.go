package kernels

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/tidemark/tidemark/temporal"
)

// Dimensions at every loop tail and the real embedding sizes.
var testDims = func() []int {
	d := make([]int, 0, 40)
	for i := 1; i <= 33; i++ {
		d = append(d, i)
	}
	return append(d, 67, 777, 384, 768, 1024, 1536)
}()

// f32 rounds to a float32-representable float64, so the reference sees
// exactly the metadata the batch stores.
func f32(x float64) float64 { return float64(float32(x)) }

// randomMeta returns random metadata that exercises every mask and signal.
func randomMeta(r *rand.Rand, id uint64) temporal.Candidate {
	created := f32(-r.Float64() * 800)
	c := temporal.Candidate{
		ID: id, Kind: temporal.Kind(r.IntN(3)), Status: temporal.Status(r.IntN(5)), CreatedAt: created,
		Valid: temporal.Always, Recorded: temporal.Always,
		HalfLife: []float64{1, 7, 30, 60, 90, 365, 0}[r.IntN(7)], Floor: []float64{0, 0, 0.1, 0.7}[r.IntN(4)],
		BaseConfidence: f32(r.Float64()), ConfidenceFrom: created,
		Access: float64(r.IntN(50)), Positive: float64(r.IntN(5)), Negative: float64(r.IntN(3)), Degree: float64(r.IntN(30)),
	}
	if r.IntN(3) == 0 {
		c.Valid = temporal.Window{From: f32(created - r.Float64()*10), To: f32(created + r.Float64()*900)}
	}
	if r.IntN(4) == 0 {
		c.Recorded = temporal.Window{From: f32(created + r.Float64()*5), To: f32(created + r.Float64()*1000)}
	}
	return c
}

func randomVector(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for {
		var ss float64
		for i := range v {
			v[i] = float32(r.NormFloat64())
			ss += float64(v[i]) * float64(v[i])
		}
		if ss > 0 {
			return v
		}
	}
}

// randomBatch builds a batch of n candidates; some are near-copies of the
// query so that scores spread, and a few share a similarity (ties).
func randomBatch(t testing.TB, r *rand.Rand, n, dim, groups int, q []float32) *Batch {
	b, err := NewBatch(dim, n)
	if err != nil {
		t.Fatal(err)
	}
	ids := r.Perm(4 * n)
	for i := 0; i < n; i++ {
		v := randomVector(r, dim)
		if r.IntN(4) == 0 {
			for j := range v {
				v[j] = q[j] + 0.3*v[j]
			}
		}
		if err := b.Append(v, randomMeta(r, uint64(ids[i])), uint32(r.IntN(groups))); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// reference scores the batch with temporal.ScorePool, the similarities
// computed in float64 from the stored float32 vectors.
func reference(t testing.TB, b *Batch, q *Query, p *temporal.Params) (temporal.Result, map[uint64]float64) {
	qn := make([]float32, b.Dim)
	if err := normalized(q.Vector, qn, "query"); err != nil {
		t.Fatal(err)
	}
	cands := make([]temporal.Candidate, b.Len())
	for i := range cands {
		var dot float64
		row := b.Vectors[i*b.Dim : (i+1)*b.Dim]
		for j, x := range row {
			dot += float64(x) * float64(qn[j])
		}
		lambda := 0.0
		if p.AdaptiveDecay {
			lambda = q.GroupLambda[b.Group[i]]
		}
		cands[i] = b.Candidate(i, dot, lambda)
	}
	res, err := temporal.ScorePool(q.Time, *p, cands)
	if err != nil {
		t.Fatal(err)
	}
	scores := map[uint64]float64{}
	for _, s := range res.Ranked {
		scores[s.ID] = s.Score
	}
	return res, scores
}

// simErr bounds the absolute error of a backend's float32 cosine of unit
// vectors against the float64 reference, about twice the worst measured
// over 3000 pairs (half of them near-copies, cos ≈ 0.95) at d = 33…1536:
// package simd's dot products 2.2e-7 with AVX2 and 2.6e-7 generic (noasm),
// Plain's sequential float32 sum 2.0e-6, all at the larger dimensions.
func simErr(be Backend) float64 {
	if _, ok := be.(Plain); ok {
		return 5e-6
	}
	return 5.5e-7
}

// scoreTol is the documented bound for one score. Min–max normalisation of
// the similarities (the article's vector_score) divides their error serr
// by the pool's spread, so a pool whose similarities span 0.004 turns a
// 2e-7 cosine error into 5e-5: that term is added for NormalizeSim.
func scoreTol(want float64, p *temporal.Params, ref temporal.Result, serr float64) float64 {
	tol := 1e-5 * math.Max(math.Abs(want), 0.05)
	if p.NormalizeSim && len(ref.Ranked) > 1 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range ref.Ranked {
			lo, hi = math.Min(lo, s.Signals.Sim), math.Max(hi, s.Signals.Sim)
		}
		if hi > lo {
			tol += p.Weights.Sim * 2 * serr / (hi - lo)
		}
	}
	return tol
}

func testQuery(r *rand.Rand, dim, groups int) Query {
	q := Query{Vector: randomVector(r, dim), Time: temporal.At(0)}
	switch r.IntN(4) {
	case 1:
		q.Time.At = -200 // as of a past valid time
	case 2:
		q.Time.TxAt = -300 // as of a past transaction time
	case 3:
		q.Time.HasRange, q.Time.Range = true, temporal.Window{From: -500, To: -50}
	}
	if r.IntN(5) == 0 {
		q.Time.Kinds = temporal.KindsOf(temporal.Static, temporal.Event)
	}
	if r.IntN(5) == 0 {
		q.Time.Statuses = temporal.StatusesOf(temporal.Active, temporal.Unconsolidated, temporal.Dormant)
	}
	q.GroupLambda = make([]float64, groups)
	for g := range q.GroupLambda {
		q.GroupLambda[g] = r.Float64() * 0.05
	}
	return q
}

// forEachBackend is the one test body every backend runs.
func forEachBackend(t *testing.T, f func(t *testing.T, be Backend)) {
	for _, be := range Backends() {
		t.Run(be.Name(), func(t *testing.T) { f(t, be) })
	}
	// A CPU backend with tiny chunks exercises the parallel split and the
	// chunk boundaries even on small inputs.
	small := NewCPU(&CPUOptions{Workers: 3, ChunkRows: 7, BlockRows: 5})
	defer small.Close()
	t.Run("cpu-small-chunks", func(t *testing.T) { f(t, small) })
	t.Run("plain-go", func(t *testing.T) { f(t, Plain{}) })
}

func TestScoreMatchesReference(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be Backend) {
		r := rand.New(rand.NewPCG(11, uint64(len(be.Name()))))
		for _, dim := range testDims {
			n := 40
			if dim <= 33 {
				n = 25 + dim
			}
			q := testQuery(r, dim, 3)
			b := randomBatch(t, r, n, dim, 3, q.Vector)
			for _, p := range presetsAndHolds() {
				m := p.Method
				if r.IntN(3) == 0 {
					p.MinSim, p.StaleBelow = 0.05, 0.02
				}
				ref, want := reference(t, b, &q, &p)
				refReason := map[uint64]temporal.Reason{}
				for _, rm := range ref.Removed {
					refReason[rm.ID] = rm.Reason
				}
				out := make([]float64, n)
				reasons := make([]temporal.Reason, n)
				st, err := be.Score(context.Background(), b, &q, &p, out, reasons)
				if err != nil {
					t.Fatalf("dim %d %v: %v", dim, m, err)
				}
				if st.Scored != len(ref.Ranked) || st.RemovedTotal() != len(ref.Removed) {
					t.Errorf("dim %d %v: stats %d scored %d removed, reference %d/%d", dim, m, st.Scored, st.RemovedTotal(), len(ref.Ranked), len(ref.Removed))
				}
				for i := 0; i < n; i++ {
					id := b.ID[i]
					if reasons[i] != refReason[id] {
						t.Errorf("dim %d %v: candidate %d reason %v, reference %v", dim, m, id, reasons[i], refReason[id])
						continue
					}
					if reasons[i] != temporal.ReasonNone {
						if !math.IsNaN(out[i]) {
							t.Errorf("dim %d %v: removed candidate %d scored %v", dim, m, id, out[i])
						}
						continue
					}
					if math.Abs(out[i]-want[id]) > scoreTol(want[id], &p, ref, simErr(be)) {
						t.Errorf("dim %d %v: candidate %d score %.9f, reference %.9f", dim, m, id, out[i], want[id])
					}
				}
			}
		}
	})
}

// checkTopK verifies hits against the reference: every hit was kept, has
// the reference's score, and no kept candidate scoring clearly better was
// left out.
func checkTopK(t *testing.T, be Backend, what string, hits []Hit, k int, p *temporal.Params, ref temporal.Result, want map[uint64]float64) {
	t.Helper()
	wantN := min(k, len(ref.Ranked))
	if len(hits) != wantN {
		t.Fatalf("%s: %d hits, want %d", what, len(hits), wantN)
	}
	seen := map[uint64]bool{}
	refSim := map[uint64]float64{}
	for _, s := range ref.Ranked {
		refSim[s.ID] = s.Signals.Sim
	}
	for i, h := range hits {
		w, kept := want[h.ID]
		if !kept {
			t.Fatalf("%s: hit %d (id %d) was masked or unknown", what, i, h.ID)
		}
		if ws := refSim[h.ID]; math.Abs(h.Sim-ws) > simErr(be) {
			t.Errorf("%s: id %d cosine %.9f, reference %.9f", what, h.ID, h.Sim, refSim[h.ID])
		}
		if seen[h.ID] {
			t.Fatalf("%s: id %d twice", what, h.ID)
		}
		seen[h.ID] = true
		if math.Abs(h.Score-w) > scoreTol(w, p, ref, simErr(be)) {
			t.Errorf("%s: id %d score %.9f, reference %.9f", what, h.ID, h.Score, w)
		}
		if i > 0 && better(h.Score, h.ID, hits[i-1].Score, hits[i-1].ID) {
			t.Errorf("%s: hits out of order at %d", what, i)
		}
	}
	if wantN > 0 {
		worst := hits[wantN-1].Score
		for _, s := range ref.Ranked {
			if !seen[s.ID] && s.Score > worst+scoreTol(worst, p, ref, simErr(be)) {
				t.Errorf("%s: missed id %d with score %.9f > %.9f", what, s.ID, s.Score, worst)
			}
		}
	}
}

// presetsAndHolds are every preset, then SmartVector's and the article's
// with the confidence clock of static memories held (HoldStatic, the
// engine's shown confidence), so that the hold is tested where the
// confidence weighs most and with pool statistics.
func presetsAndHolds() []temporal.Params {
	var out []temporal.Params
	for _, m := range temporal.Methods() {
		out = append(out, temporal.Preset(m))
	}
	for _, m := range []temporal.Method{temporal.MethodSmartVector, temporal.MethodArticle} {
		p := temporal.Preset(m)
		p.Confidence.HoldStatic = true
		out = append(out, p)
	}
	return out
}

// topKParams are presetsAndHolds, then the relevance-gated combine with the
// pool-normalised similarity and the semantic penalty, and with unmasked
// out-of-window candidates: the pruning bound must hold for each.
func topKParams() []temporal.Params {
	out := presetsAndHolds()
	g := temporal.Preset(temporal.MethodTidemark)
	g.NormalizeSim, g.RelevanceThreshold, g.RelevancePenalty = true, 0.15, 0.3
	out = append(out, g)
	g = temporal.Preset(temporal.MethodTidemark)
	g.MaskExpired, g.OutOfWindow, g.Weights = false, 0.5, temporal.Weights{Sim: 0.2, Time: 0.5, Conf: 0.4, Rel: 0.3}
	return append(out, g)
}

func TestTopKMatchesReference(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be Backend) {
		r := rand.New(rand.NewPCG(12, 1))
		for _, dim := range []int{1, 3, 8, 17, 33, 67, 384, 768} {
			for _, n := range []int{0, 1, 5, 100, 1500} {
				q := testQuery(r, dim, 2)
				b := randomBatch(t, r, n, dim, 2, q.Vector)
				for vi, p := range topKParams() {
					ref, want := reference(t, b, &q, &p)
					for _, k := range []int{0, 1, 10, n + 5} {
						hits, st, err := be.TopK(context.Background(), b, &q, &p, k, nil)
						if err != nil {
							t.Fatal(err)
						}
						checkTopK(t, be, fmt.Sprintf("%s %s #%d", be.Name(), p.Method, vi), hits, k, &p, ref, want)
						if st.Scored != len(ref.Ranked) {
							t.Errorf("scored %d, reference %d", st.Scored, len(ref.Ranked))
						}
					}
				}
			}
		}
	})
}

// Property: TopK is the first k of a full sort of Score's output.
func TestTopKEqualsFullSort(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be Backend) {
		r := rand.New(rand.NewPCG(13, 1))
		q := testQuery(r, 48, 1)
		b := randomBatch(t, r, 3000, 48, 1, q.Vector)
		// Force ties: copy some vectors and metadata onto others.
		for i := 0; i < 200; i++ {
			src, dst := r.IntN(b.Len()), r.IntN(b.Len())
			copy(b.Vectors[dst*48:(dst+1)*48], b.Vectors[src*48:(src+1)*48])
			for _, c := range b.floatColumns() {
				(*c)[dst] = (*c)[src]
			}
			b.Kind[dst], b.Status[dst], b.Group[dst] = b.Kind[src], b.Status[src], b.Group[src]
		}
		for _, m := range temporal.Methods() {
			p := temporal.Preset(m)
			out := make([]float64, b.Len())
			reasons := make([]temporal.Reason, b.Len())
			if _, err := be.Score(context.Background(), b, &q, &p, out, reasons); err != nil {
				t.Fatal(err)
			}
			var all []Hit
			for i, s := range out {
				if reasons[i] == temporal.ReasonNone {
					all = append(all, Hit{Index: i, ID: b.ID[i], Score: s})
				}
			}
			sort.Slice(all, func(a, c int) bool { return better(all[a].Score, all[a].ID, all[c].Score, all[c].ID) })
			for _, k := range []int{1, 7, 64, 5000} {
				hits, _, err := be.TopK(context.Background(), b, &q, &p, k, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(hits) != min(k, len(all)) {
					t.Fatalf("%v k=%d: %d hits, want %d", m, k, len(hits), min(k, len(all)))
				}
				for i := range hits {
					h := hits[i]
					h.Sim = 0 // Score reports no similarity; checkTopK checks it
					if h != all[i] {
						t.Fatalf("%v k=%d: hit %d = %+v, full sort %+v", m, k, i, hits[i], all[i])
					}
				}
			}
		}
	})
}

func TestScoreManyMatchesTopK(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be Backend) {
		r := rand.New(rand.NewPCG(14, 1))
		for _, dim := range []int{5, 64, 384} {
			q0 := testQuery(r, dim, 2)
			b := randomBatch(t, r, 700, dim, 2, q0.Vector)
			qs := make([]Query, 9)
			for i := range qs {
				qs[i] = testQuery(r, dim, 2)
			}
			// The same queries with one shared time context take the path
			// that computes the query-independent signals once per row.
			shared := make([]Query, len(qs))
			for i := range qs {
				shared[i] = qs[i]
				shared[i].Time, shared[i].GroupLambda = q0.Time, q0.GroupLambda
			}
			for _, c := range []struct {
				m                   temporal.Method
				qs                  []Query
				gates, hold, events bool
			}{
				{temporal.MethodTidemark, qs, false, false, false}, {temporal.MethodArticle, qs, false, false, false}, {temporal.MethodVDD, qs, false, false, false},
				{temporal.MethodTidemark, shared, false, false, false}, {temporal.MethodSmartVector, shared, true, false, false},
				{temporal.MethodVDD, shared, false, false, false}, {temporal.MethodConfidence, shared, true, false, false},
				{temporal.MethodConfidence, shared, false, true, false},
				// The event gate on every combination (sum, gated,
				// product) of the shared path: a·sim + c switches pairs.
				{temporal.MethodSmartVector, shared, false, false, true}, {temporal.MethodTidemark, shared, false, false, true},
				{temporal.MethodVDD, shared, false, false, true},
			} {
				m, qs := c.m, c.qs
				p := temporal.Preset(m)
				if c.events {
					p.EventBoost, p.EventFloor, p.EventGateFactor = 1.3, 0.1, 0.4
				}
				if c.gates {
					p.MinSim, p.StaleBelow = 0.02, 0.3
				}
				p.Confidence.HoldStatic = p.Confidence.HoldStatic || c.hold
				many, err := be.ScoreMany(context.Background(), b, qs, &p, 10, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(many) != len(qs) {
					t.Fatalf("%d result lists for %d queries", len(many), len(qs))
				}
				for j := range qs {
					ref, want := reference(t, b, &qs[j], &p)
					checkTopK(t, be, be.Name()+" many "+m.String(), many[j], 10, &p, ref, want)
				}
			}
		}
	})
}

func TestRejectsBadInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be Backend) {
		r := rand.New(rand.NewPCG(15, 1))
		q := testQuery(r, 8, 1)
		b := randomBatch(t, r, 20, 8, 1, q.Vector)
		p := temporal.Preset(temporal.MethodTidemark)
		ctx := context.Background()
		for name, c := range map[string]struct {
			mod  func(q *Query, p *temporal.Params)
			want error
		}{
			"short query": {func(q *Query, _ *temporal.Params) { q.Vector = q.Vector[:7] }, ErrDimension},
			"NaN query":   {func(q *Query, _ *temporal.Params) { q.Vector[3] = float32(math.NaN()) }, ErrNotFinite},
			"Inf query":   {func(q *Query, _ *temporal.Params) { q.Vector[0] = float32(math.Inf(-1)) }, ErrNotFinite},
			"zero query":  {func(q *Query, _ *temporal.Params) { q.Vector = make([]float32, 8) }, ErrZeroVector},
			"NaN time":    {func(q *Query, _ *temporal.Params) { q.Time.At = math.NaN() }, ErrNotFinite},
			"NaN weight":  {func(_ *Query, p *temporal.Params) { p.Weights.Sim = math.NaN() }, ErrInvalid},
			"missing λ": {func(q *Query, p *temporal.Params) {
				*p = temporal.Preset(temporal.MethodVDD)
				q.GroupLambda = nil
			}, ErrInvalid},
			"negative λ": {func(q *Query, p *temporal.Params) {
				*p = temporal.Preset(temporal.MethodVDD)
				q.GroupLambda = []float64{-1}
			}, ErrInvalid},
		} {
			qq := q
			qq.Vector = append([]float32(nil), q.Vector...)
			pp := p
			c.mod(&qq, &pp)
			if _, _, err := be.TopK(ctx, b, &qq, &pp, 5, nil); !errors.Is(err, c.want) {
				t.Errorf("%s: TopK err = %v, want %v", name, err, c.want)
			}
			out, rs := make([]float64, b.Len()), make([]temporal.Reason, b.Len())
			if _, err := be.Score(ctx, b, &qq, &pp, out, rs); !errors.Is(err, c.want) {
				t.Errorf("%s: Score err = %v, want %v", name, err, c.want)
			}
			if _, err := be.ScoreMany(ctx, b, []Query{q, qq}, &pp, 5, nil); !errors.Is(err, c.want) {
				t.Errorf("%s: ScoreMany err = %v, want %v", name, err, c.want)
			}
		}
		if _, _, err := be.TopK(ctx, b, &q, &p, -1, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("k = -1: %v", err)
		}
		if _, err := be.Score(ctx, b, &q, &p, make([]float64, 3), make([]temporal.Reason, 3)); !errors.Is(err, ErrInvalid) {
			t.Errorf("short output: %v", err)
		}
		broken := *b
		broken.Floor = broken.Floor[:5]
		if _, _, err := be.TopK(ctx, &broken, &q, &p, 5, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("ragged columns: %v", err)
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		big := randomBatch(t, r, 5000, 8, 1, q.Vector)
		if _, _, err := be.TopK(cancelled, big, &q, &p, 5, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled context: %v", err)
		}
	})
}

func TestAppendRejectsBadVectors(t *testing.T) {
	b, _ := NewBatch(4, 4)
	meta := temporal.Candidate{ID: 1, Valid: temporal.Always, Recorded: temporal.Always}
	for name, c := range map[string]struct {
		v    []float32
		m    temporal.Candidate
		want error
	}{
		"dimension": {[]float32{1, 2, 3}, meta, ErrDimension},
		"NaN":       {[]float32{1, float32(math.NaN()), 0, 0}, meta, ErrNotFinite},
		"Inf":       {[]float32{float32(math.Inf(1)), 0, 0, 0}, meta, ErrNotFinite},
		"zero":      {[]float32{0, 0, 0, 0}, meta, ErrZeroVector},
		"bad meta":  {[]float32{1, 0, 0, 0}, temporal.Candidate{ID: 2, CreatedAt: math.NaN()}, ErrInvalid},
	} {
		if err := b.Append(c.v, c.m, 0); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
	if b.Len() != 0 || len(b.Vectors) != 0 || b.Validate() != nil {
		t.Fatalf("rejected appends left data: len %d, %d values", b.Len(), len(b.Vectors))
	}
	if err := b.Append([]float32{3, 0, 4, 0}, meta, 0); err != nil {
		t.Fatal(err)
	}
	if b.Vectors[0] != 0.6 || b.Vectors[2] != 0.8 {
		t.Errorf("vector not normalised: %v", b.Vectors)
	}
	if _, err := NewBatch(0, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("NewBatch(0): %v", err)
	}
}

// Guard-padded buffers: the vectors and the outputs live inside larger
// buffers whose guards would poison a score (NaN) or be overwritten if the
// stage read or wrote outside its slices.
func TestGuardPadding(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be Backend) {
		r := rand.New(rand.NewPCG(16, 1))
		for _, dim := range []int{1, 7, 8, 9, 31, 33, 67, 768} {
			q := testQuery(r, dim, 1)
			src := randomBatch(t, r, 50, dim, 1, q.Vector)
			const guard = 64
			for off := 0; off < 8; off++ {
				buf := make([]float32, guard+off+len(src.Vectors)+guard)
				for i := range buf {
					buf[i] = float32(math.NaN())
				}
				copy(buf[guard+off:], src.Vectors)
				b := *src
				b.Vectors = buf[guard+off : guard+off+len(src.Vectors) : guard+off+len(src.Vectors)]
				outBuf := make([]float64, guard+b.Len()+guard)
				for i := range outBuf {
					outBuf[i] = -12345
				}
				out := outBuf[guard : guard+b.Len() : guard+b.Len()]
				rs := make([]temporal.Reason, b.Len())
				p := temporal.Preset(temporal.MethodSmartVector)
				if _, err := be.Score(context.Background(), &b, &q, &p, out, rs); err != nil {
					t.Fatal(err)
				}
				for i, s := range out {
					if rs[i] == temporal.ReasonNone && math.IsNaN(s) {
						t.Fatalf("dim %d offset %d: score %d is NaN: read outside the vectors", dim, off, i)
					}
				}
				for i := 0; i < guard; i++ {
					if outBuf[i] != -12345 || outBuf[guard+b.Len()+i] != -12345 {
						t.Fatalf("dim %d offset %d: wrote outside the output", dim, off)
					}
				}
				// Many queries take the batched dot's tiles (nine: two
				// groups of four or one of eight, and a remainder).
				qs := make([]Query, 9)
				for j := range qs {
					qs[j] = q
					qs[j].Vector = randomVector(r, dim)
				}
				many, err := be.ScoreMany(context.Background(), &b, qs, &p, 50, nil)
				if err != nil {
					t.Fatal(err)
				}
				for j, hits := range many {
					for _, h := range hits {
						if math.IsNaN(h.Score) || math.IsNaN(h.Sim) {
							t.Fatalf("dim %d offset %d: query %d hit %+v is NaN: read outside the vectors", dim, off, j, h)
						}
					}
				}
			}
		}
	})
}

func TestConcurrentCalls(t *testing.T) {
	be := DefaultCPU()
	r := rand.New(rand.NewPCG(17, 1))
	q := testQuery(r, 32, 1)
	b := randomBatch(t, r, 4000, 32, 1, q.Vector)
	p := temporal.Preset(temporal.MethodArticle)
	want, _, err := be.TopK(context.Background(), b, &q, &p, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				got, _, err := be.TopK(context.Background(), b, &q, &p, 10, nil)
				if err != nil {
					t.Error(err)
					return
				}
				for j := range want {
					if got[j] != want[j] {
						t.Errorf("concurrent call differs at %d: %+v vs %+v", j, got[j], want[j])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestNoAllocationInSteadyState(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	be := DefaultCPU()
	r := rand.New(rand.NewPCG(18, 1))
	q := testQuery(r, 64, 1)
	b := randomBatch(t, r, 20000, 64, 1, q.Vector)
	for _, m := range []temporal.Method{temporal.MethodTidemark, temporal.MethodArticle} {
		p := temporal.Preset(m)
		dst := make([]Hit, 0, 10)
		out := make([]float64, b.Len())
		rs := make([]temporal.Reason, b.Len())
		qs := []Query{q, q, q}
		many := make([][]Hit, 3)
		for i := range many {
			many[i] = make([]Hit, 0, 10)
		}
		ctx := context.Background()
		// Warm the pool.
		be.TopK(ctx, b, &q, &p, 10, dst)
		be.ScoreMany(ctx, b, qs, &p, 10, many)
		if a := testing.AllocsPerRun(20, func() { be.TopK(ctx, b, &q, &p, 10, dst[:0]) }); a != 0 {
			t.Errorf("%v: TopK allocates %v times per call", m, a)
		}
		if a := testing.AllocsPerRun(20, func() { be.Score(ctx, b, &q, &p, out, rs) }); a != 0 {
			t.Errorf("%v: Score allocates %v times per call", m, a)
		}
		if a := testing.AllocsPerRun(20, func() { be.ScoreMany(ctx, b, qs, &p, 10, many) }); a != 0 {
			t.Errorf("%v: ScoreMany allocates %v times per call", m, a)
		}
	}
}

// The tables behind the epilogue return exactly what the reference
// computes, for integer counts and others.
func TestLog1pCountIsExact(t *testing.T) {
	for _, x := range []float64{0, 1, 2, 7, 100, 1023, 1024, 5000, 0.5, 3.25, 1e9} {
		if got, want := log1pCount(x), math.Log1p(x); got != want {
			t.Errorf("log1pCount(%v) = %v, want %v", x, got, want)
		}
		if x > 0 {
			if got, want := math.Min(0.3, 0.1*log1pCount(x)), temporal.RelationalBonus(x); got != want {
				t.Errorf("relational(%v) = %v, reference %v", x, got, want)
			}
		}
	}
	p := temporal.DefaultConfidence()
	for _, access := range []float64{0, 3, 1023, 2000} {
		b := &Batch{BaseConf: []float32{0.75}, ConfFrom: []float32{-30}, Positive: []float32{2}, Negative: []float32{1},
			Access: []float32{float32(access)}, Degree: []float32{0}, Lambda: []float32{0}, Floor: []float32{0},
			Created: []float32{-30}, ValidFrom: []float32{float32(math.Inf(-1))}, ValidTo: []float32{float32(math.Inf(1))},
			Kind: []temporal.Kind{0}}
		pp := temporal.Preset(temporal.MethodSmartVector)
		q := Query{Time: temporal.At(0)}
		e := newEpilogue(b, &q, &pp)
		_, sig := e.signals(0, 0.5, true)
		if want := temporal.Confidence(p, 0.75, 30, 2, 1, access); sig.Confidence != want {
			t.Errorf("access %v: confidence %v, reference %v", access, sig.Confidence, want)
		}
	}
}

func TestBatchValidateChecksValues(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 1))
	q := randomVector(r, 4)
	good := randomBatch(t, r, 10, 4, 1, q)
	if err := good.Validate(); err != nil {
		t.Fatalf("an Append-built batch fails Validate: %v", err)
	}
	for name, mod := range map[string]func(b *Batch){
		"NaN vector":    func(b *Batch) { b.Vectors[5] = float32(math.NaN()) },
		"not unit":      func(b *Batch) { b.Vectors[0] *= 3 },
		"floor above 1": func(b *Batch) { b.Floor[2] = 1.5 },
		"negative λ":    func(b *Batch) { b.Lambda[3] = -1 },
		"NaN created":   func(b *Batch) { b.Created[1] = float32(math.NaN()) },
		"kind":          func(b *Batch) { b.Kind[0] = 9 },
		"negative hits": func(b *Batch) { b.Access[4] = -2 },
		"ragged":        func(b *Batch) { b.Degree = b.Degree[:3] },
	} {
		b := *good
		for _, c := range []*[]float32{&b.Vectors, &b.Floor, &b.Lambda, &b.Created, &b.Access, &b.Degree} {
			*c = append([]float32(nil), (*c)...)
		}
		b.Kind = append([]temporal.Kind(nil), b.Kind...)
		mod(&b)
		if err := b.Validate(); err == nil {
			t.Errorf("%s: Validate accepted the batch", name)
		}
	}
}

func TestAppendRejectsFloat32Overflow(t *testing.T) {
	b, _ := NewBatch(2, 1)
	for name, c := range map[string]temporal.Candidate{
		"tiny half-life": {ID: 1, HalfLife: 1e-40, Valid: temporal.Always, Recorded: temporal.Always},
		"huge time":      {ID: 2, CreatedAt: -1e39, Valid: temporal.Always, Recorded: temporal.Always},
		"huge counter":   {ID: 3, Access: 1e39, Valid: temporal.Always, Recorded: temporal.Always},
	} {
		if err := b.Append([]float32{1, 0}, c, 0); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if b.Len() != 0 {
		t.Errorf("rejected appends left %d rows", b.Len())
	}
}

// A static memory's confidence does not depend on its age under
// HoldStatic, on every backend: with the confidence as the whole score
// (weights 0, 0, 1, 0), static rows that differ only in age score the same
// — their C0 and feedback — and match the reference; without the hold the
// older rows score lower, so the test would see a backend that ignores it.
func TestStaticConfidenceHeldOnEveryBackend(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be Backend) {
		b, err := NewBatch(2, 0)
		if err != nil {
			t.Fatal(err)
		}
		ages := []float64{0, 30, 90, 548, 3650}
		for i, age := range ages {
			for k, kind := range []temporal.Kind{temporal.Static, temporal.Event} {
				c := temporal.Candidate{ID: uint64(10*i + k), Kind: kind, CreatedAt: -age, Valid: temporal.Always,
					Recorded: temporal.Always, HalfLife: 30, BaseConfidence: f32(0.75), ConfidenceFrom: -age,
					Positive: 2, Negative: 1, Access: 12}
				if err := b.Append([]float32{1, float32(i)}, c, 0); err != nil {
					t.Fatal(err)
				}
			}
		}
		q := Query{Vector: []float32{1, 0}, Time: temporal.At(0)}
		held := f32(0.75) + 0.06 - 0.08 + 0.01*math.Log(13)
		for _, hold := range []bool{true, false} {
			p := temporal.Preset(temporal.MethodSmartVector)
			p.Weights = temporal.Weights{Conf: 1}
			p.Confidence.HoldStatic = hold
			_, want := reference(t, b, &q, &p)
			out := make([]float64, b.Len())
			reasons := make([]temporal.Reason, b.Len())
			if _, err := be.Score(context.Background(), b, &q, &p, out, reasons); err != nil {
				t.Fatal(err)
			}
			for i, id := range b.ID {
				if math.Abs(out[i]-want[id]) > 1e-6 {
					t.Errorf("hold %v: row %d confidence %.7f, reference %.7f", hold, id, out[i], want[id])
				}
				static, age := b.Kind[i] == temporal.Static, ages[id/10]
				switch {
				case static && hold && math.Abs(out[i]-held) > 1e-6:
					t.Errorf("held static row of age %v: confidence %.7f, want %.7f whatever its age", age, out[i], held)
				case (!static || !hold) && age >= 90 && out[i] > 0.2:
					t.Errorf("%v row of age %v (hold %v): confidence %.7f, want it decayed", b.Kind[i], age, hold, out[i])
				}
			}
		}
	})
}

// The shared path's float32 filter loses no pair the exact check keeps:
// on rows that are near-copies of each other with one of three sets of
// metadata (so scores within a set lie a few float32 ulps apart and the
// thresholds fall between them), ScoreMany returns exactly the hits it
// returns with every pair sent to the exact check, for every combination
// of the shared path and under the event gate. (A filter that compares
// with the threshold raised by 3e-7, a few float32 ulps, fails it.)
func TestScoreManyFilterLosesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, dim := range []int{16, 384} {
		q0 := testQuery(r, dim, 1)
		base := randomVector(r, dim)
		b, err := NewBatch(dim, 3000)
		if err != nil {
			t.Fatal(err)
		}
		var sets [3]temporal.Candidate
		for i := range sets {
			for sets[i].Status != temporal.Active {
				sets[i] = randomMeta(r, 0)
			}
		}
		for i := 0; i < 3000; i++ {
			v := slices.Clone(base)
			for c := range v {
				v[c] += 3e-5 * float32(r.NormFloat64())
			}
			meta := sets[i%3]
			meta.ID = uint64(i)
			if err := b.Append(v, meta, 0); err != nil {
				t.Fatal(err)
			}
		}
		qs := make([]Query, 40)
		for j := range qs {
			v := slices.Clone(base)
			for c := range v {
				v[c] += 1e-3 * float32(r.NormFloat64())
			}
			qs[j] = Query{Vector: v, Time: q0.Time, GroupLambda: q0.GroupLambda}
		}
		for _, m := range []temporal.Method{temporal.MethodTidemark, temporal.MethodSmartVector, temporal.MethodVDD, temporal.MethodConfidence} {
			for _, events := range []bool{false, true} {
				p := temporal.Preset(m)
				if p.Pooled() {
					continue
				}
				if events {
					p.EventBoost, p.EventFloor, p.EventGateFactor = 1.3, 0.1, 0.4
				}
				cpu := NewCPU(&CPUOptions{Workers: 2})
				got, err := cpu.ScoreMany(context.Background(), b, qs, &p, 7, nil)
				if err != nil {
					t.Fatal(err)
				}
				unfiltered = true
				want, err := cpu.ScoreMany(context.Background(), b, qs, &p, 7, nil)
				unfiltered = false
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("dim %d %v events %v: filtered\n%v\nunfiltered\n%v", dim, m, events, got, want)
				}
				cpu.Close()
			}
		}
	}
}
