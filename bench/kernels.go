package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/tidemark/tidemark/cuda"
	"github.com/tidemark/tidemark/internal/peak"
	"github.com/tidemark/tidemark/internal/textout"
	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/simd"
	"github.com/tidemark/tidemark/temporal"
)

// KernelsConfig configures [RunKernels]. A zero field takes its default.
type KernelsConfig struct {
	// Ns are the batch sizes (default 10 000, 100 000, 1 000 000).
	Ns []int
	// Dims are the vector dimensions (default 384, 768, 1536).
	Dims []int
	// Queries are the query counts per call (default 1, 8, 16, 32, 64,
	// 256: one query is a memory-bound scan, many share it and become
	// bound by arithmetic, and the rows between show the crossover).
	Queries []int
	// K is the number of results per query (default 10).
	K int
	// Method is the scoring preset (default tidemark).
	Method temporal.Method
	// Repeats is the number of timed calls per row (default 5).
	Repeats int
	// CopyBytes is the size of the memory-copy and read baseline buffers
	// (default 512 MiB: far beyond any cache).
	CopyBytes int
	// PlainBudget bounds the time spent running the plain-Go baseline for
	// one multi-query row; beyond it the baseline is one query's time ×
	// the query count (it processes queries one after another) and the row
	// says so (default 20 s).
	PlainBudget time.Duration
	// Seed makes the data reproducible (default 1).
	Seed uint64
	// Progress, when set, receives a line per measured row.
	Progress io.Writer
	// CUDA, when set, measures the cuda backend on that device instead of
	// the CPU: the copy baseline is then a device-to-device copy
	// (cuda.Device.CopyBandwidth, bytes read and written), the CPU's read
	// and FMA baselines and the plain-Go one are not run, and a row's
	// time is what a caller waits for (the launches, the selection on
	// the device, the k results copied back). BF16 stores the corpus as
	// bfloat16 there (its GB/s count 2 bytes per element).
	CUDA *cuda.Device
	BF16 bool
}

