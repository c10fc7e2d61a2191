package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark/tidemark/internal/fakecuda"
)

// Without a driver, gpu-info says the CPU backend runs and why.
func TestGPUInfoWithoutDriver(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"gpu-info", "--json", "--library", filepath.Join(t.TempDir(), "libcuda.so.1")}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var v gpuInfo
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Backend != "cpu" || !strings.Contains(v.Reason, "driver not found") || v.CPU == "" {
		t.Fatalf("%s", out.String())
	}
}

// With the fake libcuda.so.1 on the library path, gpu-info (run in a
// child process: the loader reads LD_LIBRARY_PATH at start) reports the
// emulated device.
func TestGPUInfoOnLibraryPath(t *testing.T) {
	if os.Getenv("TIDEMARK_GPUINFO_CHILD") != "" {
		os.Exit(run([]string{"gpu-info", "--json"}, os.Stdout, os.Stderr))
	}
	dir := filepath.Dir(fakeDriver(t))
	cmd := exec.Command(os.Args[0], "-test.run=^TestGPUInfoOnLibraryPath$")
	cmd.Env = append(os.Environ(), "TIDEMARK_GPUINFO_CHILD=1", "LD_LIBRARY_PATH="+dir, "TIDEMARK_LIBCUDA=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var v gpuInfo
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if v.Backend != "cuda" || !strings.Contains(v.Device, "SIMT emulation") || v.ComputeCapability != "8.0" || v.Library != "libcuda.so.1" {
		t.Fatalf("%s", out)
	}
}

// fakeDriver builds the fake libcuda.so.1 (the emulated device) into the
// test's temporary directory and returns its path; it skips without g++
// unless the emulated checks are required.
func fakeDriver(t *testing.T) string {
	t.Helper()
	lib, err := fakecuda.Build(t.TempDir(), "")
	if err != nil {
		if errors.Is(err, fakecuda.ErrNoCompiler) && !fakecuda.Required() {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return lib
}

// bench kernels --backend cuda measures the emulated device: the device
// copy baseline, then a row per size and query count.
func TestBenchKernelsOnEmulatedDevice(t *testing.T) {
	t.Setenv("TIDEMARK_LIBCUDA", fakeDriver(t))
	var out, errb bytes.Buffer
	args := []string{"bench", "kernels", "--backend", "cuda", "--n", "150", "--dim", "16", "--repeats", "1", "--copy-mib", "1", "--json"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep struct {
		SIMD       string  `json:"simd"`
		CopyGBPerS float64 `json:"copy_gb_per_s"`
		Rows       []struct {
			N, Dim, Queries int
			Backend         string
			SecondsMedian   float64 `json:"seconds_median"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if rep.SIMD != "cuda" || rep.CopyGBPerS <= 0 || len(rep.Rows) != 2 || rep.Rows[1].Queries != 64 ||
		!strings.HasPrefix(rep.Rows[0].Backend, "cuda/") || rep.Rows[0].SecondsMedian <= 0 {
		t.Fatalf("%s", out.String())
	}
}
