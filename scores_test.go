package tidemark

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// The observation: a true static fact from a wiki reported
// confidence 0.01 after 18 months. Its Hit.Confidence is its authority
// prior, 0.75, under every method, and consolidation keeps it active; an
// event of the same age still decays under SmartVector's clock, and a
// static memory that negative evidence refutes still goes dormant. The
// collection's method is SmartVector's, whose own clock decays everything:
// the lifecycle must hold the static memory all the same.
func TestStaticConfidenceDoesNotDecay(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return now }})
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 3, Method: temporal.MethodSmartVector})
	if err != nil {
		t.Fatal(err)
	}
	then := now.AddDate(0, -18, 0)
	if _, err := c.Put(ctx, []Memory{
		{ID: "wiki", Text: "water boils at 100 °C at sea level", Vector: []float32{1, 0, 0}, Kind: temporal.Static,
			Source: temporal.SourceWiki, Created: then},
		{ID: "launch", Text: "the launch event", Vector: []float32{1, 1, 0}, Kind: temporal.Event,
			Source: temporal.SourceWiki, Created: then},
		{ID: "rumour", Text: "a refuted chat claim", Vector: []float32{0, 0, 1}, Kind: temporal.Static,
			Source: temporal.SourceChat, Negative: 2, Created: then},
	}); err != nil {
		t.Fatal(err)
	}
	conf := func(method temporal.Method) map[string]float64 {
		t.Helper()
		p := temporal.Preset(method)
		res, err := c.Search(ctx, &SearchRequest{Vector: []float32{1, 0.2, 0.1}, K: 3, Params: &p})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, h := range res.Hits {
			out[h.ID] = h.Confidence
		}
		return out
	}
	for _, m := range temporal.Methods() {
		got := conf(m)
		if math.Abs(got["wiki"]-0.75) > 1e-6 {
			t.Errorf("%v: the 18-month-old static wiki fact reports confidence %v, want its prior 0.75", m, got["wiki"])
		}
		// 0.30 − 2·0.08 = 0.14: evidence, not age.
		if math.Abs(got["rumour"]-0.14) > 1e-6 {
			t.Errorf("%v: the refuted static chat claim reports %v, want 0.14", m, got["rumour"])
		}
	}
	// The event is not held: SmartVector's clock takes it to the floor
	// (0.75·2^(−548/30) clips to 0.01), as it does in tidemark's preset.
	if got := conf(temporal.MethodSmartVector); math.Abs(got["launch"]-0.01) > 1e-6 {
		t.Errorf("the 18-month-old event reports %v, want the decayed 0.01", got["launch"])
	}
	if _, err := c.Consolidate(ctx, &ConsolidateOptions{Now: now}); err != nil { // promotes
		t.Fatal(err)
	}
	if _, err := c.Consolidate(ctx, &ConsolidateOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]temporal.Status{"wiki": temporal.Active, "rumour": temporal.Dormant, "launch": temporal.Dormant} {
		if m, err := c.Get(ctx, id); err != nil || m.Status != want {
			t.Errorf("%s after consolidation: %v %v, want %v", id, m.Status, err, want)
		}
	}
}

