package index

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"strings"
	"sync"
)

// Errors returned by [LinkGraph], wrapped with detail; test with errors.Is.

// LinkType is the type of a directed link between two memories.
//
// The four All-Mem families (§3.1, App. B.1) are sibling coherence (β),
// version (ν, new → old), temporal (τ, → predecessor) and semantic (σ);
// SmartVector adds depends_on / depended_by (kept mirrored) and contradicts
// (kept symmetric).
//
// The numeric value of a LinkType is its expansion priority π (All-Mem
// App. D.3, Eq. 33: π(sibling) = 0, π(version) = 1, π(temporal) = 2,
// π(semantic) = 3; smaller is expanded first), extended with the
// SmartVector types after the All-Mem ones. It is also the value written by
// [LinkGraph.MarshalBinary], so it never changes.
type LinkType uint8

// Link types, in expansion-priority order.
const (
	// LinkSibling (β) joins the sibling units created by one Split
	// (All-Mem App. B.2.1). Capped by [LinkOptions.CapSibling] under Key_β.
	LinkSibling LinkType = iota
	// LinkVersion (ν) points from a new unit to the unit it superseded
	// (Split, Merge, Update: new → old). Version links are what keep
	// archived units reachable (App. B.4). Uncapped by default.
	LinkVersion
	// LinkTemporal (τ) points back in time to a predecessor: an edge
	// from → to requires t_to < t_from (App. B.1, "Temporal direction
	// convention"). Capped by [LinkOptions.CapTemporal] (1) under Key_τ.
	LinkTemporal
	// LinkSemantic (σ) joins semantically associated units. Capped by
	// [LinkOptions.CapSemantic] under Key_σ.
	LinkSemantic
	// LinkDependsOn points from a memory to a memory it depends on
	// (SmartVector §3). Adding a → b also records LinkDependedBy b → a.
	LinkDependsOn
	// LinkDependedBy is the mirror of LinkDependsOn: b → a when a depends
	// on b. SmartVector's ripple propagation walks these. Adding b → a also
	// records LinkDependsOn a → b.
	LinkDependedBy
	// LinkContradicts joins two memories that contradict each other
	// (SmartVector). It is symmetric: adding a → b also records b → a.
	LinkContradicts
	numLinkTypes
)

var linkTypeNames = [numLinkTypes]string{
	"sibling", "version", "temporal", "semantic",
	"depends_on", "depended_by", "contradicts",
}

// String returns the type's lower-case name ("sibling", "version",
// "temporal", "semantic", "depends_on", "depended_by", "contradicts").
func (t LinkType) String() string {
	if t < numLinkTypes {
		return linkTypeNames[t]
	}
	return fmt.Sprintf("LinkType(%d)", uint8(t))
}

