//go:build !noasm && amd64

package simd

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/viterin/vek/vek32"
)

// These tests pin down the behaviour of the vek functions the accelerated
// kernels rely on, at every length around vek's 32-element blocks, so that
// a vek upgrade that changes it fails here rather than in a caller.

func requireVek(t *testing.T) {
	t.Helper()
	if !haveAccel {
		t.Skipf("vek kernels unavailable (features: %v)", CPUFeatures())
	}
}

// TestVekDotEmptyPanics records why dotAccel never hands vek an empty
// slice: vek32.Dot panics on one instead of returning 0.
func TestVekDotEmptyPanics(t *testing.T) {
	requireVek(t)
	panicked := func() (p bool) {
		defer func() { p = recover() != nil }()
		vek32.Dot(nil, nil)
		return false
	}()
	if !panicked {
		t.Log("vek32.Dot(nil, nil) no longer panics; the vekMinLen guard is still harmless")
	}
	if got := Dot(nil, nil); got != 0 {
		t.Errorf("Dot(nil, nil) = %v, want 0", got)
	}
	if got := dotAccel(nil, nil); got != 0 {
		t.Errorf("dotAccel(nil, nil) = %v, want 0", got)
	}
}

// TestVekLengths runs the vek functions used here directly, bypassing the
// vekMinLen cut-off, at every length from 1 to 130 and at several
// alignments, inside sentinel guards.
func TestVekLengths(t *testing.T) {
	requireVek(t)
	r := rand.New(rand.NewPCG(21, 22))
	for n := 1; n <= 130; n++ {
		for _, off := range []int{0, 1, 3, 7} {
			what := fmt.Sprintf("n=%d offset=%d", n, off)
			a := randomGuarded(r, n, off)
			b := randomGuarded(r, n, (off+2)%8)
			sa, sb := a.snapshot(), b.snapshot()

			got := vek32.Dot(a.elements, b.elements)
			want, abs := refDot(sa, sb)
			if !closeDot(got, want, abs) {
				t.Fatalf("%s: vek32.Dot = %v, want %v", what, got, want)
			}

			alpha := float32(1.25)
			vek32.MulNumber_Inplace(a.elements, alpha)
			for i, v := range a.elements {
				if w := sa[i] * alpha; v != w {
					t.Fatalf("%s: vek32.MulNumber_Inplace: x[%d] = %v, want %v", what, i, v, w)
				}
			}
			vek32.Add_Inplace(b.elements, a.elements)
			for i, v := range b.elements {
				if w := sb[i] + float32(sa[i]*alpha); v != w {
					t.Fatalf("%s: vek32.Add_Inplace: x[%d] = %v, want %v", what, i, v, w)
				}
			}
			a.checkGuards(t, what+" a")
			b.checkGuards(t, what+" b")
		}
	}
}

// BenchmarkDotShort compares vek32.Dot with the generic kernel on short
// vectors; it is the measurement behind vekMinLen.
func BenchmarkDotShort(b *testing.B) {
	if !haveAccel {
		b.Skipf("vek kernels unavailable (features: %v)", CPUFeatures())
	}
	r := rand.New(rand.NewPCG(6, 6))
	for _, n := range []int{8, 16, 31, 32, 39, 40, 48, 63, 64, 777} {
		x, y := randomVector(r, n), randomVector(r, n)
		for _, k := range []struct {
			name string
			dot  func(a, b []float32) float32
		}{{"generic", dotGeneric}, {"vek", vek32.Dot}, {"dotAccel", dotAccel}} {
			b.Run(fmt.Sprintf("%s/n=%d", k.name, n), func(b *testing.B) {
				b.SetBytes(int64(2 * 4 * n))
				var s float32
				for b.Loop() {
					s += k.dot(x, y)
				}
				sink = s
			})
		}
	}
}
