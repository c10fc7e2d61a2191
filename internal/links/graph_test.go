package links

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
)

func linkMustGraph(t testing.TB, opts *Options) *Graph {
	t.Helper()
	g, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g
}

func linkMustNode(t testing.TB, g *Graph, key uint64, at float64, visible bool) {
	t.Helper()
	if err := g.AddNode(key, at, visible); err != nil {
		t.Fatalf("AddNode(%d): %v", key, err)
	}
}

func linkMustEdge(t testing.TB, g *Graph, typ Type, from, to uint64, sim float64) {
	t.Helper()
	if err := g.AddEdge(typ, from, to, sim); err != nil {
		t.Fatalf("AddEdge(%s, %d, %d): %v", typ, from, to, err)
	}
}

func linkAllTypes() []Type {
	out := make([]Type, numTypes)
	for i := range out {
		out[i] = Type(i)
	}
	return out
}

func TestLinkTypeText(t *testing.T) {
	for _, typ := range linkAllTypes() {
		b, err := typ.MarshalText()
		if err != nil {
			t.Fatalf("%d.MarshalText: %v", typ, err)
		}
		var back Type
		if err := back.UnmarshalText(b); err != nil || back != typ {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", b, back, err, typ)
		}
	}
	for in, want := range map[string]Type{
		"SEMANTIC": Semantic, "sibling_split": Sibling, "Revision": Version,
		"depends_on": DependsOn, "depended_by": DependedBy, "contradicts": Contradicts,
	} {
		if got, err := parseType(in); err != nil || got != want {
			t.Errorf("parseType(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := parseType("supersedes"); !errors.Is(err, ErrInvalid) {
		t.Errorf("parseType(supersedes) err = %v, want ErrInvalid", err)
	}
	if _, err := numTypes.MarshalText(); !errors.Is(err, ErrInvalid) {
		t.Errorf("MarshalText of invalid type err = %v", err)
	}
	if s := Type(200).String(); s != "Type(200)" {
		t.Errorf("String = %q", s)
	}
	// The numeric value is All-Mem's expansion priority π (App. D.3, Eq. 33).
	if !(Sibling < Version && Version < Temporal && Temporal < Semantic &&
		Semantic < DependsOn && DependsOn < DependedBy && DependedBy < Contradicts) {
		t.Error("link types are not in priority order")
	}
}

func TestLinkOptions(t *testing.T) {
	want := Options{CapSibling: 4, CapVersion: Unbounded, CapTemporal: 1, CapSemantic: 8,
		CapDepends: Unbounded, CapContradicts: Unbounded}
	var nilOpts *Options
	if got := nilOpts.WithDefaults(); got != want {
		t.Errorf("nil defaults = %+v, want %+v", got, want)
	}
	if got := linkMustGraph(t, nil).Options(); got != want {
		t.Errorf("New(nil).Options() = %+v", got)
	}
	var zero Graph
	if got := zero.Options(); got != want {
		t.Errorf("zero Graph Options() = %+v", got)
	}
	got := (&Options{CapSemantic: 3, CapTemporal: Unbounded, CapVersion: 2}).WithDefaults()
	if got.CapSemantic != 3 || got.CapTemporal != Unbounded || got.CapVersion != 2 || got.CapSibling != 4 {
		t.Errorf("WithDefaults = %+v", got)
	}
	for _, c := range []struct {
		opts  Options
		field string
	}{
		{Options{CapSibling: -2}, "CapSibling"},
		{Options{CapVersion: -5}, "CapVersion"},
		{Options{CapTemporal: -3}, "CapTemporal"},
		{Options{CapSemantic: math.MaxInt32 + 1}, "CapSemantic"},
		{Options{CapDepends: -9}, "CapDepends"},
		{Options{CapContradicts: -2}, "CapContradicts"},
	} {
		err := c.opts.Validate()
		if !errors.Is(err, ErrInvalid) || !bytes.Contains([]byte(err.Error()), []byte("Options."+c.field+" ")) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", c.opts, err, c.field)
		}
		if _, err := New(&c.opts); !errors.Is(err, ErrInvalid) {
			t.Errorf("New(%+v) err = %v", c.opts, err)
		}
	}
}

// TestLinkCapTieBreak checks TopCap (All-Mem App. B.1, Eq. 17) under
// Key_σ = Key_β = (sim desc, t_u desc, id asc) with ties on sim and t, for
// every insertion order of the candidates.
func TestLinkCapTieBreak(t *testing.T) {
	type cand struct {
		id  uint64
		sim float64
		t   float64
	}
	cands := []cand{
		{1, 0.9, 5},   // loses to 2 and 3 on t
		{2, 0.9, 7},   // ties 3 on sim and t: the smaller id wins
		{3, 0.9, 7},   //
		{4, 0.8, 100}, // newest, but lowest similarity
		{5, 0.95, 1},  // highest similarity, oldest
	}
	perms := linkPermutations(len(cands))
	for _, typ := range []Type{Semantic, Sibling} {
		for limit, want := range map[int][]uint64{
			1: {5}, 2: {5, 2}, 3: {5, 2, 3}, 4: {5, 2, 3, 1}, 5: {5, 2, 3, 1, 4},
		} {
			opts := &Options{CapSemantic: limit, CapSibling: limit}
			for _, p := range perms {
				g := linkMustGraph(t, opts)
				linkMustNode(t, g, 100, 50, true)
				for _, c := range cands {
					linkMustNode(t, g, c.id, c.t, true)
				}
				for _, i := range p {
					linkMustEdge(t, g, typ, 100, cands[i].id, cands[i].sim)
				}
				if got := g.Neighbors(100, typ); !slices.Equal(got, want) {
					t.Fatalf("%s cap %d, order %v: neighbours %v, want %v", typ, limit, p, got, want)
				}
			}
		}
	}
}

func linkPermutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range linkPermutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := slices.Insert(slices.Clone(p), i, n-1)
			out = append(out, q)
		}
	}
	return out
}

