package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeVec is the fake model's vector of text: deterministic, finite,
// different for different texts.
func fakeVec(text string, dim int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	s := h.Sum64()
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(int64(s>>(i%48))&0xffff)/65536 + float32(i)
	}
	return v
}

// fakeModel is an in-process embedding server for both APIs. By default it
// answers every request with fakeVec vectors of dim dimensions (openai
// answers list them in reverse order, to exercise "index"); hook, when
// set, may answer instead (returning true).
type fakeModel struct {
	t   *testing.T
	srv *httptest.Server
	dim atomic.Int64

	requests atomic.Int64
	inflight atomic.Int64
	peak     atomic.Int64

	mu      sync.Mutex
	batches [][]string
	auth    []string
	bodies  []map[string]any

	hook atomic.Pointer[hookFunc]
}

// hookFunc answers request number n (from 1) instead of the model, if it
// returns true.
type hookFunc func(w http.ResponseWriter, r *http.Request, n int64) bool

func (m *fakeModel) setHook(h hookFunc) { m.hook.Store(&h) }

// sent returns a copy of what the model received: the input of each
// request, its Authorization header, and its decoded body.
func (m *fakeModel) sent() (batches [][]string, auth []string, bodies []map[string]any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.batches), slices.Clone(m.auth), slices.Clone(m.bodies)
}

func newFakeModel(t *testing.T, dim int) *fakeModel {
	t.Helper()
	m := &fakeModel{t: t}
	m.dim.Store(int64(dim))
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	n := m.requests.Add(1)
	cur := m.inflight.Add(1)
	defer m.inflight.Add(-1)
	for {
		p := m.peak.Load()
		if cur <= p || m.peak.CompareAndSwap(p, cur) {
			break
		}
	}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "want a JSON POST", http.StatusMethodNotAllowed)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "bad request JSON", http.StatusBadRequest)
		return
	}
	var input []string
	raw, _ := body["input"].([]any)
	for _, x := range raw {
		s, _ := x.(string)
		input = append(input, s)
	}
	m.mu.Lock()
	m.batches = append(m.batches, input)
	m.auth = append(m.auth, r.Header.Get("Authorization"))
	m.bodies = append(m.bodies, body)
	m.mu.Unlock()
	if h := m.hook.Load(); h != nil && (*h)(w, r, n) {
		return
	}
	dim := int(m.dim.Load())
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/v1/embeddings":
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(input) - 1; i >= 0; i-- {
			data = append(data, item{"embedding", i, fakeVec(input[i], dim)})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": body["model"]})
	case "/api/embed":
		var embs [][]float32
		for _, s := range input {
			embs = append(embs, fakeVec(s, dim))
		}
		json.NewEncoder(w).Encode(map[string]any{"model": body["model"], "embeddings": embs})
	default:
		http.NotFound(w, r)
	}
}

// opts returns options for the fake's API with fast retries.
func (m *fakeModel) opts(api RemoteAPI) *RemoteOptions {
	base := m.srv.URL + "/v1"
	if api == APIOllama {
		base = m.srv.URL
	}
	return &RemoteOptions{
		API:         api,
		BaseURL:     base,
		Model:       "fake-embed",
		Timeout:     5 * time.Second,
		BackoffBase: time.Millisecond,
		BackoffMax:  2 * time.Millisecond,
	}
}

func (m *fakeModel) batchSizes() []int {
	batches, _, _ := m.sent()
	var s []int
	for _, b := range batches {
		s = append(s, len(b))
	}
	return s
}

func newRemoteT(t *testing.T, o *RemoteOptions) *Remote {
	t.Helper()
	r, err := NewRemote(o)
	if err != nil {
		t.Fatalf("NewRemote: %v", err)
	}
	return r
}

func texts(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("text number %d", i)
	}
	return s
}

// checkVecs checks that got holds fakeVec of every text, in order.
func checkVecs(t *testing.T, got [][]float32, in []string, dim int) {
	t.Helper()
	if len(got) != len(in) {
		t.Fatalf("%d vectors for %d texts", len(got), len(in))
	}
	for i := range in {
		if !slices.Equal(got[i], fakeVec(in[i], dim)) {
			t.Fatalf("vector %d (%q) is not the model's", i, in[i])
		}
	}
}

