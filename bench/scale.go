package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/internal/offheap"
	"github.com/tidemark/tidemark/temporal"
)

// ScaleConfig configures RunScale: the engine at production shape (n
// memories of dim dimensions given as vectors) beside a bare index.HNSW
// built and searched the same way in the same run. A zero field takes its
// default.
type ScaleConfig struct {
	// Data names the vectors (OpenVectorSet): the prefix of an ANN file
	// set (default DefaultData, GloVe-100, lifted to Dim), DataSynthetic
	// (clustered, for sizes past the real data) or DataGaussian (the
	// worst case).
	Data string
	// Dim is the vector dimension (default 768).
	Dim int
	// N is the number of memories (default: every base vector of a file
	// set; 100,000 for the generated ones).
	N int
	// Threads is GOMAXPROCS for the run and the bare index's inserting
	// goroutines (default GOMAXPROCS).
	Threads int
	// Queries is the number of searches (default 1,000; at most the file
	// set's queries).
	Queries int
	// Runs is the number of complete runs (default 3); the report gives
	// their median and min.
	Runs int
	// Dir is where each run's database goes (default the system's
	// temporary directory); it should be on the disk being measured.
	Dir string
	// Float32Walk builds the bare index without int8 codes and walks its
	// float32 vectors. By default it walks int8 codes (index.Options
	// Quantize) as the engine's indexes do (Collection.newIndex in
	// collection.go), so that index_search_p50_ms is the engine's own walk.
	Float32Walk bool
	// Progress, when set, receives a line per phase.
	Progress io.Writer
}

// ScaleResult is one run's measurements; the JSON field names are the
// benchmark contract of issue 16 (scripts read them).
type ScaleResult struct {
	Dataset string `json:"dataset"`
	N       int    `json:"n"`
	Dim     int    `json:"dim"`
	Threads int    `json:"threads"`
	// IndexBuildS is the time to insert the N vectors into a bare
	// index.HNSW with the engine's index options, Threads goroutines.
	IndexBuildS float64 `json:"index_build_s"`
	// LoadS is the time spent in the engine's Put of the N memories
	// (vectors, no text), batches of 1000, fsync on, into a fresh
	// database (making the vectors between the batches not counted).
	LoadS float64 `json:"load_s"`
	// SnapshotBytes is the size of the snapshot after Close (every file
	// of the database named snapshot*); SnapshotReadS the time to read it
	// from start to end (from the page cache when it is still cached, as
	// it usually is right after Close).
	SnapshotBytes int64   `json:"snapshot_bytes"`
	SnapshotReadS float64 `json:"snapshot_read_s"`
	// OpenS is tidemark.Open of the database after Close.
	OpenS float64 `json:"open_s"`
	// RecallAt10 is the engine's recall@10 (Search, temporal.MethodPlain:
	// cosine only, k = 10) against the exact top 10 over the N vectors.
	RecallAt10 float64 `json:"recall_at_10"`
	// SearchP50Ms and SearchP99Ms are the engine's Search latencies, one
	// client, one search at a time, after Open; the engine and the bare
	// index take turns by blocks of 100 queries, so that a shared host's
	// noise falls on both alike.
	SearchP50Ms float64 `json:"search_p50_ms"`
	SearchP99Ms float64 `json:"search_p99_ms"`
	// IndexSearchP50Ms is the bare index's Search latency (k = 10) with
	// the beam width the engine's ANN plan uses,
	// max(CollectionOptions.Ef, k·Overfetch, 64), and the walk of
	// ScaleConfig.Float32Walk.
	IndexSearchP50Ms float64 `json:"index_search_p50_ms"`
	// RSSBytes is the process's peak resident set during the load (the
	// peak is reset before it where the system allows, on Linux): the
	// engine, plus the batch being made (the source vectors are read, or
	// generated, a batch at a time).
	RSSBytes int64 `json:"rss_bytes"`
	// VectorBytes is N·Dim·4.
	VectorBytes int64 `json:"vector_bytes"`
}

// ScaleReport is RunScale's result: the median of every measured field at
// the top level, and with more than one run each run and the per-field
// min and median.
type ScaleReport struct {
	ScaleResult
	Runs   []ScaleResult `json:"runs,omitempty"`
	Min    *ScaleResult  `json:"min,omitempty"`
	Median *ScaleResult  `json:"median,omitempty"`
	// note describes the data for the table.
	note string
	// rssReset says whether the peak was reset before each load.
	rssReset bool
}

