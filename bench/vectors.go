package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"

	"github.com/tidemark/tidemark/simd"
)

// DefaultData is the dataset the engine, service and scale benchmarks use
// when given none: GloVe-100 (100k real word embeddings, L2-normalised,
// 1,000 queries, exact top-10), lifted to the benchmark's dimension. The
// path is relative to the repository root, where the CLI runs.
const DefaultData = "../shared/data/glove100/glove100"

// Names of the generated datasets in OpenVectorSet.
const (
	DataSynthetic = "synthetic"
	DataGaussian  = "gaussian"
)

// A VectorSet is a benchmark's vectors: N base vectors and NQ queries of Dim
// dimensions, made on demand from a source of From dimensions and a
// [Lift] (so a 768-d set costs the source's memory, not N·768·4 bytes).
// Base vector i is the same in every call, run and workload.
type VectorSet struct {
	// Name labels the data in reports ("glove100-lifted-768",
	// "synthetic-clustered-768", "gaussian-768"); Note says how it is
	// made, in a sentence for people.
	Name, Note string
	N, NQ, Dim int
	// From is the source dimension, before the lift.
	From int
	// Unbounded says Base vectors exist past N (generated sets): a
	// workload that needs fresh vectors (upserts) takes them from N on.
	Unbounded bool
	lift      *Lift
	// base and query write source vectors (From dimensions).
	base, query rowsFunc
	// file is what base reads, for Close (nil for generated sets).
	file *os.File
	// gt is the exact top gtK of each query over all N base vectors (the
	// file's ground truth), nil when unknown.
	gt  []int32
	gtK int
}

// OpenVectorSet opens the dataset that spec names, at dim dimensions:
// DataSynthetic (NewSynthetic with n base vectors and nq queries),
// DataGaussian (NewGaussian, the labelled worst case) or the prefix of an
// ANN dataset file set (LoadLifted; n and nq are then the file's).
func OpenVectorSet(spec string, dim, n, nq int) (*VectorSet, error) {
	switch spec {
	case DataSynthetic:
		return NewSynthetic(SyntheticConfig{N: n, NQ: nq, Dim: dim})
	case DataGaussian:
		return NewGaussian(n, nq, dim, 1)
	case "":
		spec = DefaultData
	}
	return LoadLifted(spec, dim)
}

// Base writes base vector i, lifted, to dst (len Dim).
func (d *VectorSet) Base(i int, dst []float32) error { return d.Fill(i, i+1, dst, 1) }

// Fill writes base vectors lo … hi−1, lifted, to dst (row-major,
// (hi−lo)·Dim floats) with up to threads goroutines.
func (d *VectorSet) Fill(lo, hi int, dst []float32, threads int) error {
	return d.fill(d.base, lo, hi, dst, threads, d.lift)
}

// Queries returns the first nq queries, lifted (row-major).
func (d *VectorSet) Queries(nq int) ([]float32, error) {
	out := make([]float32, nq*d.Dim)
	return out, d.fill(d.query, 0, nq, out, runtime.GOMAXPROCS(0), d.lift)
}

// Close releases the file a file set reads its base vectors from.
func (d *VectorSet) Close() error {
	if d.file == nil {
		return nil
	}
	return d.file.Close()
}

// rowsFunc writes source rows lo … hi−1 (From floats each) to dst.
type rowsFunc func(lo, hi int, dst []float32) error

// perRow makes a rowsFunc of a generator of one row of from floats.
func perRow(from int, row func(i int, dst []float32)) rowsFunc {
	return func(lo, hi int, dst []float32) error {
		for i := lo; i < hi; i++ {
			row(i, dst[(i-lo)*from:(i-lo+1)*from])
		}
		return nil
	}
}

// fill writes rows lo … hi−1 of src through l (nil: unlifted, From
// dimensions) to dst, with up to threads goroutines.
func (d *VectorSet) fill(src rowsFunc, lo, hi int, dst []float32, threads int, l *Lift) error {
	if l != nil && l.From == l.To {
		l = nil
	}
	var mu sync.Mutex
	var errs error
	parallel(hi-lo, threads, func(a, b int) {
		var err error
		if l == nil {
			err = src(lo+a, lo+b, dst[a*d.From:b*d.From])
		} else {
			x := make([]float32, (b-a)*d.From)
			if err = src(lo+a, lo+b, x); err == nil {
				for i := a; i < b; i++ {
					l.Apply(dst[i*l.To:(i+1)*l.To], x[(i-a)*d.From:(i-a+1)*d.From])
				}
			}
		}
		if err != nil {
			mu.Lock()
			errs = errors.Join(errs, err)
			mu.Unlock()
		}
	})
	return errs
}

