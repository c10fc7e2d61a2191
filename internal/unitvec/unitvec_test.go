package unitvec

import (
	"math"
	"testing"
)

func TestNormalize(t *testing.T) {
	dst := make([]float32, 3)
	if p, _ := Normalize([]float32{3, 0, 4}, dst); p != OK || dst[0] != 0.6 || dst[2] != 0.8 {
		t.Errorf("Normalize(3,0,4) = %v %v", p, dst)
	}
	before := append([]float32(nil), dst...)
	if p, i := Normalize([]float32{1, float32(math.NaN()), 0}, dst); p != NotFinite || i != 1 {
		t.Errorf("NaN: %v at %d", p, i)
	}
	if p, i := Normalize([]float32{1, 0, float32(math.Inf(-1))}, dst); p != NotFinite || i != 2 {
		t.Errorf("-Inf: %v at %d", p, i)
	}
	if p, _ := Normalize([]float32{0, 0, 0}, dst); p != Zero {
		t.Errorf("zero: %v", p)
	}
	for i := range dst {
		if dst[i] != before[i] {
			t.Fatal("a rejected vector changed dst")
		}
	}
	v := []float32{1e-30, 1e-30}
	if p, _ := Normalize(v, v); p != OK || math.Abs(float64(v[0])-math.Sqrt2/2) > 1e-6 {
		t.Errorf("tiny vector in place: %v %v", p, v)
	}
}