func TestLinkDuplicateEdgeUpdatesSim(t *testing.T) {
	g := linkMustGraph(t, &Options{CapSemantic: 2})
	for k := range uint64(4) {
		linkMustNode(t, g, k, 1, true)
	}
	linkMustEdge(t, g, Semantic, 0, 1, 0.1)
	linkMustEdge(t, g, Semantic, 0, 2, 0.5)
	if got := g.Neighbors(0, Semantic); !slices.Equal(got, []uint64{2, 1}) {
		t.Fatalf("neighbours %v", got)
	}
	linkMustEdge(t, g, Semantic, 0, 1, 0.9) // re-add: updates sim
	linkMustEdge(t, g, Semantic, 0, 1, 0.9) // idempotent
	if got := g.Neighbors(0, Semantic); !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("after update: neighbours %v, want [1 2]", got)
	}
	linkMustEdge(t, g, Semantic, 0, 3, 0.3) // ranks last under cap 2: pruned
	if got := g.Neighbors(0, Semantic); !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("after a low-ranked add: neighbours %v, want [1 2]", got)
	}
	linkMustEdge(t, g, Semantic, 0, 3, 0.7) // re-competes with its new sim
	if got := g.Neighbors(0, Semantic); !slices.Equal(got, []uint64{1, 3}) {
		t.Fatalf("after re-add: neighbours %v, want [1 3]", got)
	}
}

// TestLinkTemporal checks cap_τ = 1 keeps the closest-in-time predecessor
// (All-Mem App. B.3.1) with the id tie-break, and that temporal links must
// point back in time.
func TestLinkTemporal(t *testing.T) {
	g := linkMustGraph(t, nil)
	linkMustNode(t, g, 50, 10, true)
	for k, at := range map[uint64]float64{1: 3, 7: 8, 4: 8, 9: 9.5, 60: 12, 61: 10} {
		linkMustNode(t, g, k, at, true)
	}
	linkMustEdge(t, g, Temporal, 50, 7, 0)
	linkMustEdge(t, g, Temporal, 50, 1, 0)
	if got := g.Neighbors(50, Temporal); !slices.Equal(got, []uint64{7}) {
		t.Fatalf("neighbours %v, want [7]", got)
	}
	linkMustEdge(t, g, Temporal, 50, 4, 0) // same t as 7, smaller id
	if got := g.Neighbors(50, Temporal); !slices.Equal(got, []uint64{4}) {
		t.Fatalf("neighbours %v, want [4]", got)
	}
	linkMustEdge(t, g, Temporal, 50, 9, 0) // closer in time
	if got := g.Neighbors(50, Temporal); !slices.Equal(got, []uint64{9}) {
		t.Fatalf("neighbours %v, want [9]", got)
	}
	for _, later := range []uint64{60, 61} { // later, and equal time
		if err := g.AddEdge(Temporal, 50, later, 0); !errors.Is(err, ErrInvalid) {
			t.Errorf("temporal link to %d: err = %v, want ErrInvalid", later, err)
		}
	}
	if got := g.Neighbors(50, Temporal); !slices.Equal(got, []uint64{9}) {
		t.Fatalf("a rejected link changed the graph: %v", got)
	}
}

func TestLinkInvalidInput(t *testing.T) {
	g := linkMustGraph(t, nil)
	linkMustNode(t, g, 1, 1, true)
	linkMustNode(t, g, 2, 2, true)
	for name, c := range map[string]struct {
		err  error
		call func() error
	}{
		"self-loop":   {ErrInvalid, func() error { return g.AddEdge(Semantic, 1, 1, 0.5) }},
		"NaN sim":     {ErrInvalid, func() error { return g.AddEdge(Semantic, 1, 2, math.NaN()) }},
		"Inf sim":     {ErrInvalid, func() error { return g.AddEdge(Version, 1, 2, math.Inf(1)) }},
		"bad type":    {ErrInvalid, func() error { return g.AddEdge(numTypes, 1, 2, 0) }},
		"unknown to":  {ErrUnknown, func() error { return g.AddEdge(Semantic, 1, 3, 0.5) }},
		"unknown frm": {ErrUnknown, func() error { return g.AddEdge(Semantic, 3, 1, 0.5) }},
		"NaN time":    {ErrInvalid, func() error { return g.AddNode(3, math.NaN(), true) }},
		"Inf time":    {ErrInvalid, func() error { return g.AddNode(3, math.Inf(-1), true) }},
		"new time":    {ErrExists, func() error { return g.AddNode(1, 5, true) }},
		"set unknown": {ErrUnknown, func() error { return g.SetVisible(3, true) }},
		"rm unknown":  {ErrUnknown, func() error { return g.removeEdge(Semantic, 1, 3) }},
		"rm bad type": {ErrInvalid, func() error { return g.removeEdge(numTypes, 1, 2) }},
	} {
		if err := c.call(); !errors.Is(err, c.err) {
			t.Errorf("%s: err = %v, want %v", name, err, c.err)
		}
	}
	if g.nodeCount() != 2 {
		t.Errorf("nodeCount = %d after rejected calls", g.nodeCount())
	}
	// Re-adding with the same time only sets the visibility.
	linkMustNode(t, g, 1, 1, false)
	if at, vis, ok := g.Node(1); !ok || at != 1 || vis {
		t.Errorf("Node(1) = %v, %v, %v", at, vis, ok)
	}
	if err := g.removeEdge(Semantic, 1, 2); err != nil {
		t.Errorf("removing an absent link: %v", err)
	}
	if got := g.Neighbors(9, Semantic); got != nil {
		t.Errorf("Neighbors of unknown = %v", got)
	}
	var zero Graph // usable without New
	linkMustNode(t, &zero, 1, 2, true)
	linkMustNode(t, &zero, 2, 1, false)
	linkMustEdge(t, &zero, Temporal, 1, 2, 0)
	if got := zero.Neighbors(1, Temporal); !slices.Equal(got, []uint64{2}) {
		t.Errorf("zero graph neighbours %v", got)
	}
}

