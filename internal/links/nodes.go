package links

import (
	"iter"
	"unsafe"

	"github.com/tidemark/tidemark/internal/offheap"
)

// MaxKey is one past the largest node key: keys are a ledger's row
// indices, small and dense, and the graph keeps its nodes in an array
// indexed by key.
const MaxKey = 1 << 32

// nodeChunk is the nodes of one chunk of the table.
const nodeChunk = 4096

// nodeTable holds the nodes by key, in chunks of nodeChunk made when a key
// of theirs is first added, one after another in one array off the Go
// heap (package offheap). A node is 16 bytes without pointers; its links
// (most nodes have none) are in lists, found by the node's index into it.
// A map of pointers to nodes cost some 66 bytes a node at a million
// nodes, and chunks of nodes holding a pointer to their links 24 on the
// Go heap, which the collector's headroom doubled. The array grows in
// place, so a *linkNode stays valid while nodes are added (but on the
// heap fallback of package offheap, where growing copies: no caller holds
// one across an add).
type nodeTable struct {
	mem   *offheap.Array[uint64]
	nodes []linkNode // the chunks made, in the order made
	// chunkAt maps a chunk's number (key / nodeChunk) to one past its
	// place in nodes (0: not made).
	chunkAt []uint32
	n       int
	// lists are the links of the nodes that have any: node.lists − 1.
	lists []*linkLists
}

// nodeReserve is the address space the node array reserves: MaxKey nodes.
const nodeReserve = MaxKey * int(unsafe.Sizeof(linkNode{}))

// get returns key's node, nil when there is none.
func (t *nodeTable) get(key uint64) *linkNode {
	c := key / nodeChunk
	if c >= uint64(len(t.chunkAt)) || t.chunkAt[c] == 0 {
		return nil
	}
	if n := &t.nodes[uint64(t.chunkAt[c]-1)*nodeChunk+key%nodeChunk]; n.present {
		return n
	}
	return nil
}

// add stores a new node under key (< MaxKey, not present) and returns it.
func (t *nodeTable) add(key uint64, n linkNode) *linkNode {
	c := int(key / nodeChunk)
	if c >= len(t.chunkAt) {
		t.chunkAt = append(t.chunkAt, make([]uint32, c+1-len(t.chunkAt))...)
	}
	if t.chunkAt[c] == 0 {
		if t.mem == nil {
			t.mem = offheap.New[uint64](nodeReserve)
		}
		made := len(t.nodes) / nodeChunk
		need := (made + 1) * nodeChunk * int(unsafe.Sizeof(linkNode{})/8)
		t.nodes = offheap.View[linkNode](t.mem.Grow(need)[:need])
		t.mem.Populate(need)
		t.chunkAt[c] = uint32(made + 1)
	}
	p := &t.nodes[int(t.chunkAt[c]-1)*nodeChunk+int(key%nodeChunk)]
	n.present = true
	*p = n
	t.n++
	return p
}

// l returns n's links for reading.
func (t *nodeTable) l(n *linkNode) *linkLists {
	if n.lists == 0 {
		return &noLinks
	}
	return t.lists[n.lists-1]
}

// w returns n's links for writing, making them on first use.
func (t *nodeTable) w(n *linkNode) *linkLists {
	if n.lists == 0 {
		t.lists = append(t.lists, new(linkLists))
		n.lists = uint32(len(t.lists))
	}
	return t.lists[n.lists-1]
}

// len returns the number of nodes.
func (t *nodeTable) len() int { return t.n }

// all yields every node, keys ascending.
func (t *nodeTable) all() iter.Seq2[uint64, *linkNode] {
	return func(yield func(uint64, *linkNode) bool) {
		for c, at := range t.chunkAt {
			if at == 0 {
				continue
			}
			ch := t.nodes[int(at-1)*nodeChunk : int(at)*nodeChunk]
			for i := range ch {
				if n := &ch[i]; n.present && !yield(uint64(c)*nodeChunk+uint64(i), n) {
					return
				}
			}
		}
	}
}
