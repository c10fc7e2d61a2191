package driftsim_test

import (
	"context"
	"fmt"

	"github.com/tidemark/tidemark/internal/driftsim"
)

// Three regime shifts: a memory that forgets at a moderate rate tracks the
// current regime best, one that never forgets worst.
func ExampleRun() {
	res, err := driftsim.Run(context.Background(), driftsim.Config{
		Seeds:     5,
		Scenarios: []driftsim.Scenario{driftsim.RegimeShifts},
		Methods:   []driftsim.Method{driftsim.NoDecay, driftsim.Static02, driftsim.TimeWeighted001},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range res.Scenarios[0].Methods {
		fmt.Printf("%d %v\n", m.Rank, m.Method)
	}
	// Output:
	// 3 no_decay
	// 1 static_0.2
	// 2 time_weighted_0.01
}
