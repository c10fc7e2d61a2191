package tidemark

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/tidemark/tidemark/embed"
	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/internal/links"
	"github.com/tidemark/tidemark/internal/planner"
	"github.com/tidemark/tidemark/internal/wire"
	"github.com/tidemark/tidemark/temporal"
)

// Collection is a set of memories of one dimension: the handle on its
// ledger (ledger.go), the indexes derived from it, and its options. Its
// methods are safe for concurrent use; writes go through the DB's log in
// order.
//
// Lock order, outermost first: consMu, derive.mu, then the DB's ckptMu,
// seq.mu and mu (db.go), then mu; accesses.mu, the indexes' and the link
// graph's own locks, and the DB's embMu and lastConsMu are leaves, taken
// with nothing else acquired after them.
type Collection struct {
	db          *DB
	name        string
	incarnation uint64 // the log sequence number of its create record
	opts        CollectionOptions
	emb         embed.Embedder // nil without an embedder (embedder.go)

	// The indexes, derived from the ledger, are safe for concurrent use on
	// their own. The HNSW indexes change only while the DB applies a
	// record (in log order), after the ledger: a search may find the
	// ledger a record ahead of them (a new memory not yet in the index, an
	// archived one still in it), which the exact plan and the masks
	// absorb. The link graph changes with the ledger, under mu.
	surface *index.HNSW  // the visible surface
	archive *index.HNSW  // everything that left the surface, for historical queries
	links   *links.Graph // the ledger's version, dependency and contradiction edges

	consMu sync.Mutex // one consolidation run at a time
	// splitScan is the row up to which consolidation has examined the
	// memories for a split (consolidate_split.go; guarded by consMu).
	splitScan int
	// planner asks the collection's consolidation planner, if any.
	planner *planner.Client

	// derive orders the Puts that derive keys (keys.go): mu is held from
	// the derivation until the record's place in the log is fixed;
	// inflight holds the memories derived but not yet applied.
	derive struct {
		mu       sync.Mutex
		inflight map[*record][]Memory // guarded by derive.mu
	}

	// mu guards the ledger, the link graph's updates, dropped, linkErr and
	// indexErr.
	mu sync.RWMutex
	ledger
	dropped bool
	// linkErr is the first link-graph update that failed: the graph no
	// longer matched the ledger and was rebuilt from it. indexErr is the
	// first HNSW update that failed: the indexes disagree with the ledger
	// until the next Open rebuilds them. checkLinks reports both.
	linkErr, indexErr error

	accesses accessCounter // retrievals not yet logged (own lock)
}

type docChunk struct {
	doc   string
	chunk int
}

// state is one belief: the valid window believed during a transaction
// window (days since the Unix epoch).
type state struct {
	valid, recorded temporal.Window
}

// row is one stored memory: the parts that hold Go pointers (its
// memory's strings, its text and list columns) on the Go heap, and
// everything else (rowNum) off it, in the row table's off-heap array
// (rowTable). rowNum's fields are promoted through the pointer, so they
// read and write as the row's own (r.rec).
type row struct {
	*rowNum
	mem stored // the caller's fields (the vector lives in the batch)

	// The text, document and key columns, promoted from one pointer that
	// every row without any shares (a memory of a vector alone has
	// none): read them as fields, write them through setText.
	*rowText

	// The lists, promoted from one pointer that every row without any
	// shares (most never have one): read them as fields, write them
	// through lists.
	*rowLists
}

// rowNum is the part of a row without Go pointers. The row table keeps
// it off the Go heap (package offheap), so the garbage collector neither
// scans it nor counts it in its heap goal, whose headroom would otherwise
// double it.
type rowNum struct {
	// First what a search reads of each candidate (searchANN), in one
	// cache line: the flags and the only belief.
	hasFrom    bool
	superseded bool
	retracted  bool // Retract: no longer believed (rowLists says when, by whom)
	purged     bool // Retract with Purge: its content erased
	visible    bool
	status     temporal.Status
	// oneState and oneBelief say that st0 and b0 hold the row's only
	// state and belief (most rows have one of each); with more, they are
	// in rowLists.
	oneState, oneBelief bool
	b0                  int

	hash [sha256.Size]byte

	rec, effFrom, created float64
	givenFrom, givenTo    float64

	supersededBy int    // -1 when current
	kgroup       uint32 // decay group in the column store

	c0                                 float64
	access, positive, negative, degree float64
	// penalty is the base confidence taken by ripples (c0 = authority −
	// penalty).
	penalty float64

	st0 state
}

