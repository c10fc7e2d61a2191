package bench

import (
	"encoding/json"
	"io"
)

// writeIndented writes v as one JSON value indented by two spaces: every
// report's WriteJSON.
func writeIndented(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(v)
}
