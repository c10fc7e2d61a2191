package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidemark/tidemark/eval"
	"github.com/tidemark/tidemark/internal/evalengine"
	"github.com/tidemark/tidemark/temporal"
)

// TestGeneratePolicy checks the generator against SmartVector §9.1's
// description: with SEED = 7 it gives the paper's counts (258 vectors, 60
// topics, 18 contradictions, 11 dependency edges, 138 queries).
func TestGeneratePolicy(t *testing.T) {
	ds := GeneratePolicy(PolicyConfig{})
	if len(ds.Corpus) != 258 || len(ds.Latest) != 60 || ds.Rumours != 18 || ds.Edges != 11 || len(ds.Queries) != 138 {
		t.Fatalf("corpus %d topics %d rumours %d edges %d queries %d", len(ds.Corpus), len(ds.Latest), ds.Rumours, ds.Edges, len(ds.Queries))
	}
	if err := eval.Check(ds.Corpus, ds.Queries); err != nil {
		t.Fatal(err)
	}
	again := GeneratePolicy(PolicyConfig{})
	if !slices.EqualFunc(ds.Corpus, again.Corpus, func(a, b eval.CorpusLine) bool { return a.ID == b.ID && a.Text == b.Text }) {
		t.Fatal("the generator is not deterministic")
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	byID := map[string]eval.CorpusLine{}
	var last time.Time
	dev, types := 0, map[string]int{}
	for _, l := range ds.Corpus {
		byID[l.ID] = l
		if l.RecordedAt.Before(last) {
			t.Fatalf("%s is out of transaction-time order", l.ID)
		}
		last = *l.RecordedAt
		if l.Source == temporal.SourceChat {
			age := now.Sub(*l.RecordedAt).Hours() / 24
			if age < 1 || age > 10 || !strings.HasPrefix(l.Text, "I heard") {
				t.Fatalf("rumour %s: age %.1f days, text %q", l.ID, age, l.Text)
			}
		}
	}
	for i, q := range ds.Queries {
		types[q.Type]++
		if ds.Dev[i] {
			dev++
		}
		gold := byID[q.Gold[0]]
		switch q.Type {
		case PolicyCurrent, PolicyConflict:
			// Gold is the topic's latest version; every earlier one is stale.
			if gold.Version != 4 || len(q.Stale) != 3 {
				t.Fatalf("%s: gold %s stale %v", q.ID, gold.ID, q.Stale)
			}
		case PolicyTimePoint:
			// as_of falls inside the gold version's window.
			next := byID[fmt.Sprintf("%s-v%d", gold.DocID, gold.Version+1)]
			if q.AsOf.Before(*gold.ValidFrom) || !q.AsOf.Before(*next.ValidFrom) {
				t.Fatalf("%s: as of %v outside [%v, %v)", q.ID, q.AsOf, gold.ValidFrom, next.ValidFrom)
			}
		}
	}
	if types[PolicyCurrent] != 60 || types[PolicyTimePoint] != 60 || types[PolicyConflict] != 18 || dev != 69 {
		t.Fatalf("types %v dev %d", types, dev)
	}
	// Versions of a topic trend monotonically and differ only in the value.
	for topic := range 60 {
		var vals []string
		var texts []string
		for v := 1; v <= 4; v++ {
			l := byID[policyID(topic, v)]
			f := strings.Fields(l.Text)
			for _, w := range f {
				if w[0] >= '0' && w[0] <= '9' {
					vals = append(vals, w)
				}
			}
			texts = append(texts, l.Text)
		}
		if len(vals) != 4 || !strictlyMonotonic(vals) {
			t.Fatalf("topic %d values %v", topic, vals)
		}
		for _, tx := range texts[1:] {
			if strings.Join(strings.FieldsFunc(tx, isDigit), "") != strings.Join(strings.FieldsFunc(texts[0], isDigit), "") {
				t.Fatalf("topic %d: %q and %q differ beyond the value", topic, texts[0], tx)
			}
		}
	}
	if none := GeneratePolicy(PolicyConfig{RumourRate: -1}); none.Rumours != 0 || len(none.Corpus) != 240 {
		t.Fatalf("rate 0: %d rumours", none.Rumours)
	}
}

func policyID(topic, v int) string { return fmt.Sprintf("policy-%02d-v%d", topic, v) }

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func strictlyMonotonic(vals []string) bool {
	n := make([]int, len(vals))
	for i, v := range vals {
		for _, r := range strings.TrimRight(v, ".") {
			n[i] = n[i]*10 + int(r-'0')
		}
	}
	up, down := true, true
	for i := 1; i < len(n); i++ {
		up = up && n[i] > n[i-1]
		down = down && n[i] < n[i-1]
	}
	return up || down
}

// TestPolicyMasksNeverServeSuperseded runs plain RAG and tidemark on the
// benchmark: plain cosine serves superseded versions often, tidemark never
// (its masks), with or without a first stage.
func TestPolicyMasksNeverServeSuperseded(t *testing.T) {
	ctx := context.Background()
	ds := GeneratePolicy(PolicyConfig{})
	plain, err := evaluate(ctx, ds.Dataset, ds.Queries, evalengine.Options{Method: temporal.MethodPlain, FirstStage: 8})
	if err != nil {
		t.Fatal(err)
	}
	if plain.ByType[PolicyCurrent].StaleRate < 0.3 {
		t.Fatalf("plain cosine stale rate %.3f: the benchmark no longer tempts it", plain.ByType[PolicyCurrent].StaleRate)
	}
	for _, fs := range []int{0, 8} {
		r, err := evaluate(ctx, ds.Dataset, ds.Queries, evalengine.Options{Method: temporal.MethodTidemark, FirstStage: fs})
		if err != nil {
			t.Fatal(err)
		}
		if r.StaleRate != 0 {
			t.Fatalf("first stage %d: tidemark served a superseded version (stale %.3f)", fs, r.StaleRate)
		}
		if r.AccuracyAt1 <= plain.AccuracyAt1 {
			t.Fatalf("first stage %d: tidemark %.3f ≤ plain %.3f", fs, r.AccuracyAt1, plain.AccuracyAt1)
		}
	}
}

// TestTuneWeights finds weights on a small benchmark that do at least as
// well on its dev queries as SmartVector's defaults.
func TestTuneWeights(t *testing.T) {
	ctx := context.Background()
	ds := GeneratePolicy(PolicyConfig{Topics: 10})
	w, err := tuneWeights(ctx, ds.Dataset, ds.Queries)
	if err != nil {
		t.Fatal(err)
	}
	if s := w.Sum(); s < 0.999 || s > 1.001 {
		t.Fatalf("weights %+v sum to %v", w, s)
	}
	tuned, err := evaluate(ctx, ds.Dataset, ds.Queries, evalengine.Options{Method: temporal.MethodSmartVector, Weights: &w, FirstStage: policyFirstStage})
	if err != nil {
		t.Fatal(err)
	}
	def, err := evaluate(ctx, ds.Dataset, ds.Queries, evalengine.Options{Method: temporal.MethodSmartVector, FirstStage: policyFirstStage})
	if err != nil {
		t.Fatal(err)
	}
	if tuned.AccuracyAt1 < def.AccuracyAt1 {
		t.Fatalf("tuned %+v: %.3f < default %.3f on the queries it was tuned on", w, tuned.AccuracyAt1, def.AccuracyAt1)
	}
}

// TestQualityFilesReproduce runs the sweep and the drift scenarios,
// writing the datasets, and checks that evaluating a written dataset from
// its files gives the reported number, as `tidemark eval` would.
func TestQualityFilesReproduce(t *testing.T) {
	ctx := context.Background()
	out := t.TempDir()
	rep, err := RunQuality(ctx, QualityConfig{Out: out, Only: []string{QualitySweep, QualityDrift}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sweep) != 5 || rep.Drift == nil || len(rep.Drift.Runs) != 2 || rep.Policy != nil {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Sweep {
		if r.Stale["tidemark"] != 0 {
			t.Fatalf("rate %.2f: tidemark stale %.3f", r.Rate, r.Stale["tidemark"])
		}
	}
	row := rep.Sweep[2] // 30%
	corpus := readBack(t, filepath.Join(out, "policy-rumours-30.corpus.jsonl"), eval.ReadCorpus)
	queries := readBack(t, filepath.Join(out, "policy-rumours-30.queries.jsonl"), eval.ReadQueries)
	got, err := evaluate(ctx, Dataset{Corpus: corpus}, queries, evalengine.Options{Method: temporal.MethodTidemark, FirstStage: policyFirstStage})
	if err != nil {
		t.Fatal(err)
	}
	if got.AccuracyAt1 != row.Accuracy["tidemark"] {
		t.Fatalf("from the files %.4f, reported %.4f", got.AccuracyAt1, row.Accuracy["tidemark"])
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Contradiction-rate sweep", "| 30% |", "Drift scenarios", "Spearman ρ vs Table 8"} {
		if !strings.Contains(md.String(), want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back QualityReport
	if err := json.Unmarshal(b, &back); err != nil || len(back.Sweep) != 5 {
		t.Fatalf("report.json: %v", err)
	}
	if _, err := RunQuality(ctx, QualityConfig{Only: []string{"nope"}}); err == nil {
		t.Fatal("an unknown benchmark was accepted")
	}
}

func readBack[T any](t *testing.T, path string, read func(io.Reader) ([]T, error)) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestEvolvingQuality: with the extractor's keys tidemark answers every
// marker-free scenario with the current value and never with the stale
// one, keeps static recall, and plain RAG does not.
func TestEvolvingQuality(t *testing.T) {
	rep, err := RunQuality(context.Background(), QualityConfig{Only: []string{QualityEvolving}})
	if err != nil {
		t.Fatal(err)
	}
	e := rep.Evolving
	if e == nil || len(e.Rows) != 5 {
		t.Fatalf("report %+v", rep)
	}
	worstRAG := 0.0
	for _, r := range e.Rows {
		if r.Benchmark == "project_facts" {
			continue
		}
		if r.Accuracy["tidemark_keys"] != 1 || r.StaleError["tidemark_keys"] != 0 {
			t.Errorf("%s: tidemark with keys %.2f / %.2f", r.Benchmark, r.Accuracy["tidemark_keys"], r.StaleError["tidemark_keys"])
		}
		worstRAG = max(worstRAG, r.StaleError["rag"])
	}
	if worstRAG < 0.3 {
		t.Errorf("plain RAG's worst stale-fact error %.2f: the benchmarks no longer tempt it", worstRAG)
	}
	if e.StaticDelta < -0.01 {
		t.Errorf("static recall Δ %.3f", e.StaticDelta)
	}
}