// TestLinkDependsMirrored checks SmartVector's depends_on / depended_by stay
// mirrored through AddEdge, removeEdge and cap pruning.
func TestLinkDependsMirrored(t *testing.T) {
	g := linkMustGraph(t, nil)
	for k := range uint64(5) {
		linkMustNode(t, g, k, float64(k), true)
	}
	linkMustEdge(t, g, DependsOn, 0, 1, 0)  // 0 depends on 1
	linkMustEdge(t, g, DependedBy, 2, 0, 0) // 0 depends on 2
	check := func(step string, on map[uint64][]uint64, by map[uint64][]uint64) {
		t.Helper()
		for k := range uint64(5) {
			if got := g.Neighbors(k, DependsOn); !slices.Equal(got, on[k]) {
				t.Errorf("%s: depends_on(%d) = %v, want %v", step, k, got, on[k])
			}
			if got := g.Neighbors(k, DependedBy); !slices.Equal(got, by[k]) {
				t.Errorf("%s: depended_by(%d) = %v, want %v", step, k, got, by[k])
			}
		}
	}
	check("added", map[uint64][]uint64{0: {2, 1}}, map[uint64][]uint64{1: {0}, 2: {0}})
	if err := g.removeEdge(DependedBy, 1, 0); err != nil {
		t.Fatal(err)
	}
	check("removed depended_by 1→0", map[uint64][]uint64{0: {2}}, map[uint64][]uint64{2: {0}})
	if err := g.removeEdge(DependsOn, 0, 2); err != nil {
		t.Fatal(err)
	}
	check("removed depends_on 0→2", nil, nil)

	// Cap pruning removes mirrors: cap 1 keeps the newest target (t desc).
	g = linkMustGraph(t, &Options{CapDepends: 1})
	for k := range uint64(5) {
		linkMustNode(t, g, k, float64(k), true)
	}
	linkMustEdge(t, g, DependsOn, 0, 1, 0)
	linkMustEdge(t, g, DependsOn, 0, 3, 0) // newer: 0→1 pruned, and 1→0
	check("cap at source", map[uint64][]uint64{0: {3}}, map[uint64][]uint64{3: {0}})
	linkMustEdge(t, g, DependsOn, 4, 3, 0) // 3's depended_by now {4, 0}: 0 pruned
	check("cap at mirror", map[uint64][]uint64{4: {3}}, map[uint64][]uint64{3: {4}})
}

func TestLinkContradictsSymmetric(t *testing.T) {
	g := linkMustGraph(t, &Options{CapContradicts: 1})
	for k := range uint64(4) {
		linkMustNode(t, g, k, float64(k), true)
	}
	linkMustEdge(t, g, Contradicts, 1, 2, 0.7)
	if a, b := g.Neighbors(1, Contradicts), g.Neighbors(2, Contradicts); !slices.Equal(a, []uint64{2}) || !slices.Equal(b, []uint64{1}) {
		t.Fatalf("after add: %v, %v", a, b)
	}
	linkMustEdge(t, g, Contradicts, 3, 1, 0) // 1's list {3, 2}: cap keeps 3; 2→1 goes too
	for k, want := range map[uint64][]uint64{1: {3}, 2: nil, 3: {1}} {
		if got := g.Neighbors(k, Contradicts); !slices.Equal(got, want) {
			t.Errorf("after cap: contradicts(%d) = %v, want %v", k, got, want)
		}
	}
	if err := g.removeEdge(Contradicts, 1, 3); err != nil {
		t.Fatal(err)
	}
	if a, b := g.Neighbors(1, Contradicts), g.Neighbors(3, Contradicts); a != nil || b != nil {
		t.Errorf("after remove: %v, %v", a, b)
	}
}

// TestLinkVersionCapNoOrphan checks All-Mem's no-orphan pruning (App. B.4,
// Eq. 23, and B.7) when cap_ν^out is finite.
func TestLinkVersionCapNoOrphan(t *testing.T) {
	build := func(limit int) *Graph {
		g := linkMustGraph(t, &Options{CapVersion: limit})
		linkMustNode(t, g, 100, 10, true) // r
		linkMustNode(t, g, 200, 10, true) // s, a second visible parent of y
		linkMustNode(t, g, 3, 9, true)    // z: visible child, ranks first
		linkMustNode(t, g, 2, 5, false)   // y: archived, parents r and s
		linkMustNode(t, g, 1, 1, false)   // x: archived, only parent r, ranks last
		linkMustEdge(t, g, Version, 100, 1, 0)
		linkMustEdge(t, g, Version, 200, 2, 0)
		linkMustEdge(t, g, Version, 100, 2, 0)
		linkMustEdge(t, g, Version, 100, 3, 0)
		return g
	}
	for limit, want := range map[int][]uint64{1: {1}, 2: {3, 1}, 3: {3, 2, 1}, Unbounded: {3, 2, 1}} {
		g := build(limit)
		if got := g.Neighbors(100, Version); !slices.Equal(got, want) {
			t.Errorf("cap %d: version(100) = %v, want %v", limit, got, want)
		}
		if err := g.CheckNoOrphans(); err != nil {
			t.Errorf("cap %d: %v", limit, err)
		}
	}

	// Mandatory children beyond the cap are all kept: the cap yields.
	g := linkMustGraph(t, &Options{CapVersion: 1})
	linkMustNode(t, g, 100, 10, true)
	for k := range uint64(3) {
		linkMustNode(t, g, k, float64(k), false)
		linkMustEdge(t, g, Version, 100, k, 0)
	}
	if got := g.Neighbors(100, Version); !slices.Equal(got, []uint64{2, 1, 0}) {
		t.Errorf("mandatory overflow: version(100) = %v, want [2 1 0]", got)
	}

	// Inside an archived chain r → a → {b, c, e}, Eq. 23's Par(x) is empty
	// at a; children that only a reaches are still kept.
	g = linkMustGraph(t, &Options{CapVersion: 1})
	linkMustNode(t, g, 100, 10, true) // r
	linkMustNode(t, g, 50, 5, false)  // a
	linkMustNode(t, g, 1, 1, false)   // b
	linkMustNode(t, g, 2, 2, false)   // c
	linkMustNode(t, g, 4, 4, false)   // e
	linkMustNode(t, g, 30, 3, true)   // d: visible
	linkMustEdge(t, g, Version, 100, 50, 0)
	linkMustEdge(t, g, Version, 50, 1, 0)
	linkMustEdge(t, g, Version, 50, 2, 0)
	if got := g.Neighbors(50, Version); !slices.Equal(got, []uint64{2, 1}) {
		t.Errorf("archived parent: version(50) = %v, want [2 1]", got)
	}
	linkMustEdge(t, g, Version, 30, 1, 0) // b gains a visible parent
	linkMustEdge(t, g, Version, 50, 4, 0) // prunes at a: b is no longer needed
	if got := g.Neighbors(50, Version); !slices.Equal(got, []uint64{4, 2}) {
		t.Errorf("archived parent: version(50) = %v, want [4 2]", got)
	}
	if err := g.CheckNoOrphans(); err != nil {
		t.Error(err)
	}
	// An orphaned parent has no mandatory children: pruning cannot orphan
	// what no visible node reaches.
	if err := g.removeEdge(Version, 100, 50); err != nil {
		t.Fatal(err)
	}
	linkMustNode(t, g, 5, 0.5, false)
	linkMustEdge(t, g, Version, 50, 5, 0)
	if got := g.Neighbors(50, Version); !slices.Equal(got, []uint64{4}) {
		t.Errorf("orphaned parent: version(50) = %v, want [4]", got)
	}
}

