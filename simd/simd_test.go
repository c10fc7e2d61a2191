package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// implementation is one set of kernels that tests and benchmarks run over,
// in the manner of crypto/internal/cryptotest.TestAllImplementations.
type implementation struct {
	name  string
	accel bool
}

var implementations = []implementation{
	{name: "generic", accel: false},
	{name: "accelerated", accel: true},
}

// forEachImplementation runs f as a subtest once per implementation this
// build and CPU can run, skipping (and saying so) the ones it cannot. The
// subtests must not run in parallel: they flip the package's dispatch.
func forEachImplementation(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) {
			if impl.accel && !haveAccel {
				t.Skipf("accelerated kernels unavailable (features: %v)", CPUFeatures())
			}
			defer setAccelerated(impl.accel)()
			f(t)
		})
	}
}

// testSizes are the vector lengths every kernel is checked at: every loop
// tail up to 33, odd sizes past the unrolled blocks, and real embedding
// dimensions.
var testSizes = func() []int {
	var s []int
	for n := 0; n <= 33; n++ {
		s = append(s, n)
	}
	return append(s, 63, 64, 65, 67, 127, 129, 384, 768, 777, 1024, 1536)
}()

// offsets are the element offsets, within guard padding, at which inputs
// and outputs start: every 4-byte alignment modulo 32 bytes.
var offsets = []int{0, 1, 2, 3, 4, 5, 6, 7}

const guardLen = 16

// sentinel is a NaN with a recognisable payload: any kernel that reads it
// returns NaN, and any kernel that writes over it is caught by its bits.
var sentinel = math.Float32frombits(0x7fc0dead)

// guarded is a slice of n elements starting at element off of a buffer
// padded on both sides with sentinel values.
type guarded struct {
	buf      []float32
	off, n   int
	elements []float32 // buf[guardLen+off:][:n:n]
}

func newGuarded(n, off int) *guarded {
	buf := make([]float32, guardLen+off+n+guardLen)
	for i := range buf {
		buf[i] = sentinel
	}
	start := guardLen + off
	return &guarded{buf: buf, off: off, n: n, elements: buf[start : start+n : start+n]}
}

// randomGuarded is newGuarded filled with uniform values in [-1, 1).
func randomGuarded(r *rand.Rand, n, off int) *guarded {
	g := newGuarded(n, off)
	for i := range g.elements {
		g.elements[i] = 2*r.Float32() - 1
	}
	return g
}

// checkGuards fails t if anything outside g.elements changed.
func (g *guarded) checkGuards(t *testing.T, what string) {
	t.Helper()
	start := guardLen + g.off
	for i, v := range g.buf {
		if i >= start && i < start+g.n {
			continue
		}
		if math.Float32bits(v) != math.Float32bits(sentinel) {
			t.Fatalf("%s: guard element %d (relative index %d) overwritten with %v", what, i, i-start, v)
		}
	}
}

// snapshot returns a copy of g.elements, to check inputs are not modified.
func (g *guarded) snapshot() []float32 { return append([]float32(nil), g.elements...) }

func checkUnchanged(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: input element %d modified: %v, was %v", what, i, got[i], want[i])
		}
	}
}

// refDot returns the dot product of a and b in float64 and the sum of the
// magnitudes of the products, which scales the float32 rounding error.
func refDot(a, b []float32) (dot, absSum float64) {
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		dot += p
		absSum += math.Abs(p)
	}
	return dot, absSum
}

// closeDot reports whether a float32 dot product got is within rounding
// error of the exact want. Kernels sum in float32 in blocks; the bound
// 1e-5 * sum|a_i*b_i| holds comfortably for the sizes tested while a
// missing, duplicated or out-of-bounds element breaks it.
func closeDot(got float32, want, absSum float64) bool {
	return math.Abs(float64(got)-want) <= 1e-5*absSum+1e-30
}