func TestRemoteAPIs(t *testing.T) {
	for _, api := range []RemoteAPI{APIOpenAI, APIOllama} {
		t.Run(string(api), func(t *testing.T) {
			m := newFakeModel(t, 8)
			r := newRemoteT(t, m.opts(api))
			if r.Dim() != 0 {
				t.Errorf("Dim() = %d before any answer, want 0", r.Dim())
			}
			in := texts(150)
			got, err := r.Embed(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			checkVecs(t, got, in, 8)
			if r.Dim() != 8 {
				t.Errorf("Dim() = %d, want 8 (learnt)", r.Dim())
			}
			if got := slices.Sorted(slices.Values(m.batchSizes())); !slices.Equal(got, []int{22, 64, 64}) { // concurrent: any order
				t.Errorf("batch sizes %v, want 64, 64, 22", got)
			}
			_, _, bodies := m.sent()
			for _, b := range bodies {
				if b["model"] != "fake-embed" {
					t.Errorf("request model = %v", b["model"])
				}
				if _, ok := b["dimensions"]; ok {
					t.Errorf("request has dimensions without SendDimensions: %v", b)
				}
			}
		})
	}
}

func TestRemoteSendDimensions(t *testing.T) {
	m := newFakeModel(t, 4)
	o := m.opts(APIOpenAI)
	o.Dimensions, o.SendDimensions = 4, true
	r := newRemoteT(t, o)
	if r.Dim() != 4 {
		t.Errorf("Dim() = %d, want Dimensions = 4", r.Dim())
	}
	if _, err := r.Embed(t.Context(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if _, _, bodies := m.sent(); bodies[0]["dimensions"] != 4.0 {
		got := bodies[0]["dimensions"]
		t.Errorf("request dimensions = %v, want 4", got)
	}
}

func TestRemoteBatching(t *testing.T) {
	for _, tc := range []struct {
		n, batch int
		want     []int
	}{
		{0, 0, nil},
		{1, 0, []int{1}},
		{64, 0, []int{64}},
		{65, 0, []int{64, 1}},
		{25, 10, []int{10, 10, 5}},
	} {
		m := newFakeModel(t, 3)
		o := m.opts(APIOpenAI)
		o.BatchSize, o.Concurrency = tc.batch, 1 // one at a time: batches in order
		r := newRemoteT(t, o)
		in := texts(tc.n)
		got, err := r.Embed(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || len(got) != tc.n {
			t.Errorf("%d texts: got %v vectors", tc.n, len(got))
		}
		checkVecs(t, got, in, 3)
		if sizes := m.batchSizes(); !slices.Equal(sizes, tc.want) {
			t.Errorf("%d texts, BatchSize %d: batches %v, want %v", tc.n, tc.batch, sizes, tc.want)
		}
	}
	// A text repeated within a call is sent once.
	m := newFakeModel(t, 3)
	r := newRemoteT(t, m.opts(APIOpenAI))
	in := []string{"a", "b", "a", "a", "c", "b"}
	got, err := r.Embed(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, got, in, 3)
	if got[0] != nil && &got[0][0] == &got[2][0] {
		t.Error("duplicate texts share one vector's memory")
	}
	if sizes := m.batchSizes(); !slices.Equal(sizes, []int{3}) {
		t.Errorf("batches %v, want one batch of the 3 distinct texts", sizes)
	}
}

// TestRemoteConcurrencyBound holds the first requests until Concurrency of
// them are in flight at once, then checks that no more ever were.
func TestRemoteConcurrencyBound(t *testing.T) {
	const limit = 3
	m := newFakeModel(t, 2)
	var opened atomic.Bool
	gate := make(chan struct{})
	m.setHook(func(w http.ResponseWriter, r *http.Request, n int64) bool {
		if !opened.Load() {
			if m.inflight.Load() >= limit && opened.CompareAndSwap(false, true) {
				close(gate)
			}
			select {
			case <-gate:
			case <-time.After(5 * time.Second):
			}
		}
		return false
	})
	o := m.opts(APIOllama)
	o.BatchSize, o.Concurrency = 2, limit
	r := newRemoteT(t, o)
	// Two concurrent calls share the bound.
	var wg sync.WaitGroup
	for c := range 2 {
		wg.Go(func() {
			in := texts(40)
			for i := range in {
				in[i] += fmt.Sprint(" call ", c)
			}
			got, err := r.Embed(t.Context(), in)
			if err != nil {
				t.Error(err)
				return
			}
			checkVecs(t, got, in, 2)
		})
	}
	wg.Wait()
	if p := m.peak.Load(); p != limit {
		t.Errorf("peak requests in flight = %d, want Concurrency = %d", p, limit)
	}
	if n := m.requests.Load(); n != 40 {
		t.Errorf("%d requests, want 40", n)
	}
}

const testKeyEnv = "TIDEMARK_EMBED_TEST_KEY"

func TestRemoteAuthorization(t *testing.T) {
	m := newFakeModel(t, 2)
	t.Setenv(testKeyEnv, "sk-test-first")
	o := m.opts(APIOpenAI)
	o.APIKeyEnv = testKeyEnv
	o.NoCache = true
	r := newRemoteT(t, o)
	if _, err := r.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(testKeyEnv, "sk-test-rotated") // read at each request
	if _, err := r.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	noKey := newRemoteT(t, m.opts(APIOpenAI))
	if _, err := noKey.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"Bearer sk-test-first", "Bearer sk-test-rotated", ""}
	if _, auth, _ := m.sent(); !slices.Equal(auth, want) {
		t.Errorf("Authorization headers %q, want %q", auth, want)
	}
}

// TestRemoteKeyNeverInErrors forces every kind of failure against a server
// that echoes the Authorization header back, and checks that the key
// appears in no error, nor in String.
func TestRemoteKeyNeverInErrors(t *testing.T) {
	const key = "sk-secret-0123456789"
	t.Setenv(testKeyEnv, key)
	echo := func(status int, ctype string) func(w http.ResponseWriter, r *http.Request, n int64) bool {
		return func(w http.ResponseWriter, r *http.Request, n int64) bool {
			w.Header().Set("Content-Type", ctype)
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error": {"message": "key %s rejected", "auth": %q}}`, r.Header.Get("Authorization"), r.Header.Get("Authorization"))
			return true
		}
	}
	slow := func(w http.ResponseWriter, r *http.Request, n int64) bool {
		<-r.Context().Done()
		return true
	}
	for _, tc := range []struct {
		name   string
		hook   hookFunc
		target error
	}{
		{"401", echo(http.StatusUnauthorized, "application/json"), ErrRemote},
		{"500", echo(http.StatusInternalServerError, "text/plain"), ErrRemote},
		{"bad answer", echo(http.StatusOK, "application/json"), ErrBadAnswer},
		{"timeout", slow, ErrRemote},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newFakeModel(t, 2)
			m.setHook(tc.hook)
			o := m.opts(APIOpenAI)
			o.APIKeyEnv, o.MaxRetries, o.Timeout = testKeyEnv, 1, 20*time.Millisecond
			r := newRemoteT(t, o)
			_, err := r.Embed(t.Context(), []string{"x"})
			if !errors.Is(err, tc.target) {
				t.Fatalf("err = %v, want %v", err, tc.target)
			}
			if strings.Contains(err.Error(), key) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), key) {
				t.Errorf("error holds the key: %v", err)
			}
			if !strings.Contains(err.Error(), "POST "+m.srv.URL+"/v1/embeddings") {
				t.Errorf("error does not name the endpoint: %v", err)
			}
			t.Log(err)
		})
	}
	// The server is down.
	m := newFakeModel(t, 2)
	o := m.opts(APIOpenAI)
	o.APIKeyEnv, o.MaxRetries = testKeyEnv, 1
	o.BaseURL += "?api-key=" + key // a query is kept on requests, not in errors
	r := newRemoteT(t, o)
	m.srv.Close()
	_, err := r.Embed(t.Context(), []string{"x"})
	if !errors.Is(err, ErrRemote) || strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "api-key") {
		t.Errorf("server down: err = %v, want ErrRemote without the key or the query", err)
	}
	if !strings.Contains(err.Error(), "POST "+m.srv.URL+"/v1/embeddings: ") {
		t.Errorf("server down: error does not name the endpoint: %v", err)
	}
	t.Log(err)
	if s := r.String(); strings.Contains(s, key) || !strings.Contains(s, "$"+testKeyEnv) {
		t.Errorf("String() = %s, want the variable's name and not the key", s)
	}
	// The variable is unset: a clear error naming the variable.
	t.Setenv(testKeyEnv, "")
	m2 := newFakeModel(t, 2)
	o2 := m2.opts(APIOpenAI)
	o2.APIKeyEnv = testKeyEnv
	_, err = newRemoteT(t, o2).Embed(t.Context(), []string{"x"})
	if !errors.Is(err, ErrRemote) || !strings.Contains(err.Error(), testKeyEnv) || m2.requests.Load() != 0 {
		t.Errorf("unset key: err = %v after %d requests, want ErrRemote naming %s and no request", err, m2.requests.Load(), testKeyEnv)
	}
}

