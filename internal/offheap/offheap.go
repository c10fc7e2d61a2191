// Package offheap keeps the large arrays of a vector memory — the unit
// vectors, the int8 codes, the layer-0 neighbour lists, and every
// per-memory record without Go pointers (the rows' numbers, the index's
// keys, levels and vector references, the id table, the link graph's
// nodes) — outside the Go heap, in an address range reserved up front and
// committed as it fills.
//
// Three things follow, and they are why the package exists:
//
//   - Growing never moves what is already there: a slice taken before a
//     Grow still reads the same memory. An HNSW index can therefore keep a
//     pointer to a vector in a column store instead of a copy of it, so a
//     vector lives once in memory (the issue "one copy of each vector
//     shared by the index and the column store"), and a growth copies
//     nothing, so loading never holds an old and a new array at once.
//   - The garbage collector neither scans these arrays nor counts them in
//     its heap goal. With GOGC=100 the runtime lets the heap reach twice
//     the live heap before collecting; for a heap that is mostly vectors
//     that headroom is another copy of the vectors. Off the heap it
//     applies only to the small structures that remain.
//   - Arrays of at least MinBytes are advised to the kernel as huge-page
//     material (MADV_HUGEPAGE): a graph search touches a few thousand
//     scattered cache lines per query, and with 4 KiB pages nearly every
//     one is also a TLB miss. The advice is a hint; an error or a system
//     without it changes nothing but speed.
//
// The memory is returned to the system when its Array becomes unreachable
// (a runtime cleanup unmaps it), never explicitly. So a slice of an Array
// must be used only while the Array itself is reachable: keep the Array in
// the structure that hands its slices out, and call runtime.KeepAlive on
// that structure where a method works on a slice after its last use of the
// structure.
//
// Where the system cannot reserve address space (not Linux, or a strict
// overcommit or address-space limit refusing the reservation), and in a
// build with the race detector (which ignores memory outside the Go heap,
// atomic operations included, so it would not see the happens-before edge
// an atomic store of a neighbour list gives), an Array lives on the Go heap: it then grows by copying into a larger slice
// and OffHeap reports false; earlier slices stay valid either way.
package offheap

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Elem is the element types an Array holds.
type Elem interface {
	~float32 | ~int8 | ~uint8 | ~uint32 | ~uint64
}

// HugePage is the huge page size reservations align to (2 MiB on x86-64
// and most arm64 kernels).
const HugePage = 2 << 20

// MinBytes is the smallest committed size advised as huge-page material:
// below a few huge pages the TLB covers an array anyway, and advising tiny
// arrays would round each of them up to a 2 MiB page.
const MinBytes = 4 * HugePage

// DefaultReserve is the address space an Array reserves when New is given
// no larger size: reserving costs no memory, only address space (x86-64
// gives a process 128 TiB of it). An Array that outgrows its reservation
// moves to a larger one (the old one stays mapped, for the slices still
// reading it, until the Array is unreachable).
const DefaultReserve = 1 << 30

// mapped is the bytes committed by every live off-heap Array.
var mapped atomic.Int64

// Mapped returns the bytes the live off-heap Arrays of this process have
// committed (reserved address space not counted): what their cleanups
// give back once they are unreachable.
func Mapped() int64 { return mapped.Load() }

// Array is a growable array of T, zero-initialised, 64-byte aligned. Grow
// must not run concurrently with another Grow of the same Array; slices
// returned earlier may be read and written meanwhile.
type Array[T Elem] struct {
	s       []T      // the committed elements (len = cap)
	reserve int      // bytes of address space a new reservation takes
	maps    *regions // the reservations (nil on the heap fallback)
	// spans is the reservations' usable ranges, replaced whole when one
	// is added, for Holds to read while Grow runs.
	spans atomic.Pointer[[]span]
}

// span is a reservation's usable bytes [base, base+size).
type span struct{ base, size uintptr }

// regions is an Array's reservations, newest last: what its cleanup
// unmaps.
type regions struct {
	list []region
}

// region is one reservation: mem the whole mapping, base its first
// HugePage-aligned byte, size the usable bytes from base, committed the
// bytes from base made readable and writable so far, populated the bytes
// from base already asked to be backed by memory (see populate).
type region struct {
	mem       []byte
	base      unsafe.Pointer
	size      int
	committed int
	populated int
}

// New returns an empty Array that reserves reserveBytes of address space
// (DefaultReserve when smaller) the first time it grows.
func New[T Elem](reserveBytes int) *Array[T] {
	return &Array[T]{reserve: max(reserveBytes, DefaultReserve)}
}

// Slice returns the committed elements; its length is at least the last
// Grow's n.
func (a *Array[T]) Slice() []T { return a.s }

