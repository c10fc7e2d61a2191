package eval

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

var update = flag.Bool("update", false, "rewrite testdata/demo_corpus.jsonl and testdata/demo_queries.jsonl")

// demoNow is the reference time of the committed demo files.
var demoNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// articleTop3 is the article's published temporal top 3 for its four
// queries (internal/demo/testdata/temporal-rag-demo.txt).
var articleTop3 = [][]string{
	{"announcement_today", "policy_v2", "news_recent"},
	{"research_2024", "research_2022", "news_old"},
	{"news_old", "news_recent", "tutorial_new"},
	{"policy_v2", "announcement_today", "news_recent"},
}

// demoFiles renders ArticleDemo as the two JSONL files.
func demoFiles(t *testing.T) (corpus, queries []byte) {
	t.Helper()
	c, q, err := ArticleDemo(demoNow)
	if err != nil {
		t.Fatal(err)
	}
	var cb, qb bytes.Buffer
	if err := WriteCorpus(&cb, c); err != nil {
		t.Fatal(err)
	}
	if err := WriteQueries(&qb, q); err != nil {
		t.Fatal(err)
	}
	return cb.Bytes(), qb.Bytes()
}

// TestDemoTestdata checks that the committed demo files are what
// ArticleDemo generates; go test ./eval -run TestDemoTestdata -update
// rewrites them.
func TestDemoTestdata(t *testing.T) {
	corpus, queries := demoFiles(t)
	for _, f := range []struct {
		name string
		data []byte
	}{{"demo_corpus.jsonl", corpus}, {"demo_queries.jsonl", queries}} {
		path := filepath.Join("testdata", f.name)
		if *update {
			if err := os.WriteFile(path, f.data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./eval -run TestDemoTestdata -update)", err)
		}
		if !bytes.Equal(got, f.data) {
			t.Errorf("%s differs from what ArticleDemo generates (run go test ./eval -run TestDemoTestdata -update)", path)
		}
	}
}

// readDemo reads the demo files back through the strict readers.
func readDemo(t *testing.T) ([]CorpusLine, []QueryLine) {
	t.Helper()
	cb, qb := demoFiles(t)
	corpus, err := ReadCorpus(bytes.NewReader(cb))
	if err != nil {
		t.Fatal(err)
	}
	queries, err := ReadQueries(bytes.NewReader(qb))
	if err != nil {
		t.Fatal(err)
	}
	return corpus, queries
}

func TestArticleDemoConversion(t *testing.T) {
	corpus, queries := readDemo(t)
	if len(corpus) != 10 || len(queries) != 4 {
		t.Fatalf("%d lines, %d queries", len(corpus), len(queries))
	}
	byID := map[string]CorpusLine{}
	for _, l := range corpus {
		byID[l.ID] = l
	}
	p1, p2 := byID["policy_v1"], byID["policy_v2"]
	if p1.DocID != "policy_v1" || p1.Version != 1 || p2.DocID != "policy_v1" || p2.Version != 2 {
		t.Errorf("policy chain %q/%d %q/%d", p1.DocID, p1.Version, p2.DocID, p2.Version)
	}
	if !p2.RecordedAt.Equal(demoNow.Add(-175*temporal.Day)) || !p1.ValidTo.Equal(demoNow.Add(-180*temporal.Day)) {
		t.Errorf("policy times %v %v", p2.RecordedAt, p1.ValidTo)
	}
	if a := byID["announcement_today"]; a.Kind != temporal.Event || !a.ValidTo.Equal(demoNow.Add(42*time.Hour)) {
		t.Errorf("announcement %+v", a)
	}
	for i, q := range queries {
		if !slices.Equal(q.Gold, articleTop3[i][:1]) || !slices.Equal(q.Stale, []string{"policy_v1", "tutorial_old"}) || q.K != 3 {
			t.Errorf("query %d: gold %v stale %v k %d", i+1, q.Gold, q.Stale, q.K)
		}
	}
}

// TestArticleDemoReproduced runs the article's method with the article's
// half-life over the contract files and gets the article's published
// temporal top 3 for every query.
func TestArticleDemoReproduced(t *testing.T) {
	corpus, queries := readDemo(t)
	mem, err := NewMemory(&MemoryOptions{Method: temporal.MethodArticle, HalfLife: 60})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, mem, corpus, queries, "article")
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range rep.PerQuery {
		if !slices.Equal(q.Ranked, articleTop3[i]) {
			t.Errorf("query %s ranked %v, the article published %v", q.ID, q.Ranked, articleTop3[i])
		}
	}
	if rep.AccuracyAt1 != 1 || rep.StaleRate != 0 {
		t.Errorf("article: %+v", rep.Metrics)
	}
}

// TestDemoTidemarkNeverStale: tidemark's masks keep the expired documents
// out of every answer, whatever the half-life.
func TestDemoTidemarkNeverStale(t *testing.T) {
	corpus, queries := readDemo(t)
	for _, hl := range []float64{0, 60} {
		mem, err := NewMemory(&MemoryOptions{HalfLife: hl})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(ctx, mem, corpus, queries, "tidemark")
		if err != nil {
			t.Fatal(err)
		}
		if rep.StaleRate != 0 {
			t.Errorf("half-life %v: stale rate %v", hl, rep.StaleRate)
		}
		for _, q := range rep.PerQuery {
			if slices.Contains(q.Ranked, "policy_v1") || slices.Contains(q.Ranked, "tutorial_old") {
				t.Errorf("half-life %v: %s ranked an expired document: %v", hl, q.ID, q.Ranked)
			}
		}
	}
	// Plain cosine is fooled by them: this test can fail.
	mem, _ := NewMemory(&MemoryOptions{Method: temporal.MethodPlain})
	rep, err := Run(ctx, mem, corpus, queries, "plain")
	if err != nil || rep.StaleRate == 0 {
		t.Errorf("plain: stale rate %v, %v", rep.StaleRate, err)
	}
}
