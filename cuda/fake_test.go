package cuda

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/tidemark/tidemark/internal/fakecuda"
	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/kernels/backendtest"
	"github.com/tidemark/tidemark/temporal"
)

// fakeLib is the fake libcuda.so.1 TestMain built, "" when g++ is missing
// (and the emulated checks are not required) or under -gpu.
var fakeLib string

// realGPU runs the backend's tests on the machine's driver and GPU
// instead of the emulation: go test ./cuda -gpu is the one command that
// verifies the backend on real hardware. The fake driver's error-path
// tests skip then.
var realGPU = flag.Bool("gpu", false, "run the backend tests on the real CUDA driver and GPU (libcuda.so.1) instead of the emulated device")

// The fake driver's test controls (cuda/emu/fakecuda.cpp).
var (
	fakeInject      func(entry *byte, skip, result int32) int32
	fakeSetDevices  func(n int32)
	fakeReset       func()
	fakeLiveAllocs  func() int64
	fakeLastError   func() *byte
	fakeControlsErr error
)

func TestMain(m *testing.M) {
	flag.Parse()
	if *realGPU {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "tidemark-fakecuda-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeLib, err = fakecuda.Build(dir, "")
	switch {
	case errors.Is(err, fakecuda.ErrNoCompiler) && !fakecuda.Required():
		fakeLib = ""
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	default:
		fakeControlsErr = bindControls(fakeLib)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// bindControls binds the fake driver's test controls: the same library
// the binding loads (dlopen returns the one handle per path).
func bindControls(path string) error {
	lib, err := dlopen(path)
	if err != nil {
		return err
	}
	for name, fn := range map[string]any{
		"tm_fake_inject": &fakeInject, "tm_fake_set_devices": &fakeSetDevices, "tm_fake_reset": &fakeReset,
		"tm_fake_live_allocations": &fakeLiveAllocs, "tm_fake_last_error": &fakeLastError,
	} {
		sym, err := dlsym(lib, name)
		if err != nil {
			return err
		}
		bind(fn, sym)
	}
	return nil
}

// needFake skips a test without the fake driver (g++ missing and checks
// not required, or -gpu).
func needFake(t testing.TB) {
	t.Helper()
	if *realGPU {
		t.Skip("-gpu: the fake driver's controls are not there")
	}
	if fakeLib == "" {
		t.Skip("g++ not installed: the emulated device is not built (set TIDEMARK_CUDA_CHECKS to require it)")
	}
	if fakeControlsErr != nil {
		t.Fatal(fakeControlsErr)
	}
}

// openFake opens the emulated device; Close at cleanup.
func openFake(t testing.TB) *Device {
	t.Helper()
	needFake(t)
	d, err := Open(&Options{Library: fakeLib})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// openDevice opens the device the backend tests run on: the real GPU
// under -gpu, else the emulated one.
func openDevice(t testing.TB) *Device {
	t.Helper()
	if !*realGPU {
		return openFake(t)
	}
	d, err := Open(nil)
	if err != nil {
		t.Fatalf("-gpu: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// emulated are the backend options for the emulated device: small blocks
// and chunks, so that a launch's threads are few and several blocks and
// chunks run even on small batches.
var emulated = BackendOptions{Threads: 32, Blocks: 2, Chunk: 40}

// testOptions are the backend options of the tests: the defaults on a
// real GPU, emulated's on the emulation.
func testOptions() BackendOptions {
	if *realGPU {
		return BackendOptions{}
	}
	return emulated
}

func inject(t *testing.T, entry string, result int) {
	t.Helper()
	if rc := fakeInject(cString(entry), 0, int32(result)); rc != 0 {
		t.Fatalf("tm_fake_inject(%s): %d", entry, rc)
	}
}

// Open over the fake driver reports the emulated device; Probe says the
// cuda backend runs.
func TestOpenEmulatedDevice(t *testing.T) {
	d := openFake(t)
	info := d.Info()
	if info.Backend != "cuda" || info.Reason != "" || !strings.Contains(info.Device, "SIMT emulation") ||
		info.ComputeCapability != "8.0" || info.Multiprocessors != 2 || info.MemoryBytes != 4<<30 || info.DriverVersion != 12080 {
		t.Fatalf("%+v", info)
	}
	if p := Probe(&Options{Library: fakeLib}); p.Backend != "cuda" || p.Device != info.Device {
		t.Fatalf("Probe: %+v", p)
	}
}

// A driver without devices is ErrNoDevice, and Probe falls back to the
// CPU with that reason.
func TestNoDevice(t *testing.T) {
	needFake(t)
	fakeSetDevices(0)
	defer fakeReset()
	if _, err := Open(&Options{Library: fakeLib}); !errors.Is(err, ErrNoDevice) {
		t.Fatalf("Open: %v", err)
	}
	if p := Probe(&Options{Library: fakeLib}); p.Backend != "cpu" || !strings.Contains(p.Reason, "no CUDA device") {
		t.Fatalf("Probe: %+v", p)
	}
}

// A driver error comes back as an *Error with the entry point and the
// driver's name and description of the code; the backend works again on
// the next call.
func TestDriverErrorsAreNamed(t *testing.T) {
	d := openFake(t)
	be := NewBackend(d, &emulated)
	defer be.Close()
	r := rand.New(rand.NewPCG(1, 2))
	bt, q := testBatch(t, r, 50, 16)
	p := temporal.Preset(temporal.MethodTidemark)
	for _, c := range []struct {
		entry string
		code  int
		name  string
	}{
		{"cuMemAlloc_v2", 2, "CUDA_ERROR_OUT_OF_MEMORY"},
		{"cuMemcpyDtoH_v2", 1, "CUDA_ERROR_INVALID_VALUE"},
		{"cuLaunchKernel", 1, "CUDA_ERROR_INVALID_VALUE"},
	} {
		if c.entry == "cuMemAlloc_v2" {
			be.Close() // so that the next call allocates
			be = NewBackend(d, &emulated)
		}
		inject(t, c.entry, c.code)
		_, _, err := be.TopK(context.Background(), bt, q, &p, 5, nil)
		var e *Error
		if !errors.As(err, &e) || e.Op != c.entry || e.Code != c.code || e.Name != c.name || e.Message == "" {
			t.Fatalf("%s failing: %v", c.entry, err)
		}
		if !strings.Contains(err.Error(), c.name) {
			t.Errorf("%q does not name the error", err)
		}
		if _, _, err := be.TopK(context.Background(), bt, q, &p, 5, nil); err != nil {
			t.Fatalf("after %s failed once: %v", c.entry, err)
		}
	}
	// A failed launch leaves a real context unusable: the device reports
	// it lost from then on, until it is opened again.
	inject(t, "cuLaunchKernel", 719)
	if _, _, err := be.TopK(context.Background(), bt, q, &p, 5, nil); !strings.Contains(fmt.Sprint(err), "CUDA_ERROR_LAUNCH_FAILED") {
		t.Fatalf("a failed launch: %v", err)
	}
	if _, _, err := be.TopK(context.Background(), bt, q, &p, 5, nil); !errors.Is(err, ErrLost) {
		t.Fatalf("after a failed launch: %v, want ErrLost", err)
	}
	fakeReset()
}

// A panic on the device's thread comes back as an error, and the device
// goes on serving.
func TestPanicOnDeviceThread(t *testing.T) {
	d := openFake(t)
	if err := d.do(func() error { panic("boom") }); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("%v", err)
	}
	if err := d.do(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// The context is current on the owner thread only: a driver call from
// another OS thread is refused (the fake driver tracks the current context
// per thread, as the real one does), which is why every call goes through
// the owner goroutine.
func TestContextIsThreadBound(t *testing.T) {
	d := openFake(t)
	done := make(chan int32)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var p uint64
		done <- d.drv.cuMemAlloc(&p, 64)
	}()
	if code := <-done; code != 201 {
		t.Fatalf("cuMemAlloc_v2 from another thread: %d, want CUDA_ERROR_INVALID_CONTEXT (201)", code)
	}
	if err := d.do(func() error {
		b, err := d.alloc(64)
		if err != nil {
			return err
		}
		return d.free(&b)
	}); err != nil {
		t.Fatalf("on the owner thread: %v", err)
	}
}

// PTX the driver cannot take fails Open with the driver's error.
func TestPTXRejected(t *testing.T) {
	needFake(t)
	saved := ptx
	defer func() { ptx = saved }()
	ptx = strings.Replace(saved, ".version 7.0", ".version 9.9", 1)
	_, err := Open(&Options{Library: fakeLib})
	var e *Error
	if !errors.As(err, &e) || e.Op != "cuModuleLoadData" || e.Name != "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" {
		t.Fatalf("PTX 9.9: %v", err)
	}
	ptx = strings.Replace(saved, ".visible .entry tm_merge(", ".visible .entry tm_merged(", 1)
	if _, err := Open(&Options{Library: fakeLib}); err == nil || !strings.Contains(err.Error(), "tm_merge") {
		t.Fatalf("a kernel missing from the PTX: %v", err)
	}
}

// Closing the backend and the device frees every device allocation.
func TestNoDeviceMemoryLeaks(t *testing.T) {
	needFake(t)
	before := fakeLiveAllocs()
	d, err := Open(&Options{Library: fakeLib})
	if err != nil {
		t.Fatal(err)
	}
	be := NewBackend(d, &emulated)
	r := rand.New(rand.NewPCG(3, 4))
	bt, q := testBatch(t, r, 30, 8)
	p := temporal.Preset(temporal.MethodArticle)
	if _, _, err := be.TopK(context.Background(), bt, q, &p, 3, nil); err != nil {
		t.Fatal(err)
	}
	if fakeLiveAllocs() <= before {
		t.Fatal("a call allocated nothing on the device")
	}
	be.Close()
	d.Close()
	if n := fakeLiveAllocs(); n != before {
		t.Fatalf("%d device allocations live after Close, %d before", n, before)
	}
	if _, _, err := be.TopK(context.Background(), bt, q, &p, 3, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// testBatch is n random candidates of dimension dim (a quarter of them
// near the query) and a query.
func testBatch(t testing.TB, r *rand.Rand, n, dim int) (*kernels.Batch, *kernels.Query) {
	t.Helper()
	b, err := kernels.NewBatch(dim, n)
	if err != nil {
		t.Fatal(err)
	}
	q := make([]float32, dim)
	for i := range q {
		q[i] = float32(r.NormFloat64())
	}
	for i := 0; i < n; i++ {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
			if i%4 == 0 {
				v[j] = q[j] + 0.3*v[j]
			}
		}
		c := temporal.Candidate{ID: uint64(1000 + i), Kind: temporal.Kind(r.IntN(3)), Status: temporal.Active,
			CreatedAt: -float64(r.IntN(400)), Valid: temporal.Always, Recorded: temporal.Always,
			HalfLife: []float64{7, 30, 365}[r.IntN(3)], BaseConfidence: r.Float64(), Access: float64(r.IntN(9)), Degree: float64(r.IntN(4))}
		if r.IntN(5) == 0 {
			c.Valid = temporal.Window{From: c.CreatedAt, To: c.CreatedAt + 100}
		}
		if err := b.Append(v, c, 0); err != nil {
			t.Fatal(err)
		}
	}
	return b, &kernels.Query{Vector: q, Time: temporal.At(0)}
}

// The shared backend test body (package kernels' CPU, small-chunk CPU and
// Plain pass it too) on the cuda backend over the emulated device: every
// method, odd dimensions, guard padding, masks, top-k against a full sort,
// ScoreMany against TopK, bad input, cancellation, concurrent calls, at
// sizes an emulated device runs in seconds.
func TestBackendSharedBody(t *testing.T) {
	d := openDevice(t)
	be := NewBackend(d, ptr(testOptions()))
	defer be.Close()
	backendtest.Run(t, be, backendtest.Options{
		Dims: []int{1, 2, 3, 5, 8, 16, 17, 31, 32, 33, 67, 384, 768, 777, 1024, 1536},
		Rows: 80, Concurrency: 3,
	})
}

// With bfloat16 storage each cosine is within 2⁻⁸ (plus float32
// rounding) of the float64 reference over the float32 vectors, the bound
// BackendOptions.BF16 documents, and equals within float32 rounding the
// float64 cosine over the rounded vectors; the scores are the CPU's on
// the rounded vectors.
func TestBackendBF16(t *testing.T) {
	d := openDevice(t)
	o := testOptions()
	o.BF16 = true
	be := NewBackend(d, &o)
	defer be.Close()
	r := rand.New(rand.NewPCG(5, 6))
	for _, dim := range []int{7, 384, 768} {
		bt, q := testBatch(t, r, 60, dim)
		rounded := cloneBatch(t, bt)
		for i, v := range rounded.Vectors {
			rounded.Vectors[i] = fromBF16(toBF16(v))
		}
		qn := make([]float32, dim)
		if err := kernels.Prepare(bt, []kernels.Query{*q}, &temporal.Params{}, 0, qn); err != nil {
			t.Fatal(err)
		}
		for _, m := range []temporal.Method{temporal.MethodTidemark, temporal.MethodArticle, temporal.MethodVDD} {
			p := temporal.Preset(m)
			if m == temporal.MethodVDD {
				q.GroupLambda = []float64{0.01}
			}
			got, _, err := be.TopK(context.Background(), bt, q, &p, 60, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := kernels.DefaultCPU().TopK(context.Background(), rounded, q, &p, 60, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("dim %d %v: %d hits, CPU on the rounded vectors %d", dim, m, len(got), len(want))
			}
			for k, h := range got {
				row := bt.Vectors[h.Index*dim : (h.Index+1)*dim]
				var exact, onRounded float64
				for c := range row {
					exact += float64(row[c]) * float64(qn[c])
					onRounded += float64(rounded.Vectors[h.Index*dim+c]) * float64(qn[c])
				}
				if diff := h.Sim - exact; diff > 1.0/256+1e-6 || diff < -1.0/256-1e-6 {
					t.Errorf("dim %d: row %d cosine %v, float32 vectors %v: off by %v > 2⁻⁸", dim, h.Index, h.Sim, exact, diff)
				}
				if diff := h.Sim - onRounded; diff > 1e-6 || diff < -1e-6 {
					t.Errorf("dim %d: row %d cosine %v, rounded vectors %v", dim, h.Index, h.Sim, onRounded)
				}
				w := want[k]
				if w.ID != h.ID && (w.Score-h.Score > 1e-5 || h.Score-w.Score > 1e-5) {
					t.Errorf("dim %d %v: hit %d id %d score %v, CPU id %d score %v", dim, m, k, h.ID, h.Score, w.ID, w.Score)
				}
				if diff := w.Score - h.Score; w.ID == h.ID && (diff > 1e-5 || diff < -1e-5) {
					t.Errorf("dim %d %v: id %d score %v, CPU %v", dim, m, h.ID, h.Score, w.Score)
				}
			}
		}
	}
}

// cloneBatch copies a batch through Append (the metadata through
// Candidate), so that changing the copy leaves the original alone.
func cloneBatch(t testing.TB, b *kernels.Batch) *kernels.Batch {
	t.Helper()
	c, err := kernels.NewBatch(b.Dim, b.Len())
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.Len() {
		meta := b.Candidate(i, 0, float64(b.Lambda[i]))
		if err := c.Append(b.Vectors[i*b.Dim:(i+1)*b.Dim], meta, b.Group[i]); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// The device copy follows the batch: rows appended are scored on the next
// call, rows written in place and recorded with Changed are copied again,
// and a different batch replaces the copy — each time the results are
// the CPU backend's.
func TestResidentCorpusFollowsTheBatch(t *testing.T) {
	d := openDevice(t)
	be := NewBackend(d, ptr(testOptions()))
	defer be.Close()
	r := rand.New(rand.NewPCG(7, 8))
	bt, q := testBatch(t, r, 40, 16)
	p := temporal.Preset(temporal.MethodArticle)
	same := func(what string, bt *kernels.Batch) {
		t.Helper()
		got, gs, err := be.TopK(context.Background(), bt, q, &p, 8, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, ws, err := kernels.DefaultCPU().TopK(context.Background(), bt, q, &p, 8, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || gs != ws {
			t.Fatalf("%s: %d hits %+v, CPU %d %+v", what, len(got), gs, len(want), ws)
		}
		for k := range got {
			if got[k].ID != want[k].ID || got[k].Index != want[k].Index {
				t.Fatalf("%s: hit %d is id %d, CPU id %d", what, k, got[k].ID, want[k].ID)
			}
		}
	}
	same("first upload", bt)
	more, _ := testBatch(t, r, 30, 16)
	for i := range more.Len() {
		meta := more.Candidate(i, 0, float64(more.Lambda[i]))
		meta.ID += 5000
		if err := bt.Append(more.Vectors[i*16:(i+1)*16], meta, 0); err != nil {
			t.Fatal(err)
		}
	}
	same("appended rows", bt)
	top, _, _ := kernels.DefaultCPU().TopK(context.Background(), bt, q, &p, 1, nil)
	bt.RetiredAt[top[0].Index] = -1 // superseded before now: masked
	bt.Changed(top[0].Index)
	same("a row retired in place", bt)
	clear(bt.Vectors[top[0].Index*16 : (top[0].Index+1)*16])
	bt.RetiredAt[top[0].Index] = float32(math.Inf(1))
	bt.Status[3] = temporal.Archived
	bt.Changed(top[0].Index, 3)
	q2 := *q
	q2.Time.Statuses = temporal.StatusesOf(temporal.Active)
	q = &q2
	same("a zeroed vector and a status", bt)
	other, _ := testBatch(t, r, 25, 16)
	same("another batch", other)
}

// ScoreMany over many queries (two launches of the tiled kernel: 16 and
// then 5 queries; tm_fused's two passes for a pooled method) returns the
// CPU backend's hits, at dimensions that leave partial column steps.
func TestScoreManyTiled(t *testing.T) {
	d := openDevice(t)
	be := NewBackend(d, ptr(testOptions()))
	defer be.Close()
	r := rand.New(rand.NewPCG(11, 12))
	for _, dim := range []int{5, 33, 100} {
		bt, q := testBatch(t, r, 70, dim)
		qs := make([]kernels.Query, 21)
		for j := range qs {
			_, qj := testBatch(t, r, 0, dim)
			qs[j] = *qj
			qs[j].Time = q.Time
			if j%4 == 1 {
				qs[j].Time.At = -30
			}
		}
		for _, m := range []temporal.Method{temporal.MethodTidemark, temporal.MethodSmartVector, temporal.MethodArticle} {
			p := temporal.Preset(m)
			got, err := be.ScoreMany(context.Background(), bt, qs, &p, 7, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := kernels.DefaultCPU().ScoreMany(context.Background(), bt, qs, &p, 7, nil)
			if err != nil {
				t.Fatal(err)
			}
			for j := range qs {
				if len(got[j]) != len(want[j]) {
					t.Fatalf("dim %d %v query %d: %d hits, CPU %d", dim, m, j, len(got[j]), len(want[j]))
				}
				for k := range got[j] {
					g, w := got[j][k], want[j][k]
					if g.ID != w.ID || math.Abs(g.Score-w.Score) > 1e-5*math.Max(1, math.Abs(w.Score)) || math.Abs(g.Sim-w.Sim) > 1e-6 {
						t.Fatalf("dim %d %v query %d hit %d: %+v, CPU %+v", dim, m, j, k, g, w)
					}
				}
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// fromBF16 is a bfloat16's float32.
func fromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }
