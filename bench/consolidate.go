package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/temporal"
)

// ConsolidateConfig configures RunConsolidate: the cost of a consolidation
// run over a collection of N memories, and the latency of searches run
// while it works against the same searches with nothing else running.
type ConsolidateConfig struct {
	// Dir is where the database goes (default a temporary directory).
	Dir string
	// N memories of Dim dimensions (defaults 20000 and 384), a third of
	// them facts whose keys repeat (so some supersede others), one in
	// twenty a near-duplicate of an earlier one, one in ten an event.
	N, Dim int
	// Data is where the vectors come from (OpenVectorSet): an ANN dataset
	// prefix lifted to Dim (default DefaultData, GloVe-100), DataSynthetic
	// (clustered, for sizes past the file's), or DataGaussian (random
	// normal vectors, the worst case for the relationship pass's index
	// walk; the data of the reports before 2026-11-24).
	Data string
	// NoBusy skips the second half (a fresh build searched while
	// consolidation runs over and over), which doubles the time at scale.
	NoBusy bool
	// Queries is the number of searches in each latency measurement
	// (default 2000), K their results (default 10).
	Queries, K int
	// Progress, when set, receives a line per phase.
	Progress io.Writer
}

// ConsolidateReport is RunConsolidate's result.
type ConsolidateReport struct {
	N    int    `json:"n"`
	Dim  int    `json:"dim"`
	Data string `json:"data"`
	// FirstS is the first consolidation (every memory new: lifecycle,
	// relationships found through the surface index or, at most
	// ExactThreshold memories, one batched pass over the collection,
	// ripples) until it is complete: FirstRuns runs, since one run
	// relates at most ConsolidateOptions.MaxNew memories (50k) within its
	// Budget (30 s) and leaves the rest Truncated for the next. AgainS is
	// one more run with nothing new; both also per 10k memories. Report
	// sums the first consolidation's runs' counts.
	FirstRuns    int                          `json:"first_runs"`
	FirstS       float64                      `json:"first_s"`
	FirstPer10kS float64                      `json:"first_per_10k_s"`
	AgainS       float64                      `json:"again_s"`
	AgainPer10kS float64                      `json:"again_per_10k_s"`
	Report       tidemark.ConsolidationReport `json:"report"`
	// Search latency in milliseconds, medians over Rounds rounds of
	// Queries searches, alone and while the first (heavy) run works (the
	// consolidation is started again if it ends first: BusyRuns).
	AloneP50 float64 `json:"alone_ms_p50"`
	AloneP99 float64 `json:"alone_ms_p99"`
	BusyP50  float64 `json:"busy_ms_p50"`
	BusyP99  float64 `json:"busy_ms_p99"`
	// Ratios busy ÷ alone of round i's latencies: median and min.
	RatioP50    float64 `json:"ratio_p50"`
	RatioP50Min float64 `json:"ratio_p50_min"`
	RatioP99    float64 `json:"ratio_p99"`
	RatioP99Min float64 `json:"ratio_p99_min"`
	Rounds      int     `json:"rounds"`
	BusyRuns    int     `json:"busy_runs"`
}

