package client

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http/httptest"
	"testing"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/api"
	"github.com/tidemark/tidemark/server"
)

func TestClientRoundTrip(t *testing.T) {
	ctx := context.Background()
	db, err := tidemark.Open(t.TempDir(), &tidemark.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const tok = "client-test-token-0123"
	s, err := server.New(db, server.Config{Tokens: []server.Token{{Token: tok, Name: "t", Collections: []string{"*"}, Write: true}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	c := New(ts.URL, tok)
	if _, err := c.CreateCollection(ctx, "facts", api.CreateCollection{Dim: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, "facts", []api.Memory{{ID: "v1", Text: "limit 100", Vector: []float32{1, 0, 0}, Subject: "api", Relation: "limit", Object: "100"}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Put(ctx, "facts", []api.Memory{{ID: "v2", Text: "limit 250", Vector: []float32{1, 0.1, 0}, Subject: "api", Relation: "limit", Object: "250"}})
	if err != nil || len(res) != 1 || len(res[0].Superseded) != 1 {
		t.Fatalf("put: %+v %v", res, err)
	}
	hits, err := c.Search(ctx, "facts", api.SearchRequest{Vector: []float32{1, 0, 0}, K: 5, Explain: true})
	if err != nil || len(hits.Hits) != 1 || hits.Hits[0].ID != "v2" || hits.Hits[0].Signals == nil || len(hits.Removed) != 1 {
		t.Fatalf("search: %+v %v", hits, err)
	}
	if cos := hits.Hits[0].Cosine; math.Abs(cos-1/math.Sqrt(1.01)) > 1e-6 {
		t.Errorf("v2's cosine %v, want 1/√1.01", cos)
	}
	above, err := c.Search(ctx, "facts", api.SearchRequest{Vector: []float32{1, 0, 0}, K: 5, MinScore: new(hits.Hits[0].Score + 0.01)})
	if err != nil || len(above.Hits) != 0 {
		t.Fatalf("search above every score: %+v %v", above, err)
	}
	h, err := c.History(ctx, "facts", "v2")
	if err != nil || len(h) != 2 || h[0].ID != "v1" {
		t.Fatalf("history: %+v %v", h, err)
	}
	_, err = c.Get(ctx, "facts", "nope")
	var e *Error
	if !errors.As(err, &e) || e.Status != 404 || e.Code != "not_found" {
		t.Fatalf("get unknown: %v", err)
	}
	if err := New(ts.URL, "wrong-token-0000000000").Feedback(ctx, "facts", "v2", true); !errors.As(err, &e) || e.Code != "unauthenticated" {
		t.Fatalf("bad token: %v", err)
	}
}
