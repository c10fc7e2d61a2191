package prefetch

import (
	"testing"
	"unsafe"
)

// Prefetching is a hint: it must not fault or change memory, even at the
// end of a buffer.
func TestLinesChangesNothing(t *testing.T) {
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(i)
	}
	for _, off := range []int{0, 1, 63, 64, 4000, 4095} {
		for n := 0; n <= 8; n++ {
			Lines(unsafe.Pointer(&buf[off]), n)
		}
	}
	for i := range buf {
		if buf[i] != byte(i) {
			t.Fatalf("byte %d changed", i)
		}
	}
}

func TestRowsChangesNothing(t *testing.T) {
	buf := make([]float32, 100*10)
	for i := range buf {
		buf[i] = float32(i)
	}
	Rows(unsafe.Pointer(&buf[0]), 400, []uint32{0, 5, 9, 3}, 7)
	Rows(unsafe.Pointer(&buf[0]), 400, nil, 7)
	Rows(unsafe.Pointer(&buf[0]), 400, []uint32{2}, 0)
	for i := range buf {
		if buf[i] != float32(i) {
			t.Fatalf("element %d changed", i)
		}
	}
}
