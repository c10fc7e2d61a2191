package kernels

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/tidemark/tidemark/internal/prefetch"
	"github.com/tidemark/tidemark/internal/unitvec"
	"github.com/tidemark/tidemark/temporal"
)

// Batch is the column (struct-of-arrays) layout of N candidates.
//
// Vectors holds N rows of Dim float32s, each of unit L2 norm. Every other
// field is a column of length N. Times are days since the caller's epoch;
// open bounds are ±Inf.
type Batch struct {
	Dim     int
	Vectors []float32

	ID     []uint64
	Kind   []temporal.Kind
	Status []temporal.Status
	// Created is when the memory was authored; ages are measured from it.
	Created []float32
	// ValidFrom/ValidTo is the valid-time window, RecordedAt/RetiredAt the
	// transaction-time window.
	ValidFrom, ValidTo, RecordedAt, RetiredAt []float32
	// Lambda is the decay rate ln 2 / half-life per day; Floor the decay
	// floor.
	Lambda, Floor []float32
	// Group is the drift group whose λ(t) replaces Lambda under adaptive
	// decay (an index into Query.GroupLambda).
	Group []uint32
	// BaseConf is C0, ConfFrom when the confidence clock starts.
	BaseConf, ConfFrom []float32
	// Access, Positive, Negative are the feedback counters; Degree the
	// number of typed links.
	Access, Positive, Negative, Degree []float32

	// changes records the rows written in place since they were
	// appended, for backends that keep a copy (Changed).
	changes changeLog
}

// changeLog is the rows a Batch's writer changed in place, in order,
// each with its sequence number: entry k is change first+k. It keeps at
// least the last maxChanges entries (at most twice that); a reader further
// behind copies everything.
type changeLog struct {
	rows  []int
	first uint64
}

// maxChanges bounds the change log: a copy this far behind is better
// refreshed whole.
const maxChanges = 1 << 16

// Changed records that the rows' vectors or metadata were written in
// place. Appended rows need no record: a backend that keeps a copy of the
// batch on a device (package cuda) sees them by the batch's length, and
// the rows recorded here by ChangedSince. Like every write to a Batch it
// must not run concurrently with a read.
func (b *Batch) Changed(rows ...int) {
	l := &b.changes
	l.rows = append(l.rows, rows...)
	// Trimmed in halves, so that a long run of changes (a snapshot's
	// load) costs O(1) each.
	if over := len(l.rows) - maxChanges; over > maxChanges {
		l.rows = append(l.rows[:0], l.rows[over:]...)
		l.first += uint64(over)
	}
}

// ChangedSince returns the rows changed in place since sequence number
// seq (0 for ever) and the sequence number to ask from next time. A row
// may appear more than once. complete is false when the log no longer
// reaches back to seq (after Reset, or after more than 65536 changes): the
// caller must then refresh every row.
func (b *Batch) ChangedSince(seq uint64) (rows []int, next uint64, complete bool) {
	l := &b.changes
	next = l.first + uint64(len(l.rows))
	if seq < l.first || seq > next {
		return nil, next, false
	}
	return l.rows[seq-l.first:], next, true
}

// NewBatch returns an empty batch of dimension dim with room for capacity
// candidates.
func NewBatch(dim, capacity int) (*Batch, error) {
	if dim <= 0 || dim > 1<<16 {
		return nil, fmt.Errorf("%w: batch dimension %d, want 1…65536", ErrInvalid, dim)
	}
	if capacity < 0 || capacity > 1<<34/dim {
		return nil, fmt.Errorf("%w: batch capacity %d for dimension %d", ErrInvalid, capacity, dim)
	}
	b := &Batch{Dim: dim}
	b.Vectors = make([]float32, 0, dim*capacity)
	b.ID = make([]uint64, 0, capacity)
	b.Kind = make([]temporal.Kind, 0, capacity)
	b.Status = make([]temporal.Status, 0, capacity)
	b.Group = make([]uint32, 0, capacity)
	for _, c := range b.floatColumns() {
		*c = make([]float32, 0, capacity)
	}
	return b, nil
}

func (b *Batch) floatColumns() [13]*[]float32 {
	return [...]*[]float32{&b.Created, &b.ValidFrom, &b.ValidTo, &b.RecordedAt, &b.RetiredAt,
		&b.Lambda, &b.Floor, &b.BaseConf, &b.ConfFrom, &b.Access, &b.Positive, &b.Negative, &b.Degree}
}

// prefetchColumns asks the CPU to load the metadata of rows [lo, hi)
// (lo < hi ≤ Len) that the epilogue reads.
func (b *Batch) prefetchColumns(lo, hi int) {
	f32 := (hi - lo + 15) / 16
	for _, c := range b.floatColumns() {
		prefetch.Lines(unsafe.Pointer(&(*c)[lo]), f32)
	}
	small := (hi - lo + 63) / 64
	prefetch.Lines(unsafe.Pointer(&b.Kind[lo]), small)
	prefetch.Lines(unsafe.Pointer(&b.Status[lo]), small)
	prefetch.Lines(unsafe.Pointer(&b.Group[lo]), f32)
}

