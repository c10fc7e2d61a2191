// Command coderhnsw-bench measures github.com/coder/hnsw v0.6.1 on the
// GloVe-100 files (see /work/shared/data/glove100/README.md): build time,
// heap memory of the built graph, and for each search ef the recall@K against
// exact ground truth, single-thread q/s and all-core q/s.
//
// It lives in its own Go module so that the main tidemark module does not
// depend on coder/hnsw. See README.md in this directory.
package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/hnsw"
)

const system = "coder/hnsw"

// dataset is a (possibly truncated) GloVe-style data set.
type dataset struct {
	n, dim, nq, k int
	base          []float32 // n*dim
	query         []float32 // nq*dim
	gt            []int32   // nq*k, ids into base, best first
	gtRecomputed  bool
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "coderhnsw-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		prefix  = flag.String("data", "", "data prefix: reads PREFIX.meta, PREFIX.base, PREFIX.query, PREFIX.gt (required)")
		m       = flag.Int("m", 16, "graph M (max neighbours per node and layer)")
		efc     = flag.Int("efc", 100, "efConstruction: coder/hnsw has none; this is Graph.EfSearch while adding nodes (see README.md)")
		efList  = flag.String("ef", "10,20,40,80,160,320", "comma-separated search ef values (Graph.EfSearch at query time)")
		nFlag   = flag.Int("n", 0, "use only the first n base vectors and recompute the ground truth by brute force (0 = all)")
		threads = flag.Int("threads", runtime.GOMAXPROCS(0), "goroutines for the all-core search run")
		timeout = flag.Duration("timeout", 10*time.Minute, "overall time limit; the program exits with status 3 when it is exceeded")
		minTime = flag.Duration("mintime", time.Second, "repeat whole passes over the query set until at least this long, for each q/s figure")
		seed    = flag.Int64("seed", 0, "seed for Graph.Rng (level generation); 0 = the package default (time-seeded)")
		asJSON  = flag.Bool("json", false, "print one JSON object per line instead of a table")
	)
	flag.Parse()
	if flag.NArg() != 0 {
		return fmt.Errorf("unexpected arguments: %q", flag.Args())
	}
	if *prefix == "" {
		return errors.New("-data PREFIX is required")
	}
	if *m < 2 {
		return fmt.Errorf("-m must be >= 2, got %d", *m)
	}
	if *efc < 1 {
		return fmt.Errorf("-efc must be >= 1, got %d", *efc)
	}
	if *threads < 1 {
		return fmt.Errorf("-threads must be >= 1, got %d", *threads)
	}
	if *nFlag < 0 {
		return fmt.Errorf("-n must be >= 0, got %d", *nFlag)
	}
	if *minTime < 0 {
		return fmt.Errorf("-mintime must be >= 0, got %v", *minTime)
	}
	if *timeout <= 0 {
		return fmt.Errorf("-timeout must be positive, got %v", *timeout)
	}
	efs, err := parseEfList(*efList)
	if err != nil {
		return err
	}

	// The library has no cancellation, so the overall limit is a watchdog
	// that ends the process. Lines already printed stay printed.
	start := time.Now()
	time.AfterFunc(*timeout, func() {
		fmt.Fprintf(os.Stderr, "coderhnsw-bench: timeout: overall limit -timeout %v exceeded after %.1f s\n",
			*timeout, time.Since(start).Seconds())
		os.Exit(3)
	})

	ds, err := load(*prefix, *nFlag)
	if err != nil {
		return err
	}
	logf("data: n=%d dim=%d queries=%d k=%d (%s)", ds.n, ds.dim, ds.nq, ds.k, *prefix)
	if ds.gtRecomputed {
		t := time.Now()
		recomputeGT(ds, *threads)
		logf("ground truth: recomputed by brute-force inner product (float64) over the first n=%d base vectors, top-%d, in %.1f s",
			ds.n, ds.k, time.Since(t).Seconds())
	} else {
		logf("ground truth: read from %s.gt", *prefix)
	}
	if e := checkDistance(ds); e > 1e-4 {
		return fmt.Errorf("sanity check failed: hnsw.CosineDistance differs from 1-dot (float64) by up to %g on these unit vectors", e)
	} else {
		logf("distance check: hnsw.CosineDistance vs 1-dot(float64) on 1000 pairs: max |diff| = %.2g", e)
	}

	// ---- build ----
	g := hnsw.NewGraph[int]() // defaults: M=16, Ml=0.25, Distance=CosineDistance, EfSearch=20
	g.M = *m
	g.Distance = hnsw.CosineDistance
	g.EfSearch = *efc // coder/hnsw uses EfSearch as the beam width of the search inside Add
	if *seed != 0 {
		g.Rng = rand.New(rand.NewSource(*seed))
	}
	logf("build: M=%d Ml=%g EfSearch(during Add)=%d, one goroutine (coder/hnsw has no locking; concurrent Add is unsafe)",
		g.M, g.Ml, g.EfSearch)

	heapBefore := heapInuse()
	t0 := time.Now()
	step := ds.n / 10
	if step == 0 {
		step = ds.n
	}
	for i := 0; i < ds.n; i++ {
		g.Add(hnsw.MakeNode(i, ds.row(i)))
		if (i+1)%step == 0 && i+1 < ds.n {
			logf("build: %d/%d nodes, %.1f s", i+1, ds.n, time.Since(t0).Seconds())
		}
	}
	buildS := time.Since(t0).Seconds()
	heapAfter := heapInuse()
	runtime.KeepAlive(ds)
	if g.Len() != ds.n {
		return fmt.Errorf("graph has %d nodes after adding %d", g.Len(), ds.n)
	}
	heapBytes := int64(heapAfter) - int64(heapBefore)
	logf("build: %d nodes in %.2f s; heap in use +%d bytes (%.1f MiB; the %d vectors themselves, %.1f MiB, are shared, not copied, and not included)",
		ds.n, buildS, heapBytes, float64(heapBytes)/(1<<20), ds.n, float64(ds.n*ds.dim*4)/(1<<20))

	out := newPrinter(*asJSON)
	out.build(buildLine{System: system, Kind: "build", N: ds.n, Dim: ds.dim, M: *m, Efc: *efc,
		BuildS: round(buildS, 3), HeapBytes: heapBytes}, *threads)

	// ---- search ----
	for _, ef := range efs {
		g.EfSearch = ef
		recall, qps1, errs := searchSingle(g, ds, *minTime)
		if errs != "" {
			// The single-threaded run is the measurement itself; a panic there is fatal.
			return fmt.Errorf("ef=%d: single-threaded search: %s", ef, errs)
		}
		line := efLine{System: system, Ef: ef, RecallAt10: recall, Qps1Thread: round(qps1, 1), BuildS: round(buildS, 3)}
		qpsAll, recallAll, cerr := searchConcurrent(g, ds, *threads, *minTime)
		if cerr == nil && math.Abs(recallAll-recall) > 0.05 {
			cerr = fmt.Errorf("concurrent search recall %.4f differs from single-threaded %.4f by more than 0.05", recallAll, recall)
		}
		if cerr != nil {
			line.Error = fmt.Sprintf("concurrent search with %d goroutines: %v", *threads, cerr)
		} else {
			v := round(qpsAll, 1)
			line.QpsAllCores = &v
		}
		out.ef(line, recallAll)
	}
	return nil
}

