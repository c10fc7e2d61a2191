package tidemark

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Documents and surgical updates (SmartVector §7): a document is stored
// as chunks — memories with its DocID, consecutive Chunk numbers and byte
// offsets — and an edit re-embeds only the chunks whose text it touches.

// DocumentOptions configure PutDocument and UpdateDocument. A nil pointer
// means the defaults.
type DocumentOptions struct {
	// ChunkBytes is the target chunk size (default DefaultChunkBytes, 800
	// bytes; MinChunkBytes…Options.MaxTextBytes): chunks end at a
	// paragraph, sentence or word boundary at or before it when there is
	// one.
	ChunkBytes int
	// Embed embeds chunk texts (default the collection's embedder, filled
	// by PutDocument and UpdateDocument; one of the two is required).
	Embed func(ctx context.Context, texts []string) ([][]float32, error)
	// Template carries the chunks' metadata: Kind, Source, Profile,
	// ValidFrom, ValidTo, DependsOn (ID, Text, Vector, DocID, Version,
	// Chunk and offsets are the engine's). UpdateDocument copies each
	// replaced chunk's metadata instead.
	Template Memory
}

// DocumentReport says what a document write did.
type DocumentReport struct {
	DocID   string
	Version int // the new chunks' version
	Chunks  int // chunks of the document after the write
	// Reembedded counts the chunk texts embedded: the document's chunks
	// for PutDocument, only the chunks an edit touched for UpdateDocument.
	Reembedded int
	// Created and Superseded are the chunk memories written and replaced;
	// Transferred counts the dependency edges moved to the new chunks.
	Created, Superseded []string
	Transferred         int
}

// maxDocBytes bounds one document.
const maxDocBytes = 64 << 20

// DocumentOptions' default and limit.
const (
	DefaultChunkBytes = 800
	MinChunkBytes     = 16
)

// Validate reports the first invalid field, by name, in an error wrapping
// ErrInvalid; a nil o is valid. It does not change o. ChunkBytes is also
// bounded by the DB's Options.MaxTextBytes, which PutDocument and
// UpdateDocument check.
func (o *DocumentOptions) Validate() error {
	if o != nil && o.ChunkBytes != 0 && o.ChunkBytes < MinChunkBytes {
		return fmt.Errorf("%w: DocumentOptions.ChunkBytes = %d, want at least %d (or 0 for the default %d)", ErrInvalid, o.ChunkBytes, MinChunkBytes, DefaultChunkBytes)
	}
	return nil
}

// WithDefaults returns a copy of o with every zero field set to its
// default; a nil o gives every default. Embed stays nil: its default is
// the collection's embedder, which PutDocument and UpdateDocument fill.
// It does not validate.
func (o *DocumentOptions) WithDefaults() DocumentOptions {
	var r DocumentOptions
	if o != nil {
		r = *o
	}
	if r.ChunkBytes == 0 {
		r.ChunkBytes = DefaultChunkBytes
	}
	return r
}

// resolve returns the options a document write to c uses: validated,
// defaults filled, Embed the collection's embedder when not given.
func (o *DocumentOptions) resolve(c *Collection) (DocumentOptions, error) {
	if err := o.Validate(); err != nil {
		return DocumentOptions{}, err
	}
	r := o.WithDefaults()
	if r.ChunkBytes > c.db.opts.MaxTextBytes {
		return r, fmt.Errorf("%w: DocumentOptions.ChunkBytes = %d, want at most Options.MaxTextBytes = %d", ErrInvalid, r.ChunkBytes, c.db.opts.MaxTextBytes)
	}
	if r.Embed == nil {
		if c.emb == nil {
			return r, fmt.Errorf("%w: documents need an embedder (DocumentOptions.Embed, or CollectionOptions.Embedder or TextEmbedder)", ErrInvalid)
		}
		r.Embed = c.embedTexts
	}
	return r, nil
}

func chunkID(doc string, chunk, version int) string {
	return fmt.Sprintf("%s#%d@v%d", doc, chunk, version)
}

