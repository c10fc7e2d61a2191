package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/tidemark/tidemark/bench"
)

func runBenchEngine(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench engine", stderr)
	dir := fs.String("dir", "", "where the databases go (default a temporary directory, removed)")
	data := fs.String("data", bench.DefaultData, "vectors: an ANN dataset prefix (lifted to --dim), \""+bench.DataSynthetic+"\" (clustered, synthetic) or \""+bench.DataGaussian+"\" (random, the worst case)")
	dim := fs.Int("dim", 768, "vector dimension (a dataset file's vectors are lifted to it orthonormally)")
	textBytes := fs.Int("text-bytes", 512, "text bytes per memory")
	batches := fs.String("batches", "1,100,1000", "Put batch sizes, comma-separated")
	writes := fs.Int("writes", 2000, "memories written per batch size")
	n := fs.Int("n", 100000, "collection size for the open and recovery times (0 skips them)")
	tail := fs.Int("tail", 10000, "records after the last snapshot in the crash image")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg := bench.EngineConfig{Dir: *dir, Data: *data, Dim: *dim, TextBytes: *textBytes, Writes: *writes, N: *n, Tail: *tail, Progress: stderr}
	if *n == 0 {
		cfg.N = -1
	}
	var err error
	if cfg.Batches, err = intList(*batches); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := bench.RunEngine(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}

func runBenchConsolidate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench consolidate", stderr)
	n := fs.Int("n", 20000, "memories")
	dim := fs.Int("dim", 384, "vector dimension")
	queries := fs.Int("queries", 2000, "searches per latency measurement")
	data := fs.String("data", bench.DefaultData, "vectors: an ANN dataset prefix (lifted to --dim), \""+bench.DataSynthetic+"\" (clustered, synthetic) or \""+bench.DataGaussian+"\" (random, the worst case)")
	noBusy := fs.Bool("no-busy", false, "skip the second build searched while consolidation runs")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := bench.RunConsolidate(ctx, bench.ConsolidateConfig{N: *n, Dim: *dim, Queries: *queries, Data: *data, NoBusy: *noBusy, Progress: stderr})
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}

func runBenchServe(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench serve", stderr)
	data := fs.String("data", bench.DefaultData, "vectors: an ANN dataset prefix (lifted to --dim), \""+bench.DataSynthetic+"\" (clustered, synthetic) or \""+bench.DataGaussian+"\" (random, the worst case)")
	n := fs.Int("n", 0, "memories in the collection (default: the whole dataset file; 100000 for synthetic and gaussian)")
	dim := fs.Int("dim", 768, "vector dimension (a dataset file's vectors are lifted to it orthonormally)")
	clients := fs.String("clients", "1,2,4,8", "concurrency levels, comma-separated, measured one after another")
	duration := fs.Duration("duration", 30*time.Second, "load duration per level")
	requests := fs.Int("requests", 1000000, "at most this many requests per level")
	writeShare := fs.Float64("write-share", 0.1, "fraction of requests that are upserts")
	abuse := fs.Bool("abuse", false, "instead of the load test, replay the hardening probe's attacks (stalled bodies and headers, many connections, token guessing, huge answers, bad input, a shutdown under stalled connections) against a server on loopback and report how each was handled; --n and --dim size its collection (default 20000 × 384)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	levels, err := intList(*clients)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *abuse {
		say := func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }
		dims := 0
		if flagGiven(fs, "dim") {
			dims = *dim
		}
		ar, err := bench.Abuse(ctx, bench.AbuseConfig{N: *n, Dim: dims}, say)
		if err != nil {
			return err
		}
		if *asJSON {
			return ar.WriteJSON(stdout)
		}
		return ar.WriteTable(stdout)
	}
	rep, err := bench.RunServe(ctx, bench.ServeConfig{Data: *data, N: *n, Dim: *dim, Clients: levels, Duration: *duration, Requests: *requests,
		WriteShare: *writeShare, Progress: stderr})
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}

// flagGiven reports whether the command line set flag name.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
