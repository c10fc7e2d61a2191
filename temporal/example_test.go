package temporal_test

import (
	"fmt"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// SmartVector §5.1's decay trajectory for a technical document (C0 = 0.85).
func ExampleConfidence() {
	p := temporal.DefaultConfidence()
	for _, day := range []float64{0, 30, 60, 90, 180} {
		c := temporal.Confidence(p, 0.85, day, 0, 0, 0)
		fmt.Printf("day %3.0f: %.3f %v\n", day, c, temporal.NextStatus(temporal.Active, c, p))
	}
	// Output:
	// day   0: 0.850 active
	// day  30: 0.425 active
	// day  60: 0.212 active
	// day  90: 0.106 dormant
	// day 180: 0.013 dormant
}

// A superseded policy never outranks its successor, however similar it is:
// tidemark's preset masks what is no longer believed.
func ExampleScorePool() {
	old := temporal.Candidate{ID: 1, Sim: 0.92, Kind: temporal.Versioned, CreatedAt: -400,
		Valid: temporal.Window{From: -400, To: -30}, Recorded: temporal.Window{From: -400, To: -30},
		HalfLife: 90, BaseConfidence: 0.9, ConfidenceFrom: -400}
	cur := temporal.Candidate{ID: 2, Sim: 0.71, Kind: temporal.Versioned, CreatedAt: -30,
		Valid: temporal.Window{From: -30, To: temporal.Open}, Recorded: temporal.Window{From: -30, To: temporal.Open},
		HalfLife: 90, BaseConfidence: 0.9, ConfidenceFrom: -30}
	res, err := temporal.ScorePool(temporal.At(0), temporal.Preset(temporal.MethodTidemark), []temporal.Candidate{old, cur})
	if err != nil {
		panic(err)
	}
	for _, r := range res.Ranked {
		fmt.Printf("ranked  %d score %.3f\n", r.ID, r.Score)
	}
	for _, r := range res.Removed {
		fmt.Printf("removed %d %v\n", r.ID, r.Reason)
	}
	// As of a year ago, the old policy was the one in force.
	res, _ = temporal.ScorePool(temporal.At(-365), temporal.Preset(temporal.MethodTidemark), []temporal.Candidate{old, cur})
	fmt.Printf("as of day -365: %d ranked, %d removed (%v)\n", res.Ranked[0].ID, res.Removed[0].ID, res.Removed[0].Reason)
	// Output:
	// ranked  2 score 0.657
	// removed 1 SUPERSEDED
	// as of day -365: 1 ranked, 2 removed (NOT_YET_RECORDED)
}

func ExampleParseTimeRange() {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	r, ok := temporal.ParseTimeRange("Show me research from 2021 to 2023", now)
	fmt.Println(r, ok)
	_, ok = temporal.ParseTimeRange("Latest embeddings research", now)
	fmt.Println(ok)
	// Output:
	// [2021-01-01 → 2023-12-31] true
	// false
}
