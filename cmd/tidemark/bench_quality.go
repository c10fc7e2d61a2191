package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/tidemark/tidemark/bench"
)

func runBenchQuality(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench quality", stderr)
	out := fs.String("out", "quality-results", "directory for the datasets (NAME.corpus.jsonl, NAME.queries.jsonl) and report.md/report.json; empty writes nothing")
	seed := fs.Uint64("seed", 7, "seed of the generated benchmarks (0 means 7)")
	only := fs.String("only", "", "comma-separated subset of "+strings.Join(bench.QualityBenchmarks, ",")+" (default all)")
	vdd := fs.String("vdd-data", "../shared/data/vdd", "directory of the VDD fact sets and embeddings.json")
	splitData := fs.String("split-data", "internal/heldout/split", "directory of the Split sets (dev/, final/)")
	subwords := fs.Bool("subwords", false, "embed text with character n-grams beside the words (the engine's offline default) instead of words alone (the published runs)")
	asJSON := fs.Bool("json", false, "print JSON instead of the markdown report")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg := bench.QualityConfig{Out: *out, Seed: *seed, VDDData: *vdd, SplitData: *splitData, Progress: stderr, Subwords: *subwords}
	if *only != "" {
		for _, b := range strings.Split(*only, ",") {
			cfg.Only = append(cfg.Only, strings.TrimSpace(b))
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := bench.RunQuality(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteMarkdown(stdout)
}
