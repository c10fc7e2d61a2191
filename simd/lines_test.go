package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// AboveLines sets exactly the bits of the pairs whose float64 line clears
// the threshold, away from it by more than float32 rounding (pairs within
// that distance may go either way), on every path: rows 0…9, one to five
// panels, ±Inf intercepts, and masks inside guards that stay untouched.
func TestAboveLines(t *testing.T) { forEachImplementation(t, testAboveLines) }

func testAboveLines(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for n := 0; n <= 9; n++ {
		for np := 1; np <= 5; np++ {
			ld := np * PanelWidth
			sims := make([]float32, n*ld)
			for i := range sims {
				sims[i] = 2*r.Float32() - 1
			}
			a, c := make([]float32, n), make([]float32, n)
			for i := range a {
				a[i], c[i] = 2*r.Float32(), r.Float32()-0.5
				switch i % 5 {
				case 3:
					a[i], c[i] = 0, float32(math.Inf(-1)) // a masked row
				case 4:
					c[i] = float32(math.Inf(1)) // a row that always passes
				}
			}
			thr := make([]float32, ld)
			for j := range thr {
				thr[j] = 1.5*r.Float32() - 0.5
			}
			thr[0] = float32(math.Inf(-1))
			const guard = 0xbeef
			buf := make([]uint16, n*np+2)
			for i := range buf {
				buf[i] = guard
			}
			masks := buf[1 : 1+n*np]
			AboveLines(sims, ld, a, c, thr, masks)
			if buf[0] != guard || buf[len(buf)-1] != guard {
				t.Fatalf("n=%d panels=%d: guards overwritten", n, np)
			}
			for i := 0; i < n; i++ {
				for j := 0; j < ld; j++ {
					line := float64(a[i])*float64(sims[i*ld+j]) + float64(c[i])
					got := masks[i*np+j/PanelWidth]>>(j%PanelWidth)&1 == 1
					near := math.Abs(line-float64(thr[j])) <= 1e-6*(math.Abs(float64(a[i]))+math.Abs(float64(c[i]))+1)
					if want := line >= float64(thr[j]); got != want && !near {
						t.Fatalf("n=%d panels=%d: row %d query %d: bit %v, line %v vs threshold %v", n, np, i, j, got, line, thr[j])
					}
				}
			}
		}
	}
}

func TestAboveLinesPanics(t *testing.T) {
	s, v, m := make([]float32, 64), make([]float32, 2), make([]uint16, 4)
	mustPanic(t, "ld", func() { AboveLines(s, 24, v, v, s, m) }, "AboveLines", "ld = 24")
	mustPanic(t, "c", func() { AboveLines(s, 16, v, v[:1], s, m) }, "AboveLines", "len(c) = 1")
	mustPanic(t, "thr", func() { AboveLines(s, 32, v, v, s[:31], m) }, "AboveLines", "len(thr) = 31")
	mustPanic(t, "sims", func() { AboveLines(s[:63], 32, v, v, s, m) }, "AboveLines", "len(sims) = 63")
	mustPanic(t, "masks", func() { AboveLines(s, 32, v, v, s, m[:3]) }, "AboveLines", "len(masks) = 3")
	AboveLines(s, 32, v, v, s, m)
	AboveLines(nil, 16, nil, nil, s, nil)
}
