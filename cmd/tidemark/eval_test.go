package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidemark/tidemark/eval"
	"github.com/tidemark/tidemark/temporal"
)

// articleTop3 is the article's published temporal top 3 for its four demo
// queries (internal/demo/testdata/temporal-rag-demo.txt).
var articleTop3 = [][]string{
	{"announcement_today", "policy_v2", "news_recent"},
	{"research_2024", "research_2022", "news_old"},
	{"news_old", "news_recent", "tutorial_new"},
	{"policy_v2", "announcement_today", "news_recent"},
}

// writeDemo converts the article's demo corpus into the evaluation
// contract and writes the two files to a temporary directory.
func writeDemo(t *testing.T) (corpus, queries string) {
	t.Helper()
	c, q, err := eval.ArticleDemo(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	corpus, queries = filepath.Join(dir, "corpus.jsonl"), filepath.Join(dir, "queries.jsonl")
	var cb, qb bytes.Buffer
	if err := eval.WriteCorpus(&cb, c); err != nil {
		t.Fatal(err)
	}
	if err := eval.WriteQueries(&qb, q); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(corpus, cb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(queries, qb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return corpus, queries
}

type evalOutput struct {
	Method    string  `json:"method"`
	Queries   int     `json:"queries"`
	Accuracy  float64 `json:"accuracy_at_1"`
	StaleRate float64 `json:"stale_rate"`
	ECE       float64 `json:"ece"`
	ByType    map[string]struct {
		Queries int `json:"queries"`
	} `json:"by_type"`
	ByKind map[string]struct {
		Queries int      `json:"queries"`
		ECE     *float64 `json:"ece"`
	} `json:"by_kind"`
	Latency *struct {
		P50 float64 `json:"p50"`
		P99 float64 `json:"p99"`
	} `json:"latency_ms"`
	PerQuery []struct {
		ID     string   `json:"id"`
		Ranked []string `json:"ranked"`
	} `json:"per_query"`
}

func runEvalJSON(t *testing.T, args ...string) (evalOutput, map[string]json.RawMessage) {
	t.Helper()
	code, out, errOut := runCLI(append([]string{"eval"}, args...)...)
	if code != 0 {
		t.Fatalf("eval %v exited %d: %s", args, code, errOut)
	}
	var v evalOutput
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	_ = json.Unmarshal([]byte(out), &keys)
	return v, keys
}

// TestEvalDemoTidemark is the acceptance test: the article's demo through
// the contract, tidemark's method, no stale answer.
func TestEvalDemoTidemark(t *testing.T) {
	corpus, queries := writeDemo(t)
	v, keys := runEvalJSON(t, "--corpus", corpus, "--queries", queries, "--method", "tidemark", "--json")
	if v.Method != "tidemark" || v.Queries != 4 || v.ByType["current"].Queries != 4 || v.Latency == nil {
		t.Fatalf("output %+v", v)
	}
	if v.StaleRate != 0 {
		t.Errorf("stale_rate = %v, want 0", v.StaleRate)
	}
	n := 0
	for k, m := range v.ByKind {
		if _, err := temporal.ParseKind(k); err != nil || m.ECE == nil {
			t.Errorf("by_kind %q = %+v", k, m)
		}
		n += m.Queries
	}
	if n != v.Queries {
		t.Errorf("by_kind holds %d of the %d answered queries: %+v", n, v.Queries, v.ByKind)
	}
	var got []string
	for k := range keys {
		got = append(got, k)
	}
	slices.Sort(got)
	want := []string{"accuracy_at_1", "by_kind", "by_type", "ece", "latency_ms", "method", "mrr", "queries", "recall_at_k", "stale_rate"}
	if !slices.Equal(got, want) {
		t.Errorf("keys %v, want DESIGN's and by_kind %v", got, want)
	}
}

// TestEvalDemoArticle: the article's method with the article's half-life
// reproduces its published temporal top 3 for every scenario.
func TestEvalDemoArticle(t *testing.T) {
	corpus, queries := writeDemo(t)
	v, _ := runEvalJSON(t, "--corpus", corpus, "--queries", queries, "--method", "article", "--half-life", "60",
		"--json", "--per-query")
	if len(v.PerQuery) != 4 {
		t.Fatalf("per_query %+v", v.PerQuery)
	}
	for i, q := range v.PerQuery {
		if !slices.Equal(q.Ranked, articleTop3[i]) {
			t.Errorf("scenario %d (%s): ranked %v, the article published %v", i+1, q.ID, q.Ranked, articleTop3[i])
		}
	}
	if v.Accuracy != 1 || v.StaleRate != 0 {
		t.Errorf("accuracy %v stale %v", v.Accuracy, v.StaleRate)
	}
}

// TestEvalCommittedTestdata runs the files a fresh clone has.
func TestEvalCommittedTestdata(t *testing.T) {
	v, _ := runEvalJSON(t, "--corpus", "../../eval/testdata/demo_corpus.jsonl",
		"--queries", "../../eval/testdata/demo_queries.jsonl", "--method", "tidemark", "--json")
	if v.Queries != 4 || v.StaleRate != 0 {
		t.Errorf("output %+v", v)
	}
}

func TestEvalTable(t *testing.T) {
	corpus, queries := writeDemo(t)
	code, out, errOut := runCLI("eval", "--corpus", corpus, "--queries", queries, "--method", "plain", "--per-query")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, s := range []string{"method plain, 4 queries", "accuracy@1", "stale_rate", "current", "latency p50",
		"q1", "policy_v1"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	corpus, queries := writeDemo(t)
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"id":"a","text":"x"}`+"\n"+`{"id":"b","txt":"y"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"eval"}, 2, "--corpus and --queries are required"},
		{[]string{"eval", "--corpus", corpus}, 2, "required"},
		{[]string{"eval", "--corpus", corpus, "--queries", queries, "--method", "bm25"}, 1, "unknown method"},
		{[]string{"eval", "--corpus", corpus, "--queries", queries, "--half-life", "-1"}, 1, "HalfLife"},
		{[]string{"eval", "--corpus", bad, "--queries", queries}, 1, `corpus line 2: txt: eval: unknown field`},
		{[]string{"eval", "--corpus", corpus, "--queries", bad}, 1, "queries line 1"},
		{[]string{"eval", "--corpus", filepath.Join(t.TempDir(), "missing"), "--queries", queries}, 1, "no such file"},
		{[]string{"eval", "--corpus", corpus, "--queries", queries, "--weights", "1,2"}, 1, "want four comma-separated numbers"},
		{[]string{"eval", "--corpus", corpus, "--queries", queries, "--weights", "1,NaN,0,0"}, 1, "not a finite number"},
		{[]string{"eval", "--corpus", corpus, "--queries", queries, "--weights", "1,-1,0,0"}, 1, "not a finite number"},
		{[]string{"eval", "--corpus", corpus, "--queries", queries, "--weights", "1,0,0,0", "--reference"}, 1, "applies to the engine"},
		{[]string{"eval", "--corpus", corpus, "--queries", queries, "--first-stage", "-1"}, 1, "--first-stage"},
		{[]string{"eval", "--corpus", corpus, "--queries", queries, "--weights", "0,0,0,0"}, 1, "every weight is zero"},
		{[]string{"eval", "--corpus", corpus, "--queries", queries, "--method", "vdd", "--weights", "1,0,0,0"}, 1, "has no weights"},
		{[]string{"eval", "-h"}, 0, "-corpus"},
	} {
		code, _, errOut := runCLI(c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d stderr %q, want %d containing %q", c.args, code, errOut, c.code, c.msg)
		}
	}
}

// --weights replaces the method's weights: the SmartVector preset with all
// weight on similarity ranks exactly as plain cosine does.
func TestEvalWeights(t *testing.T) {
	corpus, queries := writeDemo(t)
	code, plain, errOut := runCLI("eval", "--corpus", corpus, "--queries", queries, "--method", "plain", "--per-query", "--json")
	if code != 0 {
		t.Fatalf("plain: %d %s", code, errOut)
	}
	code, sim, errOut := runCLI("eval", "--corpus", corpus, "--queries", queries, "--method", "smartvector", "--weights", "1,0,0,0", "--first-stage", "8", "--per-query", "--json")
	if code != 0 {
		t.Fatalf("weights: %d %s", code, errOut)
	}
	ranked := func(out string) string {
		var r struct {
			PerQuery []struct {
				Ranked []string `json:"ranked"`
			} `json:"per_query"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.PerQuery) == 0 {
			t.Fatalf("%v: %s", err, out)
		}
		return fmt.Sprint(r.PerQuery)
	}
	if ranked(plain) != ranked(sim) {
		t.Fatalf("plain %s\nsmartvector w=(1,0,0,0) %s", ranked(plain), ranked(sim))
	}
}
