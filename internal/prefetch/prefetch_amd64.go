//go:build amd64 && !noasm

package prefetch

import "unsafe"

// Lines issues PREFETCHT0 for n consecutive 64-byte cache lines starting at
// p (n ≤ 8).
//
//go:noescape
func Lines(p unsafe.Pointer, n int)
