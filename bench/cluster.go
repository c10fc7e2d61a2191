package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/internal/pgstore"
	"github.com/tidemark/tidemark/temporal"
)

// ClusterConfig configures RunCluster: tidemark nodes sharing one
// PostgreSQL database (issue 20), in this process.
type ClusterConfig struct {
	// Store is a PostgreSQL URL whose user may create databases: each run
	// creates a database of its own there and drops it after.
	Store string
	// Data, Dim and N are the vectors, as for ScaleConfig (default the
	// GloVe-100 file set lifted to 768 dimensions, all of it).
	Data string
	Dim  int
	N    int
	// Queries is the number of distinct query vectors the searches cycle
	// through; Searches the number of searches per throughput level.
	Queries, Searches int
	// Clients is the number of concurrent searchers (default 2).
	Clients int
	// Follow is the number of single writes timed from one node to the
	// other (default 200).
	Follow int
	// Runs is the number of complete runs (default 3).
	Runs     int
	Progress io.Writer
}

// ClusterResult is one run.
type ClusterResult struct {
	Dataset string `json:"dataset"`
	N       int    `json:"n"`
	Dim     int    `json:"dim"`
	Threads int    `json:"threads"`
	// IngestS is the time node A took to write the N memories (Put in
	// batches of 1000: each one transaction committing one change),
	// while node B followed; IngestPerS is N / IngestS. BCaughtUpS is how
	// long after the last Put returned B had applied it.
	IngestS    float64 `json:"ingest_s"`
	IngestPerS float64 `json:"ingest_per_s"`
	BCaughtUpS float64 `json:"b_caught_up_s"`
	// EmbeddedIngestS is the baseline of the same run: the same Puts into
	// one embedded database (its own log, fsync on), no second node.
	EmbeddedIngestS float64 `json:"embedded_ingest_s"`
	// WriteP50Ms and WriteP99Ms time a write of one memory on A, commit
	// and apply included. FollowP50Ms and FollowP99Ms time the same
	// writes from the moment A's Put began until B had applied them: an
	// upper bound on commit → searchable on another node.
	WriteP50Ms  float64 `json:"write_p50_ms"`
	WriteP99Ms  float64 `json:"write_p99_ms"`
	FollowP50Ms float64 `json:"follow_p50_ms"`
	FollowP99Ms float64 `json:"follow_p99_ms"`
	// CheckpointS is A's checkpoint: the snapshot written into
	// PostgreSQL (SnapshotBytes in the table). StartupS is a new node's
	// OpenPostgres: the snapshot read back and the index loaded.
	CheckpointS   float64 `json:"checkpoint_s"`
	SnapshotBytes int64   `json:"snapshot_bytes"`
	StartupS      float64 `json:"startup_s"`
	// SearchQPS1 is the search throughput of Clients searchers on node A
	// alone, SearchQPS2 the same searchers spread over A and B (k = 10,
	// cosine-only). Both nodes share this machine's cores.
	Clients    int     `json:"clients"`
	SearchQPS1 float64 `json:"search_qps_1_node"`
	SearchQPS2 float64 `json:"search_qps_2_nodes"`
}

// ClusterReport is RunCluster's result: the median of every field at the
// top level and, with more than one run, the runs and the min.
type ClusterReport struct {
	ClusterResult
	Runs   []ClusterResult `json:"runs,omitempty"`
	Min    *ClusterResult  `json:"min,omitempty"`
	Median *ClusterResult  `json:"median,omitempty"`
	Note   string          `json:"note"`
}

