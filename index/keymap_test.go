package index

import (
	"math/rand/v2"
	"testing"
)

// keyMap agrees with a Go map over long random runs of puts, deletes and
// lookups, with keys that collide in their home slots (multiples of a
// power of two) and keys spread at random, through growth and deletes
// that shift whole probe chains back.
func TestKeyMapAgreesWithMap(t *testing.T) {
	for _, spread := range []uint64{1, 1 << 20, 0} {
		r := rand.New(rand.NewPCG(4, spread))
		m := newKeyMap(0)
		ref := map[uint64]uint32{}
		var keys []uint64 // node id → key, as the index keeps them
		key := func() uint64 {
			if spread == 0 {
				return r.Uint64()
			}
			return uint64(r.IntN(3000)) * spread
		}
		for step := range 60000 {
			k := key()
			switch op := r.IntN(10); {
			case op < 5:
				id := uint32(len(keys))
				keys = append(keys, k)
				_, had := ref[k]
				if ok := m.put(k, id, keys); ok == had {
					t.Fatalf("step %d: put(%d) = %v with the key there = %v", step, k, ok, had)
				}
				if !had {
					ref[k] = id
				}
			case op < 8:
				id, ok := m.del(k, keys)
				want, had := ref[k]
				if ok != had || ok && id != want {
					t.Fatalf("step %d: del(%d) = %d %v, want %d %v", step, k, id, ok, want, had)
				}
				delete(ref, k)
			default:
				id, ok := m.get(k, keys)
				want, had := ref[k]
				if ok != had || ok && id != want {
					t.Fatalf("step %d: get(%d) = %d %v, want %d %v", step, k, id, ok, want, had)
				}
			}
			if m.len() != len(ref) || 4*m.len() > 3*len(m.Slots) {
				t.Fatalf("step %d: %d keys (want %d) in %d slots", step, m.len(), len(ref), len(m.Slots))
			}
		}
		for k, want := range ref {
			if id, ok := m.get(k, keys); !ok || id != want {
				t.Fatalf("spread %d: key %d lost (%d %v, want %d)", spread, k, id, ok, want)
			}
		}
		seen := 0
		for _, s := range m.Slots {
			if s == 0 {
				continue
			}
			if k, id := keys[s-1], s-1; ref[k] != id {
				t.Fatalf("a slot holds %d → %d, want %d", k, id, ref[k])
			}
			seen++
		}
		if seen != len(ref) {
			t.Fatalf("the slots hold %d keys, want %d", seen, len(ref))
		}
	}
}

func TestTableSize(t *testing.T) {
	for _, c := range []struct{ n, want int }{{0, 16}, {12, 16}, {13, 32}, {1000, 2048}, {1 << 20, 1 << 21}} {
		if got := tableSize(c.n); got != c.want || 4*c.n > 3*got {
			t.Errorf("tableSize(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}
