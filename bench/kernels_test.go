package bench

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
)

// A tiny run exercises every code path of RunKernels and the report's
// consistency (timings are not checked: this is not a timed test).
func TestRunKernelsSmall(t *testing.T) {
	cfg := KernelsConfig{Ns: []int{300, 1000}, Dims: []int{8, 33}, Queries: []int{1, 4}, Repeats: 2, CopyBytes: 1 << 20}
	rep, err := RunKernels(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2*2*2 {
		t.Fatalf("%d rows, want 8", len(rep.Rows))
	}
	for _, r := range rep.Rows {
		if r.SecondsMin <= 0 || r.SecondsMedian < r.SecondsMin || r.GBPerS <= 0 || r.RatioToCopy <= 0 || r.RatioToPlainGo <= 0 ||
			r.RatioToRead <= 0 || r.GFLOPS <= 0 || r.RatioToPeak <= 0 {
			t.Errorf("implausible row %+v", r)
		}
		if (r.Queries > 1) != (r.PerQueryRatio > 0) {
			t.Errorf("per-query ratio %v for %d queries", r.PerQueryRatio, r.Queries)
		}
	}
	if rep.CopyGBPerS <= 0 || rep.CopyGBPerSBest < rep.CopyGBPerS {
		t.Errorf("copy bandwidth %v / %v", rep.CopyGBPerS, rep.CopyGBPerSBest)
	}
	// The peak is sampled before the rows and after each of the 2×2 sizes.
	if rep.Read.Median <= 0 || rep.Read.Best < rep.Read.Median || len(rep.FMA) == 0 || rep.PeakGFLOPS <= 0 || rep.PeakSamples != 5 {
		t.Errorf("read %+v, FMA %+v, peak %v", rep.Read, rep.FMA, rep.PeakGFLOPS)
	}
	for _, f := range rep.FMA {
		if f.Best > rep.PeakGFLOPS {
			t.Errorf("peak %v below the FMA rate %+v", rep.PeakGFLOPS, f)
		}
	}
	for _, r := range rep.Rows {
		if math.Abs(r.RatioToPeak-r.GFLOPS/rep.PeakGFLOPS) > 1e-12 {
			t.Errorf("row %+v: ratio to peak not against the final peak %v", r, rep.PeakGFLOPS)
		}
	}
	checkJSONRows(t, rep.WriteJSON, "n", "dim", "queries", "backend", "gb_per_s", "ratio_to_copy", "ratio_to_read", "gflops", "ratio_to_peak", "ratio_to_plain_go")
	var tab bytes.Buffer
	if err := rep.WriteTable(&tab); err != nil || !strings.Contains(tab.String(), "memory copy bandwidth") || !strings.Contains(tab.String(), "FMA peak") {
		t.Errorf("table: %v\n%s", err, tab.String())
	}
}

func TestKernelsConfigValidate(t *testing.T) {
	for name, c := range map[string]KernelsConfig{
		"n":       {Ns: []int{0}},
		"dim":     {Dims: []int{-1}},
		"queries": {Queries: []int{0}},
		"k":       {K: -1},
		"repeats": {Repeats: -2},
		"copy":    {CopyBytes: 10},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted %+v", name, c)
		}
	}
	if _, err := RunKernels(context.Background(), KernelsConfig{Ns: []int{-5}}); err == nil {
		t.Error("RunKernels accepted a bad config")
	}
}
