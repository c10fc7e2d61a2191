package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

const (
	admin  = "admin-secret-0123456789"
	reader = "reader-secret-0123456789"
	other  = "other-secret-0123456789"
)

func newTestServer(t *testing.T) (*httptest.Server, *tidemark.DB) {
	ts, db, _ := newTestServerS(t)
	return ts, db
}

func newTestServerS(t *testing.T) (*httptest.Server, *tidemark.DB, *Server) {
	t.Helper()
	db, err := tidemark.Open(t.TempDir(), &tidemark.Options{NoSync: true, MaxBatch: 100})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := New(db, Config{Tokens: []Token{
		{Token: admin, Name: "admin", Collections: []string{"*"}, Write: true, Metrics: true},
		{Token: reader, Name: "reader", Collections: []string{"facts"}},
		{Token: other, Name: "other", Collections: []string{"theirs"}, Write: true},
	}, MaxBodyBytes: 64 << 10, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts, db, s
}

type reply struct {
	status int
	body   map[string]any
	raw    string
}

func call(t *testing.T, ts *httptest.Server, method, path, token, body string) reply {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), method, ts.URL+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return reply{res.StatusCode, m, string(b)}
}

func code(r reply) string {
	if e, ok := r.body["error"].(map[string]any); ok {
		s, _ := e["code"].(string)
		return s
	}
	return ""
}

func TestAuthMatrix(t *testing.T) {
	ts, _ := newTestServer(t)
	if r := call(t, ts, "POST", "/v1/collections/facts", admin, `{"dim":3}`); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	for _, tc := range []struct {
		name, method, path, token, body string
		status                          int
		code                            string
	}{
		{"no token", "GET", "/v1/collections/facts", "", "", 401, "unauthenticated"},
		{"unknown token", "GET", "/v1/collections/facts", "nope-nope-nope-nope", "", 401, "unauthenticated"},
		{"reader reads", "GET", "/v1/collections/facts", reader, "", 200, ""},
		{"reader writes", "POST", "/v1/collections/facts/memories", reader, `{"memories":[{"id":"a","vector":[1,0,0]}]}`, 403, "forbidden"},
		{"another tenant reads", "GET", "/v1/collections/facts", other, "", 403, "forbidden"},
		{"another tenant searches", "POST", "/v1/collections/facts/search", other, `{"vector":[1,0,0]}`, 403, "forbidden"},
		{"reader creates", "POST", "/v1/collections/mine", reader, `{"dim":3}`, 403, "forbidden"},
	} {
		if r := call(t, ts, tc.method, tc.path, tc.token, tc.body); r.status != tc.status || code(r) != tc.code {
			t.Errorf("%s: %d %q, want %d %q (%s)", tc.name, r.status, code(r), tc.status, tc.code, r.raw)
		}
	}
	// The list shows a token only its collections.
	if r := call(t, ts, "GET", "/v1/collections", other, ""); r.status != 200 || strings.Contains(r.raw, "facts") {
		t.Fatalf("other's list: %s", r.raw)
	}
}

func TestWriteSearchAndBadInput(t *testing.T) {
	ts, db := newTestServer(t)
	call(t, ts, "POST", "/v1/collections/facts", admin, `{"dim":3}`)
	put := `{"memories":[{"id":"v1","text":"limit 100","vector":[1,0.1,0],"kind":"versioned","subject":"api","relation":"limit","object":"100","valid_from":"2025-01-01T00:00:00Z"}]}`
	if r := call(t, ts, "POST", "/v1/collections/facts/memories", admin, put); r.status != 200 {
		t.Fatalf("put: %d %s", r.status, r.raw)
	}
	put2 := `{"memories":[{"id":"v2","text":"limit 250","vector":[1,0.12,0],"kind":"versioned","subject":"api","relation":"limit","object":"250","valid_from":"2025-06-01T00:00:00Z"}]}`
	if r := call(t, ts, "POST", "/v1/collections/facts/memories", admin, put2); r.status != 200 || !strings.Contains(r.raw, `"superseded":["v1"]`) {
		t.Fatalf("put v2: %d %s", r.status, r.raw)
	}
	r := call(t, ts, "POST", "/v1/collections/facts/search", reader, `{"vector":[1,0.1,0],"k":3,"explain":true}`)
	if r.status != 200 || !strings.Contains(r.raw, `"id":"v2"`) || strings.Contains(r.raw, `"hits":[{"id":"v1"`) || !strings.Contains(r.raw, `"signals"`) {
		t.Fatalf("search: %d %s", r.status, r.raw)
	}
	r = call(t, ts, "POST", "/v1/collections/facts/search", reader, `{"vector":[1,0.1,0],"as_of":"2025-03-01T00:00:00Z"}`)
	if r.status != 200 || !strings.Contains(r.raw, `"hits":[{"id":"v1"`) {
		t.Fatalf("as-of search: %d %s", r.status, r.raw)
	}
	// A range that ends before the memories were created keeps none;
	// a plain cosine ranking by weights sees the superseded one too.
	if r := call(t, ts, "POST", "/v1/collections/facts/search", reader, `{"vector":[1,0.1,0],"range":{"to":"2000-01-01T00:00:00Z"}}`); r.status != 200 || !strings.Contains(r.raw, `"hits":[]`) {
		t.Fatalf("range: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "POST", "/v1/collections/facts/search", reader, `{"vector":[1,0.1,0],"method":"plain"}`); r.status != 200 || !strings.Contains(r.raw, `"id":"v1"`) {
		t.Fatalf("plain: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "GET", "/v1/collections/facts/facts?subject=API&relation=limit", reader, ""); r.status != 200 ||
		!strings.Contains(r.raw, `"id":"v1"`) || !strings.Contains(r.raw, `"id":"v2"`) {
		t.Fatalf("fact lineage: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "POST", "/v1/collections/facts/search", reader, `{"vector":[1,0.1,0],"sources":["chat"]}`); r.status != 200 || !strings.Contains(r.raw, `"hits":[]`) {
		t.Fatalf("source filter: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "GET", "/v1/collections/facts/memories/v2/history", reader, ""); r.status != 200 || !strings.Contains(r.raw, `"superseded_by":"v2"`) {
		t.Fatalf("history: %d %s", r.status, r.raw)
	}
	c, _ := db.Collection("facts")
	before, _ := c.Len()
	big := `{"memories":[{"id":"x","text":"` + strings.Repeat("y", 70<<10) + `","vector":[1,0,0]}]}`
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"malformed JSON", "POST", "/v1/collections/facts/memories", `{"memories":[`, 400, "malformed_json"},
		{"trailing data", "POST", "/v1/collections/facts/memories", `{"memories":[]} {}`, 400, "malformed_json"},
		{"unknown field", "POST", "/v1/collections/facts/memories", `{"memories":[{"id":"x","vector":[1,0,0],"colour":"red"}]}`, 400, "unknown_field"},
		{"wrong dimension", "POST", "/v1/collections/facts/memories", `{"memories":[{"id":"x","vector":[1,0]}]}`, 400, "dimension_mismatch"},
		{"float32 overflow", "POST", "/v1/collections/facts/memories", `{"memories":[{"id":"x","vector":[1e39,0,0]}]}`, 400, "invalid_argument"},
		{"zero vector", "POST", "/v1/collections/facts/memories", `{"memories":[{"id":"x","vector":[0,0,0]}]}`, 400, "not_finite"},
		{"bad time", "POST", "/v1/collections/facts/memories", `{"memories":[{"id":"x","vector":[1,0,0],"valid_from":"yesterday"}]}`, 400, "invalid_argument"},
		{"unknown kind", "POST", "/v1/collections/facts/memories", `{"memories":[{"id":"x","vector":[1,0,0],"kind":"rumour"}]}`, 400, "invalid_argument"},
		{"empty batch", "POST", "/v1/collections/facts/memories", `{"memories":[]}`, 400, "invalid_argument"},
		{"oversized body", "POST", "/v1/collections/facts/memories", big, 413, "too_large"},
		{"unknown collection", "POST", "/v1/collections/nope/search", `{"vector":[1,0,0]}`, 404, "not_found"},
		{"unknown memory", "GET", "/v1/collections/facts/memories/nope", "", 404, "not_found"},
		{"bad method", "POST", "/v1/collections/facts/search", `{"vector":[1,0,0],"method":"magic"}`, 400, "invalid_argument"},
		{"drop without confirm", "DELETE", "/v1/collections/facts", "", 400, "invalid_argument"},
		{"duplicate collection", "POST", "/v1/collections/facts", `{"dim":3}`, 409, "already_exists"},
	} {
		if r := call(t, ts, tc.method, tc.path, admin, tc.body); r.status != tc.status || code(r) != tc.code {
			t.Errorf("%s: %d %q, want %d %q (%.200s)", tc.name, r.status, code(r), tc.status, tc.code, r.raw)
		}
	}
	if after, _ := c.Len(); after != before {
		t.Fatalf("bad requests wrote %d memories", after-before)
	}
	// Feedback counts per token; past the limit it is 429.
	for i := range 6 {
		r := call(t, ts, "POST", "/v1/collections/facts/feedback", admin, `{"id":"v2","positive":true}`)
		if want := 200; i == 5 {
			if r.status != 429 || code(r) != "rate_limited" {
				t.Fatalf("sixth feedback: %d %s", r.status, r.raw)
			}
		} else if r.status != want {
			t.Fatalf("feedback %d: %d %s", i, r.status, r.raw)
		}
	}
	if r := call(t, ts, "POST", "/v1/collections/facts/consolidate", admin, ""); r.status != 200 {
		t.Fatalf("consolidate: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "GET", "/v1/collections/facts/audit?since=0", reader, ""); r.status != 200 || !strings.Contains(r.raw, "CONTRADICTS_SAME_KEY") {
		t.Fatalf("audit: %d %.300s", r.status, r.raw)
	}
	if r := call(t, ts, "GET", "/healthz", "", ""); r.status != 200 {
		t.Fatalf("healthz %d", r.status)
	}
	m := call(t, ts, "GET", "/metrics", admin, "")
	for _, want := range []string{`tidemark_http_request_duration_seconds_count{route="POST /v1/collections/{c}/search",status="200"}`,
		`tidemark_search_plans_total{plan="exact"} 5`, `tidemark_memories{state="stored"} 2`,
		`tidemark_consolidation_runs_total 1`, `tidemark_drift_groups 1`, `tidemark_backend_info{backend=`,
		`tidemark_write_duration_seconds_count{kind="put"} 2`, `tidemark_wal_fsync_duration_seconds_count`} {
		if m.status != 200 || !strings.Contains(m.raw, want) {
			t.Fatalf("metrics lack %s:\n%.2000s", want, m.raw)
		}
	}
	if r := call(t, ts, "DELETE", "/v1/collections/facts?confirm=facts", admin, ""); r.status != 200 {
		t.Fatalf("drop: %d %s", r.status, r.raw)
	}
	db.Close()
	if r := call(t, ts, "GET", "/readyz", "", ""); r.status != 503 {
		t.Fatalf("readyz after close: %d", r.status)
	}
}

// A search answer carries each hit's raw cosine beside its score, and
// min_score drops the hits scoring below it. With the plain method the
// score is the cosine: a 1, b 0.6, c 0.
func TestSearchMinScoreAndCosine(t *testing.T) {
	ts, _ := newTestServer(t)
	call(t, ts, "POST", "/v1/collections/facts", admin, `{"dim":3,"method":"plain"}`)
	put := `{"memories":[{"id":"a","text":"a","vector":[1,0,0]},{"id":"b","text":"b","vector":[0.6,0.8,0]},{"id":"c","text":"c","vector":[0,0,1]}]}`
	if r := call(t, ts, "POST", "/v1/collections/facts/memories", admin, put); r.status != 200 {
		t.Fatalf("put: %d %s", r.status, r.raw)
	}
	search := func(body string) []map[string]any {
		t.Helper()
		r := call(t, ts, "POST", "/v1/collections/facts/search", reader, body)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", body, r.status, r.raw)
		}
		var hits []map[string]any
		for _, h := range r.body["hits"].([]any) {
			hits = append(hits, h.(map[string]any))
		}
		return hits
	}
	hits := search(`{"vector":[1,0,0],"k":3}`)
	want := map[string]float64{"a": 1, "b": 0.6, "c": 0}
	if len(hits) != 3 {
		t.Fatalf("hits %v", hits)
	}
	for _, h := range hits {
		id, _ := h["id"].(string)
		cos, ok := h["cosine"].(float64)
		if !ok || math.Abs(cos-want[id]) > 1e-6 || math.Abs(h["score"].(float64)-want[id]) > 1e-6 {
			t.Errorf("hit %v: want cosine and score %v", h, want[id])
		}
	}
	for body, n := range map[string]int{
		`{"vector":[1,0,0],"k":3,"min_score":0.5}`:                  2,
		`{"vector":[1,0,0],"k":3,"min_score":0.7,"explain":true}`:   1,
		`{"vector":[1,0,0],"k":3,"min_score":-1}`:                   3,
		`{"vector":[1,0,0],"k":3,"min_score":2}`:                    0,
		`{"vector":[1,0,0],"k":3,"min_score":0.5,"method":"plain"}`: 2,
	} {
		if got := search(body); len(got) != n || (n > 0 && got[0]["id"] != "a") {
			t.Errorf("%s: %v, want the first %d", body, got, n)
		}
	}
	// The assembled context applies it too.
	if r := call(t, ts, "POST", "/v1/collections/facts/context", reader, `{"vector":[1,0,0],"k":3,"min_score":0.7,"text_only":true}`); r.status != 200 ||
		!strings.Contains(r.raw, "[a]") || strings.Contains(r.raw, "[b]") {
		t.Errorf("context with min_score: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "POST", "/v1/collections/facts/search", reader, `{"vector":[1,0,0],"min_score":"high"}`); r.status != 400 || code(r) != "invalid_argument" {
		t.Errorf("a string min_score: %d %s", r.status, r.raw)
	}
}

// The request decoder never panics and never accepts trailing data.
func FuzzDecodeMemories(f *testing.F) {
	f.Add([]byte(`{"memories":[{"id":"a","vector":[1,0,0],"valid_from":"2025-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"memories":[{"id":"a","kind":"event"}]} x`))
	f.Fuzz(func(t *testing.T, b []byte) {
		req := httptest.NewRequest("POST", "/", bytes.NewReader(b))
		var v api.PutRequest
		if err := decode(req, &v); err != nil {
			if status, _ := errorStatus(err); status != 400 && status != 413 {
				t.Fatalf("decode error with status %d: %v", status, err)
			}
		}
	})
}

// Each token has its own request rate limit.
func TestRateLimit(t *testing.T) {
	db, err := tidemark.Open(t.TempDir(), &tidemark.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(db, Config{Tokens: []Token{
		{Token: admin, Name: "admin", Collections: []string{"*"}, Write: true, Rate: 2},
		{Token: reader, Name: "reader", Collections: []string{"*"}},
	}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	limited := 0
	for range 10 {
		if r := call(t, ts, "GET", "/v1/collections", admin, ""); r.status == 429 && code(r) == "rate_limited" {
			limited++
		}
	}
	if limited < 5 {
		t.Fatalf("%d of 10 quick requests limited at 2/s (burst 4)", limited)
	}
	if r := call(t, ts, "GET", "/v1/collections", reader, ""); r.status != 200 {
		t.Fatalf("another token is limited too: %d", r.status)
	}
}

// Rescore, context assembly and document updates over HTTP.
func TestRescoreContextDocuments(t *testing.T) {
	ts, _ := newTestServer(t)
	call(t, ts, "POST", "/v1/collections/docs", admin, `{"dim":64,"embedder":"hashing"}`)
	r := call(t, ts, "PUT", "/v1/collections/docs/documents/policy", admin, `{"text":"Refunds within 30 days.\n\nShipping is free above 50 euros.","chunk_bytes":40}`)
	if r.status != 200 || !strings.Contains(r.raw, `"version":1`) {
		t.Fatalf("put document: %d %s", r.status, r.raw)
	}
	r = call(t, ts, "PUT", "/v1/collections/docs/documents/policy", admin, `{"text":"Refunds within 30 days.\n\nShipping is free above 80 euros.","chunk_bytes":40}`)
	if r.status != 200 || !strings.Contains(r.raw, `"reembedded":1`) {
		t.Fatalf("update document: %d %s", r.status, r.raw)
	}
	r = call(t, ts, "POST", "/v1/collections/docs/context", reader+"x", `{"text":"shipping"}`)
	if r.status != 401 {
		t.Fatalf("context with a bad token: %d", r.status)
	}
	r = call(t, ts, "POST", "/v1/collections/docs/context", admin, `{"text":"free shipping euros","k":3}`)
	if r.status != 200 || !strings.Contains(r.raw, "80 euros") || strings.Contains(r.raw, "50 euros") {
		t.Fatalf("context: %d %.400s", r.status, r.raw)
	}
	r = call(t, ts, "POST", "/v1/rescore", reader, `{"now":"2026-03-01T00:00:00Z","candidates":[
		{"memory":{"id":"promo","kind":"event","valid_from":"2025-11-01T00:00:00Z","valid_to":"2025-12-01T00:00:00Z"},"sim":0.9},
		{"memory":{"id":"policy","source":"policy"},"sim":0.7}]}`)
	if r.status != 200 || !strings.Contains(r.raw, `"hits":[{"id":"policy"`) || !strings.Contains(r.raw, `"reason":"HARD_EXPIRED_EVENT"`) {
		t.Fatalf("rescore: %d %s", r.status, r.raw)
	}
}

// The OpenAPI document describes exactly the routes the server has, and
// every documented operation answers (not 404 or 405) on the real handler.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	ts, _, srv := newTestServerS(t)
	r := call(t, ts, "GET", "/v1/openapi.json", "", "")
	if r.status != 200 {
		t.Fatalf("openapi: %d", r.status)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal([]byte(r.raw), &doc); err != nil || doc.OpenAPI == "" {
		t.Fatalf("openapi document: %v", err)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	routed := map[string]bool{}
	for _, p := range srv.Routes() {
		if strings.Contains(p, " /v1/") {
			routed[p] = true
		}
	}
	for p := range routed {
		if !documented[p] {
			t.Errorf("route %s is not in the OpenAPI document", p)
		}
	}
	for p := range documented {
		if !routed[p] {
			t.Errorf("the OpenAPI document names %s, which the server does not route", p)
		}
		method, path, _ := strings.Cut(p, " ")
		path = strings.NewReplacer("{c}", "facts", "{id}", "x", "{doc}", "d").Replace(path)
		if res := call(t, ts, method, path, admin, "{}"); res.status == 404 && code(res) == "" || res.status == 405 {
			t.Errorf("%s answers %d", p, res.status)
		}
	}
}
