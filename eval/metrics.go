package eval

import (
	"math"
	"slices"
	"time"
)

// Outcome is one query's answer as the metrics see it.
type Outcome struct {
	// ID and Type are the query's.
	ID, Type string
	// K is the number of results that count (the query's TopK).
	K int
	// Gold and Stale are the query's lists.
	Gold, Stale []string
	// Ranked are the result ids, best first; only the first K count.
	Ranked []string
	// Confidence is the top-1 result's confidence in [0, 1]; it is read as
	// 0 when Ranked is empty.
	Confidence float64
	// Kind is the memory kind of the top-1 result ("static", "versioned"
	// or "event": its corpus line's kind), which groups the query in the
	// report's by_kind; empty when Ranked is empty.
	Kind string
	// Latency is the time the search took.
	Latency time.Duration
}

// topK returns the results that count.
func (o *Outcome) topK() []string {
	if o.K > 0 && len(o.Ranked) > o.K {
		return o.Ranked[:o.K]
	}
	return o.Ranked
}

// Hit reports whether the top-1 result is gold.
func (o *Outcome) Hit() bool { return len(o.Ranked) > 0 && slices.Contains(o.Gold, o.Ranked[0]) }

// StaleHit reports whether the top-1 result is stale.
func (o *Outcome) StaleHit() bool { return len(o.Ranked) > 0 && slices.Contains(o.Stale, o.Ranked[0]) }

