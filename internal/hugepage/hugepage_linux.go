//go:build linux

package hugepage

import (
	"syscall"
	"unsafe"
)

// Float32s returns a zeroed slice of n float32s whose backing array is
// aligned to 64 bytes and, when it is at least MinBytes long, to Size and
// advised to the kernel as huge-page material (MADV_HUGEPAGE).
func Float32s(n int) []float32 {
	bytes := 4 * n
	if bytes < MinBytes {
		return aligned64(n)
	}
	backing := make([]float32, n+Size/4)
	off := 0
	if r := uintptr(unsafe.Pointer(&backing[0])) % Size; r != 0 {
		off = int((Size - r) / 4)
	}
	s := backing[off : off+n : off+n]
	advise(unsafe.Pointer(&s[0]), uintptr(bytes))
	return s
}

// Uint32s is Float32s for uint32s.
func Uint32s(n int) []uint32 {
	bytes := 4 * n
	if bytes < MinBytes {
		return make([]uint32, n)
	}
	backing := make([]uint32, n+Size/4)
	off := 0
	if r := uintptr(unsafe.Pointer(&backing[0])) % Size; r != 0 {
		off = int((Size - r) / 4)
	}
	s := backing[off : off+n : off+n]
	advise(unsafe.Pointer(&s[0]), uintptr(bytes))
	return s
}

func advise(p unsafe.Pointer, n uintptr) {
	n -= n % Size // whole huge pages only
	if n == 0 {
		return
	}
	_ = syscall.Madvise(unsafe.Slice((*byte)(p), n), 14) // MADV_HUGEPAGE
}

func aligned64(n int) []float32 {
	backing := make([]float32, n+16)
	off := 0
	if r := uintptr(unsafe.Pointer(&backing[0])) % 64; r != 0 {
		off = int((64 - r) / 4)
	}
	return backing[off : off+n : off+n]
}
