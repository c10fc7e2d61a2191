package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/internal/offheap"
	"github.com/tidemark/tidemark/internal/textout"
)

// ANNData is a dataset in the format of ../shared/data/glove100/README.md:
// PREFIX.meta ("N D NQ K"), PREFIX.base (N·D float32), PREFIX.query
// (NQ·D float32) and PREFIX.gt (NQ·K int32 ids of the exact top-K by inner
// product), all little-endian.
type ANNData struct {
	N, Dim, NQ, K int
	Base, Query   []float32
	GT            []int32
}

// maxANNElements bounds what LoadANN will allocate for one file.
const maxANNElements = 1 << 31

// LoadANN reads the dataset at prefix, checking every file's size against
// the meta line.
func LoadANN(prefix string) (*ANNData, error) {
	meta, err := os.ReadFile(prefix + ".meta")
	if err != nil {
		return nil, err
	}
	var d ANNData
	if _, err := fmt.Sscan(strings.TrimSpace(string(meta)), &d.N, &d.Dim, &d.NQ, &d.K); err != nil {
		return nil, fmt.Errorf("bench: %s.meta: want \"N D NQ K\": %w", prefix, err)
	}
	if d.N <= 0 || d.Dim <= 0 || d.NQ <= 0 || d.K <= 0 || d.N > maxANNElements || d.Dim > maxANNElements ||
		d.NQ > maxANNElements || d.K > maxANNElements || d.N > maxANNElements/d.Dim || d.NQ > maxANNElements/d.Dim ||
		d.NQ > maxANNElements/d.K {
		return nil, fmt.Errorf("bench: %s.meta: implausible sizes %d %d %d %d", prefix, d.N, d.Dim, d.NQ, d.K)
	}
	if d.Base, err = readFloats(prefix+".base", d.N*d.Dim); err != nil {
		return nil, err
	}
	if d.Query, err = readFloats(prefix+".query", d.NQ*d.Dim); err != nil {
		return nil, err
	}
	raw, err := readExact(prefix+".gt", d.NQ*d.K*4)
	if err != nil {
		return nil, err
	}
	d.GT = make([]int32, d.NQ*d.K)
	for i := range d.GT {
		d.GT[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		if d.GT[i] < 0 || int(d.GT[i]) >= d.N {
			return nil, fmt.Errorf("bench: %s.gt: id %d out of range", prefix, d.GT[i])
		}
	}
	return &d, nil
}

func readExact(path string, size int) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != size {
		return nil, fmt.Errorf("bench: %s has %d bytes, the meta line implies %d", path, len(b), size)
	}
	return b, nil
}

