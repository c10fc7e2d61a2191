package embed

import "errors"

// Errors returned by the embedders and caches of this package, wrapped with
// detail; test with errors.Is.
var (
	// ErrEmptyVocabulary is returned when an embedder that needs a fitted
	// vocabulary is used before Fit, or was fitted on no tokens.
	ErrEmptyVocabulary = errors.New("embed: empty vocabulary (call Fit on a non-empty corpus first)")
	// ErrBadDimension is returned for a dimension that is not positive.
	ErrBadDimension = errors.New("embed: dimension must be positive")
	// ErrOptions: invalid HashingOptions or RemoteOptions (other than a bad
	// HashingOptions.Dim, which is ErrBadDimension). The message names the
	// field.
	ErrOptions = errors.New("embed: invalid options")
	// ErrRemote: an embedding endpoint could not be reached, timed out, or
	// answered with an error status (after the retries that status allows).
	// The error is a *RemoteError naming the endpoint.
	ErrRemote = errors.New("embed: embedding endpoint failed")
	// ErrBadAnswer: an embedding endpoint answered 2xx with a body that is
	// not a valid answer — bad or oversized JSON, the wrong number of
	// vectors, a missing, repeated or out-of-range index, a non-finite
	// value, or vectors of the wrong length (which is also ErrDimension).
	// Such answers are not retried.
	ErrBadAnswer = errors.New("embed: bad answer from embedding endpoint")
	// ErrDimension: a vector whose length is not the embedder's dimension
	// (RemoteOptions.Dimensions, or the one learnt from the first answer).
	ErrDimension = errors.New("embed: dimension mismatch")
	// ErrCorrupt: a cache file that is not an embedding cache (wrong magic
	// or version). A torn or damaged tail is not an error: it is cut off.
	ErrCorrupt = errors.New("embed: not an embedding cache file")
	// ErrClosed: a FileCache used after Close.
	ErrClosed = errors.New("embed: cache is closed")
)
