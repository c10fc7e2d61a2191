package index

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tidemark/tidemark/internal/offheap"
	"github.com/tidemark/tidemark/internal/prefetch"
	"github.com/tidemark/tidemark/internal/unitvec"
	"github.com/tidemark/tidemark/simd"
)

// Options configure an HNSW index. A nil *Options means the defaults; a
// zero field takes its default. Dim has none, so it is required.
type Options struct {
	// Dim is the vector dimension (required, 1…MaxDim).
	Dim int
	// M is the number of neighbours per node on the upper layers; layer 0
	// keeps 2M (default DefaultM, 16; 2…MaxM).
	M int
	// EfConstruction is the beam width while inserting (default
	// DefaultEfConstruction, 100).
	EfConstruction int
	// Ef is the search beam width when SearchOptions.Ef is zero
	// (default DefaultEf, 64). The effective width is never below k.
	Ef int
	// Capacity is the number of nodes to allocate room for up front; the
	// index grows past it by doubling (default DefaultCapacity, 1024).
	Capacity int
	// Seed seeds the level generator (default DefaultSeed, 42), so that
	// the same inserts in the same order build the same graph.
	Seed uint64
	// Quantize keeps an int8 code of every vector beside it (a quarter of
	// its bytes, simd.QuantizeInt8) and makes Search walk the graph with
	// code dots, then re-score the best max(4k, 40) of its ef results
	// with the float32 vectors before taking the top k (unless
	// SearchOptions.CodeScores). A search reads a quarter of the vector
	// bytes, which is what a memory-bound traversal pays for; the results
	// are exact cosines, but which nodes are found can differ slightly.
	// Inserts and the graph itself use the float32 vectors either way.
	// Default false. Not saved: Load returns an index without codes, and
	// HNSW.Quantize makes them.
	Quantize bool
	// SharedVectors makes Insert keep a reference to the vector it is
	// given instead of a copy, for a caller that holds the vectors anyway
	// (the engine's column store): each vector then lives once in memory.
	// Such a vector must be of unit length (Insert returns ErrNotUnit
	// otherwise) and must not change while the index holds its key. The
	// reference keeps Go heap memory alive; memory the garbage collector
	// does not manage (an off-heap array, a mapped file) is the caller's to
	// keep alive, which KeepAlive does for as long as the index is
	// reachable. Not saved.
	SharedVectors bool
	// KeepAlive, with SharedVectors, is referenced by the index for its
	// whole life: the owner of the vectors' memory. The index keeps its
	// references off the Go heap; where KeepAlive has a method
	// Holds(unsafe.Pointer) bool (an internal/offheap Array) that holds a
	// vector, that is all, and any other vector is also kept in a slice
	// the garbage collector scans.
	KeepAlive any
}

// Defaults of Options: the one place the HNSW defaults are written (the
// root package's CollectionOptions refers to them).
const (
	DefaultM              = 16
	DefaultEfConstruction = 100
	DefaultEf             = 64
	DefaultCapacity       = 1024
	DefaultSeed           = 42
)

// Limits of Options.
const (
	// MaxDim is the largest Options.Dim.
	MaxDim = 1 << 16
	// MaxM is the largest Options.M.
	MaxM = 512
)

// WithDefaults returns a copy of o with every zero field set to its
// default; a nil o gives every default (and a zero Dim). It does not
// validate.
func (o *Options) WithDefaults() Options {
	var d Options
	if o != nil {
		d = *o
	}
	if d.M == 0 {
		d.M = DefaultM
	}
	if d.EfConstruction == 0 {
		d.EfConstruction = DefaultEfConstruction
	}
	if d.Ef == 0 {
		d.Ef = DefaultEf
	}
	if d.Capacity == 0 {
		d.Capacity = DefaultCapacity
	}
	if d.Seed == 0 {
		d.Seed = DefaultSeed
	}
	return d
}

// Validate names the first field out of range (after defaults), in an
// error wrapping ErrOptions. It does not change o. A nil o is invalid:
// Dim is required.
func (o *Options) Validate() error {
	d := o.WithDefaults()
	switch {
	case d.Dim <= 0 || d.Dim > MaxDim:
		return fmt.Errorf("%w: Options.Dim = %d, want 1…%d", ErrOptions, d.Dim, MaxDim)
	case d.M < 2 || d.M > MaxM:
		return fmt.Errorf("%w: Options.M = %d, want 2…%d", ErrOptions, d.M, MaxM)
	case d.EfConstruction < 1:
		return fmt.Errorf("%w: Options.EfConstruction = %d, want ≥ 1 (0 for the default %d)", ErrOptions, d.EfConstruction, DefaultEfConstruction)
	case d.Ef < 1:
		return fmt.Errorf("%w: Options.Ef = %d, want ≥ 1 (0 for the default %d)", ErrOptions, d.Ef, DefaultEf)
	case d.Capacity < 1 || d.Capacity > maxCapacity || d.Capacity > (1<<36)/(d.Dim+2*d.M+1):
		return fmt.Errorf("%w: Options.Capacity = %d, want 1…%d and at most 2³⁶ words of vectors and links", ErrOptions, d.Capacity, maxCapacity)
	}
	return nil
}