// stateList is the row's states, oldest first (its elements may be
// written in place; appendState adds one).
func (r *row) stateList() []state {
	if r.oneState {
		return unsafe.Slice(&r.st0, 1)
	}
	return r.listed().states
}

// lastState is the row's current state, for writing in place.
func (r *row) lastState() *state {
	s := r.stateList()
	return &s[len(s)-1]
}

// setState makes st the row's only state.
func (r *row) setState(st state) {
	r.st0, r.oneState = st, true
}

// appendState adds st after the row's states (a pointer from lastState
// taken before no longer reaches the row's).
func (r *row) appendState(st state) {
	appendInline(&r.oneState, &r.st0, len(r.stateList()), func() *[]state { return &r.lists().states }, st)
}

// beliefList is the row's beliefs (batch rows, one per state).
//
// It reads the row's lists only when it has more than one: Open derives
// the lists (linkSplits) while the indexes read the rows' vectors.
func (r *row) beliefList() []int {
	if r.oneBelief {
		return unsafe.Slice(&r.b0, 1)
	}
	return r.listed().beliefs
}

// lastBelief is the row's current belief's batch row.
func (r *row) lastBelief() int {
	b := r.beliefList()
	return b[len(b)-1]
}

// addBelief appends batch row b to the row's beliefs.
func (r *row) addBelief(b int) {
	appendInline(&r.oneBelief, &r.b0, len(r.beliefList()), func() *[]int { return &r.lists().beliefs }, b)
}

// listed is the row's lists for reading (noLists before the row table
// gives it its own or the shared ones).
func (r *row) listed() *rowLists {
	if r.rowLists == nil {
		return &noLists
	}
	return r.rowLists
}

// appendInline appends x to an n-element list kept in first while it
// has one element (one), and in the list list returns once it has more.
func appendInline[T any](one *bool, first *T, n int, list func() *[]T, x T) {
	if n == 0 {
		*first, *one = x, true
		return
	}
	l := list()
	if *one {
		*l = append(make([]T, 0, 2), *first)
		*one = false
	}
	*l = append(*l, x)
}

// rowText is what a row derives from its memory's text, document and
// fact key (derive), for the maps that find rows by them.
type rowText struct {
	normText string
	key      temporal.FactKey
	doc      docChunk
}

// noText is the rowText of every row without text, document or key;
// nothing writes it.
var noText rowText

// setText sets r's derived text columns, sharing noText when all are
// zero (t is copied to the heap only when it is not: taking its address
// would allocate it for every row).
func (r *row) setText(t rowText) {
	if t == noText {
		r.rowText = &noText
		return
	}
	p := new(rowText)
	*p = t
	r.rowText = p
}

// rowLists are a row's links to other rows.
type rowLists struct {
	supersedes []int
	aliases    []string
	// review lists the changed memories a ripple flagged this one
	// against, contradicts the memories consolidation found it
	// contradicting, contradictedBy the memories whose topic conflict
	// with this one cost it confidence (RuleContradicted).
	review, contradicts, contradictedBy []int
	// splitInto, on a memory split into siblings, is the rows they landed
	// in (derived from the memory's SplitInto ids).
	splitInto []int
	// retractedBy and retractedAt (days) say who retracted the memory and
	// when (Retract).
	retractedBy string
	retractedAt float64
	// revision is the version of its id the row holds (0 and 1: the
	// first; Put of other content under the id makes the next).
	revision int
	// states and beliefs are the row's states and beliefs when it has
	// more than one (rowNum holds a single one).
	states  []state
	beliefs []int
}

// noLists is the lists of every row without any; nothing writes it.
var noLists rowLists

// lists returns r's lists for writing, first copying the shared empty
// ones.
func (r *row) lists() *rowLists {
	if r.rowLists == nil || r.rowLists == &noLists {
		r.rowLists = new(rowLists)
	}
	return r.rowLists
}

