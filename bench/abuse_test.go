package bench

import (
	"context"
	"testing"
	"time"
)

// The probe's attacks, replayed against a real server on loopback: every
// one is handled as intended (each result is measured; see Abuse).
func TestAbuseIsHandled(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of timeouts")
	}
	rep, err := Abuse(context.Background(), AbuseConfig{N: 2000, Dim: 32, HeaderTimeout: 300 * time.Millisecond,
		BodyTimeout: 400 * time.Millisecond, IdleTimeout: 300 * time.Millisecond, Stalled: 100, Dir: t.TempDir()}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) < 15 {
		t.Fatalf("%d results", len(rep.Results))
	}
	for _, r := range rep.Results {
		if !r.OK {
			t.Errorf("%s: %s", r.Attack, r.Handled)
		}
	}
}
