//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package store

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockName is the file that marks a log directory in use. On this platform
// it is not locked: the caller must make sure one process opens a log
// directory at a time.
const lockName = "LOCK"

func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: lock %s: %w", dir, err)
	}
	return f, nil
}

func unlockDir(f *os.File) error {
	return f.Close()
}
