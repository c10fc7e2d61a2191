package demo

import (
	"fmt"
	"io"
	"strings"
)

// Write prints the scenarios side by side: the naive cosine ranking, the
// temporal ranking with every signal, and the documents removed before
// ranking with their reason codes.
func Write(w io.Writer, method string, scenarios []Scenario) error {
	ew := &errWriter{w: w}
	rule := strings.Repeat("═", 78)
	for i, s := range scenarios {
		ew.printf("%s\nSCENARIO %d: %s\n%s\n", rule, i+1, s.Query, rule)
		ew.printf("\n  NAIVE COSINE (no temporal awareness)\n")
		for j, n := range s.Naive {
			state := "valid"
			if n.Expired {
				state = "EXPIRED"
			}
			ew.printf("    %d. %-20s age=%5.0fd  %-7s  sim=%.3f\n", j+1, n.ID, n.AgeDays, state, n.Sim)
		}
		ew.printf("\n  TIDEMARK TEMPORAL SCORING (method %s)\n", method)
		ew.printf("    %-22s %-9s %-8s %6s %6s %6s %6s %6s %5s %7s\n",
			"id", "kind", "state", "sim", "vector", "recency", "decay", "tempo", "pen", "FINAL")
		for j, h := range s.Temporal {
			g := h.Signals
			ew.printf("    %d. %-19s %-9s %-8s %6.3f %6.3f %7.3f %6.3f %6.3f %5.2f %7.3f\n",
				j+1, h.ID, h.Kind, g.State, g.Sim, g.SimNorm, g.Recency, g.Decay, g.Temporal, g.Penalty, h.Score)
			ew.printf("       age %.1f days · window %s · %s\n", g.Age, h.Window, h.Why)
		}
		if len(s.Masked) > 0 {
			ew.printf("\n  REMOVED BEFORE RANKING\n")
			for _, m := range s.Masked {
				ew.printf("    %-20s %s\n", m.ID, m.Reason)
			}
		}
		ew.printf("\n  WHAT CHANGED\n    removed  : %s\n    surfaced : %s\n\n",
			list(s.Removed), list(s.Surfaced))
	}
	return ew.err
}

func list(xs []string) string {
	if len(xs) == 0 {
		return "—"
	}
	return strings.Join(xs, ", ")
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
