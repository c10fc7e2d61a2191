package tidemark

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/internal/wire"
	"github.com/tidemark/tidemark/temporal"
)

// The snapshot body (inside store's checksummed snapshot file):
//
//	uvarint  format version (1)
//	float64  the DB's last transaction time (days)
//	uvarint  number of collections, then for each, in name order:
//	  frame  name, options (defaults filled in), last transaction time,
//	         number of rows
//	  frame  one per row: the caller's fields, the unit vector, the content
//	         hash, the derived times, the beliefs, links, aliases, counters
//	  frame  pending depends_on targets and the dependency pairs
//	  frame  the typed-link graph (index.LinkGraph.MarshalBinary)
//	  the surface HNSW (index.HNSW.Save), then the archive HNSW
//
// A frame is a uvarint length and that many bytes. The HNSW indexes are
// derived data: Open checks them against the ledger and rebuilds them
// when they disagree.

// snapshotVersion is the snapshot format; 2 stores memories and options
// as record version 2 does; 3 no longer stores the link graph, which is
// derived from the rows. Versions 1 and 2 are still read.
const snapshotVersion = 3

// maxFrame bounds one frame of a snapshot (a row with a 1 GiB text).
const maxFrame = 1 << 31

func writeFrame(w *bufio.Writer, b []byte) error {
	var hdr [binary.MaxVarintLen64]byte
	if _, err := w.Write(hdr[:binary.PutUvarint(hdr[:], uint64(len(b)))]); err != nil {
		return err
	}
	_, err := w.Write(b)
	return err
}

func readFrame(r *bufio.Reader, buf []byte) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, fmt.Errorf("%w: snapshot frame: %w", ErrCorrupt, err)
	}
	if n > maxFrame {
		return nil, fmt.Errorf("%w: snapshot frame of %d bytes", ErrCorrupt, n)
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("%w: snapshot frame: %w", ErrCorrupt, err)
	}
	return buf, nil
}

// writeState writes every collection (db.seq.mu held: no record is
// applied meanwhile).
func (db *DB) writeState(out io.Writer) error {
	w := bufio.NewWriterSize(out, 1<<20)
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
	return w.Flush()
}

