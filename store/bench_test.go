package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

const benchPayloadSize = 3584 // 3.5 KB: a memory of a few hundred words with metadata

func benchPayloads(n int) [][]byte {
	r := rand.New(rand.NewPCG(1, 1))
	ps := make([][]byte, n)
	for i := range ps {
		ps[i] = make([]byte, benchPayloadSize)
		for j := range ps[i] {
			ps[i][j] = byte(r.Uint32())
		}
	}
	return ps
}

// BenchmarkAppend appends batches of 3.5 KB records from one goroutine with
// real fsync: one group commit (one fsync) per AppendBatch.
func BenchmarkAppend(b *testing.B) {
	for _, batch := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			w := mustOpen(b, b.TempDir(), nil)
			defer mustClose(b, w)
			payloads := benchPayloads(batch)
			ctx := context.Background()
			b.SetBytes(int64(batch * benchPayloadSize))
			records := 0
			for b.Loop() {
				var err error
				if batch == 1 {
					_, err = w.Append(ctx, payloads[0])
				} else {
					_, _, err = w.AppendBatch(ctx, payloads)
				}
				if err != nil {
					b.Fatal(err)
				}
				records += batch
			}
			b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkAppendParallel appends single 3.5 KB records from many
// goroutines with real fsync: group commit shares each fsync among the
// appends waiting for it.
func BenchmarkAppendParallel(b *testing.B) {
	for _, goroutines := range []int{16, 128} {
		b.Run(fmt.Sprintf("goroutines=%d", goroutines), func(b *testing.B) {
			w := mustOpen(b, b.TempDir(), nil)
			defer mustClose(b, w)
			payload := benchPayloads(1)[0]
			b.SetBytes(benchPayloadSize)
			b.SetParallelism((goroutines + 1) / 2) // GOMAXPROCS = 2 here; the count is per P
			var records atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := w.Append(context.Background(), payload); err != nil {
						b.Error(err)
						return
					}
					records.Add(1)
				}
			})
			b.ReportMetric(float64(records.Load())/b.Elapsed().Seconds(), "records/s")
		})
	}
}