const (
	maxLevel = 48
	// maxCapacity bounds the initial allocation; the index still grows
	// past it by inserting.
	maxCapacity = 1 << 30
	none        = math.MaxUint32
	// lockStripes is the number of node locks; node i uses i % lockStripes.
	lockStripes = 4096
)

// HNSW is a hierarchical navigable small world graph over unit vectors,
// keyed by uint64. It is safe for concurrent use.
type HNSW struct {
	dim, m, m0, efc, ef int
	mult                float64
	lines               int // cache lines per vector to prefetch (≤ 8)
	listLines           int // cache lines per layer-0 neighbour block

	// structMu is held shared by an insert for its whole duration and
	// exclusively by Compact and Save, which renumber or image the graph
	// and so must not fall between an insert's assignment of a node and
	// its linking. Lock order: structMu, then mu.
	structMu sync.RWMutex
	// mu is held exclusively to grow the arrays, to compact and to save
	// or load; shared by everything that reads the arrays, inserts for
	// their whole duration included, so that inserts run in parallel with
	// each other and with searches.
	mu sync.RWMutex
	// allocMu (taken with mu held shared) guards the node count, the
	// live count, the key map and the level generator: an insert holds it
	// only to assign its node, a delete to tombstone one. Lock order:
	// structMu, mu, allocMu.
	allocMu sync.Mutex
	// The node arrays, indexed by internal id. Their headers change only
	// under mu held exclusively; vectors, levels and keys of a node are
	// written once, before the node is linked; the neighbour lists are
	// written under the node's stripe lock and read atomically.
	vecs []float32 // n·dim, unit rows (nil with shared vectors)
	// With Options.SharedVectors: vref[id] is node id's vector, the
	// caller's memory, and keep its owner.
	shared bool
	vref   []unsafe.Pointer
	keep   any
	// vref lives off the Go heap, in vrefMem: the collector does not scan
	// it, so a vector on the Go heap (one KeepAlive does not hold, when it
	// is an off-heap array: holder) is also kept in pins, which it scans.
	vrefMem *offheap.Array[uint64]
	holder  interface{ Holds(unsafe.Pointer) bool }
	pinMu   sync.Mutex // guards pins
	pins    []unsafe.Pointer
	// The off-heap arrays behind vecs, codes and links0 (package
	// offheap): growing them moves nothing, and the garbage collector
	// neither scans nor paces by them.
	vecMem  *offheap.Array[float32]
	codeMem *offheap.Array[int8]
	linkMem *offheap.Array[uint32]
	// keyMem and levelMem hold keys and levels, off the heap too: they
	// have no pointers, so the collector would only pace by them.
	keyMem   *offheap.Array[uint64]
	levelMem *offheap.Array[uint8]
	// With Options.Quantize: codes holds each row's int8 code in cstride
	// bytes (dim + 4 rounded up to 32): the dim codes, zeros, and the
	// code's float32 scale in the last 4 bytes — on the line the dot has
	// just loaded. A query's code is zero past dim, so the scale bytes add
	// nothing to a dot.
	quant   bool
	cstride int
	clines  int // cache lines per code to prefetch
	codes   []int8
	links0  []uint32 // per node: count, then 2M ids
	// upper[id] is node id's lists on levels 1…levels[id], each a count
	// then M ids (upperLists), nil at level 0: a pointer and not a slice,
	// since most nodes have no upper levels (16 bytes a node less).
	upper  []unsafe.Pointer
	levels []uint8
	keys   []uint64
	dead   []uint32 // tombstone bits
	n      int      // nodes allocated
	live   int      // nodes not deleted
	byKey  keyMap   // key → live node
	rng    *rand.Rand
	seed   uint64

	// top packs the entry point (low 32 bits) and the top level + 1 (high
	// 32 bits, 0 for an empty graph) so both are read in one atomic load.
	top   atomic.Uint64
	topMu sync.Mutex // held by an insert that raises the top level

	locks [lockStripes]sync.Mutex
	pool  sync.Pool // *searcher
}

