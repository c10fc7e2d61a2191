//go:build !linux

package store

import (
	"errors"
	"os"
)

// mapFile reports that snapshots are not mapped here: OpenSnapshot reads
// them.
func mapFile(*os.File, int64) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapFile([]byte) error { return nil }