func TestDot(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, n := range testSizes {
			for _, oa := range offsets {
				ob := (oa*3 + 1) % 8 // mutually misaligned inputs
				a := randomGuarded(r, n, oa)
				b := randomGuarded(r, n, ob)
				sa, sb := a.snapshot(), b.snapshot()
				got := Dot(a.elements, b.elements)
				want, abs := refDot(sa, sb)
				if !closeDot(got, want, abs) {
					t.Fatalf("n=%d offsets=%d,%d: Dot = %v, want %v (|err| %g > tol %g)",
						n, oa, ob, got, want, math.Abs(float64(got)-want), 1e-5*abs)
				}
				what := fmt.Sprintf("n=%d offsets=%d,%d", n, oa, ob)
				a.checkGuards(t, what+" a")
				b.checkGuards(t, what+" b")
				checkUnchanged(t, what+" a", a.elements, sa)
				checkUnchanged(t, what+" b", b.elements, sb)
			}
		}
	})
}

// TestDotExactSmallIntegers checks exact results where float32 arithmetic
// is exact in any order: small integers, whose products and partial sums
// stay below 2^24.
func TestDotExactSmallIntegers(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		for _, n := range testSizes {
			a := make([]float32, n)
			b := make([]float32, n)
			want := 0
			for i := range a {
				x, y := i%7-3, (i*5)%11-5
				a[i], b[i] = float32(x), float32(y)
				want += x * y
			}
			if got := Dot(a, b); got != float32(want) {
				t.Errorf("n=%d: Dot = %v, want %d", n, got, want)
			}
			sq := 0
			for _, v := range a {
				sq += int(v * v)
			}
			if got := SquaredNorm(a); got != float32(sq) {
				t.Errorf("n=%d: SquaredNorm = %v, want %d", n, got, sq)
			}
		}
	})
}

func TestSquaredNorm(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, n := range testSizes {
			for _, off := range offsets {
				a := randomGuarded(r, n, off)
				sa := a.snapshot()
				got := SquaredNorm(a.elements)
				want, abs := refDot(sa, sa)
				if !closeDot(got, want, abs) {
					t.Fatalf("n=%d offset=%d: SquaredNorm = %v, want %v", n, off, got, want)
				}
				what := fmt.Sprintf("n=%d offset=%d", n, off)
				a.checkGuards(t, what)
				checkUnchanged(t, what, a.elements, sa)
			}
		}
	})
}

// batchDims and batchRows are the shapes DotBatch and SquaredNorms are
// checked at: row counts around the four-row blocks, dims around the
// unrolled blocks and the vek cut-off.
var (
	batchDims = []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 63, 67, 384, 777}
	batchRows = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13}
)

func TestDotBatch(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, dim := range batchDims {
			for _, n := range batchRows {
				off := (dim + n) % 8
				rows := randomGuarded(r, n*dim, off)
				q := randomGuarded(r, dim, (off+3)%8)
				out := newGuarded(n, (off+5)%8)
				sr, sq := rows.snapshot(), q.snapshot()
				DotBatch(rows.elements, dim, q.elements, out.elements)
				what := fmt.Sprintf("dim=%d rows=%d", dim, n)
				for i, got := range out.elements {
					want, abs := refDot(sr[i*dim:(i+1)*dim], sq)
					if !closeDot(got, want, abs) {
						t.Fatalf("%s: out[%d] = %v, want %v", what, i, got, want)
					}
				}
				rows.checkGuards(t, what+" rows")
				q.checkGuards(t, what+" q")
				out.checkGuards(t, what+" out")
				checkUnchanged(t, what+" rows", rows.elements, sr)
				checkUnchanged(t, what+" q", q.elements, sq)
			}
		}
	})
}

// TestDotBatchMatchesDot checks DotBatch against Dot, row by row, at real
// embedding sizes.
func TestDotBatchMatchesDot(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, dim := range []int{384, 768, 1024, 1536} {
			const n = 11
			rows := randomGuarded(r, n*dim, 1).elements
			q := randomGuarded(r, dim, 2).elements
			out := make([]float32, n)
			DotBatch(rows, dim, q, out)
			for i := range out {
				row := rows[i*dim : (i+1)*dim]
				d := Dot(row, q)
				_, abs := refDot(row, q)
				if math.Abs(float64(out[i]-d)) > 2e-5*abs {
					t.Errorf("dim=%d: DotBatch out[%d] = %v, Dot = %v", dim, i, out[i], d)
				}
			}
		}
	})
}

