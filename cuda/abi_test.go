package cuda

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tidemark/tidemark/internal/fakecuda"
	"github.com/tidemark/tidemark/temporal"
)

// The Go mirrors of kernels/tm_abi.h's structures have the header's
// fields, in its order, with its types (double float64, long long int64,
// unsigned long long uint64), and so its size: each is uploaded as its
// bytes.
func TestABIMatchesHeader(t *testing.T) {
	src, err := os.ReadFile("kernels/tm_abi.h")
	if err != nil {
		t.Fatal(err)
	}
	structs := map[string]reflect.Type{
		"TmCorpus": reflect.TypeFor[tmCorpus](), "TmParams": reflect.TypeFor[tmParams](),
		"TmQuery": reflect.TypeFor[tmQuery](), "TmHit": reflect.TypeFor[tmHit](),
	}
	kinds := map[string]reflect.Kind{"double": reflect.Float64, "long long": reflect.Int64, "unsigned long long": reflect.Uint64}
	body := regexp.MustCompile(`(?s)typedef struct (\w+) \{(.*?)\} \w+;`)
	field := regexp.MustCompile(`^\s*(double|long long|unsigned long long) (\w+);`)
	found := 0
	for _, m := range body.FindAllStringSubmatch(string(src), -1) {
		gt, ok := structs[m[1]]
		if !ok {
			t.Errorf("tm_abi.h: struct %s has no Go mirror", m[1])
			continue
		}
		found++
		var names []string
		for _, line := range strings.Split(m[2], "\n") {
			if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			f := field.FindStringSubmatch(line)
			if f == nil {
				t.Errorf("%s: field line %q is not one 8-byte field", m[1], line)
				continue
			}
			i := len(names)
			names = append(names, f[2])
			if i >= gt.NumField() {
				continue
			}
			gf := gt.Field(i)
			if !strings.EqualFold(gf.Name, f[2]) || gf.Type.Kind() != kinds[f[1]] {
				t.Errorf("%s field %d: C %s %s, Go %s %s", m[1], i, f[1], f[2], gf.Name, gf.Type)
			}
		}
		if len(names) != gt.NumField() || gt.Size() != uintptr(8*len(names)) {
			t.Errorf("%s: %d C fields, Go %d fields of %d bytes", m[1], len(names), gt.NumField(), gt.Size())
		}
	}
	if found != len(structs) {
		t.Errorf("found %d of the %d structures in tm_abi.h", found, len(structs))
	}
	// The constants the kernels hard-code.
	cu, err := os.ReadFile("kernels/tidemark.cu")
	if err != nil {
		t.Fatal(err)
	}
	def := func(name string) int {
		m := regexp.MustCompile(`#define ` + name + ` (\d+)`).FindSubmatch(append(cu, src...))
		if m == nil {
			t.Fatalf("no #define %s", name)
		}
		v, _ := strconv.Atoi(string(m[1]))
		return v
	}
	for name, want := range map[string]int{
		"TM_REASON_NOT_YET_RECORDED": int(temporal.ReasonNotYetRecorded), "TM_REASON_SUPERSEDED": int(temporal.ReasonSuperseded),
		"TM_REASON_FILTERED_KIND": int(temporal.ReasonFilteredKind), "TM_REASON_FILTERED_STATUS": int(temporal.ReasonFilteredStatus),
		"TM_REASON_NOT_YET_VALID": int(temporal.ReasonNotYetValid), "TM_REASON_EXPIRED_STATIC": int(temporal.ReasonExpiredStatic),
		"TM_REASON_EXPIRED_VERSIONED": int(temporal.ReasonExpiredVersioned), "TM_REASON_EXPIRED_EVENT": int(temporal.ReasonExpiredEvent),
		"TM_REASON_OUT_OF_TIME_RANGE": int(temporal.ReasonOutOfTimeRange), "TM_REASON_BELOW_RELEVANCE_GATE": int(temporal.ReasonBelowRelevanceGate),
		"TM_REASON_STALE_STATIC": int(temporal.ReasonStaleStatic), "TM_REASON_STALE": int(temporal.ReasonStale),
		"TM_KIND_STATIC": int(temporal.Static), "TM_KIND_VERSIONED": int(temporal.Versioned), "TM_KIND_EVENT": int(temporal.Event),
		"TM_COMBINE_SUM": int(temporal.CombineSum), "TM_COMBINE_PRODUCT": int(temporal.CombineProduct), "TM_COMBINE_GATED": int(temporal.CombineGated),
		"TM_MAXQ": maxQueries, "TM_NCOLS": numColumns, "TM_MAX_WARPS": maxWarps, "TM_TILE_QUERIES": tileQueries,
	} {
		if got := def(name); got != want {
			t.Errorf("%s = %d, Go says %d", name, got, want)
		}
	}
}

// The committed PTX is what clang-16 makes of the committed source now
// (go generate ./cuda rebuilds it). Without clang-16 the check skips,
// unless TIDEMARK_CUDA_CHECKS demands it (CI installs clang-16).
func TestPTXUpToDate(t *testing.T) {
	clang, err := exec.LookPath("clang++-16")
	if err != nil {
		if fakecuda.Required() {
			t.Fatal("clang++-16 not found and TIDEMARK_CUDA_CHECKS is set")
		}
		t.Skip("clang++-16 not installed")
	}
	out := filepath.Join(t.TempDir(), "tidemark.ptx")
	args := append(append([]string{}, ptxCompileArgs...), "-o", out, "kernels/tidemark.cu")
	if msg, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
		t.Fatalf("clang++-16: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, []byte(ptx)) {
		t.Fatal("kernels/tidemark.ptx is stale: run go generate ./cuda")
	}
	for _, want := range []string{".version 7.0", ".target sm_80", ".address_size 64"} {
		if !strings.Contains(ptx, want+"\n") {
			t.Errorf("the PTX lacks %q", want)
		}
	}
	for _, k := range kernelNames {
		if !strings.Contains(ptx, ".visible .entry "+k+"(") {
			t.Errorf("the PTX has no entry %s", k)
		}
	}
	if strings.Contains(ptx, ".extern") {
		t.Error("the PTX calls an external function (libdevice is not linked)")
	}
}

// Without a driver library the CPU backend runs, and Probe says why.
func TestProbeWithoutDriver(t *testing.T) {
	info := Probe(&Options{Library: filepath.Join(t.TempDir(), "libcuda.so.1")})
	if info.Backend != "cpu" || !strings.Contains(info.Reason, "driver not found") || info.Device != "" {
		t.Fatalf("%+v", info)
	}
	if _, err := Open(&Options{Library: filepath.Join(t.TempDir(), "libcuda.so.1")}); err == nil || !errors.Is(err, ErrNoDriver) {
		t.Fatalf("Open without a driver: %v", err)
	}
}
