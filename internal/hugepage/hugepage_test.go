package hugepage

import (
	"testing"
	"unsafe"
)

func TestAlignment(t *testing.T) {
	for _, n := range []int{1, 17, 1000, MinBytes / 4, MinBytes/4 + 3, 3 * MinBytes / 4} {
		f := Float32s(n)
		u := Uint32s(n)
		if len(f) != n || cap(f) != n || len(u) != n {
			t.Fatalf("n %d: lengths %d/%d/%d", n, len(f), cap(f), len(u))
		}
		if uintptr(unsafe.Pointer(&f[0]))%64 != 0 {
			t.Fatalf("n %d: not 64-byte aligned", n)
		}
		for i := range f {
			if f[i] != 0 {
				t.Fatal("not zeroed")
			}
		}
		f[n-1], u[n-1] = 1, 1 // writable to the end
	}
}