// New returns an empty index. A nil opts means the defaults, but Dim has
// none: New(nil) fails with ErrOptions naming Options.Dim.
func New(opts *Options) (*HNSW, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.WithDefaults()
	h := &HNSW{
		dim: o.Dim, m: o.M, m0: 2 * o.M, efc: o.EfConstruction, ef: o.Ef,
		mult:      1 / math.Log(float64(o.M)),
		lines:     min(8, (4*o.Dim+63)/64),
		listLines: min(8, (4*(2*o.M+1)+63)/64+1),
		byKey:     newKeyMap(o.Capacity),
		rng:       rand.New(rand.NewPCG(o.Seed, o.Seed^0x9E3779B97F4A7C15)),
		seed:      o.Seed,
		quant:     o.Quantize,
		cstride:   (o.Dim + 4 + 31) &^ 31,
		shared:    o.SharedVectors,
		keep:      o.KeepAlive,
	}
	h.holder, _ = o.KeepAlive.(interface{ Holds(unsafe.Pointer) bool })
	h.clines = min(8, (h.cstride+63)/64)
	h.newArrays()
	h.grow(o.Capacity)
	return h, nil
}

// Dim returns the vector dimension.
func (h *HNSW) Dim() int { return h.dim }

// Len returns the number of live (not deleted) keys.
func (h *HNSW) Len() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	h.allocMu.Lock()
	defer h.allocMu.Unlock()
	return h.live
}

// Deleted returns the number of tombstoned nodes awaiting Compact.
func (h *HNSW) Deleted() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	h.allocMu.Lock()
	defer h.allocMu.Unlock()
	return h.n - h.live
}

// Contains reports whether key is present and not deleted.
func (h *HNSW) Contains(key uint64) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	h.allocMu.Lock()
	defer h.allocMu.Unlock()
	_, ok := h.byKey.get(key, h.keys)
	return ok
}

// Keys yields the key of every node the index holds (Len of them, each
// once), in the order they were inserted (a saved index's, as saved),
// which is the order a caller's own records by key most likely lie in.
// The index is locked for reading while the loop runs: its body must not
// call the index.
func (h *HNSW) Keys() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		h.mu.RLock()
		defer h.mu.RUnlock()
		h.allocMu.Lock()
		defer h.allocMu.Unlock()
		// A key deleted (and perhaps inserted again) leaves a tombstone:
		// the live nodes hold each key once.
		for id := range uint32(h.n) {
			if !h.isDead(id) && !yield(h.keys[id]) {
				return
			}
		}
	}
}

// Address space the off-heap arrays reserve (it costs no memory until
// used): room for about 21 million 768-d vectors before a move.
const (
	vecReserve   = 64 << 30
	codeReserve  = 16 << 30
	linkReserve  = 8 << 30
	keyReserve   = 2 << 30
	vrefReserve  = 2 << 30
	levelReserve = 1 << 30
)

// newArrays gives the index empty off-heap arrays (dropping any it had).
func (h *HNSW) newArrays() {
	h.vecs, h.codes, h.links0, h.vref, h.pins = nil, nil, nil, nil, nil
	h.vecMem, h.codeMem, h.vrefMem = nil, nil, nil
	if h.shared {
		h.vrefMem = offheap.New[uint64](vrefReserve)
	} else {
		h.vecMem = offheap.New[float32](vecReserve)
	}
	if h.quant {
		h.codeMem = offheap.New[int8](codeReserve)
	}
	h.linkMem = offheap.New[uint32](linkReserve)
	h.keyMem, h.levelMem = offheap.New[uint64](keyReserve), offheap.New[uint8](levelReserve)
}

// populate backs the off-heap arrays of nodes 0 … n−1 with memory before
// they are written (offheap.Array.Populate: one request instead of a page
// fault per page); allocMu or mu held exclusively.
func (h *HNSW) populate(n int) {
	if h.vecMem != nil {
		h.vecMem.Populate(n * h.dim)
	}
	if h.vrefMem != nil {
		h.vrefMem.Populate(n)
	}
	if h.codeMem != nil {
		h.codeMem.Populate(n * h.cstride)
	}
	h.linkMem.Populate(n * (h.m0 + 1))
	h.keyMem.Populate(n)
	h.levelMem.Populate(n)
}

