package probe

import (
	"slices"
	"testing"
)

// Every slot lands once, at its home or the first empty place after it,
// wrapping around the end.
func TestRehash(t *testing.T) {
	old := []uint32{0, 5, 0, 9, 13, 2, 0, 7}
	slots := make([]uint32, 8)
	home := func(s uint32) int { return int(s) % 4 * 2 } // homes 2, 2, 2, 4, 6 for 5, 9, 13, 2, 7
	Rehash(slots, old, home)
	want := []uint32{0, 0, 5, 9, 13, 2, 7, 0}
	if !slices.Equal(slots, want) {
		t.Fatalf("slots %v, want %v", slots, want)
	}
	wrap := make([]uint32, 4)
	Rehash(wrap, []uint32{3, 7}, func(uint32) int { return 3 })
	if !slices.Equal(wrap, []uint32{7, 0, 0, 3}) {
		t.Fatalf("wrapped: %v", wrap)
	}
}
