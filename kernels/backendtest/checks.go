package backendtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/kernels/internal/testgen"
	"github.com/tidemark/tidemark/temporal"
)

// scoreDims are ScoreMatchesReference's dimensions: every loop tail up to
// 33 and the real embedding sizes.
var scoreDims = func() []int {
	d := make([]int, 0, 40)
	for i := 1; i <= 33; i++ {
		d = append(d, i)
	}
	return append(d, 67, 777, 384, 768, 1024, 1536)
}()

// Score's reasons, stats and scores match the reference for every preset
// and held confidence, with and without the similarity and staleness
// gates; a removed candidate's score is NaN.
func (s *suite) scoreMatchesReference(t *testing.T) {
	be := s.be
	r := rand.New(rand.NewPCG(11, uint64(len(be.Name()))))
	for _, dim := range s.dims(scoreDims) {
		n := 40
		if dim <= 33 {
			n = 25 + dim
		}
		n = s.rows(n)
		q := RandomQuery(r, dim, 3)
		b := RandomBatch(t, r, n, dim, 3, q.Vector)
		for _, p := range testgen.PresetsAndHolds() {
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
				if math.Abs(out[i]-want[id]) > scoreTol(want[id], &p, ref, s.o.SimErr) {
					t.Errorf("dim %d %v: candidate %d score %.9f, reference %.9f", dim, m, id, out[i], want[id])
				}
			}
		}
	}
}

// TopK's hits match the reference (checkTopK) for every parameter set of
// topKParams, k from 0 to beyond the batch, batches from empty to large.
func (s *suite) topKMatchesReference(t *testing.T) {
	be := s.be
	r := rand.New(rand.NewPCG(12, 1))
	ns := []int{0, 1, 5, 100, 1500}
	for i := range ns {
		ns[i] = s.rows(ns[i])
	}
	ns = slices.Compact(ns)
	for _, dim := range s.dims([]int{1, 3, 8, 17, 33, 67, 384, 768}) {
		for _, n := range ns {
			q := RandomQuery(r, dim, 2)
			b := RandomBatch(t, r, n, dim, 2, q.Vector)
			for vi, p := range topKParams() {
				ref, want := reference(t, b, &q, &p)
				for _, k := range []int{0, 1, 10, n + 5} {
					hits, st, err := be.TopK(context.Background(), b, &q, &p, k, nil)
					if err != nil {
						t.Fatal(err)
					}
					s.checkTopK(t, fmt.Sprintf("dim %d n %d %s #%d k %d", dim, n, p.Method, vi, k), hits, k, &p, ref, want)
					if st.Scored != len(ref.Ranked) {
						t.Errorf("scored %d, reference %d", st.Scored, len(ref.Ranked))
					}
				}
			}
		}
	}
}

// copyRow makes row dst a copy of row src: its vector and every exported
// column but the id, so that the two tie. It runs before any backend has
// seen the batch.
func copyRow(b *kernels.Batch, dst, src int) {
	d := b.Dim
	copy(b.Vectors[dst*d:(dst+1)*d], b.Vectors[src*d:(src+1)*d])
	v := reflect.ValueOf(b).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch v.Type().Field(i).Name {
		case "Vectors", "ID":
			continue
		}
		if f.Kind() == reflect.Slice && f.CanSet() && f.Len() == b.Len() {
			f.Index(dst).Set(f.Index(src))
		}
	}
}

