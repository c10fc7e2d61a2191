package tidemark

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/tidemark/tidemark/internal/links"
	"github.com/tidemark/tidemark/internal/offheap"
	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/temporal"
)

// ledger is one collection's state: its rows (one per memory, aliases
// folded in), their columns in the fused stage's batch (one per belief),
// the fact and document chains, the dependencies, the contradictions, the
// consolidation audit, the feedback limits and the drift detectors. It is
// deterministic — the same records applied in log order give the same
// ledger, on first write as on replay (DESIGN "Write path") — and holds
// no locks: the Collection handle guards it with its mu.
//
// Records change it through one typed apply per kind: put (write.go),
// putDoc (documents.go), judge and access (feedback.go), consolidate
// (consolidate.go). The link graph and the HNSW indexes are derived from
// it: an apply lists the link changes it made (linkOps) for the handle to
// mirror, and buildLinks rebuilds the graph from the rows alone.
type ledger struct {
	opts      *CollectionOptions // the collection's, read-only
	epochDays float64            // opts.Epoch in days: the batch's clock

	rows  rowTable
	batch *kernels.Batch // one column row per belief
	// vecMem holds batch.Vectors off the Go heap (package offheap): the
	// HNSW indexes keep references to these rows instead of copies
	// (index.Options.SharedVectors), so each vector lives once in memory,
	// and the column store grows without moving or copying them.
	vecMem *offheap.Array[float32]
	// cols holds the batch's other columns off the Go heap too: growing
	// them copies nothing, and the collector neither scans them nor
	// paces by them (its headroom would double them).
	cols   columnMem
	byID   idMap // every id written (aliases too) → its row (rowOf, setID)
	byText map[string][]int
	byLead map[string][]int           // keyable rows by leadWords, for update candidates
	byKey  map[temporal.FactKey][]int // fact chain, oldest first
	byDoc  map[docChunk][]int         // document version chain, lowest first
	// pending holds the depends_on targets not written yet → the rows
	// naming them; deps the dependency pairs (a depends on b) counted in
	// degree, dependents the rows depending on each row, in order.
	pending    map[string][]int
	deps       map[[2]int]bool
	dependents map[int][]int
	// aliasHash holds the content hash of each id folded into another row.
	aliasHash map[string][sha256.Size]byte
	visible   int
	// purgedRows counts the rows Retract purged: they are in neither index.
	purgedRows int
	// meta is the rows' metadata by key, for filters (derived).
	meta   metaIndex
	lastTx float64 // the latest transaction time written or given, days
	// rippleSeeds are the memories superseded since the last consolidation
	// run, in order; audit is every consolidation edit.
	rippleSeeds []int
	audit       []AuditEntry
	feedback    map[fbKey]fbState // per (memory, source) feedback limits
	// histUntil is the latest end of a valid window among the memories off
	// the surface (days): a query at an earlier valid time may need them,
	// so the ANN plan searches the archive too.
	histUntil float64
	// Drift detectors by group, and the column store's decay groups.
	drift    map[string]*driftGroup
	anchors  []int // the rows whose unit vectors anchor the coarse drift clusters
	kgIndex  map[kernelGroup]uint32
	kgroups  []kernelGroup
	driftBuf []float64 // driftVector's buffer
	// nonFinite marks the rows parseRow read with a NaN or infinite
	// vector element (nil when none), for decodeDrift, which clears it:
	// the drift detectors refused those rows, and testing each vector as
	// it is decoded, in cache, spares a second pass over the column store.
	nonFinite bitmap
	// lambdas caches groupLambdas for the searches between two writes
	// (they share it read-only); observeDrift clears it.
	lambdas atomic.Pointer[[]float64]

	// linkOps lists the link-graph changes of the record being applied, in
	// order; the handle mirrors them into its graph (Collection.syncLinks).
	linkOps []linkOp
}

// rowTable holds the rows in fixed chunks of rowChunk: appending never
// copies the rows already there (a slice of 100k rows of about a
// kilobyte grown by append copied some 500 MB while loading, and held the
// old and the new array at once), and a row's address is stable. Each
// row's pointer-free part (rowNum) lives in nums, off the Go heap, row j
// at nums[j·numWords:].
type rowTable struct {
	chunks []*[rowChunk]row
	n      int
	nums   *offheap.Array[uint64]
}

const rowChunk = 1024

