package tidemark

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// Source filters on both plans, and a fact's lineage by its key.
func TestSourceFilterAndFactHistory(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	if _, err := c.Put(ctx, []Memory{
		{ID: "wiki", Text: "w", Vector: unit(4, 0), Source: temporal.SourceWiki, Subject: "API ", Relation: "Limit", Object: "1"},
		{ID: "chat", Text: "c", Vector: unit(4, 0), Source: temporal.SourceChat},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, []Memory{{ID: "wiki2", Text: "w2", Vector: unit(4, 0), Source: temporal.SourceWiki, Subject: "api", Relation: "limit", Object: "2"}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Plan{PlanExact, PlanANN} {
		res, err := c.Search(ctx, &SearchRequest{Vector: unit(4, 0), Sources: []temporal.Source{temporal.SourceChat}, Plan: p})
		if err != nil || len(res.Hits) != 1 || res.Hits[0].ID != "chat" {
			t.Fatalf("plan %v: %+v %v", p, res, err)
		}
	}
	h, err := c.FactHistory(ctx, "api", "limit")
	if err != nil || len(h) != 2 || h[0].ID != "wiki" || h[1].ID != "wiki2" {
		t.Fatalf("fact history %v %v", h, err)
	}
	if _, err := c.FactHistory(ctx, "nope", "limit"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown fact: %v", err)
	}
}

// SearchRequest.FirstStage hands only the most similar memories to the
// fused stage, before the masks: a first stage of one that finds only a
// superseded version answers nothing, two find its successor.
func TestSearchFirstStage(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), &Options{NoSync: true})
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	mems := []Memory{
		{ID: "old", Text: "limit 10", Vector: []float32{1, 0.05, 0, 0}, Kind: temporal.Versioned, DocID: "d", Version: 1, ValidFrom: day},
		{ID: "new", Text: "limit 20", Vector: []float32{1, 0.4, 0, 0}, Kind: temporal.Versioned, DocID: "d", Version: 2, ValidFrom: day.AddDate(0, 1, 0)},
		{ID: "far", Text: "other", Vector: []float32{0.3, 0, 1, 0}},
	}
	if _, err := c.Put(ctx, mems); err != nil {
		t.Fatal(err)
	}
	q := []float32{1, 0, 0, 0}
	ids := func(plan Plan, fs int) []string {
		res, err := c.Search(ctx, &SearchRequest{Vector: q, K: 5, Plan: plan, FirstStage: fs})
		if err != nil {
			t.Fatal(err)
		}
		return res.ids()
	}
	for _, tc := range []struct {
		fs   int
		want []string
	}{{0, []string{"new", "far"}}, {1, nil}, {2, []string{"new"}}, {3, []string{"new", "far"}}, {10, []string{"new", "far"}}} {
		if got := ids(PlanExact, tc.fs); !slices.Equal(got, tc.want) {
			t.Errorf("exact, first stage %d: %v, want %v", tc.fs, got, tc.want)
		}
	}
	// The ANN plan finds candidates on the visible surface only, so its
	// first stage of one is the successor.
	if got := ids(PlanANN, 1); !slices.Equal(got, []string{"new"}) {
		t.Errorf("ann, first stage 1: %v", got)
	}
	if _, err := c.Search(ctx, &SearchRequest{Vector: q, FirstStage: -1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("first stage -1: %v, want ErrInvalid", err)
	}
}

// BenchmarkSearchANN is one ANN search of k = 10 on 20k memories of 128
// dimensions in 200 clusters (a clustered set, not Gaussian noise, the
// worst case for a graph index), the default method: the engine's cost
// around the index walk, allocations included.
func BenchmarkSearchANN(b *testing.B) {
	ctx := context.Background()
	const n, dim = 20000, 128
	db := openTest(b, b.TempDir(), &Options{NoSync: true})
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: dim})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	centres := make([][]float32, 200)
	for i := range centres {
		centres[i] = make([]float32, dim)
		for j := range centres[i] {
			centres[i][j] = float32(rng.NormFloat64())
		}
	}
	point := func() []float32 {
		c := centres[rng.IntN(len(centres))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + 0.3*float32(rng.NormFloat64())
		}
		return v
	}
	for i := 0; i < n; i += 1000 {
		batch := make([]Memory, 1000)
		for j := range batch {
			batch[j] = Memory{ID: fmt.Sprintf("m%d", i+j), Vector: point()}
		}
		if _, err := c.Put(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	queries := make([][]float32, 256)
	for i := range queries {
		queries[i] = point()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := c.Search(ctx, &SearchRequest{Vector: queries[i%len(queries)], K: 10, Plan: PlanANN}); err != nil {
			b.Fatal(err)
		}
	}
}
