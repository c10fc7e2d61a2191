// Package textout is a writer for reports printed line by line: it keeps
// the first error and skips every write after it, so a report's printing
// code stays a list of Printf calls with one error check at the end.
package textout

import (
	"fmt"
	"io"
)

// Writer prints to W until a write fails; Err is that failure.
type Writer struct {
	W   io.Writer
	Err error
}

// Printf formats to W unless an earlier write failed.
func (t *Writer) Printf(format string, args ...any) {
	if t.Err == nil {
		_, t.Err = fmt.Fprintf(t.W, format, args...)
	}
}
