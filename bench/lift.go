package bench

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/tidemark/tidemark/simd"
)

// LiftSeed seeds the matrix of every lift the benchmarks make, so that a
// dataset lifted to a dimension is the same vectors in every workload and
// every run.
const LiftSeed = 20261124

// A Lift maps From-dimensional vectors into To dimensions by a fixed
// matrix Q (To × From) with orthonormal columns: QᵀQ = I, so dot
// products, norms, cosines and therefore every neighbour list are the
// source's, up to float32 rounding. A lifted vector costs what a To-d
// model's embedding costs (To·4 bytes, To multiply-adds per dot) while its
// neighbour structure stays that of the real data.
type Lift struct {
	From, To int
	// q is Q row-major: q[i·From+j] = Q[i][j]; nil for the identity.
	q []float32
}

// NewLift returns the lift from from to to dimensions (to ≥ from ≥ 1).
// The identity when they are equal; otherwise Q is a To × From Gaussian
// matrix drawn from seed and orthonormalised by modified Gram–Schmidt,
// twice, in float64, then rounded to float32.
func NewLift(from, to int, seed uint64) (*Lift, error) {
	if from < 1 || to < from || to > 1<<16 {
		return nil, fmt.Errorf("bench: a lift from %d to %d dimensions: want 1 ≤ from ≤ to ≤ 65536", from, to)
	}
	if to == from {
		return &Lift{From: from, To: to}, nil
	}
	l := &Lift{From: from, To: to, q: make([]float32, to*from)}
	r := rand.New(rand.NewPCG(seed, uint64(from)<<32|uint64(to)))
	// a holds Q column-major while it is orthonormalised: column c is
	// a[c·to : (c+1)·to].
	a := make([]float64, to*from)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	for c := range from {
		col := a[c*to : (c+1)*to]
		for range 2 { // the second pass removes what rounding left of the first
			for p := range c {
				prev := a[p*to : (p+1)*to]
				d := dot64(prev, col)
				for i := range col {
					col[i] -= d * prev[i]
				}
			}
		}
		norm := math.Sqrt(dot64(col, col))
		if norm < 1e-6 { // a Gaussian matrix is of full rank almost surely
			return nil, fmt.Errorf("bench: lift %d→%d: column %d is degenerate", from, to, c)
		}
		for i := range col {
			col[i] /= norm
		}
	}
	for i := range to {
		for j := range from {
			l.q[i*from+j] = float32(a[j*to+i])
		}
	}
	return l, nil
}

func dot64(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Apply writes Q·x to dst (len(x) = From, len(dst) = To).
func (l *Lift) Apply(dst, x []float32) {
	if len(x) != l.From || len(dst) != l.To {
		panic(fmt.Sprintf("bench: Lift.Apply: %d → %d dimensions, given %d → %d", l.From, l.To, len(x), len(dst)))
	}
	if l.From == l.To {
		copy(dst, x)
		return
	}
	simd.DotBatch(l.q, l.From, x, dst)
}

// LoadLifted reads an ANN dataset in the format of [LoadANN] (GloVe-100:
// ../shared/data/glove100/glove100) and lifts it to dim dimensions with
// NewLift(D, dim, LiftSeed), D the file's dimension: dim = D keeps the
// vectors as they are; dim = 384, 768 or 1536 gives vectors of a sentence
// model's size whose neighbours, and so whose ground truth (.gt), are
// exactly the file's. The queries and the ground truth are kept in
// memory; the base vectors are read from PREFIX.base when asked for
// (VectorSet.Fill) and lifted then, so that a benchmark's own copy of the
// data does not swell the resident set it measures. Close the set when
// done.
func LoadLifted(prefix string, dim int) (*VectorSet, error) {
	a, err := LoadANN(prefix) // checks every file against the meta line
	if err != nil {
		return nil, err
	}
	if dim == 0 {
		dim = a.Dim
	}
	l, err := NewLift(a.Dim, dim, LiftSeed)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(prefix)
	note := fmt.Sprintf("%s (%d × %d, real embeddings from %s)", name, a.N, a.Dim, prefix)
	if dim != a.Dim {
		name = fmt.Sprintf("%s-lifted-%d", name, dim)
		note = fmt.Sprintf("%s lifted to %d dimensions by a fixed orthonormal %d×%d map: neighbours and ground truth are the file's", note, dim, dim, a.Dim)
	}
	f, err := os.Open(prefix + ".base")
	if err != nil {
		return nil, err
	}
	from, queries := a.Dim, a.Query
	return &VectorSet{
		Name: name, Note: note, N: a.N, NQ: a.NQ, Dim: dim, From: from, lift: l, file: f,
		base: func(lo, hi int, dst []float32) error {
			raw := make([]byte, (hi-lo)*from*4)
			if _, err := f.ReadAt(raw, int64(lo)*int64(from)*4); err != nil {
				return fmt.Errorf("bench: %s.base: %w", prefix, err)
			}
			for i := range len(raw) / 4 {
				dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
			return nil
		},
		query: func(lo, hi int, dst []float32) error {
			copy(dst, queries[lo*from:hi*from])
			return nil
		},
		gt: a.GT, gtK: a.K,
	}, nil
}
