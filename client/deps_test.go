package client

import (
	"os/exec"
	"strings"
	"testing"
)

// The client links the wire types only: not the engine, its indexes and
// kernels, the server, nor their dependencies (vek, Prometheus).
func TestClientDoesNotImportTheEngine(t *testing.T) {
	// go test puts its own GOROOT/bin first on the test's PATH.
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to list the client's dependencies")
	}
	out, err := exec.Command(gotool, "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list -deps: %v", err)
	}
	const mod = "github.com/tidemark/tidemark"
	forbidden := map[string]bool{mod: true, mod + "/index": true, mod + "/kernels": true, mod + "/simd": true, mod + "/server": true}
	for _, p := range strings.Fields(string(out)) {
		if forbidden[p] || strings.HasPrefix(p, "github.com/viterin/vek") || strings.HasPrefix(p, "github.com/prometheus/") {
			t.Errorf("package client depends on %s", p)
		}
	}
	if !strings.Contains(string(out), mod+"/api\n") {
		t.Errorf("go list -deps shows no %s/api:\n%s", mod, out)
	}
}