// TopK is exactly the first k of a full sort of Score's output, ties
// (forced by copied rows) broken by ascending id.
func (s *suite) topKEqualsFullSort(t *testing.T) {
	be := s.be
	r := rand.New(rand.NewPCG(13, 1))
	q := RandomQuery(r, 48, 1)
	b := RandomBatch(t, r, s.rows(3000), 48, 1, q.Vector)
	for i := 0; i < 200; i++ {
		copyRow(b, r.IntN(b.Len()), r.IntN(b.Len()))
	}
	for _, m := range temporal.Methods() {
		p := temporal.Preset(m)
		out := make([]float64, b.Len())
		reasons := make([]temporal.Reason, b.Len())
		if _, err := be.Score(context.Background(), b, &q, &p, out, reasons); err != nil {
			t.Fatal(err)
		}
		var all []kernels.Hit
		for i, sc := range out {
			if reasons[i] == temporal.ReasonNone {
				all = append(all, kernels.Hit{Index: i, ID: b.ID[i], Score: sc})
			}
		}
		slices.SortFunc(all, func(a, c kernels.Hit) int {
			switch {
			case less(a, c):
				return -1
			case less(c, a):
				return 1
			}
			return 0
		})
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
}

// ScoreMany's list for each query matches the reference (checkTopK), with
// independent time contexts and with one shared time context (the path
// that computes the query-independent signals once per row), under the
// similarity and staleness gates, held confidence and the event gate on
// every combination.
func (s *suite) scoreManyMatchesTopK(t *testing.T) {
	be := s.be
	r := rand.New(rand.NewPCG(14, 1))
	for _, dim := range s.dims([]int{5, 64, 384}) {
		q0 := RandomQuery(r, dim, 2)
		b := RandomBatch(t, r, s.rows(700), dim, 2, q0.Vector)
		qs := make([]kernels.Query, 9)
		for i := range qs {
			qs[i] = RandomQuery(r, dim, 2)
		}
		shared := make([]kernels.Query, len(qs))
		for i := range qs {
			shared[i] = qs[i]
			shared[i].Time, shared[i].GroupLambda = q0.Time, q0.GroupLambda
		}
		for _, c := range []struct {
			m                   temporal.Method
			qs                  []kernels.Query
			gates, hold, events bool
		}{
			{temporal.MethodTidemark, qs, false, false, false}, {temporal.MethodArticle, qs, false, false, false}, {temporal.MethodVDD, qs, false, false, false},
			{temporal.MethodTidemark, shared, false, false, false}, {temporal.MethodSmartVector, shared, true, false, false},
			{temporal.MethodVDD, shared, false, false, false}, {temporal.MethodConfidence, shared, true, false, false},
			{temporal.MethodConfidence, shared, false, true, false},
			// The event gate on every combination (sum, gated, product)
			// of the shared path: a·sim + c switches pairs.
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
				s.checkTopK(t, fmt.Sprintf("dim %d %v query %d", dim, m, j), many[j], 10, &p, ref, want)
			}
		}
	}
}

// Every method rejects a bad query, bad parameters, a bad k, a short
// output and a ragged batch with the sentinel error that says why.
func (s *suite) rejectsBadInput(t *testing.T) {
	be := s.be
	r := rand.New(rand.NewPCG(15, 1))
	q := RandomQuery(r, 8, 1)
	b := RandomBatch(t, r, 20, 8, 1, q.Vector)
	p := temporal.Preset(temporal.MethodTidemark)
	ctx := context.Background()
	for name, c := range map[string]struct {
		mod  func(q *kernels.Query, p *temporal.Params)
		want error
	}{
		"short query": {func(q *kernels.Query, _ *temporal.Params) { q.Vector = q.Vector[:7] }, kernels.ErrDimension},
		"NaN query":   {func(q *kernels.Query, _ *temporal.Params) { q.Vector[3] = float32(math.NaN()) }, kernels.ErrNotFinite},
		"Inf query":   {func(q *kernels.Query, _ *temporal.Params) { q.Vector[0] = float32(math.Inf(-1)) }, kernels.ErrNotFinite},
		"zero query":  {func(q *kernels.Query, _ *temporal.Params) { q.Vector = make([]float32, 8) }, kernels.ErrZeroVector},
		"NaN time":    {func(q *kernels.Query, _ *temporal.Params) { q.Time.At = math.NaN() }, kernels.ErrNotFinite},
		"NaN weight":  {func(_ *kernels.Query, p *temporal.Params) { p.Weights.Sim = math.NaN() }, kernels.ErrInvalid},
		"missing λ": {func(q *kernels.Query, p *temporal.Params) {
			*p = temporal.Preset(temporal.MethodVDD)
			q.GroupLambda = nil
		}, kernels.ErrInvalid},
		"negative λ": {func(q *kernels.Query, p *temporal.Params) {
			*p = temporal.Preset(temporal.MethodVDD)
			q.GroupLambda = []float64{-1}
		}, kernels.ErrInvalid},
	} {
		qq := q
		qq.Vector = slices.Clone(q.Vector)
		pp := p
		c.mod(&qq, &pp)
		if _, _, err := be.TopK(ctx, b, &qq, &pp, 5, nil); !errors.Is(err, c.want) {
			t.Errorf("%s: TopK err = %v, want %v", name, err, c.want)
		}
		out, rs := make([]float64, b.Len()), make([]temporal.Reason, b.Len())
		if _, err := be.Score(ctx, b, &qq, &pp, out, rs); !errors.Is(err, c.want) {
			t.Errorf("%s: Score err = %v, want %v", name, err, c.want)
		}
		if _, err := be.ScoreMany(ctx, b, []kernels.Query{q, qq}, &pp, 5, nil); !errors.Is(err, c.want) {
			t.Errorf("%s: ScoreMany err = %v, want %v", name, err, c.want)
		}
	}
	if _, _, err := be.TopK(ctx, b, &q, &p, -1, nil); !errors.Is(err, kernels.ErrInvalid) {
		t.Errorf("k = -1: %v", err)
	}
	if _, err := be.Score(ctx, b, &q, &p, make([]float64, 3), make([]temporal.Reason, 3)); !errors.Is(err, kernels.ErrInvalid) {
		t.Errorf("short output: %v", err)
	}
	broken := *b
	broken.Floor = broken.Floor[:5]
	if _, _, err := be.TopK(ctx, &broken, &q, &p, 5, nil); !errors.Is(err, kernels.ErrInvalid) {
		t.Errorf("ragged columns: %v", err)
	}
}