type buildLine struct {
	System    string  `json:"system"`
	Kind      string  `json:"kind"`
	N         int     `json:"n"`
	Dim       int     `json:"dim"`
	M         int     `json:"m"`
	Efc       int     `json:"efc"`
	BuildS    float64 `json:"build_s"`
	HeapBytes int64   `json:"heap_bytes"`
}

type efLine struct {
	System      string   `json:"system"`
	Ef          int      `json:"ef"`
	RecallAt10  float64  `json:"recall_at_10"`
	Qps1Thread  float64  `json:"qps_1thread"`
	QpsAllCores *float64 `json:"qps_all_cores"` // null when the concurrent run failed
	BuildS      float64  `json:"build_s"`
	Error       string   `json:"error,omitempty"`
}

type printer struct {
	json    bool
	enc     *json.Encoder
	threads int
}

func newPrinter(asJSON bool) *printer {
	return &printer{json: asJSON, enc: json.NewEncoder(os.Stdout)}
}

func (p *printer) build(b buildLine, threads int) {
	p.threads = threads
	if p.json {
		_ = p.enc.Encode(b)
		return
	}
	fmt.Printf("%s  n=%d dim=%d M=%d efc=%d  build %.2f s (1 goroutine)  heap %.1f MiB (%d bytes)\n\n",
		b.System, b.N, b.Dim, b.M, b.Efc, b.BuildS, float64(b.HeapBytes)/(1<<20), b.HeapBytes)
	fmt.Printf("%6s  %12s  %12s  %16s  %s\n", "ef", "recall@10", "q/s 1 thr", fmt.Sprintf("q/s %d thr", threads), "note")
}

func (p *printer) ef(l efLine, recallAll float64) {
	if p.json {
		_ = p.enc.Encode(l)
		return
	}
	all, note := "null", l.Error
	if l.QpsAllCores != nil {
		all = strconv.FormatFloat(*l.QpsAllCores, 'f', 1, 64)
		note = fmt.Sprintf("recall in concurrent run %.4f", recallAll)
	}
	fmt.Printf("%6d  %12.4f  %12.1f  %16s  %s\n", l.Ef, l.RecallAt10, l.Qps1Thread, all, note)
}