func TestSquaredNorms(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 10))
		for _, dim := range batchDims {
			for _, n := range batchRows {
				off := (dim*3 + n) % 8
				rows := randomGuarded(r, n*dim, off)
				out := newGuarded(n, (off+1)%8)
				sr := rows.snapshot()
				SquaredNorms(rows.elements, dim, out.elements)
				what := fmt.Sprintf("dim=%d rows=%d", dim, n)
				for i, got := range out.elements {
					row := sr[i*dim : (i+1)*dim]
					want, abs := refDot(row, row)
					if !closeDot(got, want, abs) {
						t.Fatalf("%s: out[%d] = %v, want %v", what, i, got, want)
					}
				}
				rows.checkGuards(t, what+" rows")
				out.checkGuards(t, what+" out")
				checkUnchanged(t, what+" rows", rows.elements, sr)
			}
		}
	})
}

// closeElementwise reports whether got is within a few float32 rounding
// errors of want, an exact value whose terms had magnitudes summing to mag.
func closeElementwise(got float32, want, mag float64) bool {
	return math.Abs(float64(got)-want) <= 3*0x1p-24*mag+1e-38
}

func TestAxpy(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		for _, n := range testSizes {
			for _, off := range offsets {
				alpha := 4*r.Float32() - 2
				x := randomGuarded(r, n, off)
				y := randomGuarded(r, n, (off*5+2)%8)
				sx, sy := x.snapshot(), y.snapshot()
				Axpy(alpha, x.elements, y.elements)
				what := fmt.Sprintf("n=%d offset=%d alpha=%v", n, off, alpha)
				for i, got := range y.elements {
					ax := float64(alpha) * float64(sx[i])
					want := float64(sy[i]) + ax
					if !closeElementwise(got, want, math.Abs(ax)+math.Abs(float64(sy[i]))) {
						t.Fatalf("%s: y[%d] = %v, want %v", what, i, got, want)
					}
				}
				x.checkGuards(t, what+" x")
				y.checkGuards(t, what+" y")
				checkUnchanged(t, what+" x", x.elements, sx)
			}
		}
	})
}

// TestAxpySameSlice checks the one permitted overlap: x and y identical.
func TestAxpySameSlice(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(13, 14))
		for _, n := range testSizes {
			y := randomGuarded(r, n, n%8)
			sy := y.snapshot()
			Axpy(0.5, y.elements, y.elements)
			for i, got := range y.elements {
				want := 1.5 * float64(sy[i])
				if !closeElementwise(got, want, math.Abs(want)) {
					t.Fatalf("n=%d: y[%d] = %v, want %v", n, i, got, want)
				}
			}
			y.checkGuards(t, fmt.Sprintf("n=%d", n))
		}
	})
}

// TestScale checks Scale exactly: each element is one correctly rounded
// float32 multiplication, whatever the kernel.
func TestScale(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(15, 16))
		for _, n := range testSizes {
			for _, off := range offsets {
				alpha := 4*r.Float32() - 2
				x := randomGuarded(r, n, off)
				sx := x.snapshot()
				Scale(alpha, x.elements)
				what := fmt.Sprintf("n=%d offset=%d alpha=%v", n, off, alpha)
				for i, got := range x.elements {
					if want := sx[i] * alpha; got != want {
						t.Fatalf("%s: x[%d] = %v, want %v", what, i, got, want)
					}
				}
				x.checkGuards(t, what)
			}
		}
	})
}

