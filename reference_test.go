package tidemark_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/eval"
	"github.com/tidemark/tidemark/internal/evalengine"
	"github.com/tidemark/tidemark/temporal"
)

// randomCorpus is a corpus that exercises every rule of the write path:
// fact keys with changing and repeated objects arriving out of order,
// document versions, restated texts, events with windows, given and
// file-order transaction times, dependencies — and queries now, as of
// past valid times, near corpus vectors.
func randomCorpus(seed uint64, n, nq, dim int) ([]eval.CorpusLine, []eval.QueryLine) {
	rng := rand.New(rand.NewPCG(seed, 7))
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d int) *time.Time { t := base.AddDate(0, 0, d); return &t }
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	sources := []temporal.Source{temporal.SourceOfficialDB, temporal.SourcePolicy, temporal.SourceTechDoc, temporal.SourceWiki, temporal.SourceChat}
	profiles := []string{"", "news", "policy", "reference"}
	var corpus []eval.CorpusLine
	for i := range n {
		l := eval.CorpusLine{ID: fmt.Sprintf("m%d", i), Text: fmt.Sprintf("memory %d about topic %d", i, rng.IntN(40)),
			Vector: vec(), Source: sources[rng.IntN(len(sources))], Profile: profiles[rng.IntN(len(profiles))],
			Positive: rng.IntN(3), Negative: rng.IntN(2), Access: rng.IntN(20)}
		switch rng.IntN(5) {
		case 0, 1: // a fact
			l.Kind = temporal.Versioned
			l.Subject, l.Relation = fmt.Sprintf("Service %d", rng.IntN(25)), "limit"
			l.Object = fmt.Sprint(rng.IntN(3))
			l.Text = fmt.Sprintf("service limit is %s (%d)", l.Object, i)
			if rng.IntN(3) > 0 {
				l.ValidFrom = at(rng.IntN(700))
			}
		case 2: // a document version
			l.Kind = temporal.Versioned
			l.DocID, l.Version, l.Chunk = fmt.Sprintf("doc%d", rng.IntN(15)), rng.IntN(6), rng.IntN(2)
		case 3: // an event
			l.Kind = temporal.Event
			from := rng.IntN(700)
			l.ValidFrom, l.ValidTo = at(from), at(from+1+rng.IntN(200))
		}
		if rng.IntN(4) == 0 {
			l.RecordedAt = at(rng.IntN(720))
		}
		if i > 0 && rng.IntN(10) == 0 { // a restatement of an earlier text
			p := corpus[rng.IntN(len(corpus))]
			l.Text, l.Kind, l.ValidFrom, l.ValidTo, l.DocID, l.Version, l.Chunk = p.Text, p.Kind, p.ValidFrom, p.ValidTo, p.DocID, p.Version, p.Chunk
			l.Subject, l.Relation, l.Object = p.Subject, p.Relation, p.Object
		}
		if i > 0 && rng.IntN(6) == 0 {
			l.DependsOn = []string{fmt.Sprintf("m%d", rng.IntN(i))}
		}
		corpus = append(corpus, l)
	}
	var queries []eval.QueryLine
	for i := range nq {
		q := eval.QueryLine{ID: fmt.Sprintf("q%d", i), Now: *at(400 + rng.IntN(400)), K: 1 + rng.IntN(10), Gold: []string{"m0"}}
		v := slices.Clone(corpus[rng.IntN(n)].Vector)
		for j := range v {
			v[j] += 0.3 * float32(rng.NormFloat64())
		}
		q.Vector = v
		if rng.IntN(3) == 0 {
			q.AsOf = at(rng.IntN(700))
		}
		queries = append(queries, q)
	}
	return corpus, queries
}

// The ledger holds what the reference memory holds: for every memory of
// a corpus that exercises every rule of the write path, the same beliefs
// (valid windows believed during transaction windows) and the same
// supersessions — the ledger alone, without the log, the indexes or a
// query — and its link graph is the one its rows derive.
func TestLedgerMatchesReference(t *testing.T) {
	ctx := context.Background()
	corpus, _ := randomCorpus(2, 400, 0, 16)
	ref, err := eval.NewMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Ingest(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	vecs, _, dim, err := eval.EmbedCorpusWith(ctx, corpus, false)
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]tidemark.Memory, len(corpus))
	for i := range corpus {
		ms[i] = evalengine.MemoryOf(i, &corpus[i], vecs[i])
	}
	tx := float64(time.Now().Unix()) / 86400
	beliefs, superseded, err := tidemark.LedgerBeliefs(&tidemark.CollectionOptions{Dim: dim, Epoch: time.Unix(0, 0)}, ms, tx)
	if err != nil {
		t.Fatal(err)
	}
	if len(beliefs) != ref.Len() {
		t.Fatalf("the ledger stored %d memories, the reference %d", len(beliefs), ref.Len())
	}
	closed := 0
	for id, got := range beliefs {
		want, sup, ok := ref.Beliefs(id)
		if !ok {
			t.Fatalf("memory %s: in the ledger, not in the reference", id)
		}
		if sup != superseded[id] || len(got) != len(want) {
			t.Fatalf("memory %s: ledger superseded %v with %d beliefs, reference %v with %d", id, superseded[id], len(got), sup, len(want))
		}
		for k := range want {
			g, w := got[k], want[k]
			for _, p := range [][2]float64{{g.ValidFrom, w.ValidFrom}, {g.ValidTo, w.ValidTo}, {g.RecordedFrom, w.RecordedFrom}, {g.RecordedTo, w.RecordedTo}} {
				if p[0] != p[1] && abs(p[0]-p[1]) > 1e-9 {
					t.Fatalf("memory %s belief %d: ledger %+v, reference %+v", id, k, g, w)
				}
			}
		}
		if sup {
			closed++
		}
	}
	if closed == 0 {
		t.Fatal("the corpus superseded nothing: the comparison checked no rule")
	}
}

