package embed

import (
	"container/list"
	"sync"
)

// DefaultCacheEntries is the capacity of a cache made with a capacity of 0,
// and of the cache a [Remote] makes for itself.
const DefaultCacheEntries = 100_000

// Cache remembers vectors by a 32-byte key; a [Remote] keys a text's vector
// by SHA-256 of the model's identity and the text ([Remote.CacheKey]).
//
// Implementations must be safe for concurrent use. Put takes ownership of
// v: the caller does not modify it afterwards. The slice Get returns must
// not be modified by the caller. A Cache may forget anything at any time;
// Get then reports false.
type Cache interface {
	Get(key [32]byte) ([]float32, bool)
	Put(key [32]byte, v []float32)
}

// MemoryCache is an in-memory [Cache] that keeps the most recently used
// vectors, up to a fixed number of entries, and forgets the least recently
// used ones. It is safe for concurrent use.
type MemoryCache struct {
	mu  sync.Mutex
	lru lru
}

var _ Cache = (*MemoryCache)(nil)

// NewMemoryCache returns an empty MemoryCache holding at most n vectors;
// n ≤ 0 means DefaultCacheEntries. Memory use is about n·(4·dim + 150)
// bytes once full.
func NewMemoryCache(n int) *MemoryCache {
	c := &MemoryCache{}
	c.lru.init(n)
	return c
}

// Get returns the vector stored under key, and marks it as recently used.
func (c *MemoryCache) Get(key [32]byte) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.get(key)
}

// Put stores v under key, replacing what was there, and forgets the least
// recently used vector if the cache is over its capacity.
func (c *MemoryCache) Put(key [32]byte, v []float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.put(key, v)
}

// Len returns the number of vectors held.
// Delete forgets the vectors of keys and returns how many it held.
func (c *MemoryCache) Delete(keys ...[32]byte) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.remove(keys...)
}

func (c *MemoryCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.ll.Len()
}

// lru is a least-recently-used map of vectors. It does no locking.
type lru struct {
	max int
	ll  *list.List // of *lruEntry, most recently used at the front
	m   map[[32]byte]*list.Element
}

type lruEntry struct {
	key [32]byte
	v   []float32
}

func (c *lru) init(max int) {
	if max <= 0 {
		max = DefaultCacheEntries
	}
	c.max, c.ll, c.m = max, list.New(), make(map[[32]byte]*list.Element)
}

func (c *lru) get(key [32]byte) ([]float32, bool) {
	e, ok := c.m[key]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*lruEntry).v, true
}

// put stores v under key and reports whether that changed anything: false
// when key already held the same values (it is then only marked as used).
func (c *lru) put(key [32]byte, v []float32) bool {
	if e, ok := c.m[key]; ok {
		c.ll.MoveToFront(e)
		ent := e.Value.(*lruEntry)
		if sameVec(ent.v, v) {
			return false
		}
		ent.v = v
		return true
	}
	c.m[key] = c.ll.PushFront(&lruEntry{key: key, v: v})
	for c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.m, old.Value.(*lruEntry).key)
	}
	return true
}

// remove forgets keys and returns how many were held.
func (c *lru) remove(keys ...[32]byte) int {
	n := 0
	for _, key := range keys {
		if e, ok := c.m[key]; ok {
			c.ll.Remove(e)
			delete(c.m, key)
			n++
		}
	}
	return n
}

// oldestFirst calls f for every entry from the least to the most recently
// used.
func (c *lru) oldestFirst(f func(key [32]byte, v []float32)) {
	for e := c.ll.Back(); e != nil; e = e.Prev() {
		ent := e.Value.(*lruEntry)
		f(ent.key, ent.v)
	}
}

// sameVec reports whether a and b are equal element by element (so +0 and
// −0 match; NaN never reaches a cache).
func sameVec(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
