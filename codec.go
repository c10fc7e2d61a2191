package tidemark

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/internal/wire"
	"github.com/tidemark/tidemark/simd"
	"github.com/tidemark/tidemark/temporal"
)

// The engine's two binary formats, each encoder next to its decoder: the
// log record (what the write-ahead log holds, one record per write) and
// the snapshot body (what store's checksummed snapshot file holds). Both
// are built of internal/wire's values: uvarint and zig-zag varint
// integers, a string as a uvarint length and its bytes, float64 as 8
// little-endian bytes, a float32 slice as its length and 4 bytes a value,
// a time as seconds and nanoseconds (the zero time as one byte), a bool
// as one byte. A decoder never panics on hostile bytes (FuzzDecodeRecord,
// FuzzSnapshotBody): counts are bounded by the bytes left and every value
// by its limit.
//
// # Log record (format 4)
//
//	byte     format version (1 to 4)
//	byte     type: 1 create, 2 drop, 3 put, 4 feedback, 5 consolidate,
//	         6 access, 7 document version, 8 retraction (format 4)
//	string   collection name
//	uvarint  the collection's incarnation (the sequence number of its
//	         create record; 0 in a create record)
//	time     transaction time (the DB clock when logged)
//	then by type:
//	  create       collection options (collOpts)
//	  drop         nothing
//	  put          uvarint n, n × memory
//	  document     uvarint n, n × memory; the replaced chunk ids and the
//	               later chunk ids (each uvarint n, n × string); varint
//	               the later chunks' offset shift
//	  feedback     string memory id, string source, varint positive,
//	               varint negative
//	  retraction   string memory id, string who retracted, bool purge
//	  access       uvarint n, n × (uvarint row, uvarint count)
//	  consolidate  uvarint n, n × uvarint ripple seed row; uvarint m,
//	               m × edit (byte rule, uvarint row, varint other row or
//	               value, float64 value)
//
// collOpts: uvarint dim, byte method, float64 half-life, time epoch,
// string embedder, uvarint × 9 (exact threshold, overfetch, M,
// efConstruction, ef, expand hops, expand budget, feedback per day,
// feedback per source), bool static decay, then (format 2) byte key
// policy and the remote embedder's base URL, model and API-key variable
// name (strings).
//
// memory: the caller's fields — string id, string text, float32s vector,
// byte kind, byte source, string profile, string doc id, varint version,
// chunk, start and end, strings subject, relation and object, uvarint n
// and n × string depends_on, varint access, positive and negative, times
// valid from, valid to, recorded at and created — then (format 2) the key
// the engine derived: string key rule, string key-from id, string the
// adopted object, bool embedded (the vector came from the embedder);
// (format 3) uvarint n and n × string split into, strings split from and
// split rule; (format 4) uvarint the expected revision, string the
// metadata as canonical JSON ("" for none).
//
// # Snapshot body (format 7)
//
//	uvarint  format version (1 to 7)
//	float64  the DB's last transaction time (days)
//	uvarint  number of collections, then for each, in name order:
//	  frame  header: string name, uvarint incarnation, collOpts (defaults
//	         filled in), float64 last transaction time, uvarint rows
//	  frame  one per row (snapRow): the memory, its unit vector, the
//	         content hash, the derived times, flags, beliefs, links,
//	         aliases, penalty and counters, the retraction (format 7)
//	  frame  the rest of the ledger (snapTail): pending depends_on
//	         targets, dependency pairs, ripple seeds, the audit, the
//	         feedback limits, the fact chains and the document chains
//	  frame  (format 5 on) the drift state (snapDrift): the cluster
//	         anchors, the kernel groups, each row's kernel group, and
//	         each drift group's detector, last reading and history
//	  frame  (formats 1 and 2 only) the link graph, skipped: it is
//	         derived from the rows
//	  the surface HNSW, then the archive HNSW: the graphs without their
//	         vectors (index.HNSW.SaveGraph; formats 1 to 3: with them,
//	         index.HNSW.Save), which load takes from the rows; their
//	         int8 codes are made again on load (index.HNSW.Quantize)
//
// A frame is a uvarint length and that many bytes. The HNSW indexes are
// derived data: Open checks them against the ledger and rebuilds them
// when they disagree; the link graph is always rebuilt; the drift
// detectors are restored from snapDrift (from a snapshot of format 4 or
// older, rebuilt by feeding every row to them again in order). Memories and
// options in a snapshot use the log record's format of the same era:
// record format 1 in snapshot format 1, 2 in 2 to 5.

// ---- log record ----

// The log record.

type recType byte

const (
	recCreate recType = iota + 1
	recDrop
	recPut
	recFeedback
	recConsolidate
	recAccess
	recPutDoc
	recRetract
)

type record struct {
	typ  recType
	coll string
	// inc is the incarnation of the collection the record is for (the
	// sequence number of its create record): a record written through a
	// handle of a dropped collection never lands in a new one of the same
	// name.
	inc                uint64
	tx                 time.Time
	opts               CollectionOptions // recCreate
	mems               []Memory          // recPut
	id, source         string            // recFeedback
	positive, negative int64
	access             []accessCount // recAccess
	replaced, later    []string      // recPutDoc (with mems)
	shift              int
	edits              []edit // recConsolidate
	seeds              []int
	purge              bool // recRetract (with id, and source: who retracted)
}

// recordVersion is the log record format: 2 adds the derived fact key of
// a memory (Memory.KeyRule, KeyFrom) and a collection's key policy and
// remote embedder; 3 adds splits (Memory.SplitInto, SplitFrom,
// SplitRule; the sibling memories a consolidation run creates; a
// collection's split policy); 4 adds the retraction record and a
// memory's expected revision (Memory.IfRevision). Versions 1 to 3 are
// still read:
// version 1 collections key explicitly and their "hashing" embedder is
// "hashing-words".
const recordVersion = 4

func (r *record) encode() []byte { return r.encodeTo(nil) }