func (c *ScaleConfig) withDefaults() ScaleConfig {
	o := *c
	if o.Data == "" {
		o.Data = DefaultData
	}
	if o.Dim == 0 {
		o.Dim = 768
	}
	if o.Threads == 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.Queries == 0 {
		o.Queries = 1000
	}
	if o.Runs == 0 {
		o.Runs = 3
	}
	return o
}

// scaleK is the k of every search.
const scaleK = 10

// RunScale runs the scale benchmark.
func RunScale(ctx context.Context, cfg ScaleConfig) (*ScaleReport, error) {
	c := cfg.withDefaults()
	if c.N < 0 || c.Threads < 1 || c.Queries < 1 || c.Runs < 1 {
		return nil, fmt.Errorf("bench: scale: n %d, threads %d, queries %d, runs %d", c.N, c.Threads, c.Queries, c.Runs)
	}
	say := lines(c.Progress)
	d, err := OpenVectorSet(c.Data, c.Dim, c.N, c.Queries)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if c.N == 0 {
		c.N = d.N
	}
	if c.N > d.N {
		return nil, fmt.Errorf("bench: scale: %s has %d vectors, fewer than n = %d (use --data %s, or a larger file set)", d.Name, d.N, c.N, DataSynthetic)
	}
	if c.Queries > d.NQ {
		return nil, fmt.Errorf("bench: scale: %s has %d queries, fewer than %d", d.Name, d.NQ, c.Queries)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.Threads))
	say("scale: %s", d.Note)
	t0 := time.Now()
	exact, err := d.ExactTopK(ctx, c.N, c.Queries, scaleK, c.Threads)
	if err != nil {
		return nil, err
	}
	say("exact top %d of %d queries over %d vectors in %.1f s", scaleK, c.Queries, c.N, time.Since(t0).Seconds())
	queries, err := d.Queries(c.Queries)
	if err != nil {
		return nil, err
	}
	rep := &ScaleReport{note: d.Note, rssReset: true}
	for r := range c.Runs {
		res, reset, err := scaleRun(ctx, &c, d, queries, exact, say)
		if err != nil {
			return nil, err
		}
		rep.rssReset = rep.rssReset && reset
		say("run %d: build %.2f s, load %.2f s, open %.2f s, recall@10 %.4f, search p50 %.3f ms (index %.3f ms)",
			r+1, res.IndexBuildS, res.LoadS, res.OpenS, res.RecallAt10, res.SearchP50Ms, res.IndexSearchP50Ms)
		rep.Runs = append(rep.Runs, res)
	}
	lo, med := aggregateScale(rep.Runs)
	rep.ScaleResult = med
	if len(rep.Runs) > 1 {
		rep.Min, rep.Median = &lo, &med
	} else {
		rep.Runs = nil
	}
	return rep, nil
}