func TestOrphans(t *testing.T) {
	g := linkMustGraph(t, nil)
	linkMustNode(t, g, 1, 10, true)
	for k := uint64(2); k <= 4; k++ { // chain 1 → 2 → 3 → 4, all archived
		linkMustNode(t, g, k, float64(10-k), false)
		linkMustEdge(t, g, Version, k-1, k, 0)
	}
	if o := g.Orphans(); o != nil {
		t.Fatalf("multi-hop chain: orphans %v", o)
	}
	if err := g.CheckNoOrphans(); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[uint64]int{1: 0, 2: 1, 3: 2, 4: 3} {
		if h, err := g.surfaceDistance(k); err != nil || h != want {
			t.Errorf("surfaceDistance(%d) = %d, %v; want %d", k, h, err, want)
		}
	}
	if c := g.Coverage(2); c != 2.0/3 {
		t.Errorf("Coverage(2) = %v, want 2/3", c)
	}

	linkMustNode(t, g, 20, 1, false) // reached only by a semantic link
	linkMustEdge(t, g, Semantic, 1, 20, 0.9)
	linkMustNode(t, g, 30, 1, false) // archived cycle with no visible entry
	linkMustNode(t, g, 31, 1, false)
	linkMustEdge(t, g, Version, 30, 31, 0)
	linkMustEdge(t, g, Version, 31, 30, 0)
	if o := g.Orphans(); !slices.Equal(o, []uint64{20, 30, 31}) {
		t.Errorf("orphans %v, want [20 30 31]", o)
	}
	if err := g.CheckNoOrphans(); !errors.Is(err, ErrOrphan) {
		t.Errorf("CheckNoOrphans = %v, want ErrOrphan", err)
	}
	if h, err := g.surfaceDistance(20); err != nil || h != -1 {
		t.Errorf("surfaceDistance(orphan) = %d, %v", h, err)
	}
	if _, err := g.surfaceDistance(99); !errors.Is(err, ErrUnknown) {
		t.Errorf("surfaceDistance(unknown) err = %v", err)
	}

	if err := g.removeEdge(Version, 1, 2); err != nil {
		t.Fatal(err)
	}
	if o := g.Orphans(); !slices.Equal(o, []uint64{2, 3, 4, 20, 30, 31}) {
		t.Errorf("after cutting the chain: orphans %v", o)
	}
	if err := g.SetVisible(3, true); err != nil {
		t.Fatal(err)
	}
	if o := g.Orphans(); !slices.Equal(o, []uint64{2, 20, 30, 31}) {
		t.Errorf("after surfacing 3: orphans %v", o)
	}
	var zero Graph
	if o, c := zero.Orphans(), zero.Coverage(0); o != nil || c != 1 {
		t.Errorf("empty graph: orphans %v, Coverage %v", o, c)
	}
}