// grow makes room for capacity nodes; mu must be held exclusively (or the
// index not yet shared). The off-heap arrays grow in place, keeping what
// they hold.
func (h *HNSW) grow(capacity int) {
	if capacity <= len(h.levels) {
		return
	}
	if h.shared {
		h.vref = offheap.View[unsafe.Pointer](h.vrefMem.Grow(capacity))[:capacity]
	} else {
		h.vecs = h.vecMem.Grow(capacity * h.dim)[:capacity*h.dim]
	}
	h.links0 = h.linkMem.Grow(capacity * (h.m0 + 1))[:capacity*(h.m0+1)]
	upper := make([]unsafe.Pointer, capacity)
	copy(upper, h.upper)
	dead := make([]uint32, (capacity+31)/32)
	copy(dead, h.dead)
	h.upper, h.dead = upper, dead
	h.levels = h.levelMem.Grow(capacity)[:capacity]
	h.keys = h.keyMem.Grow(capacity)[:capacity]
	if h.quant {
		// A 64-byte aligned arena (cstride is a multiple of 32): a row
		// spans whole lines and its scale is 4-byte aligned.
		h.codes = h.codeMem.Grow(capacity * h.cstride)[:capacity*h.cstride]
	}
}

// Quantize gives an index without codes (one Load returned, or one made
// without Options.Quantize) the int8 code of every vector, so that its
// searches walk the codes as with Options.Quantize; an index that has them
// is left as it is. Codes are derived data, cheap to make (one pass over
// the vectors), so Save does not write them.
func (h *HNSW) Quantize() {
	h.structMu.Lock()
	defer h.structMu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.quant {
		return
	}
	h.quant = true
	h.codeMem = offheap.New[int8](codeReserve)
	h.codes = h.codeMem.Grow(len(h.levels) * h.cstride)[:len(h.levels)*h.cstride]
	h.codeMem.Populate(h.n * h.cstride)
	parallel(h.n, func(lo, hi int) error {
		for id := lo; id < hi; id++ {
			h.setCode(uint32(id))
		}
		return nil
	})
}

// parallel runs f over [0, n) in contiguous chunks on GOMAXPROCS
// goroutines (one for a small n) and returns the first error.
func parallel(n int, f func(lo, hi int) error) error {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/4096))
	if workers == 1 {
		return f(0, n)
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = f(w*n/workers, (w+1)*n/workers)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// CodeBytes is the memory the int8 codes take (Options.Quantize; 0
// without): the code arena's length.
func (h *HNSW) CodeBytes() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.codes)
}

// code returns row id's int8 code (Options.Quantize).
func (h *HNSW) code(id uint32) []int8 {
	o := int(id) * h.cstride
	return h.codes[o : o+h.cstride : o+h.cstride]
}

// setCode codes row id from its vector, its scale in the last 4 bytes.
func (h *HNSW) setCode(id uint32) {
	if h.quant {
		c := h.code(id)
		sc := simd.QuantizeInt8(h.vec(id), c[:h.cstride-4])
		*(*float32)(unsafe.Pointer(&c[h.cstride-4])) = sc
	}
}

// scale is row id's code scale.
func (h *HNSW) scale(id uint32) float32 {
	return *(*float32)(unsafe.Pointer(&h.codes[int(id)*h.cstride+h.cstride-4]))
}

// quantizeQuery codes the searcher's unit query s.q for the int8 walk.
func (h *HNSW) quantizeQuery(s *searcher) {
	s.qc = growI8(s.qc, h.cstride)
	s.qs = simd.QuantizeInt8(s.q, s.qc[:h.cstride-4])
	clear(s.qc[h.cstride-4:])
	s.quant = true
}

// distQ is dist through the codes: 1 − s_q·s_id·⟨code_q, code_id⟩.
func (h *HNSW) distQ(s *searcher, id uint32) float32 {
	return 1 - s.qs*h.scale(id)*float32(simd.DotInt8(s.qc, h.code(id)))
}

// unitVector validates v and writes v/‖v‖ to dst.
func unitVector(v, dst []float32, dim int) error {
	if len(v) != dim {
		return fmt.Errorf("%w: got %d, index has %d", ErrDimension, len(v), dim)
	}
	switch p, i := unitvec.Normalize(v, dst); p {
	case unitvec.NotFinite:
		return fmt.Errorf("%w: element %d is %v", ErrNotFinite, i, v[i])
	case unitvec.Zero:
		return ErrZeroVector
	}
	return nil
}

func (h *HNSW) vec(id uint32) []float32 {
	if h.shared {
		return unsafe.Slice((*float32)(h.vref[id]), h.dim)
	}
	o := int(id) * h.dim
	return h.vecs[o : o+h.dim : o+h.dim]
}

// setRef makes p node id's vector (SharedVectors), pinning it where the
// caller's holder does not hold it (mu held, shared or exclusively).
func (h *HNSW) setRef(id uint32, p unsafe.Pointer) {
	h.vref[id] = p
	if h.holder != nil && h.holder.Holds(p) {
		return
	}
	h.pinMu.Lock()
	if len(h.pins) < len(h.vref) {
		pins := make([]unsafe.Pointer, len(h.vref))
		copy(pins, h.pins)
		h.pins = pins
	}
	h.pins[id] = p
	h.pinMu.Unlock()
}

