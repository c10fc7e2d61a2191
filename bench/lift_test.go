package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// liftColumns returns Q column-major in float64, read through Apply (Q·e_j
// is column j).
func liftColumns(l *Lift) []float64 {
	cols := make([]float64, l.From*l.To)
	e := make([]float32, l.From)
	out := make([]float32, l.To)
	for j := range l.From {
		clear(e)
		e[j] = 1
		l.Apply(out, e)
		for i, v := range out {
			cols[j*l.To+i] = float64(v)
		}
	}
	return cols
}

func TestLiftOrthonormal(t *testing.T) {
	for _, to := range []int{100, 384, 768, 1536} {
		l, err := NewLift(100, to, LiftSeed)
		if err != nil {
			t.Fatal(err)
		}
		q := liftColumns(l)
		worst := 0.0
		for a := range 100 {
			for b := range 100 {
				want := 0.0
				if a == b {
					want = 1
				}
				worst = max(worst, math.Abs(dot64(q[a*to:(a+1)*to], q[b*to:(b+1)*to])-want))
			}
		}
		if worst > 1e-6 {
			t.Errorf("100→%d: max |QᵀQ − I| = %g, want ≤ 1e-6", to, worst)
		}
		// The same seed gives the same matrix; another seed another one.
		again, _ := NewLift(100, to, LiftSeed)
		if !slices.Equal(q, liftColumns(again)) {
			t.Errorf("100→%d: two lifts from the same seed differ", to)
		}
		if to > 100 {
			other, _ := NewLift(100, to, LiftSeed+1)
			if slices.Equal(q, liftColumns(other)) {
				t.Errorf("100→%d: another seed gave the same matrix", to)
			}
		}
	}
	for _, c := range [][2]int{{0, 10}, {10, 9}, {1, 1 << 17}} {
		if _, err := NewLift(c[0], c[1], 1); err == nil {
			t.Errorf("NewLift(%d, %d) accepted", c[0], c[1])
		}
	}
}

// checkLiftedDots compares dot products of lifted base and query vectors
// with those of the source vectors: within 1e-4 of ‖x‖‖y‖, and within
// 1e-4 relative where the dot is not near zero.
func checkLiftedDots(t *testing.T, d *VectorSet, src func(base bool, i int) []float32, pairs int) {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 3))
	x, y := make([]float32, d.Dim), make([]float32, d.Dim)
	queries, err := d.Queries(d.NQ)
	if err != nil {
		t.Fatal(err)
	}
	for range pairs {
		i, j := r.IntN(d.N), r.IntN(d.NQ)
		if err := d.Base(i, x); err != nil {
			t.Fatal(err)
		}
		copy(y, queries[j*d.Dim:(j+1)*d.Dim])
		sx, sy := src(true, i), src(false, j)
		want := dot32(sx, sy)
		got := dot32(x, y)
		scale := math.Sqrt(dot32(sx, sx) * dot32(sy, sy))
		if math.Abs(got-want) > 1e-4*scale || (math.Abs(want) > 0.1*scale && math.Abs(got-want) > 1e-4*math.Abs(want)) {
			t.Fatalf("base %d · query %d: lifted %.7f, source %.7f", i, j, got, want)
		}
		if nx := math.Sqrt(dot32(x, x)); math.Abs(nx-math.Sqrt(dot32(sx, sx))) > 1e-5*nx {
			t.Fatalf("base %d: lifted norm %g, source %g", i, nx, math.Sqrt(dot32(sx, sx)))
		}
	}
}