func TestRemoteRetryAfter429(t *testing.T) {
	m := newFakeModel(t, 2)
	m.setHook(func(w http.ResponseWriter, r *http.Request, n int64) bool {
		if n == 1 {
			w.Header().Set("Retry-After", "1") // capped at BackoffMax in this test
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return true
		}
		return false
	})
	r := newRemoteT(t, m.opts(APIOpenAI))
	start := time.Now()
	got, err := r.Embed(t.Context(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, got, []string{"a", "b"}, 2)
	if n := m.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	if d := time.Since(start); d > time.Second/2 {
		t.Errorf("took %v: Retry-After was not capped by BackoffMax", d)
	}
}

func TestRemote503TwiceThenSuccess(t *testing.T) {
	m := newFakeModel(t, 2)
	m.setHook(func(w http.ResponseWriter, r *http.Request, n int64) bool {
		if n <= 2 {
			http.Error(w, "loading", http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	got, err := newRemoteT(t, m.opts(APIOllama)).Embed(t.Context(), []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, got, []string{"a"}, 2)
	if n := m.requests.Load(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestRemotePersistent500(t *testing.T) {
	m := newFakeModel(t, 2)
	m.setHook(func(w http.ResponseWriter, r *http.Request, n int64) bool {
		http.Error(w, "boom:\n\tthe GPU\x00 fell over", http.StatusInternalServerError)
		return true
	})
	o := m.opts(APIOpenAI)
	o.MaxRetries = 2
	_, err := newRemoteT(t, o).Embed(t.Context(), []string{"a"})
	want := "embed: POST " + m.srv.URL + "/v1/embeddings: 500 Internal Server Error: boom: the GPU fell over (after 3 attempts)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
	var re *RemoteError
	if !errors.Is(err, ErrRemote) || !errors.As(err, &re) || re.StatusCode != 500 || re.Attempts != 3 {
		t.Errorf("err = %#v, want a *RemoteError matching ErrRemote with status 500 after 3 attempts", err)
	}
	if n := m.requests.Load(); n != 3 {
		t.Errorf("%d requests, want MaxRetries+1 = 3", n)
	}
	// The default is 4 retries; a negative MaxRetries means none.
	for _, tc := range []struct{ retries, want int }{{0, 5}, {-1, 1}} {
		m.requests.Store(0)
		o.MaxRetries = tc.retries
		newRemoteT(t, o).Embed(t.Context(), []string{"a"})
		if n := m.requests.Load(); n != int64(tc.want) {
			t.Errorf("MaxRetries %d: %d requests, want %d", tc.retries, n, tc.want)
		}
	}
}

func TestRemoteNoRetryOn4xx(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 413, 422} {
		m := newFakeModel(t, 2)
		m.setHook(func(w http.ResponseWriter, r *http.Request, n int64) bool {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, `{"error": "model \"fake-embed\" not found"}`)
			return true
		})
		_, err := newRemoteT(t, m.opts(APIOpenAI)).Embed(t.Context(), []string{"a"})
		want := fmt.Sprintf(`%d %s: model "fake-embed" not found`, status, http.StatusText(status))
		if !errors.Is(err, ErrRemote) || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("status %d: err = %v, want ErrRemote ending %q", status, err, want)
		}
		if n := m.requests.Load(); n != 1 {
			t.Errorf("status %d: %d requests, want 1 (not retried)", status, n)
		}
	}
}

func TestRemoteTimeout(t *testing.T) {
	m := newFakeModel(t, 2)
	m.setHook(func(w http.ResponseWriter, r *http.Request, n int64) bool {
		if n <= 2 {
			<-r.Context().Done() // never answers in time
			return true
		}
		return false
	})
	o := m.opts(APIOpenAI)
	o.Timeout, o.MaxRetries = 10*time.Millisecond, 1
	r := newRemoteT(t, o)
	_, err := r.Embed(t.Context(), []string{"a"})
	if !errors.Is(err, ErrRemote) || errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "timeout: no answer within 10ms") {
		t.Errorf("err = %v, want ErrRemote saying timeout (and not the caller's deadline)", err)
	}
	if n := m.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2 (a timeout is retried)", n)
	}
	// The third request is answered.
	if _, err := r.Embed(t.Context(), []string{"a"}); err != nil {
		t.Errorf("after the timeouts: %v", err)
	}
}

func TestRemoteBadAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		api    RemoteAPI
		dims   int
		body   string
		detail string
		dim    bool // also ErrDimension
	}{
		{"wrong count", APIOpenAI, 0, `{"data":[{"index":0,"embedding":[1,2]}]}`, "1 vectors for 2 texts", false},
		{"no data", APIOpenAI, 0, `{"object":"list"}`, `no "data" field`, false},
		{"missing index", APIOpenAI, 0, `{"data":[{"index":0,"embedding":[1,2]},{"embedding":[1,2]}]}`, `data[1] has no "index"`, false},
		{"repeated index", APIOpenAI, 0, `{"data":[{"index":1,"embedding":[1,2]},{"index":1,"embedding":[1,2]}]}`, "index 1 appears twice", false},
		{"index out of range", APIOpenAI, 0, `{"data":[{"index":0,"embedding":[1,2]},{"index":2,"embedding":[1,2]}]}`, "data[1] has index 2, want 0…1", false},
		{"missing embedding", APIOpenAI, 0, `{"data":[{"index":0,"embedding":[1,2]},{"index":1}]}`, `data[1] has no "embedding"`, false},
		{"wrong dimension", APIOpenAI, 3, `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2]}]}`, "vectors of 2 dimensions, want 3 (RemoteOptions.Dimensions)", true},
		{"ragged", APIOllama, 0, `{"embeddings":[[1,2],[1,2,3]]}`, "vector 1 has 3 dimensions, vector 0 has 2", true},
		{"empty vectors", APIOllama, 0, `{"embeddings":[[],[]]}`, "vectors of 0 dimensions", true},
		{"bad JSON", APIOpenAI, 0, `{"data":[{"index":0,"embedding":[1,2]}`, "bad JSON: unexpected end of JSON input", false},
		{"not JSON", APIOllama, 0, `<html>gateway</html>`, "bad JSON: invalid character '<'", false},
		{"NaN", APIOllama, 0, `{"embeddings":[[1,NaN],[1,2]]}`, "non-finite value NaN", false},
		{"Infinity", APIOpenAI, 0, `{"data":[{"index":0,"embedding":[1,-Infinity]},{"index":1,"embedding":[1,2]}]}`, "non-finite value -Infinity", false},
		{"float32 overflow", APIOllama, 0, `{"embeddings":[[1,2],[1e39,2]]}`, "number 1e39 out of float32 range", false},
		{"null vector", APIOllama, 0, `{"embeddings":[[1,2],null]}`, "embeddings[1] is null", false},
		{"base64", APIOpenAI, 0, `{"data":[{"index":0,"embedding":"AACAPw=="},{"index":1,"embedding":"AACAPw=="}]}`, "bad JSON", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newFakeModel(t, 2)
			m.setHook(func(w http.ResponseWriter, r *http.Request, n int64) bool {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tc.body)
				return true
			})
			o := m.opts(tc.api)
			o.Dimensions = tc.dims
			r := newRemoteT(t, o)
			got, err := r.Embed(t.Context(), []string{"a", "b"})
			if got != nil || !errors.Is(err, ErrBadAnswer) || errors.Is(err, ErrDimension) != tc.dim {
				t.Fatalf("Embed = %v, %v; want no vectors, ErrBadAnswer (ErrDimension: %v)", got, err, tc.dim)
			}
			if !strings.Contains(err.Error(), tc.detail) || !strings.Contains(err.Error(), "POST "+m.srv.URL) {
				t.Errorf("err = %v, want it to name the endpoint and say %q", err, tc.detail)
			}
			if n := m.requests.Load(); n != 1 {
				t.Errorf("%d requests, want 1 (a bad answer is not retried)", n)
			}
			if tc.dims == 0 && r.Dim() != 0 {
				t.Errorf("Dim() = %d after a bad answer, want 0", r.Dim())
			}
		})
	}
}