func (c *KernelsConfig) withDefaults() KernelsConfig {
	o := *c
	if len(o.Ns) == 0 {
		o.Ns = []int{10_000, 100_000, 1_000_000}
	}
	if len(o.Dims) == 0 {
		o.Dims = []int{384, 768, 1536}
	}
	if len(o.Queries) == 0 {
		o.Queries = []int{1, 8, 16, 32, 64, 256}
	}
	if o.K == 0 {
		o.K = 10
	}
	if o.Repeats == 0 {
		o.Repeats = 5
	}
	if o.CopyBytes == 0 {
		o.CopyBytes = 512 << 20
	}
	if o.PlainBudget == 0 {
		o.PlainBudget = 20 * time.Second
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// Validate names the first bad field.
func (c *KernelsConfig) Validate() error {
	o := c.withDefaults()
	for _, n := range o.Ns {
		if n <= 0 {
			return fmt.Errorf("bench: KernelsConfig.Ns has %d", n)
		}
	}
	for _, d := range o.Dims {
		if d <= 0 {
			return fmt.Errorf("bench: KernelsConfig.Dims has %d", d)
		}
	}
	for _, q := range o.Queries {
		if q <= 0 {
			return fmt.Errorf("bench: KernelsConfig.Queries has %d", q)
		}
	}
	switch {
	case o.K < 0:
		return fmt.Errorf("bench: KernelsConfig.K is %d", o.K)
	case o.Repeats < 1:
		return fmt.Errorf("bench: KernelsConfig.Repeats is %d", o.Repeats)
	case o.CopyBytes < 1<<20:
		return fmt.Errorf("bench: KernelsConfig.CopyBytes is %d, want ≥ 1 MiB", o.CopyBytes)
	}
	return nil
}

// KernelsRow is one measured configuration.
type KernelsRow struct {
	N       int    `json:"n"`
	Dim     int    `json:"dim"`
	Queries int    `json:"queries"`
	Backend string `json:"backend"`
	// SecondsMin and SecondsMedian time one call (all its queries).
	SecondsMin    float64 `json:"seconds_min"`
	SecondsMedian float64 `json:"seconds_median"`
	// GBPerS is vector bytes scored per second at the median time:
	// N·Dim·4·Queries / seconds (for many queries, the bandwidth a
	// one-query-at-a-time scan would need to match); GBPerSBest at the min.
	GBPerS     float64 `json:"gb_per_s"`
	GBPerSBest float64 `json:"gb_per_s_best"`
	// CandidatesPerS is N·Queries / median seconds.
	CandidatesPerS float64 `json:"candidates_per_s"`
	// RatioToCopy is GBPerS / the copy bandwidth (both medians).
	RatioToCopy float64 `json:"ratio_to_copy"`
	// RatioToRead is the vector bytes the call read from memory per
	// second (N·Dim·4 once, however many queries share the scan) over
	// the read bandwidth (both medians): how close a scan runs to the
	// real limit of a read-only pass.
	RatioToRead float64 `json:"ratio_to_read"`
	// GFLOPS is the dot products' arithmetic, 2·N·Dim·Queries FLOPs, per
	// median second (the epilogue's work is not counted, its time is);
	// RatioToPeak is GFLOPS over the report's FMA peak (PeakGFLOPS).
	GFLOPS      float64 `json:"gflops"`
	RatioToPeak float64 `json:"ratio_to_peak"`
	// RatioToPlainGo is the plain-Go baseline's median time over this
	// row's; PlainGoSeconds is that baseline, PlainExtrapolated whether it
	// was one query's time × Queries rather than a full run.
	RatioToPlainGo    float64 `json:"ratio_to_plain_go"`
	PlainGoSeconds    float64 `json:"plain_go_seconds"`
	PlainExtrapolated bool    `json:"plain_extrapolated,omitempty"`
	// PerQueryRatio is (median seconds / Queries) over the one-query row's
	// median seconds at the same N and Dim; 0 when there is none.
	PerQueryRatio float64 `json:"per_query_ratio,omitempty"`
}

// KernelsReport is the outcome of [RunKernels].
type KernelsReport struct {
	Method     string `json:"method"`
	SIMD       string `json:"simd"`
	CPU        string `json:"cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// CopyGBPerS is the memory copy bandwidth (bytes copied per second,
	// median over repeats, the better of one goroutine and GOMAXPROCS
	// goroutines); CopyGBPerSBest at the min time.
	CopyGBPerS     float64 `json:"copy_gb_per_s"`
	CopyGBPerSBest float64 `json:"copy_gb_per_s_best"`
	// Read is the read bandwidth in GB/s: a streaming sum over CopyBytes
	// on GOMAXPROCS goroutines (internal/peak.Read).
	Read Rate `json:"read_gb_per_s"`
	// FMA is the fused multiply-add peak in GFLOP/s on GOMAXPROCS
	// goroutines, one entry per instruction set the CPU offers
	// (internal/peak.FMA): the loop runs before the rows and again after
	// each size's rows (PeakSamples times in all), and each entry is the
	// sample with the best rate. PeakGFLOPS is the largest best rate, the
	// peak the rows' RatioToPeak divides by: the best, not a median, and
	// of every sample, because on a shared machine a neighbour only ever
	// slows the loop down, so the best is the cores' capability and
	// dividing by it never flatters a row.
	FMA         []Rate       `json:"fma_gflops"`
	PeakGFLOPS  float64      `json:"peak_gflops"`
	PeakSamples int          `json:"peak_samples"`
	Rows        []KernelsRow `json:"rows"`
}

// Rate is a measured machine limit: median and best over the repeats.
type Rate struct {
	Name   string  `json:"name"`
	Median float64 `json:"median"`
	Best   float64 `json:"best"`
}

// RunKernels measures the machine's limits — memory copy and read
// bandwidth, the FMA peak — then the fused stage (the default CPU
// backend's TopK or ScoreMany) at every N × Dim × Queries, and the
// plain-Go baseline on the same data, all in one process so the ratios
// compare like with like.
func RunKernels(ctx context.Context, cfg KernelsConfig) (*KernelsReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := cfg.withDefaults()
	if c.CUDA != nil {
		return runKernelsCUDA(ctx, &c)
	}
	be := kernels.DefaultCPU()
	rep := &KernelsReport{Method: c.Method.String(), SIMD: simd.Path(), CPU: simd.CPUFeatures().String(),
		GOMAXPROCS: runtime.GOMAXPROCS(0)}
	rep.CopyGBPerS, rep.CopyGBPerSBest = copyBandwidth(c.CopyBytes, c.Repeats)
	progress(c.Progress, "memory copy: %.2f GB/s median, %.2f best\n", rep.CopyGBPerS, rep.CopyGBPerSBest)
	rd := peak.Read(rep.GOMAXPROCS, max(c.Repeats, 3), c.CopyBytes)
	rep.Read = Rate(rd)
	progress(c.Progress, "memory read (%s): %.2f GB/s median, %.2f best\n", rd.Name, rd.Median, rd.Best)
	// The FMA loop runs now and again after each size's rows; the peak is
	// the best rate of any of them.
	fmaPeak := func() {
		for _, f := range peak.FMA(rep.GOMAXPROCS, max(c.Repeats, 7), 100*time.Millisecond) {
			i := slices.IndexFunc(rep.FMA, func(r Rate) bool { return r.Name == f.Name })
			if i < 0 {
				rep.FMA = append(rep.FMA, Rate(f))
			} else if f.Best > rep.FMA[i].Best {
				rep.FMA[i] = Rate(f)
			}
			rep.PeakGFLOPS = math.Max(rep.PeakGFLOPS, f.Best)
			progress(c.Progress, "FMA peak (%s): %.1f GFLOP/s median, %.1f best\n", f.Name, f.Median, f.Best)
		}
		rep.PeakSamples++
	}
	fmaPeak()
	p := temporal.Preset(c.Method)
	for _, dim := range c.Dims {
		for _, n := range c.Ns {
			b, qs := syntheticBatch(n, dim, maxInt(c.Queries), c.Seed)
			single := 0.0
			plainOne := 0.0
			for _, nq := range c.Queries {
				if err := ctx.Err(); err != nil {
					return rep, err
				}
				row := KernelsRow{N: n, Dim: dim, Queries: nq, Backend: be.Name()}
				var err error
				if row.SecondsMin, row.SecondsMedian, err = timeCall(ctx, be, b, qs[:nq], &p, c.K, c.Repeats); err != nil {
					return rep, err
				}
				bytes := float64(n) * float64(dim) * 4 * float64(nq)
				row.GBPerS, row.GBPerSBest = bytes/row.SecondsMedian/1e9, bytes/row.SecondsMin/1e9
				row.CandidatesPerS = float64(n) * float64(nq) / row.SecondsMedian
				row.RatioToCopy = row.GBPerS / rep.CopyGBPerS
				row.RatioToRead = float64(n) * float64(dim) * 4 / row.SecondsMedian / 1e9 / rep.Read.Median
				row.GFLOPS = 2 * float64(n) * float64(dim) * float64(nq) / row.SecondsMedian / 1e9
				row.RatioToPeak = row.GFLOPS / rep.PeakGFLOPS // final value set at the end
				if nq == 1 {
					single = row.SecondsMedian
				} else if single > 0 {
					row.PerQueryRatio = row.SecondsMedian / float64(nq) / single
				}
				// The plain-Go baseline on the same data and queries.
				var plain kernels.Plain
				plainCall := func(m int) func() error {
					return func() error {
						if m == 1 {
							_, _, err := plain.TopK(ctx, b, &qs[0], &p, c.K, nil)
							return err
						}
						_, err := plain.ScoreMany(ctx, b, qs[:m], &p, c.K, nil)
						return err
					}
				}
				if plainOne == 0 {
					t, err := timeit(min(3, c.Repeats), plainCall(1))
					if err != nil {
						return rep, err
					}
					plainOne = median(t)
				}
				switch {
				case nq == 1:
					row.PlainGoSeconds = plainOne
				case plainOne*float64(nq) <= c.PlainBudget.Seconds():
					t, err := timeit(1, plainCall(nq))
					if err != nil {
						return rep, err
					}
					row.PlainGoSeconds = t[0]
				default:
					row.PlainGoSeconds, row.PlainExtrapolated = plainOne*float64(nq), true
				}
				row.RatioToPlainGo = row.PlainGoSeconds / row.SecondsMedian
				rep.Rows = append(rep.Rows, row)
				progress(c.Progress, "n=%d dim=%d queries=%d: %.1f ms median, %.2f GB/s, ×%.2f read, %.1f GFLOP/s (×%.2f peak), ×%.1f plain Go\n",
					n, dim, nq, row.SecondsMedian*1e3, row.GBPerS, row.RatioToRead, row.GFLOPS, row.RatioToPeak, row.RatioToPlainGo)
			}
			b = nil
			runtime.GC()
			fmaPeak()
		}
	}
	rep.finishRatios()
	return rep, nil
}

// runKernelsCUDA is RunKernels on the cuda backend: the device-to-device
// copy bandwidth first, then every N × Dim × Queries.
func runKernelsCUDA(ctx context.Context, c *KernelsConfig) (*KernelsReport, error) {
	info := c.CUDA.Info()
	rep := &KernelsReport{Method: c.Method.String(), SIMD: "cuda", CPU: info.Device + " (compute capability " + info.ComputeCapability + ")",
		GOMAXPROCS: runtime.GOMAXPROCS(0)}
	var err error
	if rep.CopyGBPerS, rep.CopyGBPerSBest, err = c.CUDA.CopyBandwidth(c.CopyBytes, c.Repeats); err != nil {
		return nil, err
	}
	progress(c.Progress, "device copy (read + write): %.1f GB/s median, %.1f best\n", rep.CopyGBPerS, rep.CopyGBPerSBest)
	be := cuda.NewBackend(c.CUDA, &cuda.BackendOptions{BF16: c.BF16})
	defer be.Close()
	elem := 4.0
	if c.BF16 {
		elem = 2
	}
	p := temporal.Preset(c.Method)
	for _, dim := range c.Dims {
		for _, n := range c.Ns {
			// The corpus and the per-call scores (8 bytes per row and
			// query) must fit beside each other in device memory.
			need := float64(n) * (float64(dim)*elem + 13*4 + 16 + float64(min(maxInt(c.Queries), 16))*(8+4+1))
			if need > 0.8*float64(info.MemoryBytes) {
				progress(c.Progress, "n=%d dim=%d: skipped, needs %.1f GB of the device's %.1f\n", n, dim, need/1e9, float64(info.MemoryBytes)/1e9)
				continue
			}
			b, qs := syntheticBatch(n, dim, maxInt(c.Queries), c.Seed)
			single := 0.0
			for _, nq := range c.Queries {
				if err := ctx.Err(); err != nil {
					return rep, err
				}
				row := KernelsRow{N: n, Dim: dim, Queries: nq, Backend: be.Name()}
				var err error
				if row.SecondsMin, row.SecondsMedian, err = timeCall(ctx, be, b, qs[:nq], &p, c.K, c.Repeats); err != nil {
					return rep, err
				}
				bytes := float64(n) * float64(dim) * elem * float64(nq)
				row.GBPerS, row.GBPerSBest = bytes/row.SecondsMedian/1e9, bytes/row.SecondsMin/1e9
				row.CandidatesPerS = float64(n) * float64(nq) / row.SecondsMedian
				row.RatioToCopy = row.GBPerS / rep.CopyGBPerS
				row.GFLOPS = 2 * float64(n) * float64(dim) * float64(nq) / row.SecondsMedian / 1e9
				if nq == 1 {
					single = row.SecondsMedian
				} else if single > 0 {
					row.PerQueryRatio = row.SecondsMedian / float64(nq) / single
				}
				rep.Rows = append(rep.Rows, row)
				progress(c.Progress, "n=%d dim=%d queries=%d: %.3f ms median, %.1f GB/s (×%.2f device copy)\n",
					n, dim, nq, row.SecondsMedian*1e3, row.GBPerS, row.RatioToCopy)
			}
		}
	}
	return rep, nil
}

// timeCall times one call of be over qs — TopK for one query, ScoreMany
// for more — after one untimed call (which warms the CPU's pools and the
// page cache, or uploads the corpus to a device), repeats times; min and
// median seconds.
func timeCall(ctx context.Context, be kernels.Backend, b *kernels.Batch, qs []kernels.Query, p *temporal.Params, k, repeats int) (lo, med float64, err error) {
	call := func() error {
		if len(qs) == 1 {
			_, _, err := be.TopK(ctx, b, &qs[0], p, k, nil)
			return err
		}
		_, err := be.ScoreMany(ctx, b, qs, p, k, nil)
		return err
	}
	if err := call(); err != nil {
		return 0, 0, err
	}
	times, err := timeit(repeats, call)
	if err != nil {
		return 0, 0, err
	}
	return times[0], median(times), nil
}

// finishRatios divides every row's GFLOP/s by the run's final peak.
func (r *KernelsReport) finishRatios() {
	for i := range r.Rows {
		r.Rows[i].RatioToPeak = r.Rows[i].GFLOPS / r.PeakGFLOPS
	}
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// lines returns a printf for progress lines (a newline added) to w, which
// may be nil.
func lines(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) { progress(w, format+"\n", args...) }
}

// workDir returns dir, or a new temporary directory (removed by cleanup)
// when dir is "".
func workDir(dir, name string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "tidemark-bench-"+name+"-")
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

func maxInt(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// timeit runs f repeats times and returns the sorted durations in seconds.
func timeit(repeats int, f func() error) ([]float64, error) {
	ts := make([]float64, 0, repeats)
	for i := 0; i < repeats; i++ {
		start := time.Now()
		if err := f(); err != nil {
			return nil, err
		}
		ts = append(ts, time.Since(start).Seconds())
	}
	sort.Float64s(ts)
	return ts, nil
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// copyBandwidth times copy() of size bytes between two touched buffers,
// with one goroutine and with GOMAXPROCS goroutines on disjoint halves,
// and returns the better median and the better best, in GB/s of bytes
// copied.
func copyBandwidth(size, repeats int) (medianGBs, bestGBs float64) {
	src := make([]byte, size)
	dst := make([]byte, size)
	for i := range src {
		src[i] = byte(i)
	}
	copy(dst, src)
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		ts, _ := timeit(max(repeats, 3), func() error {
			var wg sync.WaitGroup
			per := (size + workers - 1) / workers
			for w := 0; w < workers; w++ {
				lo, hi := min(size, w*per), min(size, (w+1)*per)
				wg.Add(1)
				go func() { defer wg.Done(); copy(dst[lo:hi], src[lo:hi]) }()
			}
			wg.Wait()
			return nil
		})
		medianGBs = math.Max(medianGBs, float64(size)/median(ts)/1e9)
		bestGBs = math.Max(bestGBs, float64(size)/ts[0]/1e9)
	}
	return medianGBs, bestGBs
}

// syntheticBatch builds n random unit vectors with varied metadata (every
// kind and status, windows, counters, some superseded) and nq queries,
// deterministically from seed.
func syntheticBatch(n, dim, nq int, seed uint64) (*kernels.Batch, []kernels.Query) {
	b := &kernels.Batch{Dim: dim, Vectors: make([]float32, n*dim)}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := min(n, w*per), min(n, (w+1)*per)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				// Seeded per row, so the data does not depend on the
				// number of workers.
				x := (seed+uint64(i))*0x9E3779B97F4A7C15 | 1
				row := b.Vectors[i*dim : (i+1)*dim]
				for j := range row {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
					row[j] = float32(int32(x>>32)) / (1 << 31)
				}
				simd.Normalize(row)
			}
		}()
	}
	wg.Wait()
	b.ID = make([]uint64, n)
	b.Kind = make([]temporal.Kind, n)
	b.Status = make([]temporal.Status, n)
	b.Group = make([]uint32, n)
	cols := []*[]float32{&b.Created, &b.ValidFrom, &b.ValidTo, &b.RecordedAt, &b.RetiredAt, &b.Lambda, &b.Floor,
		&b.BaseConf, &b.ConfFrom, &b.Access, &b.Positive, &b.Negative, &b.Degree}
	for _, c := range cols {
		*c = make([]float32, n)
	}
	inf := float32(math.Inf(1))
	for i := 0; i < n; i++ {
		h := uint64(i)*0x9E3779B97F4A7C15 + seed
		h ^= h >> 29
		b.ID[i] = uint64(i)
		b.Kind[i] = temporal.Kind(h % 3)
		b.Status[i] = temporal.Status(h >> 3 % 3)
		created := -float32(h>>8%1000) / 2
		b.Created[i], b.ConfFrom[i] = created, created
		b.ValidFrom[i], b.ValidTo[i] = -inf, inf
		if h>>20%7 == 0 {
			b.ValidFrom[i], b.ValidTo[i] = created, created+float32(h>>24%400)
		}
		b.RecordedAt[i], b.RetiredAt[i] = created, inf
		if h>>32%10 == 0 {
			b.RetiredAt[i] = created + 30 // superseded
		}
		b.Lambda[i] = float32(temporal.Lambda([]float64{7, 30, 90, 365}[h>>36%4]))
		b.BaseConf[i] = float32(temporal.Source(h >> 40 % 8).Authority())
		b.Access[i], b.Positive[i], b.Negative[i], b.Degree[i] = float32(h>>44%20), float32(h>>48%4), float32(h>>52%2), float32(h>>56%9)
	}
	if err := b.Validate(); err != nil {
		panic("bench: synthetic batch is invalid: " + err.Error())
	}
	qs := make([]kernels.Query, nq)
	x := seed + 12345
	for j := range qs {
		v := make([]float32, dim)
		for i := range v {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			v[i] = float32(int32(x>>32)) / (1 << 31)
		}
		qs[j] = kernels.Query{Vector: v, Time: temporal.At(0), GroupLambda: []float64{0.01}}
	}
	return b, qs
}

// WriteTable prints the report for people.
func (r *KernelsReport) WriteTable(w io.Writer) error {
	tw := &textout.Writer{W: w}
	if r.SIMD == "cuda" {
		tw.Printf("fused stage, method %s, cuda on %s\ndevice copy bandwidth (read + write): %.1f GB/s median (%.1f best)\n",
			r.Method, r.CPU, r.CopyGBPerS, r.CopyGBPerSBest)
		tw.Printf("\n%9s %5s %7s %10s %10s %9s %7s %9s %9s\n", "n", "dim", "queries", "ms min", "ms median", "GB/s", "×copy", "GFLOP/s", "per-query")
		for _, row := range r.Rows {
			pq := ""
			if row.PerQueryRatio > 0 {
				pq = fmt.Sprintf("%.3f", row.PerQueryRatio)
			}
			tw.Printf("%9d %5d %7d %10.3f %10.3f %9.1f %7.2f %9.1f %9s\n", row.N, row.Dim, row.Queries,
				row.SecondsMin*1e3, row.SecondsMedian*1e3, row.GBPerS, row.RatioToCopy, row.GFLOPS, pq)
		}
		tw.Printf("\nGB/s counts the vector bytes scored per query (2 per element in bfloat16) at the median time, as a caller\nwaits for it; ×copy: over the device-to-device copy's read + write traffic; per-query: (time / queries) / one query's.\n")
		return tw.Err
	}
	tw.Printf("fused stage, method %s, cpu, simd %s (CPU %s), GOMAXPROCS %d\nmemory copy bandwidth: %.2f GB/s median (%.2f best)\nmemory read bandwidth (%s): %.2f GB/s median (%.2f best)\n",
		r.Method, r.SIMD, r.CPU, r.GOMAXPROCS, r.CopyGBPerS, r.CopyGBPerSBest, r.Read.Name, r.Read.Median, r.Read.Best)
	for _, f := range r.FMA {
		tw.Printf("FMA peak (%s): %.1f GFLOP/s median (%.1f best), the best of %d samples\n", f.Name, f.Median, f.Best, r.PeakSamples)
	}
	tw.Printf("\n%9s %5s %7s %10s %10s %8s %7s %7s %8s %6s %8s %9s\n",
		"n", "dim", "queries", "ms min", "ms median", "GB/s", "×copy", "×read", "GFLOP/s", "×peak", "×plain", "per-query")
	for _, row := range r.Rows {
		pq := ""
		if row.PerQueryRatio > 0 {
			pq = fmt.Sprintf("%.3f", row.PerQueryRatio)
		}
		plain := fmt.Sprintf("%.1f", row.RatioToPlainGo)
		if row.PlainExtrapolated {
			plain += "*"
		}
		tw.Printf("%9d %5d %7d %10.2f %10.2f %8.2f %7.2f %7.2f %8.1f %6.2f %8s %9s\n", row.N, row.Dim, row.Queries,
			row.SecondsMin*1e3, row.SecondsMedian*1e3, row.GBPerS, row.RatioToCopy, row.RatioToRead, row.GFLOPS, row.RatioToPeak, plain, pq)
	}
	tw.Printf("\nGB/s counts vector bytes scored per query (×copy: over the copy bandwidth); ×read: bytes read once per call\nover the read bandwidth; GFLOP/s: the dot products' 2·n·dim·queries per second, ×peak over the best FMA peak;\n×plain: plain-Go baseline time / this time (* = one query × count); per-query: (time / queries) / the one-query time.\n")
	return tw.Err
}

// WriteJSON prints the report as JSON, one object per measured row inside
// the report object.
func (r *KernelsReport) WriteJSON(w io.Writer) error {
	return writeIndented(w, r)
}