// numWords is the 8-byte words of a rowNum.
const numWords = int(unsafe.Sizeof(rowNum{}) / 8)

// numReserve is the address space the rows' numbers reserve (no memory
// until used): some 50 million rows before the array moves (add then
// points every row at its new place).
const numReserve = 8 << 30

// len returns the number of rows.
func (t *rowTable) len() int { return t.n }

// at returns row j (0 ≤ j < len).
func (t *rowTable) at(j int) *row {
	if uint(j) >= uint(t.n) {
		rowOutOfRange(j, t.n)
	}
	return &t.chunks[j/rowChunk][j%rowChunk]
}

// num returns row j's numbers, as at(j).rowNum does, without reading the
// row: for a search's candidates, whose rows are cold (0 ≤ j < len).
func (t *rowTable) num(j int) *rowNum {
	if uint(j) >= uint(t.n) {
		rowOutOfRange(j, t.n)
	}
	return &offheap.View[rowNum](t.nums.Slice())[j]
}

// rowOutOfRange panics as an index out of range would (kept out of at,
// so that at inlines).
//
//go:noinline
func rowOutOfRange(j, n int) { panic(fmt.Sprintf("tidemark: row %d of %d", j, n)) }

// add appends r, copying its rowNum into the table (r's own is not kept).
func (t *rowTable) add(r row) {
	if r.rowLists == nil {
		r.rowLists = &noLists
	}
	if r.rowText == nil {
		r.rowText = &noText
	}
	if t.n%rowChunk == 0 {
		t.chunks = append(t.chunks, new([rowChunk]row))
	}
	num := t.growNums()
	if r.rowNum != nil {
		*num = *r.rowNum
	} else {
		*num = rowNum{}
	}
	r.rowNum = num
	t.chunks[t.n/rowChunk][t.n%rowChunk] = r
	t.n++
}

// growNums makes room for row t.n's numbers and returns them.
// Where the array moves (past its reservation, or on the heap fallback of
// package offheap) the rows before are pointed at their new place.
func (t *rowTable) growNums() *rowNum {
	if t.nums == nil {
		t.nums = offheap.New[uint64](numReserve)
	}
	need := (t.n + 1) * numWords
	before := t.nums.Slice()
	words := t.nums.Grow(need)
	nums := offheap.View[rowNum](words)
	if len(before) > 0 && unsafe.SliceData(before) != unsafe.SliceData(words) {
		for j := range t.n {
			t.at(j).rowNum = &nums[j]
		}
	}
	t.nums.Populate(need)
	return &nums[t.n]
}

// vectorReserve is the address space a collection's vectors reserve (no
// memory until used): about 21 million 768-d vectors, or 11 million
// 1536-d, before the column store moves to a larger reservation (it then
// keeps the old one mapped for the index's references: a move costs a
// second copy for the life of the collection).
const vectorReserve = 64 << 30

// growVectors makes room in the column store for n more vectors without
// moving the ones it holds.
func (l *ledger) growVectors(n int) {
	b := l.batch
	need := len(b.Vectors) + n*l.opts.Dim
	if need > cap(b.Vectors) {
		b.Vectors = l.vecMem.Grow(need)[:len(b.Vectors)]
	}
	l.vecMem.Populate(need)
}

// columnMem is the off-heap memory behind a batch's metadata columns.
type columnMem struct {
	id     *offheap.Array[uint64]
	kind   *offheap.Array[temporal.Kind]
	status *offheap.Array[temporal.Status]
	group  *offheap.Array[uint32]
	floats [13]*offheap.Array[float32] // Created … Degree, as growColumns lists them
}

// growColumns makes room in the column store for n more beliefs, vectors
// and metadata, without moving what it holds (Batch.Grow would move the
// columns to the Go heap).
func (l *ledger) growColumns(n int) {
	l.growVectors(n)
	b, c := l.batch, &l.cols
	need := b.Len() + n
	b.ID = growColumn(c.id, b.ID, need)
	b.Kind = growColumn(c.kind, b.Kind, need)
	b.Status = growColumn(c.status, b.Status, need)
	b.Group = growColumn(c.group, b.Group, need)
	for i, col := range [...]*[]float32{&b.Created, &b.ValidFrom, &b.ValidTo, &b.RecordedAt, &b.RetiredAt,
		&b.Lambda, &b.Floor, &b.BaseConf, &b.ConfFrom, &b.Access, &b.Positive, &b.Negative, &b.Degree} {
		*col = growColumn(c.floats[i], *col, need)
	}
}

