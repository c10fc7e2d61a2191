package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
	"github.com/tidemark/tidemark/client"
	"github.com/tidemark/tidemark/server"
)

// ServeConfig configures RunServe: a load test of `tidemark serve` on
// loopback — at each concurrency level, that many clients mixing searches
// and upserts for Duration (or until Requests requests), against a server
// holding N memories of Dim dimensions.
type ServeConfig struct {
	// Dir holds the database (default a temporary directory).
	Dir string
	// Data names the vectors (OpenVectorSet): the prefix of an ANN file
	// set (default DefaultData, GloVe-100, lifted to Dim), DataSynthetic
	// or DataGaussian (the worst case). Searches take the set's queries;
	// upserts take base vectors past N (the same vectors again under new
	// ids when a file set has none left).
	Data string
	// N and Dim size the collection (defaults: every vector of a file
	// set, 100,000 of a generated one; 768).
	N, Dim int
	// Clients are the concurrency levels, measured one after another on
	// the same server (default 1, 2, 4, 8). Duration and Requests bound
	// each level (defaults 30 s and 1,000,000, whichever ends first).
	Clients  []int
	Duration time.Duration
	Requests int
	// WriteShare is the fraction of requests that are upserts of
	// WriteBatch memories (defaults 0.1 and 10); the rest are searches
	// (k = 10). The upserts of a level stay for the next.
	WriteShare float64
	WriteBatch int
	// Progress, when set, receives a line per phase.
	Progress io.Writer
}

// ServeOp is one operation's results.
type ServeOp struct {
	Op        string  `json:"op"`
	Count     int     `json:"count"`
	Errors    int     `json:"errors"`
	PerSecond float64 `json:"per_s"`
	// Latencies in milliseconds.
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
}

// ServeLevel is one concurrency level's results: throughput and latency
// of each operation.
type ServeLevel struct {
	Clients int       `json:"clients"`
	Seconds float64   `json:"seconds"`
	Ops     []ServeOp `json:"ops"`
}

// ServeReport is RunServe's result.
type ServeReport struct {
	Dataset string       `json:"dataset"`
	N       int          `json:"n"`
	Dim     int          `json:"dim"`
	LoadS   float64      `json:"load_s"`
	Levels  []ServeLevel `json:"levels"`
	note    string
}