// The engine answers every query as the reference memory does: same
// write path, same masks, same scores (float32 against float64, so ties
// closer than the float32 clock could flip; none occur in these seeds).
// The ANN plan is asked for every candidate (Overfetch past the corpus
// size) so that the comparison checks its plumbing — surface, archive,
// version expansion, one belief per memory — and not HNSW's recall,
// which the index's own tests measure.
func TestEngineMatchesReference(t *testing.T) { engineMatchesReference(t, nil) }

// engineMatchesReference is TestEngineMatchesReference's body; postgres,
// when not nil, gives each run a PostgreSQL database to keep the ledger
// in, and the queries go to a second node of it as well.
func engineMatchesReference(t *testing.T, postgres func(testing.TB) string) {
	ctx := context.Background()
	corpus, queries := randomCorpus(1, 300, 100, 24)
	for _, m := range []temporal.Method{temporal.MethodTidemark, temporal.MethodPlain, temporal.MethodTemporal,
		temporal.MethodConfidence, temporal.MethodSmartVector, temporal.MethodVDD} {
		ref, err := eval.NewMemory(&eval.MemoryOptions{Method: m})
		if err != nil {
			t.Fatal(err)
		}
		if err := ref.Ingest(ctx, corpus); err != nil {
			t.Fatal(err)
		}
		// The writes happen at the wall clock (after every query: each query
		// asks about the past) and, a second time, at a clock inside the
		// queries' span, so that queries after it take the current-surface
		// path of the ANN plan.
		early := func() time.Time { return time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC) }
		for _, run := range []struct {
			plan  tidemark.Plan
			clock func() time.Time
			name  string
		}{{tidemark.PlanExact, nil, "exact"}, {tidemark.PlanANN, nil, "ann"}, {tidemark.PlanANN, early, "ann-early-clock"}} {
			plan := run.plan
			t.Run(m.String()+"/"+run.name, func(t *testing.T) {
				// The reference has no drift detectors: VDD decays at static rates.
				o := &evalengine.Options{Method: m, Plan: plan, Overfetch: 1000, NoSync: true, BatchSize: 97,
					Dir: t.TempDir(), Clock: run.clock, StaticDecay: true}
				if postgres != nil {
					o.Postgres = postgres(t)
				}
				eng := evalengine.New(o)
				defer eng.Close()
				if err := eng.Ingest(ctx, corpus); err != nil {
					t.Fatal(err)
				}
				nodes := []*evalengine.Searcher{eng}
				if postgres != nil {
					replica, err := eng.Replica(ctx)
					if err != nil {
						t.Fatal(err)
					}
					defer replica.Close()
					nodes = append(nodes, replica)
				}
				for node, eng := range nodes {
					stored, _ := eng.Collection().Len()
					if stored != ref.Len() {
						t.Fatalf("node %d: engine stored %d memories, the reference %d", node, stored, ref.Len())
					}
					for _, q := range queries {
						want, err := ref.Search(ctx, q)
						if err != nil {
							t.Fatal(err)
						}
						got, err := eng.Search(ctx, q)
						if err != nil {
							t.Fatal(err)
						}
						if !slices.Equal(got.IDs, want.IDs) {
							t.Fatalf("node %d, query %s (now %v, as of %v, k %d):\n engine    %v\n reference %v", node, q.ID, q.Now.Format(time.DateOnly), q.AsOf, q.K, got.IDs, want.IDs)
						}
						if len(want.IDs) > 0 && abs(got.Confidence-want.Confidence) > 1e-4 {
							t.Fatalf("node %d, query %s: confidence %v, reference %v", node, q.ID, got.Confidence, want.Confidence)
						}
					}
				}
			})
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// The evaluation contract gives the same report on the engine as on the
// reference for the article's demo corpus (tidemark's own method).
func TestEngineEvalDemo(t *testing.T) {
	ctx := context.Background()
	corpus, queries, err := eval.ArticleDemo(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := eval.NewMemory(nil)
	want, err := eval.Run(ctx, ref, corpus, queries, "tidemark")
	if err != nil {
		t.Fatal(err)
	}
	eng := evalengine.New(&evalengine.Options{NoSync: true, Dir: t.TempDir()})
	defer eng.Close()
	got, err := eval.Run(ctx, eng, corpus, queries, "tidemark")
	if err != nil {
		t.Fatal(err)
	}
	g, w := got.Metrics, want.Metrics
	if abs(g.ECE-w.ECE) > 1e-6 {
		t.Fatalf("ECE: engine %v, reference %v", g.ECE, w.ECE)
	}
	g.ECE = w.ECE
	if g != w {
		t.Fatalf("engine %+v\nreference %+v", got.Metrics, want.Metrics)
	}
	for i := range want.PerQuery {
		if !slices.Equal(got.PerQuery[i].Ranked, want.PerQuery[i].Ranked) {
			t.Fatalf("query %d: engine %v, reference %v", i, got.PerQuery[i].Ranked, want.PerQuery[i].Ranked)
		}
	}
	if want.Metrics.Queries == 0 || want.AccuracyAt1 == 0 {
		t.Fatalf("the demo evaluated nothing: %+v", want.Metrics)
	}
}
