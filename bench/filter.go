package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/temporal"
)

// FilterConfig configures RunFilter: filtered search on the engine's ANN
// plan against its exact plan, at several selectivities. A zero field
// takes its default.
type FilterConfig struct {
	// Data, Dim and N are the vectors, as ScaleConfig's (default GloVe-100
	// lifted to 768, 100,000 memories).
	Data string
	Dim  int
	N    int
	// Queries is the number of searches per selectivity (default 200).
	Queries int
	// Progress, when set, receives a line per phase.
	Progress io.Writer
}

// FilterRow is one selectivity's measurements.
type FilterRow struct {
	// Selectivity is the share of memories the filter keeps; Filter the
	// filter (metadata "bucket" is the memory's number mod 100).
	Selectivity float64 `json:"selectivity"`
	Filter      string  `json:"filter"`
	Matching    int     `json:"matching"`
	// Path is how the ANN plan searched: "exact scan of the matches" (at
	// most tidemark.FilterExactLimit) or "filtered walk".
	Path string `json:"path"`
	// RecallAt10 is the ANN plan's recall@10 against the exact plan's top
	// 10 under the same filter.
	RecallAt10 float64 `json:"recall_at_10"`
	// ANNP50Ms and ExactP50Ms are the two plans' median latencies.
	ANNP50Ms   float64 `json:"ann_p50_ms"`
	ExactP50Ms float64 `json:"exact_p50_ms"`
	// UnfilteredP50Ms is the ANN plan's median without the filter.
	UnfilteredP50Ms float64 `json:"unfiltered_p50_ms"`
}

// FilterReport is RunFilter's result.
type FilterReport struct {
	Dataset string      `json:"dataset"`
	N       int         `json:"n"`
	Dim     int         `json:"dim"`
	Queries int         `json:"queries"`
	Threads int         `json:"threads"`
	Rows    []FilterRow `json:"rows"`
	note    string
}

// RunFilter loads the memories with metadata {"bucket": i mod 100} and
// measures filtered searches at 1%, 10% and 50% selectivity.
func RunFilter(ctx context.Context, cfg FilterConfig) (*FilterReport, error) {
	c := cfg
	if c.Dim == 0 {
		c.Dim = 768
	}
	if c.Queries == 0 {
		c.Queries = 200
	}
	say := lines(c.Progress)
	d, err := OpenVectorSet(c.Data, c.Dim, c.N, c.Queries)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if c.N == 0 {
		c.N = min(d.N, 100000)
	}
	if c.N > d.N || c.Queries > d.NQ {
		return nil, fmt.Errorf("bench: filter: %s has %d vectors and %d queries, fewer than %d and %d", d.Name, d.N, d.NQ, c.N, c.Queries)
	}
	say("filter: %s", d.Note)
	dir, err := os.MkdirTemp("", "tidemark-bench-filter-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db, err := tidemark.Open(dir, &tidemark.Options{NoSync: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	coll, err := db.CreateCollection(ctx, "filter", &tidemark.CollectionOptions{Dim: c.Dim, Method: temporal.MethodPlain})
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	for w := 0; w < c.N; w += 1000 {
		m := min(1000, c.N-w)
		vecs := make([]float32, m*c.Dim)
		if err := d.Fill(w, w+m, vecs, runtime.GOMAXPROCS(0)); err != nil {
			return nil, err
		}
		bt := make([]tidemark.Memory, m)
		for i := range bt {
			bt[i] = tidemark.Memory{ID: strconv.Itoa(w + i), Vector: vecs[i*c.Dim : (i+1)*c.Dim],
				Metadata: tidemark.Metadata{"bucket": (w + i) % 100}}
		}
		if _, err := coll.Put(ctx, bt); err != nil {
			return nil, err
		}
	}
	say("loaded %d in %.1f s", c.N, time.Since(t0).Seconds())
	queries, err := d.Queries(c.Queries)
	if err != nil {
		return nil, err
	}
	rep := &FilterReport{Dataset: d.Name, N: c.N, Dim: c.Dim, Queries: c.Queries, Threads: runtime.GOMAXPROCS(0), note: d.Note}
	timed := func(req *tidemark.SearchRequest) ([]string, float64, error) {
		t0 := time.Now()
		sr, err := coll.Search(ctx, req)
		ms := time.Since(t0).Seconds() * 1e3
		if err != nil {
			return nil, 0, err
		}
		ids := make([]string, len(sr.Hits))
		for i, h := range sr.Hits {
			ids[i] = h.ID
		}
		return ids, ms, nil
	}
	var plain []float64
	for i := range c.Queries {
		if _, ms, err := timed(&tidemark.SearchRequest{Vector: queries[i*c.Dim : (i+1)*c.Dim], K: 10, Plan: tidemark.PlanANN}); err != nil {
			return nil, err
		} else {
			plain = append(plain, ms)
		}
	}
	slices.Sort(plain)
	for _, s := range []struct {
		sel float64
		f   string
	}{{0.01, `{"bucket":0}`}, {0.10, `{"bucket":{"$lt":10}}`}, {0.50, `{"bucket":{"$lt":50}}`}} {
		f, err := tidemark.ParseFilter([]byte(s.f))
		if err != nil {
			return nil, err
		}
		row := FilterRow{Selectivity: s.sel, Filter: s.f, UnfilteredP50Ms: percentile(plain, 0.5)}
		if row.Matching, err = coll.Count(ctx, &tidemark.ListRequest{Filter: f}); err != nil {
			return nil, err
		}
		row.Path = "filtered walk"
		if row.Matching <= tidemark.FilterExactLimit {
			row.Path = "exact scan of the matches"
		}
		var annMs, exactMs []float64
		found, total := 0, 0
		for i := range c.Queries {
			q := queries[i*c.Dim : (i+1)*c.Dim]
			exact, ems, err := timed(&tidemark.SearchRequest{Vector: q, K: 10, Filter: f, Plan: tidemark.PlanExact})
			if err != nil {
				return nil, err
			}
			ann, ams, err := timed(&tidemark.SearchRequest{Vector: q, K: 10, Filter: f, Plan: tidemark.PlanANN})
			if err != nil {
				return nil, err
			}
			exactMs, annMs = append(exactMs, ems), append(annMs, ams)
			total += len(exact)
			for _, id := range ann {
				if slices.Contains(exact, id) {
					found++
				}
			}
		}
		slices.Sort(annMs)
		slices.Sort(exactMs)
		row.RecallAt10 = float64(found) / float64(max(total, 1))
		row.ANNP50Ms, row.ExactP50Ms = percentile(annMs, 0.5), percentile(exactMs, 0.5)
		say("selectivity %.0f%%: %d match, %s, recall@10 %.4f, p50 %.3f ms (exact plan %.3f ms)", 100*s.sel, row.Matching, row.Path, row.RecallAt10, row.ANNP50Ms, row.ExactP50Ms)
		rep.Rows = append(rep.Rows, row)
	}
	return rep, nil
}

// WriteJSON writes the report as one JSON object.
func (r *FilterReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report for people.
func (r *FilterReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%s\n%d memories, %d queries per row, k = 10, %d threads\n\n", r.note, r.N, r.Queries, r.Threads)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "selectivity\tmatching\tANN plan path\trecall@10 vs exact\tANN p50 ms\texact plan p50 ms\tunfiltered ANN p50 ms")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%.0f%%\t%d\t%s\t%.4f\t%.3f\t%.3f\t%.3f\n", 100*row.Selectivity, row.Matching, row.Path, row.RecallAt10, row.ANNP50Ms, row.ExactP50Ms, row.UnfilteredP50Ms)
	}
	return tw.Flush()
}