// RunCluster runs the cluster benchmark.
func RunCluster(ctx context.Context, cfg ClusterConfig) (*ClusterReport, error) {
	c := cfg
	if c.Store == "" {
		return nil, fmt.Errorf("bench: cluster: no PostgreSQL URL (--store, or TIDEMARK_PG_URL)")
	}
	if c.Data == "" {
		c.Data = DefaultData
	}
	if c.Dim == 0 {
		c.Dim = 768
	}
	if c.Queries == 0 {
		c.Queries = 1000
	}
	if c.Searches == 0 {
		c.Searches = 4000
	}
	if c.Clients == 0 {
		c.Clients = 2
	}
	if c.Follow == 0 {
		c.Follow = 200
	}
	if c.Runs == 0 {
		c.Runs = 3
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
	if c.N > d.N || c.Queries > d.NQ {
		return nil, fmt.Errorf("bench: cluster: %s has %d vectors and %d queries, fewer than n = %d or %d queries", d.Name, d.N, d.NQ, c.N, c.Queries)
	}
	queries, err := d.Queries(c.Queries)
	if err != nil {
		return nil, err
	}
	rep := &ClusterReport{Note: d.Note + ". Both nodes run in this process and share its cores; PostgreSQL runs on the same machine."}
	for r := range c.Runs {
		res, err := clusterRun(ctx, &c, d, queries, say)
		if err != nil {
			return nil, err
		}
		say("run %d: ingest %.1f s (%.0f/s), follow p50 %.2f ms p99 %.2f ms, startup %.2f s, search %.0f q/s (1 node) %.0f q/s (2 nodes)",
			r+1, res.IngestS, res.IngestPerS, res.FollowP50Ms, res.FollowP99Ms, res.StartupS, res.SearchQPS1, res.SearchQPS2)
		rep.Runs = append(rep.Runs, res)
	}
	lo, med := aggregateCluster(rep.Runs)
	rep.ClusterResult = med
	if len(rep.Runs) > 1 {
		rep.Min, rep.Median = &lo, &med
	} else {
		rep.Runs = nil
	}
	return rep, nil
}

func clusterRun(ctx context.Context, c *ClusterConfig, d *VectorSet, queries []float32, say func(string, ...any)) (res ClusterResult, err error) {
	res = ClusterResult{Dataset: d.Name, N: c.N, Dim: c.Dim, Threads: runtime.GOMAXPROCS(0), Clients: c.Clients}
	dbURL, drop, err := pgstore.CreateDatabase(ctx, c.Store, "tidemark_bench_")
	if err != nil {
		return res, fmt.Errorf("bench: cluster: %w", err)
	}
	defer drop()
	opts := &tidemark.Options{CheckpointRecords: -1, CheckpointBytes: -1}
	a, err := tidemark.OpenPostgres(ctx, dbURL, "", opts)
	if err != nil {
		return res, err
	}
	defer a.Close()
	b, err := tidemark.OpenPostgres(ctx, dbURL, "", opts)
	if err != nil {
		return res, err
	}
	defer b.Close()
	ca, err := a.CreateCollection(ctx, "cluster", &tidemark.CollectionOptions{Dim: c.Dim, Method: temporal.MethodPlain})
	if err != nil {
		return res, err
	}
	ingest := func(coll *tidemark.Collection, progress func(w int)) (float64, error) {
		t0 := time.Now()
		for w := 0; w < c.N; w += 1000 {
			m := min(1000, c.N-w)
			vecs := make([]float32, m*c.Dim)
			if err := d.Fill(w, w+m, vecs, runtime.GOMAXPROCS(0)); err != nil {
				return 0, err
			}
			batch := make([]tidemark.Memory, m)
			for i := range batch {
				batch[i] = tidemark.Memory{ID: fmt.Sprint("v", w+i), Text: fmt.Sprint("vector ", w+i), Vector: vecs[i*c.Dim : (i+1)*c.Dim]}
			}
			if _, err := coll.Put(ctx, batch); err != nil {
				return 0, err
			}
			if w%20000 == 0 && w > 0 && progress != nil {
				progress(w)
			}
		}
		return time.Since(t0).Seconds(), nil
	}
	// The baseline first: one embedded database, same Puts.
	if res.EmbeddedIngestS, err = embeddedIngest(ctx, c, ingest); err != nil {
		return res, err
	}
	res.IngestS, err = ingest(ca, func(w int) { say("ingested %d of %d (B is %d changes behind)", w, c.N, a.Seq()-b.Seq()) })
	if err != nil {
		return res, err
	}
	res.IngestPerS = float64(c.N) / res.IngestS
	t1 := time.Now()
	if err := b.WaitApplied(ctx, a.Seq()); err != nil {
		return res, err
	}
	res.BCaughtUpS = time.Since(t1).Seconds()
	cb, err := b.Collection("cluster")
	if err != nil {
		return res, err
	}

	// Single writes, A to B.
	write, follow := make([]float64, c.Follow), make([]float64, c.Follow)
	v := make([]float32, c.Dim)
	for i := range c.Follow {
		if err := d.Base(i%d.N, v); err != nil {
			return res, err
		}
		start := time.Now()
		if _, err := ca.Put(ctx, []tidemark.Memory{{ID: fmt.Sprint("f", i), Text: "follow", Vector: v}}); err != nil {
			return res, err
		}
		write[i] = msSince(start)
		if err := b.WaitApplied(ctx, a.Seq()); err != nil {
			return res, err
		}
		follow[i] = msSince(start)
	}
	slices.Sort(write)
	slices.Sort(follow)
	res.WriteP50Ms, res.WriteP99Ms = percentile(write, 0.50), percentile(write, 0.99)
	res.FollowP50Ms, res.FollowP99Ms = percentile(follow, 0.50), percentile(follow, 0.99)

	// A snapshot into the database, and a node starting from it.
	t2 := time.Now()
	if err := a.Checkpoint(ctx); err != nil {
		return res, err
	}
	res.CheckpointS = time.Since(t2).Seconds()
	if conn, err := pgx.Connect(ctx, dbURL); err == nil {
		conn.QueryRow(ctx, `SELECT COALESCE(sum(length(data)), 0) FROM tidemark_snapshot_parts`).Scan(&res.SnapshotBytes)
		conn.Close(ctx)
	}
	t3 := time.Now()
	n, err := tidemark.OpenPostgres(ctx, dbURL, "", opts)
	if err != nil {
		return res, err
	}
	res.StartupS = time.Since(t3).Seconds()
	n.Close()

	// Search throughput: the same clients on one node, then on two.
	nq := len(queries) / c.Dim
	searchAll := func(colls []*tidemark.Collection) (float64, error) {
		var next atomic.Int64
		var wg sync.WaitGroup
		var firstErr error
		var once sync.Once
		start := time.Now()
		for cl := range c.Clients {
			coll := colls[cl%len(colls)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= c.Searches {
						return
					}
					q := queries[(i%nq)*c.Dim : (i%nq+1)*c.Dim]
					if _, err := coll.Search(ctx, &tidemark.SearchRequest{Vector: q, K: 10}); err != nil {
						once.Do(func() { firstErr = err })
						return
					}
				}
			}()
		}
		wg.Wait()
		return float64(c.Searches) / time.Since(start).Seconds(), firstErr
	}
	if _, err := searchAll([]*tidemark.Collection{ca, cb}); err != nil { // warm both
		return res, err
	}
	if res.SearchQPS1, err = searchAll([]*tidemark.Collection{ca}); err != nil {
		return res, err
	}
	if res.SearchQPS2, err = searchAll([]*tidemark.Collection{ca, cb}); err != nil {
		return res, err
	}
	return res, nil
}

