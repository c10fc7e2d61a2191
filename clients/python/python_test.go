// Package python holds the Python client (tidemark_client) and, in this
// test, runs its pytest suite against a tidemark serve built from this
// checkout, so that `go test ./...` covers it.
package python

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestPythonClient runs `python3 -m pytest clients/python/tests` with a
// freshly built tidemark binary. Without a Python that has pytest it skips,
// unless TIDEMARK_REQUIRE_PYTEST is set (CI sets it, after installing
// Debian's python3-pytest): then it fails.
func TestPythonClient(t *testing.T) {
	var py string
	for _, cand := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(cand, "-m", "pytest", "--version").Run() == nil {
			py = cand
			break
		}
	}
	if py == "" {
		if os.Getenv("TIDEMARK_REQUIRE_PYTEST") != "" {
			t.Fatal("no python3 with pytest (apt-get install python3-pytest), and TIDEMARK_REQUIRE_PYTEST is set")
		}
		t.Skip("no python3 with pytest: apt-get install python3-pytest to run the Python client's tests")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on the path: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "tidemark")
	build := exec.CommandContext(ctx, goTool, "build", "-o", bin, "./cmd/tidemark")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx, py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
	cmd.Env = append(os.Environ(), "TIDEMARK_BIN="+bin, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	t.Logf("pytest:\n%s", out)
	if err != nil {
		t.Fatalf("pytest failed: %v", err)
	}
}
