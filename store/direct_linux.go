package store

import (
	"os"
	"syscall"
)

// openDirect opens name for writing with O_DIRECT: writes of aligned
// blocks from aligned memory go to the device without the page cache.
// It fails where the file system does not allow it (tmpfs: EINVAL).
func openDirect(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_WRONLY|syscall.O_DIRECT, 0)
}
