package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/eval"
	"github.com/tidemark/tidemark/internal/evalengine"
	"github.com/tidemark/tidemark/temporal"
)

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", stderr)
	corpusPath := fs.String("corpus", "", "corpus file, JSON Lines (required)")
	queriesPath := fs.String("queries", "", "queries file, JSON Lines (required)")
	method := fs.String("method", "tidemark", "scoring method: "+methodList())
	halfLife := fs.Float64("half-life", temporal.SmartVectorHalfLife, "decay half-life in days of memories without a profile")
	perQuery := fs.Bool("per-query", false, "also print every query's ranked ids")
	reference := fs.Bool("reference", false, "evaluate the in-memory reference (eval.Memory) instead of the engine")
	planName := fs.String("plan", "auto", "engine search plan: auto, exact or ann")
	dataDir := fs.String("data", "", "engine data directory to ingest into and keep (default: a temporary one, removed)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *corpusPath == "" || *queriesPath == "" {
		fmt.Fprintln(stderr, "tidemark eval: --corpus and --queries are required")
		fs.Usage()
		return errUsage
	}
	m, err := temporal.ParseMethod(*method)
	if err != nil {
		return err
	}
	plan, err := tidemark.ParsePlan(*planName)
	if err != nil {
		return err
	}
	var searcher eval.Searcher
	if *reference {
		if searcher, err = eval.NewMemory(&eval.MemoryOptions{Method: m, HalfLife: *halfLife}); err != nil {
			return err
		}
	} else {
		// The engine, durable as ever but without fsync: an evaluation
		// that dies is run again, not recovered.
		eng := evalengine.New(&evalengine.Options{Method: m, HalfLife: *halfLife, Plan: plan, Dir: *dataDir, NoSync: true})
		defer eng.Close()
		searcher = eng
	}
	corpus, err := readFile(*corpusPath, eval.ReadCorpus)
	if err != nil {
		return err
	}
	queries, err := readFile(*queriesPath, eval.ReadQueries)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := eval.Run(ctx, searcher, corpus, queries, m.String())
	if err != nil {
		return err
	}
	if !*perQuery {
		rep.PerQuery = nil
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}

func readFile[T any](path string, read func(io.Reader) ([]T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out, err := read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
