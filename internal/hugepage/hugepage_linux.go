//go:build linux

package hugepage

import (
	"syscall"
	"unsafe"
)

// Float32s returns a zeroed slice of n float32s whose backing array is
// aligned to 64 bytes and, when it is at least MinBytes long, to Size and
// advised to the kernel as huge-page material (MADV_HUGEPAGE).
func Float32s(n int) []float32 { return alloc[float32](n, 64) }

// Uint32s is Float32s for uint32s.
func Uint32s(n int) []uint32 { return alloc[uint32](n, 4) }

// alloc returns n zeroed 4-byte elements aligned to align bytes, or to
// Size (and advised) when they take at least MinBytes.
func alloc[T float32 | uint32](n int, align uintptr) []T {
	bytes := 4 * uintptr(n)
	big := bytes >= MinBytes
	if big {
		align = Size
	}
	backing := make([]T, n+int(align/4))
	off := 0
	if r := uintptr(unsafe.Pointer(&backing[0])) % align; r != 0 {
		off = int((align - r) / 4)
	}
	s := backing[off : off+n : off+n]
	if big {
		// Whole huge pages only; the advice is a hint, its error ignored.
		_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), bytes-bytes%Size), 14) // MADV_HUGEPAGE
	}
	return s
}