// encodeTo appends the record's encoding to buf.
func (r *record) encodeTo(buf []byte) []byte {
	w := wire.Writer{B: buf}
	w.Byte(recordVersion)
	w.Byte(byte(r.typ))
	w.String(r.coll)
	w.Uvarint(r.inc)
	w.Time(r.tx)
	switch r.typ {
	case recCreate:
		encodeCollOpts(&w, &r.opts)
	case recPut, recPutDoc:
		// Room for the vectors and texts up front: grown one memory at a
		// time, a batch of 1000 768-d vectors would copy its 3 MB about
		// thirty times.
		size := 0
		for i := range r.mems {
			size += memoryBytes(&r.mems[i], len(r.mems[i].Vector))
		}
		w.B = slices.Grow(w.B, size)
		w.Uvarint(uint64(len(r.mems)))
		for i := range r.mems {
			r.mems[i].encode(&w)
		}
		if r.typ == recPutDoc {
			encodeReplaced(&w, r.replaced)
			encodeReplaced(&w, r.later)
			w.Varint(int64(r.shift))
		}
	case recFeedback:
		w.String(r.id)
		w.String(r.source)
		w.Varint(r.positive)
		w.Varint(r.negative)
	case recRetract:
		w.String(r.id)
		w.String(r.source)
		w.Bool(r.purge)
	case recAccess:
		w.Uvarint(uint64(len(r.access)))
		for _, a := range r.access {
			w.Uvarint(uint64(a.row))
			w.Uvarint(uint64(a.n))
		}
	case recConsolidate:
		encodeEdits(&w, r.edits, r.seeds)
		w.Uvarint(uint64(len(r.mems)))
		for i := range r.mems {
			r.mems[i].encode(&w)
		}
	}
	return w.B
}

func decodeRecord(b []byte) (*record, error) {
	rd := wire.NewReader(b)
	v := rd.Byte()
	if (v < 1 || v > recordVersion) && rd.Err() == nil {
		return nil, fmt.Errorf("record version %d, this build reads 1…%d", v, recordVersion)
	}
	r := &record{typ: recType(rd.Byte())}
	r.coll = rd.String(MaxIDBytes)
	r.inc = rd.Uvarint()
	r.tx = rd.Time()
	switch r.typ {
	case recCreate:
		r.opts = decodeCollOpts(rd, v)
	case recDrop:
	case recPut, recPutDoc:
		n := rd.Count(1<<30, 8)
		r.mems = make([]Memory, 0, n)
		for range n {
			r.mems = append(r.mems, decodeMemory(rd, v))
		}
		if r.typ == recPutDoc {
			r.replaced = decodeReplaced(rd)
			r.later = decodeReplaced(rd)
			r.shift = int(rd.Int(-maxDocBytes, maxDocBytes))
		}
	case recFeedback:
		r.id = rd.String(MaxIDBytes)
		r.source = rd.String(MaxIDBytes)
		r.positive = rd.Int(0, MaxCounter)
		r.negative = rd.Int(0, MaxCounter)
	case recRetract:
		if v < 4 {
			rd.Fail(fmt.Errorf("a retraction in a record of format %d", v))
		}
		r.id = rd.String(MaxIDBytes)
		r.source = rd.String(MaxIDBytes)
		r.purge = rd.Bool()
	case recConsolidate:
		r.edits, r.seeds = decodeEdits(rd)
		if v >= 3 {
			n := rd.Count(1<<30, 8)
			for range n {
				r.mems = append(r.mems, decodeMemory(rd, v))
			}
		}
	case recAccess:
		n := rd.Count(1<<30, 2)
		for range n {
			r.access = append(r.access, accessCount{row: int(rd.Int64Max(1 << 40)), n: int(rd.Int64Max(MaxCounter))})
		}
	default:
		rd.Fail(fmt.Errorf("unknown record type %d", r.typ))
	}
	if rd.Err() == nil && rd.Len() != 0 {
		rd.Fail(fmt.Errorf("%d trailing bytes", rd.Len()))
	}
	return r, rd.Err()
}

// collOpts

func encodeCollOpts(w *wire.Writer, o *CollectionOptions) {
	w.Uvarint(uint64(o.Dim))
	w.Byte(byte(o.Method))
	w.Float64(o.HalfLife)
	w.Time(o.Epoch)
	w.String(o.Embedder)
	for _, x := range []int{o.ExactThreshold, o.Overfetch, o.M, o.EfConstruction, o.Ef, o.ExpandHops, o.ExpandBudget, o.FeedbackPerDay, o.FeedbackPerSource} {
		w.Uvarint(uint64(x))
	}
	w.Bool(o.StaticDecay)
	w.Byte(byte(o.Split))
	w.String(o.Planner.BaseURL)
	w.String(o.Planner.Model)
	w.String(o.Planner.APIKeyEnv)
	w.Float64(o.Planner.Threshold)
	w.Uvarint(uint64(o.Planner.MaxTargets))
	w.Varint(int64(o.Planner.Timeout))
	w.Byte(byte(o.Keys))
	w.String(o.Remote.BaseURL)
	w.String(o.Remote.Model)
	w.String(o.Remote.APIKeyEnv)
}

// decodeCollOpts reads what encodeCollOpts wrote in format version v.
func decodeCollOpts(r *wire.Reader, v byte) CollectionOptions {
	var o CollectionOptions
	o.Dim = r.Count(MaxDim, 0)
	o.Method = temporal.Method(r.Byte())
	o.HalfLife = r.Float64()
	o.Epoch = r.Time()
	o.Embedder = r.String(64)
	for _, p := range []*int{&o.ExactThreshold, &o.Overfetch, &o.M, &o.EfConstruction, &o.Ef, &o.ExpandHops, &o.ExpandBudget, &o.FeedbackPerDay, &o.FeedbackPerSource} {
		*p = r.Count(1<<30, 0)
	}
	o.StaticDecay = r.Bool()
	if v >= 3 {
		o.Split = SplitPolicy(r.Byte())
		o.Planner.BaseURL = r.String(2048)
		o.Planner.Model = r.String(256)
		o.Planner.APIKeyEnv = r.String(256)
		o.Planner.Threshold = r.Float64()
		o.Planner.MaxTargets = r.Count(1<<20, 0)
		o.Planner.Timeout = time.Duration(r.Int(0, int64(time.Hour)))
	}
	if v >= 2 {
		o.Keys = KeyPolicy(r.Byte())
		o.Remote.BaseURL = r.String(2048)
		o.Remote.Model = r.String(256)
		o.Remote.APIKeyEnv = r.String(256)
	} else {
		o.Keys = KeysExplicit
		if o.Embedder == "hashing" {
			o.Embedder = "hashing-words"
		}
	}
	if r.Err() == nil {
		if err := o.Validate(); err != nil {
			r.Fail(err)
		}
	}
	return o
}

