// Package probe holds what the engine's open-addressing tables share:
// linear probing over a power-of-two array of slots off the Go heap, 0 an
// empty slot (the index's key table and the ledger's id table).
package probe

import (
	"math/bits"
	"runtime"
	"unsafe"

	"github.com/tidemark/tidemark/internal/offheap"
)

// Table is a table's slots, off the Go heap (package offheap): they hold
// no pointers, so the collector would only pace by them. The zero Table
// has no slots.
type Table[S uint32 | uint64] struct {
	mem   *offheap.Array[S]
	Slots []S
	Shift uint // 64 − log2(len(Slots)): a 64-bit hash's top bits are a home
}

// Resize moves the slots into size empty ones (a power of two), each to
// the first empty place from home (which may read the new Shift).
func (t *Table[S]) Resize(size int, home func(S) int) {
	old, oldMem := t.Slots, t.mem
	defer runtime.KeepAlive(oldMem) // old is read below
	var zero S
	t.mem = offheap.New[S](size * int(unsafe.Sizeof(zero)))
	t.Slots = t.mem.Grow(size)[:size]
	t.mem.Populate(size)
	t.Shift = uint(64 - bits.TrailingZeros(uint(size)))
	Rehash(t.Slots, old, home)
}

// Remove empties slot i and moves the slots after it back where their
// probes allow (backward-shift deletion: no tombstones, so lookups never
// slow down with deletes); home gives a slot's home.
func (t *Table[S]) Remove(i int, home func(S) int) {
	mask := len(t.Slots) - 1
	for k := (i + 1) & mask; t.Slots[k] != 0; k = (k + 1) & mask {
		// The slot at k may fill the hole at i when its home is not in
		// the cyclic interval (i, k].
		if h := home(t.Slots[k]); (k-h)&mask >= (k-i)&mask {
			t.Slots[i] = t.Slots[k]
			i = k
		}
	}
	t.Slots[i] = 0
}

// Rehash puts every non-empty slot of old into slots (empty, a power of
// two long) at the first empty place from its home.
func Rehash[S uint32 | uint64](slots, old []S, home func(S) int) {
	mask := len(slots) - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := home(s)
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = s
	}
}
