package fakecuda

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The emulator's and the fake driver's own self-test (cuda/emu/testdata):
// toy kernels for every intrinsic, barrier and shuffle rule, and every
// driver entry point and error path (thread-bound contexts, injected
// failures, no device, PTX header and ABI mismatches, guard corruption,
// the watchdog, sticky launch failures), checked exactly.
func TestEmulatorSelfTest(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		if !Required() {
			t.Skip(ErrNoCompiler)
		}
		t.Fatal(ErrNoCompiler)
	}
	script := filepath.Join(Root(), "cuda", "emu", "testdata", "run_selftest.sh")
	out, err := exec.Command("sh", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	if !strings.Contains(string(out), "PASS") || strings.Contains(string(out), "FAIL") {
		t.Fatalf("self-test output:\n%s", out)
	}
	t.Logf("%d sections passed", strings.Count(string(out), "PASS"))
}