// days converts t to days since the Unix epoch; the zero time is open.
func days(t time.Time, open float64) float64 {
	if t.IsZero() {
		return open
	}
	return float64(t.Unix())/secondsPerDay + float64(t.Nanosecond())/(secondsPerDay*1e9)
}

const secondsPerDay = 24 * 60 * 60

// fromDays is the inverse of days; ±Inf is the zero time.
func fromDays(d float64) time.Time {
	if math.IsInf(d, 0) || math.IsNaN(d) {
		return time.Time{}
	}
	sec := math.Floor(d * secondsPerDay)
	ns := math.Round((d*secondsPerDay - sec) * 1e9)
	return time.Unix(int64(sec), int64(ns)).UTC()
}

func newCollection(db *DB, name string, o CollectionOptions) (*Collection, error) {
	c := &Collection{db: db, name: name, opts: o}
	var err error
	if err = c.ledger.init(&c.opts); err != nil {
		return nil, err
	}
	if c.emb, err = db.newEmbedder(name, &c.opts); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if p := c.opts.Planner; p.enabled() {
		if c.planner, err = planner.New(planner.Options{BaseURL: p.BaseURL, Model: p.Model, APIKeyEnv: p.APIKeyEnv, Timeout: p.Timeout}); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOptions, err)
		}
	}
	if c.surface, err = c.newIndex(); err != nil {
		return nil, err
	}
	if c.archive, err = c.newIndex(); err != nil {
		return nil, err
	}
	if c.links, err = links.New(nil); err != nil {
		return nil, err
	}
	return c, nil
}

// newIndex makes an empty HNSW index with the collection's options. Its
// searches walk int8 codes of the vectors and re-score the best in
// float32 (index.Options.Quantize): a quarter of the bytes per visit.
func (c *Collection) newIndex() (*index.HNSW, error) {
	// The indexes keep references to the column store's unit vectors
	// (one copy of each in memory); its off-heap array lives as long as
	// they do. An index starts with room for 64 nodes and doubles as it
	// fills: an empty collection of 65536-d vectors holds 4 MiB of codes,
	// not the 64 MiB of index.DefaultCapacity.
	return index.New(&index.Options{Dim: c.opts.Dim, M: c.opts.M, EfConstruction: c.opts.EfConstruction, Ef: c.opts.Ef,
		Quantize: true, SharedVectors: true, KeepAlive: c.vecMem, Capacity: 64})
}

// Name returns the collection's name.
func (c *Collection) Name() string { return c.name }

// Options returns the collection's options, defaults filled in.
func (c *Collection) Options() CollectionOptions { return c.opts }

// Len returns the number of memories stored (duplicates folded into
// another memory are not counted) and how many are on the visible surface.
func (c *Collection) Len() (stored, visible int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rows.len(), c.visible
}

// Outcome is what a Put did with one memory.
type Outcome uint8

const (
	// Stored: a new memory (it may have superseded others).
	Stored Outcome = iota
	// Reinforced: an exact duplicate or a restatement of a current fact
	// (same key, same object); it was folded into Into as an access.
	Reinforced
	// Unchanged: the id was written before with the same content (a
	// retry); nothing changed.
	Unchanged
	// Rejected: another Put wrote the id with other content first (the
	// two raced past Put's check); nothing changed and Put returns
	// ErrExists.
	Rejected
)

var outcomeNames = [...]string{"stored", "reinforced", "unchanged", "rejected"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", o)
}

