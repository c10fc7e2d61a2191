package tidemark

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkPutText measures text ingest (batches of 500 two-fact
// memories, the offline embedder) with Split on and off: the cost of
// splitting at Put and of looking for a statement each new memory
// updates.
func BenchmarkPutText(b *testing.B) {
	for _, split := range []SplitPolicy{SplitOff, SplitAuto} {
		b.Run("split="+split.String(), func(b *testing.B) {
			ctx := context.Background()
			db := openTest(b, b.TempDir(), &Options{NoSync: true, CheckpointRecords: -1, CheckpointBytes: -1})
			defer db.Close()
			c, err := db.CreateCollection(ctx, "t", &CollectionOptions{Dim: 256, Embedder: "hashing", Split: split})
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				batch := make([]Memory, 500)
				for k := range batch {
					batch[k] = Memory{ID: fmt.Sprint("m", n), Text: fmt.Sprintf("The service %d rate limit is %d requests per minute and the service %d cache timeout is %d seconds.", n, n%97, n, n%31)}
					n++
				}
				if _, err := c.Put(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/memory")
		})
	}
}