func (c *Collection) writeState(w *bufio.Writer) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var f wire.Writer
	f.String(c.name)
	f.Uvarint(c.incarnation)
	encodeCollOpts(&f, &c.opts)
	f.Float64(c.lastTx)
	f.Uvarint(uint64(len(c.rows)))
	if err := writeFrame(w, f.B); err != nil {
		return err
	}
	d := c.opts.Dim
	for j := range c.rows {
		r := &c.rows[j]
		f.B = f.B[:0]
		r.mem.encode(&f)
		b := r.beliefs[0]
		f.Float32s(c.batch.Vectors[b*d : (b+1)*d])
		f.B = append(f.B, r.hash[:]...)
		for _, x := range []float64{r.rec, r.effFrom, r.created, r.givenFrom, r.givenTo, r.access, r.positive, r.negative, r.degree} {
			f.Float64(x)
		}
		f.Bool(r.hasFrom)
		f.Bool(r.superseded)
		f.Bool(r.visible)
		f.Byte(byte(r.status))
		f.Varint(int64(r.supersededBy))
		f.Uvarint(uint64(len(r.states)))
		for _, s := range r.states {
			f.Float64(s.valid.From)
			f.Float64(s.valid.To)
			f.Float64(s.recorded.From)
			f.Float64(s.recorded.To)
		}
		f.Uvarint(uint64(len(r.supersedes)))
		for _, o := range r.supersedes {
			f.Uvarint(uint64(o))
		}
		f.Uvarint(uint64(len(r.aliases)))
		for _, a := range r.aliases {
			f.String(a)
			h := c.aliasHash[a]
			f.B = append(f.B, h[:]...)
		}
		f.Float64(r.penalty)
		for _, l := range [][]int{r.review, r.contradicts, r.contradictedBy} {
			f.Uvarint(uint64(len(l)))
			for _, o := range l {
				f.Uvarint(uint64(o))
			}
		}
		if err := writeFrame(w, f.B); err != nil {
			return err
		}
	}
	f.B = f.B[:0]
	pend := slices.Sorted(maps.Keys(c.pending))
	f.Uvarint(uint64(len(pend)))
	for _, id := range pend {
		f.String(id)
		f.Uvarint(uint64(len(c.pending[id])))
		for _, r := range c.pending[id] {
			f.Uvarint(uint64(r))
		}
	}
	pairs := slices.SortedFunc(maps.Keys(c.deps), func(a, b [2]int) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	f.Uvarint(uint64(len(pairs)))
	for _, p := range pairs {
		f.Uvarint(uint64(p[0]))
		f.Uvarint(uint64(p[1]))
	}
	f.Uvarint(uint64(len(c.rippleSeeds)))
	for _, r := range c.rippleSeeds {
		f.Uvarint(uint64(r))
	}
	f.Uvarint(uint64(len(c.audit)))
	for _, a := range c.audit {
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
	}
	keys := c.sortedFeedback()
	f.Uvarint(uint64(len(keys)))
	for _, k := range keys {
		st := c.feedback[k]
		f.Uvarint(uint64(k.row))
		f.String(k.source)
		f.Uvarint(uint64(st.total))
		f.Float64(st.since)
		f.Uvarint(uint64(st.inDay))
	}
	// The chains in their live order: a row's place was decided when it
	// was written, and re-sorting on load could order differently (a
	// document supersession can move a row's valid-from afterwards).
	keyChains := slices.SortedFunc(maps.Keys(c.byKey), func(a, b temporal.FactKey) int {
		return cmp.Or(cmp.Compare(a.Subject, b.Subject), cmp.Compare(a.Relation, b.Relation))
	})
	f.Uvarint(uint64(len(keyChains)))
	for _, k := range keyChains {
		f.String(k.Subject)
		f.String(k.Relation)
		writeInts(&f, c.byKey[k])
	}
	docChains := slices.SortedFunc(maps.Keys(c.byDoc), func(a, b docChunk) int {
		return cmp.Or(cmp.Compare(a.doc, b.doc), cmp.Compare(a.chunk, b.chunk))
	})
	f.Uvarint(uint64(len(docChains)))
	for _, k := range docChains {
		f.String(k.doc)
		f.Uvarint(uint64(k.chunk))
		writeInts(&f, c.byDoc[k])
	}
	if err := writeFrame(w, f.B); err != nil {
		return err
	}
	if err := c.surface.Save(w); err != nil {
		return err
	}
	return c.archive.Save(w)
}

// readState loads a snapshot written by writeState.
func (db *DB) readState(in io.Reader) error {
	r := bufio.NewReaderSize(in, 1<<20)
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
		c, rebuilt, err := db.readCollection(r, byte(v))
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
	if _, err := r.ReadByte(); err != io.EOF {
		return fmt.Errorf("%w: trailing bytes after the snapshot's collections", ErrCorrupt)
	}
	return nil
}

