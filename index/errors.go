package index

import "errors"

// Errors returned by the HNSW index, wrapped with detail; test with
// errors.Is.
var (
	// ErrDimension: a vector whose length is not the index's dimension.
	ErrDimension = errors.New("index: dimension mismatch")
	// ErrNotFinite: a vector holding NaN or ±Inf.
	ErrNotFinite = errors.New("index: vector is not finite")
	// ErrZeroVector: a vector of norm zero, which has no direction.
	ErrZeroVector = errors.New("index: zero vector")
	// ErrNotUnit: with Options.SharedVectors, a vector Insert would keep
	// that is not of unit length (the index cannot normalise memory it
	// does not own).
	ErrNotUnit = errors.New("index: shared vector is not of unit length")
	// ErrExists: Insert of a key that is already present.
	ErrExists = errors.New("index: key already present")
	// ErrNotFound: Delete of a key that is not present.
	ErrNotFound = errors.New("index: key not found")
	// ErrCorrupt: a saved index that is truncated, damaged or not an index.
	ErrCorrupt = errors.New("index: corrupt index file")
	// ErrFull: the index reached its maximum of 2³²−1 nodes.
	ErrFull = errors.New("index: index is full")
	// ErrOptions: invalid Options or SearchOptions.
	ErrOptions = errors.New("index: invalid options")
)