// MarshalText implements encoding.TextMarshaler.
func (t LinkType) MarshalText() ([]byte, error) {
	if t >= numLinkTypes {
		return nil, fmt.Errorf("%w: link type %d", ErrLinkInvalid, uint8(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler; see [ParseLinkType].
func (t *LinkType) UnmarshalText(b []byte) error {
	v, err := ParseLinkType(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// ParseLinkType parses a link type name in any case. Besides the names
// [LinkType.String] returns, it accepts All-Mem App. D.1's "sibling_split"
// for [LinkSibling] and "revision" for [LinkVersion] (π(revision) =
// π(version)).
func ParseLinkType(s string) (LinkType, error) {
	for i, n := range linkTypeNames {
		if strings.EqualFold(s, n) {
			return LinkType(i), nil
		}
	}
	switch strings.ToLower(s) {
	case "sibling_split":
		return LinkSibling, nil
	case "revision":
		return LinkVersion, nil
	}
	return 0, fmt.Errorf("%w: unknown link type %q", ErrLinkInvalid, s)
}

// usesSim reports whether the type's ranking key starts with the link's
// similarity (Key_σ, Key_β); every other type ranks by (t_u desc, id asc).
func (t LinkType) usesSim() bool { return t == LinkSibling || t == LinkSemantic }

// mirror returns the type recorded in the opposite direction, if any.
func (t LinkType) mirror() (LinkType, bool) {
	switch t {
	case LinkDependsOn:
		return LinkDependedBy, true
	case LinkDependedBy:
		return LinkDependsOn, true
	case LinkContradicts:
		return LinkContradicts, true
	}
	return 0, false
}

// LinkUnbounded, as a [LinkOptions] cap, means "no cap".
const LinkUnbounded = -1

// LinkOptions are the per-type out-degree caps of a [LinkGraph] (All-Mem
// App. B.1, Eq. 12). A nil *LinkOptions means every default. In every
// field, 0 selects the default, [LinkUnbounded] means no cap, and a
// positive value is the cap; any other value is invalid.
//
// Caps are enforced by [LinkGraph.AddEdge] with the deterministic TopCap of
// App. B.1 (Eq. 17–18): the out-neighbourhood of the edge's source is
// sorted by the type's ranking key and cut after the first cap nodes.
type LinkOptions struct {
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

// Defaults of LinkOptions; CapVersion, CapDepends and CapContradicts
// default to LinkUnbounded.
const (
	DefaultCapSibling  = 4
	DefaultCapTemporal = 1
	DefaultCapSemantic = 8
)

// linkDefaultOptions are the defaults; LinkUnbounded where the default is
// "no cap".
var linkDefaultOptions = LinkOptions{
	CapSibling:     DefaultCapSibling,
	CapVersion:     LinkUnbounded,
	CapTemporal:    DefaultCapTemporal,
	CapSemantic:    DefaultCapSemantic,
	CapDepends:     LinkUnbounded,
	CapContradicts: LinkUnbounded,
}

// fields returns pointers to the caps with their names, in a fixed order
// (which is also the order of the binary encoding).
func (o *LinkOptions) fields() [6]struct {
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
func (o *LinkOptions) WithDefaults() LinkOptions {
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

// Validate reports the first invalid field: a cap below [LinkUnbounded] or
// above math.MaxInt32. A nil o is valid.
func (o *LinkOptions) Validate() error {
	if o == nil {
		return nil
	}
	in := *o
	for _, f := range in.fields() {
		if v := *f.p; v < LinkUnbounded || v > math.MaxInt32 {
			return fmt.Errorf("%w: LinkOptions.%s = %d (want LinkUnbounded, 0 for the default, or a cap in [1, 2³¹−1])",
				ErrLinkInvalid, f.name, v)
		}
	}
	return nil
}

// caps converts resolved options into per-type caps, 0 meaning unbounded.
func (o *LinkOptions) caps() [numLinkTypes]int {
	c := func(v int) int {
		if v < 0 {
			return 0
		}
		return v
	}
	return [numLinkTypes]int{
		LinkSibling:     c(o.CapSibling),
		LinkVersion:     c(o.CapVersion),
		LinkTemporal:    c(o.CapTemporal),
		LinkSemantic:    c(o.CapSemantic),
		LinkDependsOn:   c(o.CapDepends),
		LinkDependedBy:  c(o.CapDepends),
		LinkContradicts: c(o.CapContradicts),
	}
}

// LinkHit is one node reached by [LinkGraph.Expand].
type LinkHit struct {
	// Key is the node reached.
	Key uint64
	// Hop is its hop distance from the anchors, 1 ≤ Hop ≤ hopLimit.
	Hop int
	// Via is the type of the link it was first reached by.
	Via LinkType
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
	// out holds the out-links of each type, sorted by the type's ranking
	// key (Key_σ, Key_β, Key_τ, Key_ν of All-Mem App. B.1).
	out [numLinkTypes][]linkEdge
	// vparents are the sources of incoming version links, in no order.
	vparents []uint64
}

// LinkGraph is a directed graph of typed links over memory keys, holding
// archived (invisible) memories as well as visible ones: All-Mem's typed
// link topology (§3.1, App. B) with SmartVector's dependency and
// contradiction edges.
//
// Each node carries a time t (days, on the caller's epoch) and a visibility
// flag. Each node's out-links of each type are kept sorted by the type's
// deterministic ranking key and cut to the type's cap, so the graph — and
// every [LinkGraph.Neighbors] and [LinkGraph.Expand] answer — depends only
// on the set of links added, not on the order they were added in (with
// uncapped version links; a capped version list also depends on visibility
// at pruning time, see [LinkOptions.CapVersion]).
//
// The zero value is an empty graph with default options. A LinkGraph is
// safe for concurrent use: writers take an exclusive lock, readers a shared
// one.
type LinkGraph struct {
	mu sync.RWMutex
	// Guarded by mu.
	ready bool // opts, caps and nodes are initialised
	opts  LinkOptions
	caps  [numLinkTypes]int // 0 means unbounded
	nodes map[uint64]*linkNode
}

// NewLinkGraph returns an empty graph with the given caps; nil means every
// default. Invalid options give an error wrapping [ErrLinkInvalid].
func NewLinkGraph(opts *LinkOptions) (*LinkGraph, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	g := &LinkGraph{}
	g.setOptions(opts.WithDefaults())
	g.nodes = make(map[uint64]*linkNode)
	return g, nil
}

func (g *LinkGraph) setOptions(o LinkOptions) {
	g.opts = o
	g.caps = o.caps()
	g.ready = true
}

// init prepares a zero-value graph; callers hold mu exclusively.
func (g *LinkGraph) init() {
	if !g.ready {
		g.setOptions(linkDefaultOptions)
	}
	if g.nodes == nil {
		g.nodes = make(map[uint64]*linkNode)
	}
}

// Options returns the graph's caps with defaults filled in (unbounded caps
// read [LinkUnbounded]).
func (g *LinkGraph) Options() LinkOptions {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if !g.ready {
		return linkDefaultOptions
	}
	return g.opts
}

// NodeCount returns the number of nodes, visible and archived.
func (g *LinkGraph) NodeCount() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.nodes)
}

// Keys returns every node's key in ascending order, in a fresh slice.
func (g *LinkGraph) Keys() []uint64 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.sortedKeys()
}

func (g *LinkGraph) sortedKeys() []uint64 {
	keys := make([]uint64, 0, len(g.nodes))
	for k := range g.nodes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Node returns a node's time and visibility; ok is false for an unknown
// key.
func (g *LinkGraph) Node(key uint64) (t float64, visible, ok bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n := g.nodes[key]
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
// [LinkGraph.SetVisible]); re-adding it with a different time is an error
// wrapping [ErrLinkExists]. A non-finite t wraps [ErrLinkInvalid].
func (g *LinkGraph) AddNode(key uint64, t float64, visible bool) error {
	if math.IsNaN(t) || math.IsInf(t, 0) {
		return fmt.Errorf("%w: node %d has time %v", ErrLinkInvalid, key, t)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.init()
	if n := g.nodes[key]; n != nil {
		if n.t != t {
			return fmt.Errorf("%w: node %d has time %v, not %v", ErrLinkExists, key, n.t, t)
		}
		n.visible = visible
		return nil
	}
	g.nodes[key] = &linkNode{t: t, visible: visible}
	return nil
}

// SetVisible sets a node's visibility: false archives it (All-Mem a_v ← 0),
// true restores it to the surface. It prunes nothing; archiving a node that
// no visible node reaches by version links makes it an orphan, which
// [LinkGraph.Orphans] reports.
func (g *LinkGraph) SetVisible(key uint64, visible bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.nodes[key]
	if n == nil {
		return fmt.Errorf("%w: %d", ErrLinkUnknown, key)
	}
	n.visible = visible
	return nil
}

// AddEdge adds the link from → to of type typ, then enforces the type's cap
// at from with All-Mem's deterministic TopCap (App. B.1, Eq. 17–18).
//
// sim is the similarity sim(z_from, z_to) that Key_σ and Key_β rank by; it
// is ignored (stored as 0) for the other types but must still be finite.
// Both keys must be nodes ([ErrLinkUnknown]); a self-loop, a non-finite sim
// or a temporal link whose target is not strictly older than its source
// (t_to < t_from, App. B.1) wraps [ErrLinkInvalid].
//
// Adding a link that exists is idempotent, except that it updates sim (and
// so the link's rank). Adding a depends_on link also adds the mirror
// depended_by link and vice versa, and adding a contradicts link adds the
// reverse one; the cap is then enforced at both ends, and a link pruned at
// either end is removed together with its mirror.
//
// AddEdge succeeds even when the new link ranks below the cap and is pruned
// at once: it competed and lost, as TopCap prescribes.
func (g *LinkGraph) AddEdge(typ LinkType, from, to uint64, sim float64) error {
	if typ >= numLinkTypes {
		return fmt.Errorf("%w: link type %d", ErrLinkInvalid, uint8(typ))
	}
	if math.IsNaN(sim) || math.IsInf(sim, 0) {
		return fmt.Errorf("%w: %s link %d → %d has similarity %v", ErrLinkInvalid, typ, from, to, sim)
	}
	if from == to {
		return fmt.Errorf("%w: %s self-loop on %d", ErrLinkInvalid, typ, from)
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
	if typ == LinkTemporal && !(tn.t < fn.t) {
		return fmt.Errorf("%w: temporal link %d → %d must point back in time (t_to = %v, t_from = %v)",
			ErrLinkInvalid, from, to, tn.t, fn.t)
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
func linkRanksBefore(typ LinkType, a, b linkEdge) bool {
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
func (g *LinkGraph) upsert(typ LinkType, fn *linkNode, from, to uint64, tn *linkNode, sim float64) {
	list := fn.out[typ]
	if i := linkIndex(list, to); i >= 0 {
		if list[i].sim == sim {
			return
		}
		list = slices.Delete(list, i, i+1)
	} else if typ == LinkVersion {
		tn.vparents = append(tn.vparents, from)
	}
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
	fn.out[typ] = slices.Insert(list, i, e)
}

// unlink removes from → to of type typ if present, reporting whether it was.
// It does not touch the mirror. Callers hold mu exclusively.
func (g *LinkGraph) unlink(typ LinkType, fn *linkNode, from, to uint64) bool {
	i := linkIndex(fn.out[typ], to)
	if i < 0 {
		return false
	}
	fn.out[typ] = slices.Delete(fn.out[typ], i, i+1)
	if typ == LinkVersion {
		if tn := g.nodes[to]; tn != nil {
			if j := slices.Index(tn.vparents, from); j >= 0 {
				tn.vparents = slices.Delete(tn.vparents, j, j+1)
			}
		}
	}
	return true
}

// enforceCap applies TopCap_typ at key. Callers hold mu exclusively.
func (g *LinkGraph) enforceCap(typ LinkType, key uint64, n *linkNode) {
	limit := g.caps[typ]
	list := n.out[typ]
	if limit == 0 || len(list) <= limit {
		return
	}
	if typ == LinkVersion {
		g.pruneVersion(key, n, limit)
		return
	}
	dropped := slices.Clone(list[limit:])
	n.out[typ] = slices.Delete(list, limit, len(list))
	m, mirrored := typ.mirror()
	for _, e := range dropped {
		if mirrored {
			if tn := g.nodes[e.to]; tn != nil {
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
func (g *LinkGraph) pruneVersion(r uint64, n *linkNode, limit int) {
	list := n.out[LinkVersion]
	mandatory := make([]bool, len(list))
	count := 0
	if n.visible {
		for i, e := range list {
			c := g.nodes[e.to]
			if c.visible {
				continue
			}
			only := true
			for _, p := range c.vparents {
				if p != r && g.nodes[p].visible {
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
				if _, ok := reach[e.to]; !ok && !g.nodes[e.to].visible {
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
	n.out[LinkVersion] = kept
	for _, to := range dropped {
		tn := g.nodes[to]
		if j := slices.Index(tn.vparents, r); j >= 0 {
			tn.vparents = slices.Delete(tn.vparents, j, j+1)
		}
	}
}

// versionReach returns the nodes reachable from the visible surface along
// version links (All-Mem's G_ν), ignoring the out-links of skip when
// skipping is set. Callers hold mu.
func (g *LinkGraph) versionReach(skip uint64, skipping bool) map[uint64]struct{} {
	reach := make(map[uint64]struct{}, len(g.nodes))
	var queue []uint64
	for k, n := range g.nodes {
		if n.visible {
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
		for _, e := range g.nodes[k].out[LinkVersion] {
			if _, ok := reach[e.to]; !ok {
				reach[e.to] = struct{}{}
				queue = append(queue, e.to)
			}
		}
	}
	return reach
}

// endpoints returns the nodes of a link's two keys; the caller holds g.mu.
func (g *LinkGraph) endpoints(from, to uint64) (fn, tn *linkNode, err error) {
	fn, tn = g.nodes[from], g.nodes[to]
	if fn == nil {
		return nil, nil, fmt.Errorf("%w: %d", ErrLinkUnknown, from)
	}
	if tn == nil {
		return nil, nil, fmt.Errorf("%w: %d", ErrLinkUnknown, to)
	}
	return fn, tn, nil
}

// RemoveEdge removes the link from → to of type typ and, for the mirrored
// types, its mirror (depends_on ↔ depended_by, contradicts both ways).
// Removing a link that does not exist is a no-op; unknown keys wrap
// [ErrLinkUnknown]. Removing a version link may orphan its target; see
// [LinkGraph.Orphans].
func (g *LinkGraph) RemoveEdge(typ LinkType, from, to uint64) error {
	if typ >= numLinkTypes {
		return fmt.Errorf("%w: link type %d", ErrLinkInvalid, uint8(typ))
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
func (g *LinkGraph) Neighbors(key uint64, typ LinkType) []uint64 {
	if typ >= numLinkTypes {
		return nil
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	n := g.nodes[key]
	if n == nil || len(n.out[typ]) == 0 {
		return nil
	}
	out := make([]uint64, len(n.out[typ]))
	for i, e := range n.out[typ] {
		out[i] = e.to
	}
	return out
}

// linkAllMemTypes is the type mask Expand uses when given no types.
const linkAllMemTypes = 1<<LinkSibling | 1<<LinkVersion | 1<<LinkTemporal | 1<<LinkSemantic

// Expand is All-Mem's Stage 2, budgeted typed-link expansion (§3.4, Eq. 8,
// and App. D.3, Algorithm 2): a breadth-first walk along out-links from the
// anchors that returns at most budget nodes within hopLimit hops.
//
// Hop by hop (h = 1 … hopLimit) it visits the frontier in order — the
// anchors, deduplicated, first; then the nodes found at the previous hop in
// the order found — and for each frontier node walks its out-links type by
// type in priority order (sibling, version, temporal, semantic, depends_on,
// depended_by, contradicts: the [LinkType] order, App. D.3 Eq. 33), each
// type's neighbours in their ranking order (see [LinkGraph.Neighbors]). A
// node not seen before is returned as a [LinkHit] and joins the next
// frontier. Anchors are never returned and no node is returned twice; the
// walk stops as soon as budget nodes have been found.
//
// types selects the link types to follow, in any order (the priority is
// fixed); nil or empty means All-Mem's four families (sibling, version,
// temporal, semantic). Anchors may be visible or archived; an unknown
// anchor wraps [ErrLinkUnknown] and an invalid type [ErrLinkInvalid].
// A budget or hopLimit ≤ 0 returns no hits once the arguments are checked;
// no hits is always a nil slice.
//
// Unlike App. D.3, where the candidate set starts as the anchors and L
// counts them, budget counts only the expanded nodes: to reproduce
// |C| ≤ L, pass budget = L − len(anchors). Within one type, neighbours follow
// the ranking key of App. B.1 rather than D.3's plain id order, so a capped
// list is walked best link first.
func (g *LinkGraph) Expand(anchors []uint64, hopLimit, budget int, types []LinkType) ([]LinkHit, error) {
	mask := uint(linkAllMemTypes)
	if len(types) > 0 {
		mask = 0
		for _, t := range types {
			if t >= numLinkTypes {
				return nil, fmt.Errorf("%w: link type %d", ErrLinkInvalid, uint8(t))
			}
			mask |= 1 << t
		}
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	for _, a := range anchors {
		if g.nodes[a] == nil {
			return nil, fmt.Errorf("%w: anchor %d", ErrLinkUnknown, a)
		}
	}
	if budget <= 0 || hopLimit <= 0 || len(anchors) == 0 {
		return nil, nil
	}
	seen := make(map[uint64]struct{}, len(anchors)+min(budget, 1024))
	frontier := make([]uint64, 0, len(anchors))
	for _, a := range anchors {
		if _, ok := seen[a]; !ok {
			seen[a] = struct{}{}
			frontier = append(frontier, a)
		}
	}
	hits := make([]LinkHit, 0, min(budget, 256))
	for hop := 1; hop <= hopLimit && len(frontier) > 0; hop++ {
		var next []uint64
		for _, u := range frontier {
			n := g.nodes[u]
			for typ := range numLinkTypes {
				if mask&(1<<typ) == 0 {
					continue
				}
				for _, e := range n.out[typ] {
					if _, ok := seen[e.to]; ok {
						continue
					}
					seen[e.to] = struct{}{}
					hits = append(hits, LinkHit{Key: e.to, Hop: hop, Via: typ, From: u})
					if len(hits) == budget {
						return hits, nil
					}
					next = append(next, e.to)
				}
			}
		}
		frontier = next
	}
	if len(hits) == 0 {
		return nil, nil
	}
	return hits, nil
}

// Orphans returns, in ascending order, the archived nodes that violate
// All-Mem's no-orphan invariant (App. B.4 and B.7, Eq. 24): those that no
// visible node reaches by a directed path of version links. Paths may run
// through archived nodes; other link types do not count.
func (g *LinkGraph) Orphans() []uint64 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.orphans()
}

func (g *LinkGraph) orphans() []uint64 {
	reach := g.versionReach(0, false)
	var out []uint64
	for k := range g.nodes {
		if _, ok := reach[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// CheckNoOrphans returns nil when every archived node is reachable from the
// visible surface by version links (All-Mem App. B.4), and otherwise an
// error wrapping [ErrLinkOrphan] that names the orphans.
func (g *LinkGraph) CheckNoOrphans() error {
	o := g.Orphans()
	if len(o) == 0 {
		return nil
	}
	const show = 8
	if len(o) > show {
		return fmt.Errorf("%w: %d orphans, first %v", ErrLinkOrphan, len(o), o[:show])
	}
	return fmt.Errorf("%w: %v", ErrLinkOrphan, o)
}

// versionHops returns h(v), the hop distance along version links from the
// visible surface (0 for visible nodes), for every reachable node.
func (g *LinkGraph) versionHops() map[uint64]int {
	hops := make(map[uint64]int, len(g.nodes))
	var frontier []uint64
	for k, n := range g.nodes {
		if n.visible {
			hops[k] = 0
			frontier = append(frontier, k)
		}
	}
	for h := 1; len(frontier) > 0; h++ {
		var next []uint64
		for _, k := range frontier {
			for _, e := range g.nodes[k].out[LinkVersion] {
				if _, ok := hops[e.to]; !ok {
					hops[e.to] = h
					next = append(next, e.to)
				}
			}
		}
		frontier = next
	}
	return hops
}

// SurfaceDistance returns h(key), the hop distance of a node from the
// visible surface along version links (All-Mem App. A, "h(v) =
// min_{u ∈ V⁺} dist_{E_ν}(u, v)"): 0 for a visible node, ≥ 1 for a
// reachable archived node, and −1 for an orphan.
func (g *LinkGraph) SurfaceDistance(key uint64) (int, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.nodes[key] == nil {
		return 0, fmt.Errorf("%w: %d", ErrLinkUnknown, key)
	}
	if h, ok := g.versionHops()[key]; ok {
		return h, nil
	}
	return -1, nil
}

// Coverage returns Cov(H), All-Mem's recoverability coverage within hop
// budget H (App. A): the fraction of archived nodes whose [SurfaceDistance]
// is at most h. It is 1 when no node is archived.
func (g *LinkGraph) Coverage(h int) float64 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	hops := g.versionHops()
	archived, covered := 0, 0
	for k, n := range g.nodes {
		if n.visible {
			continue
		}
		archived++
		if d, ok := hops[k]; ok && d <= h {
			covered++
		}
	}
	if archived == 0 {
		return 1
	}
	return float64(covered) / float64(archived)
}

// The binary encoding (little-endian):
//
//	magic    "TMLINKS\x00"
//	version  uint32 = 1
//	caps     6 × int32: CapSibling, CapVersion, CapTemporal, CapSemantic,
//	         CapDepends, CapContradicts, defaults resolved (−1 = unbounded)
//	nodes    uint64 n, then n × (key uint64, t float64, flags uint8),
//	         keys strictly ascending; flag bit 0 = visible
//	edges    for each LinkType in order: uint64 m, then m × (from uint64,
//	         to uint64, sim float64), grouped by ascending from and, within
//	         one from, in the type's ranking order; sim is 0 for types that
//	         do not rank by similarity
//	crc      uint32 CRC-32C (Castagnoli) of everything before it
const (
	linkMagic         = "TMLINKS\x00"
	linkFormatVersion = 1
	linkNodeBytes     = 8 + 8 + 1
	linkEdgeBytes     = 8 + 8 + 8
	linkHeaderBytes   = len(linkMagic) + 4 + 6*4
	linkMinBytes      = linkHeaderBytes + 8 + int(numLinkTypes)*8 + 4
)

var linkCRCTable = castagnoli // the CRC-32C table of persist.go

// MarshalBinary implements encoding.BinaryMarshaler with a flat, versioned
// format ending in a CRC-32C. Equal graphs give identical bytes.
func (g *LinkGraph) MarshalBinary() ([]byte, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	opts := linkDefaultOptions
	if g.ready {
		opts = g.opts
	}
	keys := g.sortedKeys()
	edges := 0
	for _, n := range g.nodes {
		for _, l := range n.out {
			edges += len(l)
		}
	}
	b := make([]byte, 0, linkMinBytes+len(keys)*linkNodeBytes+edges*linkEdgeBytes)
	b = append(b, linkMagic...)
	b = binary.LittleEndian.AppendUint32(b, linkFormatVersion)
	for _, f := range opts.fields() {
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(*f.p)))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(keys)))
	for _, k := range keys {
		n := g.nodes[k]
		b = binary.LittleEndian.AppendUint64(b, k)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(n.t))
		var flags byte
		if n.visible {
			flags = 1
		}
		b = append(b, flags)
	}
	for typ := range numLinkTypes {
		m := 0
		for _, n := range g.nodes {
			m += len(n.out[typ])
		}
		b = binary.LittleEndian.AppendUint64(b, uint64(m))
		for _, k := range keys {
			for _, e := range g.nodes[k].out[typ] {
				b = binary.LittleEndian.AppendUint64(b, k)
				b = binary.LittleEndian.AppendUint64(b, e.to)
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.sim))
			}
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, linkCRCTable)), nil
}

// linkDecoder reads little-endian fields, bounds-checked.
type linkDecoder struct {
	b   []byte
	off int
}

func (d *linkDecoder) left() int { return len(d.b) - d.off }

func (d *linkDecoder) u64() (uint64, bool) {
	if d.left() < 8 {
		return 0, false
	}
	v := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return v, true
}

func (d *linkDecoder) u32() (uint32, bool) {
	if d.left() < 4 {
		return 0, false
	}
	v := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v, true
}

func linkCorrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrLinkCorrupt}, args...)...)
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler, replacing the
// graph's options and contents. It checks everything — magic, version,
// CRC, every count against the bytes left, caps, canonical order, node
// times, dangling keys, self-loops, temporal direction, similarities,
// mirrored and symmetric links, and the cap of every type but version
// (whose cap yields to the no-orphan rule) — and on any failure returns an
// error wrapping [ErrLinkCorrupt] and leaves the graph unchanged. It never
// allocates more than the input's length justifies. An input it accepts
// re-marshals to the same bytes.
func (g *LinkGraph) UnmarshalBinary(data []byte) error {
	if len(data) < linkMinBytes {
		return linkCorrupt("%d bytes, want at least %d", len(data), linkMinBytes)
	}
	if string(data[:len(linkMagic)]) != linkMagic {
		return linkCorrupt("bad magic %q", data[:len(linkMagic)])
	}
	body := data[:len(data)-4]
	if want, got := binary.LittleEndian.Uint32(data[len(body):]), crc32.Checksum(body, linkCRCTable); want != got {
		return linkCorrupt("CRC-32C is %#08x, want %#08x", got, want)
	}
	d := &linkDecoder{b: body, off: len(linkMagic)}
	if v, _ := d.u32(); v != linkFormatVersion {
		return linkCorrupt("unsupported version %d (want %d)", v, linkFormatVersion)
	}
	var opts LinkOptions
	for _, f := range opts.fields() {
		u, _ := d.u32() // within linkMinBytes
		v := int(int32(u))
		if v != LinkUnbounded && v < 1 {
			return linkCorrupt("%s = %d", f.name, v)
		}
		*f.p = v
	}
	caps := opts.caps()

	count, ok := d.u64()
	if !ok || count > uint64(d.left()/linkNodeBytes) {
		return linkCorrupt("node count %d exceeds the %d bytes left", count, d.left())
	}
	nodes := make(map[uint64]*linkNode, int(count))
	var prev uint64
	for i := range int(count) {
		k, _ := d.u64()
		tb, _ := d.u64()
		flags := d.b[d.off]
		d.off++
		t := math.Float64frombits(tb)
		switch {
		case i > 0 && k <= prev:
			return linkCorrupt("node %d after %d: keys not strictly ascending", k, prev)
		case math.IsNaN(t) || math.IsInf(t, 0):
			return linkCorrupt("node %d has time %v", k, t)
		case flags > 1:
			return linkCorrupt("node %d has flags %#x", k, flags)
		}
		nodes[k] = &linkNode{t: t, visible: flags == 1}
		prev = k
	}

	var total [numLinkTypes]int
	for typ := range numLinkTypes {
		count, ok := d.u64()
		if !ok || count > uint64(d.left()/linkEdgeBytes) {
			return linkCorrupt("%s link count %d exceeds the %d bytes left", typ, count, d.left())
		}
		total[typ] = int(count)
		var prevFrom uint64
		var prevEdge linkEdge
		for i := range int(count) {
			from, _ := d.u64()
			to, _ := d.u64()
			sb, _ := d.u64()
			sim := math.Float64frombits(sb)
			fn, tn := nodes[from], nodes[to]
			switch {
			case fn == nil:
				return linkCorrupt("%s link from unknown node %d", typ, from)
			case tn == nil:
				return linkCorrupt("%s link to unknown node %d", typ, to)
			case from == to:
				return linkCorrupt("%s self-loop on %d", typ, from)
			case math.IsNaN(sim) || math.IsInf(sim, 0):
				return linkCorrupt("%s link %d → %d has similarity %v", typ, from, to, sim)
			case !typ.usesSim() && sb != 0:
				return linkCorrupt("%s link %d → %d has similarity bits %#x, want 0", typ, from, to, sb)
			case typ == LinkTemporal && !(tn.t < fn.t):
				return linkCorrupt("temporal link %d → %d does not point back in time", from, to)
			}
			e := linkEdge{to: to, t: tn.t, sim: sim}
			if i > 0 && (from < prevFrom || from == prevFrom && !linkRanksBefore(typ, prevEdge, e)) {
				return linkCorrupt("%s link %d → %d out of order", typ, from, to)
			}
			fn.out[typ] = append(fn.out[typ], e)
			if c := caps[typ]; c > 0 && typ != LinkVersion && len(fn.out[typ]) > c {
				return linkCorrupt("node %d has more than %d %s links", from, c, typ)
			}
			if typ == LinkVersion {
				tn.vparents = append(tn.vparents, from)
			}
			prevFrom, prevEdge = from, e
		}
	}
	if d.left() != 0 {
		return linkCorrupt("%d trailing bytes", d.left())
	}

	// Mirrors: depends_on a → b ⇔ depended_by b → a; contradicts a → b ⇔
	// b → a. Lists hold no duplicates (strict order), so equal counts plus
	// one-way inclusion make a bijection.
	if total[LinkDependsOn] != total[LinkDependedBy] {
		return linkCorrupt("%d depends_on links but %d depended_by links", total[LinkDependsOn], total[LinkDependedBy])
	}
	type pair struct{ a, b uint64 }
	check := func(typ, m LinkType) error {
		set := make(map[pair]struct{}, total[m])
		for k, n := range nodes {
			for _, e := range n.out[m] {
				set[pair{k, e.to}] = struct{}{}
			}
		}
		for k, n := range nodes {
			for _, e := range n.out[typ] {
				if _, ok := set[pair{e.to, k}]; !ok {
					return linkCorrupt("%s link %d → %d has no %s mirror", typ, k, e.to, m)
				}
			}
		}
		return nil
	}
	if err := check(LinkDependsOn, LinkDependedBy); err != nil {
		return err
	}
	if err := check(LinkContradicts, LinkContradicts); err != nil {
		return err
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	g.setOptions(opts)
	g.nodes = nodes
	return nil
}