func (db *DB) readCollection(r *bufio.Reader, v byte) (c *Collection, rebuilt bool, err error) {
	buf, err := readFrame(r, nil)
	if err != nil {
		return nil, false, err
	}
	fr := wire.NewReader(buf)
	name := fr.String(MaxIDBytes)
	inc := fr.Uvarint()
	opts := decodeCollOpts(fr, v)
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
	for j := range nrows {
		if buf, err = readFrame(r, buf); err != nil {
			return nil, false, err
		}
		fr := wire.NewReader(buf)
		var rw row
		rw.mem = decodeMemory(fr, v)
		vec := fr.Float32s(MaxDim, nil)
		copy(rw.hash[:], fr.Bytes0(sha256.Size))
		for _, p := range []*float64{&rw.rec, &rw.effFrom, &rw.created, &rw.givenFrom, &rw.givenTo, &rw.access, &rw.positive, &rw.negative, &rw.degree} {
			*p = fr.Float64()
		}
		rw.hasFrom, rw.superseded, rw.visible = fr.Bool(), fr.Bool(), fr.Bool()
		rw.status = temporal.Status(fr.Byte())
		rw.supersededBy = int(fr.Int(-1, int64(nrows)-1))
		ns := fr.Count(1<<20, 32)
		for range ns {
			rw.states = append(rw.states, state{valid: temporal.Window{From: fr.Float64(), To: fr.Float64()},
				recorded: temporal.Window{From: fr.Float64(), To: fr.Float64()}})
		}
		for range fr.Count(1<<30, 1) {
			rw.supersedes = append(rw.supersedes, int(fr.Int64Max(int64(nrows)-1)))
		}
		for range fr.Count(1<<30, 1) {
			a := fr.String(MaxIDBytes)
			var h [sha256.Size]byte
			copy(h[:], fr.Bytes0(sha256.Size))
			rw.aliases = append(rw.aliases, a)
			c.aliasHash[a] = h
		}
		rw.penalty = fr.Float64()
		lists := []*[]int{&rw.review, &rw.contradicts, &rw.contradictedBy}
		if v < 2 {
			lists = lists[:2]
		}
		for _, l := range lists {
			for range fr.Count(1<<30, 1) {
				*l = append(*l, int(fr.Int64Max(int64(nrows)-1)))
			}
		}
		if fr.Err() == nil && (fr.Len() != 0 || len(vec) != opts.Dim || ns == 0) {
			fr.Fail(fmt.Errorf("row %d: %d trailing bytes, %d dimensions, %d beliefs", j, fr.Len(), len(vec), ns))
		}
		if fr.Err() != nil {
			return nil, false, bad(fmt.Sprintf("row %d", j), fr.Err())
		}
		rw.derive(c.opts.HalfLife)
		c.rows = append(c.rows, rw)
		for range rw.states {
			c.appendBelief(int(j), vec, false)
		}
		c.observeDrift(int(j)) // the detectors are rebuilt in log order
		if rw.visible {
			c.visible++
		}
	}
	if buf, err = readFrame(r, buf); err != nil {
		return nil, false, err
	}
	fr = wire.NewReader(buf)
	for range fr.Count(1<<30, 1) {
		id := fr.String(MaxIDBytes)
		for range fr.Count(1<<30, 1) {
			c.pending[id] = append(c.pending[id], int(fr.Int64Max(int64(nrows)-1)))
		}
	}
	for range fr.Count(1<<40, 2) {
		a, b := int(fr.Int64Max(int64(nrows)-1)), int(fr.Int64Max(int64(nrows)-1))
		c.deps[[2]int{a, b}] = true
	}
	for range fr.Count(1<<40, 1) {
		c.rippleSeeds = append(c.rippleSeeds, int(fr.Int64Max(int64(nrows)-1)))
	}
	for range fr.Count(1<<40, 8) {
		a := AuditEntry{Seq: fr.Uvarint(), Time: fr.Time(), Rule: Rule(fr.Byte()), ID: fr.String(MaxIDBytes), Other: fr.String(MaxIDBytes),
			From: temporal.Status(fr.Byte()), To: temporal.Status(fr.Byte()), Penalty: fr.Float64(), Reason: fr.String(MaxIDBytes + 64),
			Prefer: fr.String(MaxIDBytes)}
		c.audit = append(c.audit, a)
	}
	for range fr.Count(1<<40, 11) {
		k := fbKey{row: int(fr.Int64Max(int64(nrows) - 1)), source: fr.String(MaxIDBytes)}
		c.feedback[k] = fbState{total: int(fr.Int64Max(MaxCounter)), since: fr.Float64(), inDay: int(fr.Int64Max(MaxCounter))}
	}
	c.byKey, c.byDoc = map[temporal.FactKey][]int{}, map[docChunk][]int{}
	for range fr.Count(1<<40, 3) {
		k := temporal.FactKey{Subject: fr.String(MaxKeyBytes * 4), Relation: fr.String(MaxKeyBytes * 4)}
		c.byKey[k] = readInts(fr, nrows)
	}
	for range fr.Count(1<<40, 3) {
		k := docChunk{doc: fr.String(MaxKeyBytes), chunk: int(fr.Int64Max(1 << 31))}
		c.byDoc[k] = readInts(fr, nrows)
	}
	if fr.Err() != nil {
		return nil, false, bad("dependencies", fr.Err())
	}
	if err := c.rebuildMaps(); err != nil {
		return nil, false, bad("ledger", err)
	}
	if v < 3 {
		// Older snapshots stored the link graph; it is derived now.
		if _, err = readFrame(r, buf); err != nil {
			return nil, false, err
		}
	}
	if c.links, err = c.buildLinks(); err != nil {
		return nil, false, bad("links", err)
	}
	surface, err := index.Load(r)
	if err != nil {
		return nil, false, bad("surface index", err)
	}
	archive, err := index.Load(r)
	if err != nil {
		return nil, false, bad("archive index", err)
	}
	c.surface, c.archive = surface, archive
	if !c.indexesAgree() {
		c.rebuildIndexes()
		rebuilt = true
	}
	return c, rebuilt, nil
}

