package driftsim

import "errors"

// ErrInvalidConfig is wrapped by every error [Config.Validate] and [Run]
// return for a bad configuration; the message names the field. Test with
// errors.Is.
var ErrInvalidConfig = errors.New("driftsim: invalid config")
