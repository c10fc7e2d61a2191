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
	for i := range 12 {
		req := &tidemark.SearchRequest{Vector: vec(), K: 6}
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
			t.Fatalf("search %d: %d hits, CPU %d", i, len(got.Hits), len(want.Hits))
		}
		for k := range got.Hits {
			g, w := got.Hits[k], want.Hits[k]
			if g.ID != w.ID || math.Abs(g.Score-w.Score) > 1e-5 {
				t.Fatalf("search %d hit %d: %s %.7f, CPU %s %.7f", i, k, g.ID, g.Score, w.ID, w.Score)
			}
		}
	}
}