// PutDocument stores text as a new document docID, chunked and embedded.
// A document that exists is ErrExists: edit it with UpdateDocument.
func (c *Collection) PutDocument(ctx context.Context, docID, text string, opts *DocumentOptions) (DocumentReport, error) {
	rep := DocumentReport{DocID: docID, Version: 1}
	o, err := opts.resolve(c)
	if err != nil {
		return rep, err
	}
	if err := validID(docID, "document id"); err != nil {
		return rep, err
	}
	if err := c.db.catchUp(ctx); err != nil {
		return rep, err
	}
	if err := checkDocText(text); err != nil {
		return rep, err
	}
	if o.Template.Subject != "" || o.Template.Relation != "" || o.Template.Object != "" {
		return rep, fmt.Errorf("%w: a document's chunks cannot share one fact key (DocumentOptions.Template)", ErrInvalid)
	}
	if cur, err := c.currentChunks(docID); err != nil {
		return rep, err
	} else if len(cur) > 0 {
		return rep, fmt.Errorf("%w: document %q (use UpdateDocument)", ErrExists, docID)
	}
	pieces := chunkText(text, o.ChunkBytes)
	vecs, err := embedChecked(ctx, o.Embed, pieces, c.opts.Dim)
	if err != nil {
		return rep, err
	}
	ms := make([]Memory, len(pieces))
	off := 0
	for i, p := range pieces {
		m := o.Template
		m.ID, m.Text, m.Vector, m.DocID, m.Version, m.Chunk, m.Start, m.End = chunkID(docID, i, 1), p, vecs[i], docID, 1, i, off, off+len(p)
		m.DependsOn = slices.Clone(o.Template.DependsOn)
		off += len(p)
		ms[i] = m
		rep.Created = append(rep.Created, m.ID)
	}
	rep.Reembedded, rep.Chunks = len(pieces), len(pieces)
	_, err = c.Put(ctx, ms)
	return rep, err
}

func checkDocText(text string) error {
	if text == "" || len(text) > maxDocBytes || !utf8.ValidString(text) {
		return fmt.Errorf("%w: a document is 1…%d bytes of UTF-8", ErrInvalid, maxDocBytes)
	}
	return nil
}

func embedChecked(ctx context.Context, embed func(context.Context, []string) ([][]float32, error), texts []string, dim int) ([][]float32, error) {
	vecs, err := embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("%w: the embedder returned %d vectors for %d texts", ErrInvalid, len(vecs), len(texts))
	}
	for i, v := range vecs {
		if err := checkVector(v, dim, fmt.Sprintf("chunk %d", i)); err != nil {
			return nil, err
		}
	}
	return vecs, nil
}

// currentChunks returns the newest version of each chunk of docID, in
// chunk order (rows, under a read lock).
func (c *Collection) currentChunks(docID string) ([]Memory, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.dropped {
		return nil, fmt.Errorf("%w: collection %q", ErrNotFound, c.name)
	}
	var out []Memory
	for i := 0; ; i++ {
		chain, ok := c.byDoc[docChunk{docID, i}]
		if !ok {
			break
		}
		j := chain[len(chain)-1]
		m := c.rows.at(j).mem.memory()
		m.Vector = c.unitVector(j) // read only
		out = append(out, m)
	}
	return out, nil
}