func writeInts(f *wire.Writer, xs []int) {
	f.Uvarint(uint64(len(xs)))
	for _, x := range xs {
		f.Uvarint(uint64(x))
	}
}

func readInts(r *wire.Reader, n int) []int {
	out := make([]int, 0, 1)
	for range r.Count(1<<40, 1) {
		out = append(out, int(r.Int64Max(int64(n)-1)))
	}
	return out
}

// rebuildMaps recomputes the id, text and lead maps from the rows (the
// chains are read from the snapshot), the end of the archive's windows and
// the dependents of each row (after the dependency pairs are read).
func (l *ledger) rebuildMaps() error {
	for j := range l.rows {
		r := &l.rows[j]
		for _, id := range append([]string{r.mem.ID}, r.aliases...) {
			if _, dup := l.byID[id]; dup {
				return fmt.Errorf("id %q twice", id)
			}
			l.byID[id] = j
		}
		if r.normText != "" {
			l.byText[r.normText] = append(l.byText[r.normText], j)
		}
		l.indexLead(j)
		if !r.visible {
			l.offSurface(j)
		}
	}
	for p := range l.deps {
		l.dependents[p[1]] = append(l.dependents[p[1]], p[0])
	}
	for _, ds := range l.dependents {
		slices.Sort(ds)
	}
	return nil
}

// indexesAgree checks that the surface index holds exactly the visible
// rows and the archive exactly the others.
func (c *Collection) indexesAgree() bool {
	if c.surface.Dim() != c.opts.Dim || c.archive.Dim() != c.opts.Dim ||
		c.surface.Len() != c.visible || c.archive.Len() != len(c.rows)-c.visible {
		return false
	}
	for j := range c.rows {
		if c.rows[j].visible != c.surface.Contains(uint64(j)) || c.rows[j].visible == c.archive.Contains(uint64(j)) {
			return false
		}
	}
	return true
}

// rebuildIndexes builds both HNSW indexes from the ledger.
func (c *Collection) rebuildIndexes() {
	c.surface, _ = c.newIndex()
	c.archive, _ = c.newIndex()
	var on, off []int
	vecs := make(map[int][]float32, len(c.rows))
	d := c.opts.Dim
	for j := range c.rows {
		b := c.rows[j].beliefs[0]
		vecs[j] = c.batch.Vectors[b*d : (b+1)*d]
		if c.rows[j].visible {
			on = append(on, j)
		} else {
			off = append(off, j)
		}
	}
	insertAll(c.surface, on, vecs)
	insertAll(c.archive, off, vecs)
}
