package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// DotMany equals the float64 dot of every (row, query) pair within
// rounding, on both paths: every loop tail of the columns (dim 1…33 and
// odd sizes past them), every remainder of the 3-row and 4-query tiles,
// inputs and output at every alignment inside sentinel guards that must be
// neither read into a sum nor overwritten.
func TestDotMany(t *testing.T) { forEachImplementation(t, testDotMany) }

func testDotMany(t *testing.T) {
	{
		r := rand.New(rand.NewPCG(21, 22))
		dims := []int{1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 67, 100, 384, 768, 777}
		for _, dim := range dims {
			for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 12, 13} {
				for _, m := range []int{0, 1, 3, 4, 5, 8, 9, 13} {
					if dim > 100 && (n > 7 || m > 9) {
						continue
					}
					off := (dim + n + m) % 8
					rows := randomGuarded(r, n*dim, off)
					qs := randomGuarded(r, m*dim, (off+3)%8)
					out := newGuarded(n*m, (off+5)%8)
					sr, sq := rows.snapshot(), qs.snapshot()
					DotMany(rows.elements, qs.elements, dim, out.elements)
					what := fmt.Sprintf("dim=%d rows=%d queries=%d", dim, n, m)
					for j := 0; j < m; j++ {
						for i := 0; i < n; i++ {
							want, abs := refDot(sr[i*dim:(i+1)*dim], sq[j*dim:(j+1)*dim])
							if got := out.elements[j*n+i]; !closeDot(got, want, abs) {
								t.Fatalf("%s: out[%d·%d+%d] = %v, want %v", what, j, n, i, got, want)
							}
						}
					}
					// Prefetching a next block changes nothing.
					again := make([]float32, n*m)
					DotManyPrefetch(rows.elements, qs.elements, dim, again, qs.elements)
					for i := range again {
						if math.Float32bits(again[i]) != math.Float32bits(out.elements[i]) {
							t.Fatalf("%s: DotManyPrefetch out[%d] = %v, DotMany %v", what, i, again[i], out.elements[i])
						}
					}
					rows.checkGuards(t, what+" rows")
					qs.checkGuards(t, what+" qs")
					out.checkGuards(t, what+" out")
					checkUnchanged(t, what+" rows", rows.elements, sr)
					checkUnchanged(t, what+" qs", qs.elements, sq)
				}
			}
		}
	}
}

// On integer-valued inputs small enough that every partial sum is exact,
// DotMany equals DotBatch bit for bit: the tiles cover every pair once.
func TestDotManyExactSmallIntegers(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		const dim, n, m = 72, 11, 10
		rows := make([]float32, n*dim)
		qs := make([]float32, m*dim)
		for i := range rows {
			rows[i] = float32(i*7%11) - 5
		}
		for i := range qs {
			qs[i] = float32(i*5%9) - 4
		}
		out := make([]float32, n*m)
		DotMany(rows, qs, dim, out)
		want := make([]float32, n)
		for j := 0; j < m; j++ {
			DotBatch(rows, dim, qs[j*dim:(j+1)*dim], want)
			for i := range want {
				if out[j*n+i] != want[i] {
					t.Fatalf("query %d row %d: %v, DotBatch %v", j, i, out[j*n+i], want[i])
				}
			}
		}
	})
}

func TestDotManyPanics(t *testing.T) {
	v12, v8, out := make([]float32, 12), make([]float32, 8), make([]float32, 6)
	mustPanic(t, "rows not a multiple", func() { DotMany(v12[:11], v8, 4, out) }, "DotMany", "len(rows) = 11")
	mustPanic(t, "qs not a multiple", func() { DotMany(v12, v8[:7], 4, out) }, "DotMany", "len(qs) = 7")
	mustPanic(t, "short out", func() { DotMany(v12, v8, 4, out[:5]) }, "DotMany", "len(out) = 5")
	mustPanic(t, "long out", func() { DotMany(v12, v8, 4, v8) }, "DotMany", "len(out) = 8")
	mustPanic(t, "out without rows", func() { DotMany(nil, v8, 4, out) }, "DotMany", "len(out) = 6")
	mustPanic(t, "zero dim", func() { DotMany(v12, nil, 0, nil) }, "DotMany", "dim must be positive")
	// Well-formed calls pass.
	DotMany(v12, v8, 4, out)
	DotMany(nil, v8, 4, nil)
	DotMany(v12, nil, 4, nil)
	DotMany(nil, nil, 0, nil)
}

func TestDotManyAllocatesNothing(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		const dim, n, m = 768, 10, 9
		rows, qs, out := make([]float32, n*dim), make([]float32, m*dim), make([]float32, n*m)
		if a := testing.AllocsPerRun(20, func() { DotMany(rows, qs, dim, out) }); a != 0 {
			t.Errorf("%v allocations per call, want 0", a)
		}
	})
}