// MarshalText implements encoding.TextMarshaler.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (o *Outcome) UnmarshalText(b []byte) error {
	for i, n := range outcomeNames {
		if n == string(b) {
			*o = Outcome(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown outcome %q", ErrInvalid, b)
}

// PutResult reports what happened to one memory of a Put.
type PutResult struct {
	ID      string  `json:"id"`
	Outcome Outcome `json:"outcome"`
	// Into is the memory a Reinforced or Unchanged write landed in.
	Into string `json:"into,omitempty"`
	// Superseded lists the memories this write closed (key or document
	// supersession); SupersededBy is set when a newer version was already
	// stored and this write went straight to the archive.
	Superseded   []string `json:"superseded,omitempty"`
	SupersededBy string   `json:"superseded_by,omitempty"`
	// Split lists the siblings a memory that states several facts was
	// split into (CollectionOptions.Split); Superseded then includes what
	// they superseded.
	Split []string `json:"split,omitempty"`
}

// Put writes a batch of memories: it validates all of them (nothing is
// written when one is bad), embeds the ones given as text when the
// collection has an embedder, appends the batch to the log, waits for
// fsync and applies it. A nil error means the batch is durable and
// visible to searches.
//
// Put is an upsert: a memory whose id exists with other content is the
// id's next version (Memory.Revision), which supersedes the one before
// bi-temporally, as a fact key's successor does (a query as of an earlier
// valid or transaction time still finds the old one; History lists
// both); the same content again is a retry (Unchanged). A memory with
// IfRevision set is written only if its id is at that revision: otherwise
// the batch fails with ErrConflict before anything is written — or, when
// two Puts race past that check, the later one in log order has that
// memory Rejected (its other memories are written) and returns an error
// wrapping ErrConflict. A purged id stays retired (ErrExists).
//
// In a collection that splits (CollectionOptions.Split), a memory given
// as text that states several facts is stored as archived evidence beside
// one sibling per statement, "ID#1", "ID#2", …; its result lists them
// (PutResult.Split) and what they superseded.
func (c *Collection) Put(ctx context.Context, ms []Memory) ([]PutResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	db := c.db
	if len(ms) == 0 {
		return nil, nil
	}
	if len(ms) > db.opts.MaxBatch {
		return nil, fmt.Errorf("%w: %d memories in one Put, at most %d", ErrTooLarge, len(ms), db.opts.MaxBatch)
	}
	batch := make([]Memory, len(ms))
	seen := make(map[string]bool, len(ms))
	for i := range ms {
		m := ms[i]
		if err := m.validate(db.opts.MaxTextBytes); err != nil {
			return nil, fmt.Errorf("memory %d (%q): %w", i, m.ID, err)
		}
		if seen[m.ID] {
			return nil, fmt.Errorf("%w: memory %d: id %q appears twice in the batch", ErrInvalid, i, m.ID)
		}
		seen[m.ID] = true
		if m.Vector == nil {
			if c.emb == nil || m.Text == "" {
				return nil, fmt.Errorf("%w: memory %d (%q) has no vector and the collection cannot embed it (embedder %q)", ErrInvalid, i, m.ID, c.opts.Embedder)
			}
		} else {
			m.Vector = slices.Clone(m.Vector)
			if err := checkVector(m.Vector, c.opts.Dim, fmt.Sprintf("memory %d (%q)", i, m.ID)); err != nil {
				return nil, err
			}
		}
		m.DependsOn = slices.Clone(m.DependsOn)
		m.clearEngineFields()
		batch[i] = m
	}
	// On a PostgreSQL store, what every node acknowledged before is
	// applied here before the batch is checked and keyed against it.
	if err := db.catchUp(ctx); err != nil {
		return nil, err
	}
	// Ids written before with other content refuse the batch before it
	// costs an embedding.
	if err := c.precheck(batch); err != nil {
		return nil, err
	}
	// Memories that state several facts are followed by their siblings
	// (split.go), whose texts are embedded with the rest.
	batch = c.splitBatch(batch)
	var texts []string // to embed, in batch order
	var textOf []int
	for i := range batch {
		if batch[i].Vector == nil {
			texts, textOf = append(texts, batch[i].Text), append(textOf, i)
		}
	}
	// One call for the batch's texts: a remote embedder batches and
	// parallelises them, and a failure refuses the whole Put.
	if len(texts) > 0 {
		vs, err := c.embedTexts(ctx, texts)
		if err != nil {
			return nil, err
		}
		for k, i := range textOf {
			batch[i].Vector, batch[i].embedded = vs[k], true
		}
	}
	// A stored memory one of these updates a statement of is split in the
	// same record (split.go, split on update).
	batch, err := c.splitOnUpdate(ctx, batch)
	if err != nil {
		return nil, err
	}
	rec := &record{typ: recPut, coll: c.name, inc: c.incarnation, mems: batch}
	var res applied
	if c.opts.Keys == KeysAuto && slices.ContainsFunc(batch, func(m Memory) bool { return keyable(&m) }) {
		res, err = c.commitDerived(ctx, rec)
	} else {
		res, err = db.commit(ctx, rec)
	}
	if err != nil {
		return nil, err
	}
	out := foldSplits(batch, res.puts)
	for i := range out {
		if out[i].Outcome == Rejected {
			return out, fmt.Errorf("%w: memory %d: id %q was written by a concurrent Put since revision %d", ErrConflict, i, out[i].ID, ms[i].IfRevision)
		}
	}
	return out, nil
}

func (m *Memory) clearEngineFields() {
	m.Beliefs, m.Status, m.Visible = nil, 0, false
	m.SupersededBy, m.Supersedes, m.Aliases = "", nil, nil
	m.Contradicts, m.Review, m.Penalty, m.ContradictedBy = nil, nil, 0, nil
	m.KeyRule, m.KeyFrom, m.keyFromObject = "", "", ""
	m.SplitInto, m.SplitFrom, m.SplitRule = nil, "", ""
	m.Revision, m.RetractedAt, m.RetractedBy, m.Purged = 0, time.Time{}, "", false
}

// checkVector checks a vector's length and values.
func checkVector(v []float32, dim int, what string) error {
	if len(v) != dim {
		return fmt.Errorf("%w: %s has %d dimensions, the collection %d", ErrDimension, what, len(v), dim)
	}
	var n float64
	for i, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%w: %s: vector[%d] = %v", ErrNotFinite, what, i, x)
		}
		n += f * f
	}
	if n == 0 {
		return fmt.Errorf("%w: %s is the zero vector", ErrNotFinite, what)
	}
	if math.IsInf(n, 0) {
		return fmt.Errorf("%w: %s: its norm overflows", ErrNotFinite, what)
	}
	return nil
}

