package offheap

import (
	"runtime"
	"testing"
	"time"
	"unsafe"
)

func TestGrowKeepsAddressesAndValues(t *testing.T) {
	a := New[float32](0)
	s := a.Grow(10)
	if len(s) < 10 {
		t.Fatalf("Grow(10) gave %d elements", len(s))
	}
	if uintptr(unsafe.Pointer(&s[0]))%64 != 0 {
		t.Fatal("not 64-byte aligned")
	}
	for i := range 10 {
		s[i] = float32(i)
	}
	first := &s[0]
	// Far past the first commit (and past MinBytes, so the huge-page
	// advice runs), one element at a time for a stretch.
	for n := 11; n < 1000; n++ {
		a.Grow(n)
	}
	big := a.Grow(3 * MinBytes / 4)
	if len(big) < 3*MinBytes/4 {
		t.Fatalf("Grow gave %d elements", len(big))
	}
	for i := range 10 {
		if s[i] != float32(i) || big[i] != float32(i) {
			t.Fatalf("element %d: old slice %v, new %v", i, s[i], big[i])
		}
	}
	for i := 10; i < len(big); i++ {
		if big[i] != 0 {
			t.Fatalf("element %d not zeroed: %v", i, big[i])
		}
	}
	big[len(big)-1] = 1 // writable to the end
	if a.OffHeap() && &big[0] != first {
		t.Fatal("an off-heap Array moved within its reservation")
	}
	if !a.OffHeap() {
		t.Log("the heap fallback ran (another system, the race detector, or no address space)")
	}
}

func TestOutgrowingTheReservation(t *testing.T) {
	a := New[uint32](0)
	a.reserve = 1 << 20 // a small reservation, to outgrow it cheaply
	s := a.Grow(1000)
	for i := range s {
		s[i] = uint32(i)
	}
	n := (1 << 20) // 4 MiB of uint32s: past the reservation
	big := a.Grow(n)
	if len(big) < n {
		t.Fatalf("Grow(%d) gave %d", n, len(big))
	}
	for i := range 1000 {
		if big[i] != uint32(i) || s[i] != uint32(i) {
			t.Fatalf("element %d lost in the move: %d / %d", i, big[i], s[i])
		}
	}
	if a.OffHeap() && len(a.maps.list) != 2 {
		t.Fatalf("%d reservations after outgrowing the first, want 2 (the old one stays mapped)", len(a.maps.list))
	}
}

func TestInt8(t *testing.T) {
	a := New[int8](0)
	s := a.Grow(100)
	s[99] = -7
	if a.Grow(5000)[99] != -7 {
		t.Fatal("int8 element lost")
	}
}

// An unreachable Array gives its memory back.
func TestUnreachableIsUnmapped(t *testing.T) {
	before := Mapped()
	func() {
		a := New[float32](0)
		a.Grow(1 << 20)
		if !a.OffHeap() {
			t.Skip("the heap fallback ran (another system, the race detector, or no address space)")
		}
		if Mapped()-before < 4<<20 {
			t.Fatalf("Mapped grew by %d, want at least 4 MiB", Mapped()-before)
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for Mapped()-before >= 4<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("4 MiB still mapped 10 s after the Array became unreachable (Mapped %d, before %d)", Mapped(), before)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// Grow populates nothing; Populate the elements asked for, a huge page
// ahead at most and never past the committed bytes (the geometric slack
// stays unpopulated, so it costs no resident memory).
func TestPopulateWhatIsAsked(t *testing.T) {
	a := New[float32](0)
	a.Grow(3 * HugePage)
	if !a.OffHeap() {
		t.Skip("arrays live on the Go heap here")
	}
	if r := a.maps.list[0]; r.populated != 0 {
		t.Fatalf("Grow populated %d bytes", r.populated)
	}
	for _, n := range []int{1, 1000, HugePage, HugePage + 1, 5 * HugePage / 4, 3 * HugePage} {
		s := a.Grow(n)
		a.Populate(n)
		r := a.maps.list[len(a.maps.list)-1]
		if r.populated < 0 {
			t.Skip("MADV_POPULATE_WRITE is not supported here")
		}
		if r.populated < 4*n || r.populated > r.committed || r.populated > 4*n+HugePage {
			t.Fatalf("Populate(%d): populated %d bytes, committed %d", n, r.populated, r.committed)
		}
		s[n-1] = 1
	}
}

// Holds knows the Array's off-heap memory, in every reservation it has
// made, and nothing else; on the heap fallback, nothing.
func TestHolds(t *testing.T) {
	a := New[float32](0)
	a.reserve = 1 << 20
	s := a.Grow(1000)
	heap := make([]float32, 8)
	if a.OffHeap() != a.Holds(unsafe.Pointer(&s[999])) || a.OffHeap() != a.Holds(unsafe.Pointer(&s[0])) {
		t.Fatalf("off heap %v, holds its first element %v, its last %v", a.OffHeap(), a.Holds(unsafe.Pointer(&s[0])), a.Holds(unsafe.Pointer(&s[999])))
	}
	big := a.Grow(1 << 19) // 2 MiB: a second reservation
	if a.OffHeap() && (!a.Holds(unsafe.Pointer(&s[0])) || !a.Holds(unsafe.Pointer(&big[len(big)-1]))) {
		t.Fatal("after the move it no longer holds the first reservation or the second")
	}
	if a.Holds(unsafe.Pointer(&heap[0])) || New[float32](0).Holds(unsafe.Pointer(&s[0])) {
		t.Fatal("holds Go heap memory, or another Array's")
	}
	if a.OffHeap() {
		r := a.maps.list[len(a.maps.list)-1]
		if a.Holds(unsafe.Add(r.base, r.size)) {
			t.Fatal("holds the byte past its reservation")
		}
	}
}

// View lays records over the words in place, and refuses a record that
// is not whole words.
func TestView(t *testing.T) {
	type rec struct {
		a    uint64
		b, c uint32
	}
	words := make([]uint64, 6)
	v := View[rec](words)
	if len(v) != 3 || unsafe.Pointer(&v[1]) != unsafe.Pointer(&words[2]) {
		t.Fatalf("view of %d records, record 1 at %p, word 2 at %p", len(v), &v[1], &words[2])
	}
	v[2].a = 7
	if words[4] != 7 {
		t.Fatalf("a write through the view did not land in the words: %v", words)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a view of 4-byte records did not panic")
		}
	}()
	View[uint32](words)
}
