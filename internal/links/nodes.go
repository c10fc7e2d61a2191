package links

import "iter"

// MaxKey is one past the largest node key: keys are a ledger's row
// indices, small and dense, and the graph keeps its nodes in an array
// indexed by key.
const MaxKey = 1 << 32

// nodeChunk is the nodes of one chunk of the table.
const nodeChunk = 4096

// nodeTable holds the nodes by key, in chunks of nodeChunk allocated when
// a key of theirs is first added. A node costs 24 bytes here, where a map
// of pointers to nodes cost some 66 at a million nodes (the map's slots
// at half load, and each node's own allocation); a chunk never moves, so
// a *linkNode stays valid while nodes are added.
type nodeTable struct {
	chunks []*[nodeChunk]linkNode
	n      int
}

// get returns key's node, nil when there is none.
func (t *nodeTable) get(key uint64) *linkNode {
	c := key / nodeChunk
	if c >= uint64(len(t.chunks)) || t.chunks[c] == nil {
		return nil
	}
	if n := &t.chunks[c][key%nodeChunk]; n.present {
		return n
	}
	return nil
}

// add stores a new node under key (< MaxKey, not present) and returns it.
func (t *nodeTable) add(key uint64, n linkNode) *linkNode {
	c := int(key / nodeChunk)
	if c >= len(t.chunks) {
		t.chunks = append(t.chunks, make([]*[nodeChunk]linkNode, c+1-len(t.chunks))...)
	}
	if t.chunks[c] == nil {
		t.chunks[c] = new([nodeChunk]linkNode)
	}
	p := &t.chunks[c][key%nodeChunk]
	n.present = true
	*p = n
	t.n++
	return p
}

// len returns the number of nodes.
func (t *nodeTable) len() int { return t.n }

// all yields every node, keys ascending.
func (t *nodeTable) all() iter.Seq2[uint64, *linkNode] {
	return func(yield func(uint64, *linkNode) bool) {
		for c, ch := range t.chunks {
			if ch == nil {
				continue
			}
			for i := range ch {
				if n := &ch[i]; n.present && !yield(uint64(c)*nodeChunk+uint64(i), n) {
					return
				}
			}
		}
	}
}