func TestExpandHopLimit(t *testing.T) {
	g := linkMustGraph(t, nil)
	for k := range uint64(6) {
		linkMustNode(t, g, k, float64(10-k), k == 0)
	}
	for k := uint64(1); k < 6; k++ { // chain 0 → 1 → … → 5 of length 5
		linkMustEdge(t, g, Temporal, k-1, k, 0)
	}
	hits, err := g.Expand([]uint64{0}, 2, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Hit{{Key: 1, Hop: 1, Via: Temporal, From: 0}, {Key: 2, Hop: 2, Via: Temporal, From: 1}}
	if !slices.Equal(hits, want) {
		t.Fatalf("hits %v, want %v", hits, want)
	}
	for hop := range 8 {
		hits, _ := g.Expand([]uint64{0}, hop, 100, nil)
		if len(hits) != min(hop, 5) {
			t.Errorf("hopLimit %d: %d hits", hop, len(hits))
		}
		for i, h := range hits {
			if h.Hop != i+1 || h.Key != uint64(i+1) {
				t.Errorf("hopLimit %d: hit %d = %+v", hop, i, h)
			}
		}
	}
	if hits, err := g.Expand([]uint64{0}, -1, 10, nil); hits != nil || err != nil {
		t.Errorf("negative hopLimit: %v, %v", hits, err)
	}
	// Only the chosen types are followed.
	if hits, _ := g.Expand([]uint64{0}, 5, 10, []Type{Semantic}); hits != nil {
		t.Errorf("semantic only: %v", hits)
	}
}

// linkStar builds a centre with one neighbour of every type, with ids in
// the reverse of the priority order.
func linkStar(t testing.TB) *Graph {
	g := linkMustGraph(t, nil)
	linkMustNode(t, g, 100, 100, true)
	for k := uint64(1); k <= 7; k++ {
		linkMustNode(t, g, k, float64(k), k%2 == 0)
	}
	linkMustEdge(t, g, Semantic, 100, 1, 0.9)
	linkMustEdge(t, g, Temporal, 100, 2, 0)
	linkMustEdge(t, g, Version, 100, 3, 0)
	linkMustEdge(t, g, Sibling, 100, 4, 0.1)
	linkMustEdge(t, g, Contradicts, 100, 7, 0)
	linkMustEdge(t, g, DependedBy, 100, 6, 0)
	linkMustEdge(t, g, DependsOn, 100, 5, 0)
	return g
}

func linkKeys(hits []Hit) []uint64 {
	out := make([]uint64, len(hits))
	for i, h := range hits {
		out[i] = h.Key
	}
	return out
}

func TestExpandBudgetPriority(t *testing.T) {
	g := linkStar(t)
	all := []Type{Contradicts, Semantic, DependsOn, Sibling, DependedBy, Temporal, Version}
	order := []uint64{4, 3, 2, 1, 5, 6, 7} // sibling, version, temporal, semantic, depends_on, depended_by, contradicts
	for budget := 0; budget <= 9; budget++ {
		hits, err := g.Expand([]uint64{100}, 3, budget, all)
		if err != nil {
			t.Fatal(err)
		}
		want := order[:min(budget, len(order))]
		if got := linkKeys(hits); !slices.Equal(got, want) {
			t.Errorf("budget %d: %v, want %v", budget, got, want)
		}
		if budget > 0 && len(hits) > 0 && hits[0].Via != Sibling {
			t.Errorf("budget %d: first hit via %s", budget, hits[0].Via)
		}
	}
	// nil means All-Mem's four families.
	hits, err := g.Expand([]uint64{100}, 3, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Hit{
		{Key: 4, Hop: 1, Via: Sibling, From: 100},
		{Key: 3, Hop: 1, Via: Version, From: 100},
		{Key: 2, Hop: 1, Via: Temporal, From: 100},
		{Key: 1, Hop: 1, Via: Semantic, From: 100},
	}
	if !slices.Equal(hits, want) {
		t.Errorf("default types: %v, want %v", hits, want)
	}
	// The budget is honoured across hops too: 5 has depended_by → 100
	// (an anchor, never returned); 1 … 4 have no out-links.
	if hits, _ := g.Expand([]uint64{5}, 3, 1, all); !slices.Equal(linkKeys(hits), []uint64{100}) {
		t.Errorf("from 5, budget 1: %v", hits)
	}
	hits, _ = g.Expand([]uint64{5}, 3, 3, all)
	if got := linkKeys(hits); !slices.Equal(got, []uint64{100, 4, 3}) || hits[1].Hop != 2 || hits[1].From != 100 {
		t.Errorf("from 5, budget 3: %v", hits)
	}
}

func TestExpandAnchors(t *testing.T) {
	g := linkMustGraph(t, nil)
	for k := range uint64(5) {
		linkMustNode(t, g, k, 1, true)
	}
	linkMustEdge(t, g, Semantic, 0, 1, 0.5)
	linkMustEdge(t, g, Semantic, 1, 0, 0.5)
	linkMustEdge(t, g, Semantic, 1, 2, 0.4)
	linkMustEdge(t, g, Semantic, 2, 3, 0.4)
	linkMustEdge(t, g, Sibling, 0, 2, 0.1)
	hits, err := g.Expand([]uint64{0, 1, 0}, 5, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 2 is found from anchor 0 (sibling) before anchor 1 (semantic); 3 at
	// hop 2; the anchors never come back.
	want := []Hit{{Key: 2, Hop: 1, Via: Sibling, From: 0}, {Key: 3, Hop: 2, Via: Semantic, From: 2}}
	if !slices.Equal(hits, want) {
		t.Errorf("hits %v, want %v", hits, want)
	}
	if _, err := g.Expand([]uint64{0, 9}, 2, 10, nil); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown anchor: err = %v", err)
	}
	if _, err := g.Expand([]uint64{9}, 0, 0, nil); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown anchor with zero budget: err = %v", err)
	}
	if _, err := g.Expand([]uint64{0}, 2, 10, []Type{numTypes}); !errors.Is(err, ErrInvalid) {
		t.Errorf("invalid type: err = %v", err)
	}
	if hits, err := g.Expand(nil, 2, 10, nil); hits != nil || err != nil {
		t.Errorf("no anchors: %v, %v", hits, err)
	}
}

// linkSpec is a random graph as a list of nodes and links, to be built in
// any order.
type linkSpec struct {
	keys  []uint64
	times []float64
	vis   []bool
	edges []linkSpecEdge
}

type linkSpecEdge struct {
	typ      Type
	from, to uint64
	sim      float64
}

func linkRandomSpec(r *rand.Rand, n, m int) linkSpec {
	var s linkSpec
	used := map[uint64]bool{}
	for len(s.keys) < n {
		k := r.Uint64N(uint64(4 * n))
		if used[k] {
			continue
		}
		used[k] = true
		s.keys = append(s.keys, k)
		s.times = append(s.times, float64(r.IntN(n/3+1))) // ties on t
		s.vis = append(s.vis, r.IntN(3) == 0)
	}
	sims := []float64{0.2, 0.5, 0.5, 0.8, 0.8, 0.9}
	type canon struct {
		typ  Type
		a, b uint64
	}
	seen := map[canon]bool{}
	for len(s.edges) < m {
		i, j := r.IntN(n), r.IntN(n)
		if i == j {
			continue
		}
		e := linkSpecEdge{typ: Type(r.IntN(int(numTypes))), from: s.keys[i], to: s.keys[j]}
		if e.typ.usesSim() {
			e.sim = sims[r.IntN(len(sims))]
		}
		if e.typ == Temporal && !(s.times[j] < s.times[i]) {
			continue
		}
		c := canon{e.typ, e.from, e.to}
		switch e.typ {
		case DependedBy:
			c = canon{DependsOn, e.to, e.from}
		case Contradicts:
			c = canon{Contradicts, min(e.from, e.to), max(e.from, e.to)}
		}
		if seen[c] {
			continue
		}
		seen[c] = true
		s.edges = append(s.edges, e)
	}
	return s
}

// build adds the spec's nodes and links in the given shuffled orders.
func (s linkSpec) build(t testing.TB, opts *Options, r *rand.Rand) *Graph {
	t.Helper()
	g := linkMustGraph(t, opts)
	for _, i := range r.Perm(len(s.keys)) {
		linkMustNode(t, g, s.keys[i], s.times[i], s.vis[i])
	}
	for _, i := range r.Perm(len(s.edges)) {
		e := s.edges[i]
		linkMustEdge(t, g, e.typ, e.from, e.to, e.sim)
	}
	return g
}

// linkSameGraph compares two graphs through the public API.
func linkSameGraph(t *testing.T, a, b *Graph, r *rand.Rand) {
	t.Helper()
	if a.Options() != b.Options() {
		t.Fatalf("options %+v vs %+v", a.Options(), b.Options())
	}
	keys := a.keys()
	if !slices.Equal(keys, b.keys()) {
		t.Fatalf("keys differ")
	}
	for _, k := range keys {
		t1, v1, _ := a.Node(k)
		t2, v2, _ := b.Node(k)
		if math.Float64bits(t1) != math.Float64bits(t2) || v1 != v2 {
			t.Fatalf("node %d: (%v, %v) vs (%v, %v)", k, t1, v1, t2, v2)
		}
		for _, typ := range linkAllTypes() {
			if x, y := a.Neighbors(k, typ), b.Neighbors(k, typ); !slices.Equal(x, y) {
				t.Fatalf("%s neighbours of %d: %v vs %v", typ, k, x, y)
			}
		}
	}
	if !slices.Equal(a.Orphans(), b.Orphans()) {
		t.Fatalf("orphans differ: %v vs %v", a.Orphans(), b.Orphans())
	}
	for range 50 {
		anchors := make([]uint64, 1+r.IntN(4))
		for i := range anchors {
			anchors[i] = keys[r.IntN(len(keys))]
		}
		hop, budget := r.IntN(5), r.IntN(40)
		var types []Type
		if r.IntN(2) == 0 {
			types = linkAllTypes()[:1+r.IntN(int(numTypes))]
		}
		x, err1 := a.Expand(anchors, hop, budget, types)
		y, err2 := b.Expand(anchors, hop, budget, types)
		if err1 != nil || err2 != nil || !slices.Equal(x, y) {
			t.Fatalf("Expand(%v, %d, %d, %v):\n%v, %v\n%v, %v", anchors, hop, budget, types, x, err1, y, err2)
		}
	}
}

// TestExpandDeterministic builds the same graph in shuffled orders and
// checks every answer is identical.
func TestExpandDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, opts := range []*Options{nil, {CapSemantic: 2, CapSibling: 1}} {
		for trial := range 10 {
			spec := linkRandomSpec(r, 60, 400)
			a := spec.build(t, opts, r)
			b := spec.build(t, opts, r)
			linkSameGraph(t, a, b, r)
			ba, _ := a.MarshalBinary()
			bb, _ := b.MarshalBinary()
			if !bytes.Equal(ba, bb) {
				t.Fatalf("trial %d: encodings differ", trial)
			}
			hits, _ := a.Expand(a.keys()[:3], 4, 1000, linkAllTypes())
			seen := map[uint64]bool{}
			for _, k := range a.keys()[:3] {
				seen[k] = true
			}
			prevHop := 1
			for _, h := range hits {
				if seen[h.Key] || h.Hop < prevHop || h.Hop > 4 {
					t.Fatalf("trial %d: bad hit %+v", trial, h)
				}
				seen[h.Key], prevHop = true, h.Hop
			}
		}
	}
}