// scaleRun is one complete run: load, close, read the snapshot, open;
// then the bare index is built, and the two are searched taking turns.
func scaleRun(ctx context.Context, c *ScaleConfig, d *VectorSet, queries []float32, exact []int32, say func(string, ...any)) (res ScaleResult, rssReset bool, err error) {
	res = ScaleResult{Dataset: d.Name, N: c.N, Dim: c.Dim, Threads: c.Threads, VectorBytes: int64(c.N) * int64(c.Dim) * 4}
	if c.Dir != "" {
		if err := os.MkdirAll(c.Dir, 0o755); err != nil {
			return res, false, err
		}
	}
	dir, err := os.MkdirTemp(c.Dir, "tidemark-bench-scale-")
	if err != nil {
		return res, false, err
	}
	defer os.RemoveAll(dir)

	// The load, from a clean peak: the last run's off-heap arrays would
	// count in it.
	waitUnmapped()
	debug.FreeOSMemory()
	rssReset = resetPeakRSS()
	db, err := tidemark.Open(dir, nil)
	if err != nil {
		return res, rssReset, err
	}
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	coll, err := db.CreateCollection(ctx, "scale", &tidemark.CollectionOptions{Dim: c.Dim, Method: temporal.MethodPlain})
	if err != nil {
		return res, rssReset, err
	}
	opts := coll.Options()
	if c.N <= opts.ExactThreshold {
		say("n = %d ≤ ExactThreshold %d: the engine's searches scan every memory (exact plan), not the index", c.N, opts.ExactThreshold)
	}
	var load time.Duration
	for w := 0; w < c.N; w += 1000 {
		m := min(1000, c.N-w)
		vecs := make([]float32, m*c.Dim)
		if err := d.Fill(w, w+m, vecs, c.Threads); err != nil {
			return res, rssReset, err
		}
		bt := make([]tidemark.Memory, m)
		for i := range bt {
			bt[i] = tidemark.Memory{ID: strconv.Itoa(w + i), Vector: vecs[i*c.Dim : (i+1)*c.Dim]}
		}
		t0 := time.Now()
		out, err := coll.Put(ctx, bt)
		load += time.Since(t0)
		if err != nil {
			return res, rssReset, err
		}
		for _, o := range out {
			if o.Outcome != tidemark.Stored {
				return res, rssReset, fmt.Errorf("bench: scale: Put of %s: outcome %v", o.ID, o.Outcome)
			}
		}
		if (w/1000)%20 == 0 {
			say("loaded %d", w)
		}
	}
	res.LoadS = load.Seconds()
	res.RSSBytes = peakRSS()

	t0 := time.Now()
	err = db.Close()
	db = nil
	if err != nil {
		return res, rssReset, err
	}
	say("closed in %.2f s", time.Since(t0).Seconds())
	coll = nil
	// The closed DB's off-heap memory goes back when a collection finds it
	// unreachable: wait for that, as a fresh process would not carry it,
	// so that Open is not timed unmapping the last one.
	waitUnmapped()
	if res.SnapshotBytes, res.SnapshotReadS, err = readSnapshot(dir); err != nil {
		return res, rssReset, err
	}
	t0 = time.Now()
	if db, err = tidemark.Open(dir, nil); err != nil {
		return res, rssReset, err
	}
	res.OpenS = time.Since(t0).Seconds()
	if coll, err = db.Collection("scale"); err != nil {
		return res, rssReset, err
	}
	search := func(q []float32) ([]int, error) {
		sr, err := coll.Search(ctx, &tidemark.SearchRequest{Vector: q, K: scaleK})
		if err != nil {
			return nil, err
		}
		ids := make([]int, len(sr.Hits))
		for i, h := range sr.Hits {
			if ids[i], err = strconv.Atoi(h.ID); err != nil {
				return nil, err
			}
		}
		return ids, nil
	}
	// The bare index, with the engine's options (Collection.newIndex),
	// built while the database is open, so that the two take turns below
	// (timeSearches): the shared host's noise then falls on both alike.
	h, err := index.New(&index.Options{Dim: c.Dim, M: opts.M, EfConstruction: opts.EfConstruction, Ef: opts.Ef, Quantize: !c.Float32Walk})
	if err != nil {
		return res, rssReset, err
	}
	if res.IndexBuildS, err = buildIndex(ctx, h, d, c.N, c.Threads); err != nil {
		return res, rssReset, err
	}
	// The engine's ANN plan: ef = max(Ef, k·Overfetch, 64) (searchANN).
	ef := max(opts.Ef, scaleK*opts.Overfetch, 64)
	sopts := &index.SearchOptions{Ef: ef}
	recalls, lats, err := timeSearches(ctx, c.Dim, queries, exact, search, func(q []float32) ([]int, error) {
		found, err := h.Search(ctx, q, scaleK, sopts)
		ids := make([]int, len(found))
		for i, f := range found {
			ids[i] = int(f.Key)
		}
		return ids, err
	})
	if err != nil {
		return res, rssReset, err
	}
	res.RecallAt10 = recalls[0]
	res.SearchP50Ms, res.SearchP99Ms = percentile(lats[0], 0.50), percentile(lats[0], 0.99)
	res.IndexSearchP50Ms = percentile(lats[1], 0.50)
	if err = db.Close(); err != nil {
		db = nil
		return res, rssReset, err
	}
	db = nil
	walk := "float32"
	if !c.Float32Walk {
		walk = "int8"
	}
	say("bare index: ef %d, %s walk, recall@10 %.4f, p50 %.3f ms, p99 %.3f ms", ef, walk, recalls[1], res.IndexSearchP50Ms, percentile(lats[1], 0.99))
	return res, rssReset, nil
}