// RunConsolidate runs the consolidation benchmark.
func RunConsolidate(ctx context.Context, cfg ConsolidateConfig) (ConsolidateReport, error) {
	if cfg.N == 0 {
		cfg.N = 20000
	}
	if cfg.Dim == 0 {
		cfg.Dim = 384
	}
	if cfg.Queries == 0 {
		cfg.Queries = 2000
	}
	if cfg.K == 0 {
		cfg.K = 10
	}
	if cfg.Data == "" {
		cfg.Data = DefaultData
	}
	rep := ConsolidateReport{N: cfg.N, Dim: cfg.Dim, Data: cfg.Data}
	say := lines(cfg.Progress)
	set, err := OpenVectorSet(cfg.Data, cfg.Dim, cfg.N, 1000)
	if err != nil {
		return rep, err
	}
	defer set.Close()
	if set.N < cfg.N {
		return rep, fmt.Errorf("bench: consolidate: %s has %d vectors, fewer than n = %d", set.Name, set.N, cfg.N)
	}
	root, cleanup, err := workDir(cfg.Dir, "consolidate")
	if err != nil {
		return rep, err
	}
	defer cleanup()
	build := func(dir string) (*tidemark.DB, *tidemark.Collection, error) {
		clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		db, err := tidemark.Open(dir, &tidemark.Options{NoSync: true, CheckpointRecords: -1, CheckpointBytes: -1,
			Clock: func() time.Time { return clock }})
		if err != nil {
			return nil, nil, err
		}
		// Synthetic texts: keys come from the generator, not the extractor.
		c, err := db.CreateCollection(ctx, "bench", &tidemark.CollectionOptions{Dim: cfg.Dim, Keys: tidemark.KeysExplicit})
		if err != nil {
			db.Close()
			return nil, nil, err
		}
		rng := rand.New(rand.NewPCG(9, 9))
		var vecs [][]float32
		var texts []string
		for w := 0; w < cfg.N; w += 1000 {
			bt := make([]tidemark.Memory, min(1000, cfg.N-w))
			base := make([]float32, len(bt)*cfg.Dim)
			if err := set.Fill(w, w+len(bt), base, runtime.GOMAXPROCS(0)); err != nil {
				db.Close()
				return nil, nil, err
			}
			for i := range bt {
				n := w + i
				v := base[i*cfg.Dim : (i+1)*cfg.Dim : (i+1)*cfg.Dim]
				m := tidemark.Memory{ID: fmt.Sprintf("m%d", n), Text: fmt.Sprintf("memory %d says %d", n, rng.IntN(100)), Vector: v,
					Source: temporal.Source(1 + rng.IntN(7)), Created: clock.AddDate(0, 0, -rng.IntN(120))}
				switch {
				case n%20 == 19 && n > 0: // a near-duplicate: the same words, another punctuation
					o := rng.IntN(len(vecs))
					for j := range v {
						v[j] = vecs[o][j] + float32(0.01*rng.NormFloat64())
					}
					m.Text = texts[o] + "!"
					m.Kind, m.Subject, m.Relation, m.Object, m.ValidFrom, m.ValidTo, m.DependsOn = 0, "", "", "", time.Time{}, time.Time{}, nil
				case n%3 == 0:
					m.Kind, m.Subject, m.Relation, m.Object = temporal.Versioned, fmt.Sprintf("s%d", rng.IntN(cfg.N/6+1)), "value", fmt.Sprint(rng.IntN(5))
				case n%10 == 1:
					m.Kind, m.ValidFrom, m.ValidTo = temporal.Event, clock.AddDate(0, 0, -30), clock.AddDate(0, 0, 1+rng.IntN(60)-30)
				}
				if n > 10 && n%7 == 0 {
					m.DependsOn = []string{fmt.Sprintf("m%d", rng.IntN(n))}
				}
				vecs, texts = append(vecs, v), append(texts, m.Text)
				bt[i] = m
			}
			if _, err := c.Put(ctx, bt); err != nil {
				db.Close()
				return nil, nil, err
			}
		}
		return db, c, nil
	}
	qs, err := set.Queries(min(cfg.Queries, set.NQ))
	if err != nil {
		return rep, err
	}
	queries := make([][]float32, cfg.Queries)
	for i := range queries {
		// A file set has fewer queries than a long latency run: they
		// repeat.
		k := i % set.NQ
		queries[i] = qs[k*cfg.Dim : (k+1)*cfg.Dim]
	}
	search := func(c *tidemark.Collection) ([]float64, error) {
		lat := make([]float64, 0, len(queries))
		for _, q := range queries {
			start := time.Now()
			if _, err := c.Search(ctx, &tidemark.SearchRequest{Vector: q, K: cfg.K}); err != nil {
				return nil, err
			}
			lat = append(lat, float64(time.Since(start).Microseconds())/1000)
		}
		slices.Sort(lat)
		return lat, nil
	}
	pct := func(s []float64, p float64) float64 { return s[min(len(s)-1, int(p*float64(len(s))))] }

	say("building %d memories of %d dimensions (%s)", cfg.N, cfg.Dim, set.Note)
	db, c, err := build(root + "/a")
	if err != nil {
		return rep, err
	}
	start := time.Now()
	for {
		r, err := c.Consolidate(ctx, nil)
		if err != nil {
			db.Close()
			return rep, err
		}
		rep.FirstRuns++
		say("consolidation run %d: %.2f s, promoted %d, truncated %v", rep.FirstRuns, r.Duration.Seconds(), r.Promoted, r.Truncated)
		addReport(&rep.Report, &r)
		if !r.Truncated {
			break
		}
	}
	rep.FirstS = time.Since(start).Seconds()
	rep.Report.Duration = time.Since(start)
	start = time.Now()
	if _, err := c.Consolidate(ctx, nil); err != nil {
		db.Close()
		return rep, err
	}
	rep.AgainS = time.Since(start).Seconds()
	rep.FirstPer10kS, rep.AgainPer10kS = rep.FirstS*10000/float64(cfg.N), rep.AgainS*10000/float64(cfg.N)
	say("consolidation: first %.2f s in %d runs, again %.3f s (%+v)", rep.FirstS, rep.FirstRuns, rep.AgainS, rep.Report)
	const rounds = 3
	rep.Rounds = rounds
	var alone [][]float64
	for range rounds {
		lat, err := search(c)
		if err != nil {
			db.Close()
			return rep, err
		}
		alone = append(alone, lat)
	}
	db.Close()
	if cfg.NoBusy {
		med := func(xs []float64) float64 { return median(slices.Sorted(slices.Values(xs))) }
		var ap50, ap99 []float64
		for i := range rounds {
			ap50, ap99 = append(ap50, pct(alone[i], 0.5)), append(ap99, pct(alone[i], 0.99))
		}
		rep.AloneP50, rep.AloneP99 = med(ap50), med(ap99)
		return rep, nil
	}
	// Again from scratch, with the first (heavy) run started over and over
	// while the same searches run.
	db, c, err = build(root + "/b")
	if err != nil {
		return rep, err
	}
	defer db.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var cerr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := c.Consolidate(ctx, nil); err != nil {
				cerr = err
				return
			}
			rep.BusyRuns++
		}
	}()
	time.Sleep(50 * time.Millisecond) // let the first run start
	var busy [][]float64
	for range rounds {
		lat, err := search(c)
		if err != nil {
			close(stop)
			wg.Wait()
			return rep, err
		}
		busy = append(busy, lat)
	}
	close(stop)
	wg.Wait()
	if cerr != nil {
		return rep, cerr
	}
	med := func(xs []float64) float64 { return median(slices.Sorted(slices.Values(xs))) }
	var ap50, ap99, bp50, bp99, r50, r99 []float64
	for i := range rounds {
		ap50, ap99 = append(ap50, pct(alone[i], 0.5)), append(ap99, pct(alone[i], 0.99))
		bp50, bp99 = append(bp50, pct(busy[i], 0.5)), append(bp99, pct(busy[i], 0.99))
		r50, r99 = append(r50, bp50[i]/ap50[i]), append(r99, bp99[i]/ap99[i])
	}
	rep.AloneP50, rep.AloneP99, rep.BusyP50, rep.BusyP99 = med(ap50), med(ap99), med(bp50), med(bp99)
	rep.RatioP50, rep.RatioP50Min, rep.RatioP99, rep.RatioP99Min = med(r50), slices.Min(r50), med(r99), slices.Min(r99)
	return rep, nil
}

