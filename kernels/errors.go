package kernels

import "errors"

// Errors returned by this package. They are wrapped with the detail of the
// offending input; test for them with errors.Is.
var (
	// ErrDimension: a vector whose length is not the batch's dimension.
	ErrDimension = errors.New("kernels: dimension mismatch")
	// ErrNotFinite: a NaN or infinite value where a finite one is needed.
	ErrNotFinite = errors.New("kernels: value is not finite")
	// ErrZeroVector: a vector of norm zero, which has no direction.
	ErrZeroVector = errors.New("kernels: zero vector")
	// ErrInvalid: any other malformed input (params, metadata, lengths).
	ErrInvalid = errors.New("kernels: invalid input")
)
