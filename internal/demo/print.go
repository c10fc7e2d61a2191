package demo

import (
	"io"
	"strings"

	"github.com/tidemark/tidemark/internal/textout"
)

// Write prints the scenarios side by side: the naive cosine ranking, the
// temporal ranking with every signal, and the documents removed before
// ranking with their reason codes.
func Write(w io.Writer, method string, scenarios []Scenario) error {
	ew := &textout.Writer{W: w}
	rule := strings.Repeat("═", 78)
	for i, s := range scenarios {
		ew.Printf("%s\nSCENARIO %d: %s\n%s\n", rule, i+1, s.Query, rule)
		ew.Printf("\n  NAIVE COSINE (no temporal awareness)\n")
		for j, n := range s.Naive {
			state := "valid"
			if n.Expired {
				state = "EXPIRED"
			}
			ew.Printf("    %d. %-20s age=%5.0fd  %-7s  sim=%.3f\n", j+1, n.ID, n.AgeDays, state, n.Sim)
		}
		ew.Printf("\n  TIDEMARK TEMPORAL SCORING (method %s)\n", method)
		ew.Printf("    %-22s %-9s %-8s %6s %6s %6s %6s %6s %5s %7s\n",
			"id", "kind", "state", "sim", "vector", "recency", "decay", "tempo", "pen", "FINAL")
		for j, h := range s.Temporal {
			g := h.Signals
			ew.Printf("    %d. %-19s %-9s %-8s %6.3f %6.3f %7.3f %6.3f %6.3f %5.2f %7.3f\n",
				j+1, h.ID, h.Kind, g.State, g.Sim, g.SimNorm, g.Recency, g.Decay, g.Temporal, g.Penalty, h.Score)
			ew.Printf("       age %.1f days · window %s · %s\n", g.Age, h.Window, h.Why)
		}
		if len(s.Masked) > 0 {
			ew.Printf("\n  REMOVED BEFORE RANKING\n")
			for _, m := range s.Masked {
				ew.Printf("    %-20s %s\n", m.ID, m.Reason)
			}
		}
		ew.Printf("\n  WHAT CHANGED\n    removed  : %s\n    surfaced : %s\n\n",
			list(s.Removed), list(s.Surfaced))
	}
	return ew.Err
}

func list(xs []string) string {
	if len(xs) == 0 {
		return "—"
	}
	return strings.Join(xs, ", ")
}
