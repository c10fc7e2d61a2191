package links

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// Type is the type of a directed link between two memories.
//
// The four All-Mem families (§3.1, App. B.1) are sibling coherence (β),
// version (ν, new → old), temporal (τ, → predecessor) and semantic (σ);
// SmartVector adds depends_on / depended_by (kept mirrored) and contradicts
// (kept symmetric).
//
// The numeric value of a Type is its expansion priority π (All-Mem
// App. D.3, Eq. 33: π(sibling) = 0, π(version) = 1, π(temporal) = 2,
// π(semantic) = 3; smaller is expanded first), extended with the
// SmartVector types after the All-Mem ones. It is also the value written by
// [Graph.MarshalBinary], so it never changes.
type Type uint8

// Link types, in expansion-priority order.
const (
	// Sibling (β) joins the sibling units created by one Split
	// (All-Mem App. B.2.1). Capped by [Options.CapSibling] under Key_β.
	Sibling Type = iota
	// Version (ν) points from a new unit to the unit it superseded
	// (Split, Merge, Update: new → old). Version links are what keep
	// archived units reachable (App. B.4). Uncapped by default.
	Version
	// Temporal (τ) points back in time to a predecessor: an edge
	// from → to requires t_to < t_from (App. B.1, "Temporal direction
	// convention"). Capped by [Options.CapTemporal] (1) under Key_τ.
	Temporal
	// Semantic (σ) joins semantically associated units. Capped by
	// [Options.CapSemantic] under Key_σ.
	Semantic
	// DependsOn points from a memory to a memory it depends on
	// (SmartVector §3). Adding a → b also records DependedBy b → a.
	DependsOn
	// DependedBy is the mirror of DependsOn: b → a when a depends
	// on b. SmartVector's ripple propagation walks these. Adding b → a also
	// records DependsOn a → b.
	DependedBy
	// Contradicts joins two memories that contradict each other
	// (SmartVector). It is symmetric: adding a → b also records b → a.
	Contradicts
	numTypes
)

var linkTypeNames = [numTypes]string{
	"sibling", "version", "temporal", "semantic",
	"depends_on", "depended_by", "contradicts",
}