// UpdateDocument replaces docID's text with newText surgically: it diffs
// the old text (its current chunks, in order) against the new one, and
// only the chunks whose byte ranges overlap the change get new versions —
// re-chunked from the new text over their span, re-embedded, superseding
// the old ones through document-version links, with the dependency edges
// into them moved to the replacements; superseding queues their ripples
// for the next consolidation. A one-word edit inside one chunk re-embeds
// one chunk.
func (c *Collection) UpdateDocument(ctx context.Context, docID, newText string, opts *DocumentOptions) (DocumentReport, error) {
	rep := DocumentReport{DocID: docID}
	o, err := opts.resolve(c)
	if err != nil {
		return rep, err
	}
	if err := checkDocText(newText); err != nil {
		return rep, err
	}
	if err := c.db.catchUp(ctx); err != nil {
		return rep, err
	}
	cur, err := c.currentChunks(docID)
	if err != nil {
		return rep, err
	}
	if len(cur) == 0 {
		return rep, fmt.Errorf("%w: document %q", ErrNotFound, docID)
	}
	var sb strings.Builder
	starts := make([]int, len(cur)+1)
	for i, m := range cur {
		starts[i] = sb.Len()
		sb.WriteString(m.Text)
	}
	old := sb.String()
	starts[len(cur)] = len(old)
	rep.Chunks = len(cur)
	if old == newText {
		return rep, nil
	}
	// The changed range: old[p:oe] became newText[p:ne].
	p := 0
	for p < len(old) && p < len(newText) && old[p] == newText[p] {
		p++
	}
	s := 0
	for s < len(old)-p && s < len(newText)-p && old[len(old)-1-s] == newText[len(newText)-1-s] {
		s++
	}
	for p > 0 && p < len(old) && !utf8.RuneStart(old[p]) {
		p--
	}
	for s > 0 && !utf8.RuneStart(old[len(old)-s]) {
		s--
	}
	oe := len(old) - s
	// The chunks the change touches: those overlapping [p, oe), or for a
	// pure insertion the chunk holding p (the last one at the very end).
	first, last := -1, -1
	for i := range cur {
		a, b := starts[i], starts[i+1]
		if (oe > p && a < oe && b > p) || (oe == p && a <= p && (p < b || i == len(cur)-1)) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 { // cannot happen: the chunks cover the text
		return rep, errors.New("tidemark: no chunk holds the change")
	}
	delta := len(newText) - len(old)
	span := newText[starts[first] : starts[last+1]+delta]
	pieces, ok := splitInto(span, last-first+1)
	if !ok {
		return rep, fmt.Errorf("%w: the edit leaves %d chunks' span with fewer than %d characters; rewrite the document under a new id", ErrInvalid, last-first+1, last-first+1)
	}
	vecs, err := embedChecked(ctx, o.Embed, pieces, c.opts.Dim)
	if err != nil {
		return rep, err
	}
	rep.Reembedded = len(pieces)
	ms := make([]Memory, len(pieces))
	off := starts[first]
	for k, piece := range pieces {
		oldm := cur[first+k]
		m := oldm
		m.clearEngineFields()
		m.Version = oldm.Version + 1
		m.ID, m.Text, m.Vector = chunkID(docID, oldm.Chunk, m.Version), piece, vecs[k]
		m.Start, m.End = off, off+len(piece)
		m.RecordedAt, m.Created, m.Access, m.Positive, m.Negative = time.Time{}, time.Time{}, 0, 0, 0
		off += len(piece)
		ms[k] = m
		rep.Created = append(rep.Created, m.ID)
		rep.Superseded = append(rep.Superseded, oldm.ID)
		rep.Version = max(rep.Version, m.Version)
	}
	var later []string // chunks after the edit: their offsets move by delta
	for _, m := range cur[last+1:] {
		later = append(later, m.ID)
	}
	res, err := c.putDocVersion(ctx, ms, rep.Superseded, later, delta)
	if err != nil {
		return rep, err
	}
	rep.Transferred = res
	return rep, nil
}

// putDocVersion writes replacement chunks, moves the dependency edges
// into each replaced chunk to its replacement, and shifts the offsets of
// the later chunks by delta, in one logged record.
func (c *Collection) putDocVersion(ctx context.Context, ms []Memory, replaced, later []string, delta int) (int, error) {
	for i := range ms {
		if err := ms[i].validate(c.db.opts.MaxTextBytes); err != nil {
			return 0, err
		}
		if err := checkVector(ms[i].Vector, c.opts.Dim, ms[i].ID); err != nil {
			return 0, err
		}
		ms[i].Vector = slices.Clone(ms[i].Vector)
	}
	if err := c.precheck(ms); err != nil {
		return 0, err
	}
	res, err := c.db.commit(ctx, &record{typ: recPutDoc, coll: c.name, inc: c.incarnation, mems: ms, replaced: replaced, later: later, shift: delta})
	if err != nil {
		return 0, err
	}
	r := res.doc
	if r.rejected != "" {
		return 0, fmt.Errorf("%w: chunk %q was written by a concurrent update", ErrExists, r.rejected)
	}
	return r.moved, nil
}

// docApplied is what applying a document version returns.
type docApplied struct {
	moved    int
	rejected string // the id of a chunk a concurrent update wrote first
}

// applyPutDoc applies a document version: replacement chunks, then the
// edges moved to them and the later chunks' offsets shifted.
func (c *Collection) applyPutDoc(ms []Memory, replaced, later []string, shift int, tx float64) (docApplied, error) {
	c.mu.Lock()
	if c.dropped {
		c.mu.Unlock()
		return docApplied{}, fmt.Errorf("%w: collection %q", ErrNotFound, c.name)
	}
	newRows := c.rows.len()
	res, touched := c.putDoc(ms, replaced, later, shift, tx)
	c.syncLinks()
	leave, toSurface, toArchive, vecs := c.surfaceMoves(touched, newRows)
	c.mu.Unlock()
	c.moveIndexed(leave, toSurface, toArchive, vecs)
	return res, nil
}

// putDoc is the ledger's apply of a logged document version.
func (l *ledger) putDoc(ms []Memory, replaced, later []string, shift int, tx float64) (res docApplied, touched map[int]bool) {
	out, touched := l.put(ms, tx, 0) // document chunks never split
	for _, o := range out {
		if o.Outcome == Rejected || o.Outcome == Unchanged {
			res.rejected = o.ID
			return res, touched
		}
	}
	for i, oldID := range replaced {
		if i >= len(ms) {
			break
		}
		o, ok1 := l.rowOf(oldID)
		n, ok2 := l.rowOf(ms[i].ID)
		if !ok1 || !ok2 || o == n {
			continue
		}
		for _, w := range slices.Clone(l.dependents[o]) {
			if w != n && !l.deps[[2]int{w, n}] {
				l.addDep(w, n)
				res.moved++
			}
		}
	}
	for _, id := range later {
		if j, ok := l.rowOf(id); ok {
			m := l.rows.at(j).mem.own()
			m.Start, m.End = max(0, m.Start+shift), max(0, m.End+shift)
		}
	}
	return res, touched
}

// chunkText splits text into pieces of at most max bytes (a single word
// longer than max makes a longer piece), ending each at the last
// paragraph break, else sentence end, else space before the limit; the
// pieces concatenate to text.
func chunkText(text string, max int) []string {
	var out []string
	for len(text) > max {
		cut := bestCut(text[:max+1])
		out = append(out, text[:cut])
		text = text[cut:]
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}

// bestCut is where to end a chunk inside window (its length minus one is
// the limit).
func bestCut(w string) int {
	lim := len(w) - 1
	for _, sep := range []string{"\n\n", ". ", "\n", " "} {
		if i := strings.LastIndex(w[:lim], sep); i > lim/4 {
			return i + len(sep)
		}
	}
	// No boundary: cut at a rune start.
	for lim > 1 && !utf8.RuneStart(w[lim]) {
		lim--
	}
	return lim
}

// splitInto splits s into n non-empty pieces, at word boundaries near
// equal sizes when it has enough words, else at rune boundaries; ok is
// false when s has fewer than n runes.
func splitInto(s string, n int) (pieces []string, ok bool) {
	if n <= 1 {
		return []string{s}, s != ""
	}
	rest := s
	for k := n; k > 1; k-- {
		cut := len(rest) / k
		for cut < len(rest) && !unicode.IsSpace(rune(rest[cut])) {
			cut++
		}
		for cut < len(rest) && !utf8.RuneStart(rest[cut]) {
			cut++
		}
		pieces = append(pieces, rest[:cut])
		rest = rest[cut:]
	}
	pieces = append(pieces, rest)
	if !slices.Contains(pieces, "") {
		return pieces, true
	}
	// Too few words: cut by runes.
	runes := utf8.RuneCountInString(s)
	if runes < n {
		return nil, false
	}
	pieces = pieces[:0]
	for k := n; k > 0; k-- {
		take := utf8.RuneCountInString(s) / k
		cut := 0
		for range take {
			_, w := utf8.DecodeRuneInString(s[cut:])
			cut += w
		}
		if k == 1 {
			cut = len(s)
		}
		pieces = append(pieces, s[:cut])
		s = s[cut:]
	}
	return pieces, true
}