// contentHash is the hash of a memory's caller fields, which decides
// whether a repeated id is a retry.
//
// It hashes the caller's view (Memory.callerView): a retry hashes alike
// whatever key the engine derives for it this time.
func contentHash(m *Memory) [sha256.Size]byte {
	var w wire.Writer
	v := m.callerView()
	v.encodeCaller(&w)
	if v.metaJSON != "" { // (memories without metadata hash as before it existed)
		w.String(v.metaJSON)
	}
	return sha256.Sum256(w.B)
}

// precheck refuses a batch whose ids were purged or are not at the
// revision a memory expects (Memory.IfRevision), before anything is
// logged (apply checks again, in log order).
func (c *Collection) precheck(ms []Memory) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.dropped {
		return fmt.Errorf("%w: collection %q", ErrNotFound, c.name)
	}
	for i := range ms {
		j, ok := c.rowOf(ms[i].ID)
		switch want := ms[i].IfRevision; {
		case ok && c.rows.at(j).purged:
			return fmt.Errorf("%w: memory %d: id %q was purged; its id stays retired", ErrExists, i, ms[i].ID)
		case want > 0 && !ok:
			return fmt.Errorf("%w: memory %d: id %q does not exist; the write expected revision %d", ErrConflict, i, ms[i].ID, want)
		case want > 0 && c.revision(j) != want:
			return fmt.Errorf("%w: memory %d: id %q is at revision %d; the write expected %d", ErrConflict, i, ms[i].ID, c.revision(j), want)
		}
	}
	return nil
}

// sameContent reports whether m is a retry of the write stored for its id
// in row j (c.mu held); h is contentHash(m). A memory whose vector the
// embedder made is compared by its text (Memory.callerView); one stored by
// a build that hashed embedded vectors too matches that way as well.
func (l *ledger) sameContent(j int, m *Memory, h [sha256.Size]byte) bool {
	want := l.hashOf(j, m.ID)
	if h == want {
		return true
	}
	if !m.embedded && m.Vector != nil {
		return false
	}
	var w wire.Writer
	v := m.callerView()
	v.Vector = m.Vector
	v.encodeCaller(&w)
	return sha256.Sum256(w.B) == want
}

// hashOf returns the content hash stored for id, which lives in row j (as
// its own id or an alias).
func (l *ledger) hashOf(j int, id string) [sha256.Size]byte {
	if l.rows.at(j).mem.ID == id {
		return l.rows.at(j).hash
	}
	return l.aliasHash[id]
}