func readFloats(path string, n int) ([]float32, error) {
	raw, err := readExact(path, 4*n)
	if err != nil {
		return nil, err
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// ANNConfig configures [RunANN]. A zero field takes its default.
type ANNConfig struct {
	// Prefix is the dataset (required).
	Prefix string
	// M and EfConstruction are the graph parameters (defaults the index's,
	// index.DefaultM and index.DefaultEfConstruction: 16 and 100, the
	// issue's comparison setting).
	M, EfConstruction int
	// Efs are the search widths to measure (default 10, 20, 40, 80, 160,
	// 320).
	Efs []int
	// BuildThreads is the number of inserting goroutines (default 1, as in
	// the hnswlib harness's reference run).
	BuildThreads int
	// SearchThreads is the number of goroutines for the all-core rate
	// (default GOMAXPROCS).
	SearchThreads int
	// Quantize builds tidemark's index with int8 codes (index.Options
	// Quantize) and measures each ef twice on the same graph: walking
	// with the float32 vectors ("tidemark") and with the codes
	// ("tidemark-int8").
	Quantize bool
	// HnswlibSource is the hnswlib harness (hb.cpp of
	// ../shared/tools/hnswlib-bench); empty skips hnswlib.
	HnswlibSource string
	// CoderDir is the coder/hnsw harness module (tools/coderhnsw-bench);
	// empty skips coder/hnsw.
	CoderDir string
	// Progress, when set, receives a line per measured row.
	Progress io.Writer
}

func (c *ANNConfig) withDefaults() ANNConfig {
	o := *c
	if o.M == 0 {
		o.M = index.DefaultM
	}
	if o.EfConstruction == 0 {
		o.EfConstruction = index.DefaultEfConstruction
	}
	if len(o.Efs) == 0 {
		o.Efs = []int{10, 20, 40, 80, 160, 320}
	}
	if o.BuildThreads == 0 {
		o.BuildThreads = 1
	}
	if o.SearchThreads == 0 {
		o.SearchThreads = runtime.GOMAXPROCS(0)
	}
	return o
}

// ANNRow is one (system, ef) measurement.
type ANNRow struct {
	System string `json:"system"`
	Ef     int    `json:"ef"`
	// RecallAt10 is recall@K against the dataset's ground truth (K = 10
	// for GloVe-100).
	RecallAt10  float64  `json:"recall_at_10"`
	QPS1Thread  float64  `json:"qps_1thread"`
	QPSAllCores *float64 `json:"qps_all_cores"`
	BuildS      float64  `json:"build_s"`
	// MemoryBytes is the index's memory: heap growth for Go systems (for
	// tidemark plus its off-heap arrays, internal/offheap), resident-set
	// growth for hnswlib; 0 when unknown.
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	Note        string `json:"note,omitempty"`
}

// RunTidemarkANN builds tidemark's HNSW on the dataset and measures every
// ef.
func RunTidemarkANN(ctx context.Context, d *ANNData, cfg ANNConfig) ([]ANNRow, error) {
	c := cfg.withDefaults()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	offBefore := offheap.Mapped()
	h, err := index.New(&index.Options{Dim: d.Dim, M: c.M, EfConstruction: c.EfConstruction, Capacity: d.N, Quantize: c.Quantize})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, c.BuildThreads)
	var next sync.Mutex
	i := 0
	for t := 0; t < c.BuildThreads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				j := i
				i++
				next.Unlock()
				if j >= d.N {
					return
				}
				if err := h.Insert(uint64(j), d.Base[j*d.Dim:(j+1)*d.Dim]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	build := time.Since(start).Seconds()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	// The index's arrays are off the Go heap (internal/offheap): count
	// what they committed beside the heap's growth.
	off := offheap.Mapped() - offBefore
	mem := int64(after.HeapInuse) - int64(before.HeapInuse) + off
	progress(c.Progress, "tidemark: built %d×%d in %.2fs (%d threads), memory +%.1f MiB (%.1f MiB off the heap)\n", d.N, d.Dim, build, c.BuildThreads, float64(mem)/(1<<20), float64(off)/(1<<20))
	var rows []ANNRow
	type variant struct {
		system  string
		float32 bool
		mem     int64
	}
	// The float32 walk's memory is the index's without the codes (one
	// row of h.CodeBytes per node), as an index built without Quantize.
	variants := []variant{{"tidemark", true, mem - int64(h.CodeBytes())}}
	if c.Quantize {
		variants = append(variants, variant{"tidemark-int8", false, mem})
	}
	for _, ef := range c.Efs {
		for _, v := range variants {
			row, err := measureTidemark(ctx, h, d, c, ef, v.system, v.float32, build, v.mem)
			if err != nil {
				return rows, err
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// measureTidemark measures one ef of a built index: recall and q/s on one
// thread, then q/s on SearchThreads.
func measureTidemark(ctx context.Context, h *index.HNSW, d *ANNData, c ANNConfig, ef int, system string, useFloat bool, build float64, mem int64) (ANNRow, error) {
	if err := ctx.Err(); err != nil {
		return ANNRow{}, err
	}
	row := ANNRow{System: system, Ef: ef, BuildS: build, MemoryBytes: mem}
	opts := &index.SearchOptions{Ef: ef, Float32: useFloat}
	hits := 0
	t0 := time.Now()
	for qi := 0; qi < d.NQ; qi++ {
		res, err := h.Search(ctx, d.Query[qi*d.Dim:(qi+1)*d.Dim], d.K, opts)
		if err != nil {
			return ANNRow{}, err
		}
		hits += countHits(res, d.GT[qi*d.K:(qi+1)*d.K])
	}
	row.QPS1Thread = float64(d.NQ) / time.Since(t0).Seconds()
	row.RecallAt10 = float64(hits) / float64(d.NQ*d.K)
	// All cores: the same queries split over SearchThreads goroutines.
	t0 = time.Now()
	var swg sync.WaitGroup
	var serr error
	var emu sync.Mutex
	per := (d.NQ + c.SearchThreads - 1) / c.SearchThreads
	for t := 0; t < c.SearchThreads; t++ {
		lo, hi := min(d.NQ, t*per), min(d.NQ, (t+1)*per)
		swg.Add(1)
		go func() {
			defer swg.Done()
			for qi := lo; qi < hi; qi++ {
				if _, err := h.Search(ctx, d.Query[qi*d.Dim:(qi+1)*d.Dim], d.K, opts); err != nil {
					emu.Lock()
					serr = errors.Join(serr, err)
					emu.Unlock()
					return
				}
			}
		}()
	}
	swg.Wait()
	if serr != nil {
		return ANNRow{}, serr
	}
	all := float64(d.NQ) / time.Since(t0).Seconds()
	row.QPSAllCores = &all
	progress(c.Progress, "%s ef=%d: recall@%d %.3f, %.0f q/s 1 thread, %.0f q/s %d threads\n", system, ef, d.K, row.RecallAt10, row.QPS1Thread, all, c.SearchThreads)
	return row, nil
}

func countHits(res []index.Result, gt []int32) int {
	n := 0
	for _, r := range res {
		for _, g := range gt {
			if uint64(g) == r.Key {
				n++
				break
			}
		}
	}
	return n
}

// ANNReport is the outcome of [RunANN]: one row per (system, ef), and a
// note per system that could not run.
type ANNReport struct {
	Prefix  string   `json:"prefix"`
	N       int      `json:"n"`
	Dim     int      `json:"dim"`
	M       int      `json:"m"`
	EfC     int      `json:"ef_construction"`
	Rows    []ANNRow `json:"rows"`
	Skipped []string `json:"skipped,omitempty"`
}

// RunANN measures tidemark's HNSW and, in the same run, the baselines that
// are available: the hnswlib harness (compiled from cfg.HnswlibSource with
// g++ when hnswlib's header is installed) and coder/hnsw (the separate
// module in cfg.CoderDir, run with the go command).
func RunANN(ctx context.Context, cfg ANNConfig) (*ANNReport, error) {
	c := cfg.withDefaults()
	if c.Prefix == "" {
		return nil, fmt.Errorf("bench: ANNConfig.Prefix is required")
	}
	d, err := LoadANN(c.Prefix)
	if err != nil {
		return nil, err
	}
	rep := &ANNReport{Prefix: c.Prefix, N: d.N, Dim: d.Dim, M: c.M, EfC: c.EfConstruction}
	rows, err := RunTidemarkANN(ctx, d, c)
	if err != nil {
		return nil, err
	}
	rep.Rows = append(rep.Rows, rows...)
	dataBytes := int64(len(d.Base)+len(d.Query))*4 + int64(len(d.GT))*4
	d = nil
	runtime.GC()
	if rows, note := runHnswlib(ctx, c, dataBytes); note != "" {
		rep.Skipped = append(rep.Skipped, note)
	} else {
		rep.Rows = append(rep.Rows, rows...)
	}
	if rows, note := runCoderHNSW(ctx, c); note != "" {
		rep.Skipped = append(rep.Skipped, note)
	} else {
		rep.Rows = append(rep.Rows, rows...)
	}
	return rep, nil
}

// WriteTable prints the report as one table for people.
func (r *ANNReport) WriteTable(w io.Writer) error {
	ew := &textout.Writer{W: w}
	ew.Printf("ANN benchmark: %s (n=%d, d=%d), M=%d, efConstruction=%d\n\n", r.Prefix, r.N, r.Dim, r.M, r.EfC)
	ew.Printf("%-11s %5s %10s %12s %13s %9s %10s\n", "system", "ef", "recall@10", "q/s 1-thr", "q/s all-core", "build s", "mem MiB")
	for _, row := range r.Rows {
		all := "—"
		if row.QPSAllCores != nil {
			all = fmt.Sprintf("%.0f", *row.QPSAllCores)
		}
		mem := "—"
		if row.MemoryBytes > 0 {
			mem = fmt.Sprintf("%.1f", float64(row.MemoryBytes)/(1<<20))
		}
		ew.Printf("%-11s %5d %10.4f %12.0f %13s %9.2f %10s\n", row.System, row.Ef, row.RecallAt10, row.QPS1Thread, all, row.BuildS, mem)
	}
	for _, s := range r.Skipped {
		ew.Printf("skipped: %s\n", s)
	}
	ew.Printf("\nmemory: tidemark heap growth plus its off-heap arrays, coder/hnsw heap growth, over the build; hnswlib peak RSS minus the dataset.\n")
	return ew.Err
}

// WriteJSON prints the report as JSON: the rows, one object per (system, ef).
func (r *ANNReport) WriteJSON(w io.Writer) error {
	return writeIndented(w, r)
}
