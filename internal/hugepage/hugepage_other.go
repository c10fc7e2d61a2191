//go:build !linux

package hugepage

import "unsafe"

// Float32s returns a zeroed slice of n float32s aligned to 64 bytes (no
// huge-page advice on this system).
func Float32s(n int) []float32 {
	backing := make([]float32, n+16)
	off := 0
	if r := uintptr(unsafe.Pointer(&backing[0])) % 64; r != 0 {
		off = int((64 - r) / 4)
	}
	return backing[off : off+n : off+n]
}

// Uint32s returns a zeroed slice of n uint32s.
func Uint32s(n int) []uint32 { return make([]uint32, n) }