// parallel calls f on up to threads disjoint ranges covering 0 … n−1.
func parallel(n, threads int, f func(lo, hi int)) {
	threads = max(1, min(threads, n))
	if threads == 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	per := (n + threads - 1) / threads
	for t := range threads {
		lo, hi := min(n, t*per), min(n, (t+1)*per)
		wg.Go(func() { f(lo, hi) })
	}
	wg.Wait()
}

// ExactTopK returns the ids of the exact top k by cosine of each of the
// first nq queries over the first n base vectors, best first (nq·k ids,
// row-major; ties to the lower id). It takes the dataset's ground truth
// when that covers them (n = N, k ≤ its K); otherwise it compares every
// pair in the source space, which the lift preserves, with threads
// goroutines.
func (d *VectorSet) ExactTopK(ctx context.Context, n, nq, k, threads int) ([]int32, error) {
	if n < 1 || n > d.N || nq < 1 || nq > d.NQ || k < 1 || k > n {
		return nil, fmt.Errorf("bench: exact top %d of %d queries over %d vectors of a dataset of %d and %d", k, nq, n, d.N, d.NQ)
	}
	out := make([]int32, nq*k)
	if d.gt != nil && n == d.N && k <= d.gtK {
		for q := range nq {
			copy(out[q*k:(q+1)*k], d.gt[q*d.gtK:q*d.gtK+k])
		}
		return out, nil
	}
	from := d.From
	qs := make([]float32, nq*from)
	if err := d.fill(d.query, 0, nq, qs, threads, nil); err != nil {
		return nil, err
	}
	for q := range nq {
		simd.Normalize(qs[q*from : (q+1)*from])
	}
	scores := make([]float32, nq*k)
	for i := range scores {
		scores[i] = float32(math.Inf(-1))
	}
	for i := range out {
		out[i] = -1
	}
	const chunk = 4096
	rows := make([]float32, chunk*from)
	for lo := 0; lo < n; lo += chunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m := min(chunk, n-lo)
		rows := rows[:m*from]
		if err := d.fill(d.base, lo, lo+m, rows, threads, nil); err != nil {
			return nil, err
		}
		parallel(m, threads, func(a, b int) {
			for i := a; i < b; i++ {
				simd.Normalize(rows[i*from : (i+1)*from])
			}
		})
		parallel(nq, threads, func(a, b int) {
			sims := make([]float32, m)
			for q := a; q < b; q++ {
				simd.DotBatch(rows, from, qs[q*from:(q+1)*from], sims)
				ids, sc := out[q*k:(q+1)*k], scores[q*k:(q+1)*k]
				for i, s := range sims {
					if s <= sc[k-1] {
						continue
					}
					j := k - 1
					for j > 0 && s > sc[j-1] {
						sc[j], ids[j] = sc[j-1], ids[j-1]
						j--
					}
					sc[j], ids[j] = s, int32(lo+i)
				}
			}
		})
	}
	return out, nil
}

// SyntheticConfig configures NewSynthetic. A zero field takes its default.
type SyntheticConfig struct {
	// N base vectors and NQ queries (defaults 100,000 and 1,000) of Dim
	// dimensions (default 768).
	N, NQ, Dim int
	// Clusters is the number of cluster centres (default 10,000), drawn
	// uniformly on the unit sphere of a Subspace-dimensional space
	// (default 64) that the lift places in Dim dimensions.
	Clusters, Subspace int
	// Noise is the typical norm of a point's offset from its unit centre
	// (default 0.5): each cluster's spread is Noise times a factor drawn
	// from [0.5, 1.5), and a point is its centre plus an isotropic
	// Gaussian offset of that expected norm.
	Noise float64
	// Seed makes the set (default 1); the lift is LiftSeed's.
	Seed uint64
}