// vecPtr is the address of node id's vector, for prefetching.
func (h *HNSW) vecPtr(id uint32) unsafe.Pointer {
	if h.shared {
		return h.vref[id]
	}
	return unsafe.Pointer(&h.vecs[int(id)*h.dim])
}

// checkShared validates a vector Insert is to keep a reference to: the
// index's dimension, finite, unit length within float32 rounding.
func (h *HNSW) checkShared(v []float32) error {
	if len(v) != h.dim {
		return fmt.Errorf("%w: got %d, index has %d", ErrDimension, len(v), h.dim)
	}
	n2 := float64(simd.Dot(v, v))
	switch {
	case math.IsNaN(n2) || math.IsInf(n2, 0):
		for i, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("%w: element %d is %v", ErrNotFinite, i, x)
			}
		}
		return fmt.Errorf("%w: the squared norm overflows", ErrNotUnit)
	case math.Abs(n2-1) > 1e-3:
		return fmt.Errorf("%w: squared norm %v", ErrNotUnit, n2)
	}
	return nil
}

func (h *HNSW) isDead(id uint32) bool {
	return atomic.LoadUint32(&h.dead[id/32])&(1<<(id%32)) != 0
}

// list returns node id's neighbour block at level: element 0 is the count.
func (h *HNSW) list(id uint32, level int) []uint32 {
	if level == 0 {
		o := int(id) * (h.m0 + 1)
		return h.links0[o : o+h.m0+1 : o+h.m0+1]
	}
	o := (level - 1) * (h.m + 1)
	return h.upperLists(id)[o : o+h.m+1 : o+h.m+1]
}

// upperLists is node id's lists on its levels above 0 (empty at level 0).
func (h *HNSW) upperLists(id uint32) []uint32 {
	return unsafe.Slice((*uint32)(h.upper[id]), int(h.levels[id])*(h.m+1))
}

// newUpper gives node id, at level ≥ 1, empty upper lists and returns
// them.
func (h *HNSW) newUpper(id uint32, level int) []uint32 {
	u := make([]uint32, level*(h.m+1))
	h.upper[id] = unsafe.Pointer(unsafe.SliceData(u))
	return u
}

func (h *HNSW) lock(id uint32) *sync.Mutex { return &h.locks[id%lockStripes] }

// dist is the cosine distance 1 − q·v of unit vectors.
func (h *HNSW) dist(q []float32, id uint32) float32 { return 1 - dotUnit(q, h.vec(id)) }

// dotUnit is the dot product of two vectors of the index's dimension.
func dotUnit(a, b []float32) float32 { return simd.Dot(a, b) }

func (h *HNSW) randomLevel() int {
	l := int(-math.Log(1-h.rng.Float64()) * h.mult)
	return min(l, maxLevel)
}

// Insert adds key with vector v (normalised on the way in). It returns
// ErrExists if key is present; a deleted key may be inserted again.
func (h *HNSW) Insert(key uint64, v []float32) error {
	var q []float32
	if h.shared {
		if err := h.checkShared(v); err != nil {
			return err
		}
		q = v
	} else {
		q = make([]float32, h.dim)
		if err := unitVector(v, q, h.dim); err != nil {
			return err
		}
	}

	h.structMu.RLock()
	defer h.structMu.RUnlock()
	// Assign a node under allocMu, with mu held shared for the whole
	// insert: the node's slot is written before any link reaches it, so
	// no reader looks at it meanwhile. Only growing the arrays takes mu
	// exclusively.
	for {
		h.mu.RLock()
		h.allocMu.Lock()
		if _, ok := h.byKey.get(key, h.keys); ok {
			h.allocMu.Unlock()
			h.mu.RUnlock()
			return fmt.Errorf("%w: %d", ErrExists, key)
		}
		if h.n == none {
			h.allocMu.Unlock()
			h.mu.RUnlock()
			return ErrFull
		}
		if h.n < len(h.levels) {
			break
		}
		h.allocMu.Unlock()
		h.mu.RUnlock()
		h.mu.Lock()
		if h.n == len(h.levels) {
			h.grow(min(2*len(h.levels), none))
		}
		h.mu.Unlock()
	}
	defer h.mu.RUnlock()
	id := uint32(h.n)
	h.populate(int(id) + 1)
	level := h.randomLevel()
	if h.shared {
		h.setRef(id, unsafe.Pointer(unsafe.SliceData(v)))
	} else {
		copy(h.vec(id), q)
	}
	h.setCode(id)
	h.levels[id], h.keys[id] = uint8(level), key
	if level > 0 {
		h.newUpper(id, level)
	}
	h.byKey.put(key, id, h.keys) // absent: checked above, under allocMu
	h.n++
	h.live++
	if h.top.Load() == 0 {
		h.top.Store(uint64(level+1)<<32 | uint64(id))
		h.allocMu.Unlock()
		return nil
	}
	h.allocMu.Unlock()

	top := h.top.Load()
	if level >= int(top>>32) {
		// This node may become the new entry point: like hnswlib, hold the
		// top lock for the whole insert so no other insert raises the top
		// level meanwhile, then re-read the entry point.
		h.topMu.Lock()
		defer h.topMu.Unlock()
		top = h.top.Load()
	}
	ep, topLevel := uint32(top), int(top>>32)-1
	s := h.searcher()
	defer h.pool.Put(s)
	q = h.vec(id)
	epd := h.dist(q, ep)
	for l := topLevel; l > level; l-- {
		ep, epd = h.greedy(q, nil, ep, epd, l)
	}
	for l := min(level, topLevel); l >= 0; l-- {
		ep, epd = h.connect(s, s.nearest(h, q, ep, epd, h.efc, l, false, nil), id, l, ep, epd)
	}
	if level > topLevel {
		h.top.Store(uint64(level+1)<<32 | uint64(id))
	}
	return nil
}