func TestLinkConcurrent(t *testing.T) {
	g := linkMustGraph(t, &Options{CapDepends: 3, CapContradicts: 2, CapVersion: 3})
	const n = 200
	for k := range uint64(n) {
		linkMustNode(t, g, k, float64(k%17), k%3 == 0)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range 500 {
				a, b := r.Uint64N(n), r.Uint64N(n)
				typ := Type(r.IntN(int(numTypes)))
				err := g.AddEdge(typ, a, b, r.Float64())
				if err != nil && a != b && !(typ == Temporal && errors.Is(err, ErrInvalid)) {
					t.Errorf("AddEdge: %v", err)
				}
				if r.IntN(10) == 0 {
					if err := g.removeEdge(typ, a, b); err != nil {
						t.Errorf("removeEdge: %v", err)
					}
				}
			}
		})
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 8))
			for i := range 300 {
				if _, err := g.Expand([]uint64{r.Uint64N(n), r.Uint64N(n)}, 3, 20, nil); err != nil {
					t.Errorf("Expand: %v", err)
				}
				g.Neighbors(r.Uint64N(n), Semantic)
				if i%50 == 0 {
					g.Orphans()
					if _, err := g.MarshalBinary(); err != nil {
						t.Errorf("MarshalBinary: %v", err)
					}
					if err := g.SetVisible(r.Uint64N(n), r.IntN(2) == 0); err != nil {
						t.Errorf("SetVisible: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	// The decoder checks caps and mirrors: the result must satisfy them.
	b, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := new(Graph).UnmarshalBinary(b); err != nil {
		t.Fatalf("graph built concurrently fails its own checks: %v", err)
	}
}

func TestLinkMarshalRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, opts := range []*Options{nil, {CapSemantic: 3, CapVersion: 2, CapDepends: 2, CapContradicts: 1, CapTemporal: Unbounded}} {
		spec := linkRandomSpec(r, 80, 600)
		g := spec.build(t, opts, r)
		b, err := g.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back Graph
		if err := back.UnmarshalBinary(b); err != nil {
			t.Fatalf("UnmarshalBinary: %v", err)
		}
		linkSameGraph(t, g, &back, r)
		b2, _ := back.MarshalBinary()
		if !bytes.Equal(b, b2) {
			t.Fatal("re-marshalled bytes differ")
		}
	}
	// Empty graphs, zero value and not.
	var zero Graph
	b, _ := zero.MarshalBinary()
	if len(b) != linkMinBytes {
		t.Errorf("empty encoding is %d bytes, want %d", len(b), linkMinBytes)
	}
	g := linkMustGraph(t, &Options{CapSemantic: 2})
	linkMustNode(t, g, 1, 1, true)
	if err := g.UnmarshalBinary(b); err != nil || g.nodeCount() != 0 || g.Options().CapSemantic != 8 {
		t.Errorf("unmarshal of an empty graph: %v, %d nodes, %+v", err, g.nodeCount(), g.Options())
	}
}

// linkEncoding is a hand-written encoder for the format documented in
// links.go, so the tests can state inputs field by field.
type linkEncoding struct {
	version uint32
	caps    [6]int32
	nodes   []linkEncNode
	edges   [numTypes][]linkEncEdge
	trailer []byte // bytes between the last edge and the CRC
}

type linkEncNode struct {
	key   uint64
	t     float64
	flags byte
}

type linkEncEdge struct {
	from, to uint64
	sim      float64
}

func (e linkEncoding) bytes() []byte {
	le := binary.LittleEndian
	b := []byte(linkMagic)
	b = le.AppendUint32(b, e.version)
	for _, c := range e.caps {
		b = le.AppendUint32(b, uint32(c))
	}
	b = le.AppendUint64(b, uint64(len(e.nodes)))
	for _, n := range e.nodes {
		b = le.AppendUint64(b, n.key)
		b = le.AppendUint64(b, math.Float64bits(n.t))
		b = append(b, n.flags)
	}
	for _, list := range e.edges {
		b = le.AppendUint64(b, uint64(len(list)))
		for _, x := range list {
			b = le.AppendUint64(b, x.from)
			b = le.AppendUint64(b, x.to)
			b = le.AppendUint64(b, math.Float64bits(x.sim))
		}
	}
	b = append(b, e.trailer...)
	return linkSeal(b)
}

// linkSeal appends the CRC-32C of b.
func linkSeal(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

// linkReseal replaces the trailing CRC of b with a correct one.
func linkReseal(b []byte) []byte {
	if len(b) < 4 {
		return b
	}
	return linkSeal(slices.Clone(b[:len(b)-4]))
}

// linkValidEncoding is the encoding of a small graph with every link type.
func linkValidEncoding() linkEncoding {
	return linkEncoding{
		version: 1,
		caps:    [6]int32{4, -1, 1, 2, -1, -1},
		nodes: []linkEncNode{
			{key: 1, t: 1, flags: 0}, {key: 2, t: 2, flags: 1}, {key: 3, t: 3, flags: 1}, {key: 7, t: 3, flags: 0},
		},
		edges: [numTypes][]linkEncEdge{
			Sibling:     {{2, 3, 0.5}},
			Version:     {{2, 1, 0}, {3, 7, 0}},
			Temporal:    {{3, 2, 0}},
			Semantic:    {{3, 2, 0.9}, {3, 1, 0.9}}, // sim tie: the newer target first
			DependsOn:   {{1, 2, 0}},
			DependedBy:  {{2, 1, 0}},
			Contradicts: {{2, 7, 0}, {7, 2, 0}},
		},
	}
}

func TestLinkEncodingFormat(t *testing.T) {
	g := linkMustGraph(t, &Options{CapSemantic: 2})
	linkMustNode(t, g, 7, 3, false)
	linkMustNode(t, g, 3, 3, true)
	linkMustNode(t, g, 2, 2, true)
	linkMustNode(t, g, 1, 1, false)
	linkMustEdge(t, g, Contradicts, 7, 2, 0)
	linkMustEdge(t, g, DependedBy, 2, 1, 0)
	linkMustEdge(t, g, Semantic, 3, 2, 0.9)
	linkMustEdge(t, g, Semantic, 3, 1, 0.9)
	linkMustEdge(t, g, Temporal, 3, 2, 0)
	linkMustEdge(t, g, Version, 3, 7, 0)
	linkMustEdge(t, g, Version, 2, 1, 0)
	linkMustEdge(t, g, Sibling, 2, 3, 0.5)
	got, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if want := linkValidEncoding().bytes(); !bytes.Equal(got, want) {
		t.Fatalf("MarshalBinary does not follow the documented format:\n got %x\nwant %x", got, want)
	}
}

func TestLinkUnmarshalCorrupt(t *testing.T) {
	valid := linkValidEncoding().bytes()
	mod := func(f func(e *linkEncoding)) []byte {
		e := linkValidEncoding()
		f(&e)
		return e.bytes()
	}
	huge := func(off int) []byte { // a count of 2⁶⁰ at off, resealed
		b := slices.Clone(valid)
		binary.LittleEndian.PutUint64(b[off:], 1<<60)
		return linkReseal(b)
	}
	edgeStart := linkHeaderBytes + 8 + 4*linkNodeBytes
	flipped := slices.Clone(valid)
	flipped[20] ^= 0x10
	cases := map[string][]byte{
		"empty":            nil,
		"short":            valid[:linkMinBytes-1],
		"bad magic":        linkReseal(append([]byte("TMLINKZ\x00"), valid[8:]...)),
		"bad CRC":          flipped,
		"version 2":        mod(func(e *linkEncoding) { e.version = 2 }),
		"cap 0":            mod(func(e *linkEncoding) { e.caps[3] = 0 }),
		"cap -2":           mod(func(e *linkEncoding) { e.caps[0] = -2 }),
		"huge node count":  huge(linkHeaderBytes),
		"huge edge count":  huge(edgeStart),
		"keys unsorted":    mod(func(e *linkEncoding) { e.nodes[0], e.nodes[1] = e.nodes[1], e.nodes[0] }),
		"duplicate key":    mod(func(e *linkEncoding) { e.nodes[1].key = 1 }),
		"NaN time":         mod(func(e *linkEncoding) { e.nodes[2].t = math.NaN() }),
		"Inf time":         mod(func(e *linkEncoding) { e.nodes[2].t = math.Inf(1) }),
		"bad flags":        mod(func(e *linkEncoding) { e.nodes[2].flags = 3 }),
		"dangling to":      mod(func(e *linkEncoding) { e.edges[Version][0].to = 99 }),
		"dangling from":    mod(func(e *linkEncoding) { e.edges[Version][0].from = 99 }),
		"self-loop":        mod(func(e *linkEncoding) { e.edges[Sibling][0].to = 2 }),
		"temporal forward": mod(func(e *linkEncoding) { e.edges[Temporal][0] = linkEncEdge{2, 3, 0} }),
		"temporal equal":   mod(func(e *linkEncoding) { e.edges[Temporal][0] = linkEncEdge{3, 7, 0} }),
		"version sim":      mod(func(e *linkEncoding) { e.edges[Version][0].sim = 0.5 }),
		"NaN sim":          mod(func(e *linkEncoding) { e.edges[Sibling][0].sim = math.NaN() }),
		"Inf sim":          mod(func(e *linkEncoding) { e.edges[Sibling][0].sim = math.Inf(-1) }),
		"out of rank":      mod(func(e *linkEncoding) { s := e.edges[Semantic]; s[0], s[1] = s[1], s[0] }),
		"froms unsorted":   mod(func(e *linkEncoding) { v := e.edges[Version]; v[0], v[1] = v[1], v[0] }),
		"duplicate link":   mod(func(e *linkEncoding) { e.edges[Version][1] = e.edges[Version][0] }),
		"over cap":         mod(func(e *linkEncoding) { e.caps[3] = 1 }),
		"no depended_by":   mod(func(e *linkEncoding) { e.edges[DependedBy] = nil }),
		"wrong mirror": mod(func(e *linkEncoding) {
			e.edges[DependedBy] = []linkEncEdge{{3, 1, 0}}
		}),
		"asymmetric contradicts": mod(func(e *linkEncoding) { e.edges[Contradicts] = e.edges[Contradicts][:1] }),
		"trailing bytes":         mod(func(e *linkEncoding) { e.trailer = []byte{0} }),
	}
	for i := range len(valid) - 1 {
		cases[fmt.Sprintf("truncated to %d", i)] = valid[:i]
		cases[fmt.Sprintf("truncated to %d, resealed", i)] = linkReseal(valid[:i])
	}
	g := linkMustGraph(t, nil)
	linkMustNode(t, g, 5, 5, true)
	before, _ := g.MarshalBinary()
	for name, b := range cases {
		if err := g.UnmarshalBinary(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
	if after, _ := g.MarshalBinary(); !bytes.Equal(before, after) {
		t.Error("a failed UnmarshalBinary changed the graph")
	}
	if err := g.UnmarshalBinary(valid); err != nil {
		t.Fatalf("valid encoding: %v", err)
	}
}

// TestLinkUnmarshalAllocations checks counts are checked against the bytes
// left before anything is allocated.
func TestLinkUnmarshalAllocations(t *testing.T) {
	e := linkValidEncoding()
	b := e.bytes()
	binary.LittleEndian.PutUint64(b[linkHeaderBytes:], 1<<40)
	b = linkReseal(b)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := new(Graph).UnmarshalBinary(b)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<16 {
		t.Errorf("rejecting a 2⁴⁰-node header allocated %d bytes", d)
	}
}

func FuzzLinkUnmarshal(f *testing.F) {
	valid := linkValidEncoding().bytes()
	r := rand.New(rand.NewPCG(5, 6))
	spec := linkRandomSpec(r, 12, 40)
	g := spec.build(f, &Options{CapVersion: 2, CapDepends: 2}, r)
	random, _ := g.MarshalBinary()
	var zero Graph
	empty, _ := zero.MarshalBinary()
	for _, b := range [][]byte{valid, random, empty} {
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(b[:len(b)-1])
		for _, bit := range []int{3, 70, 8 * (linkHeaderBytes + 3), 8*len(b) - 40} {
			c := slices.Clone(b)
			c[bit/8] ^= 1 << (bit % 8)
			f.Add(c)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The raw input mostly fails the CRC; the resealed one reaches the
		// structural checks.
		for _, b := range [][]byte{data, linkReseal(data)} {
			var g Graph
			err := g.UnmarshalBinary(b)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error %v does not wrap ErrCorrupt", err)
				}
				continue
			}
			out, err := g.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, b) {
				t.Fatalf("accepted input re-marshals differently:\n in %x\nout %x", b, out)
			}
			if keys := g.keys(); len(keys) > 0 {
				if _, err := g.Expand(keys[:1], 3, 16, linkAllTypes()); err != nil {
					t.Fatal(err)
				}
			}
			g.Orphans()
		}
	})
}

// Linked says which link types the graph has ever held: false only when
// Expand over the type can find nothing; it survives the codec.
func TestLinked(t *testing.T) {
	g := linkMustGraph(t, nil)
	for k := range uint64(3) {
		linkMustNode(t, g, k, float64(10-k), k == 0)
	}
	if g.Linked(Version) || g.Linked(Temporal) {
		t.Fatal("an empty graph says it has links")
	}
	if hits, err := g.Expand([]uint64{0}, 3, 10, []Type{Version}); err != nil || hits != nil {
		t.Fatalf("Expand without links: %v, %v", hits, err)
	}
	linkMustEdge(t, g, Version, 0, 1, 0)
	if !g.Linked(Version) || g.Linked(Temporal) {
		t.Fatalf("after a version link: Version %v, Temporal %v", g.Linked(Version), g.Linked(Temporal))
	}
	if hits, err := g.Expand([]uint64{0}, 3, 10, []Type{Version}); err != nil || len(hits) != 1 {
		t.Fatalf("Expand with a version link: %v, %v", hits, err)
	}
	if g.Linked(numTypes) {
		t.Fatal("an unknown type is linked")
	}
	b, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Graph
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !back.Linked(Version) || back.Linked(Temporal) {
		t.Fatalf("decoded: Version %v, Temporal %v", back.Linked(Version), back.Linked(Temporal))
	}
}

// Nodes live in a table indexed by key: keys far apart (chunks never
// allocated between them) are found, listed in order and encoded; a key
// of 2³² or more is refused, and nothing is added.
func TestNodeTableSparseKeys(t *testing.T) {
	g, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := []uint64{0, 4095, 4096, 1 << 20, MaxKey - 1}
	for i, k := range keys {
		if err := g.AddNode(k, float64(i), i%2 == 0); err != nil {
			t.Fatalf("AddNode(%d): %v", k, err)
		}
	}
	if err := g.AddNode(MaxKey, 1, true); !errors.Is(err, ErrInvalid) {
		t.Errorf("AddNode(2³²): %v, want ErrInvalid", err)
	}
	if got := g.keys(); !slices.Equal(got, keys) {
		t.Fatalf("keys %v, want %v", got, keys)
	}
	for _, k := range []uint64{1, 4097, 1<<20 + 1, MaxKey, 1 << 40} {
		if _, _, ok := g.Node(k); ok {
			t.Errorf("Node(%d) found a node never added", k)
		}
	}
	if err := g.AddEdge(Version, MaxKey-1, 0, 0); err != nil {
		t.Fatal(err)
	}
	b, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var u Graph
	if err := u.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if got := u.keys(); !slices.Equal(got, keys) || u.nodeCount() != len(keys) {
		t.Fatalf("decoded keys %v (%d nodes), want %v", got, u.nodeCount(), keys)
	}
	if n := u.Neighbors(MaxKey-1, Version); !slices.Equal(n, []uint64{0}) {
		t.Errorf("decoded version link %v", n)
	}
}
