package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

var ctx = context.Background()

func newMem(t *testing.T, m temporal.Method, corpus []CorpusLine) *Memory {
	t.Helper()
	mem, err := NewMemory(&MemoryOptions{Method: m})
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Ingest(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	return mem
}

func search(t *testing.T, mem *Memory, q QueryLine) Ranking {
	t.Helper()
	if q.ID == "" {
		q.ID = "q"
	}
	if len(q.Gold) == 0 {
		q.Gold = []string{"unused"}
	}
	r, err := mem.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func top1(r Ranking) string {
	if len(r.IDs) == 0 {
		return ""
	}
	return r.IDs[0]
}

var now2026 = *tp("2026-01-01T00:00:00Z")

// rateLimits is one fact asserted twice: the old value is the closer match
// to the query, so only supersession keeps it from the top.
func rateLimits() []CorpusLine {
	return []CorpusLine{
		{ID: "limit-v1", Vector: []float32{1, 0.1, 0, 0}, Kind: temporal.Versioned, Subject: "api", Relation: "rate limit",
			Object: "100", ValidFrom: tp("2024-01-01T00:00:00Z")},
		{ID: "limit-v2", Vector: []float32{0.6, 0.8, 0, 0}, Kind: temporal.Versioned, Subject: "API", Relation: "Rate-Limit",
			Object: "1000", ValidFrom: tp("2025-01-01T00:00:00Z")},
		{ID: "other", Vector: []float32{0, 0, 1, 0}},
	}
}

func TestMemoryKeySupersession(t *testing.T) {
	q := QueryLine{Vector: []float32{1, 0, 0, 0}, Now: now2026}
	asOf := q
	asOf.AsOf = tp("2024-06-01T00:00:00Z")
	for _, order := range []string{"in order", "newest first"} {
		corpus := rateLimits()
		if order == "newest first" {
			corpus[0], corpus[1] = corpus[1], corpus[0]
		}
		mem := newMem(t, temporal.MethodTidemark, corpus)
		if r := search(t, mem, q); top1(r) != "limit-v2" || slices.Contains(r.IDs, "limit-v1") {
			t.Errorf("%s: current query ranked %v, want limit-v2 first and no limit-v1", order, r.IDs)
		}
		if r := search(t, mem, asOf); top1(r) != "limit-v1" || slices.Contains(r.IDs, "limit-v2") {
			t.Errorf("%s: as of 2024-06 ranked %v, want limit-v1 and not limit-v2", order, r.IDs)
		}
		if mem.Len() != 3 {
			t.Errorf("%s: %d rows, want 3", order, mem.Len())
		}
	}
	// Without masks the stale fact wins: the test above can fail.
	if r := search(t, newMem(t, temporal.MethodPlain, rateLimits()), q); top1(r) != "limit-v1" {
		t.Errorf("plain ranked %v, want the stale limit-v1 first", r.IDs)
	}
}

func TestMemoryDocVersionSupersession(t *testing.T) {
	corpus := []CorpusLine{
		{ID: "d-v1", Vector: []float32{1, 0.1, 0}, Kind: temporal.Versioned, DocID: "d", Version: 1, RecordedAt: tp("2024-01-01T00:00:00Z")},
		{ID: "d-v2", Vector: []float32{0.5, 0.9, 0}, Kind: temporal.Versioned, DocID: "d", Version: 2, RecordedAt: tp("2025-01-01T00:00:00Z")},
		{ID: "e", Vector: []float32{0, 0, 1}},
	}
	q := QueryLine{Vector: []float32{1, 0, 0}, Now: now2026}
	// The versions arrive in either order; the higher version wins.
	for _, c := range [][]CorpusLine{corpus, {corpus[1], corpus[0], corpus[2]}} {
		mem := newMem(t, temporal.MethodTidemark, c)
		if r := search(t, mem, q); top1(r) != "d-v2" || slices.Contains(r.IDs, "d-v1") {
			t.Errorf("current ranked %v", r.IDs)
		}
		asOf := q
		asOf.AsOf = tp("2024-06-01T00:00:00Z")
		if r := search(t, mem, asOf); top1(r) != "d-v1" || slices.Contains(r.IDs, "d-v2") {
			t.Errorf("as of 2024-06 ranked %v, want d-v1 alone", r.IDs)
		}
	}
	// At an earlier transaction time v2 is not yet known and v1's open
	// window is what was believed.
	mem := newMem(t, temporal.MethodTidemark, corpus)
	then := q
	then.Now = *tp("2024-06-01T00:00:00Z")
	if r := search(t, mem, then); top1(r) != "d-v1" {
		t.Errorf("at transaction time 2024-06 ranked %v", r.IDs)
	}
}

// File order is transaction time when recorded_at is absent.
func TestMemoryFileOrder(t *testing.T) {
	corpus := []CorpusLine{
		{ID: "first", Vector: []float32{1, 0}, Subject: "s", Relation: "r", Object: "one"},
		{ID: "second", Vector: []float32{0.1, 1}, Subject: "s", Relation: "r", Object: "two"},
	}
	r := search(t, newMem(t, temporal.MethodTidemark, corpus), QueryLine{Vector: []float32{1, 0}, Now: now2026})
	if !slices.Equal(r.IDs, []string{"second"}) {
		t.Errorf("ranked %v, want the later line alone", r.IDs)
	}
	if got := FileOrderTime(3); !got.Equal(time.Date(1970, 1, 1, 0, 0, 3, 0, time.UTC)) {
		t.Errorf("FileOrderTime(3) = %v", got)
	}
}

func TestMemoryDuplicatesReinforce(t *testing.T) {
	one := []CorpusLine{{ID: "a", Text: "The rate limit is 100 requests per minute."}, {ID: "z", Text: "Unrelated zebra facts."}}
	two := append(slices.Clone(one), CorpusLine{ID: "a-again", Text: "the  RATE limit is 100 requests per minute.", Access: 2})
	q := QueryLine{Text: "rate limit requests", Now: now2026}
	m1, m2 := newMem(t, temporal.MethodTidemark, one), newMem(t, temporal.MethodTidemark, two)
	if m2.Len() != 2 {
		t.Fatalf("%d rows, want 2: the restatement must not be stored", m2.Len())
	}
	r1, r2 := search(t, m1, q), search(t, m2, q)
	if top1(r1) != "a" || top1(r2) != "a" {
		t.Fatalf("ranked %v and %v", r1.IDs, r2.IDs)
	}
	// Undated lines are as old as file order (1970): C = clip(0.20·2^(−age/30),
	// 0.01, 1) + 0.01·ln(1 + access) = 0.01 + 0.01·ln(1 + access), and the
	// restatement adds 1 + its own 2 accesses.
	if want := 0.01 * math.Log(4); math.Abs(r2.Confidence-r1.Confidence-want) > 1e-12 {
		t.Errorf("confidence %v → %v, want +%v", r1.Confidence, r2.Confidence, want)
	}
	// The same fact in other words is a duplicate too.
	keyed := []CorpusLine{
		{ID: "k1", Text: "Alice lives in Paris.", Subject: "Alice", Relation: "lives in", Object: "Paris"},
		{ID: "k2", Text: "Paris is Alice's home.", Subject: "alice", Relation: "lives_in", Object: " paris "},
	}
	if n := newMem(t, temporal.MethodTidemark, keyed).Len(); n != 1 {
		t.Errorf("same key and object: %d rows, want 1", n)
	}
}

// A value that comes back after being superseded is a new row, not a
// duplicate of the superseded one.
func TestMemoryValueReturns(t *testing.T) {
	fact := func(id, city, from string) CorpusLine {
		return CorpusLine{ID: id, Text: "Alice lives in " + city + ".", Subject: "alice", Relation: "lives in", Object: city,
			ValidFrom: tp(from)}
	}
	corpus := []CorpusLine{fact("p1", "Paris", "2020-01-01T00:00:00Z"), fact("l", "London", "2022-01-01T00:00:00Z"),
		fact("p2", "Paris", "2024-01-01T00:00:00Z"), {ID: "x", Text: "Bob lives in Rome."}}
	mem := newMem(t, temporal.MethodTidemark, corpus)
	if mem.Len() != 4 {
		t.Fatalf("%d rows, want 4", mem.Len())
	}
	for _, c := range []struct {
		asOf string
		want string
	}{{"", "p2"}, {"2021-01-01T00:00:00Z", "p1"}, {"2023-01-01T00:00:00Z", "l"}} {
		q := QueryLine{Text: "where does alice live", Now: now2026}
		if c.asOf != "" {
			q.AsOf = tp(c.asOf)
		}
		if r := search(t, mem, q); top1(r) != c.want {
			t.Errorf("as of %q ranked %v, want %s first", c.asOf, r.IDs, c.want)
		}
	}
}

// TestMemorySupersededNeverTop is the property: among random fact chains
// asserted in shuffled order, a current query never ranks a superseded
// version first, however close it is; and a query as of a time inside
// version j's validity finds version j.
func TestMemorySupersededNeverTop(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	const dim = 16
	base := *tp("2020-01-01T00:00:00Z")
	for trial := range 20 {
		var corpus []CorpusLine
		type version struct {
			id   string
			from time.Time
		}
		var chains [][]version
		for c := range 1 + rng.IntN(5) {
			var chain []version
			for v := range 1 + rng.IntN(4) {
				from := base.Add(time.Duration(v*100+rng.IntN(50)) * temporal.Day)
				id := fmt.Sprintf("c%d-v%d", c, v)
				chain = append(chain, version{id, from})
				vec := make([]float32, dim)
				for i := range vec {
					vec[i] = float32(rng.NormFloat64())
				}
				corpus = append(corpus, CorpusLine{ID: id, Vector: vec, Kind: temporal.Versioned,
					Subject: fmt.Sprintf("entity %d", c), Relation: "value", Object: id, ValidFrom: new(from),
					Source: temporal.Source(rng.IntN(8)), Access: rng.IntN(5)})
			}
			chains = append(chains, chain)
		}
		rng.Shuffle(len(corpus), func(i, j int) { corpus[i], corpus[j] = corpus[j], corpus[i] })
		mem := newMem(t, temporal.MethodTidemark, corpus)
		byID := map[string][]float32{}
		for _, l := range corpus {
			byID[l.ID] = l.Vector
		}
		current := map[string]bool{}
		for _, ch := range chains {
			current[ch[len(ch)-1].id] = true
		}
		for _, ch := range chains {
			for j, v := range ch {
				r := search(t, mem, QueryLine{Vector: byID[v.id], Now: now2026, K: 50})
				for _, id := range r.IDs {
					if !current[id] {
						t.Fatalf("trial %d: current query with %s's vector ranked superseded %s (%v)", trial, v.id, id, r.IDs)
					}
				}
				at := v.from.Add(temporal.Day / 2)
				if j+1 < len(ch) && !at.Before(ch[j+1].from) {
					continue
				}
				r = search(t, mem, QueryLine{Vector: byID[v.id], Now: now2026, AsOf: &at})
				if top1(r) != v.id {
					t.Fatalf("trial %d: as of %v ranked %v, want %s first", trial, at, r.IDs, v.id)
				}
			}
		}
	}
}

func TestMemoryDegree(t *testing.T) {
	corpus := []CorpusLine{
		{ID: "a", Text: "alpha", Vector: []float32{1, 0}},
		{ID: "b", Text: "beta", Vector: []float32{1, 0}},
		{ID: "c", Text: "gamma", Vector: []float32{0, 1}, DependsOn: []string{"b"}},
		{ID: "d", Text: "delta", Vector: []float32{0, 1}, DependsOn: []string{"b"}},
	}
	q := QueryLine{Vector: []float32{1, 0}, Now: now2026}
	if r := search(t, newMem(t, temporal.MethodSmartVector, corpus), q); top1(r) != "b" {
		t.Errorf("with dependents ranked %v, want b first", r.IDs)
	}
	for i := range corpus {
		corpus[i].DependsOn = nil
	}
	if r := search(t, newMem(t, temporal.MethodSmartVector, corpus), q); top1(r) != "a" {
		t.Errorf("without dependents ranked %v, want a first (ties by file order)", r.IDs)
	}
}

func TestMemoryArticlePool(t *testing.T) {
	var corpus []CorpusLine
	for i := range 30 {
		corpus = append(corpus, CorpusLine{ID: fmt.Sprintf("m%02d", i), Vector: []float32{1, float32(i) / 10}})
	}
	q := QueryLine{Vector: []float32{1, 0}, Now: now2026, K: 30}
	if r := search(t, newMem(t, temporal.MethodArticle, corpus), q); len(r.IDs) != DefaultPool {
		t.Errorf("article returned %d ids, want its pool of %d", len(r.IDs), DefaultPool)
	}
	mem, _ := NewMemory(&MemoryOptions{Method: temporal.MethodArticle, Pool: 5})
	_ = mem.Ingest(ctx, corpus)
	if r := search(t, mem, q); len(r.IDs) != 5 || slices.Contains(r.IDs, "m05") {
		t.Errorf("pool 5 returned %v, want the 5 closest", r.IDs)
	}
	if r := search(t, newMem(t, temporal.MethodTidemark, corpus), q); len(r.IDs) != 30 {
		t.Errorf("tidemark returned %d ids, want all 30", len(r.IDs))
	}
}

func TestMemoryHashingEmbedder(t *testing.T) {
	corpus := []CorpusLine{
		{ID: "cats", Text: "Cats purr and chase mice."},
		{ID: "rates", Text: "The API rate limit is 1000 requests per minute."},
		{ID: "rain", Text: "Rain is expected on Tuesday."},
	}
	mem := newMem(t, temporal.MethodPlain, corpus)
	if r := search(t, mem, QueryLine{Text: "what is the api rate limit", Now: now2026}); top1(r) != "rates" {
		t.Errorf("ranked %v", r.IDs)
	}
	_, err := mem.Search(ctx, QueryLine{ID: "q", Vector: []float32{1, 2}, Now: now2026, Gold: []string{"x"}})
	if !errors.Is(err, ErrDimension) {
		t.Errorf("2-d query against 1024-d hashing: %v", err)
	}
}

func TestMemoryErrors(t *testing.T) {
	mem, err := NewMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := mem.Options(); o.HalfLife != 30 || o.Pool != 20 || o.Method != temporal.MethodTidemark {
		t.Errorf("defaults %+v", o)
	}
	q := QueryLine{ID: "q", Text: "x", Now: now2026, Gold: []string{"a"}}
	if _, err := mem.Search(ctx, q); !errors.Is(err, ErrNotIngested) {
		t.Errorf("search before ingest: %v", err)
	}
	if err := mem.Ingest(ctx, []CorpusLine{{ID: "a"}}); !errors.Is(err, ErrMissing) {
		t.Errorf("invalid corpus: %v", err)
	}
	if _, err := mem.Search(ctx, QueryLine{ID: "q", Text: "x", Gold: []string{"a"}}); !errors.Is(err, ErrMissing) {
		t.Errorf("query without now: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := mem.Ingest(cancelled, []CorpusLine{{ID: "a", Text: "x"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ingest: %v", err)
	}
	for _, o := range []MemoryOptions{{Method: 99}, {HalfLife: -1}, {HalfLife: math.NaN()}, {HalfLife: math.Inf(1)}, {Pool: -1}} {
		if _, err := NewMemory(&o); !errors.Is(err, ErrOptions) {
			t.Errorf("options %+v: %v", o, err)
		}
	}
}

func TestMemoryConcurrentSearch(t *testing.T) {
	mem := newMem(t, temporal.MethodTidemark, rateLimits())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				r, err := mem.Search(ctx, QueryLine{ID: "q", Vector: []float32{1, 0, 0, 0}, Now: now2026, Gold: []string{"x"}})
				if err != nil || top1(r) != "limit-v2" {
					t.Errorf("%v %v", r.IDs, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// badSearcher answers with whatever it is told to.
type badSearcher struct{ r Ranking }

func (b badSearcher) Ingest(context.Context, []CorpusLine) error { return nil }
func (b badSearcher) Search(context.Context, QueryLine) (Ranking, error) {
	return b.r, nil
}

func TestRunRejectsBadAnswers(t *testing.T) {
	corpus := []CorpusLine{{ID: "a", Text: "x"}, {ID: "b", Text: "y"}}
	queries := []QueryLine{{ID: "q", Text: "x", Now: now2026, Gold: []string{"a"}}}
	for _, c := range []struct {
		r    Ranking
		want error
	}{
		{Ranking{IDs: []string{"a", "ghost"}, Confidence: 0.5}, ErrUnknownID},
		{Ranking{IDs: []string{"a", "a"}, Confidence: 0.5}, ErrBadResult},
		{Ranking{IDs: []string{"a"}, Confidence: 1.5}, ErrBadResult},
		{Ranking{IDs: []string{"a"}, Confidence: math.NaN()}, ErrBadResult},
	} {
		if _, err := Run(ctx, badSearcher{c.r}, corpus, queries, "bad"); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v, want %v", c.r, err, c.want)
		}
	}
	// Results beyond k do not count.
	queries[0].K, queries[0].Gold = 1, []string{"b"}
	rep, err := Run(ctx, badSearcher{Ranking{IDs: []string{"a", "b"}, Confidence: 0.5}}, corpus, queries, "k")
	if err != nil || rep.RecallAtK != 0 || rep.MRR != 0 {
		t.Errorf("k = 1: %+v %v", rep.Metrics, err)
	}
	if _, err := Run(ctx, badSearcher{}, corpus, []QueryLine{{ID: "q", Text: "x", Now: now2026, Gold: []string{"nope"}}}, "x"); !errors.Is(err, ErrUnknownID) {
		t.Errorf("gold outside the corpus: %v", err)
	}
}

// Run takes an answer's top-1 kind from the corpus: two answers with a
// static top-1 and one with an event, ECE per kind over them.
func TestRunGroupsByTopKind(t *testing.T) {
	corpus := []CorpusLine{{ID: "a", Text: "x"}, {ID: "b", Text: "y", Kind: temporal.Event}}
	queries := []QueryLine{
		{ID: "q1", Text: "x", Now: now2026, Gold: []string{"a"}},
		{ID: "q2", Text: "x", Now: now2026, Gold: []string{"b"}},
	}
	rep, err := Run(ctx, badSearcher{Ranking{IDs: []string{"a", "b"}, Confidence: 0.75}}, corpus, queries, "k")
	if err != nil {
		t.Fatal(err)
	}
	// Both answers are a (static) at 0.75: one hit, one miss → ECE 0.25.
	if s := rep.ByKind["static"]; len(rep.ByKind) != 1 || s.Queries != 2 || !near(s.ECE, 0.25) || !near(s.AccuracyAt1, 0.5) {
		t.Errorf("by_kind %+v", rep.ByKind)
	}
	rep, err = Run(ctx, badSearcher{Ranking{IDs: []string{"b"}, Confidence: 0.5}}, corpus, queries, "k")
	if err != nil {
		t.Fatal(err)
	}
	if e := rep.ByKind["event"]; len(rep.ByKind) != 1 || e.Queries != 2 || !near(e.ECE, 0) {
		t.Errorf("by_kind %+v", rep.ByKind)
	}
}

// Times centuries away from 1970 keep their order (time.Time.Sub would
// saturate at ±292 years).
func TestMemoryDistantTimes(t *testing.T) {
	corpus := []CorpusLine{
		{ID: "old", Vector: []float32{1, 0.1}, Subject: "s", Relation: "r", Object: "1", ValidFrom: tp("1500-01-01T00:00:00Z")},
		{ID: "new", Vector: []float32{0.5, 1}, Subject: "s", Relation: "r", Object: "2", ValidFrom: tp("1600-01-01T00:00:00Z")},
	}
	mem := newMem(t, temporal.MethodTidemark, corpus)
	if r := search(t, mem, QueryLine{Vector: []float32{1, 0}, Now: *tp("2400-01-01T00:00:00Z")}); !slices.Equal(r.IDs, []string{"new"}) {
		t.Errorf("now ranked %v", r.IDs)
	}
	if r := search(t, mem, QueryLine{Vector: []float32{1, 0}, Now: now2026, AsOf: tp("1550-01-01T00:00:00Z")}); !slices.Equal(r.IDs, []string{"old"}) {
		t.Errorf("as of 1550 ranked %v", r.IDs)
	}
}

// Review findings, pinned: a new version whose text repeats another
// document's current row still supersedes its own predecessor; a successor
// without valid_from never holds before the version it replaces began.
func TestMemorySupersessionEdgeCases(t *testing.T) {
	at := func(s string) *time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &v
	}
	vec := func(x float32) []float32 { return []float32{x, 1} }
	corpus := []CorpusLine{
		{ID: "P-v1", Text: "rate is five percent", DocID: "P", Version: 1, Vector: vec(1)},
		{ID: "Q-v1", Text: "rate is six percent", DocID: "Q", Version: 1, Vector: vec(1)},
		{ID: "P-v2", Text: "Rate is six percent", DocID: "P", Version: 2, Vector: vec(1)},
		{ID: "D-v1", Text: "limit one", DocID: "D", Version: 1, ValidFrom: at("2024-01-01T00:00:00Z"), Vector: vec(3)},
		{ID: "D-v2", Text: "limit two", DocID: "D", Version: 2, ValidFrom: at("2025-01-01T00:00:00Z"), Vector: vec(3)},
		{ID: "D-v3", Text: "limit three", DocID: "D", Version: 3, Vector: vec(3)},
	}
	m, err := NewMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Ingest(context.Background(), corpus); err != nil {
		t.Fatal(err)
	}
	now := *at("2026-06-01T00:00:00Z")
	res, err := m.Search(context.Background(), QueryLine{ID: "q", Vector: vec(1), Now: now, K: 10, Gold: []string{"P-v2"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range res.IDs {
		if id == "P-v1" {
			t.Fatalf("superseded P-v1 returned for a current query: %v", res.IDs)
		}
	}
	asOf := at("2024-06-01T00:00:00Z")
	res, err = m.Search(context.Background(), QueryLine{ID: "q2", Vector: vec(3), Now: now, AsOf: asOf, K: 10, Gold: []string{"D-v1"}})
	if err != nil {
		t.Fatal(err)
	}
	var ds []string
	for _, id := range res.IDs {
		if strings.HasPrefix(id, "D-") {
			ds = append(ds, id)
		}
	}
	if len(ds) != 1 || ds[0] != "D-v1" {
		t.Fatalf("as of 2024-06 the D versions returned are %v, want exactly D-v1", ds)
	}
}

func TestECEAndPercentileEdgeCases(t *testing.T) {
	if got := Percentile(seq(1000), 99.9); got != 999 {
		t.Errorf("p99.9 of 1…1000 = %v, want 999 (nearest rank)", got)
	}
	if got := Percentile(seq(100), 99); got != 99 {
		t.Errorf("p99 of 1…100 = %v, want 99", got)
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}