// searchSingle runs all queries on one goroutine and returns recall@K (from
// the first pass) and q/s. Whole passes over the query set are repeated until
// minTime has elapsed, so that q/s is not taken from a ~0.1 s window.
func searchSingle(g *hnsw.Graph[int], ds *dataset, minTime time.Duration) (recall, qps float64, errStr string) {
	hits, done := 0, 0
	var err error
	t := time.Now()
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		for pass := 0; pass == 0 || time.Since(t) < minTime; pass++ {
			for q := 0; q < ds.nq; q++ {
				res := g.Search(ds.qrow(q), ds.k)
				h, e := scoreResult(ds, q, res)
				if e != nil {
					err = e
					return
				}
				if pass == 0 {
					hits += h
				}
			}
			done += ds.nq
		}
	}()
	el := time.Since(t).Seconds()
	if err != nil {
		return 0, 0, err.Error()
	}
	return float64(hits) / float64(ds.nq*ds.k), float64(done) / el, ""
}

// searchConcurrent runs the query set across `threads` goroutines that pull
// query numbers from a shared counter, repeating whole passes until minTime
// has elapsed (recall is from the first pass). Each goroutine recovers from a
// panic and every result is checked, so a failure is reported, not fatal.
// (A Go runtime fatal error such as "concurrent map writes" cannot be
// recovered; coder/hnsw's Search only reads shared state, so none is expected.)
func searchConcurrent(g *hnsw.Graph[int], ds *dataset, threads int, minTime time.Duration) (qps, recall float64, err error) {
	var (
		hits  atomic.Int64
		mu    sync.Mutex
		first error
	)
	fail := func(e error) {
		mu.Lock()
		if first == nil {
			first = e
		}
		mu.Unlock()
	}
	done := 0
	t := time.Now()
	for pass := 0; pass == 0 || time.Since(t) < minTime; pass++ {
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < threads; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					if r := recover(); r != nil {
						fail(fmt.Errorf("panic: %v", r))
					}
				}()
				local := 0
				for {
					q := int(next.Add(1) - 1)
					if q >= ds.nq {
						break
					}
					res := g.Search(ds.qrow(q), ds.k)
					h, e := scoreResult(ds, q, res)
					if e != nil {
						fail(e)
						return
					}
					local += h
				}
				if pass == 0 {
					hits.Add(int64(local))
				}
			}()
		}
		wg.Wait()
		if first != nil {
			return 0, 0, first
		}
		done += ds.nq
	}
	el := time.Since(t).Seconds()
	return float64(done) / el, float64(hits.Load()) / float64(ds.nq*ds.k), nil
}

// scoreResult validates one result list and counts how many of its keys are
// in the query's ground-truth top-K.
func scoreResult(ds *dataset, q int, res []hnsw.Node[int]) (int, error) {
	if len(res) > ds.k {
		return 0, fmt.Errorf("query %d: %d results for k=%d", q, len(res), ds.k)
	}
	gt := ds.gt[q*ds.k : (q+1)*ds.k]
	hits := 0
	seen := make(map[int]bool, len(res))
	for _, r := range res {
		if r.Key < 0 || r.Key >= ds.n {
			return 0, fmt.Errorf("query %d: result key %d out of range [0,%d)", q, r.Key, ds.n)
		}
		if seen[r.Key] {
			return 0, fmt.Errorf("query %d: duplicate result key %d", q, r.Key)
		}
		seen[r.Key] = true
		for _, id := range gt {
			if int(id) == r.Key {
				hits++
				break
			}
		}
	}
	return hits, nil
}

func (ds *dataset) row(i int) []float32 {
	return ds.base[i*ds.dim : (i+1)*ds.dim : (i+1)*ds.dim]
}

func (ds *dataset) qrow(i int) []float32 {
	return ds.query[i*ds.dim : (i+1)*ds.dim : (i+1)*ds.dim]
}

