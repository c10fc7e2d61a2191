//go:build linux && !race

package offheap

import (
	"runtime"
	"testing"
)

// A populate is cut into contiguous spans on huge-page boundaries that
// cover the range exactly, whatever the split.
func TestSplitRange(t *testing.T) {
	for _, n := range []int{populateSplit * 2, 762<<20 + 4096, 5*HugePage + 17, 3 << 30} {
		for _, parts := range []int{2, 3, 4, 16} {
			sp := splitRange(n, parts)
			if len(sp) != parts || sp[0][0] != 0 || sp[parts-1][1] != n {
				t.Fatalf("n %d parts %d: %v", n, parts, sp)
			}
			for i, s := range sp {
				if s[0] > s[1] || i > 0 && (s[0] != sp[i-1][1] || s[0]%HugePage != 0) {
					t.Fatalf("n %d parts %d: span %d is %v in %v", n, parts, i, s, sp)
				}
			}
		}
	}
}

// A populate large enough to be split backs the whole range: every byte
// reads zero and takes a write, on as many parts as there are cores.
func TestPopulateInParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	a := New[uint8](0)
	n := 3*populateSplit + HugePage/2
	s := a.Grow(n)
	if !a.OffHeap() {
		t.Skip("arrays live on the Go heap here")
	}
	a.Populate(n)
	r := a.maps.list[len(a.maps.list)-1]
	if r.populated < 0 {
		t.Skip("MADV_POPULATE_WRITE is not supported here")
	}
	if r.populated < n {
		t.Fatalf("populated %d of %d bytes", r.populated, n)
	}
	for i := 0; i < n; i += 4096 {
		if s[i] != 0 {
			t.Fatalf("byte %d is %d after populating", i, s[i])
		}
		s[i] = 1
	}
}
