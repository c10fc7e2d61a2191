//go:build amd64 && !noasm

package peak

import "testing"

// The assembly sum equals the generic one on inputs where both are exact.
func TestSumAVX2MatchesGeneric(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2")
	}
	for _, n := range []int{32, 64, 96, 128, 4096 + 32} {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%23) - 11
		}
		if a, g := sumAVX2(&v[0], n), sumGeneric(v); a != g {
			t.Errorf("n=%d: sumAVX2 %v, sumGeneric %v", n, a, g)
		}
	}
}
