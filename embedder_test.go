package tidemark

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidemark/tidemark/embed"
)

// fakeEmbedder is an in-process embedding server speaking the OpenAI API
// (/v1/embeddings) and Ollama's (/api/embed): it embeds with the offline
// hashing embedder at dim, counts requests and texts, checks the bearer
// key, and can be told to fail.
type fakeEmbedder struct {
	srv            *httptest.Server
	requests, txts atomic.Int64
	key            string
	dim            int
	status         atomic.Int64 // answer this status instead (0: answer)
	wrongDim       atomic.Bool
	noise          atomic.Int64 // adds this many millionths to every answer
}

func newFakeEmbedder(t *testing.T, dim int, key string) *fakeEmbedder {
	f := &fakeEmbedder{key: key, dim: dim}
	h, err := embed.NewHashing(&embed.HashingOptions{Dim: dim})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if st := f.status.Load(); st != 0 {
			http.Error(w, "the model is loading", int(st))
			return
		}
		if f.key != "" && r.Header.Get("Authorization") != "Bearer "+f.key {
			http.Error(w, "bad key", http.StatusUnauthorized)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		f.txts.Add(int64(len(req.Input)))
		vs, _ := h.Embed(r.Context(), req.Input)
		if n := f.noise.Add(0); n != 0 {
			for i := range vs {
				vs[i][0] += float32(n) * 1e-6
			}
		}
		if f.wrongDim.Load() {
			for i := range vs {
				vs[i] = vs[i][:dim-1]
			}
		}
		switch r.URL.Path {
		case "/v1/embeddings":
			type item struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			}
			var data []item
			for i, v := range vs {
				data = append(data, item{i, v})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
		case "/api/embed":
			_ = json.NewEncoder(w).Encode(map[string]any{"embeddings": vs})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// A collection pointed at an OpenAI-compatible server: batched writes,
// text search, the configuration persisted without the key, the cache in
// the data directory, and a failing or wrong server refusing the write
// with nothing stored.
func TestRemoteEmbedder(t *testing.T) {
	ctx := context.Background()
	const key = "sk-test-0123456789abcdef"
	t.Setenv("TIDEMARK_TEST_EMBED_KEY", key)
	f := newFakeEmbedder(t, 64, key)
	dir := t.TempDir()
	db := openTest(t, dir, nil)
	opts := &CollectionOptions{Dim: 64, Embedder: "openai",
		Remote: RemoteEmbedder{BaseURL: f.srv.URL + "/v1", Model: "nomic-embed-text", APIKeyEnv: "TIDEMARK_TEST_EMBED_KEY"}}
	c, err := db.CreateCollection(ctx, "docs", opts)
	if err != nil {
		t.Fatal(err)
	}
	ms := []Memory{
		{ID: "pg", Text: "The primary database is PostgreSQL 16."},
		{ID: "cache", Text: "Sessions are cached in Redis for 30 minutes."},
		{ID: "queue", Text: "Background jobs run on the default queue."},
	}
	if _, err := c.Put(ctx, ms); err != nil {
		t.Fatal(err)
	}
	if n := f.requests.Load(); n != 1 {
		t.Fatalf("%d requests for one batch, want 1", n)
	}
	if got := hitIDs(t, c, &SearchRequest{Text: "Which database is the primary?", K: 1}); len(got) != 1 || got[0] != "pg" {
		t.Fatalf("search: %v", got)
	}
	// The same texts again (new ids): the cache answers.
	before := f.txts.Load()
	again := []Memory{{ID: "pg-copy", Text: ms[0].Text, Kind: 1}}
	if _, err := c.Put(ctx, again); err != nil {
		t.Fatal(err)
	}
	if f.txts.Load() != before {
		t.Fatalf("a cached text was embedded again")
	}

	// Down: the write is refused, names the endpoint, not the key, and
	// stores nothing.
	stored, _ := c.Len()
	f.status.Store(http.StatusServiceUnavailable)
	_, err = c.Put(ctx, []Memory{{ID: "new", Text: "A text the server cannot embed now."}})
	if !errors.Is(err, ErrEmbedder) || !strings.Contains(err.Error(), f.srv.URL+"/v1/embeddings") || strings.Contains(err.Error(), key) {
		t.Fatalf("down: %v", err)
	}
	if now, _ := c.Len(); now != stored {
		t.Fatalf("a refused write stored %d memories", now-stored)
	}
	if _, err := c.Get(ctx, "new"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused memory is there: %v", err)
	}
	// A wrong dimension from the model: ErrEmbedder (the collection's
	// configuration, not the caller's input), nothing stored.
	f.status.Store(0)
	f.wrongDim.Store(true)
	if _, err := c.Put(ctx, []Memory{{ID: "new", Text: "Another text."}}); !errors.Is(err, ErrEmbedder) {
		t.Fatalf("wrong dimension: %v", err)
	}
	f.wrongDim.Store(false)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopened: the configuration is the collection's, the key is in no
	// file, and the cache file spares the server.
	db = openTest(t, dir, nil)
	defer db.Close()
	c, _ = db.Collection("docs")
	if got := c.Options().Remote; got != opts.Remote || c.Options().Embedder != "openai" {
		t.Fatalf("options after reopen: %+v", c.Options())
	}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), key) {
			t.Errorf("%s holds the API key", path)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(dir, embedCacheFile)); err != nil {
		t.Fatalf("no embedding cache: %v", err)
	}
	before = f.txts.Load()
	if _, err := c.Put(ctx, []Memory{{ID: "cache-copy", Text: ms[1].Text, Kind: 1}}); err != nil {
		t.Fatal(err)
	}
	if f.txts.Load() != before {
		t.Fatal("the file cache did not answer after a reopen")
	}
}

// Ollama's native API, and options that are refused.
func TestRemoteEmbedderOllamaAndOptions(t *testing.T) {
	ctx := context.Background()
	f := newFakeEmbedder(t, 32, "")
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c, err := db.CreateCollection(ctx, "o", &CollectionOptions{Dim: 32, Embedder: "ollama",
		Remote: RemoteEmbedder{BaseURL: f.srv.URL, Model: "nomic-embed-text"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, []Memory{{ID: "a", Text: "The office opens at 9."}}); err != nil {
		t.Fatal(err)
	}
	if got := hitIDs(t, c, &SearchRequest{Text: "When does the office open?", K: 1}); len(got) != 1 {
		t.Fatalf("search: %v", got)
	}
	for _, o := range []CollectionOptions{
		{Dim: 4, Embedder: "openai"}, // no URL or model
		{Dim: 4, Embedder: "openai", Remote: RemoteEmbedder{BaseURL: "ftp://x", Model: "m"}},
		{Dim: 4, Embedder: "openai", Remote: RemoteEmbedder{BaseURL: "http://u:p@x", Model: "m"}},
		{Dim: 4, Embedder: "openai", Remote: RemoteEmbedder{BaseURL: "http://x", Model: "m", APIKeyEnv: "A=B"}},
		{Dim: 4, Embedder: "hashing", Remote: RemoteEmbedder{BaseURL: "http://x", Model: "m"}},
		{Dim: 4, Embedder: "word2vec"},
	} {
		if _, err := db.CreateCollection(ctx, "bad", &o); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// The offline default embeds words and their variants close together; a
// collection created before sub-words (format 1) keeps its word-only
// embedder, so its stored vectors and its queries still agree.
func TestHashingSubwords(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "sub", &CollectionOptions{Dim: 512, Embedder: "hashing"})
	w, _ := db.CreateCollection(ctx, "words", &CollectionOptions{Dim: 512, Embedder: "hashing-words"})
	for _, coll := range []*Collection{c, w} {
		if _, err := coll.Put(ctx, []Memory{{ID: "pg", Text: "We run PostgreSQL in production."}, {ID: "other", Text: "Lunch is served at noon."}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := c.Search(ctx, &SearchRequest{Text: "postgres", K: 2})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].ID != "pg" || res.Hits[0].Cosine < 0.1 {
		t.Fatalf("sub-words: %+v %v", res.Hits, err)
	}
	res, err = w.Search(ctx, &SearchRequest{Text: "postgres", K: 2})
	if err != nil || len(res.Hits) > 0 && res.Hits[0].Cosine > 0.05 {
		t.Fatalf("words alone should not match postgres to PostgreSQL: %+v %v", res.Hits, err)
	}
}

// A retry of a text-only write is recognised by its text, although a
// remote model need not return the same bits twice and the cache may be
// gone.
func TestRemoteEmbedderRetry(t *testing.T) {
	ctx := context.Background()
	f := newFakeEmbedder(t, 16, "")
	dir := t.TempDir()
	opts := &Options{EmbedCacheEntries: -1}
	db := openTest(t, dir, opts)
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 16, Embedder: "openai",
		Remote: RemoteEmbedder{BaseURL: f.srv.URL + "/v1", Model: "m"}})
	m := Memory{ID: "a", Text: "The office opens at 9."}
	if _, err := c.Put(ctx, []Memory{m}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	f.noise.Store(1)
	db = openTest(t, dir, opts)
	defer db.Close()
	c, _ = db.Collection("c")
	res, err := c.Put(ctx, []Memory{m})
	if err != nil || res[0].Outcome != Unchanged {
		t.Fatalf("retry: %+v %v", res, err)
	}
	if res, err := c.Put(ctx, []Memory{{ID: "a", Text: "The office opens at 10."}}); err != nil || res[0].Outcome != Stored {
		t.Fatalf("other text under the same id (its next version): %+v %v", res, err)
	}
}