// Prefetch asks the CPU to load the metadata of the given rows (each
// < Len), every column RescoreRows reads, without waiting for it: a
// caller issues it for scattered rows, then computes their cosines while
// the cache lines arrive. It changes nothing.
func (b *Batch) Prefetch(rows []uint32) {
	if len(rows) == 0 {
		return
	}
	prefetch.Rows(unsafe.Pointer(unsafe.SliceData(b.ID)), unsafe.Sizeof(b.ID[0]), rows, 1)
	prefetch.Rows(unsafe.Pointer(unsafe.SliceData(b.Kind)), unsafe.Sizeof(b.Kind[0]), rows, 1)
	prefetch.Rows(unsafe.Pointer(unsafe.SliceData(b.Status)), unsafe.Sizeof(b.Status[0]), rows, 1)
	prefetch.Rows(unsafe.Pointer(unsafe.SliceData(b.Group)), unsafe.Sizeof(b.Group[0]), rows, 1)
	for _, c := range b.floatColumns() {
		prefetch.Rows(unsafe.Pointer(unsafe.SliceData(*c)), 4, rows, 1)
	}
}

// Len returns the number of candidates.
func (b *Batch) Len() int { return len(b.ID) }

// Grow makes room for n more candidates in every column, so that
// appending them copies nothing (a snapshot's rows, a Put's batch).
func (b *Batch) Grow(n int) {
	if n <= 0 {
		return
	}
	b.Vectors = slices.Grow(b.Vectors, n*b.Dim)
	b.ID, b.Kind, b.Status, b.Group = slices.Grow(b.ID, n), slices.Grow(b.Kind, n), slices.Grow(b.Status, n), slices.Grow(b.Group, n)
	for _, c := range b.floatColumns() {
		*c = slices.Grow(*c, n)
	}
}

// Reset empties the batch, keeping its memory; a reader of ChangedSince
// is told to refresh everything.
func (b *Batch) Reset() {
	b.changes.first += uint64(len(b.changes.rows)) + 1
	b.changes.rows = b.changes.rows[:0]
	b.Vectors = b.Vectors[:0]
	b.ID, b.Kind, b.Status, b.Group = b.ID[:0], b.Kind[:0], b.Status[:0], b.Group[:0]
	for _, c := range b.floatColumns() {
		*c = (*c)[:0]
	}
}

// Append validates one candidate, normalises a copy of its vector and adds
// it. c.Sim is ignored; c.HalfLife becomes the Lambda column (ln 2 /
// half-life; 0 for "never decays"); c.Lambda is ignored in favour of the
// drift group's λ at query time. Nothing is added when an error is
// returned.
func (b *Batch) Append(vec []float32, c temporal.Candidate, group uint32) error {
	if len(vec) != b.Dim {
		return fmt.Errorf("%w: candidate %d has dimension %d, batch has %d", ErrDimension, c.ID, len(vec), b.Dim)
	}
	c.Sim = 0
	if err := checkMeta(&c); err != nil {
		return err
	}
	start := len(b.Vectors)
	b.Vectors = append(b.Vectors, vec...)
	if p, _ := unitvec.Normalize(vec, b.Vectors[start:]); p != unitvec.OK {
		b.Vectors = b.Vectors[:start]
		return normalized(vec, make([]float32, len(vec)), fmt.Sprintf("candidate %d", c.ID)) // the error, worded
	}
	b.appendColumns(c, group)
	return nil
}

// appendMeta adds one candidate's metadata without a vector (for a batch
// whose similarities are computed elsewhere).
func (b *Batch) appendMeta(c temporal.Candidate, group uint32) error {
	c.Sim = 0
	if err := checkMeta(&c); err != nil {
		return err
	}
	b.appendColumns(c, group)
	return nil
}

// checkMeta validates a candidate's metadata, including that every value
// survives the conversion to the float32 columns (a finite float64 such as
// the λ of a 1e-40-day half-life must not become ±Inf).
func checkMeta(c *temporal.Candidate) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"CreatedAt", c.CreatedAt}, {"Lambda (ln 2 / HalfLife)", temporal.Lambda(c.HalfLife)},
		{"BaseConfidence", c.BaseConfidence}, {"ConfidenceFrom", c.ConfidenceFrom}, {"Access", c.Access},
		{"Positive", c.Positive}, {"Negative", c.Negative}, {"Degree", c.Degree},
		{"Valid.From", c.Valid.From}, {"Valid.To", c.Valid.To}, {"Recorded.From", c.Recorded.From}, {"Recorded.To", c.Recorded.To},
	} {
		if !math.IsInf(f.v, 0) && math.IsInf(float64(float32(f.v)), 0) {
			return fmt.Errorf("%w: candidate %d: %s = %v overflows float32", ErrInvalid, c.ID, f.name, f.v)
		}
	}
	return nil
}

