package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
)

var (
	reHnswBuild = regexp.MustCompile(`build ([0-9.]+)s`)
	reHnswEf    = regexp.MustCompile(`ef=\s*(\d+) recall@\d+=([0-9.]+)\s+1-thread (\d+) q/s`)
)

// hnswlibHeader is where Debian's libhnswlib-dev installs the library.
const hnswlibHeader = "/usr/include/hnswlib/hnswlib.h"

// runHnswlib compiles and runs the hnswlib harness. It returns a note
// instead of rows when the harness cannot run here. Memory is the harness
// process's peak resident set minus the dataset it loads (its index, the
// binary and the C++ runtime), from getrusage.
func runHnswlib(ctx context.Context, c ANNConfig, dataBytes int64) ([]ANNRow, string) {
	if c.HnswlibSource == "" {
		return nil, "hnswlib: no harness source given"
	}
	if _, err := os.Stat(c.HnswlibSource); err != nil {
		return nil, "hnswlib: harness source not found: " + c.HnswlibSource
	}
	if _, err := os.Stat(hnswlibHeader); err != nil {
		return nil, "hnswlib: " + hnswlibHeader + " missing (apt-get install libhnswlib-dev)"
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		return nil, "hnswlib: g++ not found"
	}
	dir, err := os.MkdirTemp("", "tidemark-hnswlib")
	if err != nil {
		return nil, "hnswlib: " + err.Error()
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "hb")
	build := exec.CommandContext(ctx, gxx, "-O3", "-march=native", "-std=c++17", "-pthread", c.HnswlibSource, "-o", bin)
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("hnswlib: compiling the harness failed: %v: %s", err, out)
	}
	// The harness writes PREFIX.hnswlib; give it a private prefix of
	// symlinks so the shared data directory stays untouched.
	prefix := filepath.Join(dir, "data")
	for _, ext := range []string{".meta", ".base", ".query", ".gt"} {
		abs, err := filepath.Abs(c.Prefix + ext)
		if err != nil {
			return nil, "hnswlib: " + err.Error()
		}
		if err := os.Symlink(abs, prefix+ext); err != nil {
			return nil, "hnswlib: " + err.Error()
		}
	}
	cmd := exec.CommandContext(ctx, bin, prefix, "ip", strconv.Itoa(c.M), strconv.Itoa(c.EfConstruction), strconv.Itoa(c.BuildThreads))
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Sprintf("hnswlib: harness failed: %v", err)
	}
	progress(c.Progress, "%s", out)
	var mem int64
	if rss := maxRSS(cmd.ProcessState); rss > 0 {
		mem = rss - dataBytes
	}
	m := reHnswBuild.FindSubmatch(out)
	if m == nil {
		return nil, "hnswlib: no build time in the harness output"
	}
	buildS, _ := strconv.ParseFloat(string(m[1]), 64)
	var rows []ANNRow
	for _, m := range reHnswEf.FindAllSubmatch(out, -1) {
		ef, _ := strconv.Atoi(string(m[1]))
		rec, _ := strconv.ParseFloat(string(m[2]), 64)
		qps, _ := strconv.ParseFloat(string(m[3]), 64)
		rows = append(rows, ANNRow{System: "hnswlib", Ef: ef, RecallAt10: rec, QPS1Thread: qps, BuildS: buildS,
			MemoryBytes: mem, Note: "the harness measures one thread"})
	}
	if len(rows) == 0 {
		return nil, "hnswlib: no rows in the harness output"
	}
	return rows, ""
}

// runCoderHNSW runs the coder/hnsw harness module with the go command.
func runCoderHNSW(ctx context.Context, c ANNConfig) ([]ANNRow, string) {
	if c.CoderDir == "" {
		return nil, "coder/hnsw: no harness directory given"
	}
	if _, err := os.Stat(filepath.Join(c.CoderDir, "go.mod")); err != nil {
		return nil, "coder/hnsw: harness module not found in " + c.CoderDir
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return nil, "coder/hnsw: the go command is not installed"
	}
	prefix, err := filepath.Abs(c.Prefix)
	if err != nil {
		return nil, "coder/hnsw: " + err.Error()
	}
	efs := ""
	for i, ef := range c.Efs {
		if i > 0 {
			efs += ","
		}
		efs += strconv.Itoa(ef)
	}
	cmd := exec.CommandContext(ctx, goCmd, "run", ".", "-data", prefix, "-json", "-m", strconv.Itoa(c.M),
		"-efc", strconv.Itoa(c.EfConstruction), "-ef", efs, "-threads", strconv.Itoa(c.SearchThreads))
	cmd.Dir = c.CoderDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Sprintf("coder/hnsw: harness failed: %v: %s", err, lastLine(stderr.Bytes()))
	}
	var rows []ANNRow
	var mem int64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var line struct {
			Kind      string   `json:"kind"`
			Ef        int      `json:"ef"`
			Recall    float64  `json:"recall_at_10"`
			QPS1      float64  `json:"qps_1thread"`
			QPSAll    *float64 `json:"qps_all_cores"`
			BuildS    float64  `json:"build_s"`
			HeapBytes int64    `json:"heap_bytes"`
			Error     string   `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		if line.Kind == "build" {
			mem = line.HeapBytes
			continue
		}
		rows = append(rows, ANNRow{System: "coder/hnsw", Ef: line.Ef, RecallAt10: line.Recall, QPS1Thread: line.QPS1,
			QPSAllCores: line.QPSAll, BuildS: line.BuildS, MemoryBytes: mem, Note: line.Error})
	}
	if len(rows) == 0 {
		return nil, "coder/hnsw: no rows in the harness output"
	}
	progress(c.Progress, "coder/hnsw: %d rows\n", len(rows))
	return rows, ""
}

func lastLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return string(b[i+1:])
	}
	return string(b)
}
