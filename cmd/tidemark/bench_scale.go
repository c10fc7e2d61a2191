package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime"

	"github.com/tidemark/tidemark/bench"
)

func runBenchScale(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench scale", stderr)
	data := fs.String("data", bench.DefaultData, "vectors: an ANN dataset prefix (lifted to --dim), \""+bench.DataSynthetic+"\" (clustered, synthetic) or \""+bench.DataGaussian+"\" (random, the worst case)")
	dim := fs.Int("dim", 768, "vector dimension (a dataset file's vectors are lifted to it orthonormally)")
	n := fs.Int("n", 0, "memories (default: the whole dataset file; 100000 for synthetic and gaussian)")
	threads := fs.Int("threads", runtime.GOMAXPROCS(0), "GOMAXPROCS for the run, and the bare index's inserting goroutines")
	queries := fs.Int("queries", 1000, "searches (at most the dataset file's queries)")
	runs := fs.Int("runs", 3, "complete runs; the report gives the median and, with more than one, the min")
	dir := fs.String("dir", "", "where each run's database goes (default the temporary directory)")
	f32Walk := fs.Bool("float32", false, "build the bare index without int8 codes and walk its float32 vectors (the engine walks int8 codes)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := bench.RunScale(ctx, bench.ScaleConfig{Data: *data, Dim: *dim, N: *n, Threads: *threads, Queries: *queries,
		Runs: *runs, Dir: *dir, Float32Walk: *f32Walk, Progress: stderr})
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}

// runBenchFilter measures filtered search on realistic vectors.
func runBenchFilter(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench filter", stderr)
	data := fs.String("data", bench.DefaultData, "vectors: an ANN dataset prefix (lifted to --dim), \""+bench.DataSynthetic+"\" or \""+bench.DataGaussian+"\"")
	dim := fs.Int("dim", 768, "vector dimension")
	n := fs.Int("n", 0, "memories (default 100000, or the whole dataset file when smaller)")
	queries := fs.Int("queries", 200, "searches per selectivity")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := bench.RunFilter(ctx, bench.FilterConfig{Data: *data, Dim: *dim, N: *n, Queries: *queries, Progress: stderr})
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}

// runBenchCluster measures tidemark nodes sharing one PostgreSQL
// database.
func runBenchCluster(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench cluster", stderr)
	store := fs.String("store", os.Getenv("TIDEMARK_PG_URL"), "PostgreSQL URL whose user may create databases (env TIDEMARK_PG_URL); each run uses a database of its own, dropped after")
	data := fs.String("data", bench.DefaultData, "vectors: an ANN dataset prefix (lifted to --dim), \""+bench.DataSynthetic+"\" or \""+bench.DataGaussian+"\" (the worst case)")
	dim := fs.Int("dim", 768, "vector dimension")
	n := fs.Int("n", 0, "memories (default: the whole dataset file; 100000 for synthetic and gaussian)")
	clients := fs.Int("clients", 2, "concurrent searchers")
	searches := fs.Int("searches", 4000, "searches per throughput level")
	follow := fs.Int("follow", 200, "single writes timed from node A to node B")
	runs := fs.Int("runs", 3, "complete runs; the report gives the median and, with more than one, the min")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := bench.RunCluster(ctx, bench.ClusterConfig{Store: *store, Data: *data, Dim: *dim, N: *n, Clients: *clients,
		Searches: *searches, Follow: *follow, Runs: *runs, Progress: stderr})
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}
