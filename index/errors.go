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

// Errors returned by the typed-link graph.
var (
	// ErrLinkUnknown: a key that is not a node of the link graph.
	ErrLinkUnknown = errors.New("index: unknown link node")
	// ErrLinkInvalid: a malformed argument — an invalid link type, a
	// self-loop, a non-finite similarity or time, a temporal link that does
	// not point back in time, or invalid LinkOptions.
	ErrLinkInvalid = errors.New("index: invalid link input")
	// ErrLinkExists: AddNode of a key that is present with a different time.
	ErrLinkExists = errors.New("index: link node exists with a different time")
	// ErrLinkOrphan: an archived node that no visible node reaches by
	// version links (All-Mem App. B.4, Eq. 24).
	ErrLinkOrphan = errors.New("index: orphaned archived node")
	// ErrLinkCorrupt: a link graph encoding that is truncated, damaged or
	// not a link graph.
	ErrLinkCorrupt = errors.New("index: corrupt link graph encoding")
)
