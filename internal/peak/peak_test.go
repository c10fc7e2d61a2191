package peak

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The streaming sum is exact on small integers at every length (every
// tail of the 32-element blocks), and reads nothing past its slice: the
// element after it is NaN.
func TestSumIsExact(t *testing.T) {
	for n := 0; n <= 300; n++ {
		buf := make([]float32, n+1)
		want := 0.0
		for i := 0; i < n; i++ {
			buf[i] = float32(i%17) - 8
			want += float64(buf[i])
		}
		buf[n] = float32(math.NaN())
		if got := sum(buf[:n]); float64(got) != want {
			t.Fatalf("n=%d: sum %v, want %v", n, got, want)
		}
		if got := sumGeneric(buf[:n]); float64(got) != want {
			t.Fatalf("n=%d: sumGeneric %v, want %v", n, got, want)
		}
	}
}

func TestRatesArePositive(t *testing.T) {
	rates := FMA(runtime.GOMAXPROCS(0), 3, 5*time.Millisecond)
	if len(rates) == 0 {
		t.Fatal("no FMA loop ran")
	}
	for _, r := range rates {
		if !(r.Median > 0 && r.Best >= r.Median && !math.IsInf(r.Best, 0)) || r.Name == "" {
			t.Errorf("FMA rate %+v", r)
		}
	}
	r := Read(2, 3, 8<<20)
	if !(r.Median > 0 && r.Best >= r.Median && !math.IsInf(r.Best, 0)) || !strings.Contains(r.Name, "sum") {
		t.Errorf("read rate %+v", r)
	}
}
