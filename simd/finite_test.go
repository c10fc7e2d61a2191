package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Finite agrees with a per-element math.IsNaN/IsInf test, on the
// accelerated path and the generic one, for every length up to 200 with a
// NaN, +Inf or −Inf planted at each position (and none), among values
// that are finite but extreme: the largest float32, subnormals, −0.
func TestFinite(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	extreme := []float32{math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Copysign(0, -1)), 1, -3.4e38}
	bad := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(0xffffffff), math.Float32frombits(0x7f800001)}
	want := func(v []float32) bool {
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return false
			}
		}
		return true
	}
	check := func(v []float32) {
		t.Helper()
		w := want(v)
		if g := Finite(v); g != w {
			t.Fatalf("Finite(len %d) = %v, want %v", len(v), g, w)
		}
		if g := finiteGeneric(v); g != w {
			t.Fatalf("finiteGeneric(len %d) = %v, want %v", len(v), g, w)
		}
		if g := finiteAccel(v); g != w {
			t.Fatalf("finiteAccel(len %d) = %v, want %v", len(v), g, w)
		}
	}
	for n := 0; n <= 200; n++ {
		v := make([]float32, n)
		for i := range v {
			v[i] = extreme[r.IntN(len(extreme))] * float32(r.Float64())
			if r.IntN(4) == 0 {
				v[i] = extreme[r.IntN(len(extreme))]
			}
		}
		check(v)
		for i := range v {
			old := v[i]
			v[i] = bad[(n+i)%len(bad)]
			check(v)
			v[i] = old
		}
	}
}

func BenchmarkFinite(b *testing.B) {
	v := make([]float32, 768)
	for i := range v {
		v[i] = float32(i) / 768
	}
	b.SetBytes(int64(4 * len(v)))
	for b.Loop() {
		if !Finite(v) {
			b.Fatal("not finite")
		}
	}
}
