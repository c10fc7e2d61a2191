// Package hugepage asks the kernel to back large, randomly accessed arrays
// (an HNSW index's vectors and neighbour lists) with transparent huge
// pages: a graph search touches a few thousand scattered cache lines per
// query, and with 4 KiB pages nearly every one of them is also a TLB miss.
// On Linux with transparent huge pages in "madvise" mode nothing is backed
// by huge pages unless asked (Go's runtime does not ask for its heap).
//
// The advice is only a hint: an error or an unsupported system changes
// nothing but speed.
package hugepage

// Size is the huge page size the allocations align to (2 MiB on x86-64
// and most arm64 kernels).
const Size = 2 << 20

// MinBytes is the smallest array worth advising: below a few huge pages
// the TLB covers it anyway.
const MinBytes = 4 * Size
