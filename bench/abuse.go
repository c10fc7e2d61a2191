package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/server"
)

// AbuseConfig configures Abuse.
type AbuseConfig struct {
	// N memories of Dim dimensions fill the collection the attacks aim at
	// (defaults 20000 and 384: enough for an answer of k = 1000 with
	// explanations to be large).
	N, Dim int
	// HeaderTimeout, BodyTimeout and IdleTimeout configure the server
	// (defaults 2 s, 3 s and 3 s: the service's defaults are 10, 60 and 60
	// s; the mechanism is the same, the run shorter).
	HeaderTimeout, BodyTimeout, IdleTimeout time.Duration
	// Stalled is how many connections one client opens and stalls
	// (default 200).
	Stalled int
	// Dir is where the database goes (default the temporary directory).
	Dir string
}

// AbuseResult is one attack and how the server handled it.
type AbuseResult struct {
	Attack string `json:"attack"`
	// Handled is what the server did, as measured.
	Handled string `json:"handled"`
	// OK says the handling is the intended one.
	OK bool `json:"ok"`
}

// AbuseReport is Abuse's answer.
type AbuseReport struct {
	N             int           `json:"n"`
	Dim           int           `json:"dim"`
	HeaderTimeout float64       `json:"header_timeout_s"`
	BodyTimeout   float64       `json:"body_timeout_s"`
	IdleTimeout   float64       `json:"idle_timeout_s"`
	MaxClient     int           `json:"max_client_conns"`
	Results       []AbuseResult `json:"results"`
}

// WriteJSON writes the report as indented JSON.
func (r *AbuseReport) WriteJSON(w io.Writer) error { return writeIndented(w, r) }

// WriteTable writes the report as a table.
func (r *AbuseReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "tidemark serve under abuse: %d memories × %d, header/body/idle timeouts %g/%g/%g s, %d connections per client\n\n",
		r.N, r.Dim, r.HeaderTimeout, r.BodyTimeout, r.IdleTimeout, r.MaxClient)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "attack\thandled\tok")
	for _, x := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%v\n", x.Attack, x.Handled, x.OK)
	}
	return tw.Flush()
}