// embeddedIngest times ingest into a new embedded database.
func embeddedIngest(ctx context.Context, c *ClusterConfig, ingest func(*tidemark.Collection, func(int)) (float64, error)) (float64, error) {
	dir, err := os.MkdirTemp("", "tidemark-bench-cluster-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	db, err := tidemark.Open(dir, &tidemark.Options{CheckpointRecords: -1, CheckpointBytes: -1})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	coll, err := db.CreateCollection(ctx, "cluster", &tidemark.CollectionOptions{Dim: c.Dim, Method: temporal.MethodPlain})
	if err != nil {
		return 0, err
	}
	return ingest(coll, nil)
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

func aggregateCluster(runs []ClusterResult) (lo, med ClusterResult) {
	return aggregateRuns(runs, func(r *ClusterResult) ([]*float64, []*int64) {
		return []*float64{&r.IngestS, &r.IngestPerS, &r.BCaughtUpS, &r.EmbeddedIngestS, &r.WriteP50Ms, &r.WriteP99Ms,
			&r.FollowP50Ms, &r.FollowP99Ms, &r.CheckpointS, &r.StartupS, &r.SearchQPS1, &r.SearchQPS2}, []*int64{&r.SnapshotBytes}
	})
}

// WriteJSON writes the report as one JSON object.
func (r *ClusterReport) WriteJSON(w io.Writer) error { return writeIndented(w, r) }

// WriteTable writes the report for people.
func (r *ClusterReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	runs := max(1, len(r.Runs))
	fmt.Fprintf(tw, "cluster: %s, n = %d, dim %d, %d threads, %d run(s)", r.Dataset, r.N, r.Dim, r.Threads, runs)
	if r.Min != nil {
		fmt.Fprint(tw, ": median (min)")
	}
	fmt.Fprintf(tw, "\n%s\n\n", r.Note)
	var m ClusterResult
	if r.Min != nil {
		m = *r.Min
	}
	v := func(med, lo float64, format string) string {
		s := fmt.Sprintf(format, med)
		if r.Min != nil {
			s += fmt.Sprintf(" ("+format+")", lo)
		}
		return s
	}
	rows := [][2]string{
		{"ingest into PostgreSQL (node A, batches of 1000)", v(r.IngestS, m.IngestS, "%.1f s")},
		{"ingest rate", v(r.IngestPerS, m.IngestPerS, "%.0f memories/s")},
		{"baseline: the same ingest into one embedded database", v(r.EmbeddedIngestS, m.EmbeddedIngestS, "%.1f s") + fmt.Sprintf(" (PostgreSQL with a follower: %.2f×)", r.IngestS/max(r.EmbeddedIngestS, 1e-9))},
		{"node B caught up after the last batch", v(r.BCaughtUpS, m.BCaughtUpS, "%.2f s")},
		{"one-memory write on A, p50 / p99", v(r.WriteP50Ms, m.WriteP50Ms, "%.2f ms") + " / " + v(r.WriteP99Ms, m.WriteP99Ms, "%.2f ms")},
		{"write start on A → applied on B, p50 / p99", v(r.FollowP50Ms, m.FollowP50Ms, "%.2f ms") + " / " + v(r.FollowP99Ms, m.FollowP99Ms, "%.2f ms")},
		{"checkpoint (snapshot into PostgreSQL)", v(r.CheckpointS, m.CheckpointS, "%.2f s") + fmt.Sprintf(", %.1f MiB", float64(r.SnapshotBytes)/(1<<20))},
		{"new node start-up (snapshot from PostgreSQL)", v(r.StartupS, m.StartupS, "%.2f s")},
		{fmt.Sprintf("search, %d clients on 1 node", r.Clients), v(r.SearchQPS1, m.SearchQPS1, "%.0f q/s")},
		{fmt.Sprintf("search, %d clients on 2 nodes", r.Clients), v(r.SearchQPS2, m.SearchQPS2, "%.0f q/s")},
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	return tw.Flush()
}
