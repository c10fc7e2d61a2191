package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// scaleFields are the JSON fields of issue 16's benchmark contract.
var scaleFields = []string{"dataset", "n", "dim", "threads", "index_build_s", "load_s", "snapshot_bytes", "snapshot_read_s",
	"open_s", "recall_at_10", "search_p50_ms", "search_p99_ms", "index_search_p50_ms", "rss_bytes", "vector_bytes"}

// checkScaleJSON checks that obj has every contract field with a sane
// value for n memories of dim dimensions.
func checkScaleJSON(t *testing.T, obj map[string]any, dataset string, n, dim int) {
	t.Helper()
	for _, f := range scaleFields {
		if _, ok := obj[f]; !ok {
			t.Errorf("JSON lacks %q", f)
		}
	}
	num := func(f string) float64 { v, _ := obj[f].(float64); return v }
	if obj["dataset"] != dataset || num("n") != float64(n) || num("dim") != float64(dim) || num("threads") < 1 {
		t.Errorf("dataset %v, n %v, dim %v, threads %v", obj["dataset"], obj["n"], obj["dim"], obj["threads"])
	}
	for _, f := range []string{"index_build_s", "load_s", "snapshot_bytes", "snapshot_read_s", "open_s", "search_p50_ms",
		"search_p99_ms", "index_search_p50_ms", "rss_bytes"} {
		if num(f) <= 0 {
			t.Errorf("%s = %v, want > 0", f, obj[f])
		}
	}
	if r := num("recall_at_10"); r < 0 || r > 1 {
		t.Errorf("recall_at_10 = %v", r)
	}
	if num("search_p99_ms") < num("search_p50_ms") {
		t.Errorf("p99 %v below p50 %v", obj["search_p99_ms"], obj["search_p50_ms"])
	}
	if num("vector_bytes") != float64(n*dim*4) {
		t.Errorf("vector_bytes %v, want %d", obj["vector_bytes"], n*dim*4)
	}
}

func TestRunScaleSynthetic(t *testing.T) {
	rep, err := RunScale(context.Background(), ScaleConfig{Data: DataSynthetic, Dim: 64, N: 500, Queries: 40, Runs: 2, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(js.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	checkScaleJSON(t, obj, "synthetic-clustered-64", 500, 64)
	// 500 memories are below the exact plan's threshold: the engine
	// scans them all.
	if rep.RecallAt10 < 0.99 {
		t.Errorf("engine recall %v on 500 memories (exact plan)", rep.RecallAt10)
	}
	runs, _ := obj["runs"].([]any)
	if len(runs) != 2 {
		t.Fatalf("%d runs in the JSON, want 2", len(runs))
	}
	for _, r := range runs {
		checkScaleJSON(t, r.(map[string]any), "synthetic-clustered-64", 500, 64)
	}
	lo, _ := obj["min"].(map[string]any)
	med, _ := obj["median"].(map[string]any)
	if lo == nil || med == nil {
		t.Fatal("no min or median in the JSON")
	}
	checkScaleJSON(t, lo, "synthetic-clustered-64", 500, 64)
	checkScaleJSON(t, med, "synthetic-clustered-64", 500, 64)
	if lo["load_s"].(float64) > med["load_s"].(float64) || med["load_s"] != obj["load_s"] {
		t.Errorf("min load %v, median %v, top level %v", lo["load_s"], med["load_s"], obj["load_s"])
	}
	var tab bytes.Buffer
	if err := rep.WriteTable(&tab); err != nil || !strings.Contains(tab.String(), "SYNTHETIC") || !strings.Contains(tab.String(), "open after Close") {
		t.Errorf("table %v:\n%s", err, tab.String())
	}
}

func TestRunScaleLiftedFile(t *testing.T) {
	prefix := writeANN(t, 500, 100, 30, 10)
	rep, err := RunScale(context.Background(), ScaleConfig{Data: prefix, Dim: 128, Queries: 30, Runs: 1, Threads: 2, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	rep.WriteJSON(&js)
	var obj map[string]any
	if err := json.Unmarshal(js.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	checkScaleJSON(t, obj, "tiny-lifted-128", 500, 128)
	if _, ok := obj["runs"]; ok {
		t.Error("one run reported a runs array")
	}
	if obj["threads"] != 2.0 {
		t.Errorf("threads %v", obj["threads"])
	}
	if _, err := RunScale(context.Background(), ScaleConfig{Data: prefix, Dim: 128, N: 501, Runs: 1}); err == nil {
		t.Error("n beyond the file was accepted")
	}
	if _, err := RunScale(context.Background(), ScaleConfig{Data: prefix, Dim: 128, Queries: 31, Runs: 1}); err == nil {
		t.Error("more queries than the file's were accepted")
	}
}

// aggregateRuns takes each measured field's min and median across runs on
// its own, and leaves the unmeasured fields as the first run has them.
func TestAggregateRuns(t *testing.T) {
	runs := []ScaleResult{
		{Dataset: "d", LoadS: 3, OpenS: 9, RSSBytes: 30},
		{Dataset: "x", LoadS: 1, OpenS: 7, RSSBytes: 10},
		{Dataset: "y", LoadS: 2, OpenS: 8, RSSBytes: 20},
	}
	lo, med := aggregateScale(runs)
	if lo.LoadS != 1 || med.LoadS != 2 || lo.OpenS != 7 || med.OpenS != 8 || lo.RSSBytes != 10 || med.RSSBytes != 20 || lo.Dataset != "d" || med.Dataset != "d" {
		t.Fatalf("min %+v\nmedian %+v", lo, med)
	}
	if runs[0].LoadS != 3 {
		t.Fatal("the runs were changed")
	}
}
