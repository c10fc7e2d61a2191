package tidemark

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// A group whose embeddings change regime gets a higher λ(t) than a
// stable one; the VDD method then decays its memories faster than their
// profile (and StaticDecay turns that off); the detectors come back the
// same after a crash.
func TestDriftAdaptiveDecay(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db := openTest(t, dir, &Options{Clock: func() time.Time { return clock }})
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 8, Method: temporal.MethodVDD})
	rng := rand.New(rand.NewPCG(3, 3))
	around := func(axis int) []float32 {
		v := make([]float32, 8)
		for i := range v {
			v[i] = float32(0.15 * rng.NormFloat64())
		}
		v[axis] += 1
		return v
	}
	put := func(group string, i, axis int) {
		t.Helper()
		if _, err := c.Put(ctx, []Memory{{ID: fmt.Sprintf("%s-%d", group, i), Text: fmt.Sprintf("%s note %d", group, i), Vector: around(axis),
			Subject: group, Relation: fmt.Sprintf("note %d", i), Object: "x", Created: clock.AddDate(0, 0, -10)}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 150 {
		put("lib", i, 2)
		axis := 0
		if i >= 120 {
			axis = 5 // svc changes regime
		}
		put("svc", i, axis)
	}
	factor := map[string]float64{}
	for _, d := range c.Drift() {
		factor[d.Group] = d.Factor
		if d.Group != "" && (!d.Warm || !d.Calibrated || len(d.History) == 0) {
			t.Fatalf("group %q not warm: %+v", d.Group, d)
		}
	}
	t.Logf("factors %v", factor)
	if !(factor["svc"] > factor["lib"]) || !(factor["svc"] > 1) {
		t.Fatalf("after the regime change svc's factor %v, lib's %v", factor["svc"], factor["lib"])
	}
	score := func(static bool) float64 {
		p := temporal.Preset(temporal.MethodVDD)
		p.AdaptiveDecay = !static
		res, err := c.Search(ctx, &SearchRequest{Vector: around(5), K: 1, Params: &p, Kinds: temporal.KindsOf(temporal.Static)})
		if err != nil || len(res.Hits) == 0 {
			t.Fatal(err)
		}
		return res.Hits[0].Score
	}
	if adaptive, static := score(false), score(true); !(adaptive < static) {
		t.Fatalf("VDD score with drift %v, static %v: the volatile group should decay faster", adaptive, static)
	}
	before := c.Drift()
	db.wal.Close()
	db = openTest(t, dir, nil)
	defer db.Close()
	c, _ = db.Collection("c")
	after := c.Drift()
	if len(after) != len(before) {
		t.Fatalf("%d groups after a crash, %d before", len(after), len(before))
	}
	for i := range before {
		if before[i].Lambda != after[i].Lambda || before[i].Observations != after[i].Observations {
			t.Fatalf("group %q: %+v before, %+v after", before[i].Group, before[i], after[i])
		}
	}
}
