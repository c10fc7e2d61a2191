package heldout

import (
	"context"
	"testing"
)

// Targets of the issue: at most 0.5% of the different-fact pairs harmed
// (superseded or penalised), at least 95% of the updates caught.
const (
	maxWrong  = 0.005
	minCaught = 0.95
)

func run(t *testing.T, file string) []Outcome {
	t.Helper()
	pairs, err := Load("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), pairs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func report(t *testing.T, name string, os []Outcome, wantHit bool) float64 {
	hits, rate := Rate(os)
	sup := 0
	for _, o := range os {
		if o.Superseded {
			sup++
		}
		if o.Hit() != wantHit && testing.Verbose() {
			p := o.Pair
			t.Logf("  %s %s | %s%s | %s%s  rules %q", p.ID, p.DiffersIn, p.Old, p.A, p.New, p.B, o.Rules)
		}
	}
	t.Logf("%s: %d/%d = %.4f hit (%d superseded, %d penalised only)", name, hits, len(os), rate, sup, hits-sup)
	return rate
}

// The development pairs: rules may be tuned on them.
func TestDevPairs(t *testing.T) {
	report(t, "dev updates caught", run(t, "dev_updates.jsonl"), true)
	report(t, "dev different facts harmed", run(t, "dev_different.jsonl"), false)
}

// The held-out pairs: measured, never tuned on.
func TestHeldOutPairs(t *testing.T) {
	if testing.Short() {
		t.Skip("held-out pairs take a few seconds")
	}
	if r := report(t, "held-out updates caught", run(t, "test_updates.jsonl"), true); r < minCaught {
		t.Errorf("updates caught %.4f < %.2f", r, minCaught)
	}
	if r := report(t, "held-out different facts harmed", run(t, "test_different.jsonl"), false); r > maxWrong {
		t.Errorf("different facts harmed %.4f > %.3f", r, maxWrong)
	}
}