// String returns the type's lower-case name ("sibling", "version",
// "temporal", "semantic", "depends_on", "depended_by", "contradicts").
func (t Type) String() string {
	if t < numTypes {
		return linkTypeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// MarshalText implements encoding.TextMarshaler.
func (t Type) MarshalText() ([]byte, error) {
	if t >= numTypes {
		return nil, fmt.Errorf("%w: link type %d", ErrInvalid, uint8(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler; see [parseType].
func (t *Type) UnmarshalText(b []byte) error {
	v, err := parseType(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// parseType parses a link type name in any case. Besides the names
// [Type.String] returns, it accepts All-Mem App. D.1's "sibling_split"
// for [Sibling] and "revision" for [Version] (π(revision) =
// π(version)).
func parseType(s string) (Type, error) {
	for i, n := range linkTypeNames {
		if strings.EqualFold(s, n) {
			return Type(i), nil
		}
	}
	switch strings.ToLower(s) {
	case "sibling_split":
		return Sibling, nil
	case "revision":
		return Version, nil
	}
	return 0, fmt.Errorf("%w: unknown link type %q", ErrInvalid, s)
}

// usesSim reports whether the type's ranking key starts with the link's
// similarity (Key_σ, Key_β); every other type ranks by (t_u desc, id asc).
func (t Type) usesSim() bool { return t == Sibling || t == Semantic }

// mirror returns the type recorded in the opposite direction, if any.
func (t Type) mirror() (Type, bool) {
	switch t {
	case DependsOn:
		return DependedBy, true
	case DependedBy:
		return DependsOn, true
	case Contradicts:
		return Contradicts, true
	}
	return 0, false
}

// Unbounded, as a [Options] cap, means "no cap".
const Unbounded = -1

// Options are the per-type out-degree caps of a [Graph] (All-Mem
// App. B.1, Eq. 12). A nil *Options means every default. In every
// field, 0 selects the default, [Unbounded] means no cap, and a
// positive value is the cap; any other value is invalid.
//
// Caps are enforced by [Graph.AddEdge] with the deterministic TopCap of
// App. B.1 (Eq. 17–18): the out-neighbourhood of the edge's source is
// sorted by the type's ranking key and cut after the first cap nodes.
type Options struct {
	// CapSibling is cap_β, the out-degree cap on sibling links, ranked by
	// Key_β = (sim desc, t_u desc, id asc). Default 4 (All-Mem: "a small
	// constant").
	CapSibling int
	// CapVersion is cap_ν^out, the out-degree cap on version links, ranked
	// by Key_ν = (t_u desc, id asc). Default unbounded (All-Mem: "by
	// default cap_ν^out = ∞ (no pruning)"). When bounded, pruning follows
	// the no-orphan rule of App. B.4/B.7: mandatory children are always
	// kept and only the rest of the budget is filled by Key_ν; when the
	// mandatory children alone exceed the cap, all of them are kept — the
	// cap yields to the no-orphan rule.
	CapVersion int
	// CapTemporal is cap_τ, the out-degree cap on temporal links, ranked
	// by Key_τ = (t_u desc, id asc): the closest-in-time predecessor wins.
	// Default 1 (All-Mem: "cap_τ = 1").
	CapTemporal int
	// CapSemantic is cap_σ, the out-degree cap on semantic links, ranked
	// by Key_σ = (sim desc, t_u desc, id asc). Default 8 (All-Mem: "a
	// small constant").
	CapSemantic int
	// CapDepends caps the out-degree of depends_on and, separately, of
	// depended_by links, ranked by (t_u desc, id asc); pruning one
	// direction removes its mirror. Default unbounded (SmartVector keeps
	// full dependency lists for ripple propagation).
	CapDepends int
	// CapContradicts caps the out-degree of contradicts links, ranked by
	// (t_u desc, id asc); pruning one direction removes the other. Default
	// unbounded.
	CapContradicts int
}

// Defaults of Options; CapVersion, CapDepends and CapContradicts default
// to Unbounded.
const (
	DefaultCapSibling  = 4
	DefaultCapTemporal = 1
	DefaultCapSemantic = 8
)

// linkDefaultOptions are the defaults; Unbounded where the default is
// "no cap".
var linkDefaultOptions = Options{
	CapSibling:     DefaultCapSibling,
	CapVersion:     Unbounded,
	CapTemporal:    DefaultCapTemporal,
	CapSemantic:    DefaultCapSemantic,
	CapDepends:     Unbounded,
	CapContradicts: Unbounded,
}

// fields returns pointers to the caps with their names, in a fixed order
// (which is also the order of the binary encoding).
func (o *Options) fields() [6]struct {
	name string
	p    *int
} {
	return [6]struct {
		name string
		p    *int
	}{
		{"CapSibling", &o.CapSibling},
		{"CapVersion", &o.CapVersion},
		{"CapTemporal", &o.CapTemporal},
		{"CapSemantic", &o.CapSemantic},
		{"CapDepends", &o.CapDepends},
		{"CapContradicts", &o.CapContradicts},
	}
}

// WithDefaults returns a copy of o with every zero field set to its
// default; a nil o gives all defaults. It does not validate.
func (o *Options) WithDefaults() Options {
	out := linkDefaultOptions
	if o == nil {
		return out
	}
	in := *o
	f, d := in.fields(), out.fields()
	for i := range f {
		if *f[i].p != 0 {
			*d[i].p = *f[i].p
		}
	}
	return out
}

// Validate reports the first invalid field: a cap below [Unbounded] or
// above math.MaxInt32. A nil o is valid.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	in := *o
	for _, f := range in.fields() {
		if v := *f.p; v < Unbounded || v > math.MaxInt32 {
			return fmt.Errorf("%w: Options.%s = %d (want Unbounded, 0 for the default, or a cap in [1, 2³¹−1])",
				ErrInvalid, f.name, v)
		}
	}
	return nil
}

// caps converts resolved options into per-type caps, 0 meaning unbounded.
func (o *Options) caps() [numTypes]int {
	c := func(v int) int {
		if v < 0 {
			return 0
		}
		return v
	}
	return [numTypes]int{
		Sibling:     c(o.CapSibling),
		Version:     c(o.CapVersion),
		Temporal:    c(o.CapTemporal),
		Semantic:    c(o.CapSemantic),
		DependsOn:   c(o.CapDepends),
		DependedBy:  c(o.CapDepends),
		Contradicts: c(o.CapContradicts),
	}
}

// Hit is one node reached by [Graph.Expand].
type Hit struct {
	// Key is the node reached.
	Key uint64
	// Hop is its hop distance from the anchors, 1 ≤ Hop ≤ hopLimit.
	Hop int
	// Via is the type of the link it was first reached by.
	Via Type
	// From is the node that link starts at (an anchor when Hop is 1).
	From uint64
}

// linkEdge is one out-link. t caches the target's time (immutable, see
// AddNode) so ranking needs no map look-up; sim is 0 for types that do not
// rank by similarity.
type linkEdge struct {
	to  uint64
	t   float64
	sim float64
}

type linkNode struct {
	t       float64
	visible bool
	present bool // the slot of the nodeTable holds a node
	// lists is 0 until the node has a link (most memories never do),
	// then one past the index of its links in nodeTable.lists.
	lists uint32
}

// linkLists are a node's links.
type linkLists struct {
	// out holds the out-links of each type, sorted by the type's ranking
	// key (Key_σ, Key_β, Key_τ, Key_ν of All-Mem App. B.1).
	out [numTypes][]linkEdge
	// vparents are the sources of incoming version links, in no order.
	vparents []uint64
}

// noLinks is what a node without links reads; nothing writes it.
var noLinks linkLists

// Graph is a directed graph of typed links over memory keys, holding
// archived (invisible) memories as well as visible ones: All-Mem's typed
// link topology (§3.1, App. B) with SmartVector's dependency and
// contradiction edges.
//
// Each node carries a time t (days, on the caller's epoch) and a visibility
// flag. Each node's out-links of each type are kept sorted by the type's
// deterministic ranking key and cut to the type's cap, so the graph — and
// every [Graph.Neighbors] and [Graph.Expand] answer — depends only
// on the set of links added, not on the order they were added in (with
// uncapped version links; a capped version list also depends on visibility
// at pruning time, see [Options.CapVersion]).
//
// The zero value is an empty graph with default options. A Graph is
// safe for concurrent use: writers take an exclusive lock, readers a shared
// one.
type Graph struct {
	mu sync.RWMutex
	// Guarded by mu.
	ready bool // opts, caps and nodes are initialised
	opts  Options
	caps  [numTypes]int // 0 means unbounded
	nodes nodeTable
	// linked[typ] is set when a link of type typ is first added (and
	// never cleared): Linked's cheap answer.
	linked [numTypes]bool
}

// Linked reports whether a link of type typ was ever added to the graph.
// When it was not, Expand over typ finds nothing: a caller can skip it,
// and the visited set and the anchors' lookups it costs.
func (g *Graph) Linked(typ Type) bool {
	if typ >= numTypes {
		return false
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.linked[typ]
}

// New returns an empty graph with the given caps; nil means every
// default. Invalid options give an error wrapping [ErrInvalid].
func New(opts *Options) (*Graph, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	g := &Graph{}
	g.setOptions(opts.WithDefaults())
	return g, nil
}

func (g *Graph) setOptions(o Options) {
	g.opts = o
	g.caps = o.caps()
	g.ready = true
}

// init prepares a zero-value graph; callers hold mu exclusively.
func (g *Graph) init() {
	if !g.ready {
		g.setOptions(linkDefaultOptions)
	}
}

// Options returns the graph's caps with defaults filled in (unbounded caps
// read [Unbounded]).
func (g *Graph) Options() Options {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if !g.ready {
		return linkDefaultOptions
	}
	return g.opts
}

// nodeCount returns the number of nodes, visible and archived.
func (g *Graph) nodeCount() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.nodes.len()
}

// Keys returns every node's key in ascending order, in a fresh slice.
func (g *Graph) keys() []uint64 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.sortedKeys()
}

func (g *Graph) sortedKeys() []uint64 {
	keys := make([]uint64, 0, g.nodes.len())
	for k := range g.nodes.all() {
		keys = append(keys, k)
	}
	return keys
}

// Node returns a node's time and visibility; ok is false for an unknown
// key.
func (g *Graph) Node(key uint64) (t float64, visible, ok bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n := g.nodes.get(key)
	if n == nil {
		return 0, false, false
	}
	return n.t, n.visible, true
}

// AddNode adds a node at time t (days; finite) that is visible (on the
// surface the ANN index searches) or archived.
//
// A node's time is immutable, like its evidence (All-Mem §3.1): the ranking
// keys of the links into it and the direction of its temporal links depend
// on it. Re-adding a key with the same time only sets its visibility (like
// [Graph.SetVisible]); re-adding it with a different time is an error
// wrapping [ErrExists]. A non-finite t wraps [ErrInvalid].
func (g *Graph) AddNode(key uint64, t float64, visible bool) error {
	if math.IsNaN(t) || math.IsInf(t, 0) {
		return fmt.Errorf("%w: node %d has time %v", ErrInvalid, key, t)
	}
	if key >= MaxKey {
		return fmt.Errorf("%w: node key %d is not below 2³²", ErrInvalid, key)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.init()
	if n := g.nodes.get(key); n != nil {
		if n.t != t {
			return fmt.Errorf("%w: node %d has time %v, not %v", ErrExists, key, n.t, t)
		}
		n.visible = visible
		return nil
	}
	g.nodes.add(key, linkNode{t: t, visible: visible})
	return nil
}

// SetVisible sets a node's visibility: false archives it (All-Mem a_v ← 0),
// true restores it to the surface. It prunes nothing; archiving a node that
// no visible node reaches by version links makes it an orphan, which
// [Graph.Orphans] reports.
func (g *Graph) SetVisible(key uint64, visible bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.nodes.get(key)
	if n == nil {
		return fmt.Errorf("%w: %d", ErrUnknown, key)
	}
	n.visible = visible
	return nil
}

// AddEdge adds the link from → to of type typ, then enforces the type's cap
// at from with All-Mem's deterministic TopCap (App. B.1, Eq. 17–18).
//
// sim is the similarity sim(z_from, z_to) that Key_σ and Key_β rank by; it
// is ignored (stored as 0) for the other types but must still be finite.
// Both keys must be nodes ([ErrUnknown]); a self-loop, a non-finite sim
// or a temporal link whose target is not strictly older than its source
// (t_to < t_from, App. B.1) wraps [ErrInvalid].
//
// Adding a link that exists is idempotent, except that it updates sim (and
// so the link's rank). Adding a depends_on link also adds the mirror
// depended_by link and vice versa, and adding a contradicts link adds the
// reverse one; the cap is then enforced at both ends, and a link pruned at
// either end is removed together with its mirror.
//
// AddEdge succeeds even when the new link ranks below the cap and is pruned
// at once: it competed and lost, as TopCap prescribes.
func (g *Graph) AddEdge(typ Type, from, to uint64, sim float64) error {
	if typ >= numTypes {
		return fmt.Errorf("%w: link type %d", ErrInvalid, uint8(typ))
	}
	if math.IsNaN(sim) || math.IsInf(sim, 0) {
		return fmt.Errorf("%w: %s link %d → %d has similarity %v", ErrInvalid, typ, from, to, sim)
	}
	if from == to {
		return fmt.Errorf("%w: %s self-loop on %d", ErrInvalid, typ, from)
	}
	if !typ.usesSim() {
		sim = 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	fn, tn, err := g.endpoints(from, to)
	if err != nil {
		return err
	}
	if typ == Temporal && !(tn.t < fn.t) {
		return fmt.Errorf("%w: temporal link %d → %d must point back in time (t_to = %v, t_from = %v)",
			ErrInvalid, from, to, tn.t, fn.t)
	}
	g.upsert(typ, fn, from, to, tn, sim)
	m, mirrored := typ.mirror()
	if mirrored {
		g.upsert(m, tn, to, from, fn, 0)
	}
	g.enforceCap(typ, from, fn)
	if mirrored {
		g.enforceCap(m, to, tn)
	}
	return nil
}

// linkRanksBefore reports whether a ranks strictly before b in typ's
// ranking key: Key_σ = Key_β = (sim desc, t_u desc, id asc) and
// Key_τ = Key_ν = (t_u desc, id asc) (All-Mem App. B.1, Eq. 13–16, where
// −id(u) ranked descending means the smaller id wins a tie). The SmartVector
// types use the Key_τ/Key_ν order. The id makes it a strict total order.
func linkRanksBefore(typ Type, a, b linkEdge) bool {
	if typ.usesSim() && a.sim != b.sim {
		return a.sim > b.sim
	}
	if a.t != b.t {
		return a.t > b.t
	}
	return a.to < b.to
}

func linkIndex(list []linkEdge, to uint64) int {
	for i := range list {
		if list[i].to == to {
			return i
		}
	}
	return -1
}

// upsert inserts fn → to (or updates its sim), keeping the list sorted.
// Callers hold mu exclusively.
func (g *Graph) upsert(typ Type, fn *linkNode, from, to uint64, tn *linkNode, sim float64) {
	list := g.nodes.l(fn).out[typ]
	if i := linkIndex(list, to); i >= 0 {
		if list[i].sim == sim {
			return
		}
		list = slices.Delete(list, i, i+1)
	} else if typ == Version {
		g.nodes.w(tn).vparents = append(g.nodes.w(tn).vparents, from)
	}
	g.linked[typ] = true
	e := linkEdge{to: to, t: tn.t, sim: sim}
	i, _ := slices.BinarySearchFunc(list, e, func(x, y linkEdge) int {
		if linkRanksBefore(typ, x, y) {
			return -1
		}
		if linkRanksBefore(typ, y, x) {
			return 1
		}
		return 0
	})
	g.nodes.w(fn).out[typ] = slices.Insert(list, i, e)
}

// unlink removes from → to of type typ if present, reporting whether it was.
// It does not touch the mirror. Callers hold mu exclusively.
func (g *Graph) unlink(typ Type, fn *linkNode, from, to uint64) bool {
	i := linkIndex(g.nodes.l(fn).out[typ], to)
	if i < 0 {
		return false
	}
	g.nodes.w(fn).out[typ] = slices.Delete(g.nodes.w(fn).out[typ], i, i+1)
	if typ == Version {
		if tn := g.nodes.get(to); tn != nil {
			if j := slices.Index(g.nodes.l(tn).vparents, from); j >= 0 {
				g.nodes.w(tn).vparents = slices.Delete(g.nodes.w(tn).vparents, j, j+1)
			}
		}
	}
	return true
}

// enforceCap applies TopCap_typ at key. Callers hold mu exclusively.
func (g *Graph) enforceCap(typ Type, key uint64, n *linkNode) {
	limit := g.caps[typ]
	list := g.nodes.l(n).out[typ]
	if limit == 0 || len(list) <= limit {
		return
	}
	if typ == Version {
		g.pruneVersion(key, n, limit)
		return
	}
	dropped := slices.Clone(list[limit:])
	g.nodes.w(n).out[typ] = slices.Delete(list, limit, len(list))
	m, mirrored := typ.mirror()
	for _, e := range dropped {
		if mirrored {
			if tn := g.nodes.get(e.to); tn != nil {
				g.unlink(m, tn, e.to, key)
			}
		}
	}
}

// pruneVersion cuts r's version links to limit with All-Mem's no-orphan
// pruning (App. B.4, Eq. 23, and B.7): keep every mandatory child, then fill
// the rest of the budget by Key_ν; if the mandatory children alone exceed
// the limit, keep exactly them (the cap yields to the no-orphan rule).
//
// For a visible r the mandatory children are, as in Eq. 23, the archived
// children whose only visible version parent is r. The paper defines the
// rule for visible r only; for an archived r (a link inside an archived
// chain) Par(x) never contains r, so tidemark instead keeps every archived
// child that would become an orphan without r's links: one that no visible
// node reaches by version links avoiding r's out-links, provided r itself is
// reachable. Either way pruning never creates an orphan.
func (g *Graph) pruneVersion(r uint64, n *linkNode, limit int) {
	list := g.nodes.l(n).out[Version]
	mandatory := make([]bool, len(list))
	count := 0
	if n.visible {
		for i, e := range list {
			c := g.nodes.get(e.to)
			if c.visible {
				continue
			}
			only := true
			for _, p := range g.nodes.l(c).vparents {
				if p != r && g.nodes.get(p).visible {
					only = false
					break
				}
			}
			if only {
				mandatory[i] = true
				count++
			}
		}
	} else {
		reach := g.versionReach(r, true)
		if _, ok := reach[r]; ok {
			for i, e := range list {
				if _, ok := reach[e.to]; !ok && !g.nodes.get(e.to).visible {
					mandatory[i] = true
					count++
				}
			}
		}
	}
	fill := max(limit-count, 0)
	kept := make([]linkEdge, 0, count+fill)
	var dropped []uint64
	for i, e := range list {
		switch {
		case mandatory[i]:
			kept = append(kept, e)
		case fill > 0:
			kept = append(kept, e)
			fill--
		default:
			dropped = append(dropped, e.to)
		}
	}
	g.nodes.w(n).out[Version] = kept
	for _, to := range dropped {
		tn := g.nodes.get(to)
		if j := slices.Index(g.nodes.l(tn).vparents, r); j >= 0 {
			g.nodes.w(tn).vparents = slices.Delete(g.nodes.w(tn).vparents, j, j+1)
		}
	}
}

// versionReach returns the nodes reachable from the visible surface along
// version links (All-Mem's G_ν), ignoring the out-links of skip when
// skipping is set. Callers hold mu.
func (g *Graph) versionReach(skip uint64, skipping bool) map[uint64]struct{} {
	var roots []uint64
	for k, n := range g.nodes.all() {
		if n.visible {
			roots = append(roots, k)
		}
	}
	return g.reachFrom(roots, skip, skipping)
}

// reachFrom returns the nodes reachable from roots along version links
// (the roots included), not walking on from skip when skipping; the
// caller holds g.mu.
func (g *Graph) reachFrom(roots []uint64, skip uint64, skipping bool) map[uint64]struct{} {
	reach := make(map[uint64]struct{}, g.nodes.len())
	queue := make([]uint64, 0, len(roots))
	for _, k := range roots {
		if g.nodes.get(k) != nil {
			reach[k] = struct{}{}
			queue = append(queue, k)
		}
	}
	for len(queue) > 0 {
		k := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if skipping && k == skip {
			continue
		}
		for _, e := range g.nodes.l(g.nodes.get(k)).out[Version] {
			if _, ok := reach[e.to]; !ok {
				reach[e.to] = struct{}{}
				queue = append(queue, e.to)
			}
		}
	}
	return reach
}

// endpoints returns the nodes of a link's two keys; the caller holds g.mu.
func (g *Graph) endpoints(from, to uint64) (fn, tn *linkNode, err error) {
	fn, tn = g.nodes.get(from), g.nodes.get(to)
	if fn == nil {
		return nil, nil, fmt.Errorf("%w: %d", ErrUnknown, from)
	}
	if tn == nil {
		return nil, nil, fmt.Errorf("%w: %d", ErrUnknown, to)
	}
	return fn, tn, nil
}

// removeEdge removes the link from → to of type typ and, for the mirrored
// types, its mirror (depends_on ↔ depended_by, contradicts both ways).
// Removing a link that does not exist is a no-op; unknown keys wrap
// [ErrUnknown]. Removing a version link may orphan its target; see
// [Graph.Orphans].
func (g *Graph) removeEdge(typ Type, from, to uint64) error {
	if typ >= numTypes {
		return fmt.Errorf("%w: link type %d", ErrInvalid, uint8(typ))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	fn, tn, err := g.endpoints(from, to)
	if err != nil {
		return err
	}
	g.unlink(typ, fn, from, to)
	if m, ok := typ.mirror(); ok {
		g.unlink(m, tn, to, from)
	}
	return nil
}

// Neighbors returns key's out-neighbours of type typ in the type's
// deterministic ranking order (Key_σ, Key_β, Key_τ, Key_ν of All-Mem App.
// B.1; (t_u desc, id asc) for the SmartVector types), in a fresh slice. It
// returns nil for an unknown key, an invalid type or no neighbours.
func (g *Graph) Neighbors(key uint64, typ Type) []uint64 {
	if typ >= numTypes {
		return nil
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	n := g.nodes.get(key)
	if n == nil || len(g.nodes.l(n).out[typ]) == 0 {
		return nil
	}
	out := make([]uint64, len(g.nodes.l(n).out[typ]))
	for i, e := range g.nodes.l(n).out[typ] {
		out[i] = e.to
	}
	return out
}
