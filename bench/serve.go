package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
	"github.com/tidemark/tidemark/client"
	"github.com/tidemark/tidemark/server"
)

// ServeConfig configures RunServe: a load test of `tidemark serve` on
// loopback — Clients concurrent clients mixing searches and upserts for
// Duration (or until Requests requests), against a server holding N
// memories of Dim dimensions.
type ServeConfig struct {
	// Dir holds the database (default a temporary directory).
	Dir string
	// N and Dim size the collection (defaults 100000 and 768).
	N, Dim int
	// Clients, Duration and Requests bound the load (defaults 8, 30 s and
	// 1,000,000, whichever ends first).
	Clients  int
	Duration time.Duration
	Requests int
	// WriteShare is the fraction of requests that are upserts of
	// WriteBatch memories (defaults 0.1 and 10); the rest are searches
	// (k = 10).
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

// ServeReport is RunServe's result.
type ServeReport struct {
	N       int       `json:"n"`
	Dim     int       `json:"dim"`
	Clients int       `json:"clients"`
	Seconds float64   `json:"seconds"`
	LoadS   float64   `json:"load_s"`
	Ops     []ServeOp `json:"ops"`
}

// RunServe runs the load test.
func RunServe(ctx context.Context, cfg ServeConfig) (ServeReport, error) {
	if cfg.N == 0 {
		cfg.N = 100000
	}
	if cfg.Dim == 0 {
		cfg.Dim = 768
	}
	if cfg.Clients == 0 {
		cfg.Clients = 8
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
	rep := ServeReport{N: cfg.N, Dim: cfg.Dim, Clients: cfg.Clients}
	say := lines(cfg.Progress)
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
	rng := rand.New(rand.NewPCG(5, 5))
	vec := func(r *rand.Rand) []float32 {
		v := make([]float32, cfg.Dim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	start := time.Now()
	for w := 0; w < cfg.N; w += 1000 {
		bt := make([]tidemark.Memory, min(1000, cfg.N-w))
		for i := range bt {
			bt[i] = tidemark.Memory{ID: fmt.Sprintf("m%d", w+i), Text: fmt.Sprintf("memory %d", w+i), Vector: vec(rng)}
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
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	defer hs.Close()
	cl := client.New(ln.Addr().String(), tok)
	say("serving on %s: %d clients for %v", ln.Addr(), cfg.Clients, cfg.Duration)

	type sample struct {
		write bool
		ms    float64
		err   bool
	}
	var mu sync.Mutex
	var samples []sample
	var issued int
	lctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var wg sync.WaitGroup
	begin := time.Now()
	for ci := range cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(ci), 77))
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
				t0 := time.Now()
				var err error
				if write {
					ms := make([]api.Memory, cfg.WriteBatch)
					for i := range ms {
						ms[i] = api.Memory{ID: fmt.Sprintf("c%d-%d-%d", ci, n, i), Text: "load", Vector: vec(r)}
					}
					_, err = cl.Put(lctx, "load", ms)
				} else {
					_, err = cl.Search(lctx, "load", api.SearchRequest{Vector: vec(r), K: 10})
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
	rep.Seconds = time.Since(begin).Seconds()
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
		pct := func(p float64) float64 { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
		o.PerSecond, o.P50, o.P95, o.P99 = float64(o.Count)/rep.Seconds, pct(0.5), pct(0.95), pct(0.99)
		rep.Ops = append(rep.Ops, o)
	}
	if len(rep.Ops) == 0 {
		return rep, errors.New("bench: no request completed")
	}
	return rep, nil
}

// WriteJSON writes the report as JSON.
func (r *ServeReport) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(r)
}

// WriteTable writes the report as a table.
func (r *ServeReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%d memories × %d dims (loaded in %.1f s), %d clients, %.1f s on loopback\n", r.N, r.Dim, r.LoadS, r.Clients, r.Seconds)
	fmt.Fprintln(tw, "op\trequests\terrors\treq/s\tp50 ms\tp95 ms\tp99 ms\t")
	for _, o := range r.Ops {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.2f\t%.2f\t%.2f\t\n", o.Op, o.Count, o.Errors, o.PerSecond, o.P50, o.P95, o.P99)
	}
	return tw.Flush()
}