func TestRemoteAnswerTooLarge(t *testing.T) {
	m := newFakeModel(t, 64)
	o := m.opts(APIOpenAI)
	o.MaxAnswerBytes = 1000
	_, err := newRemoteT(t, o).Embed(t.Context(), texts(3))
	if !errors.Is(err, ErrBadAnswer) || !strings.Contains(err.Error(), "longer than 1000 bytes") {
		t.Errorf("err = %v, want ErrBadAnswer: longer than 1000 bytes", err)
	}
}

// TestRemoteLearnsDimension: with Dimensions 0 the first answer fixes the
// length; a later answer of another length is refused and not cached.
func TestRemoteLearnsDimension(t *testing.T) {
	m := newFakeModel(t, 4)
	r := newRemoteT(t, m.opts(APIOpenAI))
	if _, err := r.Embed(t.Context(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	m.dim.Store(5)
	_, err := r.Embed(t.Context(), []string{"b"})
	if !errors.Is(err, ErrDimension) || !strings.Contains(err.Error(), "want 4 (learnt from the first answer)") {
		t.Errorf("err = %v, want ErrDimension against the learnt 4", err)
	}
	if r.Dim() != 4 {
		t.Errorf("Dim() = %d, want 4", r.Dim())
	}
	if _, ok := r.cache.Get(r.CacheKey("b")); ok {
		t.Error("a refused vector was cached")
	}
}

// TestRemoteAllOrNothing: when one batch fails the call returns no
// vectors, although other batches succeeded.
func TestRemoteAllOrNothing(t *testing.T) {
	m := newFakeModel(t, 2)
	var failed atomic.Bool
	m.setHook(func(w http.ResponseWriter, r *http.Request, n int64) bool {
		if n == 2 && failed.CompareAndSwap(false, true) {
			http.Error(w, "bad input", http.StatusBadRequest)
			return true
		}
		return false
	})
	o := m.opts(APIOpenAI)
	o.BatchSize, o.Concurrency = 2, 1
	r := newRemoteT(t, o)
	got, err := r.Embed(t.Context(), texts(6))
	if got != nil || !errors.Is(err, ErrRemote) {
		t.Fatalf("Embed = %d vectors, %v; want none and ErrRemote", len(got), err)
	}
	if n := m.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2 (stop at the first failure)", n)
	}
	// The batch that succeeded was cached: a retry pays only for the rest.
	m.requests.Store(0)
	got, err = r.Embed(t.Context(), texts(6))
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, got, texts(6), 2)
	if n := m.requests.Load(); n != 2 {
		t.Errorf("retry: %d requests, want 2 (the first batch is cached)", n)
	}
}

