package kernels

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/tidemark/tidemark/kernels/internal/testgen"
	"github.com/tidemark/tidemark/temporal"
)

// The backend-independent white-box tests. The test body every backend
// runs is package backendtest, run on this package's backends by
// TestBackends (backends_test.go).

// randomBatch is backendtest.RandomBatch, which this package's own tests
// cannot import.
func randomBatch(t testing.TB, r *rand.Rand, n, dim, groups int, q []float32) *Batch {
	t.Helper()
	return testgen.Batch(t, r, n, dim, groups, q, NewBatch, (*Batch).Append)
}

// testQuery is backendtest.RandomQuery.
func testQuery(r *rand.Rand, dim, groups int) Query {
	v, tm, lambdas := testgen.Query(r, dim, groups)
	return Query{Vector: v, Time: tm, GroupLambda: lambdas}
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
	q := testgen.Vector(r, 4)
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
		base := testgen.Vector(r, dim)
		b, err := NewBatch(dim, 3000)
		if err != nil {
			t.Fatal(err)
		}
		var sets [3]temporal.Candidate
		for i := range sets {
			for sets[i].Status != temporal.Active {
				sets[i] = testgen.Meta(r, 0)
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

// Prefetch reads nothing into the batch and writes nothing: the batch is
// equal before and after, for rows anywhere in it (the first, the last,
// repeated), and for none.
func TestPrefetchChangesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	b := randomBatch(t, r, 300, 8, 3, testQuery(r, 8, 3).Vector)
	want := *b
	want.Vectors = slices.Clone(b.Vectors)
	want.Created, want.Degree, want.ID = slices.Clone(b.Created), slices.Clone(b.Degree), slices.Clone(b.ID)
	b.Prefetch([]uint32{0, 299, 17, 17, 150})
	b.Prefetch(nil)
	if !reflect.DeepEqual(b.Vectors, want.Vectors) || !reflect.DeepEqual(b.Created, want.Created) ||
		!reflect.DeepEqual(b.Degree, want.Degree) || !reflect.DeepEqual(b.ID, want.ID) || b.Len() != 300 {
		t.Fatal("Prefetch changed the batch")
	}
}
