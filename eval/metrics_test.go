package eval

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// worked is a hand-computed set of four answers:
//
//	q1 gold {a}     ranked a b c (k 3)  conf 0.95  hit   RR 1    recall 1
//	q2 gold {a d}   ranked b d a (k 2)  conf 1.00  stale RR 1/2  recall 1/2 (a is beyond k)
//	q3 gold {x}     ranked w x  (k 10)  conf 0.55  miss  RR 1/2  recall 1
//	q4 gold {y}     no result           conf 0     miss  RR 0    recall 0
func worked() []Outcome {
	return []Outcome{
		{ID: "q1", Type: "current", K: 3, Gold: []string{"a"}, Ranked: []string{"a", "b", "c"}, Confidence: 0.95, Latency: 4 * time.Millisecond},
		{ID: "q2", Type: "current", K: 2, Gold: []string{"a", "d"}, Stale: []string{"b"}, Ranked: []string{"b", "d", "a"}, Confidence: 1, Latency: 1 * time.Millisecond},
		{ID: "q3", Type: "as_of", K: 10, Gold: []string{"x"}, Ranked: []string{"w", "x"}, Confidence: 0.55, Latency: 3 * time.Millisecond},
		{ID: "q4", K: 5, Gold: []string{"y"}, Stale: []string{"z"}, Confidence: 0.7, Latency: 2 * time.Millisecond},
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestMetricsWorkedExample(t *testing.T) {
	os := worked()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"accuracy@1", AccuracyAt1(os), 1.0 / 4},
		{"mrr", MRR(os), (1 + 0.5 + 0.5 + 0) / 4},
		{"recall@k", RecallAtK(os), (1 + 0.5 + 1 + 0) / 4},
		{"stale_rate", StaleRate(os), 1.0 / 4},
		// bin 9 holds 0.95 (hit) and 1.0 (miss): acc 0.5, conf 0.975;
		// bin 5 holds 0.55 (miss); bin 0 holds q4's 0 (miss):
		// 2/4·|0.5−0.975| + 1/4·|0−0.55| + 1/4·|0−0| = 0.2375 + 0.1375 = 0.375.
		// (Were 1.0 a bin of its own the answer would be 0.4.)
		{"ece", ECE(os), 0.375},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestECEWorked is a second worked example with two populated bins of two.
func TestECEWorked(t *testing.T) {
	confs := []float64{0.22, 0.25, 0.71, 0.78, 0.92}
	hits := []bool{false, true, true, false, true}
	var os []Outcome
	for i, c := range confs {
		o := Outcome{Gold: []string{"g"}, Ranked: []string{"n"}, Confidence: c}
		if hits[i] {
			o.Ranked[0] = "g"
		}
		os = append(os, o)
	}
	// bin 2: acc 1/2, conf 0.235 → 2/5·0.265 = 0.106
	// bin 7: acc 1/2, conf 0.745 → 2/5·0.245 = 0.098
	// bin 9: acc 1,   conf 0.92  → 1/5·0.08  = 0.016
	if got := ECE(os); !near(got, 0.22) {
		t.Errorf("ECE = %v, want 0.22", got)
	}
	// Perfect calibration in the last bin, confidence exactly 1.
	if got := ECE([]Outcome{{Gold: []string{"g"}, Ranked: []string{"g"}, Confidence: 1}}); got != 0 {
		t.Errorf("ECE of a sure hit = %v, want 0", got)
	}
	if got := ECE(nil); got != 0 {
		t.Errorf("ECE(nil) = %v", got)
	}
}

func TestPercentileNearestRank(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for _, c := range []struct{ p, want float64 }{{50, 3}, {99, 5}, {20, 1}, {21, 2}, {100, 5}, {1, 1}} {
		if got := Percentile(xs, c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if !slices.Equal(xs, []float64{5, 1, 4, 2, 3}) {
		t.Error("Percentile sorted its input")
	}
	var hundred []float64
	for i := 100; i >= 1; i-- {
		hundred = append(hundred, float64(i))
	}
	if Percentile(hundred, 99) != 99 || Percentile(hundred, 50) != 50 {
		t.Errorf("1…100: p99 %v p50 %v", Percentile(hundred, 99), Percentile(hundred, 50))
	}
	if Percentile(nil, 50) != 0 {
		t.Error("empty")
	}
}

func TestNewReport(t *testing.T) {
	r := NewReport("tidemark", worked())
	if r.Method != "tidemark" || r.Queries != 4 {
		t.Fatalf("report %+v", r)
	}
	if len(r.ByType) != 2 {
		t.Fatalf("by_type %v: the untyped query must be left out", r.ByType)
	}
	cur := r.ByType["current"]
	if cur.Queries != 2 || !near(cur.AccuracyAt1, 0.5) || !near(cur.StaleRate, 0.5) || !near(cur.MRR, 0.75) {
		t.Errorf("current %+v", cur)
	}
	if asof := r.ByType["as_of"]; asof.Queries != 1 || asof.AccuracyAt1 != 0 || !near(asof.RecallAtK, 1) {
		t.Errorf("as_of %+v", asof)
	}
	// Latencies 4, 1, 3, 2 ms: nearest-rank p50 is the 2nd smallest, p99 the largest.
	if r.Latency.P50 != 2 || r.Latency.P99 != 4 {
		t.Errorf("latency %+v", r.Latency)
	}
	if len(r.PerQuery) != 4 || !slices.Equal(r.PerQuery[1].Ranked, []string{"b", "d"}) || !r.PerQuery[1].Stale ||
		r.PerQuery[3].Confidence != 0 || r.PerQuery[3].Ranked == nil {
		t.Errorf("per query %+v", r.PerQuery)
	}
}

// TestReportJSONShape checks the keys and their order against DESIGN.
func TestReportJSONShape(t *testing.T) {
	r := NewReport("plain", worked())
	r.PerQuery = nil
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&b)
	var keys []string
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
			}
		case string:
			if depth == 1 {
				keys = append(keys, v)
				// skip the value
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	want := []string{"method", "queries", "accuracy_at_1", "mrr", "recall_at_k", "stale_rate", "ece", "by_type", "by_kind", "latency_ms"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %v\nwant %v", keys, want)
	}
	var v struct {
		ByType  map[string]map[string]float64 `json:"by_type"`
		Latency map[string]float64            `json:"latency_ms"`
	}
	b.Reset()
	_ = r.WriteJSON(&b)
	if err := json.Unmarshal(b.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if _, ok := v.ByType["current"]["accuracy_at_1"]; !ok {
		t.Errorf("by_type %v", v.ByType)
	}
	if _, ok := v.Latency["p99"]; !ok {
		t.Errorf("latency %v", v.Latency)
	}
}

func TestWriteTable(t *testing.T) {
	r := NewReport("article", worked())
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{"method article, 4 queries", "accuracy@1", "0.250", "as_of", "current", "0.375",
		"nearest rank", "q2", "b, d"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
}

// byKindWorked are answers whose top-1 memories are of each kind, worked
// by hand:
//
//	static     0.75 hit, 0.75 hit, 0.72 miss  → bin 7: acc 2/3, conf 0.74
//	           0.30 miss                      → bin 3: acc 0, conf 0.30
//	           ECE = 3/4·|2/3 − 0.74| + 1/4·0.30 = 0.055 + 0.075 = 0.13
//	           accuracy@1 = 2/4
//	versioned  0.90 hit, 0.95 miss            → bin 9: acc 1/2, conf 0.925
//	           ECE = 0.425, accuracy@1 = 1/2
//	event      0.05 miss                      → ECE = 0.05, accuracy@1 = 0
//
// and one query without a result, left out of by_kind whatever its Kind.
func byKindWorked() []Outcome {
	o := func(id, kind string, conf float64, hit bool) Outcome {
		top := "wrong"
		if hit {
			top = "g"
		}
		return Outcome{ID: id, Type: "current", K: 1, Gold: []string{"g"}, Ranked: []string{top}, Confidence: conf, Kind: kind}
	}
	return []Outcome{
		o("s1", "static", 0.75, true), o("s2", "static", 0.75, true), o("s3", "static", 0.72, false), o("s4", "static", 0.30, false),
		o("v1", "versioned", 0.90, true), o("v2", "versioned", 0.95, false),
		o("e1", "event", 0.05, false),
		{ID: "n1", Type: "current", K: 1, Gold: []string{"g"}, Kind: "static"},
	}
}

func TestReportByKindWorked(t *testing.T) {
	r := NewReport("tidemark", byKindWorked())
	if len(r.ByKind) != 3 {
		t.Fatalf("by_kind %v", r.ByKind)
	}
	for _, c := range []struct {
		kind     string
		n        int
		acc, ece float64
	}{
		{"static", 4, 0.5, 0.13},
		{"versioned", 2, 0.5, 0.425},
		{"event", 1, 0, 0.05},
	} {
		m := r.ByKind[c.kind]
		if m.Queries != c.n || !near(m.AccuracyAt1, c.acc) || !near(m.ECE, c.ece) {
			t.Errorf("by_kind %s = %+v, want %d queries, accuracy %v, ECE %v", c.kind, m, c.n, c.acc, c.ece)
		}
	}
	if r.ByType["current"].Queries != 8 || r.PerQuery[0].Kind != "static" || r.PerQuery[7].Kind != "" {
		t.Errorf("by_type %+v, per query kinds %q %q", r.ByType, r.PerQuery[0].Kind, r.PerQuery[7].Kind)
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "kind:versioned") {
		t.Errorf("the table has no per-kind column:\n%s", b.String())
	}
}
