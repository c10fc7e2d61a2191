package embed

import "context"

// Embedder maps text to vectors of a fixed dimension.
//
// Implementations must be safe for concurrent use once configured, and must
// return vectors of length Dim() for every input. An embedder that learns
// its dimension from a model ([Remote] without RemoteOptions.Dimensions)
// reports 0 until its first successful Embed.
type Embedder interface {
	// Dim is the length of every vector Embed returns (0 while unknown).
	Dim() int
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