// RunServe runs the load test.
func RunServe(ctx context.Context, cfg ServeConfig) (ServeReport, error) {
	if cfg.Dim == 0 {
		cfg.Dim = 768
	}
	if len(cfg.Clients) == 0 {
		cfg.Clients = []int{1, 2, 4, 8}
	}
	if cfg.Duration == 0 {
		cfg.Duration = 30 * time.Second
	}
	if cfg.Requests == 0 {
		cfg.Requests = 1_000_000
	}
	if cfg.WriteShare == 0 {
		cfg.WriteShare = 0.1
	}
	if cfg.WriteBatch == 0 {
		cfg.WriteBatch = 10
	}
	for _, c := range cfg.Clients {
		if c < 1 {
			return ServeReport{}, fmt.Errorf("bench: serve: %d clients", c)
		}
	}
	d, err := OpenVectorSet(cfg.Data, cfg.Dim, cfg.N, 0)
	if err != nil {
		return ServeReport{}, err
	}
	defer d.Close()
	if cfg.N == 0 {
		cfg.N = d.N
	}
	if cfg.N < 1 || cfg.N > d.N {
		return ServeReport{}, fmt.Errorf("bench: serve: %s has %d vectors, n = %d", d.Name, d.N, cfg.N)
	}
	rep := ServeReport{Dataset: d.Name, N: cfg.N, Dim: cfg.Dim, note: d.Note}
	say := lines(cfg.Progress)
	say("serve: %s", d.Note)
	queries, err := d.Queries(d.NQ)
	if err != nil {
		return rep, err
	}
	dir, cleanup, err := workDir(cfg.Dir, "serve")
	if err != nil {
		return rep, err
	}
	defer cleanup()
	db, err := tidemark.Open(dir, nil)
	if err != nil {
		return rep, err
	}
	defer db.Close()
	coll, err := db.CreateCollection(ctx, "load", &tidemark.CollectionOptions{Dim: cfg.Dim})
	if err != nil {
		return rep, err
	}
	start := time.Now()
	for w := 0; w < cfg.N; w += 1000 {
		bt := make([]tidemark.Memory, min(1000, cfg.N-w))
		vecs := make([]float32, len(bt)*cfg.Dim)
		if err := d.Fill(w, w+len(bt), vecs, runtime.GOMAXPROCS(0)); err != nil {
			return rep, err
		}
		for i := range bt {
			bt[i] = tidemark.Memory{ID: fmt.Sprintf("m%d", w+i), Text: fmt.Sprintf("memory %d", w+i), Vector: vecs[i*cfg.Dim : (i+1)*cfg.Dim]}
		}
		if _, err := coll.Put(ctx, bt); err != nil {
			return rep, err
		}
		if w%20000 == 0 {
			say("loaded %d", w)
		}
	}
	rep.LoadS = time.Since(start).Seconds()
	const tok = "bench-serve-token-0123456789"
	srv, err := server.New(db, server.Config{Tokens: []server.Token{{Token: tok, Name: "bench", Collections: []string{"*"}, Write: true, Rate: 1e9}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return rep, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return rep, err
	}
	// The service's own configuration: timeouts and connection caps.
	hs := srv.HTTPServer()
	go hs.Serve(srv.Listener(ln))
	defer hs.Close()
	cl := client.New(ln.Addr().String(), tok)
	// Upserts take base vectors past N: fresh ones of a generated set or
	// of a larger file, else (a file set wholly loaded) random ones again.
	var upserts atomic.Int64
	upsertVector := func(r *rand.Rand, dst []float32) error {
		u := int(upserts.Add(1)) - 1
		switch {
		case d.Unbounded:
			return d.Base(cfg.N+u, dst)
		case d.N > cfg.N:
			return d.Base(cfg.N+u%(d.N-cfg.N), dst)
		}
		return d.Base(r.IntN(d.N), dst)
	}
	for _, clients := range cfg.Clients {
		say("serving on %s: %d clients for %v", ln.Addr(), clients, cfg.Duration)
		lv, err := serveLevel(ctx, &cfg, cl, clients, queries, upsertVector)
		if err != nil {
			return rep, err
		}
		for _, o := range lv.Ops {
			say("%d clients: %s %.0f/s, p50 %.2f ms, p99 %.2f ms, %d errors", clients, o.Op, o.PerSecond, o.P50, o.P99, o.Errors)
		}
		rep.Levels = append(rep.Levels, lv)
	}
	return rep, nil
}

// serveLevel runs clients concurrent clients for cfg.Duration or
// cfg.Requests requests.
func serveLevel(ctx context.Context, cfg *ServeConfig, cl *client.Client, clients int, queries []float32,
	upsertVector func(*rand.Rand, []float32) error) (ServeLevel, error) {
	lv := ServeLevel{Clients: clients}
	type sample struct {
		write bool
		ms    float64
		err   bool
	}
	var mu sync.Mutex
	var samples []sample
	var issued int
	var verr error
	lctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var wg sync.WaitGroup
	begin := time.Now()
	nq := len(queries) / cfg.Dim
	for ci := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(ci), uint64(clients)))
			var local []sample
			for n := 0; ; n++ {
				mu.Lock()
				stop := issued >= cfg.Requests
				issued++
				mu.Unlock()
				if stop || lctx.Err() != nil {
					break
				}
				write := r.Float64() < cfg.WriteShare
				var ms []api.Memory
				if write {
					ms = make([]api.Memory, cfg.WriteBatch)
					for i := range ms {
						v := make([]float32, cfg.Dim)
						if err := upsertVector(r, v); err != nil {
							mu.Lock()
							verr = errors.Join(verr, err)
							mu.Unlock()
							return
						}
						ms[i] = api.Memory{ID: fmt.Sprintf("c%d-%d-%d-%d", clients, ci, n, i), Text: "load", Vector: v}
					}
				}
				t0 := time.Now()
				var err error
				if write {
					_, err = cl.Put(lctx, "load", ms)
				} else {
					qi := r.IntN(nq)
					_, err = cl.Search(lctx, "load", api.SearchRequest{Vector: queries[qi*cfg.Dim : (qi+1)*cfg.Dim], K: 10})
				}
				if lctx.Err() != nil && err != nil {
					break // the deadline cut this request: not counted
				}
				local = append(local, sample{write, float64(time.Since(t0).Microseconds()) / 1000, err != nil})
			}
			mu.Lock()
			samples = append(samples, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if verr != nil {
		return lv, verr
	}
	lv.Seconds = time.Since(begin).Seconds()
	for _, op := range []struct {
		name  string
		write bool
	}{{"search", false}, {"upsert", true}} {
		var lat []float64
		o := ServeOp{Op: op.name}
		for _, s := range samples {
			if s.write != op.write {
				continue
			}
			o.Count++
			if s.err {
				o.Errors++
			}
			lat = append(lat, s.ms)
		}
		if len(lat) == 0 {
			continue
		}
		slices.Sort(lat)
		o.PerSecond, o.P50, o.P95, o.P99 = float64(o.Count)/lv.Seconds, percentile(lat, 0.5), percentile(lat, 0.95), percentile(lat, 0.99)
		lv.Ops = append(lv.Ops, o)
	}
	if len(lv.Ops) == 0 {
		return lv, errors.New("bench: no request completed")
	}
	return lv, nil
}

// WriteJSON writes the report as JSON.
func (r *ServeReport) WriteJSON(w io.Writer) error {
	return writeIndented(w, r)
}

// WriteTable writes the report as a table.
func (r *ServeReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s: %d memories × %d dims (loaded in %.1f s), on loopback\n%s\n", r.Dataset, r.N, r.Dim, r.LoadS, r.note)
	fmt.Fprintln(tw, "clients\top\trequests\terrors\treq/s\tp50 ms\tp95 ms\tp99 ms\t")
	for _, lv := range r.Levels {
		for _, o := range lv.Ops {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.0f\t%.2f\t%.2f\t%.2f\t\n", lv.Clients, o.Op, o.Count, o.Errors, o.PerSecond, o.P50, o.P95, o.P99)
		}
	}
	return tw.Flush()
}