func dot32(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestLoadLiftedKeepsDotsAndNeighbours(t *testing.T) {
	prefix := writeANN(t, 400, 100, 20, 10)
	src, err := LoadANN(prefix)
	if err != nil {
		t.Fatal(err)
	}
	row := func(base bool, i int) []float32 {
		if base {
			return src.Base[i*100 : (i+1)*100]
		}
		return src.Query[i*100 : (i+1)*100]
	}
	for _, dim := range []int{100, 384, 768, 1536} {
		d, err := LoadLifted(prefix, dim)
		if err != nil {
			t.Fatal(err)
		}
		if d.N != 400 || d.NQ != 20 || d.Dim != dim || d.From != 100 {
			t.Fatalf("dim %d: %+v", dim, d)
		}
		if (dim == 100) != (d.Name == "tiny") || !strings.Contains(d.Name, "tiny") {
			t.Errorf("dim %d: name %q", dim, d.Name)
		}
		checkLiftedDots(t, d, row, 300)
		if dim == 100 {
			v := make([]float32, 100)
			d.Base(7, v)
			if !slices.Equal(v, row(true, 7)) {
				t.Error("the identity lift changed a vector")
			}
		}
		// The file's ground truth, and a brute force over the lifted
		// vectors, agree with the exact top 10 computed in the source
		// space (ExactTopK without the file's ground truth).
		gt, err := d.ExactTopK(context.Background(), d.N, d.NQ, 10, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gt, src.GT) {
			t.Errorf("dim %d: ExactTopK at n = N is not the file's ground truth", dim)
		}
		d.gt = nil
		brute, err := d.ExactTopK(context.Background(), d.N, d.NQ, 10, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(brute, src.GT) {
			t.Errorf("dim %d: brute force in the source space differs from the file's ground truth", dim)
		}
		lifted := make([]float32, d.N*dim)
		if err := d.Fill(0, d.N, lifted, 2); err != nil {
			t.Fatal(err)
		}
		qs, _ := d.Queries(d.NQ)
		for q := range d.NQ {
			if got := bruteTop(lifted, qs[q*dim:(q+1)*dim], dim, 10); !slices.Equal(got, src.GT[q*10:(q+1)*10]) {
				t.Errorf("dim %d query %d: lifted neighbours %v, source %v", dim, q, got, src.GT[q*10:(q+1)*10])
			}
		}
		// A prefix of the base set: brute force over the first n.
		part, err := d.ExactTopK(context.Background(), 150, 5, 10, 1)
		if err != nil {
			t.Fatal(err)
		}
		for q := range 5 {
			if got := bruteTop(lifted[:150*dim], qs[q*dim:(q+1)*dim], dim, 10); !slices.Equal(got, part[q*10:(q+1)*10]) {
				t.Errorf("dim %d query %d over 150: %v, want %v", dim, q, part[q*10:(q+1)*10], got)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadLifted(prefix, 64); err == nil {
		t.Error("a lift to fewer dimensions was accepted")
	}
}

// bruteTop is the top k of rows by dot with q (unit vectors: by cosine).
func bruteTop(rows, q []float32, dim, k int) []int32 {
	n := len(rows) / dim
	ids := make([]int32, n)
	sims := make([]float64, n)
	for i := range n {
		ids[i] = int32(i)
		v := rows[i*dim : (i+1)*dim]
		sims[i] = dot32(v, q) / math.Sqrt(dot32(v, v))
	}
	slices.SortStableFunc(ids, func(a, b int32) int {
		switch {
		case sims[a] > sims[b]:
			return -1
		case sims[a] < sims[b]:
			return 1
		}
		return 0
	})
	return ids[:k]
}

// The real GloVe-100 (when ../shared holds it): lifted to 768, dot
// products are the file's, and the neighbours of a few queries over all
// 100k base vectors, found by brute force in 768 dimensions, are the
// file's ground truth.
func TestGloveLifted768(t *testing.T) {
	prefix := "../" + DefaultData
	if _, err := os.Stat(prefix + ".meta"); err != nil {
		t.Skipf("no GloVe-100 at %s", prefix)
	}
	if testing.Short() {
		t.Skip("short")
	}
	src, err := LoadANN(prefix)
	if err != nil {
		t.Fatal(err)
	}
	d, err := LoadLifted(prefix, 768)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Name != "glove100-lifted-768" {
		t.Errorf("name %q", d.Name)
	}
	checkLiftedDots(t, d, func(base bool, i int) []float32 {
		if base {
			return src.Base[i*100 : (i+1)*100]
		}
		return src.Query[i*100 : (i+1)*100]
	}, 2000)
	lifted := make([]float32, d.N*768)
	if err := d.Fill(0, d.N, lifted, 2); err != nil {
		t.Fatal(err)
	}
	qs, _ := d.Queries(3)
	hits := 0
	for q := range 3 {
		got := bruteTop(lifted, qs[q*768:(q+1)*768], 768, 10)
		for _, id := range got {
			if slices.Contains(src.GT[q*10:(q+1)*10], id) {
				hits++
			}
		}
	}
	if hits < 29 { // one near-tie may swap at float32 rounding
		t.Errorf("lifted brute force found %d of the ground truth's 30 neighbours", hits)
	}
}

func TestSyntheticClustered(t *testing.T) {
	cfg := SyntheticConfig{N: 3000, NQ: 30, Dim: 256, Clusters: 100}
	d, err := NewSynthetic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Note, "SYNTHETIC") || d.Name != "synthetic-clustered-256" || d.From != 64 || !d.Unbounded {
		t.Errorf("set %q %q from %d", d.Name, d.Note, d.From)
	}
	a := make([]float32, d.N*d.Dim)
	if err := d.Fill(0, d.N, a, 2); err != nil {
		t.Fatal(err)
	}
	// Deterministic: the same seed gives the same vectors, one at a time
	// or in a batch; another seed other ones.
	again, _ := NewSynthetic(cfg)
	b := make([]float32, d.N*d.Dim)
	again.Fill(0, d.N, b, 1)
	if !slices.Equal(a, b) {
		t.Error("two sets from the same seed differ")
	}
	one := make([]float32, d.Dim)
	d.Base(1234, one)
	if !slices.Equal(one, a[1234*d.Dim:1235*d.Dim]) {
		t.Error("Base(i) differs from Fill's row i")
	}
	cfg.Seed = 2
	other, _ := NewSynthetic(cfg)
	other.Base(0, one)
	if slices.Equal(one, a[:d.Dim]) {
		t.Error("another seed gave the same vector")
	}
	// The vectors lie in a 64-d subspace: projected on the lift's
	// columns they keep their whole norm.
	q := liftColumns(d.lift)
	for i := range 20 {
		v := a[i*d.Dim : (i+1)*d.Dim]
		var proj float64
		for j := range 64 {
			c := 0.0
			for k := range d.Dim {
				c += q[j*d.Dim+k] * float64(v[k])
			}
			proj += c * c
		}
		if n2 := dot32(v, v); math.Abs(proj-n2) > 1e-4*n2 {
			t.Fatalf("vector %d: %g of its squared norm %g in the subspace", i, proj, n2)
		}
	}
	// Clustered: a query's nearest neighbours are far nearer than a random
	// memory (independent Gaussian directions in 64-d have cosines near 0).
	exact, err := d.ExactTopK(context.Background(), d.N, d.NQ, 10, 2)
	if err != nil {
		t.Fatal(err)
	}
	qs, _ := d.Queries(d.NQ)
	cos := func(x, y []float32) float64 { return dot32(x, y) / math.Sqrt(dot32(x, x)*dot32(y, y)) }
	var near, far float64
	for qi := range d.NQ {
		qv := qs[qi*d.Dim : (qi+1)*d.Dim]
		near += cos(qv, a[int(exact[qi*10+9])*d.Dim:][:d.Dim])
		far += cos(qv, a[(qi*97%d.N)*d.Dim:][:d.Dim])
	}
	near, far = near/float64(d.NQ), far/float64(d.NQ)
	if near < 0.6 || far > 0.2 {
		t.Errorf("mean cosine to the 10th neighbour %.3f, to a random memory %.3f: not clustered", near, far)
	}
	if got := bruteTop(a, qs[:d.Dim], d.Dim, 10); !slices.Equal(got, exact[:10]) {
		t.Errorf("ExactTopK %v, brute force in %d-d %v", exact[:10], d.Dim, got)
	}
	if _, err := NewSynthetic(SyntheticConfig{Dim: 32}); err == nil {
		t.Error("a dimension below the subspace's was accepted")
	}
}

func TestGaussianWorstCase(t *testing.T) {
	d, err := NewGaussian(50, 5, 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Note, "WORST CASE") || d.Name != "gaussian-32" {
		t.Errorf("set %q %q", d.Name, d.Note)
	}
	a, b := make([]float32, 32), make([]float32, 32)
	d.Base(3, a)
	d2, _ := NewGaussian(50, 5, 32, 1)
	d2.Base(3, b)
	if !slices.Equal(a, b) || dot32(a, a) < 5 {
		t.Errorf("vector 3: %v, again %v", a, b)
	}
	for _, spec := range []string{DataSynthetic, DataGaussian} {
		v, err := OpenVectorSet(spec, 64, 100, 10)
		if err != nil || v.N != 100 || v.NQ != 10 || v.Dim != 64 {
			t.Errorf("%s: %+v %v", spec, v, err)
		}
	}
	if _, err := OpenVectorSet("/nonexistent/set", 64, 0, 0); err == nil {
		t.Error("a missing file set opened")
	}
}