// OffHeap reports whether the Array's memory is outside the Go heap.
func (a *Array[T]) OffHeap() bool { return a.maps != nil }

// Holds reports whether p points into the Array's off-heap memory (any
// reservation it has made, the current one or one it moved from); false
// on the heap fallback. It may run concurrently with Grow.
func (a *Array[T]) Holds(p unsafe.Pointer) bool {
	spans := a.spans.Load()
	if spans == nil {
		return false
	}
	for _, sp := range *spans {
		if uintptr(p)-sp.base < sp.size {
			return true
		}
	}
	return false
}

// View is the memory of words (an Array's, typically) as elements of T,
// a fixed-size record of whole 8-byte words: the way to keep structs in
// an Array[uint64]. A T holding Go pointers is the caller's to keep
// alive otherwise: the collector does not look here. It panics for a T
// that is not a multiple of 8 bytes.
func View[T any](words []uint64) []T {
	var zero T
	size := unsafe.Sizeof(zero)
	if size == 0 || size%8 != 0 {
		panic(fmt.Sprintf("offheap: a view of %d-byte elements", size))
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(words))), uintptr(len(words))*8/size)
}

// Populate asks the system to back the first n elements with memory now
// (rounded up to a huge page, at most the committed ones), instead of
// one page fault per page as they are first written: call it with the
// elements about to be filled. Committed elements past n stay unbacked
// until used, so the resident set stays what the array holds. It does
// nothing on the heap fallback, or where the system lacks the request.
func (a *Array[T]) Populate(n int) {
	if a.maps == nil {
		return
	}
	var zero T
	r := &a.maps.list[len(a.maps.list)-1]
	if len(a.s) == 0 || unsafe.Pointer(unsafe.SliceData(a.s)) != r.base {
		return // the elements moved to the heap fallback
	}
	r.populate(min(n, len(a.s)) * int(unsafe.Sizeof(zero)))
}

// Grow commits at least n elements and returns all the committed ones
// (growing geometrically, so that n one at a time costs amortised
// constant time). Elements already committed keep their address and value.
// It panics if n elements cannot be addressed (an overflowing size), or
// if the system refuses to commit reserved memory (out of memory, which a
// heap allocation would also die of).
func (a *Array[T]) Grow(n int) []T {
	var zero T
	esz := int(unsafe.Sizeof(zero))
	if n <= len(a.s) {
		return a.s
	}
	if n > (1<<62)/esz {
		panic(fmt.Sprintf("offheap: %d elements of %d bytes", n, esz))
	}
	want := max(n, len(a.s)+len(a.s)/2) * esz
	if a.maps != nil || len(a.s) == 0 {
		if s, ok := a.growMapped(want, esz); ok {
			a.s = s
			return a.s
		}
	}
	// The heap fallback (or a reservation refused after the first).
	s := alignedHeap[T](want / esz)
	copy(s, a.s)
	a.s = s
	return a.s
}

// growMapped commits want bytes in the newest reservation, reserving a new
// one (and copying the committed elements into it) when it is too small.
// It reports false when no reservation can be made.
func (a *Array[T]) growMapped(want, esz int) ([]T, bool) {
	if a.maps != nil {
		r := &a.maps.list[len(a.maps.list)-1]
		if want <= r.size {
			if err := r.commit(want); err != nil {
				panic(fmt.Sprintf("offheap: committing %d bytes: %v", want, err))
			}
			return unsafe.Slice((*T)(r.base), r.committed/esz), true
		}
	}
	size := max(a.reserve, 2*want)
	r, err := reserve(size)
	if err != nil {
		return nil, false
	}
	if err := r.commit(want); err != nil {
		unreserve(&r)
		return nil, false
	}
	s := unsafe.Slice((*T)(r.base), r.committed/esz)
	copy(s, a.s)
	if a.maps == nil {
		a.maps = &regions{}
		runtime.AddCleanup(a, func(rs *regions) {
			for i := range rs.list {
				unreserve(&rs.list[i])
			}
		}, a.maps)
	}
	a.maps.list = append(a.maps.list, r)
	spans := make([]span, 0, len(a.maps.list))
	for _, r := range a.maps.list {
		spans = append(spans, span{uintptr(r.base), uintptr(r.size)})
	}
	a.spans.Store(&spans)
	return s, true
}

// alignedHeap returns n zeroed elements from the Go heap, the first one
// 64-byte aligned (the slice keeps its whole backing array alive).
func alignedHeap[T Elem](n int) []T {
	var zero T
	esz := int(unsafe.Sizeof(zero))
	pad := 64 / esz
	backing := make([]T, n+pad)
	off := 0
	if r := uintptr(unsafe.Pointer(&backing[0])) % 64; r != 0 {
		off = int((64 - r) / uintptr(esz))
	}
	return backing[off : off+n : off+n]
}
