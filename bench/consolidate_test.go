package bench

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

func TestRunConsolidateSmall(t *testing.T) {
	rep, err := RunConsolidate(context.Background(), ConsolidateConfig{Dir: t.TempDir(), N: 600, Dim: 16, Queries: 50, Data: DataGaussian})
	if err != nil {
		t.Fatal(err)
	}
	if rep.FirstS <= 0 || rep.FirstRuns != 1 || rep.Report.Promoted == 0 || rep.Report.Merged == 0 || rep.Report.Contradictions == 0 ||
		rep.AloneP50 <= 0 || rep.BusyP50 <= 0 || rep.BusyRuns == 0 || len(rep.Report.Orphans) != 0 {
		t.Fatalf("report %+v", rep)
	}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil || !strings.Contains(b.String(), "while consolidating") {
		t.Fatalf("table %q %v", b.String(), err)
	}
}

// The default data (GloVe-100 lifted), without the busy half.
func TestRunConsolidateGloveNoBusy(t *testing.T) {
	data := "../" + DefaultData // from the package directory
	if _, err := os.Stat(data + ".meta"); err != nil {
		t.Skipf("no GloVe-100 at %s", data)
	}
	rep, err := RunConsolidate(context.Background(), ConsolidateConfig{Dir: t.TempDir(), N: 600, Dim: 128, Queries: 50, NoBusy: true, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Data != data || rep.FirstRuns != 1 || rep.Report.Promoted == 0 || rep.Report.Merged == 0 ||
		rep.AloneP50 <= 0 || rep.BusyRuns != 0 || rep.BusyP50 != 0 || len(rep.Report.Orphans) != 0 {
		t.Fatalf("report %+v", rep)
	}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil || strings.Contains(b.String(), "while consolidating") || !strings.Contains(b.String(), "1 runs") {
		t.Fatalf("table %q %v", b.String(), err)
	}
}