// greedy walks level l from ep to a local minimum of the distance to q,
// through the codes when s is a quantized search (s may be nil).
func (h *HNSW) greedy(q []float32, s *searcher, ep uint32, epd float32, l int) (uint32, float32) {
	codes := s != nil && s.quant
	for changed := true; changed; {
		changed = false
		blk := h.list(ep, l)
		cnt := atomic.LoadUint32(&blk[0])
		for i := uint32(1); i <= cnt; i++ {
			nb := atomic.LoadUint32(&blk[i])
			var d float32
			if codes {
				d = h.distQ(s, nb)
			} else {
				d = h.dist(q, nb)
			}
			if d < epd {
				ep, epd, changed = nb, d, true
			}
		}
	}
	return ep, epd
}

// connect links node id at level l to its selected neighbours among
// cands, a search's results in ascending distance (in s.sel), and back,
// and returns the closest result as the next entry point (hnswlib's
// mutuallyConnectNewElement).
func (h *HNSW) connect(s *searcher, cands []distID, id uint32, l int, ep uint32, epd float32) (uint32, float32) {
	// A concurrent insert may have linked this node already, so the search
	// can meet it: never select a node as its own neighbour. Tombstoned
	// nodes route the search but are never selected: a link slot spent on
	// a deleted node is lost to the live graph (and a re-inserted vector
	// would compete with its own deleted copy at distance zero).
	j := 0
	for _, c := range cands {
		if c.id != id && !h.isDead(c.id) {
			cands[j] = c
			j++
		}
	}
	if j == 0 {
		// Every node the search met is deleted (an index whose nodes were
		// all deleted, or a region of one): link to them anyway, or
		// nothing would lead from the entry point to the new node. (The
		// loop above kept nothing, so it overwrote nothing.)
		for _, c := range cands {
			if c.id != id {
				cands[j] = c
				j++
			}
		}
	}
	cands = cands[:j]
	if len(cands) == 0 {
		s.sel = cands
		return ep, epd
	}
	next, nextD := cands[0].id, cands[0].d
	// Copied out: pruning the neighbours' lists below reuses s.keep.
	selected := append(s.nbrs[:0], h.heuristic(cands, h.m, s)...)
	s.nbrs = selected
	s.sel = cands[:0]
	mmax := h.m
	if l == 0 {
		mmax = h.m0
	}
	// The new node's own list. A concurrent insert that descended through
	// this node may have linked itself into the list already (the list
	// was empty, so it had room): keep those links rather than overwrite
	// them, or that insert could be left with no way in.
	mu := h.lock(id)
	mu.Lock()
	blk := h.list(id, l)
	if cnt := int(atomic.LoadUint32(&blk[0])); cnt > 0 {
		q := h.vec(id)
		pool := append(s.tmp[:0], selected...)
		for i := 1; i <= cnt; i++ {
			x := atomic.LoadUint32(&blk[i])
			if !h.isDead(x) && x != id && !slices.ContainsFunc(pool, func(d distID) bool { return d.id == x }) {
				pool = append(pool, distID{h.dist(q, x), x})
			}
		}
		s.tmp = pool
		if len(pool) > mmax {
			sortByDist(pool)
			pool = h.heuristic(pool, mmax, s)
		}
		selected = append(selected[:0], pool...)
		s.nbrs = selected
	}
	for i, c := range selected {
		atomic.StoreUint32(&blk[i+1], c.id)
	}
	atomic.StoreUint32(&blk[0], uint32(len(selected)))
	mu.Unlock()
	// And each neighbour's list.
	for _, c := range selected {
		nb := c.id
		mu := h.lock(nb)
		mu.Lock()
		blk := h.list(nb, l)
		cnt := int(atomic.LoadUint32(&blk[0]))
		linked := false
		for i := 1; i <= cnt && !linked; i++ {
			linked = atomic.LoadUint32(&blk[i]) == id
		}
		if linked { // kept from a concurrent insert's link above
			mu.Unlock()
			continue
		}
		if cnt < mmax {
			atomic.StoreUint32(&blk[cnt+1], id)
			atomic.StoreUint32(&blk[0], uint32(cnt+1))
			mu.Unlock()
			continue
		}
		// Full: choose mmax among the current neighbours and the new node.
		nv := h.vec(nb)
		pool := append(s.tmp[:0], distID{c.d, id})
		for i := 1; i <= cnt; i++ {
			if x := atomic.LoadUint32(&blk[i]); !h.isDead(x) {
				pool = append(pool, distID{h.dist(nv, x), x})
			}
		}
		sortByDist(pool)
		keep := h.heuristic(pool, mmax, s)
		for i, k := range keep {
			atomic.StoreUint32(&blk[i+1], k.id)
		}
		atomic.StoreUint32(&blk[0], uint32(len(keep)))
		s.tmp = pool[:0]
		mu.Unlock()
	}
	return next, nextD
}

