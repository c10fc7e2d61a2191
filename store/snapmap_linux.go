package store

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps size bytes of f read-only and shared (the page cache's own
// pages), and asks the kernel to read them ahead.
func mapFile(f *os.File, size int64) ([]byte, error) {
	if int64(int(size)) != size {
		return nil, fmt.Errorf("%d bytes do not fit this platform's address space", size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mmap: %w", err)
	}
	_ = syscall.Madvise(data, syscall.MADV_WILLNEED) // a hint: its failure changes nothing but speed
	return data, nil
}

func unmapFile(data []byte) error { return syscall.Munmap(data) }
