package main

import (
	"context"
	"io"
	"os"
	"os/signal"

	"github.com/tidemark/tidemark/bench"
	"github.com/tidemark/tidemark/index"
)

func runBenchANN(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench ann", stderr)
	data := fs.String("data", "../shared/data/glove100/glove100", "dataset prefix (PREFIX.meta, .base, .query, .gt)")
	m := fs.Int("m", index.DefaultM, "HNSW M")
	efc := fs.Int("efc", index.DefaultEfConstruction, "efConstruction")
	efs := fs.String("ef", "10,20,40,80,160,320", "search ef values, comma-separated")
	buildThreads := fs.Int("build-threads", 1, "inserting goroutines (hnswlib's harness gets the same)")
	hnswlib := fs.String("hnswlib-src", "../shared/tools/hnswlib-bench/hb.cpp", "hnswlib harness source; empty skips hnswlib")
	coder := fs.String("coder-dir", "tools/coderhnsw-bench", "coder/hnsw harness module; empty skips coder/hnsw")
	quantize := fs.Bool("int8", true, "also measure tidemark walking its graph with int8 codes (tidemark-int8, index.Options.Quantize), on the same graph")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg := bench.ANNConfig{Prefix: *data, M: *m, EfConstruction: *efc, BuildThreads: *buildThreads,
		HnswlibSource: *hnswlib, CoderDir: *coder, Quantize: *quantize, Progress: stderr}
	var err error
	if cfg.Efs, err = intList(*efs); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := bench.RunANN(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}
