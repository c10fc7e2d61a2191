package links_test

import (
	"context"
	"testing"

	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/internal/links"
)

// The visible surface: superseding or archiving a memory removes it from
// the HNSW graph (it is never returned again) without losing it: it stays in
// the link graph, reachable from its successor through a version link, and
// the no-orphan invariant holds.
func TestVisibleSurface(t *testing.T) {
	h, err := index.New(&index.Options{Dim: 3})
	if err != nil {
		t.Fatal(err)
	}
	g, err := links.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	add := func(key uint64, v []float32, day float64) {
		t.Helper()
		if err := h.Insert(key, v); err != nil {
			t.Fatal(err)
		}
		if err := g.AddNode(key, day, true); err != nil {
			t.Fatal(err)
		}
	}
	// supersede retires old in favour of cur, as the engine does.
	supersede := func(cur, old uint64) {
		t.Helper()
		if err := h.Delete(old); err != nil {
			t.Fatal(err)
		}
		if err := g.SetVisible(old, false); err != nil {
			t.Fatal(err)
		}
		if err := g.AddEdge(links.Version, cur, old, 0); err != nil {
			t.Fatal(err)
		}
	}
	add(1, []float32{1, 0, 0}, 0)        // rate limit: 100/min
	add(2, []float32{0, 1, 0}, 10)       // unrelated fact
	add(3, []float32{0.99, 0.1, 0}, 200) // rate limit: 1000/min
	supersede(3, 1)
	add(4, []float32{0.98, 0.2, 0}, 400) // rate limit: 5000/min
	supersede(4, 3)

	res, err := h.Search(context.Background(), []float32{1, 0, 0}, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Key != 4 {
		t.Fatalf("search over the surface = %+v, want the current version 4 first and only 4 and 2", res)
	}
	for _, r := range res {
		if r.Key == 1 || r.Key == 3 {
			t.Fatalf("superseded memory %d returned", r.Key)
		}
	}
	// History: both predecessors are reachable from the current version.
	hits, err := g.Expand([]uint64{4}, 2, 10, []links.Type{links.Version})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Key != 3 || hits[0].Hop != 1 || hits[1].Key != 1 || hits[1].Hop != 2 {
		t.Fatalf("version expansion from 4 = %+v, want 3 at hop 1, 1 at hop 2", hits)
	}
	if err := g.CheckNoOrphans(); err != nil {
		t.Fatal(err)
	}
	// Compaction removes the tombstones from the graph; the link graph
	// keeps the evidence.
	if n := h.Compact(); n != 2 {
		t.Fatalf("Compact removed %d, want 2", n)
	}
	if _, _, ok := g.Node(1); !ok {
		t.Fatal("archived memory 1 lost from the link graph")
	}
	// An archived node without a visible version parent is an orphan.
	if err := g.AddNode(5, 50, false); err != nil {
		t.Fatal(err)
	}
	if err := g.CheckNoOrphans(); err == nil {
		t.Fatal("an archived node with no version parent passed the no-orphan check")
	}
}