// growColumn returns col with room for need elements from mem, which
// backs it.
func growColumn[T offheap.Elem](mem *offheap.Array[T], col []T, need int) []T {
	if need > cap(col) {
		col = mem.Grow(need)[:len(col)]
	}
	mem.Populate(need)
	return col
}

// init makes an empty ledger for a collection with options o.
func (l *ledger) init(o *CollectionOptions) error {
	l.opts, l.epochDays = o, days(o.Epoch, 0)
	var err error
	if l.batch, err = kernels.NewBatch(o.Dim, 0); err != nil {
		return err
	}
	l.vecMem = offheap.New[float32](vectorReserve)
	l.batch.Vectors = l.vecMem.Slice()[:0]
	c := &l.cols
	c.id, c.kind, c.status, c.group = offheap.New[uint64](0), offheap.New[temporal.Kind](0), offheap.New[temporal.Status](0), offheap.New[uint32](0)
	for i := range c.floats {
		c.floats[i] = offheap.New[float32](0)
	}
	l.byID, l.byText, l.byKey = idMap{}, map[string][]int{}, map[temporal.FactKey][]int{}
	l.byLead = map[string][]int{}
	l.byDoc, l.pending, l.deps = map[docChunk][]int{}, map[string][]int{}, map[[2]int]bool{}
	l.dependents = map[int][]int{}
	l.aliasHash = map[string][sha256.Size]byte{}
	l.feedback = map[fbKey]fbState{}
	l.drift, l.kgIndex, l.kgroups = map[string]*driftGroup{}, map[kernelGroup]uint32{}, nil
	return nil
}

// linkOp is one change to the link graph: a new node (row, visible), a
// row hidden, or an edge of a type from row to other.
type linkOp struct {
	kind       linkOpKind
	row, other int
	typ        links.Type
}

type linkOpKind uint8

const (
	opNode linkOpKind = iota
	opHide
	opShow
	opEdge
)

// derive fills the columns a row computes from its memory and its
// penalty: the normalised text, the base confidence, the document chunk
// and the fact key (the decay is worked out when needed: decay). Put and
// the snapshot share it.
func (r *row) derive() {
	t := rowText{normText: temporal.NormalizeObject(r.mem.Text)}
	r.c0 = max(0, r.mem.Source.Authority()-r.penalty)
	if r.mem.DocID != "" {
		t.doc = docChunk{r.mem.DocID, r.mem.Chunk}
	}
	if r.mem.Subject != "" {
		t.key = temporal.NewFactKey(r.mem.Subject, r.mem.Relation)
	}
	r.setText(t)
}

// decay is row j's half-life and confidence floor (decayOf), worked out
// when asked: a row does not keep them.
func (l *ledger) decay(j int) (halfLife, floor float64) {
	r := l.rows.at(j)
	return decayOf(r.mem.Profile, r.mem.Kind, l.opts.HalfLife)
}

// decayOf is a memory's half-life and confidence floor: its profile's,
// else the default half-life with no floor.
func decayOf(profile string, kind temporal.Kind, defaultHalfLife float64) (halfLife, floor float64) {
	if profile != "" {
		return temporal.ProfileFor(profile).HalfLife, temporal.DecayFloor(profile, kind)
	}
	return defaultHalfLife, 0
}

// addNode, hide and addEdge note a link change for the handle to mirror.
func (l *ledger) addNode(j int) { l.linkOps = append(l.linkOps, linkOp{kind: opNode, row: j}) }
func (l *ledger) hide(j int)    { l.linkOps = append(l.linkOps, linkOp{kind: opHide, row: j}) }
func (l *ledger) show(j int)    { l.linkOps = append(l.linkOps, linkOp{kind: opShow, row: j}) }
func (l *ledger) addEdge(typ links.Type, a, b int) {
	l.linkOps = append(l.linkOps, linkOp{kind: opEdge, typ: typ, row: a, other: b})
}

// apply mirrors one link change into g.
func (l *ledger) applyLink(g *links.Graph, op linkOp) error {
	switch op.kind {
	case opNode:
		r := l.rows.at(op.row)
		return g.AddNode(uint64(op.row), r.created, r.visible)
	case opHide:
		return g.SetVisible(uint64(op.row), false)
	case opShow:
		return g.SetVisible(uint64(op.row), true)
	default:
		return g.AddEdge(op.typ, uint64(op.row), uint64(op.other), 0)
	}
}

