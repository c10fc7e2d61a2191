package server

import (
	"testing"
)

// Weights sent without a method replace the weights of the collection's
// method, not of the tidemark preset: on a collection created with
// "article", {"weights": W} ranks and scores as {"method": "article",
// "weights": W} — for a search and for a context block.
func TestSearchWeightsWithoutMethodUseCollectionMethod(t *testing.T) {
	ts, _ := newTestServer(t)
	if r := call(t, ts, "POST", "/v1/collections/art", admin, `{"dim":3,"method":"article"}`); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	if r := call(t, ts, "POST", "/v1/collections/art/memories", admin, `{"memories":[
		{"id":"new","text":"alpha","vector":[1,0,0],"created":"2025-06-01T00:00:00Z","recorded_at":"2025-06-01T00:00:00Z"},
		{"id":"old","text":"beta","vector":[0.8,0.6,0],"created":"2024-01-01T00:00:00Z","recorded_at":"2024-01-01T00:00:00Z","positive":5}]}`); r.status != 200 {
		t.Fatalf("put: %d %s", r.status, r.raw)
	}
	const (
		query   = `"vector":[1,0,0],"now":"2025-07-01T00:00:00Z","explain":true`
		weights = `"weights":{"sim":0.7,"temporal":0.3,"confidence":0,"relational":0}`
	)
	for _, path := range []string{"/v1/collections/art/search", "/v1/collections/art/context"} {
		ask := func(method string) string {
			t.Helper()
			body := `{` + query + `,` + weights
			if method != "" {
				body += `,"method":"` + method + `"`
			}
			r := call(t, ts, "POST", path, admin, body+`}`)
			if r.status != 200 {
				t.Fatalf("%s %s: %d %s", path, body, r.status, r.raw)
			}
			return r.raw
		}
		collections, article, tidemark := ask(""), ask("article"), ask("tidemark")
		if article == tidemark {
			t.Fatalf("%s: the article and tidemark presets answer alike with these weights; the test shows nothing:\n%s", path, article)
		}
		if collections != article {
			t.Errorf("%s: weights without a method:\n%s\nwant the collection's method (article):\n%s", path, collections, article)
		}
	}
}
