package server

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidemark/tidemark"
)

// The plain-text example over HTTP: a text collection, no keys.
// A current query returns only the newer statement, as of 2025-03-01
// only the older one, and history shows the supersession and that the
// key was extracted.
func TestPlainTextSupersessionHTTP(t *testing.T) {
	ts, _ := newTestServer(t)
	if r := call(t, ts, "POST", "/v1/collections/facts", admin, `{"dim":256,"embedder":"hashing"}`); r.status != 201 || r.body["keys"] != "auto" {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	for _, body := range []string{
		`{"memories":[{"id":"limit-100","text":"The API rate limit is 100 requests per minute.","valid_from":"2025-01-01T00:00:00Z"}]}`,
		`{"memories":[{"id":"limit-250","text":"The API rate limit is 250 requests per minute.","valid_from":"2025-06-01T00:00:00Z"}]}`,
	} {
		if r := call(t, ts, "POST", "/v1/collections/facts/memories", admin, body); r.status != 200 {
			t.Fatalf("put: %d %s", r.status, r.raw)
		}
	}
	ids := func(r reply) []string {
		t.Helper()
		if r.status != 200 {
			t.Fatalf("search: %d %s", r.status, r.raw)
		}
		var out []string
		hits, _ := r.body["hits"].([]any)
		for _, h := range hits {
			out = append(out, h.(map[string]any)["id"].(string))
		}
		return out
	}
	for _, q := range []string{"What is the API rate limit?", "Is the rate limit 100 requests per minute?"} {
		now := ids(call(t, ts, "POST", "/v1/collections/facts/search", reader, `{"text":"`+q+`","k":5}`))
		then := ids(call(t, ts, "POST", "/v1/collections/facts/search", reader, `{"text":"`+q+`","k":5,"as_of":"2025-03-01T00:00:00Z"}`))
		if strings.Join(now, ",") != "limit-250" || strings.Join(then, ",") != "limit-100" {
			t.Errorf("%q: now %v, as of 2025-03-01 %v", q, now, then)
		}
	}
	r := call(t, ts, "GET", "/v1/collections/facts/memories/limit-250/history", reader, "")
	if r.status != 200 {
		t.Fatalf("history: %d %s", r.status, r.raw)
	}
	versions, _ := r.body["versions"].([]any)
	if len(versions) != 2 {
		t.Fatalf("history: %s", r.raw)
	}
	old, cur := versions[0].(map[string]any), versions[1].(map[string]any)
	if old["id"] != "limit-100" || old["superseded_by"] != "limit-250" || old["visible"] != false ||
		!strings.HasPrefix(old["key_rule"].(string), "extract/") || !strings.HasPrefix(cur["key_rule"].(string), "extract/") ||
		cur["subject"] != "api rate limit" || cur["object"] != "250" {
		t.Fatalf("history: %s", r.raw)
	}
	// A bad key policy is a clear 400.
	if r := call(t, ts, "POST", "/v1/collections/other", admin, `{"dim":4,"keys":"sometimes"}`); r.status != 400 || !strings.Contains(r.raw, "key policy") {
		t.Fatalf("bad keys: %d %s", r.status, r.raw)
	}
}

// A remote embedder reads the server's environment and sends texts to a
// URL: only an admin token may configure one, only to a listed URL
// prefix, only with a listed key variable.
func TestRemoteEmbedderPolicy(t *testing.T) {
	db, err := tidemark.Open(t.TempDir(), &tidemark.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(db, Config{Tokens: []Token{
		{Token: admin, Name: "admin", Collections: []string{"*"}, Write: true},
		{Token: other, Name: "other", Collections: []string{"theirs"}, Write: true},
	}, Logger: quiet, EmbedderURLs: []string{"http://localhost:11434/"}, EmbedderKeyEnvs: []string{"OPENAI_API_KEY"}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for _, c := range []struct {
		token, body string
		status      int
	}{
		{other, `{"dim":4,"embedder":"openai","remote":{"base_url":"http://localhost:11434/v1","model":"m"}}`, 403},
		{admin, `{"dim":4,"embedder":"openai","remote":{"base_url":"http://attacker.example/v1","model":"m"}}`, 403},
		{admin, `{"dim":4,"embedder":"openai","remote":{"base_url":"http://localhost:11434/v1","model":"m","api_key_env":"HOME"}}`, 403},
		{admin, `{"dim":4,"embedder":"openai","remote":{"base_url":"http://localhost:11434/v1","model":"m","api_key_env":"OPENAI_API_KEY"}}`, 201},
	} {
		r := call(t, ts, "POST", "/v1/collections/theirs", c.token, c.body)
		if r.status != c.status || c.status == 403 && code(r) != "forbidden" {
			t.Errorf("%s: %d %s, want %d", c.body, r.status, r.raw, c.status)
		}
	}
	// The default server lists nothing: no remote embedder over HTTP.
	ts2, _ := newTestServer(t)
	if r := call(t, ts2, "POST", "/v1/collections/x", admin, `{"dim":4,"embedder":"ollama","remote":{"base_url":"http://localhost:11434","model":"m"}}`); r.status != 403 {
		t.Errorf("default policy: %d %s", r.status, r.raw)
	}
}
