package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRunEngineSmall(t *testing.T) {
	rep, err := RunEngine(context.Background(), EngineConfig{Dir: t.TempDir(), Data: writeANN(t, 2500, 6, 5, 3), Dim: 8, TextBytes: 16, Batches: []int{1, 10}, Writes: 40, N: 2500, Tail: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2 || rep.Rows[0].EnginePerSec <= 0 || rep.Rows[1].WALPerSec <= 0 {
		t.Fatalf("rows %+v", rep.Rows)
	}
	if rep.Dataset != "tiny-lifted-8" {
		t.Errorf("dataset %q", rep.Dataset)
	}
	if rep.OpenSnapshotS <= 0 || rep.OpenTailS <= 0 || rep.OpenLogOnlyS <= 0 || rep.LogOnlyN != 1000 || rep.Tail != 1500 || rep.SnapshotMiB <= 0 {
		t.Fatalf("report %+v", rep)
	}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil || !strings.Contains(b.String(), "engine ÷ log") {
		t.Fatalf("table %q %v", b.String(), err)
	}
}

func TestRunEngineDataTooSmall(t *testing.T) {
	_, err := RunEngine(context.Background(), EngineConfig{Dir: t.TempDir(), Data: writeANN(t, 100, 6, 5, 3), Dim: 8, Batches: []int{10}, Writes: 20, N: 200})
	if err == nil || !strings.Contains(err.Error(), "fewer than n = 200") {
		t.Errorf("n beyond the file: %v", err)
	}
}