// memory

// encode writes the caller's fields, the key the engine derived at Put,
// the split, the expected revision and the metadata as canonical JSON
// (record format 4; format 1 had no derived key, 2 no split, 3 no
// revision or metadata).
func (m *Memory) encode(w *wire.Writer) {
	m.encodeCaller(w)
	w.String(m.KeyRule)
	w.String(m.KeyFrom)
	w.String(m.keyFromObject)
	w.Bool(m.embedded)
	w.Uvarint(uint64(len(m.SplitInto)))
	for _, id := range m.SplitInto {
		w.String(id)
	}
	w.String(m.SplitFrom)
	w.String(m.SplitRule)
	w.Uvarint(uint64(m.IfRevision))
	w.String(m.metaJSON)
}

// encodeCaller writes the caller's fields (not the engine's): the whole
// memory of format version 1.
func (m *Memory) encodeCaller(w *wire.Writer) {
	w.String(m.ID)
	w.String(m.Text)
	w.Float32s(m.Vector)
	w.Byte(byte(m.Kind))
	w.Byte(byte(m.Source))
	w.String(m.Profile)
	w.String(m.DocID)
	w.Varint(int64(m.Version))
	w.Varint(int64(m.Chunk))
	w.Varint(int64(m.Start))
	w.Varint(int64(m.End))
	w.String(m.Subject)
	w.String(m.Relation)
	w.String(m.Object)
	w.Uvarint(uint64(len(m.DependsOn)))
	for _, d := range m.DependsOn {
		w.String(d)
	}
	w.Varint(m.Access)
	w.Varint(m.Positive)
	w.Varint(m.Negative)
	w.Time(m.ValidFrom)
	w.Time(m.ValidTo)
	w.Time(m.RecordedAt)
	w.Time(m.Created)
}

// decodeMemory reads what encode wrote in format version v.
func decodeMemory(r *wire.Reader, v byte) Memory {
	var m Memory
	m.ID = r.String(MaxIDBytes)
	m.Text = r.String(math.MaxInt32)
	m.Vector = r.Float32s(MaxDim, nil)
	m.Kind = temporal.Kind(r.Byte())
	m.Source = temporal.Source(r.Byte())
	m.Profile = r.String(MaxKeyBytes)
	m.DocID = r.String(MaxKeyBytes)
	m.Version = int(r.Int(0, math.MaxInt32))
	m.Chunk = int(r.Int(0, math.MaxInt32))
	m.Start = int(r.Int(0, math.MaxInt64))
	m.End = int(r.Int(0, math.MaxInt64))
	m.Subject = r.String(MaxKeyBytes)
	m.Relation = r.String(MaxKeyBytes)
	m.Object = r.String(MaxKeyBytes)
	if n := r.Count(MaxDependsOn, 1); n > 0 {
		m.DependsOn = make([]string, n)
		for i := range m.DependsOn {
			m.DependsOn[i] = r.String(MaxIDBytes)
		}
	}
	m.Access = r.Int(0, MaxCounter)
	m.Positive = r.Int(0, MaxCounter)
	m.Negative = r.Int(0, MaxCounter)
	m.ValidFrom = r.Time()
	m.ValidTo = r.Time()
	m.RecordedAt = r.Time()
	m.Created = r.Time()
	if v >= 2 {
		m.KeyRule = r.String(MaxKeyBytes)
		m.KeyFrom = r.String(MaxIDBytes)
		m.keyFromObject = r.String(MaxKeyBytes)
		m.embedded = r.Bool()
	}
	if v >= 3 {
		if n := r.Count(maxSplit, 1); n > 0 {
			m.SplitInto = make([]string, n)
			for i := range m.SplitInto {
				m.SplitInto[i] = r.String(MaxIDBytes)
			}
		}
		m.SplitFrom = r.String(MaxIDBytes)
		m.SplitRule = r.String(64)
	}
	if v >= 4 {
		m.IfRevision = int(r.Int64Max(1 << 40))
		m.metaJSON = r.String(MaxMetadataBytes)
		if m.metaJSON != "" {
			if m.Metadata = parseMetadata(m.metaJSON); m.Metadata == nil {
				r.Fail(fmt.Errorf("metadata is not a JSON object"))
			}
		}
	}
	return m
}

// consolidation edits

func encodeEdits(w *wire.Writer, edits []edit, seeds []int) {
	w.Uvarint(uint64(len(seeds)))
	for _, sd := range seeds {
		w.Uvarint(uint64(sd))
	}
	w.Uvarint(uint64(len(edits)))
	for _, e := range edits {
		w.Byte(byte(e.rule))
		w.Uvarint(uint64(e.row))
		w.Varint(int64(e.other))
		w.Float64(e.value)
	}
}

func decodeEdits(r *wire.Reader) ([]edit, []int) {
	ns := r.Count(1<<30, 1)
	seeds := make([]int, 0, ns)
	for range ns {
		seeds = append(seeds, int(r.Int64Max(1<<40)))
	}
	n := r.Count(1<<30, 4)
	edits := make([]edit, 0, n)
	for range n {
		e := edit{rule: Rule(r.Byte()), row: int(r.Int64Max(1 << 40)), other: int(r.Int(-1, 1<<40)), value: r.Float64()}
		if r.Err() == nil && !e.valid(1<<40+1) {
			r.Fail(fmt.Errorf("invalid consolidation edit %+v", e))
		}
		edits = append(edits, e)
	}
	return edits, seeds
}

// document chunk ids

func encodeReplaced(w *wire.Writer, ids []string) {
	w.Uvarint(uint64(len(ids)))
	for _, id := range ids {
		w.String(id)
	}
}

func decodeReplaced(r *wire.Reader) []string {
	n := r.Count(1<<30, 1)
	out := make([]string, 0, n)
	for range n {
		out = append(out, r.String(MaxIDBytes))
	}
	return out
}

// ---- snapshot body ----

