package server

import "github.com/tidemark/tidemark/api"

// The wire types moved to package api; these names stay for existing
// callers.
type (
	// MemoryJSON is api.Memory.
	//
	// Deprecated: use api.Memory.
	MemoryJSON = api.Memory
	// CollectionJSON is api.Collection.
	//
	// Deprecated: use api.Collection.
	CollectionJSON = api.Collection
	// CreateCollectionJSON is api.CreateCollection.
	//
	// Deprecated: use api.CreateCollection.
	CreateCollectionJSON = api.CreateCollection
	// RemoteEmbedderJSON is api.RemoteEmbedder.
	//
	// Deprecated: use api.RemoteEmbedder.
	RemoteEmbedderJSON = api.RemoteEmbedder
	// SearchJSON is api.SearchRequest.
	//
	// Deprecated: use api.SearchRequest.
	SearchJSON = api.SearchRequest
	// RangeJSON is api.Range.
	//
	// Deprecated: use api.Range.
	RangeJSON = api.Range
	// WeightsJSON is api.Weights.
	//
	// Deprecated: use api.Weights.
	WeightsJSON = api.Weights
	// HitJSON is api.Hit.
	//
	// Deprecated: use api.Hit.
	HitJSON = api.Hit
	// RemovedJSON is api.Removed.
	//
	// Deprecated: use api.Removed.
	RemovedJSON = api.Removed
	// ResultJSON is api.SearchResult.
	//
	// Deprecated: use api.SearchResult.
	ResultJSON = api.SearchResult
)