// heuristic is hnswlib's getNeighborsByHeuristic2: walking the candidates
// from the closest, keep one only if it is closer to the base than to every
// candidate already kept, until m are kept. cands must be sorted by
// ascending distance to the base; the result reuses s.keep.
func (h *HNSW) heuristic(cands []distID, m int, s *searcher) []distID {
	if len(cands) <= m {
		return append(s.keep[:0], cands...)
	}
	keep := s.keep[:0]
	for _, c := range cands {
		if len(keep) == m {
			break
		}
		if h.diverse(c, keep) {
			keep = append(keep, c)
		}
	}
	s.keep = keep
	return keep
}

// diverse is the heuristic's test: c (at distance c.d from the base) is
// closer to the base than to every node already kept.
func (h *HNSW) diverse(c distID, keep []distID) bool {
	cv := h.vec(c.id)
	for _, k := range keep {
		if 1-dotUnit(cv, h.vec(k.id)) < c.d {
			return false
		}
	}
	return true
}

// Delete tombstones key: it is never returned again, and Compact removes
// it from the graph. It returns ErrNotFound for an unknown or deleted key.
func (h *HNSW) Delete(key uint64) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	h.allocMu.Lock()
	defer h.allocMu.Unlock()
	id, ok := h.byKey.del(key, h.keys)
	if !ok {
		return fmt.Errorf("%w: %d", ErrNotFound, key)
	}
	atomic.OrUint32(&h.dead[id/32], 1<<(id%32))
	h.live--
	return nil
}

// Erase deletes key, as Delete does, and overwrites the vector and int8
// code of every node the key has had (the live one, and any deleted
// before it was inserted again) with zeros, under the index's write lock
// (no search is reading them): for erasure, so that no copy of the vector
// outlives its deletion. With Options.SharedVectors the vector zeroed is
// the caller's, which the index references. The nodes stay in the graph
// as tombstones that route searches, as deleted ones do. It returns
// ErrNotFound when the key never had a node.
func (h *HNSW) Erase(key uint64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.erase(key)
}

// EraseAll erases keys as Erase does (a key the index never had is no
// error) and then calls then, if not nil, still holding the index's write
// lock: a caller whose memory the index references (SharedVectors)
// overwrites it there without racing a search or an insert that reads it.
func (h *HNSW) EraseAll(keys []uint64, then func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range keys {
		_ = h.erase(k)
	}
	if then != nil {
		then()
	}
}

func (h *HNSW) erase(key uint64) error {
	if id, ok := h.byKey.del(key, h.keys); ok {
		h.dead[id/32] |= 1 << (id % 32)
		h.live--
	}
	found := false
	for id := range uint32(h.n) {
		if h.keys[id] != key {
			continue
		}
		found = true
		if v := h.vec(id); len(v) > 0 && (!h.shared || h.vref[id] != nil) {
			clear(v)
		}
		if h.quant {
			clear(h.code(id))
		}
	}
	if !found {
		return fmt.Errorf("%w: %d", ErrNotFound, key)
	}
	return nil
}

