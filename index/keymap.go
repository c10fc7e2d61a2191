package index

import (
	"math/bits"

	"github.com/tidemark/tidemark/internal/probe"
)

// keyMap maps each live key to its node: an open-addressing table
// (linear probing) of node ids that reads a slot's key from the index's
// keys array (keys[id]) instead of storing it. A slot is 4 bytes and the
// table stays at most three quarters full, so a key costs 5.3 to 10.7
// bytes, where a map[uint64]uint32 took some 36 at a million keys. Every
// method takes the index's current keys array; the caller holds the
// locks that guard the map (allocMu, or mu exclusively).
type keyMap struct {
	probe.Table[uint32] // a node id + 1; 0 is an empty slot
	n                   int
}

// newKeyMap returns a map with room for capacity keys before it grows.
func newKeyMap(capacity int) keyMap {
	var m keyMap
	m.resize(tableSize(capacity), nil)
	return m
}

// tableSize is the power of two of slots that holds n keys at most three
// quarters full (at least 16).
func tableSize(n int) int {
	need := max(16, (4*n+2)/3)
	return 1 << bits.Len(uint(need-1))
}

func (m *keyMap) home(key uint64) int { return int((key * 0x9e3779b97f4a7c15) >> m.Shift) }

// len returns the number of keys.
func (m *keyMap) len() int { return m.n }

// get returns key's node.
func (m *keyMap) get(key uint64, keys []uint64) (uint32, bool) {
	mask := len(m.Slots) - 1
	for i := m.home(key); ; i = (i + 1) & mask {
		s := m.Slots[i]
		if s == 0 {
			return 0, false
		}
		if keys[s-1] == key {
			return s - 1, true
		}
	}
}

// put maps key to node id, whose key keys[id] must be; it reports false,
// changing nothing, when key is there already.
func (m *keyMap) put(key uint64, id uint32, keys []uint64) bool {
	if 4*(m.n+1) > 3*len(m.Slots) {
		m.resize(2*len(m.Slots), keys)
	}
	mask := len(m.Slots) - 1
	for i := m.home(key); ; i = (i + 1) & mask {
		s := m.Slots[i]
		if s == 0 {
			m.Slots[i] = id + 1
			m.n++
			return true
		}
		if keys[s-1] == key {
			return false
		}
	}
}

// del removes key and returns the node it had. The slots after it move
// back to close the gap (backward-shift deletion: no tombstones, so
// lookups never slow down with deletes).
func (m *keyMap) del(key uint64, keys []uint64) (uint32, bool) {
	mask := len(m.Slots) - 1
	i := m.home(key)
	for ; ; i = (i + 1) & mask {
		s := m.Slots[i]
		if s == 0 {
			return 0, false
		}
		if keys[s-1] == key {
			break
		}
	}
	id := m.Slots[i] - 1
	m.Remove(i, func(s uint32) int { return m.home(keys[s-1]) })
	m.n--
	return id, true
}

// resize moves the keys into a table of size slots (a power of two).
func (m *keyMap) resize(size int, keys []uint64) {
	m.Resize(size, func(s uint32) int { return m.home(keys[s-1]) })
}