// NewSynthetic returns a SYNTHETIC clustered dataset, for sizes beyond the
// real data (1M): many clusters in a low-dimensional subspace, lifted.
// Real embeddings are clustered and of low intrinsic dimension, which is
// what makes graph indexes work on them; this set has both properties but
// is not real data, and its reports say so. Every vector (base and query)
// is made from its own seeded stream, so any one can be made on demand
// and the set is the same on every machine. Queries are further points of
// the same distribution.
func NewSynthetic(c SyntheticConfig) (*VectorSet, error) {
	if c.N == 0 {
		c.N = 100_000
	}
	if c.NQ == 0 {
		c.NQ = 1000
	}
	if c.Dim == 0 {
		c.Dim = 768
	}
	if c.Clusters == 0 {
		c.Clusters = 10_000
	}
	if c.Subspace == 0 {
		c.Subspace = 64
	}
	if c.Noise == 0 {
		c.Noise = 0.5
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.N < 1 || c.NQ < 1 || c.Clusters < 1 || c.Subspace < 1 || c.Noise < 0 || math.IsNaN(c.Noise) || math.IsInf(c.Noise, 0) {
		return nil, fmt.Errorf("bench: synthetic set: N %d, NQ %d, %d clusters, subspace %d, noise %g", c.N, c.NQ, c.Clusters, c.Subspace, c.Noise)
	}
	if c.Dim < c.Subspace {
		return nil, fmt.Errorf("bench: synthetic set: dimension %d is below its subspace's %d", c.Dim, c.Subspace)
	}
	l, err := NewLift(c.Subspace, c.Dim, LiftSeed)
	if err != nil {
		return nil, err
	}
	sub := c.Subspace
	centres := make([]float32, c.Clusters*sub)
	spread := make([]float32, c.Clusters)
	r := rand.New(rand.NewPCG(c.Seed, 0))
	for k := range c.Clusters {
		ctr := centres[k*sub : (k+1)*sub]
		for i := range ctr {
			ctr[i] = float32(r.NormFloat64())
		}
		simd.Normalize(ctr)
		// Per coordinate, so that the offset's expected squared norm is
		// (Noise · factor)².
		spread[k] = float32(c.Noise * (0.5 + r.Float64()) / math.Sqrt(float64(sub)))
	}
	point := func(stream uint64) rowsFunc {
		return perRow(sub, func(i int, dst []float32) {
			r := rand.New(rand.NewPCG(c.Seed^stream, uint64(i)))
			k := r.IntN(c.Clusters)
			ctr, s := centres[k*sub:(k+1)*sub], spread[k]
			for j := range dst {
				dst[j] = ctr[j] + s*float32(r.NormFloat64())
			}
		})
	}
	name := fmt.Sprintf("synthetic-clustered-%d", c.Dim)
	return &VectorSet{
		Name: name, N: c.N, NQ: c.NQ, Dim: c.Dim, From: sub, lift: l, Unbounded: true,
		Note: fmt.Sprintf("SYNTHETIC: %d clusters on the unit sphere of a %d-d subspace, points = centre + Gaussian offset of norm about %.2f (×0.5–1.5 per cluster), lifted orthonormally to %d-d (seed %d); not real data",
			c.Clusters, sub, c.Noise, c.Dim, c.Seed),
		base:  point(0x5eed_ba5e),
		query: point(0x5eed_9e71),
	}, nil
}

// NewGaussian returns the WORST CASE dataset: n base vectors and nq
// queries of dim independent standard normal coordinates. Such vectors
// have no neighbourhood structure (every cosine is near 0, the nearest
// neighbour is barely nearer than the rest), the hardest input for any
// graph index and unlike any embedding model's output; reports label it.
func NewGaussian(n, nq, dim int, seed uint64) (*VectorSet, error) {
	if n == 0 {
		n = 100_000
	}
	if nq == 0 {
		nq = 1000
	}
	if dim == 0 {
		dim = 768
	}
	if n < 1 || nq < 1 || dim < 1 || dim > 1<<16 {
		return nil, fmt.Errorf("bench: gaussian set: n %d, nq %d, dim %d", n, nq, dim)
	}
	l, err := NewLift(dim, dim, 0)
	if err != nil {
		return nil, err
	}
	gauss := func(stream uint64) rowsFunc {
		return perRow(dim, func(i int, dst []float32) {
			r := rand.New(rand.NewPCG(seed^stream, uint64(i)))
			for j := range dst {
				dst[j] = float32(r.NormFloat64())
			}
		})
	}
	return &VectorSet{
		Name: fmt.Sprintf("gaussian-%d", dim), N: n, NQ: nq, Dim: dim, From: dim, lift: l, Unbounded: true,
		Note: fmt.Sprintf("WORST CASE: random Gaussian vectors (%d-d, no neighbourhood structure; not a realistic workload)", dim),
		base: gauss(0xba5e), query: gauss(0x9e71),
	}, nil
}
