package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tidemark/tidemark/internal/textout"
)

// WriteJSON prints the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable prints the report for people: one column for all queries, one
// per query type and one per top-1 memory kind ("kind:static", …), then
// the latencies, then (when PerQuery is set) one line per query.
func (r *Report) WriteTable(w io.Writer) error {
	ew := &textout.Writer{W: w}
	ew.Printf("method %s, %d queries\n\n", r.Method, r.Queries)
	types := make([]string, 0, len(r.ByType))
	for t := range r.ByType {
		types = append(types, t)
	}
	slices.Sort(types)
	cols := []Metrics{r.Metrics}
	for _, t := range types {
		cols = append(cols, r.ByType[t])
	}
	for _, k := range []string{"static", "versioned", "event"} {
		if m, ok := r.ByKind[k]; ok {
			types = append(types, "kind:"+k)
			cols = append(cols, m)
		}
	}
	width := 8
	ew.Printf("%-12s %*s", "", width, "all")
	for _, t := range types {
		width := max(width, len(t))
		ew.Printf(" %*s", width, t)
	}
	ew.Printf("\n")
	rows := []struct {
		name string
		get  func(m Metrics) string
	}{
		{"queries", func(m Metrics) string { return fmt.Sprint(m.Queries) }},
		{"accuracy@1", func(m Metrics) string { return fmt.Sprintf("%.3f", m.AccuracyAt1) }},
		{"mrr", func(m Metrics) string { return fmt.Sprintf("%.3f", m.MRR) }},
		{"recall@k", func(m Metrics) string { return fmt.Sprintf("%.3f", m.RecallAtK) }},
		{"stale_rate", func(m Metrics) string { return fmt.Sprintf("%.3f", m.StaleRate) }},
		{"ece", func(m Metrics) string { return fmt.Sprintf("%.3f", m.ECE) }},
	}
	for _, row := range rows {
		ew.Printf("%-12s %*s", row.name, width, row.get(cols[0]))
		for i, t := range types {
			ew.Printf(" %*s", max(width, len(t)), row.get(cols[i+1]))
		}
		ew.Printf("\n")
	}
	ew.Printf("\nlatency p50 %.3f ms, p99 %.3f ms (nearest rank)\n", r.Latency.P50, r.Latency.P99)
	if len(r.PerQuery) > 0 {
		ew.Printf("\n%-10s %-10s %-5s %-5s %6s  %s\n", "query", "type", "hit", "stale", "conf", "ranked")
		for _, q := range r.PerQuery {
			ew.Printf("%-10s %-10s %-5s %-5s %6.3f  %s\n", q.ID, q.Type, yes(q.Hit), yes(q.Stale), q.Confidence,
				strings.Join(q.Ranked, ", "))
		}
	}
	return ew.Err
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "-"
}