// CodeOf returns a copy of the int8 code of the node key last had, live
// or deleted (nil when it never had one, or without Options.Quantize):
// for inspection.
func (h *HNSW) CodeOf(key uint64) []int8 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if !h.quant {
		return nil
	}
	var out []int8
	for id := range uint32(h.n) {
		if h.keys[id] == key {
			out = append(out[:0], h.code(id)...)
		}
	}
	return out
}

// SearchOptions tune one search. A nil *SearchOptions means the defaults.
type SearchOptions struct {
	// Ef is the beam width (default Options.Ef; never below k).
	Ef int
	// Filter, when set, is called inside the search loop for each
	// candidate key; a key it rejects still routes the search but is never
	// returned (like a tombstone). It runs while the index is read-locked:
	// it must not call the index's methods. A filter that rejects most keys
	// makes the search visit much of the graph; the context still stops it.
	Filter func(key uint64) bool
	// Float32 walks a quantized index (Options.Quantize) with the float32
	// vectors, as an index without codes would.
	Float32 bool
	// CodeScores returns a quantized search's best k by code distance
	// without re-scoring them in float32: each Score is then the codes'
	// estimate of the cosine. For a caller that computes exact cosines of
	// the candidates itself (the engine re-scores every candidate).
	CodeScores bool
}

// Result is one neighbour.
type Result struct {
	Key uint64
	// Score is the cosine similarity to the query.
	Score float32
}

// Search returns the k nearest live keys to q by cosine similarity, best
// first. q need not be normalised.
func (h *HNSW) Search(ctx context.Context, q []float32, k int, opts *SearchOptions) ([]Result, error) {
	if k < 0 {
		return nil, fmt.Errorf("%w: k = %d", ErrOptions, k)
	}
	ef := h.ef
	var filter func(uint64) bool
	quant := h.quant
	rerank := true
	if opts != nil {
		quant = quant && !opts.Float32
		rerank = !opts.CodeScores
		if opts.Ef < 0 {
			return nil, fmt.Errorf("%w: SearchOptions.Ef = %d", ErrOptions, opts.Ef)
		}
		if opts.Ef > 0 {
			ef = opts.Ef
		}
		filter = opts.Filter
	}
	ef = max(ef, k)
	s := h.searcher()
	defer h.pool.Put(s)
	s.q = growF(s.q, h.dim)
	if err := unitVector(q, s.q, h.dim); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if k == 0 {
		return nil, nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	top := h.top.Load()
	if top == 0 {
		return nil, nil
	}
	ep, topLevel := uint32(top), int(top>>32)-1
	var epd float32
	if quant {
		h.quantizeQuery(s)
		epd = h.distQ(s, ep)
	} else {
		epd = h.dist(s.q, ep)
	}
	for l := topLevel; l > 0; l-- {
		ep, epd = h.greedy(s.q, s, ep, epd, l)
	}
	s.ctx = ctx
	res := s.nearest(h, s.q, ep, epd, ef, 0, true, filter)
	s.ctx, s.quant = nil, false
	if err := s.err; err != nil {
		s.err = nil
		return nil, err
	}
	if quant && rerank {
		// Re-score the best of the ef results with the float32 vectors:
		// the codes' error (half a step of 1/127 of the largest element)
		// moves a neighbour a few places, not from past rerankDepth(k)
		// into the top k.
		res = res[:min(len(res), rerankDepth(k))]
		for _, r := range res[:min(lookAhead, len(res))] {
			prefetch.Lines(h.vecPtr(r.id), h.lines)
		}
		for i := range res {
			if j := i + lookAhead; j < len(res) {
				prefetch.Lines(h.vecPtr(res[j].id), h.lines)
			}
			res[i].d = h.dist(s.q, res[i].id)
		}
		slices.SortFunc(res, func(a, b distID) int {
			if c := cmp.Compare(a.d, b.d); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
	}
	out := make([]Result, 0, min(k, len(res)))
	for _, r := range res[:min(k, len(res))] {
		out = append(out, Result{Key: h.keys[r.id], Score: 1 - r.d})
	}
	s.sel = res[:0]
	return out, nil
}

// rerankDepth is how many of a quantized search's results, best first by
// code distance, are re-scored in float32 for a top k.
func rerankDepth(k int) int { return max(4*k, 40) }

func growI8(s []int8, n int) []int8 {
	if cap(s) < n {
		return make([]int8, n)
	}
	return s[:n]
}

func growF(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
