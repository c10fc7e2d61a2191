package kernels_test

import (
	"context"
	"fmt"

	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/temporal"
)

// Candidates from another vector store, rescored by tidemark: the stale
// policy that the other store ranked first is removed, the live event is
// boosted (temporal 1.009) though not past the clearly more similar
// current policy, and each result comes with the signals behind its score.
func ExampleRescore() {
	now := 0.0 // days; the epoch is the query time
	open := temporal.Window{From: -temporal.Open, To: temporal.Open}
	req := kernels.RescoreRequest{
		Time:   temporal.At(now),
		Params: temporal.Preset(temporal.MethodTidemark),
		Candidates: []kernels.RescoreCandidate{
			{Sim: 0.91, HasSim: true, Meta: temporal.Candidate{ID: 101, Kind: temporal.Versioned,
				CreatedAt: -540, Valid: temporal.Window{From: -540, To: -180}, Recorded: open, HalfLife: 90,
				BaseConfidence: 0.90, ConfidenceFrom: -540}},
			{Sim: 0.84, HasSim: true, Meta: temporal.Candidate{ID: 102, Kind: temporal.Versioned,
				CreatedAt: -175, Valid: temporal.Window{From: -180, To: temporal.Open}, Recorded: open, HalfLife: 90,
				BaseConfidence: 0.90, ConfidenceFrom: -175}},
			{Sim: 0.62, HasSim: true, Meta: temporal.Candidate{ID: 103, Kind: temporal.Event,
				CreatedAt: -0.25, Valid: temporal.Window{From: -0.25, To: 1.75}, Recorded: open, HalfLife: 1,
				BaseConfidence: 0.85, ConfidenceFrom: -0.25}},
		},
	}
	res, err := kernels.Rescore(context.Background(), &req)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res.Ranked {
		s := r.Signals
		fmt.Printf("%d score %.3f  sim %.2f temporal %.3f confidence %.3f state %v\n",
			r.ID, r.Score, s.Sim, s.Temporal, s.Confidence, s.State)
	}
	for _, r := range res.Removed {
		fmt.Printf("%d removed: %v\n", r.ID, r.Reason)
	}
	// Output:
	// 102 score 0.754  sim 0.84 temporal 0.260 confidence 0.900 state VALID
	// 103 score 0.575  sim 0.62 temporal 1.009 confidence 0.845 state TEMPORAL
	// 101 removed: EXPIRED_VERSIONED_DOC
}

// Score a small batch on the CPU backend: the superseded row is masked and
// counted, the rest ranked by the tidemark preset.
func ExampleCPU_TopK() {
	b, err := kernels.NewBatch(3, 3)
	if err != nil {
		panic(err)
	}
	open := temporal.Window{From: -temporal.Open, To: temporal.Open}
	rows := []struct {
		vec  []float32
		meta temporal.Candidate
	}{
		{[]float32{1, 0, 0}, temporal.Candidate{ID: 10, Kind: temporal.Versioned, CreatedAt: -200, Valid: open,
			Recorded: temporal.Window{From: -200, To: -20}, HalfLife: 90, BaseConfidence: 0.9, ConfidenceFrom: -200}},
		{[]float32{0.95, 0.3, 0}, temporal.Candidate{ID: 11, Kind: temporal.Versioned, CreatedAt: -20, Valid: open,
			Recorded: temporal.Window{From: -20, To: temporal.Open}, HalfLife: 90, BaseConfidence: 0.9, ConfidenceFrom: -20}},
		{[]float32{0, 1, 0}, temporal.Candidate{ID: 12, Kind: temporal.Static, CreatedAt: -5, Valid: open,
			Recorded: open, HalfLife: 365, BaseConfidence: 0.75, ConfidenceFrom: -5}},
	}
	for _, r := range rows {
		if err := b.Append(r.vec, r.meta, 0); err != nil {
			panic(err)
		}
	}
	q := kernels.Query{Vector: []float32{1, 0.1, 0}, Time: temporal.At(0)}
	p := temporal.Preset(temporal.MethodTidemark)
	hits, stats, err := kernels.DefaultCPU().TopK(context.Background(), b, &q, &p, 2, nil)
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Printf("%d %.3f\n", h.ID, h.Score)
	}
	fmt.Println("scored", stats.Scored, "superseded", stats.Removed[temporal.ReasonSuperseded])
	// Output:
	// 11 0.908
	// 12 0.090
	// scored 2 superseded 1
}

