//go:build !amd64 || noasm

package prefetch

import "unsafe"

// Lines is a no-op on this platform or under the noasm tag: prefetching is
// only ever a hint.
func Lines(p unsafe.Pointer, n int) {}

// Rows is a no-op on this platform or under the noasm tag.
func Rows(base unsafe.Pointer, stride uintptr, ids []uint32, lines int) {}