// Hit.Score does not depend on the other candidates. The article's
// reranker min–max normalises within the pool: x (cosine 0.8, 10 days,
// half-life 10) is the pool's minimum beside y (cosine 0.9) and its
// maximum beside z (cosine 0.1), so its pooled score is 0.3·(0.4·0.5) =
// 0.06 in one and 0.6·1 + 0.4·0.5·recency in the other. Its Score is the
// article's formula with the raw cosine, pool recency 1 and no penalty:
// 0.6·0.8 + 0.4·0.5 = 0.68 in both. The pooled score still orders the hits.
func TestHitScoreComparableAcrossResultSets(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return now }})
	defer db.Close()
	q := []float32{1, 0, 0}
	at := func(cos float64) []float32 { return []float32{float32(cos), float32(math.Sqrt(1 - cos*cos)), 0} }
	x := Memory{ID: "x", Text: "x", Vector: at(0.8), Profile: "", Created: now.AddDate(0, 0, -10)}
	run := func(name string, other Memory) *SearchResult {
		t.Helper()
		c, err := db.CreateCollection(ctx, name, &CollectionOptions{Dim: 3, Method: temporal.MethodArticle, HalfLife: 10})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Put(ctx, []Memory{x, other}); err != nil {
			t.Fatal(err)
		}
		res, err := c.Search(ctx, &SearchRequest{Vector: q, K: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 2 {
			t.Fatalf("%s: %d hits", name, len(res.Hits))
		}
		return res
	}
	find := func(res *SearchResult, id string) Hit {
		for _, h := range res.Hits {
			if h.ID == id {
				return h
			}
		}
		t.Fatalf("%s not found", id)
		return Hit{}
	}
	beside := run("beside-y", Memory{ID: "y", Text: "y", Vector: at(0.9), Created: now.AddDate(0, 0, -20)})
	above := run("beside-z", Memory{ID: "z", Text: "z", Vector: at(0.1), Created: now})
	hy, hz := find(beside, "x"), find(above, "x")
	for _, h := range []Hit{hy, hz} {
		if math.Abs(h.Cosine-0.8) > 1e-6 || math.Abs(h.Score-0.68) > 1e-5 {
			t.Errorf("x: cosine %v score %v, want 0.8 and 0.68 in every result set", h.Cosine, h.Score)
		}
		if h.Signals == nil || h.Score != temporal.PoolFreeScore(new(temporal.Preset(temporal.MethodArticle)), h.Signals) {
			t.Errorf("x: score %v is not the pool-free score of its signals %+v", h.Score, h.Signals)
		}
	}
	if hy.Score != hz.Score {
		t.Errorf("x scores %v beside y and %v beside z", hy.Score, hz.Score)
	}
	// The pools differ, and the pooled ranking is the article's: beside y,
	// x is penalised (sim_norm 0 < 0.15) and y ranks first.
	if hy.Signals.SimNorm != 0 || hy.Signals.Penalty != 0.3 || hz.Signals.SimNorm != 1 {
		t.Errorf("pooled signals beside y %+v, beside z %+v", hy.Signals, hz.Signals)
	}
	if beside.Hits[0].ID != "y" || above.Hits[0].ID != "x" {
		t.Errorf("ranking beside y %s first, beside z %s first", beside.Hits[0].ID, above.Hits[0].ID)
	}
}

// Hit.Cosine is the raw cosine on every path: the exact fused scan, the
// explained scan and the HNSW plan; and without pool statistics Score is
// the ranking score, the same with and without an explanation.
func TestHitCosineOnEveryPlan(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"a": 1, "b": 0.6, "c": 0}
	if _, err := c.Put(ctx, []Memory{
		{ID: "a", Text: "a", Vector: []float32{2, 0, 0}},
		{ID: "b", Text: "b", Vector: []float32{0.6, 0.8, 0}},
		{ID: "c", Text: "c", Vector: []float32{0, 0, 3}},
	}); err != nil {
		t.Fatal(err)
	}
	scores := map[string]float64{}
	for _, req := range []SearchRequest{
		{Vector: []float32{1, 0, 0}, K: 3, Plan: PlanExact},
		{Vector: []float32{1, 0, 0}, K: 3, Plan: PlanExact, Explain: true},
		{Vector: []float32{1, 0, 0}, K: 3, Plan: PlanANN},
	} {
		res, err := c.Search(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 3 {
			t.Fatalf("plan %v explain %v: %d hits", req.Plan, req.Explain, len(res.Hits))
		}
		for _, h := range res.Hits {
			if math.Abs(h.Cosine-want[h.ID]) > 1e-6 {
				t.Errorf("plan %v explain %v: %s cosine %v, want %v", req.Plan, req.Explain, h.ID, h.Cosine, want[h.ID])
			}
			if s, ok := scores[h.ID]; ok && math.Abs(s-h.Score) > 1e-6 {
				t.Errorf("plan %v explain %v: %s score %v, %v on another path", req.Plan, req.Explain, h.ID, h.Score, s)
			}
			scores[h.ID] = h.Score
		}
	}
}

// MinScore drops the hits scoring below it, keeps one scoring exactly it,
// and must be finite. With the plain method Score is the cosine: 1, 0.6, 0.
func TestSearchMinScore(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 3, Method: temporal.MethodPlain})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, []Memory{
		{ID: "a", Text: "a", Vector: []float32{1, 0, 0}},
		{ID: "b", Text: "b", Vector: []float32{0.6, 0.8, 0}},
		{ID: "c", Text: "c", Vector: []float32{0, 0, 1}},
	}); err != nil {
		t.Fatal(err)
	}
	ids := func(min *float64, explain bool) []string {
		t.Helper()
		res, err := c.Search(ctx, &SearchRequest{Vector: []float32{1, 0, 0}, K: 3, MinScore: min, Explain: explain})
		if err != nil {
			t.Fatal(err)
		}
		return res.ids()
	}
	for _, c := range []struct {
		min  *float64
		want int
	}{
		{nil, 3}, {new(-0.5), 3}, {new(0.5), 2}, {new(0.7), 1}, {new(1.5), 0},
	} {
		for _, explain := range []bool{false, true} {
			if got := ids(c.min, explain); len(got) != c.want || (c.want > 0 && got[0] != "a") {
				t.Errorf("min score %v (explain %v): %v, want the first %d", c.min, explain, got, c.want)
			}
		}
	}
	// The score of b as stored (float32 cosine) is kept at exactly that
	// threshold.
	res, err := c.Search(ctx, &SearchRequest{Vector: []float32{1, 0, 0}, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(new(res.Hits[1].Score), false); len(got) != 2 {
		t.Errorf("a threshold equal to b's score %v kept %v", res.Hits[1].Score, got)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := c.Search(ctx, &SearchRequest{Vector: []float32{1, 0, 0}, MinScore: &bad}); !errors.Is(err, ErrInvalid) {
			t.Errorf("min score %v: %v, want ErrInvalid", bad, err)
		}
	}
}
