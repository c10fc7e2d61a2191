// Package embed turns text into vectors.
//
// An [Embedder] maps text to a fixed-dimension float32 vector. There are two
// families, kept apart by name:
//
//   - Offline, deterministic embedders: [Hashing] (signed feature hashing of
//     words, word bigrams and, with [SubwordOptions], character n-grams) and
//     [BagOfWords] (the temporal-RAG article's demo). They need no network
//     and no model files, and give bit-for-bit identical vectors on every
//     platform, so that benchmarks and published numbers are reproducible.
//   - [Remote], a client that calls an embedding model over the network:
//     any server speaking the OpenAI embeddings API (OpenAI, Ollama's /v1,
//     vLLM, Hugging Face TEI, llama.cpp's server, LM Studio) or Ollama's
//     native /api/embed. Only a Remote ever opens a connection; nothing else
//     in this package does, and no default of this package creates one.
//
// # Basics
//
//	h, err := embed.NewHashing(nil)                         // offline
//	vecs, err := h.Embed(ctx, texts)
//
//	r, err := embed.NewRemote(&embed.RemoteOptions{          // network
//		BaseURL: "http://localhost:11434/v1",
//		Model:   "nomic-embed-text",
//	})
//	vecs, err = r.Embed(ctx, texts) // every vector, or an error
//
// A Remote sends texts in batches, a bounded number of requests at a time,
// retries what is worth retrying (429, 5xx, transport errors) with capped
// exponential backoff, validates every answer, and remembers vectors in a
// [Cache] keyed by model and text so that a replay does not pay twice;
// [OpenFileCache] keeps them across restarts.
//
// # Caveats
//
// Vectors from different embedders — a different model, a different
// HashingOptions, a different Seed — are not comparable; store what made a
// vector beside it. A Remote's bearer key is read from the environment
// variable named by RemoteOptions.APIKeyEnv at each request and is never
// stored, logged, cached or included in an error. The default cache holds
// up to 100 000 vectors in memory: at 1536 dimensions that is about 600 MB,
// so size RemoteOptions.Cache for the model in use.
package embed