// snapshotVersion is the snapshot format; 2 stores memories and options
// as record version 2 does; 3 no longer stores the link graph, which is
// derived from the rows; 4 stores the HNSW indexes without their vectors
// (index.HNSW.SaveGraph), which the rows hold: each vector once; 5 stores
// the drift detectors' state (snapDrift) instead of replaying every row
// through them on load; 6 stores memories and options as record version
// 3 does (splits); 7 adds a row's retraction (two flags, who and when)
// and revision, an audit entry's By, and stores memories as record
// version 4 does. Versions 1 to 6 are still read.
const snapshotVersion = 7

// recordFormat is the record format of the memories and options in a
// snapshot of format v.
func recordFormat(v byte) byte {
	switch {
	case v < 2:
		return 1
	case v < 6:
		return 2
	case v < 7:
		return 3
	}
	return 4
}

// maxFrame bounds one frame of a snapshot (a row with a 1 GiB text).
const maxFrame = 1 << 31

// frameWriter writes snapshot frames to w: a uvarint length, then the
// frame's parts. Its header buffer lives with it (one allocation per
// snapshot, not one per frame, as a local passed to an io.Writer would).
type frameWriter struct {
	w   io.Writer
	hdr [binary.MaxVarintLen64]byte
}

func (fw *frameWriter) write(parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if _, err := fw.w.Write(fw.hdr[:binary.PutUvarint(fw.hdr[:], uint64(n))]); err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := fw.w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// writeState writes every collection (db.seq.mu held: no record is
// applied meanwhile) to w, which should buffer (the snapshot writer of
// package store does, and a staged upload's bufio.Writer): a frame is a
// few small writes.
func (db *DB) writeState(w io.Writer) error {
	var hw wire.Writer
	hw.Uvarint(snapshotVersion)
	hw.Float64(db.seq.lastTx)
	colls := db.snapshotColls()
	hw.Uvarint(uint64(len(colls)))
	if _, err := w.Write(hw.B); err != nil {
		return err
	}
	for _, c := range colls {
		if err := c.writeState(w); err != nil {
			return fmt.Errorf("collection %q: %w", c.name, err)
		}
	}
	return nil
}

// readState loads a snapshot body written by writeState, size bytes long.
func (db *DB) readState(in io.Reader, size int64) error {
	return db.readSource(streamSource{bufio.NewReaderSize(in, 1<<20)}, size)
}

// readSource loads a snapshot body from r (readState).
func (db *DB) readSource(r snapSource, size int64) error {
	v, err := binary.ReadUvarint(r)
	if err != nil || v < 1 || v > snapshotVersion {
		return fmt.Errorf("%w: snapshot format %d (err %v), this build reads 1…%d", ErrCorrupt, v, err, snapshotVersion)
	}
	var b8 [8]byte
	if _, err := io.ReadFull(r, b8[:]); err != nil {
		return fmt.Errorf("%w: snapshot header: %w", ErrCorrupt, err)
	}
	db.seq.lastTx = wire.NewReader(b8[:]).Float64()
	n, err := binary.ReadUvarint(r)
	if err != nil || n > 1<<20 {
		return fmt.Errorf("%w: snapshot collection count", ErrCorrupt)
	}
	for range n {
		c, rebuilt, err := db.readCollection(r, byte(v), size)
		if err != nil {
			return err
		}
		if _, dup := db.colls[c.name]; dup {
			return fmt.Errorf("%w: snapshot holds collection %q twice", ErrCorrupt, c.name)
		}
		db.colls[c.name] = c
		if rebuilt {
			db.info.IndexRebuilt = append(db.info.IndexRebuilt, c.name)
		}
	}
	// The end of the body, where a snapshot file's reader checks its CRC
	// (store.OpenSnapshot): everything above stands only if it holds.
	switch _, err := r.ReadByte(); {
	case err == io.EOF:
		return nil
	case err == nil:
		return fmt.Errorf("%w: trailing bytes after the snapshot's collections", ErrCorrupt)
	default:
		return fmt.Errorf("snapshot: %w", mapStoreErr(err))
	}
}

// writeState writes the collection's frames and indexes (snapRow,
// snapTail; c.mu held shared).
func (c *Collection) writeState(w io.Writer) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var f wire.Writer
	f.String(c.name)
	f.Uvarint(c.incarnation)
	encodeCollOpts(&f, &c.opts)
	f.Float64(c.lastTx)
	f.Uvarint(uint64(c.rows.len()))
	fw := &frameWriter{w: w}
	if err := fw.write(f.B); err != nil {
		return err
	}
	for j := range c.rows.len() {
		f.B = f.B[:0]
		// The vector's bytes go from the column store to w, not through
		// f.B (3 GB copied once less for a million 768-d rows).
		vec, split := c.encodeRow(&f, j)
		if err := fw.write(f.B[:split], vec, f.B[split:]); err != nil {
			return err
		}
	}
	f.B = f.B[:0]
	c.encodeTail(&f)
	if err := fw.write(f.B); err != nil {
		return err
	}
	f.B = f.B[:0]
	c.encodeDrift(&f)
	if err := fw.write(f.B); err != nil {
		return err
	}
	// The indexes without their vectors: the rows hold them.
	if err := c.surface.SaveGraph(w); err != nil {
		return err
	}
	return c.archive.SaveGraph(w)
}

