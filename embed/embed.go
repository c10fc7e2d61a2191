// Package embed turns text into vectors.
//
// An [Embedder] maps text to a fixed-dimension float32 vector. The embedders
// in this package are deterministic and need no network: they exist so that
// benchmarks and published numbers are reproducible bit for bit. A client
// for external embedding endpoints belongs beside them and must say so in
// its name; nothing here calls the network.
package embed

import "context"

// Embedder maps text to vectors of a fixed dimension.
//
// Implementations must be safe for concurrent use once configured, and must
// return vectors of length Dim() for every input.
type Embedder interface {
	// Dim is the length of every vector Embed returns.
	Dim() int
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
