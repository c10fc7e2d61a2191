package demo

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tidemark/tidemark/temporal"
)

// published is one scenario of the article's published demo output.
type published struct {
	query    string
	naive    []NaiveHit
	temporal []publishedHit
	removed  []string
	surfaced []string
}

type publishedHit struct {
	id                            string
	vector, recency, decay, final float64
}

var (
	reQuery   = regexp.MustCompile(`^QUERY: (.*)$`)
	reNaive   = regexp.MustCompile(`^\s+\d\. \[(\S+)\] age=\d+d \| (\S+) \| sim=([0-9.]+)$`)
	reHit     = regexp.MustCompile(`^\s+\[(\S+)\]$`)
	reField   = regexp.MustCompile(`^\s+(vector score|recency score|decay score|FINAL SCORE)\s*: ([0-9.]+)$`)
	reChanged = regexp.MustCompile(`^\s+(removed|surfaced)\s+: \[(.*)\]$`)
)

// parsePublished reads temporal-rag-demo.txt, the article's published output.
func parsePublished(t *testing.T, path string) []published {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []published
	cur := func() *published { return &out[len(out)-1] }
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		num := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("bad number in %q: %v", line, err)
			}
			return v
		}
		switch {
		case reQuery.MatchString(line):
			out = append(out, published{query: reQuery.FindStringSubmatch(line)[1]})
		case reNaive.MatchString(line):
			m := reNaive.FindStringSubmatch(line)
			cur().naive = append(cur().naive, NaiveHit{ID: m[1], Expired: m[2] == "EXPIRED", Sim: num(m[3])})
		case reHit.MatchString(line):
			cur().temporal = append(cur().temporal, publishedHit{id: reHit.FindStringSubmatch(line)[1]})
		case reField.MatchString(line):
			m := reField.FindStringSubmatch(line)
			h := &cur().temporal[len(cur().temporal)-1]
			switch m[1] {
			case "vector score":
				h.vector = num(m[2])
			case "recency score":
				h.recency = num(m[2])
			case "decay score":
				h.decay = num(m[2])
			default:
				h.final = num(m[2])
			}
		case reChanged.MatchString(line):
			m := reChanged.FindStringSubmatch(line)
			var ids []string
			for _, s := range strings.Split(m[2], ",") {
				ids = append(ids, strings.Trim(strings.TrimSpace(s), "'"))
			}
			if m[1] == "removed" {
				cur().removed = ids
			} else {
				cur().surfaced = ids
			}
		}
	}
	return out
}

