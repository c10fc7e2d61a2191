package kernels

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// rankScored's top k equal the first k of a full sort, for k below,
// at and above the cut-over to a full sort, with tied scores (broken by
// id) and k beyond the length.
func TestRankScoredIsTheSortedPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for trial := range 300 {
		n := r.IntN(120)
		in := make([]scored, n)
		for i := range in {
			in[i] = scored{ID: uint64(r.IntN(1000)*1000 + i), Score: float64(r.IntN(20)) / 4}
		}
		want := slices.Clone(in)
		slices.SortFunc(want, func(a, b scored) int {
			if better(a.Score, a.ID, b.Score, b.ID) {
				return -1
			}
			return 1
		})
		for _, k := range []int{0, 1, 3, 10, n / 2, n, n + 5} {
			got := rankScored(slices.Clone(in), k)
			w := want
			if k > 0 && k < n {
				w = want[:k]
			}
			if len(got) != len(w) {
				t.Fatalf("trial %d, n %d, k %d: %d ranked, want %d", trial, n, k, len(got), len(w))
			}
			for i := range w {
				if got[i].ID != w[i].ID {
					t.Fatalf("trial %d, n %d, k %d: position %d is %d, want %d", trial, n, k, i, got[i].ID, w[i].ID)
				}
			}
		}
	}
}