func TestRemoteContextCancelMidRetry(t *testing.T) {
	m := newFakeModel(t, 2)
	m.setHook(func(w http.ResponseWriter, r *http.Request, n int64) bool {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return true
	})
	ctx, cancel := context.WithCancel(t.Context())
	o := m.opts(APIOpenAI)
	o.BackoffBase, o.BackoffMax = time.Hour, time.Hour
	// Cancel as soon as the client has read the 503, before it retries.
	o.HTTPClient = &http.Client{Transport: afterRoundTrip{http.DefaultTransport, cancel}}
	r := newRemoteT(t, o)
	start := time.Now()
	got, err := r.Embed(ctx, []string{"a"})
	if got != nil || !errors.Is(err, context.Canceled) || errors.Is(err, ErrRemote) {
		t.Errorf("Embed = %v, %v; want no vectors and context.Canceled", got, err)
	}
	if err != nil && !strings.Contains(err.Error(), "503 Service Unavailable: busy") {
		t.Errorf("err = %v, want it to say what the last answer was", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Embed returned after %v", d)
	}
	if n := m.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	// A context already done sends nothing.
	if _, err := r.Embed(ctx, []string{"b"}); !errors.Is(err, context.Canceled) || m.requests.Load() != 1 {
		t.Errorf("done context: err = %v after %d requests", err, m.requests.Load())
	}
}

// afterRoundTrip calls after once a response has been read and closed.
type afterRoundTrip struct {
	http.RoundTripper
	after func()
}

func (a afterRoundTrip) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := a.RoundTripper.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = afterClose{resp.Body, a.after}
	return resp, nil
}