// addReport adds run r's counts to sum (the last run's collection, seq
// and truncation, every run's orphans).
func addReport(sum, r *tidemark.ConsolidationReport) {
	sum.Collection, sum.Seq, sum.Truncated = r.Collection, r.Seq, r.Truncated
	sum.Promoted += r.Promoted
	sum.Dormant += r.Dormant
	sum.Reactivated += r.Reactivated
	sum.Expired += r.Expired
	sum.Contradictions += r.Contradictions
	sum.Ripples += r.Ripples
	sum.Merged += r.Merged
	sum.Dependencies += r.Dependencies
	sum.Contradicted += r.Contradicted
	sum.Orphans = append(sum.Orphans, r.Orphans...)
}

// WriteJSON writes the report as JSON.
func (r *ConsolidateReport) WriteJSON(w io.Writer) error {
	return writeIndented(w, r)
}

// WriteTable writes the report as a table.
func (r *ConsolidateReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "consolidation of %d memories, dim %d, vectors %s\n", r.N, r.Dim, r.Data)
	fmt.Fprintf(tw, "first consolidation (all new, %d runs)\t%.2f s\t%.2f s per 10k\n", r.FirstRuns, r.FirstS, r.FirstPer10kS)
	fmt.Fprintf(tw, "second run (nothing new)\t%.3f s\t%.3f s per 10k\n", r.AgainS, r.AgainPer10kS)
	fmt.Fprintf(tw, "edits\tpromoted %d, expired %d, merged %d, dependencies %d, contradictions %d, ripples %d\n",
		r.Report.Promoted, r.Report.Expired, r.Report.Merged, r.Report.Dependencies, r.Report.Contradictions, r.Report.Ripples)
	fmt.Fprintf(tw, "search latency alone (median of %d rounds)\tp50 %.3f ms\tp99 %.3f ms\n", r.Rounds, r.AloneP50, r.AloneP99)
	if r.BusyRuns > 0 {
		fmt.Fprintf(tw, "while consolidating (%d runs)\tp50 %.3f ms\tp99 %.3f ms\n", r.BusyRuns, r.BusyP50, r.BusyP99)
		fmt.Fprintf(tw, "ratio busy ÷ alone, median (min)\tp50 %.2f× (%.2f×)\tp99 %.2f× (%.2f×)\n", r.RatioP50, r.RatioP50Min, r.RatioP99, r.RatioP99Min)
	}
	return tw.Flush()
}
