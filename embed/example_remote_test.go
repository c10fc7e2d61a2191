package embed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	"github.com/tidemark/tidemark/embed"
)

func ExampleNewRemote() {
	// A stand-in for an embedding server speaking the OpenAI API, such as
	// Ollama at http://localhost:11434/v1: its "model" embeds a text as
	// (length, 1, 0).
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, s := range req.Input {
			data = append(data, item{i, []float32{float32(len(s)), 1, 0}})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	defer srv.Close()

	r, err := embed.NewRemote(&embed.RemoteOptions{
		BaseURL: srv.URL + "/v1", // e.g. "http://localhost:11434/v1"
		Model:   "nomic-embed-text",
		// APIKeyEnv: "OPENAI_API_KEY", // for a server that wants a key
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	vecs, err := r.Embed(ctx, []string{"hello", "tidemark"})
	if err != nil {
		log.Fatal(err) // e.g. embed: POST http://…/v1/embeddings: 503 Service Unavailable: …
	}
	fmt.Println("dim", r.Dim())
	fmt.Println(vecs[0], vecs[1])

	// Texts embedded before come from the cache: no request.
	if _, err := r.Embed(ctx, []string{"tidemark", "hello"}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("requests", requests.Load())
	// Output:
	// dim 3
	// [5 1 0] [8 1 0]
	// requests 1
}
