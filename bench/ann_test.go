package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// writeANN writes a small dataset in the GloVe-100 file format, with exact
// ground truth.
func writeANN(t *testing.T, n, dim, nq, k int) string {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 1))
	unit := func() []float32 {
		v := make([]float32, dim)
		var ss float64
		for i := range v {
			v[i] = float32(r.NormFloat64())
			ss += float64(v[i] * v[i])
		}
		for i := range v {
			v[i] /= float32(math.Sqrt(ss))
		}
		return v
	}
	base, query := make([][]float32, n), make([][]float32, nq)
	for i := range base {
		base[i] = unit()
	}
	for i := range query {
		query[i] = unit()
	}
	prefix := filepath.Join(t.TempDir(), "tiny")
	write := func(ext string, vals any) {
		var b bytes.Buffer
		if err := binary.Write(&b, binary.LittleEndian, vals); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(prefix+ext, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flat := func(vs [][]float32) []float32 {
		var out []float32
		for _, v := range vs {
			out = append(out, v...)
		}
		return out
	}
	write(".base", flat(base))
	write(".query", flat(query))
	var gt []int32
	for _, q := range query {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i
		}
		dot := func(i int) (s float64) {
			for j := range q {
				s += float64(q[j]) * float64(base[i][j])
			}
			return s
		}
		sort.Slice(ids, func(a, b int) bool { return dot(ids[a]) > dot(ids[b]) })
		for _, id := range ids[:k] {
			gt = append(gt, int32(id))
		}
	}
	write(".gt", gt)
	if err := os.WriteFile(prefix+".meta", []byte(fmt.Sprintf("%d %d %d %d\n", n, dim, nq, k)), 0o644); err != nil {
		t.Fatal(err)
	}
	return prefix
}

func TestRunANNTidemark(t *testing.T) {
	prefix := writeANN(t, 2000, 16, 50, 10)
	rep, err := RunANN(context.Background(), ANNConfig{Prefix: prefix, Efs: []int{10, 80}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2 || rep.Rows[0].System != "tidemark" {
		t.Fatalf("rows %+v", rep.Rows)
	}
	if len(rep.Skipped) != 2 {
		t.Errorf("no harnesses were given, want two skip notes: %v", rep.Skipped)
	}
	if r := rep.Rows[1]; r.RecallAt10 < 0.9 || r.QPS1Thread <= 0 || r.QPSAllCores == nil || r.BuildS <= 0 {
		t.Errorf("ef=80 row %+v", r)
	}
	checkJSONRows(t, rep.WriteJSON, "system", "ef", "recall_at_10", "qps_1thread", "qps_all_cores", "build_s")
	var tab bytes.Buffer
	if err := rep.WriteTable(&tab); err != nil || !strings.Contains(tab.String(), "tidemark") {
		t.Errorf("table: %v %s", err, tab.String())
	}
}

func TestLoadANNRejectsBadFiles(t *testing.T) {
	prefix := writeANN(t, 50, 4, 5, 3)
	if _, err := LoadANN(prefix); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(prefix+".meta", []byte("50 4 5"), 0o644)
	if _, err := LoadANN(prefix); err == nil {
		t.Error("short meta accepted")
	}
	os.WriteFile(prefix+".meta", []byte("51 4 5 3"), 0o644)
	if _, err := LoadANN(prefix); err == nil {
		t.Error("base size mismatch accepted")
	}
	os.WriteFile(prefix+".meta", []byte("-1 4 5 3"), 0o644)
	if _, err := LoadANN(prefix); err == nil {
		t.Error("negative n accepted")
	}
	if _, err := RunANN(context.Background(), ANNConfig{}); err == nil {
		t.Error("missing prefix accepted")
	}
}

// checkJSONRows checks that a report's JSON has rows carrying every key.
func checkJSONRows(t *testing.T, write func(io.Writer) error, keys ...string) {
	t.Helper()
	var js bytes.Buffer
	if err := write(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Rows) == 0 {
		t.Fatal("JSON report has no rows")
	}
	for _, key := range keys {
		if _, ok := back.Rows[0][key]; !ok {
			t.Errorf("JSON row lacks %q", key)
		}
	}
}