// buildLinks derives the link graph from the rows: a node per row (its
// creation time, on the surface or not), a version link from each row to
// every row it superseded, absorbed or was split from, sibling links
// among the siblings of a split, the dependencies and the
// contradictions. The engine's link types are uncapped but for sibling
// links (cap_β, links.DefaultCapSibling, kept by a total order: time, then
// id), so the graph does not depend on the order the links were added in
// (links.Graph).
func (l *ledger) buildLinks() (*links.Graph, error) {
	g, err := links.New(nil)
	if err != nil {
		return nil, err
	}
	for j := range l.rows.len() {
		r := l.rows.at(j)
		if err := g.AddNode(uint64(j), r.created, r.visible); err != nil {
			return nil, err
		}
	}
	for j := range l.rows.len() {
		r := l.rows.at(j)
		for _, o := range r.supersedes {
			if err := g.AddEdge(links.Version, uint64(j), uint64(o), 0); err != nil {
				return nil, err
			}
		}
		for _, a := range r.splitInto {
			for _, b := range r.splitInto {
				if a != b {
					if err := g.AddEdge(links.Sibling, uint64(a), uint64(b), 0); err != nil {
						return nil, err
					}
				}
			}
		}
		for _, o := range r.contradicts {
			if o > j { // symmetric: one call adds both directions
				if err := g.AddEdge(links.Contradicts, uint64(j), uint64(o), 0); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, p := range slices.SortedFunc(maps.Keys(l.deps), func(a, b [2]int) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	}) {
		if err := g.AddEdge(links.DependsOn, uint64(p[0]), uint64(p[1]), 0); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// syncLinks mirrors the ledger's pending link changes into the graph (mu
// held). A change the graph refuses means the two no longer agree, which
// no record should cause: the graph is rebuilt from the ledger, the truth,
// and the first such error is kept for checkLinks.
func (c *Collection) syncLinks() {
	ops := c.linkOps
	c.linkOps = c.linkOps[:0]
	for _, op := range ops {
		if err := c.applyLink(c.links, op); err != nil {
			if c.linkErr == nil {
				c.linkErr = fmt.Errorf("link graph update %+v: %w", op, err)
			}
			c.rebuildLinks()
			return
		}
	}
}

// rebuildLinks replaces the graph with one derived from the ledger (mu
// held exclusively, or the collection not yet shared).
func (c *Collection) rebuildLinks() {
	g, err := c.buildLinks()
	if err != nil {
		// The ledger's own edges are well formed (rows exist, no
		// self-loops), so this cannot happen; keep the old graph.
		if c.linkErr == nil {
			c.linkErr = fmt.Errorf("link graph rebuild: %w", err)
		}
		return
	}
	c.links = g
}

// checkLinks checks the ledger's invariants that the derived data
// mirrors: no link-graph or index update was refused, the graph equals
// the one derived from the rows, and no superseded or merged memory is an
// orphan (All-Mem's no-orphan invariant, Orphans). The tests call it
// after every kind of record.
func (c *Collection) checkLinks() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if err := cmp.Or(c.linkErr, c.indexErr); err != nil {
		return err
	}
	want, err := c.buildLinks()
	if err != nil {
		return err
	}
	a, err1 := c.links.MarshalBinary()
	b, err2 := want.MarshalBinary()
	if err := cmp.Or(err1, err2); err != nil {
		return err
	}
	if string(a) != string(b) {
		return fmt.Errorf("the link graph differs from the one the ledger derives")
	}
	if o := c.orphans(); len(o) > 0 {
		return fmt.Errorf("orphaned memories %v", o)
	}
	return nil
}

// orphans returns the superseded or merged rows that no root reaches
// through version links (new → old) in the link graph: the roots are the
// current rows and the rows archived because their window ended, which
// the archive index keeps reachable (a chain whose newest version expired
// is still whole). Collection.Orphans and checkLinks share it.
func (c *Collection) orphans() []int {
	var roots []uint64
	for j := range c.rows.len() {
		if r := c.rows.at(j); r.visible || !r.superseded {
			roots = append(roots, uint64(j))
		}
	}
	var out []int
	for _, k := range c.links.Unreached(roots) {
		out = append(out, int(k))
	}
	return out
}
