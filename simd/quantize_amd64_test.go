//go:build !noasm && amd64

package simd

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The AVX2 quantizer gives the generic loop's scale and codes bit for bit:
// random lengths (blocks of 32 and remainders), ties that round to even
// (values at k+½ steps), signs, zeros, one large element, tiny and
// subnormal values, and dst longer than v (its tail zeroed).
func TestQuantizeInt8Kernel(t *testing.T) {
	if !haveAccel {
		t.Skip("no AVX2 here")
	}
	r := rand.New(rand.NewPCG(31, 7))
	cases := [][]float32{nil, {0}, make([]float32, 64), {1, -1}}
	for _, n := range []int{1, 31, 32, 33, 63, 64, 100, 384, 768, 1536, 1537} {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		cases = append(cases, v)
		// Ties: with max 127, v·inv = v exactly; halves round to even.
		w := make([]float32, n)
		for i := range w {
			w[i] = float32(r.IntN(254)-127) + 0.5
		}
		w[0] = 127
		cases = append(cases, w)
		// One spike over tiny and subnormal values.
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64()) * 1e-40
		}
		s[n/2] = -3e30
		cases = append(cases, s)
	}
	for ci, v := range cases {
		want := make([]int8, len(v)+5)
		got := slices.Repeat([]int8{9}, len(v)+5)
		for i := range want {
			want[i] = 7 // the tail must be cleared by both
		}
		ws := quantizeInt8Generic(v, want)
		gs := quantizeInt8Accel(v, got)
		if math.Float32bits(ws) != math.Float32bits(gs) || !slices.Equal(want, got) {
			t.Fatalf("case %d (n = %d): accel scale %v codes %v, generic %v %v", ci, len(v), gs, got, ws, want)
		}
	}
}

func BenchmarkQuantizeInt8(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, 768)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	dst := make([]int8, 768)
	b.Run("generic", func(b *testing.B) {
		for b.Loop() {
			quantizeInt8Generic(v, dst)
		}
	})
	b.Run("avx2", func(b *testing.B) {
		for b.Loop() {
			quantizeInt8Accel(v, dst)
		}
	})
}
