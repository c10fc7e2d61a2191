package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
)

// The regression tests of the hardening issue: each fails without its fix.
// The connection-level ones run a real server (Server.Serve) on loopback
// with short timeouts, and talk raw TCP to it.

// liveServer serves a fresh database with cfg (tokens and logger filled
// in when empty) on a loopback port until the test ends.
func liveServer(t *testing.T, cfg Config) (addr string, s *Server, stop func() error) {
	t.Helper()
	db, err := tidemark.Open(t.TempDir(), &tidemark.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Tokens == nil {
		cfg.Tokens = []Token{{Token: admin, Name: "admin", Collections: []string{"*"}, Write: true, Metrics: true}}
	}
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	if s, err = New(db, cfg); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, 500*time.Millisecond) }()
	var once sync.Once
	var serr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case serr = <-done:
			case <-time.After(10 * time.Second):
				serr = errors.New("Serve did not return within 10 s of its context ending")
			}
			db.Close()
		})
		return serr
	}
	t.Cleanup(func() { stop() })
	return ln.Addr().String(), s, stop
}

// dial opens a raw connection that fails the test's reads after 5 s.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin reports whether the server closes c (a read ends in EOF or
// a reset) within d, discarding what it sends first.
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// An unauthenticated request whose body never comes is answered 401 at
// once from its headers, and its connection closed: the server does not
// wait for the body (before, it waited forever, and 20,500 such
// connections took every descriptor).
func TestStalledBodyWithoutTokenIsAnsweredAtOnce(t *testing.T) {
	addr, _, _ := liveServer(t, Config{BodyTimeout: time.Minute})
	c := dial(t, addr)
	start := time.Now()
	io.WriteString(c, "POST /v1/collections/a/memories HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 401 || !strings.Contains(string(body), `"unauthenticated"`) || !res.Close {
		t.Fatalf("%d close=%v %s", res.StatusCode, res.Close, body)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("answered after %v", d)
	}
	// And closed at once, not after the read timeout (net/http would
	// otherwise wait to discard the body that never comes).
	if !closedWithin(c, 2*time.Second) {
		t.Fatal("the connection is still open 2 s after the 401")
	}
}