func TestNormalize(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(17, 18))
		for _, n := range testSizes {
			if n == 0 {
				continue
			}
			for _, mag := range []float32{1, 1e-30, 1e-42, 1e30, 3e38} {
				x := newGuarded(n, n%8)
				for i := range x.elements {
					x.elements[i] = mag * (2*r.Float32() - 1)
				}
				x.elements[n-1] = mag // never a zero vector
				sx := x.snapshot()
				want, _ := refDot(sx, sx)
				wantNorm := math.Sqrt(want)
				got := Normalize(x.elements)
				what := fmt.Sprintf("n=%d magnitude=%g", n, mag)
				if float64(got) > math.MaxFloat32 {
					if wantNorm <= math.MaxFloat32*(1+0x1p-24) {
						t.Fatalf("%s: Normalize = %v, want %v", what, got, wantNorm)
					}
				} else if math.Abs(float64(got)-wantNorm) > 1e-5*wantNorm+0x1p-149 { // the norm may be subnormal
					t.Fatalf("%s: Normalize = %v, want %v", what, got, wantNorm)
				}
				var ss float64
				for i, v := range x.elements {
					ss += float64(v) * float64(v)
					if w := float64(sx[i]) / wantNorm; math.Abs(float64(v)-w) > 1e-6 {
						t.Fatalf("%s: x[%d] = %v, want %v", what, i, v, w)
					}
				}
				if math.Abs(math.Sqrt(ss)-1) > 1e-5 {
					t.Fatalf("%s: norm after Normalize = %v, want 1", what, math.Sqrt(ss))
				}
				x.checkGuards(t, what)
			}
		}
	})
}

func TestNormalizeZero(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		for _, n := range testSizes {
			x := newGuarded(n, 3)
			clear(x.elements)
			if got := Normalize(x.elements); got != 0 {
				t.Errorf("n=%d: Normalize(zero vector) = %v, want 0", n, got)
			}
			for i, v := range x.elements {
				if math.Float32bits(v) != 0 {
					t.Fatalf("n=%d: x[%d] = %v after Normalize of zero vector, want +0", n, i, v)
				}
			}
			x.checkGuards(t, fmt.Sprintf("n=%d", n))
		}
	})
}

func TestNormalizeNonFinite(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		for _, tc := range []struct {
			bad  float32
			want func(float32) bool
		}{
			{float32(math.NaN()), func(f float32) bool { return f != f }},
			{float32(math.Inf(1)), func(f float32) bool { return math.IsInf(float64(f), 1) }},
			{float32(math.Inf(-1)), func(f float32) bool { return math.IsInf(float64(f), 1) }},
		} {
			for _, n := range []int{1, 7, 33, 768} {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(i + 1)
				}
				x[n/2] = tc.bad
				before := append([]float32(nil), x...)
				if got := Normalize(x); !tc.want(got) {
					t.Errorf("n=%d with %v: Normalize = %v", n, tc.bad, got)
				}
				checkUnchanged(t, fmt.Sprintf("n=%d with %v", n, tc.bad), x, before)
			}
		}
	})
}

// TestDispatch checks that the exported functions run the kernels of the
// selected implementation, bit for bit. (The kernels sum in different
// orders, so on random data a call routed to the wrong kernel differs in
// the last bits.)
func TestDispatch(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(19, 20))
		const dim, n = 777, 5
		rows := randomGuarded(r, n*dim, 0).elements
		q := randomGuarded(r, dim, 0).elements
		dot, dotBatch := dotGeneric, dotBatchGeneric
		if useAccel {
			dot, dotBatch = dotAccel, dotBatchAccel
		}
		if got, want := Dot(rows[:dim], q), dot(rows[:dim], q); math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("Dot = %v, want %v from the %s kernel", got, want, Path())
		}
		if got, want := SquaredNorm(q), dot(q, q); math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("SquaredNorm = %v, want %v from the %s kernel", got, want, Path())
		}
		got, want := make([]float32, n), make([]float32, n)
		DotBatch(rows, dim, q, got)
		dotBatch(rows, dim, q, want)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Errorf("DotBatch out[%d] = %v, want %v from the %s kernel", i, got[i], want[i], Path())
			}
		}
		SquaredNorms(rows, dim, got)
		for i := range got {
			row := rows[i*dim : (i+1)*dim]
			if w := dot(row, row); math.Float32bits(got[i]) != math.Float32bits(w) {
				t.Errorf("SquaredNorms out[%d] = %v, want %v from the %s kernel", i, got[i], w, Path())
			}
		}
	})
}

// mustPanic fails t unless f panics with a message from this package that
// mentions every string in want.
func mustPanic(t *testing.T, name string, f func(), want ...string) {
	t.Helper()
	var msg string
	func() {
		defer func() {
			if r := recover(); r != nil {
				msg = fmt.Sprint(r)
				if msg == "" {
					msg = "(empty panic message)"
				}
			}
		}()
		f()
	}()
	if msg == "" {
		t.Errorf("%s: did not panic", name)
		return
	}
	for _, w := range append([]string{"simd: "}, want...) {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: panic %q does not mention %q", name, msg, w)
		}
	}
}

