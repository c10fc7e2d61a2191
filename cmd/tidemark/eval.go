package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"

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
	firstStage := fs.Int("first-stage", 0, "score only the N memories with the highest cosine per query, superseded ones included, before the masks (engine only; SmartVector's K = 8; see SearchRequest.FirstStage); 0 scores all")
	weightsFlag := fs.String("weights", "", "replace the method's signal weights: sim,time,conf,rel (e.g. 0.5,0.2,0,0.3)")
	keys := fs.String("keys", "auto", "engine key policy: auto (keys extracted from text at ingest, marker-free updates supersede) or explicit (only the corpus's keys)")
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
	var weights *temporal.Weights
	if *weightsFlag != "" {
		if *reference {
			return fmt.Errorf("--weights applies to the engine, not to --reference")
		}
		if weights, err = parseWeights(*weightsFlag); err != nil {
			return err
		}
		if temporal.Preset(m).Combine == temporal.CombineProduct {
			return fmt.Errorf("--weights: method %s multiplies similarity by decay and has no weights", m)
		}
	}
	if *firstStage < 0 || (*firstStage > 0 && *reference) {
		return fmt.Errorf("--first-stage wants a number ≥ 0, and applies to the engine, not to --reference")
	}
	var searcher eval.Searcher
	if *reference {
		if searcher, err = eval.NewMemory(&eval.MemoryOptions{Method: m, HalfLife: *halfLife}); err != nil {
			return err
		}
	} else {
		// The engine, durable as ever but without fsync: an evaluation
		// that dies is run again, not recovered.
		var kp tidemark.KeyPolicy
		if err := kp.UnmarshalText([]byte(*keys)); err != nil {
			return err
		}
		eng := evalengine.New(&evalengine.Options{Method: m, Weights: weights, FirstStage: *firstStage, HalfLife: *halfLife, Plan: plan, Dir: *dataDir, NoSync: true, Keys: kp})
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

// parseWeights reads "sim,time,conf,rel": four finite, non-negative numbers.
func parseWeights(s string) (*temporal.Weights, error) {
	f := strings.Split(s, ",")
	if len(f) != 4 {
		return nil, fmt.Errorf("--weights %q: want four comma-separated numbers sim,time,conf,rel", s)
	}
	var v [4]float64
	for i := range f {
		x, err := strconv.ParseFloat(strings.TrimSpace(f[i]), 64)
		if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("--weights %q: %q is not a finite number ≥ 0", s, f[i])
		}
		v[i] = x
	}
	if v[0]+v[1]+v[2]+v[3] == 0 {
		return nil, fmt.Errorf("--weights %q: every weight is zero", s)
	}
	return &temporal.Weights{Sim: v[0], Time: v[1], Conf: v[2], Rel: v[3]}, nil
}