// runArticle runs the four scenarios with the article's configuration.
func runArticle(t *testing.T) []Scenario {
	t.Helper()
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Run(c, ArticleConfig())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// The article prints three decimals; the issue asks for ±0.001.
const tol = 0.001

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

// TestReproducesPublishedDemo checks every number the article published for
// its four scenarios: the naive ranking and similarities, and for each
// temporal result its id, vector, recency, decay and final scores, and the
// removed/surfaced lists.
func TestReproducesPublishedDemo(t *testing.T) {
	want := parsePublished(t, "testdata/temporal-rag-demo.txt")
	if len(want) != 4 {
		t.Fatalf("parsed %d published scenarios, want 4", len(want))
	}
	got := runArticle(t)
	if len(got) != len(want) {
		t.Fatalf("ran %d scenarios, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Query != w.query {
			t.Errorf("scenario %d: query %q, want %q", i+1, g.Query, w.query)
		}
		if len(g.Naive) != len(w.naive) || len(w.naive) != 3 {
			t.Fatalf("scenario %d: %d naive results, want %d (published %d)", i+1, len(g.Naive), 3, len(w.naive))
		}
		for j, wn := range w.naive {
			gn := g.Naive[j]
			if gn.ID != wn.ID || gn.Expired != wn.Expired || !near(gn.Sim, wn.Sim) {
				t.Errorf("scenario %d naive #%d: got %s expired=%v sim=%.4f, want %s expired=%v sim=%.3f",
					i+1, j+1, gn.ID, gn.Expired, gn.Sim, wn.ID, wn.Expired, wn.Sim)
			}
		}
		if len(g.Temporal) != len(w.temporal) || len(w.temporal) != 3 {
			t.Fatalf("scenario %d: %d temporal results, want 3 (published %d)", i+1, len(g.Temporal), len(w.temporal))
		}
		for j, wh := range w.temporal {
			gh := g.Temporal[j]
			s := gh.Signals
			if gh.ID != wh.id || !near(s.SimNorm, wh.vector) || !near(s.Recency, wh.recency) ||
				!near(s.Decay, wh.decay) || !near(gh.Score, wh.final) {
				t.Errorf("scenario %d temporal #%d: got %s vector=%.4f recency=%.4f decay=%.4f final=%.4f, "+
					"want %s %.3f %.3f %.3f %.3f", i+1, j+1, gh.ID, s.SimNorm, s.Recency, s.Decay, gh.Score,
					wh.id, wh.vector, wh.recency, wh.decay, wh.final)
			}
		}
		if strings.Join(g.Removed, ",") != strings.Join(w.removed, ",") {
			t.Errorf("scenario %d removed %v, want %v", i+1, g.Removed, w.removed)
		}
		if strings.Join(g.Surfaced, ",") != strings.Join(w.surfaced, ",") {
			t.Errorf("scenario %d surfaced %v, want %v", i+1, g.Surfaced, w.surfaced)
		}
	}
}

// TestMaskedReasons checks the reason code of every document removed before
// ranking: the two expired versioned documents, in every scenario.
func TestMaskedReasons(t *testing.T) {
	got := runArticle(t)
	for i, s := range got {
		reasons := map[string]temporal.Reason{}
		for _, m := range s.Masked {
			reasons[m.ID] = m.Reason
		}
		want := map[string]temporal.Reason{
			"policy_v1":    temporal.ReasonExpiredVersioned,
			"tutorial_old": temporal.ReasonExpiredVersioned,
		}
		if len(reasons) != len(want) {
			t.Errorf("scenario %d masked %v, want %v", i+1, reasons, want)
		}
		for id, r := range want {
			if reasons[id] != r {
				t.Errorf("scenario %d: %s masked with %v, want %v", i+1, id, reasons[id], r)
			}
		}
		for _, h := range s.Temporal {
			if _, masked := reasons[h.ID]; masked {
				t.Errorf("scenario %d: masked %s was ranked", i+1, h.ID)
			}
		}
	}
}

// TestEmbeddedCorpusMatchesShared guards the embedded copy against drifting
// from the shared peer data it was copied from.
func TestEmbeddedCorpusMatchesShared(t *testing.T) {
	for _, f := range []struct{ ours, shared string }{
		{"demo_corpus.json", "demo_corpus.json"},
		{"testdata/temporal-rag-demo.txt", "temporal-rag-demo.txt"},
		{"testdata/temporal-rag-advanced.txt", "temporal-rag-advanced.txt"},
	} {
		shared, err := os.ReadFile("../../../shared/data/temporal-rag/" + f.shared)
		if os.IsNotExist(err) {
			t.Skip("../shared is not beside this checkout")
		}
		if err != nil {
			t.Fatal(err)
		}
		ours, err := os.ReadFile(f.ours)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, shared) {
			t.Errorf("%s differs from ../shared/data/temporal-rag/%s", f.ours, f.shared)
		}
	}
}

func TestParseRejectsBadCorpus(t *testing.T) {
	for name, in := range map[string]string{
		"malformed":  `{"corpus": [`,
		"empty":      `{"corpus": [], "queries": ["q"]}`,
		"no queries": `{"corpus": [{"id":"a","content":"x","kind":"STATIC"}], "queries": []}`,
		"bad kind":   `{"corpus": [{"id":"a","content":"x","kind":"FOREVER"}], "queries": ["q"]}`,
	} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("%s: Parse accepted %s", name, in)
		}
	}
}

func TestWriteShowsEverySignalAndReason(t *testing.T) {
	got := runArticle(t)
	var b bytes.Buffer
	if err := Write(&b, "article", got); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"1.079", "0.573", "0.509", "0.662", "0.600", "0.476", "0.602", "0.543",
		"0.519", "0.641", "0.465", "0.082", "EXPIRED_VERSIONED_DOC", "42h remaining", "temporal boost halved",
		"NAIVE COSINE", "TIDEMARK TEMPORAL SCORING"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
}