// readCollection reads what writeState wrote in snapshot format v, and
// derives the rest: the maps, the link graph, and (when the saved ones
// disagree with the ledger) the HNSW indexes.
func (db *DB) readCollection(r snapSource, v byte, size int64) (c *Collection, rebuilt bool, err error) {
	buf, err := r.frame(nil)
	if err != nil {
		return nil, false, err
	}
	fr := wire.NewReader(buf)
	name := fr.String(MaxIDBytes)
	inc := fr.Uvarint()
	opts := decodeCollOpts(fr, recordFormat(v))
	lastTx := fr.Float64()
	nrows := fr.Count(1<<40, 0)
	if fr.Err() != nil {
		return nil, false, fmt.Errorf("%w: snapshot collection header: %w", ErrCorrupt, fr.Err())
	}
	c, err = newCollection(db, name, opts)
	if err != nil {
		return nil, false, fmt.Errorf("%w: snapshot collection %q: %w", ErrCorrupt, name, err)
	}
	c.lastTx, c.incarnation = lastTx, inc
	bad := func(what string, err error) error {
		return fmt.Errorf("%w: snapshot collection %q: %s: %w", ErrCorrupt, name, what, err)
	}
	if int64(nrows)*int64(opts.Dim)*4 <= size {
		// Every row's vector is in the body, so a count that fits it is
		// room worth taking up front: the column store is then filled
		// without growing (and copying) as the rows arrive.
		c.growColumns(nrows)
	}
	if err := c.decodeRows(r, v, nrows, bad); err != nil {
		return nil, false, err
	}
	if buf, err = r.frame(buf); err != nil {
		return nil, false, err
	}
	fr = wire.NewReader(buf)
	c.decodeTail(fr, v, nrows)
	if fr.Err() != nil {
		return nil, false, bad("dependencies", fr.Err())
	}
	if v >= 5 {
		if buf, err = r.frame(buf); err != nil {
			return nil, false, err
		}
		fr = wire.NewReader(buf)
		c.decodeDrift(fr)
		if fr.Err() != nil {
			return nil, false, bad("drift", fr.Err())
		}
	}
	c.nonFinite = nil
	if v < 3 {
		// Older snapshots stored the link graph; it is derived now.
		if _, err = r.frame(buf); err != nil {
			return nil, false, err
		}
	}
	// The ledger's maps and the link graph are derived from the rows
	// alone, while the HNSW graphs are read from the rest of the body: the
	// two are made at once (the graphs read the rows' vectors, the maps
	// write only their own fields of the rows: linkSplits a row's lists).
	derived := make(chan error, 1)
	go func() {
		if err := c.rebuildMaps(); err != nil {
			derived <- bad("ledger", err)
			return
		}
		var err error
		if c.links, err = c.buildLinks(); err != nil {
			err = bad("links", err)
		}
		derived <- err
	}()
	surface, archive, err := c.loadIndexes(r, v, bad)
	if derr := <-derived; derr != nil {
		return nil, false, derr
	}
	if err != nil {
		return nil, false, err
	}
	c.surface, c.archive = surface, archive
	if !c.indexesAgree() {
		if err := c.rebuildIndexes(); err != nil {
			return nil, false, bad("indexes", err)
		}
		rebuilt = true
	}
	return c, rebuilt, nil
}

// loadIndexes reads the surface and archive indexes that follow a
// collection's rows in a snapshot of format v.
func (c *Collection) loadIndexes(r io.Reader, v byte, bad func(string, error) error) (surface, archive *index.HNSW, err error) {
	// The int8 codes are derived from the vectors, not saved: both loaders
	// make them.
	load := func(r io.Reader) (*index.HNSW, error) {
		h, err := index.Load(r)
		if err == nil {
			h.Quantize()
		}
		return h, err
	}
	if v >= 4 {
		// The indexes were saved without their vectors: the rows hold them.
		// The codes are made as each vector is checked.
		load = func(r io.Reader) (*index.HNSW, error) {
			return index.LoadGraphQuantized(r, func(key uint64) []float32 {
				if key >= uint64(c.rows.len()) {
					return nil
				}
				return c.unitVector(int(key))
			})
		}
	}
	if surface, err = load(r); err != nil {
		return nil, nil, bad("surface index", err)
	}
	if archive, err = load(r); err != nil {
		return nil, nil, bad("archive index", err)
	}
	return surface, archive, nil
}

// encodeRow writes row j (snapRow): the memory (format 2), its unit
// vector, the content hash, float64 × 9 (recorded, effective valid-from,
// created, given valid-from and valid-to, access, positive, negative,
// degree), bools has-valid-from, superseded, visible, byte status, varint
// the superseding row (−1 when current), uvarint n and n × belief
// (float64 valid from, valid to, recorded from, recorded to), uvarint n
// and n × superseded row, uvarint n and n × (string alias, its content
// hash), float64 penalty, then three row lists (uvarint n, n × row):
// review, contradicts, contradicted by (format 2 on); then (format 7)
// bools retracted and purged, string retracted by, float64 retracted at,
// uvarint revision.
//
// The vector's own bytes are returned apart where they are the row's
// memory as it lies (wire.Writer.Float32sApart): the frame is then
// f.B[:split], vec, f.B[split:].
func (l *ledger) encodeRow(f *wire.Writer, j int) (vec []byte, split int) {
	r := l.rows.at(j)
	r.mem.encode(f)
	vec = f.Float32sApart(l.unitVector(j))
	split = len(f.B)
	f.B = append(f.B, r.hash[:]...)
	for _, x := range []float64{r.rec, r.effFrom, r.created, r.givenFrom, r.givenTo, r.access, r.positive, r.negative, r.degree} {
		f.Float64(x)
	}
	f.Bool(r.hasFrom)
	f.Bool(r.superseded)
	f.Bool(r.visible)
	f.Byte(byte(r.status))
	f.Varint(int64(r.supersededBy))
	f.Uvarint(uint64(len(r.stateList())))
	for _, s := range r.stateList() {
		f.Float64(s.valid.From)
		f.Float64(s.valid.To)
		f.Float64(s.recorded.From)
		f.Float64(s.recorded.To)
	}
	writeInts(f, r.supersedes)
	f.Uvarint(uint64(len(r.aliases)))
	for _, a := range r.aliases {
		f.String(a)
		h := l.aliasHash[a]
		f.B = append(f.B, h[:]...)
	}
	f.Float64(r.penalty)
	for _, xs := range [][]int{r.review, r.contradicts, r.contradictedBy} {
		writeInts(f, xs)
	}
	f.Bool(r.retracted)
	f.Bool(r.purged)
	f.String(r.retractedBy)
	f.Float64(r.retractedAt)
	f.Uvarint(uint64(r.revision))
	return vec, split
}

// parsedRow is a snapshot row decoded (parseRow) but not yet in the
// ledger (addRow). Its buffers are reused from row to row.
type parsedRow struct {
	rw     row
	num    rowNum              // rw's numbers until addRow copies them
	vec    []float32           // the row's vector, where parseRow put it
	buf    []float32           // where it goes when parseRow is given no slot
	hashes [][sha256.Size]byte // of rw's aliases, in order
	finite bool                // no NaN or infinity in vec
}

