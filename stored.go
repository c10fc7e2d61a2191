package tidemark

import (
	"slices"
	"time"

	"github.com/tidemark/tidemark/internal/wire"
	"github.com/tidemark/tidemark/temporal"
)

// stored is the caller's fields of a memory as its row keeps them: the
// ones every memory has inline (48 bytes), the rest behind one pointer
// that every row without any of them shares. A row held the whole public
// Memory before (552 bytes, most of them zero: engine-filled fields the
// row keeps in its own columns, and caller fields most memories never
// set), which was over half of the Go heap per memory at 100k.
//
// The rest's fields are promoted, so reads look like a Memory's
// (r.mem.Subject); writes go through own, never through the shared zero.
type stored struct {
	ID, Text string
	Kind     temporal.Kind
	Source   temporal.Source
	embedded bool
	*storedRest
}

// storedRest is the caller's fields most memories leave zero.
type storedRest struct {
	Profile, DocID             string
	Version, Chunk, Start, End int
	Subject, Relation, Object  string
	DependsOn                  []string
	Access, Positive, Negative int64
	ValidFrom, ValidTo         time.Time
	RecordedAt, Created        time.Time
	KeyRule, KeyFrom           string
	keyFromObject              string
	SplitInto                  []string
	SplitFrom, SplitRule       string
	// metaJSON is the memory's Metadata as canonical JSON; meta the same
	// decoded once, for filters.
	metaJSON string
	meta     Metadata
}

// noRest is the rest of every memory that sets none of it; nothing writes
// it (own copies it first).
var noRest storedRest

// isZero reports whether every field of the rest is zero.
func (s *storedRest) isZero() bool {
	return s.Profile == "" && s.DocID == "" && s.Version == 0 && s.Chunk == 0 && s.Start == 0 && s.End == 0 &&
		s.Subject == "" && s.Relation == "" && s.Object == "" && s.DependsOn == nil &&
		s.Access == 0 && s.Positive == 0 && s.Negative == 0 &&
		s.ValidFrom.IsZero() && s.ValidTo.IsZero() && s.RecordedAt.IsZero() && s.Created.IsZero() &&
		s.KeyRule == "" && s.KeyFrom == "" && s.keyFromObject == "" &&
		s.SplitInto == nil && s.SplitFrom == "" && s.SplitRule == "" && s.metaJSON == ""
}

// storeFields keeps m's caller fields (not its vector, not the engine's).
func storeFields(m *Memory) stored {
	// Built here and copied to the heap only when some field is set: most
	// memories share noRest, and an allocation per memory that is then
	// dropped was 340 MB of garbage for a million memories read at Open.
	rest := storedRest{
		Profile: m.Profile, DocID: m.DocID,
		Version: m.Version, Chunk: m.Chunk, Start: m.Start, End: m.End,
		Subject: m.Subject, Relation: m.Relation, Object: m.Object,
		DependsOn: slices.Clip(m.DependsOn),
		Access:    m.Access, Positive: m.Positive, Negative: m.Negative,
		ValidFrom: m.ValidFrom, ValidTo: m.ValidTo, RecordedAt: m.RecordedAt, Created: m.Created,
		KeyRule: m.KeyRule, KeyFrom: m.KeyFrom, keyFromObject: m.keyFromObject,
		SplitInto: slices.Clip(m.SplitInto), SplitFrom: m.SplitFrom, SplitRule: m.SplitRule,
		metaJSON: m.metaJSON, meta: m.Metadata,
	}
	p := &noRest
	if !rest.isZero() {
		p = new(storedRest)
		*p = rest
	}
	return stored{ID: m.ID, Text: m.Text, Kind: m.Kind, Source: m.Source, embedded: m.embedded, storedRest: p}
}

// own returns the rest for writing, first copying the shared zero.
func (s *stored) own() *storedRest {
	if s.storedRest == &noRest {
		s.storedRest = new(storedRest)
	}
	return s.storedRest
}

// memory returns the caller's fields as a Memory (DependsOn a copy; no
// vector, no engine fields).
func (s *stored) memory() Memory {
	r := s.storedRest
	return Memory{
		ID: s.ID, Text: s.Text, Kind: s.Kind, Source: s.Source, embedded: s.embedded,
		Profile: r.Profile, DocID: r.DocID,
		Version: r.Version, Chunk: r.Chunk, Start: r.Start, End: r.End,
		Subject: r.Subject, Relation: r.Relation, Object: r.Object,
		DependsOn: slices.Clone(r.DependsOn),
		Access:    r.Access, Positive: r.Positive, Negative: r.Negative,
		ValidFrom: r.ValidFrom, ValidTo: r.ValidTo, RecordedAt: r.RecordedAt, Created: r.Created,
		KeyRule: r.KeyRule, KeyFrom: r.KeyFrom, keyFromObject: r.keyFromObject,
		SplitInto: slices.Clone(r.SplitInto), SplitFrom: r.SplitFrom, SplitRule: r.SplitRule,
		Metadata: cloneMetadata(r.meta), metaJSON: r.metaJSON,
	}
}

// encode writes what Memory.encode writes for memory().
func (s *stored) encode(w *wire.Writer) {
	m := s.memory()
	m.encode(w)
}
