package index

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// descend is a Search's greedy descent to level 0 for the unit query q.
func descend(h *HNSW, q []float32) (uint32, float32) {
	top := h.top.Load()
	ep, topLevel := uint32(top), int(top>>32)-1
	epd := h.dist(q, ep)
	for l := topLevel; l > 0; l-- {
		ep, epd = h.greedy(q, nil, ep, epd, l)
	}
	return ep, epd
}

// layerResults runs layer, the two-heap search, from where a Search
// starts: the reference the beam must agree with.
func layerResults(h *HNSW, s *searcher, q []float32, ef int, skipDead bool) []distID {
	ep, epd := descend(h, q)
	s.layer(h, q, ep, epd, ef, 0, skipDead, nil)
	return s.res.sorted(nil)
}

// beamResults is layerResults with the beam.
func beamResults(h *HNSW, s *searcher, q []float32, ef int, skipDead bool) []distID {
	ep, epd := descend(h, q)
	s.walk(h, q, ep, epd, ef, 0, skipDead)
	return s.beam.sorted(nil)
}

// The beam visits what layer visits: on every query the two searches
// return the same ef results in the same order, with and without
// tombstones (which route but are not returned), at beam widths from 1
// to past the index's size.
func TestBeamAgreesWithLayer(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 3))
	mix := newMixture(r, 20, 24)
	h, _ := buildIndex(t, r, mix, 3000)
	queries := mix.sample(r, 60)
	check := func(name string, skipDead bool) {
		t.Helper()
		s := &searcher{}
		for _, ef := range []int{1, 2, 10, 64, 200, 4000} {
			for qi, q := range queries {
				u := make([]float32, len(q))
				if err := unitVector(q, u, len(q)); err != nil {
					t.Fatal(err)
				}
				want := layerResults(h, s, u, ef, skipDead)
				got := beamResults(h, s, u, ef, skipDead)
				if !slices.Equal(got, want) {
					t.Fatalf("%s, ef %d, query %d: beam %d results %v…, layer %d %v…", name, ef, qi, len(got), got[:min(5, len(got))], len(want), want[:min(5, len(want))])
				}
				if skipDead {
					for _, d := range got {
						if h.isDead(d.id) {
							t.Fatalf("%s: deleted node %d returned", name, d.id)
						}
					}
				}
			}
		}
	}
	check("no tombstones", true)
	for k := uint64(0); k < 3000; k += 7 {
		if err := h.Delete(k); err != nil {
			t.Fatal(err)
		}
	}
	check("every 7th deleted", true)
	check("tombstones as results (inserts)", false)
}

// Equal distances come out ordered by id, as from the heaps.
func TestBeamTiesByID(t *testing.T) {
	var b beam
	for _, id := range []uint32{9, 3, 7, 1, 5} {
		b.admit(0.5, id, true, 10)
	}
	b.admit(0.25, 8, true, 10)
	b.admit(0.75, 2, false, 10)
	got := b.sorted(nil)
	want := []distID{{0.25, 8}, {0.5, 1}, {0.5, 3}, {0.5, 5}, {0.5, 7}, {0.5, 9}}
	if !slices.Equal(got, want) {
		t.Fatalf("sorted = %v, want %v", got, want)
	}
	// A full beam drops the farthest results and the route-only entries
	// behind the farthest one kept.
	b.reset()
	b.admit(0.1, 1, true, 2)
	b.admit(0.3, 2, false, 2)
	b.admit(0.4, 3, true, 2)
	b.admit(0.2, 4, true, 2)
	if got := b.sorted(nil); !slices.Equal(got, []distID{{0.1, 1}, {0.2, 4}}) || len(b.e) != 2 || !b.full(0.2, 2) || b.full(0.15, 2) {
		t.Fatalf("full beam: entries %v, results %v", b.e, got)
	}
}

// Search uses layer where the beam would hold many tombstones, and both
// answer alike.
func TestSearchWithManyTombstones(t *testing.T) {
	r := rand.New(rand.NewPCG(52, 3))
	mix := newMixture(r, 10, 16)
	h, vecs := buildIndex(t, r, mix, 2000)
	for k := uint64(0); k < 1500; k++ {
		if err := h.Delete(k); err != nil {
			t.Fatal(err)
		}
		delete(vecs, k)
	}
	if !h.manyDead() {
		t.Fatal("75% deleted is not many")
	}
	queries := mix.sample(r, 50)
	if got := recall(t, h, vecs, queries, 10, 100); got < 0.95 {
		t.Fatalf("recall@10 with 75%% tombstones = %.3f", got)
	}
	h.Compact()
	if h.manyDead() {
		t.Fatal("no tombstones after Compact, yet many")
	}
}

// BenchmarkSearchWalk compares the beam with layer's heaps on one
// GloVe-100 graph (100k, ef 320, the int8 walk), interleaved.
func BenchmarkSearchWalk(b *testing.B) {
	base, q := loadGlove(b, 100000)
	h, _ := New(&Options{Dim: 100, M: 16, EfConstruction: 100, Capacity: 100000, Quantize: true})
	if err := parallel(100000, func(lo, hi int) error {
		for j := lo; j < hi; j++ {
			if err := h.Insert(uint64(j), base[j*100:(j+1)*100]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	for _, heaps := range []bool{true, false, true, false} {
		name := "beam"
		if heaps {
			name = "heaps"
		}
		b.Run(name, func(b *testing.B) {
			s := h.searcher()
			defer h.pool.Put(s)
			s.q = growF(s.q, 100)
			for i := 0; b.Loop(); i++ {
				qi := i % 1000
				unitVector(q[qi*100:(qi+1)*100], s.q, 100)
				h.quantizeQuery(s)
				top := h.top.Load()
				ep, topLevel := uint32(top), int(top>>32)-1
				epd := h.distQ(s, ep)
				for l := topLevel; l > 0; l-- {
					ep, epd = h.greedy(s.q, s, ep, epd, l)
				}
				if heaps {
					s.layer(h, s.q, ep, epd, 320, 0, true, nil)
					s.sel = s.res.sorted(s.sel[:0])
				} else {
					s.walk(h, s.q, ep, epd, 320, 0, true)
					s.sel = s.beam.sorted(s.sel)
				}
			}
			s.quant = false
		})
	}
}
