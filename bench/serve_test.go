package bench

import (
	"context"
	"testing"
	"time"
)

func TestRunServeSmall(t *testing.T) {
	rep, err := RunServe(context.Background(), ServeConfig{Dir: t.TempDir(), N: 500, Dim: 16, Clients: 4, Duration: 2 * time.Second, Requests: 400})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, o := range rep.Ops {
		total += o.Count
		if o.Errors != 0 || o.P50 <= 0 || o.P99 < o.P50 {
			t.Fatalf("op %+v", o)
		}
	}
	if total == 0 || total > 400 {
		t.Fatalf("%d requests (bounded by 400): %+v", total, rep)
	}
}