// load reads PREFIX.meta/.base/.query/.gt, checking every size against the
// meta line. With n > 0 only the first n base vectors are read and the ground
// truth is marked for recomputation.
func load(prefix string, n int) (*dataset, error) {
	metaPath := prefix + ".meta"
	mb, err := os.ReadFile(metaPath)
	if err != nil {
		return nil, fmt.Errorf("reading meta: %w", err)
	}
	f := strings.Fields(string(mb))
	if len(f) != 4 {
		return nil, fmt.Errorf("%s: want 4 integers \"N D NQ K\", got %q", metaPath, strings.TrimSpace(string(mb)))
	}
	var v [4]int
	for i, s := range f {
		x, err := strconv.Atoi(s)
		if err != nil || x <= 0 {
			return nil, fmt.Errorf("%s: field %d (%q) is not a positive integer", metaPath, i+1, s)
		}
		v[i] = x
	}
	ds := &dataset{n: v[0], dim: v[1], nq: v[2], k: v[3]}
	fullN := ds.n
	if ds.k > fullN {
		return nil, fmt.Errorf("%s: K=%d > N=%d", metaPath, ds.k, fullN)
	}
	if n > 0 {
		if n > fullN {
			return nil, fmt.Errorf("-n %d is larger than the data set (N=%d)", n, fullN)
		}
		if n < ds.k {
			return nil, fmt.Errorf("-n %d is smaller than K=%d", n, ds.k)
		}
		if n < fullN {
			ds.n = n
			ds.gtRecomputed = true
		}
	}
	if ds.base, err = readFloats(prefix+".base", ds.dim, fullN*ds.dim, ds.n*ds.dim); err != nil {
		return nil, err
	}
	if ds.query, err = readFloats(prefix+".query", ds.dim, ds.nq*ds.dim, ds.nq*ds.dim); err != nil {
		return nil, err
	}
	if !ds.gtRecomputed {
		raw, err := readRaw(prefix+".gt", ds.nq*ds.k*4, ds.nq*ds.k*4)
		if err != nil {
			return nil, err
		}
		ds.gt = make([]int32, ds.nq*ds.k)
		for i := range ds.gt {
			id := int32(binary.LittleEndian.Uint32(raw[4*i:]))
			if id < 0 || int(id) >= ds.n {
				return nil, fmt.Errorf("%s.gt: entry %d (query %d) is id %d, outside [0,%d)", prefix, i, i/ds.k, id, ds.n)
			}
			ds.gt[i] = id
		}
	}
	return ds, nil
}

// readRaw checks that path holds exactly wantSize bytes and returns its first
// readSize bytes.
func readRaw(path string, wantSize, readSize int) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening data file: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Size() != int64(wantSize) {
		return nil, fmt.Errorf("%s: size %d bytes, want %d from the meta file", path, st.Size(), wantSize)
	}
	buf := make([]byte, readSize)
	if _, err := io.ReadFull(fh, buf); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return buf, nil
}

func readFloats(path string, dim, wantCount, readCount int) ([]float32, error) {
	raw, err := readRaw(path, wantCount*4, readCount*4)
	if err != nil {
		return nil, err
	}
	out := make([]float32, readCount)
	for i := range out {
		x := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("%s: value %d (row %d) is %v", path, i, i/dim, x)
		}
		out[i] = x
	}
	return out, nil
}

// recomputeGT computes the exact top-K by inner product (float64) of every
// query over ds.base, best first, ties broken by the lower id.
func recomputeGT(ds *dataset, threads int) {
	ds.gt = make([]int32, ds.nq*ds.k)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]int32, 0, ds.k+1)
			scores := make([]float64, 0, ds.k+1)
			for {
				q := int(next.Add(1) - 1)
				if q >= ds.nq {
					return
				}
				qv := ds.qrow(q)
				ids, scores = ids[:0], scores[:0]
				for i := 0; i < ds.n; i++ {
					bv := ds.row(i)
					var s float64
					for j, x := range qv {
						s += float64(x) * float64(bv[j])
					}
					if len(ids) == ds.k && s <= scores[ds.k-1] {
						continue
					}
					// insert keeping descending order; equal scores keep the earlier (lower) id first
					pos := sort.Search(len(scores), func(p int) bool { return scores[p] < s })
					ids = append(ids, 0)
					scores = append(scores, 0)
					copy(ids[pos+1:], ids[pos:])
					copy(scores[pos+1:], scores[pos:])
					ids[pos], scores[pos] = int32(i), s
					if len(ids) > ds.k {
						ids, scores = ids[:ds.k], scores[:ds.k]
					}
				}
				copy(ds.gt[q*ds.k:], ids)
			}
		}()
	}
	wg.Wait()
}

// checkDistance compares hnsw.CosineDistance with 1 - dot (float64) on
// query/base pairs; the data is L2-normalised, so they should agree.
func checkDistance(ds *dataset) float64 {
	worst := 0.0
	for i := 0; i < 1000; i++ {
		q, b := ds.qrow(i%ds.nq), ds.row((i*7919)%ds.n)
		var dot float64
		for j := range q {
			dot += float64(q[j]) * float64(b[j])
		}
		worst = math.Max(worst, math.Abs(float64(hnsw.CosineDistance(q, b))-(1-dot)))
	}
	return worst
}

func parseEfList(s string) ([]int, error) {
	var efs []int
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		x, err := strconv.Atoi(p)
		if err != nil || x < 1 {
			return nil, fmt.Errorf("-ef: %q is not a positive integer", p)
		}
		efs = append(efs, x)
	}
	if len(efs) == 0 {
		return nil, errors.New("-ef: empty list")
	}
	return efs, nil
}

func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}
