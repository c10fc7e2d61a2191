//go:build !linux

package store

import (
	"errors"
	"os"
)

// openDirect reports that direct I/O is not used here: snapshots are
// written through the page cache.
func openDirect(string) (*os.File, error) {
	return nil, errors.New("store: direct I/O is used on Linux only")
}