func TestLengthMismatchPanics(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		v3, v4 := make([]float32, 3), make([]float32, 4)
		v12, out := make([]float32, 12), make([]float32, 3)
		mustPanic(t, "Dot(3, 4)", func() { Dot(v3, v4) }, "Dot", "len(a) = 3", "len(b) = 4")
		mustPanic(t, "Dot(4, 3)", func() { Dot(v4, v3) }, "Dot")
		mustPanic(t, "Dot(0, 3)", func() { Dot(nil, v3) }, "Dot")
		mustPanic(t, "Axpy", func() { Axpy(1, v3, v4) }, "Axpy", "len(x) = 3", "len(y) = 4")
		mustPanic(t, "DotBatch short q", func() { DotBatch(v12, 4, v3, out) }, "DotBatch", "len(q) = 3")
		mustPanic(t, "DotBatch short rows", func() { DotBatch(v12[:11], 4, v4, out) }, "DotBatch", "len(rows) = 11")
		mustPanic(t, "DotBatch long rows", func() { DotBatch(v12, 4, v4, out[:2]) }, "DotBatch", "len(rows) = 12")
		mustPanic(t, "DotBatch long out", func() { DotBatch(v12, 4, v4, v4) }, "DotBatch")
		mustPanic(t, "DotBatch negative dim", func() { DotBatch(nil, -1, nil, nil) }, "DotBatch", "negative dim")
		mustPanic(t, "DotBatch dim 0 with rows", func() { DotBatch(v3, 0, nil, out) }, "DotBatch")
		mustPanic(t, "SquaredNorms short rows", func() { SquaredNorms(v12[:10], 4, out) }, "SquaredNorms")
		mustPanic(t, "SquaredNorms negative dim", func() { SquaredNorms(nil, -2, nil) }, "SquaredNorms")

		// The checks must not reject well-formed calls either.
		Dot(nil, nil)
		DotBatch(v12, 4, v4, out)
		DotBatch(nil, 0, nil, out)
		DotBatch(nil, 5, make([]float32, 5), nil)
		SquaredNorms(v12, 3, v4)
		Axpy(2, v3, v3)
	})
}

func TestPath(t *testing.T) {
	t.Logf("Path() = %q, CPUFeatures() = %v", Path(), CPUFeatures())
	wantDefault := genericName
	if haveAccel {
		wantDefault = accelName
	}
	if got := Path(); got != wantDefault {
		t.Errorf("Path() = %q, want %q", got, wantDefault)
	}
	f := CPUFeatures()
	if haveAccel && !(f.AVX2 && f.FMA) {
		t.Errorf("accelerated path chosen without AVX2 and FMA: %v", f)
	}
	func() {
		defer setAccelerated(false)()
		if got := Path(); got != genericName {
			t.Errorf("Path() with acceleration off = %q, want %q", got, genericName)
		}
	}()
	if got := Path(); got != wantDefault {
		t.Errorf("Path() after restore = %q, want %q", got, wantDefault)
	}
	if !haveAccel {
		mustPanic(t, "setAccelerated(true)", func() { setAccelerated(true) }, "not available")
	}
}

func TestFeaturesString(t *testing.T) {
	for _, tc := range []struct {
		f    Features
		want string
	}{
		{Features{}, "none"},
		{Features{AVX2: true, FMA: true}, "avx2 fma"},
		{Features{AVX2: true, FMA: true, AVX512F: true}, "avx2 fma avx512f"},
	} {
		if got := tc.f.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func TestNoAllocations(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		const dim, n = 768, 8
		rows := make([]float32, n*dim)
		q := make([]float32, dim)
		out := make([]float32, n)
		for i := range rows {
			rows[i] = float32(i%13) - 6
		}
		for i := range q {
			q[i] = float32(i%5) - 2
		}
		for name, f := range map[string]func(){
			"Dot":          func() { Dot(q, q) },
			"DotBatch":     func() { DotBatch(rows, dim, q, out) },
			"SquaredNorms": func() { SquaredNorms(rows, dim, out) },
			"Axpy":         func() { Axpy(1e-3, q, rows[:dim]) },
			"Scale":        func() { Scale(1, q) },
			"Normalize":    func() { Normalize(q) },
		} {
			if a := testing.AllocsPerRun(20, f); a != 0 {
				t.Errorf("%s: %v allocations per call, want 0", name, a)
			}
		}
	})
}

