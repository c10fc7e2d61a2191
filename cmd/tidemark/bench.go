package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/tidemark/tidemark/bench"
	"github.com/tidemark/tidemark/temporal"
)

func runBench(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "kernels" && args[0] != "ann") {
		fmt.Fprintln(stderr, "usage: tidemark bench kernels|ann [flags]\n\nworkloads:\n  kernels   the fused scoring stage against the memory copy bandwidth and a plain Go loop\n  ann       the HNSW index on an ANN dataset, beside hnswlib and coder/hnsw in the same run")
		return errUsage
	}
	if args[0] == "ann" {
		return runBenchANN(args[1:], stdout, stderr)
	}
	fs := newFlags("bench kernels", stderr)
	ns := fs.String("n", "10000,100000,1000000", "batch sizes, comma-separated")
	dims := fs.String("dim", "384,768,1536", "vector dimensions, comma-separated")
	queries := fs.String("queries", "1,64", "queries per call, comma-separated")
	k := fs.Int("k", 10, "results per query")
	repeats := fs.Int("repeats", 5, "timed calls per row (min and median are reported)")
	method := fs.String("method", "tidemark", "scoring method: "+methodList())
	copyMiB := fs.Int("copy-mib", 512, "size of the memory-copy baseline in MiB")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	m, err := temporal.ParseMethod(*method)
	if err != nil {
		return err
	}
	cfg := bench.KernelsConfig{K: *k, Repeats: *repeats, Method: m, CopyBytes: *copyMiB << 20, Progress: stderr}
	for _, f := range []struct {
		s   string
		dst *[]int
	}{{*ns, &cfg.Ns}, {*dims, &cfg.Dims}, {*queries, &cfg.Queries}} {
		if *f.dst, err = intList(f.s); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := bench.RunKernels(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("bad number %q in %q", f, s)
		}
		out = append(out, v)
	}
	return out, nil
}

func runBenchANN(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench ann", stderr)
	data := fs.String("data", "../shared/data/glove100/glove100", "dataset prefix (PREFIX.meta, .base, .query, .gt)")
	m := fs.Int("m", 16, "HNSW M")
	efc := fs.Int("efc", 100, "efConstruction")
	efs := fs.String("ef", "10,20,40,80,160,320", "search ef values, comma-separated")
	buildThreads := fs.Int("build-threads", 1, "inserting goroutines (hnswlib's harness gets the same)")
	hnswlib := fs.String("hnswlib-src", "../shared/tools/hnswlib-bench/hb.cpp", "hnswlib harness source; empty skips hnswlib")
	coder := fs.String("coder-dir", "tools/coderhnsw-bench", "coder/hnsw harness module; empty skips coder/hnsw")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg := bench.ANNConfig{Prefix: *data, M: *m, EfConstruction: *efc, BuildThreads: *buildThreads,
		HnswlibSource: *hnswlib, CoderDir: *coder, Progress: stderr}
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
