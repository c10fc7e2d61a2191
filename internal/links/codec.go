package links

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/tidemark/tidemark/internal/wire"
)

// The binary encoding (little-endian):
//
//	magic    "TMLINKS\x00"
//	version  uint32 = 1
//	caps     6 × int32: CapSibling, CapVersion, CapTemporal, CapSemantic,
//	         CapDepends, CapContradicts, defaults resolved (−1 = unbounded)
//	nodes    uint64 n, then n × (key uint64, t float64, flags uint8),
//	         keys strictly ascending; flag bit 0 = visible
//	edges    for each Type in order: uint64 m, then m × (from uint64,
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
	linkMinBytes      = linkHeaderBytes + 8 + int(numTypes)*8 + 4
)

var linkCRCTable = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary implements encoding.BinaryMarshaler with a flat, versioned
// format ending in a CRC-32C. Equal graphs give identical bytes.
func (g *Graph) MarshalBinary() ([]byte, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	opts := linkDefaultOptions
	if g.ready {
		opts = g.opts
	}
	keys := g.sortedKeys()
	edges := 0
	for _, n := range g.nodes.all() {
		for _, l := range g.nodes.l(n).out {
			edges += len(l)
		}
	}
	w := &wire.Writer{B: make([]byte, 0, linkMinBytes+len(keys)*linkNodeBytes+edges*linkEdgeBytes)}
	w.B = append(w.B, linkMagic...)
	w.Uint32(linkFormatVersion)
	for _, f := range opts.fields() {
		w.Uint32(uint32(int32(*f.p)))
	}
	w.Uint64(uint64(len(keys)))
	for _, k := range keys {
		n := g.nodes.get(k)
		w.Uint64(k)
		w.Float64(n.t)
		w.Bool(n.visible)
	}
	for typ := range numTypes {
		m := 0
		for _, n := range g.nodes.all() {
			m += len(g.nodes.l(n).out[typ])
		}
		w.Uint64(uint64(m))
		for _, k := range keys {
			for _, e := range g.nodes.l(g.nodes.get(k)).out[typ] {
				w.Uint64(k)
				w.Uint64(e.to)
				w.Float64(e.sim)
			}
		}
	}
	w.Uint32(crc32.Checksum(w.B, linkCRCTable))
	return w.B, nil
}

func linkCorrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler, replacing the
// graph's options and contents. It checks everything — magic, version,
// CRC, every count against the bytes left, caps, canonical order, node
// times, dangling keys, self-loops, temporal direction, similarities,
// mirrored and symmetric links, and the cap of every type but version
// (whose cap yields to the no-orphan rule) — and on any failure returns an
// error wrapping [ErrCorrupt] and leaves the graph unchanged. It never
// allocates more than the input's length justifies. An input it accepts
// re-marshals to the same bytes.
func (g *Graph) UnmarshalBinary(data []byte) error {
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
	d := wire.NewReader(body[len(linkMagic):])
	if v := d.Uint32(); v != linkFormatVersion {
		return linkCorrupt("unsupported version %d (want %d)", v, linkFormatVersion)
	}
	var opts Options
	for _, f := range opts.fields() {
		u := d.Uint32() // within linkMinBytes
		v := int(int32(u))
		if v != Unbounded && v < 1 {
			return linkCorrupt("%s = %d", f.name, v)
		}
		*f.p = v
	}
	caps := opts.caps()

	count := d.Uint64()
	if d.Err() != nil || count > uint64(d.Len()/linkNodeBytes) {
		return linkCorrupt("node count %d exceeds the %d bytes left", count, d.Len())
	}
	var nodes nodeTable
	var prev uint64
	for i := range int(count) {
		k := d.Uint64()
		t := d.Float64()
		flags := d.Byte()
		switch {
		case i > 0 && k <= prev:
			return linkCorrupt("node %d after %d: keys not strictly ascending", k, prev)
		case math.IsNaN(t) || math.IsInf(t, 0):
			return linkCorrupt("node %d has time %v", k, t)
		case flags > 1:
			return linkCorrupt("node %d has flags %#x", k, flags)
		case k >= MaxKey:
			return linkCorrupt("node key %d is not below 2³²", k)
		}
		nodes.add(k, linkNode{t: t, visible: flags == 1})
		prev = k
	}

	var total [numTypes]int
	for typ := range numTypes {
		count := d.Uint64()
		if d.Err() != nil || count > uint64(d.Len()/linkEdgeBytes) {
			return linkCorrupt("%s link count %d exceeds the %d bytes left", typ, count, d.Len())
		}
		total[typ] = int(count)
		var prevFrom uint64
		var prevEdge linkEdge
		for i := range int(count) {
			from, to, sb := d.Uint64(), d.Uint64(), d.Uint64()
			sim := math.Float64frombits(sb)
			fn, tn := nodes.get(from), nodes.get(to)
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
			case typ == Temporal && !(tn.t < fn.t):
				return linkCorrupt("temporal link %d → %d does not point back in time", from, to)
			}
			e := linkEdge{to: to, t: tn.t, sim: sim}
			if i > 0 && (from < prevFrom || from == prevFrom && !linkRanksBefore(typ, prevEdge, e)) {
				return linkCorrupt("%s link %d → %d out of order", typ, from, to)
			}
			nodes.w(fn).out[typ] = append(nodes.w(fn).out[typ], e)
			g.linked[typ] = true
			if c := caps[typ]; c > 0 && typ != Version && len(nodes.l(fn).out[typ]) > c {
				return linkCorrupt("node %d has more than %d %s links", from, c, typ)
			}
			if typ == Version {
				nodes.w(tn).vparents = append(nodes.w(tn).vparents, from)
			}
			prevFrom, prevEdge = from, e
		}
	}
	if d.Len() != 0 {
		return linkCorrupt("%d trailing bytes", d.Len())
	}

	// Mirrors: depends_on a → b ⇔ depended_by b → a; contradicts a → b ⇔
	// b → a. Lists hold no duplicates (strict order), so equal counts plus
	// one-way inclusion make a bijection.
	if total[DependsOn] != total[DependedBy] {
		return linkCorrupt("%d depends_on links but %d depended_by links", total[DependsOn], total[DependedBy])
	}
	type pair struct{ a, b uint64 }
	check := func(typ, m Type) error {
		set := make(map[pair]struct{}, total[m])
		for k, n := range nodes.all() {
			for _, e := range nodes.l(n).out[m] {
				set[pair{k, e.to}] = struct{}{}
			}
		}
		for k, n := range nodes.all() {
			for _, e := range nodes.l(n).out[typ] {
				if _, ok := set[pair{e.to, k}]; !ok {
					return linkCorrupt("%s link %d → %d has no %s mirror", typ, k, e.to, m)
				}
			}
		}
		return nil
	}
	if err := check(DependsOn, DependedBy); err != nil {
		return err
	}
	if err := check(Contradicts, Contradicts); err != nil {
		return err
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	g.setOptions(opts)
	g.nodes = nodes
	return nil
}