type afterClose struct {
	io.ReadCloser
	after func()
}

func (a afterClose) Close() error {
	err := a.ReadCloser.Close()
	a.after()
	return err
}

func TestRemoteCache(t *testing.T) {
	m := newFakeModel(t, 3)
	r := newRemoteT(t, m.opts(APIOpenAI))
	in := texts(10)
	first, err := r.Embed(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	first[0][0] = 42 // the caller's copy: the cache must not see it
	again, err := r.Embed(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, again, in, 3)
	if n := m.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1 (the second call is all cache hits)", n)
	}
	// Only the misses are sent, and the results come back in order.
	mixed := []string{"new 1", in[3], "new 2", in[0]}
	got, err := r.Embed(t.Context(), mixed)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, got, mixed, 3)
	if batches, _, _ := m.sent(); !slices.Equal(batches[len(batches)-1], []string{"new 1", "new 2"}) {
		b := batches[len(batches)-1]
		t.Errorf("sent %q, want only the misses", b)
	}
	// NoCache sends everything every time.
	o := m.opts(APIOpenAI)
	o.NoCache = true
	nc := newRemoteT(t, o)
	m.requests.Store(0)
	for range 2 {
		if _, err := nc.Embed(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.requests.Load(); n != 2 {
		t.Errorf("NoCache: %d requests, want 2", n)
	}
}

// TestRemoteCacheKey: the key covers API, endpoint, model and dimensions,
// so Remotes sharing a cache do not mix vectors.
func TestRemoteCacheKey(t *testing.T) {
	base := RemoteOptions{BaseURL: "http://h:1/v1", Model: "m"}
	key := func(o RemoteOptions) [32]byte { return newRemoteT(t, &o).CacheKey("text") }
	k0 := key(base)
	same := base
	same.BaseURL += "/" // a trailing slash is the same endpoint
	same.BatchSize, same.Timeout = 7, time.Minute
	if key(same) != k0 {
		t.Error("the key depends on options that do not change vectors")
	}
	for _, change := range []func(o *RemoteOptions){
		func(o *RemoteOptions) { o.Model = "m2" },
		func(o *RemoteOptions) { o.API = APIOllama },
		func(o *RemoteOptions) { o.BaseURL = "http://h:2/v1" },
		func(o *RemoteOptions) { o.Dimensions = 8 },
		func(o *RemoteOptions) { o.Dimensions, o.SendDimensions = 8, true },
	} {
		o := base
		change(&o)
		if key(o) == k0 {
			t.Errorf("%+v has the key of %+v", o, base)
		}
	}
	if r := newRemoteT(t, &base); r.CacheKey("a") == r.CacheKey("b") {
		t.Error("different texts share a key")
	}

	// Two models on one shared cache.
	m := newFakeModel(t, 2)
	shared := NewMemoryCache(0)
	oa, ob := m.opts(APIOpenAI), m.opts(APIOpenAI)
	oa.Cache, ob.Cache = shared, shared
	ob.Model = "other"
	for _, o := range []*RemoteOptions{oa, ob} {
		if _, err := newRemoteT(t, o).Embed(t.Context(), []string{"x"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.requests.Load(); n != 2 || shared.Len() != 2 {
		t.Errorf("%d requests, %d cached; want 2 and 2", n, shared.Len())
	}
}

func TestRemoteFileCacheSurvivesRestart(t *testing.T) {
	m := newFakeModel(t, 5)
	path := t.TempDir() + "/vectors.cache"
	in := texts(30)
	for run := range 2 {
		fc, err := OpenFileCache(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		o := m.opts(APIOllama)
		o.Cache = fc
		r := newRemoteT(t, o)
		got, err := r.Embed(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		checkVecs(t, got, in, 5)
		if r.Dim() != 5 {
			t.Errorf("run %d: Dim() = %d, want 5", run, r.Dim())
		}
		if err := fc.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.requests.Load(); n != 1 {
		t.Errorf("%d requests over two runs, want 1", n)
	}
}

func TestRemoteOptionsValidate(t *testing.T) {
	ok := RemoteOptions{BaseURL: "https://api.example.com/v1", Model: "m"}
	for _, tc := range []struct {
		change func(o *RemoteOptions)
		field  string
	}{
		{func(o *RemoteOptions) { o.API = "cohere" }, "API"},
		{func(o *RemoteOptions) { o.BaseURL = "" }, "BaseURL: is required"},
		{func(o *RemoteOptions) { o.BaseURL = "localhost:11434" }, "BaseURL"},
		{func(o *RemoteOptions) { o.BaseURL = "ftp://h/v1" }, "BaseURL: scheme"},
		{func(o *RemoteOptions) { o.BaseURL = "http:///v1" }, "BaseURL: has no host"},
		{func(o *RemoteOptions) { o.BaseURL = "https://user:sk-pass@h/v1" }, "BaseURL: must not hold credentials"},
		{func(o *RemoteOptions) { o.BaseURL = "http://h/v1#x" }, "BaseURL"},
		{func(o *RemoteOptions) { o.BaseURL = "http://h/\x7f" }, "BaseURL: not a URL"},
		{func(o *RemoteOptions) { o.Model = " " }, "Model"},
		{func(o *RemoteOptions) { o.Dimensions = -1 }, "Dimensions"},
		{func(o *RemoteOptions) { o.Dimensions = MaxRemoteDim + 1 }, "Dimensions"},
		{func(o *RemoteOptions) { o.SendDimensions = true }, "SendDimensions"},
		{func(o *RemoteOptions) { o.API, o.Dimensions, o.SendDimensions = APIOllama, 8, true }, "SendDimensions"},
		{func(o *RemoteOptions) { o.APIKeyEnv = "sk-proj-0123456789" }, "APIKeyEnv"},
		{func(o *RemoteOptions) { o.BatchSize = -1 }, "BatchSize"},
		{func(o *RemoteOptions) { o.BatchSize = MaxRemoteBatchSize + 1 }, "BatchSize"},
		{func(o *RemoteOptions) { o.Concurrency = -1 }, "Concurrency"},
		{func(o *RemoteOptions) { o.Timeout = -time.Second }, "Timeout"},
		{func(o *RemoteOptions) { o.BackoffBase = -1 }, "BackoffBase"},
		{func(o *RemoteOptions) { o.BackoffMax = -1 }, "BackoffMax"},
		{func(o *RemoteOptions) { o.BackoffBase = time.Minute }, "BackoffBase"},
		{func(o *RemoteOptions) { o.MaxAnswerBytes = -1 }, "MaxAnswerBytes"},
		{func(o *RemoteOptions) { o.NoCache, o.Cache = true, NewMemoryCache(1) }, "NoCache"},
	} {
		o := ok
		tc.change(&o)
		err := o.Validate()
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "RemoteOptions."+tc.field) {
			t.Errorf("Validate(%+v) = %v, want ErrOptions naming RemoteOptions.%s", o, err, tc.field)
			continue
		}
		for _, secret := range []string{"sk-pass", "sk-proj"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Validate error quotes a secret: %v", err)
			}
		}
		if r, err := NewRemote(&o); r != nil || !errors.Is(err, ErrOptions) {
			t.Errorf("NewRemote(%+v) = %v, %v; want nil, ErrOptions", o, r, err)
		}
	}
	if _, err := NewRemote(nil); !errors.Is(err, ErrOptions) {
		t.Errorf("NewRemote(nil) = %v, want ErrOptions", err)
	}
	// Defaults.
	r := newRemoteT(t, &RemoteOptions{BaseURL: "http://h:11434/", Model: "m", APIKeyEnv: "OPENAI_API_KEY"})
	got := r.Options()
	if got.API != APIOpenAI || got.BaseURL != "http://h:11434" || got.BatchSize != 64 || got.Concurrency != 4 ||
		got.Timeout != 30*time.Second || got.MaxRetries != 4 || got.BackoffBase != 250*time.Millisecond ||
		got.BackoffMax != 30*time.Second || got.MaxAnswerBytes != 64<<20 || got.HTTPClient == nil || got.Cache == nil {
		t.Errorf("defaults: %+v", got)
	}
	if r.endpoint != "http://h:11434/embeddings" {
		t.Errorf("endpoint %q", r.endpoint)
	}
	if want := `embed.Remote(openai http://h:11434/embeddings model="m" dim=0 key=$OPENAI_API_KEY)`; r.String() != want {
		t.Errorf("String() = %s, want %s", r, want)
	}
	ol := newRemoteT(t, &RemoteOptions{API: APIOllama, BaseURL: "http://h:11434?x=1", Model: "m"})
	if ol.endpoint != "http://h:11434/api/embed" || ol.url != "http://h:11434/api/embed?x=1" {
		t.Errorf("ollama endpoint %q, url %q", ol.endpoint, ol.url)
	}
}

func TestRetryDelay(t *testing.T) {
	r := newRemoteT(t, &RemoteOptions{BaseURL: "http://h", Model: "m", BackoffBase: 100 * time.Millisecond, BackoffMax: 2 * time.Second})
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for retry, want := range []time.Duration{100, 200, 400, 800, 1600, 2000, 2000} {
		want *= time.Millisecond
		for range 50 {
			if d := r.retryDelay(retry, "", now); d < want/2 || d > want {
				t.Fatalf("retry %d: delay %v, want in [%v, %v]", retry, d, want/2, want)
			}
		}
	}
	if d := r.retryDelay(1000, "", now); d < time.Second || d > 2*time.Second {
		t.Errorf("retry 1000: delay %v, want capped", d)
	}
	for _, tc := range []struct {
		header  string
		atLeast time.Duration
	}{
		{"1", time.Second},
		{" 1 ", time.Second},
		{"0", 0},
		{"3600", 2 * time.Second}, // capped
		{"99999999999999999999", 2 * time.Second},
		{now.Add(1500 * time.Millisecond).Format(http.TimeFormat), time.Second}, // HTTP dates have whole seconds
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"soon", 0},
		{"-5", 0},
	} {
		d := r.retryDelay(0, tc.header, now)
		if d < tc.atLeast || d > 2*time.Second {
			t.Errorf("Retry-After %q: delay %v, want %v…2s", tc.header, d, tc.atLeast)
		}
	}
	if d, ok := parseRetryAfter("Sat, 01 Mar 2025 12:00:07 GMT", now); !ok || d != 7*time.Second {
		t.Errorf("parseRetryAfter(date) = %v, %v; want 7s", d, ok)
	}
	for _, h := range []string{"", "soon", "1.5", "-1"} {
		if _, ok := parseRetryAfter(h, now); ok {
			t.Errorf("parseRetryAfter(%q) reports a value", h)
		}
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("é", 300)
	for _, tc := range []struct{ body, want string }{
		{``, ``},
		{`plain text`, `plain text`},
		{"  line one\r\n\tline\x00two  ", `line one line two`},
		{`{"error": "no such model"}`, `no such model`},
		{`{"error": {"message": "Rate limit reached", "type": "requests"}}`, `Rate limit reached`},
		{`{"object": "error", "message": "vLLM says no"}`, `vLLM says no`},
		{`{"detail": "FastAPI says no"}`, `FastAPI says no`},
		{`{"detail": [{"loc": ["body"]}]}`, `{"detail": [{"loc": ["body"]}]}`},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{long, strings.Repeat("é", excerptRunes) + "…"},
	} {
		if got := excerpt([]byte(tc.body)); got != tc.want {
			t.Errorf("excerpt(%.40q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

func TestFinite(t *testing.T) {
	if !finite([]float32{0, -1, math.MaxFloat32}) {
		t.Error("finite values reported non-finite")
	}
	for _, x := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		if finite([]float32{1, x}) {
			t.Errorf("finite(%v) = true", x)
		}
	}
}

func FuzzDecodeAnswer(f *testing.F) {
	f.Add(`{"data":[{"index":1,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`, 2)
	f.Add(`{"embeddings":[[1,2],[3,4]]}`, 2)
	f.Add(`{"data":[{"index":0,"embedding":[1,NaN]}]}`, 1)
	f.Add(`{"data":null,"embeddings":[null]}`, 1)
	f.Fuzz(func(t *testing.T, body string, n int) {
		n = int(uint(n) % 8)
		for _, api := range []RemoteAPI{APIOpenAI, APIOllama} {
			vecs, err := api.format().decode([]byte(body), n)
			if err != nil {
				continue
			}
			if len(vecs) != n {
				t.Fatalf("%s: %d vectors for n = %d", api, len(vecs), n)
			}
			for i, v := range vecs {
				if v == nil {
					t.Fatalf("%s: vector %d is nil", api, i)
				}
			}
		}
	})
}
