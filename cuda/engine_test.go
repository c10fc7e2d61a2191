package cuda_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/cuda"
	"github.com/tidemark/tidemark/temporal"
)

// A search through the engine on the cuda backend (the emulated device)
// returns the CPU backend's answers: the same memories, versions and
// supersessions written to two databases, the same searches now and as of
// past times, the same hits and scores.
func TestEngineSearchOnEmulatedDevice(t *testing.T) {
	dev, err := cuda.Open(&cuda.Options{Library: cuda.DeviceLibrary(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	o := cuda.DeviceOptions()
	be := cuda.NewBackend(dev, &o)
	defer be.Close()
	ctx := context.Background()
	open := func(o *tidemark.Options) (*tidemark.DB, *tidemark.Collection) {
		db, err := tidemark.Open(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		c, err := db.CreateCollection(ctx, "facts", &tidemark.CollectionOptions{Dim: 8})
		if err != nil {
			t.Fatal(err)
		}
		return db, c
	}
	gpuDB, gpu := open(&tidemark.Options{NoSync: true, Backend: be})
	_, cpu := open(&tidemark.Options{NoSync: true})
	if got := gpuDB.Backend(); got != be.Name() {
		t.Fatalf("the engine runs on %q", got)
	}
	r := rand.New(rand.NewPCG(9, 10))
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	vec := func() []float32 {
		v := make([]float32, 8)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	// Forty facts, each with one to three versions a month apart: the
	// later ones supersede the earlier.
	var batches [3][]tidemark.Memory
	for f := range 40 {
		base := vec()
		for v := range 1 + f%3 {
			w := append([]float32(nil), base...)
			w[v%8] += 0.2
			batches[v] = append(batches[v], tidemark.Memory{
				ID: fmt.Sprintf("f%d-v%d", f, v), Text: fmt.Sprintf("fact %d version %d", f, v), Vector: w,
				Kind: temporal.Kind(f % 3), Source: temporal.SourceTechDoc, ValidFrom: start.AddDate(0, v, f),
				Subject: fmt.Sprintf("thing %d", f), Relation: "value", Object: fmt.Sprint(v),
			})
		}
	}
	for _, b := range batches {
		for _, c := range []*tidemark.Collection{gpu, cpu} {
			if _, err := c.Put(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	queries := make([][]float32, 12)
	for i := range queries {
		queries[i] = vec()
	}
	compare := func(when string) {
		t.Helper()
		for i, q := range queries {
			req := &tidemark.SearchRequest{Vector: q, K: 6}
			if i%3 == 1 {
				req.AsOf = start.AddDate(0, 1, 15)
			}
			got, err := gpu.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			want, err := cpu.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Hits) != len(want.Hits) || len(got.Hits) == 0 {
				t.Fatalf("%s, search %d: %d hits, CPU %d", when, i, len(got.Hits), len(want.Hits))
			}
			for k := range got.Hits {
				g, w := got.Hits[k], want.Hits[k]
				if g.ID != w.ID || math.Abs(g.Score-w.Score) > 1e-5 {
					t.Fatalf("%s, search %d hit %d: %s %.7f, CPU %s %.7f", when, i, k, g.ID, g.Score, w.ID, w.Score)
				}
			}
		}
	}
	compare("after the writes")
	// Writes after the device holds the corpus: new versions (the old
	// ones closed in place), retractions and a purge (a vector zeroed in
	// place), feedback (counters and confidence in place). The device
	// copy must follow every one (kernels.Batch.Changed).
	var later []tidemark.Memory
	for f := 0; f < 40; f += 5 {
		later = append(later, tidemark.Memory{
			ID: fmt.Sprintf("f%d-late", f), Text: fmt.Sprintf("fact %d, later", f), Vector: vec(),
			Kind: temporal.Kind(f % 3), Source: temporal.SourceTechDoc, ValidFrom: start.AddDate(0, 4, 0),
			Subject: fmt.Sprintf("thing %d", f), Relation: "value", Object: "late",
		})
	}
	for _, c := range []*tidemark.Collection{gpu, cpu} {
		if _, err := c.Put(ctx, later); err != nil {
			t.Fatal(err)
		}
	}
	compare("after new versions")
	// Now only writes in place: the copy has room for the rows it holds,
	// so these take the incremental path.
	for _, c := range []*tidemark.Collection{gpu, cpu} {
		for _, id := range []string{"f1-v1", "f7-v0"} {
			if _, err := c.Retract(ctx, id, &tidemark.RetractOptions{By: "test"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Retract(ctx, "f13-v0", &tidemark.RetractOptions{By: "test", Purge: true}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"f2-v2", "f3-v0", "f11-v1"} {
			if err := c.FeedbackFrom(ctx, id, true, "test"); err != nil {
				t.Fatal(err)
			}
		}
	}
	compare("after retractions, a purge and feedback")
}
