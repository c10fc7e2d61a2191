package temporal

import "errors"

// ErrInvalid is wrapped by every validation error of this package
// (parameters, candidates, drift-detector options and observations); test
// with errors.Is.
var ErrInvalid = errors.New("temporal: invalid input")
