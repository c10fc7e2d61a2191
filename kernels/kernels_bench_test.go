package kernels

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tidemark/tidemark/temporal"
)

// BenchmarkTopK measures one query over a batch; SetBytes counts the vector
// bytes, so MB/s is the scan bandwidth.
func BenchmarkTopK(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, dim := range []int{384, 768} {
			for _, be := range []Backend{DefaultCPU(), Plain{}} {
				b.Run(fmt.Sprintf("%s/n=%d/d=%d", be.Name(), n, dim), func(b *testing.B) {
					r := rand.New(rand.NewPCG(1, 2))
					q := testQuery(r, dim, 1)
					q.Time = temporal.At(0)
					bt := randomBatch(b, r, n, dim, 1, q.Vector)
					p := temporal.Preset(temporal.MethodTidemark)
					dst := make([]Hit, 0, 10)
					b.SetBytes(int64(n * dim * 4))
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						dst, _, _ = be.TopK(context.Background(), bt, &q, &p, 10, dst[:0])
					}
				})
			}
		}
	}
}

// BenchmarkScoreMany measures 64 queries per call; SetBytes counts the
// vector bytes once per query.
func BenchmarkScoreMany(b *testing.B) {
	const nq = 64
	for _, dim := range []int{384, 768} {
		b.Run(fmt.Sprintf("n=20000/d=%d/q=%d", dim, nq), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			qs := make([]Query, nq)
			for i := range qs {
				qs[i] = testQuery(r, dim, 1)
				qs[i].Time = temporal.At(0)
			}
			bt := randomBatch(b, r, 20_000, dim, 1, qs[0].Vector)
			p := temporal.Preset(temporal.MethodTidemark)
			var dst [][]Hit
			b.SetBytes(int64(20_000 * dim * 4 * nq))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				dst, _ = DefaultCPU().ScoreMany(context.Background(), bt, qs, &p, 10, dst)
			}
		})
	}
}
