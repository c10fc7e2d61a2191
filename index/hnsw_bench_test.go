package index

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"testing"
)

// gloveDir is the shared GloVe-100 data beside the checkout.
const gloveDir = "../../shared/data/glove100/"

// loadGlove reads the first n base vectors and the queries of GloVe-100;
// the benchmarks skip when the shared data is not beside the checkout.
func loadGlove(tb testing.TB, n int) ([]float32, []float32) {
	raw, err := os.ReadFile(gloveDir + "glove100.base")
	if err != nil {
		tb.Skip(err)
	}
	base := make([]float32, n*100)
	for i := range base {
		base[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	rq, err := os.ReadFile(gloveDir + "glove100.query")
	if err != nil {
		tb.Skip(err)
	}
	q := make([]float32, 1000*100)
	for i := range q {
		q[i] = math.Float32frombits(binary.LittleEndian.Uint32(rq[4*i:]))
	}
	return base, q
}

var profIdx *HNSW

// BenchmarkGloveBuild20k inserts 20k GloVe vectors (M 16, efConstruction 100).
func BenchmarkGloveBuild20k(b *testing.B) {
	base, _ := loadGlove(b, 20000)
	for i := 0; i < b.N; i++ {
		h, _ := New(&Options{Dim: 100, M: 16, EfConstruction: 100, Capacity: 20000})
		for j := 0; j < 20000; j++ {
			h.Insert(uint64(j), base[j*100:(j+1)*100])
		}
		profIdx = h
	}
}

// BenchmarkGloveSearch searches a 50k GloVe graph at ef 160, one query per
// op, walking with the float32 vectors and with the int8 codes
// (Options.Quantize) of the same graph.
func BenchmarkGloveSearch(b *testing.B) {
	base, q := loadGlove(b, 50000)
	h, _ := New(&Options{Dim: 100, M: 16, EfConstruction: 100, Capacity: 50000, Quantize: true})
	for j := 0; j < 50000; j++ {
		h.Insert(uint64(j), base[j*100:(j+1)*100])
	}
	for _, c := range []struct {
		name string
		f32  bool
	}{{"float32", true}, {"int8", false}} {
		b.Run(c.name, func(b *testing.B) {
			opts := &SearchOptions{Ef: 160, Float32: c.f32}
			for i := 0; b.Loop(); i++ {
				qi := i % 1000
				h.Search(context.Background(), q[qi*100:(qi+1)*100], 10, opts)
			}
		})
	}
}
