package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// tidemark bench scale prints one JSON object with the fields of issue
// 16's benchmark contract.
func TestBenchScaleJSON(t *testing.T) {
	code, out, errOut := runCLI("bench", "scale", "--data", "synthetic", "--dim", "64", "--n", "500", "--queries", "20",
		"--runs", "1", "--threads", "1", "--dir", t.TempDir(), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	for _, f := range []string{"dataset", "n", "dim", "threads", "index_build_s", "load_s", "snapshot_bytes", "snapshot_read_s",
		"open_s", "recall_at_10", "search_p50_ms", "search_p99_ms", "index_search_p50_ms", "rss_bytes", "vector_bytes"} {
		if _, ok := obj[f]; !ok {
			t.Errorf("JSON lacks %q", f)
		}
	}
	if obj["dataset"] != "synthetic-clustered-64" || obj["n"] != 500.0 || obj["threads"] != 1.0 {
		t.Errorf("dataset %v n %v threads %v", obj["dataset"], obj["n"], obj["threads"])
	}
	if !strings.Contains(errOut, "SYNTHETIC") {
		t.Errorf("the progress does not label the data synthetic: %s", errOut)
	}
	code, _, errOut = runCLI("bench", "scale", "-h")
	for _, f := range []string{"-dim", "-n", "-data", "-json", "-threads", "-queries", "-runs"} {
		if code != 0 || !strings.Contains(errOut, f) {
			t.Errorf("bench scale -h (exit %d) lacks %s", code, f)
		}
	}
	code, _, errOut = runCLI("bench", "serve", "-h")
	for _, f := range []string{"-data", "-dim", "-clients", "-duration", "-write-share"} {
		if code != 0 || !strings.Contains(errOut, f) {
			t.Errorf("bench serve -h (exit %d) lacks %s", code, f)
		}
	}
	if code, _, errOut := runCLI("bench", "serve", "--clients", "1,x"); code != 1 || !strings.Contains(errOut, "bad number") {
		t.Errorf("a bad client list: exit %d, %s", code, errOut)
	}
}