// parseRow reads what encodeRow wrote (format v) for a ledger of nrows
// rows into p, reading nothing of the ledger but its options, so that rows
// may be parsed concurrently (decodeRows); fr.Err says what is wrong. The
// vector is decoded into slot, the row's place in the column store, when
// one is given (its capacity the dimension: a longer vector goes
// elsewhere, and is refused).
func (l *ledger) parseRow(fr *wire.Reader, v byte, nrows int, p *parsedRow, slot []float32) {
	p.num = rowNum{}
	p.rw = row{rowNum: &p.num}
	rw := &p.rw
	m := decodeMemory(fr, recordFormat(v))
	rw.mem = storeFields(&m)
	dst := p.buf
	if slot != nil {
		dst = slot
	}
	vec := fr.Float32s(MaxDim, dst)
	if slot == nil && cap(vec) > cap(p.buf) {
		p.buf = vec
	}
	p.vec = vec
	copy(rw.hash[:], fr.Bytes0(sha256.Size))
	for _, x := range []*float64{&rw.rec, &rw.effFrom, &rw.created, &rw.givenFrom, &rw.givenTo, &rw.access, &rw.positive, &rw.negative, &rw.degree} {
		*x = fr.Float64()
	}
	rw.hasFrom, rw.superseded, rw.visible = fr.Bool(), fr.Bool(), fr.Bool()
	rw.status = temporal.Status(fr.Byte())
	rw.supersededBy = int(fr.Int(-1, int64(nrows)-1))
	ns := fr.Count(1<<20, 32)
	var ls rowLists
	for range ns {
		st := state{valid: temporal.Window{From: fr.Float64(), To: fr.Float64()},
			recorded: temporal.Window{From: fr.Float64(), To: fr.Float64()}}
		if ns == 1 {
			rw.setState(st)
		} else {
			ls.states = append(ls.states, st) // rowLists holds more than one
		}
	}
	ls.supersedes = readInts(fr, nrows)
	p.hashes = p.hashes[:0]
	for range fr.Count(1<<30, 1) {
		ls.aliases = append(ls.aliases, fr.String(MaxIDBytes))
		var h [sha256.Size]byte
		copy(h[:], fr.Bytes0(sha256.Size))
		p.hashes = append(p.hashes, h)
	}
	rw.penalty = fr.Float64()
	lists := []*[]int{&ls.review, &ls.contradicts, &ls.contradictedBy}
	if v < 2 {
		lists = lists[:2]
	}
	for _, x := range lists {
		*x = readInts(fr, nrows)
	}
	if v >= 7 {
		rw.retracted, rw.purged = fr.Bool(), fr.Bool()
		ls.retractedBy, ls.retractedAt = fr.String(MaxIDBytes), fr.Float64()
		ls.revision = int(fr.Int64Max(1 << 40))
	}
	if ls.states != nil || ls.supersedes != nil || ls.aliases != nil || ls.review != nil || ls.contradicts != nil || ls.contradictedBy != nil || rw.retracted || ls.revision != 0 {
		p := new(rowLists) // only then: &ls would put every row's on the heap
		*p = ls
		rw.rowLists = p
	}
	if fr.Err() == nil && (fr.Len() != 0 || len(vec) != l.opts.Dim || ns == 0) {
		fr.Fail(fmt.Errorf("%d trailing bytes, %d dimensions, %d beliefs", fr.Len(), len(vec), ns))
	}
	if fr.Err() != nil {
		return
	}
	rw.derive()
	p.finite = simd.Finite(vec)
}

// addRow appends a row parseRow read without error as row j of nrows,
// with its first belief's columns (the rest wait for addLaterBeliefs: the
// first belief of row j is then belief j, where parseRow may have put its
// vector already); before format 5, also its drift observation (in log
// order, so the detectors replay the same; format 5 reads their state
// from snapDrift, decodeDrift). It reports whether the row has more
// beliefs.
func (l *ledger) addRow(j, nrows int, v byte, p *parsedRow) (more bool) {
	rw := &p.rw
	if len(p.hashes) > 0 { // then rw has lists: its aliases
		for i, a := range rw.aliases {
			l.aliasHash[a] = p.hashes[i]
		}
	}
	if !p.finite {
		if l.nonFinite == nil {
			l.nonFinite = newBitmap(nrows)
		}
		l.nonFinite.add(j)
	}
	l.rows.add(*rw)
	if rw.mem.meta != nil {
		l.meta.set(j, rw.mem.meta)
	}
	l.appendBelief(j, p.vec, false)
	if v < 5 {
		l.observeDrift(j)
	}
	if rw.visible {
		l.visible++
	}
	if rw.purged {
		l.purgedRows++
	}
	return len(rw.stateList()) > 1
}

// addLaterBeliefs appends the beliefs after the first of each of rows
// (addRow), with their row's vector.
func (l *ledger) addLaterBeliefs(rows []int) {
	n := 0
	for _, j := range rows {
		n += len(l.rows.at(j).stateList()) - 1
	}
	l.growColumns(n) // once: the vectors are copied from where they lie
	for _, j := range rows {
		r := l.rows.at(j)
		for len(r.beliefList()) < len(r.stateList()) {
			l.appendBelief(j, l.unitVector(j), false)
		}
	}
}

