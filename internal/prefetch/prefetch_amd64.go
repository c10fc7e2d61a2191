//go:build amd64 && !noasm

package prefetch

import "unsafe"

// Lines issues PREFETCHT0 for n consecutive 64-byte cache lines starting at
// p.
//
//go:noescape
func Lines(p unsafe.Pointer, n int)

// Rows issues PREFETCHT0 for the first lines 64-byte cache lines of each
// row base + ids[i]·stride bytes, in one call: a graph search prefetches all
// of a node's neighbours at once.
//
//go:noescape
func Rows(base unsafe.Pointer, stride uintptr, ids []uint32, lines int)