// ReciprocalRank is 1/r for the rank r (1-based) of the first gold id in
// the top K, 0 when none is there.
func (o *Outcome) ReciprocalRank() float64 {
	for i, id := range o.topK() {
		if slices.Contains(o.Gold, id) {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// Recall is |gold ∩ top K| / |gold| (ids in Ranked are distinct).
func (o *Outcome) Recall() float64 {
	if len(o.Gold) == 0 {
		return 0
	}
	n := 0
	for _, id := range o.topK() {
		if slices.Contains(o.Gold, id) {
			n++
		}
	}
	return float64(n) / float64(len(o.Gold))
}

// topConfidence is the top-1 confidence, 0 without a result.
func (o *Outcome) topConfidence() float64 {
	if len(o.Ranked) == 0 {
		return 0
	}
	return o.Confidence
}

// mean averages f over os; 0 for no outcomes.
func mean(os []Outcome, f func(o *Outcome) float64) float64 {
	if len(os) == 0 {
		return 0
	}
	var s float64
	for i := range os {
		s += f(&os[i])
	}
	return s / float64(len(os))
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// AccuracyAt1 is the fraction of queries whose top-1 result is gold:
//
//	accuracy@1 = (1/N) Σ_q [top1(q) ∈ gold(q)]
//
// A query with no result counts as a miss. 0 for no queries.
func AccuracyAt1(os []Outcome) float64 {
	return mean(os, func(o *Outcome) float64 { return boolf(o.Hit()) })
}

// MRR is the mean reciprocal rank of the first gold result within each
// query's top k:
//
//	MRR = (1/N) Σ_q 1/rank_q,  1/rank_q = 0 when no gold id is in the top k.
func MRR(os []Outcome) float64 {
	return mean(os, func(o *Outcome) float64 { return o.ReciprocalRank() })
}

// RecallAtK is the mean fraction of each query's gold ids found in its top
// k:
//
//	recall@k = (1/N) Σ_q |gold(q) ∩ topk(q)| / |gold(q)|
func RecallAtK(os []Outcome) float64 {
	return mean(os, func(o *Outcome) float64 { return o.Recall() })
}

// StaleRate is the fraction of queries whose top-1 result is stale (DESIGN
// "Evaluation contract"):
//
//	stale_rate = (1/N) Σ_q [top1(q) ∈ stale(q)]
func StaleRate(os []Outcome) float64 {
	return mean(os, func(o *Outcome) float64 { return boolf(o.StaleHit()) })
}

// ECEBins is the number of equal-width confidence bins of [ECE].
const ECEBins = 10

// ECE is the expected calibration error of the top-1 confidence against
// top-1 correctness, over ECEBins = 10 equal-width bins:
//
//	ECE = Σ_b (n_b / N) · |acc_b − conf_b|
//
// where bin b (0…9) holds the queries whose top-1 confidence c lies in
// [b/10, (b+1)/10) — c = 1.0 goes in the last bin —, n_b is their number,
// acc_b the fraction of them whose top-1 is gold and conf_b their mean
// confidence. Empty bins contribute nothing. A query with no result has
// confidence 0 and is a miss. Confidences are clamped to [0, 1].
func ECE(os []Outcome) float64 {
	if len(os) == 0 {
		return 0
	}
	var n [ECEBins]int
	var acc, conf [ECEBins]float64
	for i := range os {
		c := os[i].topConfidence()
		if math.IsNaN(c) {
			c = 0 // as Run treats a missing confidence
		}
		c = min(1, max(0, c))
		b := min(int(c*ECEBins), ECEBins-1)
		n[b]++
		acc[b] += boolf(os[i].Hit())
		conf[b] += c
	}
	var ece float64
	for b := range ECEBins {
		if n[b] == 0 {
			continue
		}
		nb := float64(n[b])
		ece += nb / float64(len(os)) * math.Abs(acc[b]/nb-conf[b]/nb)
	}
	return ece
}

// Percentile is the nearest-rank percentile p (0 < p ≤ 100) of xs: the
// smallest value such that at least p% of xs are ≤ it, i.e. sorted(xs)[r−1]
// with r = ⌈p/100 · N⌉ (at least 1). 0 for no values. xs is not modified.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	// rank = ⌈p·N/100⌉ in integer arithmetic (p in thousandths), so that
	// p = 99.9 of N = 1000 is rank 999, not 1000 through rounding.
	num := int64(math.Round(p*1000)) * int64(len(s))
	r := int((num + 100_000 - 1) / 100_000)
	return s[min(max(r, 1), len(s))-1]
}

// Metrics are the quality metrics of a set of queries.
type Metrics struct {
	Queries     int     `json:"queries"`
	AccuracyAt1 float64 `json:"accuracy_at_1"`
	MRR         float64 `json:"mrr"`
	RecallAtK   float64 `json:"recall_at_k"`
	StaleRate   float64 `json:"stale_rate"`
	ECE         float64 `json:"ece"`
}

// Summarize computes every metric over os.
func Summarize(os []Outcome) Metrics {
	return Metrics{
		Queries:     len(os),
		AccuracyAt1: AccuracyAt1(os),
		MRR:         MRR(os),
		RecallAtK:   RecallAtK(os),
		StaleRate:   StaleRate(os),
		ECE:         ECE(os),
	}
}

// Latency holds nearest-rank latency percentiles in milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// Report is the result of an evaluation, the JSON object of DESIGN
// "Evaluation contract": {"method", "queries", "accuracy_at_1", "mrr",
// "recall_at_k", "stale_rate", "ece", "by_type", "latency_ms"}, with
// "by_kind" after "by_type", and "per_query" when PerQuery is set.
type Report struct {
	// Method names the configuration that was evaluated.
	Method string `json:"method"`
	// Metrics are over every query.
	Metrics
	// ByType holds the same metrics per query type (queries without a type
	// are left out).
	ByType map[string]Metrics `json:"by_type"`
	// ByKind holds the same metrics per memory kind of the top-1 result
	// ("static", "versioned", "event"; queries without a result are left
	// out): the ECE of by_kind.static is the calibration of the confidence
	// shown with static answers, which does not decay with age, beside
	// that of versioned and event answers. Accuracy@1 of a kind is the
	// fraction of the answers of that kind that are gold.
	ByKind map[string]Metrics `json:"by_kind"`
	// Latency are the p50 and p99 of the per-query search time
	// (nearest-rank, see [Percentile]).
	Latency Latency `json:"latency_ms"`
	// PerQuery is every query's answer, in query order; [Run] fills it and
	// callers that want DESIGN's object alone set it to nil.
	PerQuery []QueryResult `json:"per_query,omitempty"`
}

// QueryResult is one query's answer in a [Report].
type QueryResult struct {
	ID     string   `json:"id"`
	Type   string   `json:"type,omitempty"`
	Ranked []string `json:"ranked"`
	// Kind is the top-1 result's memory kind (Outcome.Kind).
	Kind       string  `json:"kind,omitempty"`
	Confidence float64 `json:"confidence"`
	// Hit: the top-1 is gold; Stale: the top-1 is stale.
	Hit       bool    `json:"hit"`
	Stale     bool    `json:"stale"`
	LatencyMS float64 `json:"latency_ms"`
}

// NewReport summarises outcomes (in query order) into a report.
func NewReport(method string, os []Outcome) Report {
	r := Report{Method: method, Metrics: Summarize(os), ByType: map[string]Metrics{}, ByKind: map[string]Metrics{}}
	byType := map[string][]Outcome{}
	byKind := map[string][]Outcome{}
	ms := make([]float64, len(os))
	for i := range os {
		o := &os[i]
		ms[i] = float64(o.Latency) / float64(time.Millisecond)
		if o.Type != "" {
			byType[o.Type] = append(byType[o.Type], *o)
		}
		kind := ""
		if len(o.Ranked) > 0 {
			kind = o.Kind
		}
		if kind != "" {
			byKind[kind] = append(byKind[kind], *o)
		}
		ranked := o.topK()
		if ranked == nil {
			ranked = []string{}
		}
		r.PerQuery = append(r.PerQuery, QueryResult{ID: o.ID, Type: o.Type, Ranked: ranked, Kind: kind,
			Confidence: o.topConfidence(), Hit: o.Hit(), Stale: o.StaleHit(), LatencyMS: ms[i]})
	}
	for t, g := range byType {
		r.ByType[t] = Summarize(g)
	}
	for k, g := range byKind {
		r.ByKind[k] = Summarize(g)
	}
	r.Latency = Latency{P50: Percentile(ms, 50), P99: Percentile(ms, 99)}
	return r
}