// A client with a token that stalls its body, or its headers, or idles
// between requests, is disconnected after the body, header or idle
// timeout.
func TestStalledConnectionsAreClosed(t *testing.T) {
	addr, _, _ := liveServer(t, Config{HeaderTimeout: 200 * time.Millisecond, BodyTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	body := dial(t, addr)
	io.WriteString(body, "POST /v1/collections/a/memories HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+admin+"\r\nContent-Length: 10\r\n\r\n{")
	headers := dial(t, addr)
	io.WriteString(headers, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
	idle := dial(t, addr)
	io.WriteString(idle, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	for name, c := range map[string]net.Conn{"stalled body": body, "stalled headers": headers, "idle keep-alive": idle} {
		if !closedWithin(c, 3*time.Second) {
			t.Errorf("%s: still open after 3 s", name)
		}
	}
}

// Past the per-client cap a new connection is closed on accept, and the
// server keeps answering once the stalled ones time out; the refusals are
// counted.
func TestConnectionCaps(t *testing.T) {
	addr, s, _ := liveServer(t, Config{MaxClientConns: 3, HeaderTimeout: 300 * time.Millisecond})
	for range 3 {
		c := dial(t, addr)
		io.WriteString(c, "GET /healthz HTTP/1.1\r\n") // headers never end
	}
	time.Sleep(200 * time.Millisecond) // let the server accept them
	extra := dial(t, addr)
	io.WriteString(extra, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	if b, _ := io.ReadAll(extra); len(b) != 0 {
		t.Fatalf("a connection past the cap was answered: %q", b)
	}
	// The stalled three are closed after the header timeout; then /healthz
	// answers again.
	deadline := time.Now().Add(3 * time.Second)
	for {
		res, err := (&http.Client{Timeout: time.Second}).Get("http://" + addr + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz not answered 3 s after the stalled connections: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := counterValue(t, s, "tidemark_http_connections_refused_total"); got < 1 {
		t.Fatalf("refused connections counted %v", got)
	}
}

// Stalled connections hold a shutdown no longer than its grace.
func TestShutdownIsBoundedByGrace(t *testing.T) {
	addr, _, stop := liveServer(t, Config{BodyTimeout: time.Minute, HeaderTimeout: time.Minute})
	for range 5 {
		c := dial(t, addr)
		io.WriteString(c, "POST /v1/collections/a/memories HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+admin+"\r\nContent-Length: 100\r\n\r\n{")
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("shutdown took %v with a grace of 0.5 s", d)
	}
}

// counterValue reads one metric from the server's registry.
func counterValue(t *testing.T, s *Server, name string) float64 {
	t.Helper()
	mfs, err := s.metrics.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		sum := 0.0
		for _, m := range mf.GetMetric() {
			if c := m.GetCounter(); c != nil {
				sum += c.GetValue()
			}
			if g := m.GetGauge(); g != nil {
				sum += g.GetValue()
			}
		}
		return sum
	}
	return math.NaN()
}

// /metrics answers only a token with the metrics scope, and no label
// carries a collection name or a fact subject.
func TestMetricsNeedTheScopeAndLeakNothing(t *testing.T) {
	db, err := tidemark.Open(t.TempDir(), &tidemark.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(db, Config{Logger: quiet, Tokens: []Token{
		{Token: admin, Name: "admin", Collections: []string{"*"}, Write: true},
		{Token: other, Name: "scraper", Metrics: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	call(t, ts, "POST", "/v1/collections/tenant-secret-name", admin, `{"dim":3}`)
	put := `{"memories":[{"id":"a","vector":[1,0,0],"subject":"alice@example.com","relation":"email","object":"x"}]}`
	if r := call(t, ts, "POST", "/v1/collections/tenant-secret-name/memories", admin, put); r.status != 200 {
		t.Fatalf("put: %d %s", r.status, r.raw)
	}
	for _, tc := range []struct {
		token  string
		status int
	}{{"", 401}, {admin, 403}, {other, 200}} {
		r := call(t, ts, "GET", "/metrics", tc.token, "")
		if r.status != tc.status {
			t.Fatalf("token %q: %d, want %d: %.200s", tc.token, r.status, tc.status, r.raw)
		}
		if tc.status == 200 {
			for _, leak := range []string{"tenant-secret-name", "alice", "example"} {
				if strings.Contains(r.raw, leak) {
					t.Errorf("/metrics shows %q", leak)
				}
			}
			if !strings.Contains(r.raw, `tidemark_memories{state="stored"} 1`) {
				t.Errorf("no aggregate memory count in /metrics")
			}
		}
	}
	// The scraper's token reads nothing else.
	if r := call(t, ts, "GET", "/v1/collections/tenant-secret-name", other, ""); r.status != 403 {
		t.Fatalf("metrics token read a collection: %d", r.status)
	}
}

// A response that cannot be encoded is an error answer, never a 200 with
// a broken body; weights that would make scores non-finite are refused.
func TestNoBrokenAnswers(t *testing.T) {
	ts, _, s := newTestServerS(t)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/x", nil)
	if err := s.writeJSON(rec, 200, map[string]float64{"score": math.Inf(1)}); err == nil {
		t.Fatal("a non-finite value encoded")
	} else {
		s.writeError(rec, req, err)
	}
	if rec.Code != 500 || !json.Valid(rec.Body.Bytes()) || !strings.Contains(rec.Body.String(), `"internal"`) {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	call(t, ts, "POST", "/v1/collections/facts", admin, `{"dim":3}`)
	call(t, ts, "POST", "/v1/collections/facts/memories", admin, `{"memories":[{"id":"a","vector":[1,0,0]}]}`)
	for _, path := range []string{"search", "context"} {
		r := call(t, ts, "POST", "/v1/collections/facts/"+path, admin, `{"vector":[1,0,0],"explain":true,"weights":{"sim":1e308,"temporal":1e308,"confidence":1e308,"relational":1e308}}`)
		if r.status != 400 || code(r) != api.CodeInvalidArgument {
			t.Fatalf("%s with weights 1e308: %d %s", path, r.status, r.raw)
		}
	}
}

// Answers are bounded: k over MaxK is refused, an answer over
// MaxResponseBytes is a 413, and collections past MaxCollections are a 403.
func TestAnswerAndQuotaBounds(t *testing.T) {
	db, err := tidemark.Open(t.TempDir(), &tidemark.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(db, Config{Logger: quiet, MaxK: 50, MaxResponseBytes: 2000, MaxCollections: 2,
		Tokens: []Token{{Token: admin, Name: "admin", Collections: []string{"*"}, Write: true}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	call(t, ts, "POST", "/v1/collections/a", admin, `{"dim":3}`)
	var mems []string
	for i := range 40 {
		mems = append(mems, `{"id":"m`+strconv.Itoa(i)+`","text":"note `+strconv.Itoa(i)+` `+strings.Repeat("long text ", 10)+`","vector":[1,`+strconv.Itoa(i)+`,0]}`)
	}
	if r := call(t, ts, "POST", "/v1/collections/a/memories", admin, `{"memories":[`+strings.Join(mems, ",")+`]}`); r.status != 200 {
		t.Fatalf("put: %d %.300s", r.status, r.raw)
	}
	if r := call(t, ts, "POST", "/v1/collections/a/search", admin, `{"vector":[1,0,0],"k":51}`); r.status != 400 || !strings.Contains(r.raw, "at most 50") {
		t.Fatalf("k 51: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "POST", "/v1/collections/a/search", admin, `{"vector":[1,0,0],"k":40,"explain":true}`); r.status != 413 || code(r) != api.CodeTooLarge {
		t.Fatalf("a large answer: %d %.300s", r.status, r.raw)
	}
	call(t, ts, "POST", "/v1/collections/b", admin, `{"dim":3}`)
	if r := call(t, ts, "POST", "/v1/collections/c", admin, `{"dim":3}`); r.status != 403 || code(r) != api.CodeQuotaExceeded {
		t.Fatalf("a third collection: %d %s", r.status, r.raw)
	}
}

// Invalid UTF-8 and lone surrogates are refused, not rewritten to U+FFFD;
// an explicit zero time is refused, not read as absent; every routing
// error is the JSON shape; decoding errors name the field, not a Go type.
func TestStrictInputAndOneErrorShape(t *testing.T) {
	ts, _ := newTestServer(t)
	call(t, ts, "POST", "/v1/collections/facts", admin, `{"dim":3}`)
	put := func(mem string) reply {
		return call(t, ts, "POST", "/v1/collections/facts/memories", admin, `{"memories":[`+mem+`]}`)
	}
	for _, tc := range []struct {
		name, mem, code, want string
	}{
		{"invalid UTF-8", "{\"id\":\"\xff\",\"vector\":[1,0,0]}", api.CodeMalformedJSON, "UTF-8"},
		{"lone surrogate", `{"id":"\ud800","vector":[1,0,0]}`, api.CodeMalformedJSON, "surrogate"},
		{"lone low surrogate", `{"id":"a\udc00b","vector":[1,0,0]}`, api.CodeMalformedJSON, "surrogate"},
		{"zero valid_from", `{"id":"a","vector":[1,0,0],"valid_from":"0001-01-01T00:00:00Z"}`, api.CodeInvalidArgument, "memories[0].valid_from"},
		{"kind as a number", `{"id":"a","vector":[1,0,0],"kind":99}`, api.CodeInvalidArgument, "kind"},
		{"unknown kind", `{"id":"a","vector":[1,0,0],"kind":"bogus"}`, api.CodeInvalidArgument, "bogus"},
		{"vector of strings", `{"id":"a","vector":["x"]}`, api.CodeInvalidArgument, "vector"},
		{"bad time", `{"id":"a","vector":[1,0,0],"valid_from":"2025-03-01 12:00"}`, api.CodeInvalidArgument, "is not an RFC 3339 time"},
	} {
		r := put(tc.mem)
		if r.status != 400 || code(r) != tc.code || !strings.Contains(r.raw, tc.want) {
			t.Errorf("%s: %d %s, want 400 %s mentioning %q", tc.name, r.status, r.raw, tc.code, tc.want)
		}
		for _, leak := range []string{"Go ", "server.", "api.", "struct {", "json:"} {
			if strings.Contains(r.raw, leak) {
				t.Errorf("%s: the message shows %q: %s", tc.name, leak, r.raw)
			}
		}
	}
	// A valid pair is a character.
	if r := put(`{"id":"\ud83d\ude00","vector":[1,0,0]}`); r.status != 200 {
		t.Fatalf("a surrogate pair: %d %s", r.status, r.raw)
	}
	// An escaped backslash before "ud800" is no escape of a surrogate.
	if r := put(`{"id":"\\ud800","vector":[1,0,0]}`); r.status != 200 {
		t.Fatalf("an escaped backslash: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "POST", "/v1/collections/facts/memories", admin, `[]`); r.status != 400 || strings.Contains(r.raw, "struct") {
		t.Fatalf("an array body: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "POST", "/v1/collections/facts/search", admin, `{"vector":[1,0,0],"as_of":"0001-01-01T00:00:00Z"}`); r.status != 400 || !strings.Contains(r.raw, "as_of") {
		t.Fatalf("zero as_of: %d %s", r.status, r.raw)
	}
	for _, tc := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/nowhere", 404, api.CodeNotFound},
		{"PATCH", "/v1/collections/facts", 405, api.CodeMethodNotAllowed},
		{"GET", "/v1/collections/./memories/a", 404, api.CodeNotFound},
		{"GET", "/v1/collections/../x", 404, api.CodeNotFound},
		{"GET", "/v1/collections/facts/memories/%FF", 400, api.CodeInvalidArgument},
	} {
		req, _ := http.NewRequest(tc.method, ts.URL+tc.path, nil)
		req.URL.RawPath = "" // keep the dots: the client would clean them
		req.URL.Opaque = "//" + req.URL.Host + tc.path
		req.Header.Set("Authorization", "Bearer "+admin)
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var e api.ErrorBody
		if res.StatusCode != tc.status || json.Unmarshal(b, &e) != nil || e.Error.Code != tc.code || res.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %s %s, want %d %s", tc.method, tc.path, res.StatusCode, res.Header.Get("Content-Type"), b, tc.status, tc.code)
		}
		if tc.status == 405 && !strings.Contains(res.Header.Get("Allow"), "GET") {
			t.Errorf("405 without Allow: %v", res.Header)
		}
	}
}

// The scheme is case-insensitive; guessing tokens from one address is
// throttled (429 with Retry-After, the guess not checked); a token over
// its rate gets Retry-After; 403 and 429 log lines name the token; weak
// secrets are refused; hashed tokens work and the secret is not kept.
func TestTokens(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logs}, nil))
	secret, hash, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	db, err := tidemark.Open(t.TempDir(), &tidemark.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(db, Config{Logger: log, Tokens: []Token{
		{Hash: hash, Name: "hashed", Collections: []string{"*"}, Write: true},
		{Token: reader, Name: "slow-reader", Collections: []string{"facts"}, Rate: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range s.tokens {
		if tok.Token != "" {
			t.Fatal("the server keeps a secret")
		}
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	do := func(auth string) *http.Response {
		req, _ := http.NewRequest("GET", ts.URL+"/v1/collections", nil)
		req.Header.Set("Authorization", auth)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	if res := do("bearer " + secret); res.StatusCode != 200 {
		t.Fatalf("lowercase scheme: %d", res.StatusCode)
	}
	// The reader over its rate (1/s, burst 2), and forbidden elsewhere.
	call(t, ts, "GET", "/v1/collections/facts", reader, "")
	call(t, ts, "GET", "/v1/collections/facts", reader, "")
	if res := do("Bearer " + reader); res.StatusCode != 429 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("a token over its rate: %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	time.Sleep(1100 * time.Millisecond)
	call(t, ts, "GET", "/v1/collections/other", reader, "")
	mu.Lock()
	for _, status := range []string{`"status":429`, `"status":403`} {
		found := false
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, status) && strings.Contains(line, `"token":"slow-reader"`) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s log line names the token: %s", status, logs.String())
		}
	}
	mu.Unlock()
	// Guessing: ten wrong guesses are checked, then the address waits.
	statuses := map[int]int{}
	var last *http.Response
	for range 40 {
		last = do("Bearer wrong-guess-0123456789abcdef")
		statuses[last.StatusCode]++
	}
	if statuses[401] > 11 || statuses[429] < 29 || last.Header.Get("Retry-After") == "" {
		t.Fatalf("40 wrong guesses: %v, Retry-After %q", statuses, last.Header.Get("Retry-After"))
	}
	if res := do("Bearer " + secret); res.StatusCode != 429 {
		t.Fatalf("a throttled address was served: %d", res.StatusCode)
	}
	// Weak secrets and malformed hashes are refused.
	for _, tok := range []Token{
		{Token: strings.Repeat("a", 16), Name: "weak", Collections: []string{"*"}},
		{Token: "password12345678", Name: "weak2", Collections: []string{"*"}},
		{Hash: "sha256:zz", Name: "bad-hash", Collections: []string{"*"}},
		{Token: secret, Hash: hash, Name: "both", Collections: []string{"*"}},
	} {
		if _, err := New(db, Config{Logger: quiet, Tokens: []Token{tok}}); err == nil {
			t.Errorf("token %q accepted", tok.Name)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// A server-side failure's message names no file: the engine's (with the
// log's path) goes to the server's log.
func TestFailuresNameNoPath(t *testing.T) {
	ts, db := newTestServer(t)
	call(t, ts, "POST", "/v1/collections/facts", admin, `{"dim":3}`)
	dir := db.Dir()
	db.Close()
	r := call(t, ts, "POST", "/v1/collections/facts/memories", admin, `{"memories":[{"id":"a","vector":[1,0,0]}]}`)
	if r.status != 503 || strings.Contains(r.raw, dir) || strings.Contains(r.raw, "/") {
		t.Fatalf("%d %s", r.status, r.raw)
	}
}

// A failing background checkpoint is logged (through
// Options.OnCheckpointError), counted in /metrics and turns /readyz to
// 503; once one succeeds, /readyz is ready again. The failure is real: a
// directory where the snapshot is renamed to (which stops root too).
func TestFailingCheckpointIsVisible(t *testing.T) {
	dir := t.TempDir()
	failed := make(chan error, 16)
	db, err := tidemark.Open(dir, &tidemark.Options{NoSync: true, CheckpointRecords: 1,
		OnCheckpointError: func(err error) { failed <- err }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(db, Config{Logger: quiet, Tokens: []Token{{Token: admin, Name: "admin", Collections: []string{"*"}, Write: true, Metrics: true}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	blocker := filepath.Join(dir, "snapshot")
	os.Remove(blocker)
	if err := os.MkdirAll(filepath.Join(blocker, "in-the-way"), 0o700); err != nil {
		t.Fatal(err)
	}
	call(t, ts, "POST", "/v1/collections/c", admin, `{"dim":3}`)
	select {
	case err := <-failed:
		if err == nil {
			t.Fatal("OnCheckpointError called with nil")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no checkpoint failure reported")
	}
	deadline := time.Now().Add(5 * time.Second)
	for db.CheckpointError() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if r := call(t, ts, "GET", "/readyz", "", ""); r.status != 503 || !strings.Contains(r.raw, "checkpoint") {
		t.Fatalf("readyz while checkpoints fail: %d %s", r.status, r.raw)
	}
	m := call(t, ts, "GET", "/metrics", admin, "")
	if !strings.Contains(m.raw, "tidemark_checkpoint_failing 1") || strings.Contains(m.raw, "tidemark_checkpoint_failures_total 0") {
		t.Fatalf("metrics while checkpoints fail: %.3000s", m.raw)
	}
	os.RemoveAll(blocker)
	if err := db.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A background checkpoint clears the error: write enough to run one.
	for i := range 8 {
		call(t, ts, "POST", "/v1/collections/c/memories", admin, `{"memories":[{"id":"m`+strconv.Itoa(i)+`","vector":[1,0,0]}]}`)
	}
	for db.CheckpointError() != nil && time.Now().Before(deadline.Add(5*time.Second)) {
		time.Sleep(10 * time.Millisecond)
	}
	if r := call(t, ts, "GET", "/readyz", "", ""); r.status != 200 {
		t.Fatalf("readyz after checkpoints recover: %d %s", r.status, r.raw)
	}
}

// Audit pages end where a record's edits end, and walking next visits
// every entry once.
func TestAuditPages(t *testing.T) {
	var all []tidemark.AuditEntry
	for seq, n := range []int{3, 1, 5, 2, 2} {
		for range n {
			all = append(all, tidemark.AuditEntry{Seq: uint64(seq + 1)})
		}
	}
	for _, limit := range []int{1, 2, 3, 4, 6, 13, 20} {
		var seen []tidemark.AuditEntry
		since, pages := uint64(0), 0
		for {
			i := 0
			for i < len(all) && all[i].Seq <= since {
				i++
			}
			page, next := auditPage(all[i:], limit)
			if len(page) > limit && page[0].Seq != page[len(page)-1].Seq {
				t.Fatalf("limit %d: a page of %d entries spans records", limit, len(page))
			}
			if next != 0 && page[len(page)-1].Seq != next {
				t.Fatalf("limit %d: next %d, the page ends at %d", limit, next, page[len(page)-1].Seq)
			}
			seen = append(seen, page...)
			if pages++; next == 0 || pages > 20 {
				break
			}
			since = next
		}
		if len(seen) != len(all) {
			t.Fatalf("limit %d: %d entries over the pages, want %d", limit, len(seen), len(all))
		}
	}
	ts, _ := newTestServer(t)
	call(t, ts, "POST", "/v1/collections/facts", admin, `{"dim":3}`)
	for _, q := range []string{"limit=0", "limit=1001", "limit=x"} {
		if r := call(t, ts, "GET", "/v1/collections/facts/audit?"+q, admin, ""); r.status != 400 {
			t.Errorf("%s: %d", q, r.status)
		}
	}
}

// With Config.TLS the server answers HTTPS only.
func TestTLS(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	addr, _, _ := liveServer(t, Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	parsed, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(parsed)
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	res, err := c.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.TLS == nil {
		t.Fatalf("https: %d", res.StatusCode)
	}
	if res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/healthz"); err == nil {
		res.Body.Close()
		if res.StatusCode == 200 {
			t.Fatal("plain HTTP answered 200")
		}
	}
}

// A client is its address, or its IPv6 /64; the failed-auth limiter
// remembers a bounded number of clients and shares one bucket past it.
func TestClientsAndTheLimiterBound(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:5000": "127.0.0.1", "[2001:db8:1:2:3:4:5:6]:80": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:81": "2001:db8:1:2::/64", "[::ffff:10.0.0.1]:1": "10.0.0.1", "@": "@",
	} {
		if got := hostOf(addr); got != want {
			t.Errorf("hostOf(%q) = %q, want %q", addr, got, want)
		}
	}
	f := failLimiter{rate: 1, burst: 10, clients: map[string]*bucket{}}
	now := time.Now()
	for i := range maxFailClients + 10 {
		b := f.bucket("c"+strconv.Itoa(i), now)
		b.take(f.rate, f.burst, now) // every one still failing
	}
	if len(f.clients) != maxFailClients || f.bucket("new", now) != &f.overflow {
		t.Fatalf("%d clients remembered; a new one is not in the shared bucket", len(f.clients))
	}
	// Once their buckets refill, old clients are forgotten.
	later := now.Add(time.Minute)
	if b := f.bucket("newer", later); b == &f.overflow || len(f.clients) != 1 {
		t.Fatalf("after a minute: %d clients, overflow %v", len(f.clients), b == &f.overflow)
	}
}