// DotInt8 equals the exact integer dot on both paths, at every length up
// to 300 and at the extremes of the code range, with guard bytes that
// must not be read into the sum.
func TestDotInt8(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 2))
	exact := func(a, b []int8) int64 {
		var s int64
		for i := range a {
			s += int64(a[i]) * int64(b[i])
		}
		return s
	}
	for _, accel := range []bool{false, true} {
		if accel && !haveAccel {
			continue
		}
		restore := setAccelerated(accel)
		for n := 0; n <= 300; n++ {
			buf := make([]int8, 2*(n+8))
			for i := range buf {
				buf[i] = int8(r.IntN(256) - 128)
			}
			a, b := buf[1:n+1], buf[n+9:2*n+9] // odd offsets: unaligned
			if got, want := DotInt8(a, b), exact(a, b); int64(got) != want {
				t.Fatalf("accel %v n %d: %d, want %d", accel, n, got, want)
			}
		}
		for _, n := range []int{4099, MaxInt8Len} {
			big := make([]int8, n)
			for i := range big {
				big[i] = -128
			}
			if got := DotInt8(big, big); int64(got) != int64(n)*128*128 {
				t.Fatalf("accel %v: extremes at %d: %d", accel, n, got)
			}
		}
		restore()
	}
}

// QuantizeInt8 codes every element within half a step and pads with zeros.
func TestQuantizeInt8(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 2))
	v := make([]float32, 100)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	dst := make([]int8, 128)
	for i := range dst {
		dst[i] = 9
	}
	s := QuantizeInt8(v, dst)
	for i, x := range v {
		if d := math.Abs(float64(x - s*float32(dst[i]))); d > float64(s)/2+1e-6 {
			t.Fatalf("element %d: %v coded %d·%v", i, x, dst[i], s)
		}
	}
	for _, c := range dst[100:] {
		if c != 0 {
			t.Fatal("padding not zeroed")
		}
	}
	if s := QuantizeInt8(make([]float32, 4), dst[:4]); s != 0 || dst[0] != 0 {
		t.Fatal("zero vector")
	}
}

// randInt8 returns n int8s drawn uniformly from the whole range.
func randInt8(r *rand.Rand, n int) []int8 {
	v := make([]int8, n)
	for i := range v {
		v[i] = int8(r.IntN(256) - 128)
	}
	return v
}

// DotInt8Rows equals DotInt8 per row on both paths, for strides that the
// AVX2 kernel takes (multiples of 32) and ones it leaves to the generic
// loop, and refuses rows outside the table.
func TestDotInt8Rows(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 2))
	for _, accel := range []bool{false, true} {
		if accel && !haveAccel {
			continue
		}
		restore := setAccelerated(accel)
		for _, stride := range []int{0, 1, 31, 32, 64, 100, 128, 768} {
			const nrows = 50
			rows, q := randInt8(r, nrows*stride), randInt8(r, stride)
			ids := []uint32{49, 0, 7, 7, 23}
			out := make([]int32, len(ids)+1)
			out[len(ids)] = 77
			DotInt8Rows(q, rows, ids, out)
			for i, id := range ids {
				if want := DotInt8(q, rows[int(id)*stride:int(id+1)*stride]); out[i] != want {
					t.Fatalf("accel %v stride %d row %d: %d, want %d", accel, stride, id, out[i], want)
				}
			}
			if out[len(ids)] != 77 {
				t.Fatal("wrote past the ids")
			}
			if stride > 0 {
				mustPanic(t, "row outside", func() { DotInt8Rows(q, rows, []uint32{nrows}, out) }, "outside")
			}
		}
		restore()
	}
}