func (b *Batch) appendColumns(c temporal.Candidate, group uint32) {
	b.ID = append(b.ID, c.ID)
	b.Kind = append(b.Kind, c.Kind)
	b.Status = append(b.Status, c.Status)
	b.Group = append(b.Group, group)
	vals := [...]float64{c.CreatedAt, c.Valid.From, c.Valid.To, c.Recorded.From, c.Recorded.To,
		temporal.Lambda(c.HalfLife), c.Floor, c.BaseConfidence, c.ConfidenceFrom,
		c.Access, c.Positive, c.Negative, c.Degree}
	for i, col := range b.floatColumns() {
		*col = append(*col, float32(vals[i]))
	}
}

// checkShape checks that every column has Len() entries and the vectors
// Len()·Dim: the O(1) check every backend call makes.
func (b *Batch) checkShape() error {
	n := len(b.ID)
	if b.Dim <= 0 {
		return fmt.Errorf("%w: batch dimension %d", ErrInvalid, b.Dim)
	}
	if len(b.Vectors) != n*b.Dim {
		return fmt.Errorf("%w: %d vector values for %d candidates of dimension %d", ErrInvalid, len(b.Vectors), n, b.Dim)
	}
	return b.checkMetaShape()
}

// checkMetaShape checks that every metadata column has Len() entries.
func (b *Batch) checkMetaShape() error {
	n := len(b.ID)
	if len(b.Kind) != n || len(b.Status) != n || len(b.Group) != n {
		return fmt.Errorf("%w: kind/status/group columns have %d/%d/%d entries, want %d", ErrInvalid, len(b.Kind), len(b.Status), len(b.Group), n)
	}
	for i, c := range b.floatColumns() {
		if len(*c) != n {
			return fmt.Errorf("%w: float column %d has %d entries, want %d", ErrInvalid, i, len(*c), n)
		}
	}
	return nil
}

// Validate checks the shape and every value: unit vectors of finite
// values, finite times (window bounds may be ±Inf, never NaN), Floor in
// [0, 1], Lambda ≥ 0 and finite, non-negative finite counters, kinds and
// statuses in range. A batch built with Append is valid; one whose columns
// were filled directly must pass Validate before it is scored — the
// backends check only its shape on each call, and out-of-range values give
// unspecified (possibly NaN) scores.
func (b *Batch) Validate() error {
	if err := b.checkShape(); err != nil {
		return err
	}
	for i := 0; i < b.Len(); i++ {
		var ss float64
		for _, x := range b.Vectors[i*b.Dim : (i+1)*b.Dim] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("%w: candidate %d: vector value %v", ErrNotFinite, b.ID[i], x)
			}
			ss += float64(x) * float64(x)
		}
		if math.Abs(ss-1) > 1e-3 {
			return fmt.Errorf("%w: candidate %d: vector norm² %v, want 1 (normalise, or use Append)", ErrInvalid, b.ID[i], ss)
		}
		c := b.Candidate(i, 0, 0)
		if err := c.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		if l := float64(b.Lambda[i]); !(l >= 0) || math.IsInf(l, 0) {
			return fmt.Errorf("%w: candidate %d: Lambda %v", ErrInvalid, b.ID[i], l)
		}
	}
	return nil
}

// gather appends rows of src (metadata only, no vectors) to b, as
// stored.
func (b *Batch) gather(src *Batch, rows []int) {
	for _, i := range rows {
		b.ID = append(b.ID, src.ID[i])
		b.Kind = append(b.Kind, src.Kind[i])
		b.Status = append(b.Status, src.Status[i])
		b.Group = append(b.Group, src.Group[i])
	}
	dst, from := b.floatColumns(), src.floatColumns()
	for k, c := range dst {
		col := *from[k]
		for _, i := range rows {
			*c = append(*c, col[i])
		}
	}
}

// Candidate returns row i as a temporal.Candidate with the given similarity
// and drift λ: the reference view of the row, exact in float64.
func (b *Batch) Candidate(i int, sim float64, lambda float64) temporal.Candidate {
	f := func(c []float32) float64 { return float64(c[i]) }
	hl := 0.0
	if b.Lambda[i] > 0 {
		hl = math.Ln2 / f(b.Lambda)
	}
	return temporal.Candidate{
		ID: b.ID[i], Sim: sim, Kind: b.Kind[i], Status: b.Status[i], CreatedAt: f(b.Created),
		Valid:    temporal.Window{From: f(b.ValidFrom), To: f(b.ValidTo)},
		Recorded: temporal.Window{From: f(b.RecordedAt), To: f(b.RetiredAt)},
		HalfLife: hl, Floor: f(b.Floor), Lambda: lambda,
		BaseConfidence: f(b.BaseConf), ConfidenceFrom: f(b.ConfFrom),
		Access: f(b.Access), Positive: f(b.Positive), Negative: f(b.Negative), Degree: f(b.Degree),
	}
}
