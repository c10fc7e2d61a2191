//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockName is the file in a log directory that an open WAL holds an
// exclusive flock(2) on. The kernel releases it when the process dies.
const lockName = "LOCK"

// lockDir takes the directory lock.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: lock %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
		}
		return nil, fmt.Errorf("store: lock %s: %w", dir, err)
	}
	return f, nil
}

// unlockDir releases the directory lock.
func unlockDir(f *os.File) error {
	return f.Close()
}
