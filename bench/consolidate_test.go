package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRunConsolidateSmall(t *testing.T) {
	rep, err := RunConsolidate(context.Background(), ConsolidateConfig{Dir: t.TempDir(), N: 600, Dim: 16, Queries: 50})
	if err != nil {
		t.Fatal(err)
	}
	if rep.FirstS <= 0 || rep.Report.Promoted == 0 || rep.Report.Merged == 0 || rep.Report.Contradictions == 0 ||
		rep.AloneP50 <= 0 || rep.BusyP50 <= 0 || rep.BusyRuns == 0 || len(rep.Report.Orphans) != 0 {
		t.Fatalf("report %+v", rep)
	}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil || !strings.Contains(b.String(), "while consolidating") {
		t.Fatalf("table %q %v", b.String(), err)
	}
}
