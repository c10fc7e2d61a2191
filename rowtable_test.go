package tidemark

import (
	"testing"
	"unsafe"

	"github.com/tidemark/tidemark/temporal"
)

// The row table keeps each row's numbers in its own array, through every
// growth of it (and every move, on the heap fallback of the race build),
// with a one-element state and belief in them, and an append moves those
// to the heap without touching the table.
func TestRowTableKeepsNumbers(t *testing.T) {
	var tab rowTable
	const n = 3*rowChunk + 17
	for j := range n {
		r := row{rowNum: &rowNum{rec: float64(j), supersededBy: j - 1, kgroup: uint32(j)}}
		r.hash[0] = byte(j)
		r.setState(state{valid: temporal.Window{From: float64(j), To: temporal.Open}})
		if j%3 == 0 {
			r.rowNum = nil // add gives it zeroed numbers
			r.states = nil
		}
		tab.add(r)
		tab.at(j).addBelief(10 * j)
	}
	words := tab.nums.Slice()
	for j := range n {
		r := tab.at(j)
		if r.rowNum != numAt(words, j) {
			t.Fatalf("row %d: numbers at %p, the table's are at %p", j, r.rowNum, numAt(words, j))
		}
		if j%3 == 0 {
			if r.rec != 0 || len(r.states) != 0 {
				t.Fatalf("row %d: rec %v, %d states, want zero", j, r.rec, len(r.states))
			}
		} else if r.rec != float64(j) || r.supersededBy != j-1 || r.kgroup != uint32(j) || r.hash[0] != byte(j) ||
			len(r.states) != 1 || &r.states[0] != &r.st0 || r.states[0].valid.From != float64(j) {
			t.Fatalf("row %d: rec %v, supersededBy %d, kgroup %d, hash %d, states %v", j, r.rec, r.supersededBy, r.kgroup, r.hash[0], r.states)
		}
		if len(r.beliefs) != 1 || &r.beliefs[0] != &r.b0 || r.b0 != 10*j {
			t.Fatalf("row %d: beliefs %v", j, r.beliefs)
		}
	}
	r := tab.at(5)
	r.states = append(r.states, state{valid: temporal.Window{From: 7}})
	r.states[0].recorded.To = 9
	r.addBelief(77)
	if len(r.states) != 2 || &r.states[0] == &r.st0 || r.st0.recorded.To != 0 || len(r.beliefs) != 2 || r.b0 != 50 || r.beliefs[1] != 77 {
		t.Fatalf("after appends: states %v (st0 %v), beliefs %v", r.states, r.st0, r.beliefs)
	}
	if uintptr(unsafe.Pointer(r.rowNum))%8 != 0 {
		t.Fatalf("numbers misaligned at %p", r.rowNum)
	}
}