// Abuse replays, against a tidemark server on loopback (in this process,
// with the service's configuration but the shorter timeouts of cfg), the
// attacks of the hardening probe — stalled bodies and headers, many
// connections from one client, idle keep-alives, token guessing, an
// anonymous /metrics scrape, absurd weights, huge answers, invalid UTF-8,
// non-canonical paths, a shutdown with stalled connections — and reports
// how each was handled. Every result is measured, none assumed.
func Abuse(ctx context.Context, cfg AbuseConfig, say func(string, ...any)) (*AbuseReport, error) {
	def := func(p *time.Duration, d time.Duration) {
		if *p <= 0 {
			*p = d
		}
	}
	def(&cfg.HeaderTimeout, 2*time.Second)
	def(&cfg.BodyTimeout, 3*time.Second)
	def(&cfg.IdleTimeout, 3*time.Second)
	if cfg.N <= 0 {
		cfg.N = 20000
	}
	if cfg.Dim <= 0 {
		cfg.Dim = 384
	}
	if cfg.Stalled <= 0 {
		cfg.Stalled = 200
	}
	rep := &AbuseReport{N: cfg.N, Dim: cfg.Dim, HeaderTimeout: cfg.HeaderTimeout.Seconds(), BodyTimeout: cfg.BodyTimeout.Seconds(),
		IdleTimeout: cfg.IdleTimeout.Seconds(), MaxClient: server.DefaultMaxClientConns}
	add := func(attack string, ok bool, format string, a ...any) {
		rep.Results = append(rep.Results, AbuseResult{Attack: attack, Handled: fmt.Sprintf(format, a...), OK: ok})
		say("%s: %s (ok %v)", attack, fmt.Sprintf(format, a...), ok)
	}

	dir, err := os.MkdirTemp(cfg.Dir, "tidemark-abuse-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db, err := tidemark.Open(dir, &tidemark.Options{NoSync: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	coll, err := db.CreateCollection(ctx, "target", &tidemark.CollectionOptions{Dim: cfg.Dim})
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(1, 2))
	for w := 0; w < cfg.N; w += 1000 {
		bt := make([]tidemark.Memory, min(1000, cfg.N-w))
		for i := range bt {
			v := make([]float32, cfg.Dim)
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			bt[i] = tidemark.Memory{ID: "m" + strconv.Itoa(w+i), Text: fmt.Sprintf("memory %d: some evidence of a typical length for a chunk", w+i), Vector: v}
		}
		if _, err := coll.Put(ctx, bt); err != nil {
			return nil, err
		}
	}
	secret, hash, err := server.NewSecret()
	if err != nil {
		return nil, err
	}
	srv, err := server.New(db, server.Config{Tokens: []server.Token{{Hash: hash, Name: "probe", Collections: []string{"*"}, Write: true}},
		HeaderTimeout: cfg.HeaderTimeout, BodyTimeout: cfg.BodyTimeout, IdleTimeout: cfg.IdleTimeout,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln, 2*time.Second) }()
	defer func() {
		stop()
		<-served
	}()
	// Requests from another loopback address (127.0.0.2): not the
	// attacker's.
	other := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
	probe := &http.Client{Timeout: 30 * time.Second}
	do := func(c *http.Client, method, path, auth, body string) (int, http.Header, string, error) {
		req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, strings.NewReader(body))
		if err != nil {
			return 0, nil, "", err
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := c.Do(req)
		if err != nil {
			return 0, nil, "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b), err
	}
	bearer := "Bearer " + secret
	dial := func() (net.Conn, error) { return net.DialTimeout("tcp", addr, 5*time.Second) }
	// closedAfter is how long the server takes to close c (discarding
	// what it sends), at most limit.
	closedAfter := func(c net.Conn, limit time.Duration) (time.Duration, bool) {
		start := time.Now()
		c.SetReadDeadline(start.Add(limit))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		return time.Since(start), !(errors.As(err, &ne) && ne.Timeout())
	}

	// 1. The unauthenticated stalled body.
	if c, err := dial(); err == nil {
		start := time.Now()
		io.WriteString(c, "POST /v1/collections/target/memories HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
		c.SetReadDeadline(start.Add(10 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			add("no token, Content-Length 10, no body", false, "no answer in 10 s: %v", err)
		} else {
			d := time.Since(start)
			io.Copy(io.Discard, res.Body)
			gone, closed := closedAfter(c, 10*time.Second)
			add("no token, Content-Length 10, no body", res.StatusCode == 401 && closed && d+gone < time.Second,
				"%d in %.1f ms, connection closed %.1f ms later", res.StatusCode, ms(d), ms(gone))
		}
		c.Close()
	}
	// 2. One client holds many connections with unfinished headers.
	var held []net.Conn
	for range cfg.Stalled {
		c, err := dial()
		if err != nil {
			break
		}
		io.WriteString(c, "GET /healthz HTTP/1.1\r\n")
		held = append(held, c)
	}
	heldAt := time.Now()
	time.Sleep(200 * time.Millisecond)
	// All at once: a connection still open after 100 ms was kept by the
	// server; then how long until it closes it.
	open := 0
	var wg sync.WaitGroup
	var mu sync.Mutex
	var longest time.Duration
	probed := time.Now()
	for _, c := range held {
		wg.Add(1)
		go func(c net.Conn) {
			defer wg.Done()
			c.SetReadDeadline(probed.Add(100 * time.Millisecond))
			_, err := c.Read(make([]byte, 1))
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				return // closed on accept
			}
			mu.Lock()
			open++
			mu.Unlock()
			closedAfter(c, cfg.HeaderTimeout+10*time.Second)
			mu.Lock()
			longest = max(longest, time.Since(heldAt))
			mu.Unlock()
		}(c)
	}
	time.Sleep(150 * time.Millisecond)
	start := time.Now()
	st, _, _, err := do(other, "GET", "/healthz", "", "")
	hz := time.Since(start)
	mu.Lock()
	kept := open
	mu.Unlock()
	add(fmt.Sprintf("%d connections from one client, headers never finished", len(held)),
		kept <= server.DefaultMaxClientConns && kept < len(held) && err == nil && st == 200,
		"%d kept, %d closed on accept; /healthz from another address %d in %.1f ms", kept, len(held)-kept, st, ms(hz))
	wg.Wait()
	for _, c := range held {
		c.Close()
	}
	add("stalled headers", longest <= cfg.HeaderTimeout+time.Second, "the kept connections closed within %.2f s of being opened (header timeout %g s)", longest.Seconds(), cfg.HeaderTimeout.Seconds())
	// 3. A stalled body with a valid token, and an idle keep-alive.
	if c, err := dial(); err == nil {
		io.WriteString(c, "POST /v1/collections/target/memories HTTP/1.1\r\nHost: x\r\nAuthorization: "+bearer+"\r\nContent-Length: 100\r\n\r\n{")
		d, closed := closedAfter(c, cfg.HeaderTimeout+cfg.BodyTimeout+10*time.Second)
		add("a token, a body that stalls", closed && d <= cfg.HeaderTimeout+cfg.BodyTimeout+time.Second, "answered and closed after %.2f s", d.Seconds())
		c.Close()
	}
	if c, err := dial(); err == nil {
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		d, closed := closedAfter(c, cfg.IdleTimeout+10*time.Second)
		add("an idle keep-alive", closed && d <= cfg.IdleTimeout+time.Second, "closed after %.2f s", d.Seconds())
		c.Close()
	}
	// 4. Guessing tokens.
	counts := map[int]int{}
	retry := ""
	start = time.Now()
	for i := range 4000 {
		st, h, _, err := do(probe, "GET", "/v1/collections", "Bearer guess-"+strconv.Itoa(i)+"-0123456789abcdef", "")
		if err != nil {
			return nil, err
		}
		counts[st]++
		if st == 429 {
			retry = h.Get("Retry-After")
		}
	}
	add("4000 wrong tokens from one address", counts[401] <= 20 && counts[429] >= 3980 && retry != "",
		"%d checked (401), %d refused unchecked (429, Retry-After %s s) in %.2f s", counts[401], counts[429], retry, time.Since(start).Seconds())
	// The guesser's address is throttled for a while: the rest comes from
	// the other address.
	st, _, body, _ := do(other, "GET", "/metrics", "", "")
	add("/metrics without a token", st == 401, "%d %.60s", st, strings.TrimSpace(body))
	st, _, _, _ = do(other, "GET", "/v1/collections", "bearer "+secret, "")
	add("lower-case scheme \"bearer\"", st == 200, "%d", st)
	q := make([]string, cfg.Dim)
	for i := range q {
		q[i] = strconv.FormatFloat(r.NormFloat64(), 'g', 6, 64)
	}
	vec := "[" + strings.Join(q, ",") + "]"
	st, _, body, _ = do(other, "POST", "/v1/collections/target/search", bearer, `{"vector":`+vec+`,"explain":true,"weights":{"sim":1e308,"temporal":1e308,"confidence":1e308,"relational":1e308}}`)
	add("weights of 1e308", st == 400, "%d %.90s", st, strings.TrimSpace(body))
	st, _, body, _ = do(other, "POST", "/v1/collections/target/search", bearer, `{"vector":`+vec+`,"k":10000,"explain":true}`)
	add("k 10000 with explain", st == 400, "%d %.90s", st, strings.TrimSpace(body))
	// Four large answers at once: each is built, measured and refused or
	// sent whole; the peak resident set says what they cost.
	resetPeakRSS()
	before := peakRSS()
	var sts [4]int
	var sizes [4]int
	for i := range 4 {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s, _, b, _ := do(other, "POST", "/v1/collections/target/search", bearer, `{"vector":`+vec+`,"k":1000,"explain":true}`)
			sts[i], sizes[i] = s, len(b)
		}(i)
	}
	wg.Wait()
	after := peakRSS()
	okBig := true
	for i := range sts {
		okBig = okBig && (sts[i] == 200 || sts[i] == 413) && sizes[i] <= 32<<20+1<<10
	}
	add("4 × k 1000 with explain at once", okBig, "statuses %v, bodies %v bytes, peak RSS %.0f → %.0f MB", sts, sizes, float64(before)/1e6, float64(after)/1e6)
	for _, tc := range []struct{ what, body string }{
		{"an id of invalid UTF-8", "{\"memories\":[{\"id\":\"\xff\",\"text\":\"x\"}]}"},
		{"an id with a lone surrogate", `{"memories":[{"id":"\ud800","text":"x"}]}`},
		{"valid_from of the zero time", `{"memories":[{"id":"z","text":"x","valid_from":"0001-01-01T00:00:00Z"}]}`},
	} {
		st, _, body, _ = do(other, "POST", "/v1/collections/target/memories", bearer, tc.body)
		add(tc.what, st == 400, "%d %.80s", st, strings.TrimSpace(body))
	}
	for _, tc := range []struct{ method, path string }{{"PATCH", "/v1/collections/target"}, {"GET", "/v1/collections/x/.."}, {"GET", "/nowhere"}} {
		req, _ := http.NewRequestWithContext(ctx, tc.method, "http://"+addr, nil)
		req.URL.Opaque = "//" + addr + tc.path
		req.Header.Set("Authorization", bearer)
		res, err := other.Do(req)
		if err != nil {
			return nil, err
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		add(tc.method+" "+tc.path, res.StatusCode >= 400 && res.Header.Get("Content-Type") == "application/json",
			"%d %s %.70s", res.StatusCode, res.Header.Get("Content-Type"), strings.TrimSpace(string(b)))
	}
	// 5. SIGTERM (the context ending) with stalled bodies in flight.
	var stalled []net.Conn
	for range 50 {
		c, err := (&net.Dialer{Timeout: time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).Dial("tcp", addr)
		if err != nil {
			break
		}
		io.WriteString(c, "POST /v1/collections/target/memories HTTP/1.1\r\nHost: x\r\nAuthorization: "+bearer+"\r\nContent-Length: 100\r\n\r\n{")
		stalled = append(stalled, c)
	}
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	stop()
	err = <-served
	served <- err // for the deferred wait
	d := time.Since(start)
	for _, c := range stalled {
		c.Close()
	}
	add(fmt.Sprintf("shutdown with %d stalled bodies", len(stalled)), err == nil && d < 3*time.Second, "Serve returned after %.2f s (grace 2 s): %v", d.Seconds(), err)
	return rep, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