// Two phrasings of a question rescored over the same candidates in one
// batch: each gets its own ranking (the same masks, its own similarities),
// from one pass over the candidates' vectors.
func ExampleRescoreMany() {
	open := temporal.Window{From: -temporal.Open, To: temporal.Open}
	meta := func(id uint64, created float64) temporal.Candidate {
		return temporal.Candidate{ID: id, Kind: temporal.Versioned, CreatedAt: created, Valid: open,
			Recorded: open, HalfLife: 90, BaseConfidence: 0.9, ConfidenceFrom: created}
	}
	req := kernels.RescoreRequest{
		Time:   temporal.At(0),
		Params: temporal.Preset(temporal.MethodTidemark),
		Candidates: []kernels.RescoreCandidate{
			{Vector: []float32{1, 0, 0}, Meta: meta(1, -10)},
			{Vector: []float32{0, 1, 0}, Meta: meta(2, -10)},
			{Vector: []float32{0.7, 0.7, 0}, Meta: meta(3, -400)},
		},
		K: 2,
	}
	queries := [][]float32{{1, 0.1, 0}, {0.1, 1, 0}}
	res, err := kernels.RescoreMany(context.Background(), &req, queries)
	if err != nil {
		fmt.Println(err)
		return
	}
	for j, r := range res {
		fmt.Printf("query %d:", j)
		for _, e := range r.Ranked {
			fmt.Printf(" %d (sim %.2f)", e.ID, e.Signals.Sim)
		}
		fmt.Println()
	}
	// Output:
	// query 0: 1 (sim 1.00) 3 (sim 0.77)
	// query 1: 2 (sim 1.00) 3 (sim 0.77)
}

// The same three memories as in ExampleRescore, held in a Batch (as
// tidemark's own column store holds them), rescored as rows with the
// similarities an index found for them: the same ranking, read from the
// columns where they are.
func ExampleRescoreRows() {
	b, err := kernels.NewBatch(2, 3)
	if err != nil {
		panic(err)
	}
	open := temporal.Window{From: -temporal.Open, To: temporal.Open}
	for _, c := range []temporal.Candidate{
		{ID: 101, Kind: temporal.Versioned, CreatedAt: -540, Valid: temporal.Window{From: -540, To: -180},
			Recorded: open, HalfLife: 90, BaseConfidence: 0.90, ConfidenceFrom: -540},
		{ID: 102, Kind: temporal.Versioned, CreatedAt: -175, Valid: temporal.Window{From: -180, To: temporal.Open},
			Recorded: open, HalfLife: 90, BaseConfidence: 0.90, ConfidenceFrom: -175},
		{ID: 103, Kind: temporal.Event, CreatedAt: -0.25, Valid: temporal.Window{From: -0.25, To: 1.75},
			Recorded: open, HalfLife: 1, BaseConfidence: 0.85, ConfidenceFrom: -0.25},
	} {
		if err := b.Append([]float32{1, 0}, c, 0); err != nil {
			panic(err)
		}
	}
	req := kernels.RescoreRequest{Time: temporal.At(0), Params: temporal.Preset(temporal.MethodTidemark)}
	res, err := kernels.RescoreRows(context.Background(), b, []int{0, 1, 2}, []float64{0.91, 0.84, 0.62}, &req)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res.Ranked {
		fmt.Printf("%d score %.3f state %v\n", r.ID, r.Score, r.Signals.State)
	}
	for _, r := range res.Removed {
		fmt.Printf("%d removed: %v\n", r.ID, r.Reason)
	}
	// Output:
	// 102 score 0.754 state VALID
	// 103 score 0.575 state TEMPORAL
	// 101 removed: EXPIRED_VERSIONED_DOC
}