// buildIndex inserts base vectors 0 … n−1 with threads goroutines and
// returns the seconds spent inserting. The vectors are made a chunk at a
// time between the timed parts, so the benchmark never holds all of them.
func buildIndex(ctx context.Context, h *index.HNSW, d *VectorSet, n, threads int) (float64, error) {
	const chunk = 16384
	buf := make([]float32, min(chunk, n)*d.Dim)
	var took time.Duration
	for lo := 0; lo < n; lo += chunk {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		m := min(chunk, n-lo)
		if err := d.Fill(lo, lo+m, buf[:m*d.Dim], threads); err != nil {
			return 0, err
		}
		var mu sync.Mutex
		var errs error
		next := 0
		t0 := time.Now()
		var wg sync.WaitGroup
		for range max(1, min(threads, m)) {
			wg.Go(func() {
				for {
					mu.Lock()
					i := next
					next++
					mu.Unlock()
					if i >= m {
						return
					}
					if err := h.Insert(uint64(lo+i), buf[i*d.Dim:(i+1)*d.Dim]); err != nil {
						mu.Lock()
						errs = errors.Join(errs, err)
						mu.Unlock()
						return
					}
				}
			})
		}
		wg.Wait()
		took += time.Since(t0)
		if errs != nil {
			return 0, errs
		}
	}
	return took.Seconds(), nil
}

// timeSearches runs every search once per query, one at a time, after a
// warm-up of up to 100 queries each, and returns each search's recall@k
// against exact (k ids per query) and its latencies in milliseconds,
// sorted. The searches take turns by blocks of searchBlock queries (the
// first of them first on even blocks, last on odd ones): a shared host's
// noise falls on all of them alike, and within a block each runs on its
// own warm caches, as a service searching one index does.
func timeSearches(ctx context.Context, dim int, queries []float32, exact []int32, searches ...func([]float32) ([]int, error)) ([]float64, [][]float64, error) {
	nq := len(queries) / dim
	lats := make([][]float64, len(searches))
	hits := make([]int, len(searches))
	for s := range searches {
		lats[s] = make([]float64, nq)
	}
	for lo := 0; lo < nq; lo += searchBlock {
		hi := min(lo+searchBlock, nq)
		for k := range searches {
			s := k
			if (lo/searchBlock)%2 == 1 {
				s = len(searches) - 1 - k
			}
			if lo == 0 {
				for i := range min(100, nq) {
					if _, err := searches[s](queries[i*dim : (i+1)*dim]); err != nil {
						return nil, nil, err
					}
				}
			}
			for i := lo; i < hi; i++ {
				if err := ctx.Err(); err != nil {
					return nil, nil, err
				}
				t0 := time.Now()
				ids, err := searches[s](queries[i*dim : (i+1)*dim])
				lats[s][i] = float64(time.Since(t0).Nanoseconds()) / 1e6
				if err != nil {
					return nil, nil, err
				}
				want := exact[i*scaleK : (i+1)*scaleK]
				for _, id := range ids {
					if slices.Contains(want, int32(id)) {
						hits[s]++
					}
				}
			}
		}
	}
	recalls := make([]float64, len(searches))
	for s := range searches {
		slices.Sort(lats[s])
		recalls[s] = float64(hits[s]) / float64(nq*scaleK)
	}
	return recalls, lats, nil
}

// searchBlock is how many queries one search runs before the next takes
// its turn (timeSearches).
const searchBlock = 100

// percentile is the p-quantile of sorted values (the value at rank
// ⌊p·n⌋, the last for p = 1).
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// readSnapshot reads every file of dir whose name starts with "snapshot"
// from start to end and returns their total size and the time it took.
func readSnapshot(dir string) (int64, float64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	buf := make([]byte, 4<<20)
	var total int64
	t0 := time.Now()
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), "snapshot") {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return 0, 0, err
		}
		n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf)
		f.Close()
		if err != nil {
			return 0, 0, err
		}
		total += n
	}
	took := time.Since(t0).Seconds()
	if total == 0 {
		return 0, 0, fmt.Errorf("bench: scale: no snapshot in %s after Close", dir)
	}
	return total, took, nil
}

// aggregateScale returns the per-field min and median of the runs (the
// descriptive fields are the first run's: they do not vary).
func aggregateScale(runs []ScaleResult) (lo, med ScaleResult) {
	return aggregateRuns(runs, func(r *ScaleResult) ([]*float64, []*int64) {
		return []*float64{&r.IndexBuildS, &r.LoadS, &r.SnapshotReadS, &r.OpenS, &r.RecallAt10,
			&r.SearchP50Ms, &r.SearchP99Ms, &r.IndexSearchP50Ms}, []*int64{&r.SnapshotBytes, &r.RSSBytes}
	})
}