// encodeTail writes the rest of the ledger (snapTail), each part sorted
// so that equal ledgers give equal bytes: uvarint n and n × (string
// pending depends_on target, row list); uvarint n and n × dependency pair
// (uvarint row, uvarint row); the ripple seeds (row list); uvarint n and
// n × audit entry (uvarint seq, time, byte rule, strings id and other,
// bytes from and to status, float64 penalty, strings reason and prefer,
// and from format 7 string by);
// uvarint n and n × feedback limit (uvarint row, string source, uvarint
// total, float64 window start, uvarint in window); uvarint n and n × fact
// chain (strings subject and relation, row list) and uvarint n and n ×
// document chain (string doc, uvarint chunk, row list), each chain in its
// live order (a row's place was decided when it was written; re-sorting
// on load could order differently, since a document supersession can
// move a row's valid-from afterwards).
func (l *ledger) encodeTail(f *wire.Writer) {
	pend := slices.Sorted(maps.Keys(l.pending))
	f.Uvarint(uint64(len(pend)))
	for _, id := range pend {
		f.String(id)
		writeInts(f, l.pending[id])
	}
	pairs := slices.SortedFunc(maps.Keys(l.deps), func(a, b [2]int) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	f.Uvarint(uint64(len(pairs)))
	for _, p := range pairs {
		f.Uvarint(uint64(p[0]))
		f.Uvarint(uint64(p[1]))
	}
	writeInts(f, l.rippleSeeds)
	f.Uvarint(uint64(len(l.audit)))
	for _, a := range l.audit {
		f.Uvarint(a.Seq)
		f.Time(a.Time)
		f.Byte(byte(a.Rule))
		f.String(a.ID)
		f.String(a.Other)
		f.Byte(byte(a.From))
		f.Byte(byte(a.To))
		f.Float64(a.Penalty)
		f.String(a.Reason)
		f.String(a.Prefer)
		f.String(a.By)
	}
	keys := l.sortedFeedback()
	f.Uvarint(uint64(len(keys)))
	for _, k := range keys {
		st := l.feedback[k]
		f.Uvarint(uint64(k.row))
		f.String(k.source)
		f.Uvarint(uint64(st.total))
		f.Float64(st.since)
		f.Uvarint(uint64(st.inDay))
	}
	keyChains := slices.SortedFunc(maps.Keys(l.byKey), func(a, b temporal.FactKey) int {
		return cmp.Or(cmp.Compare(a.Subject, b.Subject), cmp.Compare(a.Relation, b.Relation))
	})
	f.Uvarint(uint64(len(keyChains)))
	for _, k := range keyChains {
		f.String(k.Subject)
		f.String(k.Relation)
		writeInts(f, l.byKey[k])
	}
	docChains := slices.SortedFunc(maps.Keys(l.byDoc), func(a, b docChunk) int {
		return cmp.Or(cmp.Compare(a.doc, b.doc), cmp.Compare(a.chunk, b.chunk))
	})
	f.Uvarint(uint64(len(docChains)))
	for _, k := range docChains {
		f.String(k.doc)
		f.Uvarint(uint64(k.chunk))
		writeInts(f, l.byDoc[k])
	}
}

// decodeTail reads what encodeTail wrote (format v), for a ledger of
// nrows rows.
func (l *ledger) decodeTail(fr *wire.Reader, v byte, nrows int) {
	for range fr.Count(1<<30, 1) {
		id := fr.String(MaxIDBytes)
		l.pending[id] = readInts(fr, nrows)
	}
	for range fr.Count(1<<40, 2) {
		a, b := int(fr.Int64Max(int64(nrows)-1)), int(fr.Int64Max(int64(nrows)-1))
		l.deps[[2]int{a, b}] = true
	}
	l.rippleSeeds = readInts(fr, nrows)
	for range fr.Count(1<<40, 8) {
		a := AuditEntry{Seq: fr.Uvarint(), Time: fr.Time(), Rule: Rule(fr.Byte()), ID: fr.String(MaxIDBytes), Other: fr.String(MaxIDBytes),
			From: temporal.Status(fr.Byte()), To: temporal.Status(fr.Byte()), Penalty: fr.Float64(), Reason: fr.String(MaxIDBytes + 64),
			Prefer: fr.String(MaxIDBytes)}
		if v >= 7 {
			a.By = fr.String(MaxIDBytes)
		}
		l.audit = append(l.audit, a)
	}
	for range fr.Count(1<<40, 11) {
		k := fbKey{row: int(fr.Int64Max(int64(nrows) - 1)), source: fr.String(MaxIDBytes)}
		l.feedback[k] = fbState{total: int(fr.Int64Max(MaxCounter)), since: fr.Float64(), inDay: int(fr.Int64Max(MaxCounter))}
	}
	l.byKey, l.byDoc = map[temporal.FactKey][]int{}, map[docChunk][]int{}
	for range fr.Count(1<<40, 3) {
		k := temporal.FactKey{Subject: fr.String(MaxKeyBytes * 4), Relation: fr.String(MaxKeyBytes * 4)}
		l.byKey[k] = readInts(fr, nrows)
	}
	for range fr.Count(1<<40, 3) {
		k := docChunk{doc: fr.String(MaxKeyBytes), chunk: int(fr.Int64Max(1 << 31))}
		l.byDoc[k] = readInts(fr, nrows)
	}
}

// encodeDrift writes the drift state (snapDrift): uvarint n and n ×
// uvarint anchor row; uvarint n and n × kernel group (string drift group,
// float64 half-life), in index order; one uvarint kernel group per row,
// in row order (no count: there are as many as rows); uvarint n and n ×
// drift group in name order: string name, uvarint observations, the last
// reading (float64 distance, volatility, V0 and λ, bools calibrated and
// warm), uvarint n and n × history point (time, float64 λ, float64
// volatility), then its detector's state but the ring
// (temporal.DriftDetectorState): uvarint embeddings held, bool warm and
// if warm dim × float64 recent sum, dim × float64 archival sum and
// uvarint observations since they were exact; float64 volatility and V0,
// bool calibrated, uvarint n and n × float64 burn-in volatilities. The
// ring is not stored: it holds the unit vectors of the group's last
// (held) rows, which decodeDrift takes from the rows. The detectors'
// options are driftOpts and their dimension the collection's.
func (l *ledger) encodeDrift(f *wire.Writer) {
	writeInts(f, l.anchors)
	f.Uvarint(uint64(len(l.kgroups)))
	for _, k := range l.kgroups {
		f.String(k.drift)
		f.Float64(k.halfLife)
	}
	for j := range l.rows.len() {
		f.Uvarint(uint64(l.rows.at(j).kgroup))
	}
	names := slices.Sorted(maps.Keys(l.drift))
	f.Uvarint(uint64(len(names)))
	for _, name := range names {
		g := l.drift[name]
		f.String(name)
		f.Uvarint(uint64(g.n))
		for _, x := range []float64{g.last.Distance, g.last.Volatility, g.last.V0, g.last.Lambda} {
			f.Float64(x)
		}
		f.Bool(g.last.Calibrated)
		f.Bool(g.last.Warm)
		f.Uvarint(uint64(len(g.history)))
		for _, p := range g.history {
			f.Time(p.Time)
			f.Float64(p.Lambda)
			f.Float64(p.Volatility)
		}
		s := g.det.State()
		f.Uvarint(uint64(s.Held))
		f.Bool(s.RecentSum != nil)
		if s.RecentSum != nil {
			writeFloat64s(f, s.RecentSum)
			writeFloat64s(f, s.ArchiveSum)
			f.Uvarint(uint64(s.SinceExact))
		}
		f.Float64(s.Volatility)
		f.Float64(s.V0)
		f.Bool(s.Calibrated)
		f.Uvarint(uint64(len(s.Burn)))
		writeFloat64s(f, s.Burn)
	}
}

// decodeDrift reads what encodeDrift wrote into a ledger whose rows are
// read, and restores the detectors with their rings taken from the rows.
// It checks that the state agrees with the rows: every row's kernel
// group exists, so does every kernel group's drift group, and a group's
// observations are its rows with a finite unit vector.
func (l *ledger) decodeDrift(fr *wire.Reader) {
	nrows := l.rows.len()
	fail := func(format string, args ...any) { fr.Fail(fmt.Errorf(format, args...)) }
	l.anchors = readInts(fr, nrows)
	if fr.Err() == nil && len(l.anchors) > driftClusters {
		fail("%d drift anchors", len(l.anchors))
	}
	for range fr.Count(1<<32, 9) {
		k := kernelGroup{drift: fr.String(MaxKeyBytes * 4), halfLife: fr.Float64()}
		if _, dup := l.kgIndex[k]; dup && fr.Err() == nil {
			fail("kernel group %+v twice", k)
		}
		l.kgIndex[k] = uint32(len(l.kgroups))
		l.kgroups = append(l.kgroups, k)
	}
	for j := range l.rows.len() {
		k := uint32(fr.Int64Max(int64(len(l.kgroups)) - 1))
		l.rows.at(j).kgroup = k
		for _, b := range l.rows.at(j).beliefList() {
			l.batch.Group[b] = k
		}
		l.batch.Changed(l.rows.at(j).beliefList()...)
	}
	dim, opts := l.opts.Dim, driftOpts.WithDefaults()
	capn := opts.RecentWindow + opts.ArchiveWindow
	type restore struct {
		g    *driftGroup
		s    temporal.DriftDetectorState
		ring [][]float64
		rows int // the group's rows with a finite unit vector
	}
	var names []string
	groups := map[string]*restore{}
	for range fr.Count(1<<32, 40) {
		name := fr.String(MaxKeyBytes * 4)
		p := &restore{g: &driftGroup{n: int(fr.Int64Max(int64(nrows)))}}
		p.g.last = temporal.DriftReading{Distance: fr.Float64(), Volatility: fr.Float64(), V0: fr.Float64(), Lambda: fr.Float64(),
			Calibrated: fr.Bool(), Warm: fr.Bool()}
		for range fr.Count(DriftHistory, 17) {
			p.g.history = append(p.g.history, DriftPoint{Time: fr.Time(), Lambda: fr.Float64(), Volatility: fr.Float64()})
		}
		p.s = temporal.DriftDetectorState{Dim: dim, Options: opts, Held: fr.Count(capn, 0)}
		if fr.Bool() {
			p.s.RecentSum, p.s.ArchiveSum = readFloat64s(fr, dim), readFloat64s(fr, dim)
			p.s.SinceExact = fr.Count(capn, 0)
		}
		p.s.Volatility, p.s.V0, p.s.Calibrated = fr.Float64(), fr.Float64(), fr.Bool()
		p.s.Burn = readFloat64s(fr, fr.Count(opts.BurnIn, 8))
		switch {
		case fr.Err() != nil:
			return
		case !finiteReading(p.g.last):
			fail("drift group %q: last reading %+v", name, p.g.last)
			return
		case len(names) > 0 && name <= names[len(names)-1]:
			fail("drift group %q out of order", name)
			return
		case p.s.Held != min(p.g.n, capn) || len(p.g.history) != min(p.g.n, DriftHistory):
			fail("drift group %q: %d observations, %d held, %d in its history", name, p.g.n, p.s.Held, len(p.g.history))
			return
		}
		names = append(names, name)
		groups[name] = p
	}
	if fr.Err() == nil && fr.Len() != 0 {
		fail("%d trailing bytes", fr.Len())
	}
	if fr.Err() != nil {
		return
	}
	// The rings: each group's last held rows with a finite unit vector,
	// collected from the end of the ledger.
	of := make([]*restore, len(l.kgroups))
	for i, k := range l.kgroups {
		if of[i] = groups[k.drift]; of[i] == nil {
			fail("kernel group %d: no drift group %q", i, k.drift)
			return
		}
	}
	nonFinite := l.nonFinite
	l.nonFinite = nil
	for j := nrows - 1; j >= 0; j-- {
		p := of[l.rows.at(j).kgroup]
		if nonFinite != nil && nonFinite.has(j) {
			continue // the detector refused it
		}
		p.rows++
		if len(p.ring) < p.s.Held {
			p.ring = append(p.ring, slices.Clone(l.driftVector(j)))
		}
	}
	for _, name := range names {
		p := groups[name]
		if p.rows != p.g.n {
			fail("drift group %q: %d observations, %d rows", name, p.g.n, p.rows)
			return
		}
		slices.Reverse(p.ring)
		det, err := temporal.RestoreDriftDetector(p.s, p.ring)
		if err != nil {
			fr.Fail(fmt.Errorf("drift group %q: %w", name, err))
			return
		}
		p.g.det = det
		l.drift[name] = p.g
	}
}

func writeFloat64s(f *wire.Writer, xs []float64) {
	for _, x := range xs {
		f.Float64(x)
	}
}

// readFloat64s reads n float64 values (nil for none).
func readFloat64s(r *wire.Reader, n int) []float64 {
	if n == 0 || r.Err() != nil {
		return nil
	}
	if r.Len()/8 < n {
		r.Fail(fmt.Errorf("%d float64 values, %d bytes left", n, r.Len()))
		return nil
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = r.Float64()
	}
	return out
}

// finiteReading reports whether a reading's values are finite.
func finiteReading(r temporal.DriftReading) bool {
	for _, x := range []float64{r.Distance, r.Volatility, r.V0, r.Lambda} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func writeInts(f *wire.Writer, xs []int) {
	f.Uvarint(uint64(len(xs)))
	for _, x := range xs {
		f.Uvarint(uint64(x))
	}
}

func readInts(r *wire.Reader, n int) []int {
	var out []int
	for range r.Count(1<<40, 1) {
		out = append(out, int(r.Int64Max(int64(n)-1)))
	}
	return out
}
