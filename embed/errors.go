package embed

import "errors"

// Errors returned by the embedders of this package, wrapped with
// detail; test with errors.Is.
var (
	// ErrEmptyVocabulary is returned when an embedder that needs a fitted
	// vocabulary is used before Fit, or was fitted on no tokens.
	ErrEmptyVocabulary = errors.New("embed: empty vocabulary (call Fit on a non-empty corpus first)")
	// ErrBadDimension is returned for a dimension that is not positive.
	ErrBadDimension = errors.New("embed: dimension must be positive")
	// ErrOptions: invalid HashingOptions (other than a bad
	// HashingOptions.Dim, which is ErrBadDimension). The message names the
	// field.
	ErrOptions = errors.New("embed: invalid options")
)
