package tidemark

import (
	"testing"
	"unsafe"

	"github.com/tidemark/tidemark/internal/offheap"
	"github.com/tidemark/tidemark/temporal"
)

// The row table keeps each row's numbers in its own array, through every
// growth of it (and every move, on the heap fallback of the race build),
// with a row's only state and belief in them; a second moves both to the
// row's lists.
func TestRowTableKeepsNumbers(t *testing.T) {
	var tab rowTable
	const n = 3*rowChunk + 17
	for j := range n {
		r := row{rowNum: &rowNum{rec: float64(j), supersededBy: j - 1, kgroup: uint32(j)}}
		r.hash[0] = byte(j)
		r.setState(state{valid: temporal.Window{From: float64(j), To: temporal.Open}})
		if j%3 == 0 {
			r.rowNum = nil // add gives it zeroed numbers
		}
		tab.add(r)
		tab.at(j).addBelief(10 * j)
	}
	nums := offheap.View[rowNum](tab.nums.Slice())
	for j := range n {
		r := tab.at(j)
		if r.rowNum != &nums[j] {
			t.Fatalf("row %d: numbers at %p, the table's are at %p", j, r.rowNum, &nums[j])
		}
		if j%3 == 0 {
			if r.rec != 0 || len(r.stateList()) != 0 {
				t.Fatalf("row %d: rec %v, %d states, want zero", j, r.rec, len(r.stateList()))
			}
		} else if r.rec != float64(j) || r.supersededBy != j-1 || r.kgroup != uint32(j) || r.hash[0] != byte(j) ||
			len(r.stateList()) != 1 || &r.stateList()[0] != &r.st0 || r.st0.valid.From != float64(j) {
			t.Fatalf("row %d: rec %v, supersededBy %d, kgroup %d, hash %d, states %v", j, r.rec, r.supersededBy, r.kgroup, r.hash[0], r.stateList())
		}
		if len(r.beliefList()) != 1 || &r.beliefList()[0] != &r.b0 || r.b0 != 10*j || r.rowLists != &noLists {
			t.Fatalf("row %d: beliefs %v", j, r.beliefList())
		}
	}
	r := tab.at(5)
	r.lastState().recorded.To = 9
	r.appendState(state{valid: temporal.Window{From: 7}})
	r.addBelief(77)
	if st := r.stateList(); len(st) != 2 || st[0].recorded.To != 9 || st[1].valid.From != 7 || r.oneState ||
		r.lastBelief() != 77 || len(r.beliefList()) != 2 || r.beliefList()[0] != 50 || r.oneBelief {
		t.Fatalf("after appends: states %v, beliefs %v", st, r.beliefList())
	}
	if tab.at(4).rowLists != &noLists || len(tab.at(4).stateList()) != 1 {
		t.Fatalf("row 4 shares row 5's lists")
	}
	if uintptr(unsafe.Pointer(r.rowNum))%8 != 0 {
		t.Fatalf("numbers misaligned at %p", r.rowNum)
	}
}
