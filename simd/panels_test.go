package simd

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
)

// DotRows equals the float64 dot of every (row, query) pair within
// rounding, on every path: every column count up to 33 and real dimensions
// past it, every remainder of the 6-row strips and of the 4-, 2- and
// 1-panel groups (queries 1…65 cover partial panels and every group mix),
// rows and output at every alignment inside sentinel guards that must be
// neither read into a sum nor overwritten; the padding lanes are zero.
func TestDotRows(t *testing.T) { forEachImplementation(t, testDotRows) }

func testDotRows(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	dims := []int{1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 67, 384, 768, 777}
	var p Panels
	for _, dim := range dims {
		for _, n := range []int{0, 1, 5, 6, 7, 12, 13} {
			for _, m := range []int{1, 2, 15, 16, 17, 32, 48, 64, 65, 80, 112, 128} {
				if dim > 100 && (n > 7 || m > 65) {
					continue
				}
				off := (dim + n + m) % 8
				rows := randomGuarded(r, n*dim, off)
				qs := randomGuarded(r, m*dim, (off+3)%8)
				p.Pack(qs.elements, dim)
				ld := p.Stride()
				if ld%PanelWidth != 0 || ld < m || ld >= m+PanelWidth || p.Len() != m || p.Dim() != dim {
					t.Fatalf("dim=%d m=%d: Stride %d, Len %d, Dim %d", dim, m, ld, p.Len(), p.Dim())
				}
				out := newGuarded(n*ld, (off+5)%8)
				sr, sq := rows.snapshot(), qs.snapshot()
				DotRows(rows.elements, &p, out.elements, qs.elements)
				what := fmt.Sprintf("dim=%d rows=%d queries=%d", dim, n, m)
				for i := 0; i < n; i++ {
					for j := 0; j < ld; j++ {
						got := out.elements[i*ld+j]
						if j >= m {
							if got != 0 {
								t.Fatalf("%s: padding out[%d·%d+%d] = %v, want 0", what, i, ld, j, got)
							}
							continue
						}
						want, abs := refDot(sr[i*dim:(i+1)*dim], sq[j*dim:(j+1)*dim])
						if !closeDot(got, want, abs) {
							t.Fatalf("%s: out[%d·%d+%d] = %v, want %v", what, i, ld, j, got, want)
						}
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

// On integer-valued inputs small enough that every partial sum is exact,
// DotRows equals DotBatch bit for bit, whatever the order of the sums.
func TestDotRowsExactSmallIntegers(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		const dim, n, m = 72, 13, 70
		rows := make([]float32, n*dim)
		qs := make([]float32, m*dim)
		for i := range rows {
			rows[i] = float32(i*7%11) - 5
		}
		for i := range qs {
			qs[i] = float32(i*5%9) - 4
		}
		var p Panels
		p.Pack(qs, dim)
		out := make([]float32, n*p.Stride())
		DotRows(rows, &p, out, nil)
		want := make([]float32, n)
		for j := 0; j < m; j++ {
			DotBatch(rows, dim, qs[j*dim:(j+1)*dim], want)
			for i := range want {
				if got := out[i*p.Stride()+j]; got != want[i] {
					t.Fatalf("query %d row %d: %v, DotBatch %v", j, i, got, want[i])
				}
			}
		}
	})
}

// Pack reuses its storage: a second, smaller pack leaves no stale query
// in the padding lanes.
func TestPanelsRepack(t *testing.T) {
	const dim = 5
	var p Panels
	big := make([]float32, 20*dim)
	for i := range big {
		big[i] = 1
	}
	p.Pack(big, dim)
	p.Pack(big[:3*dim], dim)
	rows := []float32{1, 1, 1, 1, 1}
	out := make([]float32, p.Stride())
	DotRows(rows, &p, out, nil)
	for j, v := range out {
		want := float32(0)
		if j < 3 {
			want = dim
		}
		if v != want {
			t.Fatalf("out[%d] = %v, want %v", j, v, want)
		}
	}
}

func TestDotRowsPanics(t *testing.T) {
	var p Panels
	mustPanic(t, "zero dim", func() { p.Pack(nil, 0) }, "Panels.Pack", "dim must be positive")
	mustPanic(t, "qs not a multiple", func() { p.Pack(make([]float32, 7), 4) }, "Panels.Pack", "len(qs) = 7")
	mustPanic(t, "nothing packed", func() { DotRows(make([]float32, 4), &Panels{}, nil, nil) }, "DotRows", "no queries packed")
	p.Pack(make([]float32, 8), 4)
	mustPanic(t, "rows not a multiple", func() { DotRows(make([]float32, 11), &p, make([]float32, 48), nil) }, "DotRows", "len(rows) = 11")
	mustPanic(t, "short out", func() { DotRows(make([]float32, 12), &p, make([]float32, 47), nil) }, "DotRows", "len(out) = 47")
	// Well-formed calls pass.
	DotRows(make([]float32, 12), &p, make([]float32, 48), nil)
	DotRows(nil, &p, nil, nil)
	DotRows(nil, &Panels{}, nil, nil)
}

func TestDotRowsAllocatesNothing(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		const dim, n, m = 768, 10, 40
		rows, qs := make([]float32, n*dim), make([]float32, m*dim)
		var p Panels
		p.Pack(qs, dim)
		out := make([]float32, n*p.Stride())
		if a := testing.AllocsPerRun(20, func() { DotRows(rows, &p, out, rows) }); a != 0 {
			t.Errorf("%v allocations per call, want 0", a)
		}
	})
}

// BenchmarkDotRows scores a cache-resident block of rows (the size package
// kernels uses) against many queries packed once, and the same with one
// DotBatch per query; GFLOP/s counts 2·rows·queries·dim per call.
func BenchmarkDotRows(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	const dim, n = 768, 126
	rows := randomVector(r, n*dim)
	forEachImplementationB(b, func(b *testing.B) {
		for _, m := range []int{16, 32, 64, 256} {
			var p Panels
			p.Pack(randomVector(r, m*dim), dim)
			out := make([]float32, n*p.Stride())
			flops := 2 * float64(n*m*dim)
			b.Run(fmt.Sprintf("queries=%d/DotRows", m), func(b *testing.B) {
				for b.Loop() {
					DotRows(rows, &p, out, nil)
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
			qs := randomVector(r, m*dim)
			b.Run(fmt.Sprintf("queries=%d/DotBatch", m), func(b *testing.B) {
				for b.Loop() {
					for j := 0; j < m; j++ {
						DotBatch(rows, dim, qs[j*dim:(j+1)*dim], out[j*n:(j+1)*n])
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	})
}

// panels_amd64.s is what gen_panels.go writes: nobody edits the kernels by
// hand and forgets the generator.
func TestPanelsAssemblyGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	out, err := exec.Command("go", "run", "gen_panels.go").Output()
	if err != nil {
		t.Fatalf("go run gen_panels.go: %v", err)
	}
	have, err := os.ReadFile("panels_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, have) {
		t.Fatal("panels_amd64.s differs from gen_panels.go's output: run go generate ./simd")
	}
}
