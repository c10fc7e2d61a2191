package client

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http/httptest"
	"strings"
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

	// The rest of the API, each route once.
	if fh, err := c.FactHistory(ctx, "facts", "api", "limit"); err != nil || len(fh) != 2 {
		t.Fatalf("fact history: %+v %v", fh, err)
	}
	if cx, err := c.Context(ctx, "facts", api.ContextRequest{SearchRequest: api.SearchRequest{Vector: []float32{1, 0, 0}}}); err != nil ||
		len(cx.Context.Documents) != 1 || cx.Context.Documents[0].ID != "v2" || !strings.Contains(cx.Text, "limit 250") {
		t.Fatalf("context: %+v %v", cx, err)
	}
	if _, err := c.CreateCollection(ctx, "docs", api.CreateCollection{Dim: 64, Embedder: "hashing"}); err != nil {
		t.Fatal(err)
	}
	if rep, err := c.PutDocument(ctx, "docs", "policy", api.DocumentRequest{Text: "Refunds within 30 days.\n\nShipping is free above 50 euros.", ChunkBytes: 40}); err != nil || rep.Chunks != 2 || rep.Version != 1 {
		t.Fatalf("put document: %+v %v", rep, err)
	}
	sim := 0.9
	if rr, err := c.Rescore(ctx, api.RescoreRequest{Candidates: []api.RescoreCandidate{{Memory: api.Memory{ID: "x"}, Sim: &sim}}}); err != nil || len(rr.Hits) != 1 {
		t.Fatalf("rescore: %+v %v", rr, err)
	}
	if _, err := c.Consolidate(ctx, "facts"); err != nil {
		t.Fatal(err)
	}
	if lc, err := c.LastConsolidation(ctx, "facts"); err != nil || lc.Error != "" {
		t.Fatalf("last consolidation: %+v %v", lc, err)
	}
	if _, err := c.Retract(ctx, "facts", "v2"); err != nil {
		t.Fatal(err)
	}
	if log, err := c.Audit(ctx, "facts", 0, 1000); err != nil || len(log.Audit) == 0 || log.Audit[len(log.Audit)-1].Rule != api.RuleRetract {
		t.Fatalf("audit: %+v %v", log, err)
	}
	if n, err := c.Count(ctx, "facts", api.ListQuery{All: true}); err != nil || n != 2 {
		t.Fatalf("count: %d %v", n, err)
	}
	if err := c.DropCollection(ctx, "docs"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Collection(ctx, "docs"); !errors.As(err, &e) || e.Code != "not_found" {
		t.Fatalf("a dropped collection: %v", err)
	}
}
