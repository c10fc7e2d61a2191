package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/tidemark/tidemark/bench"
	"github.com/tidemark/tidemark/cuda"
	"github.com/tidemark/tidemark/temporal"
)

// workload is one benchmark of "tidemark bench".
type workload struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// workloads are the benchmarks "tidemark bench" dispatches, in the order
// its usage lists them.
func workloads() []workload {
	return []workload{
		{"kernels", "the fused scoring stage against the copy and read bandwidth, the FMA peak and a plain Go loop", runBenchKernels},
		{"ann", "the HNSW index on an ANN dataset, beside hnswlib and coder/hnsw in the same run", runBenchANN},
		{"engine", "Put throughput per batch size against the bare log, and open/recovery times", runBenchEngine},
		{"scale", "the engine at production shape (load, snapshot, open, recall, search, RSS) beside a bare index, same run", runBenchScale},
		{"filter", "metadata-filtered search: the ANN plan's recall@10 against the exact plan at 1%, 10% and 50% selectivity, and latency", runBenchFilter},
		{"consolidate", "consolidation cost per 10k memories, and search latency while it runs", runBenchConsolidate},
		{"serve", "a load test of tidemark serve on loopback: concurrent searches and upserts", runBenchServe},
		{"cluster", "nodes sharing one PostgreSQL database: ingest, follow latency, node start-up, search on 1 and 2 nodes", runBenchCluster},
		{"quality", "the sources' quality benchmarks rebuilt (SmartVector, MemStrata, VDD), with their published numbers beside ours", runBenchQuality},
	}
}

func runBench(args []string, stdout, stderr io.Writer) error {
	ws := workloads()
	if len(args) >= 2 && args[0] == "--cpuprofile" {
		// A CPU profile of the whole workload, for finding where its
		// time goes (go tool pprof FILE).
		f, err := os.Create(args[1])
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
		args = args[2:]
	}
	if len(args) > 0 {
		for _, w := range ws {
			if w.name == args[0] {
				return w.run(args[1:], stdout, stderr)
			}
		}
	}
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = w.name
	}
	fmt.Fprintf(stderr, "usage: tidemark bench [--cpuprofile FILE] %s [flags]\n\nworkloads:\n", strings.Join(names, "|"))
	for _, w := range ws {
		fmt.Fprintf(stderr, "  %-12s %s\n", w.name, w.summary)
	}
	return errUsage
}

func runBenchKernels(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench kernels", stderr)
	ns := fs.String("n", "10000,100000,1000000", "batch sizes, comma-separated")
	dims := fs.String("dim", "384,768,1536", "vector dimensions, comma-separated")
	queries := fs.String("queries", "1,8,16,32,64,256", "queries per call, comma-separated")
	k := fs.Int("k", 10, "results per query")
	repeats := fs.Int("repeats", 5, "timed calls per row (min and median are reported)")
	method := fs.String("method", "tidemark", "scoring method: "+methodList())
	copyMiB := fs.Int("copy-mib", 512, "size of the memory-copy and read baselines in MiB")
	asJSON := fs.Bool("json", false, "print JSON")
	backend := fs.String("backend", "cpu", "the fused stage to measure: cpu, or cuda (the GPU through libcuda: $TIDEMARK_LIBCUDA or "+cuda.DefaultLibrary+"; then --n defaults to 100000,1000000,10000000, the sizes that fit, and --queries to 1,64)")
	bf16 := fs.Bool("bf16", false, "with --backend cuda: keep the corpus on the device as bfloat16")
	if err := parse(fs, args); err != nil {
		return err
	}
	m, err := temporal.ParseMethod(*method)
	if err != nil {
		return err
	}
	cfg := bench.KernelsConfig{K: *k, Repeats: *repeats, Method: m, CopyBytes: *copyMiB << 20, Progress: stderr, BF16: *bf16}
	switch *backend {
	case "cpu":
	case "cuda":
		dev, err := cuda.Open(nil)
		if err != nil {
			return fmt.Errorf("--backend cuda: %w", err)
		}
		defer dev.Close()
		cfg.CUDA = dev
	default:
		return fmt.Errorf("--backend %q: want cpu or cuda", *backend)
	}
	for _, f := range []struct {
		s   string
		dst *[]int
	}{{*ns, &cfg.Ns}, {*dims, &cfg.Dims}, {*queries, &cfg.Queries}} {
		if *f.dst, err = intList(f.s); err != nil {
			return err
		}
	}
	if cfg.CUDA != nil {
		// The GPU's own matrix unless the flags say otherwise: 1e5 to
		// 1e7 rows (those that fit), one query and 64.
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["n"] {
			cfg.Ns = []int{100_000, 1_000_000, 10_000_000}
		}
		if !set["queries"] {
			cfg.Queries = []int{1, 64}
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