// A cancelled context, or one past its deadline, makes Score, TopK and
// ScoreMany return its error on a batch of many chunks, in one pass and in
// the two passes of pooled parameters; on a one-row batch a call may
// finish instead, but fails with no other error. A cancelled call leaves
// the backend giving the same results as before.
func (s *suite) cancellation(t *testing.T) {
	be := s.be
	r := rand.New(rand.NewPCG(19, 1))
	const n, dim = 8192, 64
	q := RandomQuery(r, dim, 1)
	qs := []kernels.Query{q, RandomQuery(r, dim, 1), RandomQuery(r, dim, 1)}
	big := RandomBatch(t, r, n, dim, 1, q.Vector)
	tiny := RandomBatch(t, r, 1, dim, 1, q.Vector)
	bg := context.Background()
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	expired, stop := context.WithDeadline(bg, time.Unix(0, 0))
	defer stop()
	for _, m := range []temporal.Method{temporal.MethodTidemark, temporal.MethodArticle} {
		p := temporal.Preset(m)
		want, _, err := be.TopK(bg, big, &q, &p, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantMany, err := be.ScoreMany(bg, big, qs, &p, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		out, rs := make([]float64, n), make([]temporal.Reason, n)
		for _, c := range []struct {
			name string
			ctx  context.Context
			want error
		}{{"cancelled", cancelled, context.Canceled}, {"expired", expired, context.DeadlineExceeded}} {
			if _, err := be.Score(c.ctx, big, &q, &p, out, rs); !errors.Is(err, c.want) {
				t.Errorf("%v %s: Score err = %v, want %v", m, c.name, err, c.want)
			}
			if _, _, err := be.TopK(c.ctx, big, &q, &p, 10, nil); !errors.Is(err, c.want) {
				t.Errorf("%v %s: TopK err = %v, want %v", m, c.name, err, c.want)
			}
			if _, err := be.ScoreMany(c.ctx, big, qs, &p, 10, nil); !errors.Is(err, c.want) {
				t.Errorf("%v %s: ScoreMany err = %v, want %v", m, c.name, err, c.want)
			}
			if _, _, err := be.TopK(c.ctx, tiny, &q, &p, 10, nil); err != nil && !errors.Is(err, c.want) {
				t.Errorf("%v %s: TopK on one row: err = %v, want nil or %v", m, c.name, err, c.want)
			}
		}
		got, _, err := be.TopK(bg, big, &q, &p, 10, nil)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%v: TopK after cancelled calls = %v, %v; before %v", m, got, err, want)
		}
		gotMany, err := be.ScoreMany(bg, big, qs, &p, 10, nil)
		if err != nil || !reflect.DeepEqual(gotMany, wantMany) {
			t.Errorf("%v: ScoreMany after cancelled calls = %v, %v; before %v", m, gotMany, err, wantMany)
		}
	}
}

// Guard-padded buffers: the vectors and the outputs live inside larger
// buffers whose guards would poison a score (NaN) or be overwritten if the
// stage read or wrote outside its slices, at every alignment of the
// vectors.
func (s *suite) guardPadding(t *testing.T) {
	be := s.be
	r := rand.New(rand.NewPCG(16, 1))
	for _, dim := range s.dims([]int{1, 7, 8, 9, 31, 33, 67, 768}) {
		q := RandomQuery(r, dim, 1)
		src := RandomBatch(t, r, s.rows(50), dim, 1, q.Vector)
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
			for i, sc := range out {
				if rs[i] == temporal.ReasonNone && math.IsNaN(sc) {
					t.Fatalf("dim %d offset %d: score %d is NaN: read outside the vectors", dim, off, i)
				}
			}
			for i := 0; i < guard; i++ {
				if outBuf[i] != -12345 || outBuf[guard+b.Len()+i] != -12345 {
					t.Fatalf("dim %d offset %d: wrote outside the output", dim, off)
				}
			}
			// Many queries take the batched path (nine: a partial panel of
			// simd.DotRows, two launches of the cuda backend's tm_fused).
			qs := make([]kernels.Query, 9)
			for j := range qs {
				qs[j] = q
				qs[j].Vector = testgen.Vector(r, dim)
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
}

// Concurrent TopK and ScoreMany calls on one batch return exactly what a
// lone call returns.
func (s *suite) concurrentCalls(t *testing.T) {
	be := s.be
	r := rand.New(rand.NewPCG(17, 1))
	q := RandomQuery(r, 32, 1)
	b := RandomBatch(t, r, s.rows(4000), 32, 1, q.Vector)
	qs := []kernels.Query{q, RandomQuery(r, 32, 1)}
	p := temporal.Preset(temporal.MethodArticle)
	ctx := context.Background()
	want, _, err := be.TopK(ctx, b, &q, &p, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantMany, err := be.ScoreMany(ctx, b, qs, &p, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < s.o.Concurrency; g++ {
		wg.Go(func() {
			for i := 0; i < 20; i++ {
				if i%4 == 3 {
					got, err := be.ScoreMany(ctx, b, qs, &p, 10, nil)
					if err != nil || !reflect.DeepEqual(got, wantMany) {
						t.Errorf("concurrent ScoreMany = %v, %v; alone %v", got, err, wantMany)
						return
					}
					continue
				}
				got, _, err := be.TopK(ctx, b, &q, &p, 10, nil)
				if err != nil || !slices.Equal(got, want) {
					t.Errorf("concurrent TopK = %v, %v; alone %v", got, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// A static memory's confidence does not depend on its age under
// HoldStatic: with the confidence as the whole score (weights 0, 0, 1, 0),
// static rows that differ only in age score the same — their C0 and
// feedback — and match the reference; without the hold the older rows
// score lower, so the check sees a backend that ignores it.
func (s *suite) staticConfidenceHeld(t *testing.T) {
	be := s.be
	b, err := kernels.NewBatch(2, 0)
	if err != nil {
		t.Fatal(err)
	}
	ages := []float64{0, 30, 90, 548, 3650}
	for i, age := range ages {
		for k, kind := range []temporal.Kind{temporal.Static, temporal.Event} {
			c := temporal.Candidate{ID: uint64(10*i + k), Kind: kind, CreatedAt: -age, Valid: temporal.Always,
				Recorded: temporal.Always, HalfLife: 30, BaseConfidence: testgen.F32(0.75), ConfidenceFrom: -age,
				Positive: 2, Negative: 1, Access: 12}
			if err := b.Append([]float32{1, float32(i)}, c, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	q := kernels.Query{Vector: []float32{1, 0}, Time: temporal.At(0)}
	held := testgen.F32(0.75) + 0.06 - 0.08 + 0.01*math.Log(13)
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
}
