package links_test

import (
	"fmt"

	"github.com/tidemark/tidemark/internal/links"
)

// An Update archives an old policy behind a version link; budgeted
// expansion from the visible anchor recovers it, and the version before it,
// within two hops.
func ExampleGraph_Expand() {
	g, err := links.New(nil)
	if err != nil {
		panic(err)
	}
	for _, n := range []struct {
		key     uint64
		t       float64 // days
		visible bool
	}{
		{10, -30, false}, // remote-work policy v0, archived
		{11, 0, false},   // remote-work policy v1, archived
		{12, 40, true},   // remote-work policy v2
		{13, 41, true},   // VPN how-to, written just after
		{14, 20, true},   // laptop policy
	} {
		if err := g.AddNode(n.key, n.t, n.visible); err != nil {
			panic(err)
		}
	}
	for _, e := range []struct {
		typ      links.Type
		from, to uint64
		sim      float64
	}{
		{links.Version, 12, 11, 0}, // v2 supersedes v1
		{links.Version, 11, 10, 0}, // v1 superseded v0
		{links.Semantic, 12, 14, 0.55},
		{links.Semantic, 12, 13, 0.62},
		{links.Temporal, 13, 12, 0}, // 13's predecessor is 12
	} {
		if err := g.AddEdge(e.typ, e.from, e.to, e.sim); err != nil {
			panic(err)
		}
	}
	hits, err := g.Expand([]uint64{12}, 2, 10, nil)
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Printf("hop %d: %d via %s from %d\n", h.Hop, h.Key, h.Via, h.From)
	}
	hits, _ = g.Expand([]uint64{12}, 2, 2, nil)
	fmt.Println("budget 2:", len(hits), "hits")
	fmt.Println("orphans:", g.Orphans())
	// Output:
	// hop 1: 11 via version from 12
	// hop 1: 13 via semantic from 12
	// hop 1: 14 via semantic from 12
	// hop 2: 10 via version from 11
	// budget 2: 2 hits
	// orphans: []
}