// aggregateRuns returns the per-field min and median of runs (at least
// one); fields gives a run's measured fields, the rest are the first
// run's.
func aggregateRuns[T any](runs []T, fields func(*T) ([]*float64, []*int64)) (lo, med T) {
	lo, med = runs[0], runs[0]
	loF, loI := fields(&lo)
	medF, medI := fields(&med)
	xs := make([]float64, len(runs))
	for f := range loF {
		for i := range runs {
			fs, _ := fields(&runs[i])
			xs[i] = *fs[f]
		}
		slices.Sort(xs)
		*loF[f], *medF[f] = xs[0], median(xs)
	}
	for f := range loI {
		for i := range runs {
			_, is := fields(&runs[i])
			xs[i] = float64(*is[f])
		}
		slices.Sort(xs)
		*loI[f], *medI[f] = int64(xs[0]), int64(median(xs))
	}
	return lo, med
}

// WriteJSON writes the report as one JSON object.
func (r *ScaleReport) WriteJSON(w io.Writer) error {
	return writeIndented(w, r)
}

// WriteTable writes the report for people, with the ratios of issue 16's
// targets.
func (r *ScaleReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	runs := max(1, len(r.Runs))
	fmt.Fprintf(tw, "scale: %s, n = %d, dim %d, %d threads, %d run(s)", r.Dataset, r.N, r.Dim, r.Threads, runs)
	if runs > 1 {
		fmt.Fprint(tw, ": median (min)")
	}
	fmt.Fprintf(tw, "\n%s\n\n", r.note)
	v := func(med, lo float64, format string) string {
		s := fmt.Sprintf(format, med)
		if r.Min != nil {
			s += fmt.Sprintf(" ("+format+")", lo)
		}
		return s
	}
	var m ScaleResult
	if r.Min != nil {
		m = *r.Min
	}
	ratio := func(a, b float64) string {
		if b <= 0 {
			return "—"
		}
		return fmt.Sprintf("%.2f×", a/b)
	}
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	rows := [][3]string{
		{"bare index build (engine's options)", v(r.IndexBuildS, m.IndexBuildS, "%.2f s"), ""},
		{"engine load (Put, batches of 1000, fsync)", v(r.LoadS, m.LoadS, "%.2f s"), ratio(r.LoadS, r.IndexBuildS) + " the index build"},
		{"snapshot", v(mib(r.SnapshotBytes), mib(m.SnapshotBytes), "%.1f MiB"), ""},
		{"snapshot read, start to end", v(r.SnapshotReadS, m.SnapshotReadS, "%.3f s"), ""},
		{"open after Close", v(r.OpenS, m.OpenS, "%.2f s"), ratio(r.OpenS, 2*r.SnapshotReadS+1) + " (2 × read + 1 s)"},
		{"engine recall@10 (cosine only)", v(r.RecallAt10, m.RecallAt10, "%.4f"), ""},
		{"engine search p50 (one client)", v(r.SearchP50Ms, m.SearchP50Ms, "%.3f ms"), ratio(r.SearchP50Ms, r.IndexSearchP50Ms) + " the bare index"},
		{"engine search p99", v(r.SearchP99Ms, m.SearchP99Ms, "%.3f ms"), ""},
		{"bare index search p50 (same ef)", v(r.IndexSearchP50Ms, m.IndexSearchP50Ms, "%.3f ms"), ""},
		{"peak RSS during the load", v(mib(r.RSSBytes), mib(m.RSSBytes), "%.1f MiB"), ratio(float64(r.RSSBytes), float64(r.VectorBytes)) + " the vectors"},
		{"vectors (n · dim · 4)", fmt.Sprintf("%.1f MiB", mib(r.VectorBytes)), ""},
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", row[0], row[1], row[2])
	}
	if !r.rssReset && len(r.Runs) > 1 {
		fmt.Fprintln(tw, "\n(the peak RSS could not be reset between runs here: later runs' peaks include earlier ones')")
	}
	return tw.Flush()
}

// waitUnmapped collects garbage until the off-heap arrays of closed
// databases are unmapped (package offheap frees them in cleanups that run
// after a collection finds them unreachable), for at most 10 s.
func waitUnmapped() {
	runtime.GC()
	for deadline := time.Now().Add(10 * time.Second); offheap.Mapped() > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		runtime.GC()
	}
}
