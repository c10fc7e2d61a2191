package kernels

import (
	"math"
	"slices"
)

// topk keeps the k best hits seen so far in a min-heap whose root is the
// worst kept hit, so a candidate is compared once against the root and most
// are rejected there: partial selection in O(N log k), never a full sort.
type topk struct {
	k int
	h []Hit
}

func (t *topk) reset(k int) {
	t.k = k
	t.h = t.h[:0]
}

// threshold is the score a hit must reach to enter: −Inf while the heap
// has room, the worst kept score once it is full (a hit with that score
// enters only by a smaller id, which push decides).
func (t *topk) threshold() float64 {
	if len(t.h) < t.k {
		return math.Inf(-1)
	}
	return t.h[0].Score
}

// worse is the heap order: a is worse than b.
func worse(a, b *Hit) bool { return better(b.Score, b.ID, a.Score, a.ID) }

func (t *topk) push(h Hit) {
	if len(t.h) < t.k {
		t.h = append(t.h, h)
		t.up(len(t.h) - 1)
		return
	}
	if t.k == 0 || !better(h.Score, h.ID, t.h[0].Score, t.h[0].ID) {
		return
	}
	t.h[0] = h
	t.down(0)
}

func (t *topk) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !worse(&t.h[i], &t.h[p]) {
			return
		}
		t.h[i], t.h[p] = t.h[p], t.h[i]
		i = p
	}
}

func (t *topk) down(i int) {
	n := len(t.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && worse(&t.h[r], &t.h[l]) {
			m = r
		}
		if !worse(&t.h[m], &t.h[i]) {
			return
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

// sorted appends the kept hits to dst, best first, and empties the heap.
func (t *topk) sorted(dst []Hit) []Hit {
	n := len(t.h)
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	for j := n - 1; j >= 0; j-- {
		dst[start+j] = t.h[0]
		last := len(t.h) - 1
		t.h[0] = t.h[last]
		t.h = t.h[:last]
		t.down(0)
	}
	return dst
}
