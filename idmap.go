package tidemark

import (
	"hash/maphash"
	"math/bits"

	"github.com/tidemark/tidemark/internal/probe"
)

// idMap finds a collection's rows by id: an open-addressing table (linear
// probing) whose slots hold a row and 32 bits of its id's hash, not the
// id itself, which the row keeps (a lookup compares it only where the
// hash bits agree). The slots live off the Go heap (package offheap), 8
// bytes each, from three eighths to three quarters full: 11 to 21 bytes
// an id against the 40 of a map[string]int, which the collector's
// headroom doubled.
// The ids folded into another row (aliases) are the exception, in a
// map of their own. The zero idMap is empty.
type idMap struct {
	probe.Table[uint64] // row+1 << 32 | hash bits; 0 is an empty slot
	n                   int
	seed                maphash.Seed
	// aliases maps each id whose row holds another id to its row.
	aliases map[string]int
}

// idSlot packs row j and hash bits h.
func idSlot(j int, h uint32) uint64 { return uint64(j+1)<<32 | uint64(h) }

func (m *idMap) hash(id string) uint32 { return uint32(maphash.String(m.seed, id)) }

func (m *idMap) home(h uint32) int { return int((uint64(h) * 0x9e3779b97f4a7c15) >> m.Shift) }

// len returns the number of ids.
func (m *idMap) len() int { return m.n + len(m.aliases) }

// reserve makes room for n ids before the table grows.
func (m *idMap) reserve(n int) {
	if 4*n > 3*len(m.Slots) {
		m.resize(idTableSize(n))
	}
}

// idTableSize is the power of two of slots that holds n ids at most three
// quarters full (at least 64).
func idTableSize(n int) int {
	need := max(64, (4*n+2)/3)
	return 1 << bits.Len(uint(need-1))
}

// resize moves the ids into a table of size slots.
func (m *idMap) resize(size int) {
	if m.Slots == nil {
		m.seed = maphash.MakeSeed()
	}
	m.Resize(size, func(s uint64) int { return m.home(uint32(s)) })
}

// find returns the slot of id (whose rows are in rows) and whether it is
// there; when it is not, the slot is the empty one that ends its probe.
func (m *idMap) find(id string, h uint32, rows *rowTable) (int, bool) {
	mask := len(m.Slots) - 1
	for i := m.home(h); ; i = (i + 1) & mask {
		s := m.Slots[i]
		if s == 0 {
			return i, false
		}
		if uint32(s) == h && rows.at(int(s>>32)-1).mem.ID == id {
			return i, true
		}
	}
}

// get returns id's row.
func (m *idMap) get(id string, rows *rowTable) (int, bool) {
	if j, ok := m.aliases[id]; ok {
		return j, true
	}
	if m.n == 0 {
		return 0, false
	}
	h := m.hash(id)
	i, ok := m.find(id, h, rows)
	if !ok {
		return 0, false
	}
	return int(m.Slots[i]>>32) - 1, true
}

// set maps id to row j.
func (m *idMap) set(id string, j int, rows *rowTable) {
	if rows.at(j).mem.ID != id {
		m.delTable(id, rows)
		if m.aliases == nil {
			m.aliases = map[string]int{}
		}
		m.aliases[id] = j
		return
	}
	delete(m.aliases, id)
	if 4*(m.n+1) > 3*len(m.Slots) {
		m.resize(max(2*len(m.Slots), idTableSize(0)))
	}
	h := m.hash(id)
	i, ok := m.find(id, h, rows)
	if !ok {
		m.n++
	}
	m.Slots[i] = idSlot(j, h)
}

// del removes id.
func (m *idMap) del(id string, rows *rowTable) {
	delete(m.aliases, id)
	m.delTable(id, rows)
}

// delTable removes id from the table, moving the slots after it back
// where their probes allow (no tombstones).
func (m *idMap) delTable(id string, rows *rowTable) {
	if m.n == 0 {
		return
	}
	i, ok := m.find(id, m.hash(id), rows)
	if !ok {
		return
	}
	m.Remove(i, func(s uint64) int { return m.home(uint32(s)) })
	m.n--
}

// rowOf returns the row of id (an alias's: the row it was folded into).
func (l *ledger) rowOf(id string) (int, bool) { return l.byID.get(id, &l.rows) }

// setID maps id to row j.
func (l *ledger) setID(id string, j int) { l.byID.set(id, j, &l.rows) }

// dropID forgets id.
func (l *ledger) dropID(id string) { l.byID.del(id, &l.rows) }
