package index

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"unsafe"
)

// File format, little-endian, written by Save (version 1) and SaveGraph
// (version 2, the same without the vectors):
//
//	magic "TMHNSW\x00\x00", u32 version, u32 dim, u32 M, u32 efConstruction,
//	u32 ef, u32 n (nodes, deleted included), u32 live, u64 top (entry point
//	in the low 32 bits, top level + 1 in the high 32), u64 seed,
//	n × u64 keys, n × u8 levels, ⌈n/32⌉ × u32 tombstone bits,
//	n·dim × f32 vectors (version 1 only), n·(2M+1) × u32 layer-0 blocks,
//	for each node with level L > 0, in id order: L·(M+1) × u32,
//	u32 CRC-32C (Castagnoli) of everything before it.
const (
	fileMagic    = "TMHNSW\x00\x00"
	fileVersion  = 1
	graphVersion = 2
	headerSize   = 8 + 4*7 + 8 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Save writes the index to w. It holds the index exclusively while it
// writes, so the image is consistent; searches and inserts wait.
func (h *HNSW) Save(w io.Writer) error { return h.save(w, true) }

// SaveGraph writes the index without its vectors, for a caller that keeps
// them anyway (the engine's ledger does): LoadGraph reads it back with the
// vectors given by key. A quarter or less of Save's bytes at d ≥ 32.
func (h *HNSW) SaveGraph(w io.Writer) error { return h.save(w, false) }

func (h *HNSW) save(w io.Writer, vectors bool) error {
	h.structMu.Lock()
	defer h.structMu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	var b8 [8]byte
	u32 := func(v uint32) { binary.LittleEndian.PutUint32(b8[:4], v); bw.Write(b8[:4]) }
	u64 := func(v uint64) { binary.LittleEndian.PutUint64(b8[:], v); bw.Write(b8[:]) }
	n := h.n
	bw.WriteString(fileMagic)
	if vectors {
		u32(fileVersion)
	} else {
		u32(graphVersion)
	}
	u32(uint32(h.dim))
	u32(uint32(h.m))
	u32(uint32(h.efc))
	u32(uint32(h.ef))
	u32(uint32(n))
	u32(uint32(h.live))
	u64(h.top.Load())
	u64(h.seed)
	for _, k := range h.keys[:n] {
		u64(k)
	}
	bw.Write(h.levels[:n])
	for _, d := range h.dead[:(n+31)/32] {
		u32(d)
	}
	if vectors {
		for id := range n {
			for _, x := range h.vec(uint32(id)) {
				u32(math.Float32bits(x))
			}
		}
	}
	for _, x := range h.links0[:n*(h.m0+1)] {
		u32(x)
	}
	for id := 0; id < n; id++ {
		for _, x := range h.upperLists(uint32(id)) {
			u32(x)
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(b8[:4], crc.Sum32())
	_, err := w.Write(b8[:4])
	return err
}

// SaveFile writes the index to path atomically: a temporary file in the
// same directory, fsync, rename, fsync of the directory.
func (h *HNSW) SaveFile(path string) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	if err := h.Save(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// LoadFile reads an index saved with SaveFile; bytes after the index make
// the file corrupt.
func LoadFile(path string) (*HNSW, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	h, err := Load(br)
	if err != nil {
		return nil, err
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, corrupt("%s: data after the index", path)
	}
	return h, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// Load reads an index written by Save, without rebuilding the graph. Every
// length, id, count and level is checked; a truncated or damaged input is an
// error wrapping ErrCorrupt. It reads exactly the index's bytes (whatever
// follows in r is left unread) and allocates only as the bytes arrive.
func Load(r io.Reader) (*HNSW, error) { return load(r, nil, false) }

// LoadGraph reads an index written by SaveGraph, taking each node's vector
// from vector(key) — the unit vector it was inserted with — without
// copying it: the index shares the caller's vectors (Options.SharedVectors),
// so they must not change while it holds them. The index keeps vector
// itself reachable for its whole life, so a closure over the vectors' owner
// keeps memory the garbage collector does not manage alive. A key vector
// does not know, or a vector of another dimension, not finite or not of
// unit length, is an error wrapping ErrCorrupt.
func LoadGraph(r io.Reader, vector func(key uint64) []float32) (*HNSW, error) {
	if vector == nil {
		return nil, fmt.Errorf("%w: LoadGraph needs the vectors", ErrOptions)
	}
	return load(r, vector, false)
}

// LoadGraphQuantized is LoadGraph and then Quantize in one pass over the
// vectors: each node's int8 code is made as LoadGraph checks the node's
// vector, while it is in cache, instead of in a second pass that reads
// every vector from memory again (3 GB for a million 768-d vectors). Like
// LoadGraph it also reads a file Save wrote, with its vectors; the codes
// of such an index are made after it is read.
func LoadGraphQuantized(r io.Reader, vector func(key uint64) []float32) (*HNSW, error) {
	if vector == nil {
		return nil, fmt.Errorf("%w: LoadGraphQuantized needs the vectors", ErrOptions)
	}
	h, err := load(r, vector, true)
	if err != nil {
		return nil, err
	}
	h.Quantize() // a file with its own vectors (Save) is coded after; otherwise done already
	return h, nil
}

func load(r io.Reader, vector func(key uint64) []float32, quantize bool) (*HNSW, error) {
	var hdr [headerSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, corrupt("header: %v", err)
	}
	if string(hdr[:8]) != fileMagic {
		return nil, corrupt("not a tidemark HNSW file")
	}
	le := binary.LittleEndian
	ver, dim, m, efc := le.Uint32(hdr[8:]), int(le.Uint32(hdr[12:])), int(le.Uint32(hdr[16:])), int(le.Uint32(hdr[20:]))
	ef, n, live := int(le.Uint32(hdr[24:])), int(le.Uint32(hdr[28:])), int(le.Uint32(hdr[32:]))
	top, seed := le.Uint64(hdr[36:]), le.Uint64(hdr[44:])
	switch {
	case vector == nil && ver == graphVersion:
		return nil, corrupt("an index saved without its vectors (SaveGraph): read it with LoadGraph")
	case vector != nil && ver == fileVersion:
		vector = nil // the file has them
	case ver != fileVersion && ver != graphVersion:
		return nil, corrupt("version %d, this build reads %d and %d", ver, fileVersion, graphVersion)
	}
	vecBytes := 4 * uint64(n) * uint64(dim)
	if vector != nil {
		vecBytes = 0
	}
	opts := Options{Dim: dim, M: m, EfConstruction: efc, Ef: ef, Capacity: max(n, 1), Seed: seed}
	if vector != nil {
		opts.SharedVectors, opts.KeepAlive, opts.Quantize = true, vector, quantize
	}
	if dim == 0 || m == 0 || efc == 0 || ef == 0 || seed == 0 {
		return nil, corrupt("zero parameter in header")
	}
	if err := opts.Validate(); err != nil {
		return nil, corrupt("header: %v", err)
	}
	if live > n {
		return nil, corrupt("%d live of %d nodes", live, n)
	}
	m0 := 2 * m
	// Read exactly the node arrays, then exactly the upper layers the
	// levels imply and the checksum, so that an index can be followed by
	// other data in the stream. Memory is committed in proportion to the
	// bytes that arrived (readUpTo allocates at most twice what arrived;
	// the node arrays of New are a few times the 9n bytes read before it;
	// the vectors and layer-0 blocks go straight into the off-heap
	// arrays, a chunk at a time): a lying header cannot make Load
	// allocate what is not there.
	readN := func(k uint64, what string) ([]byte, error) {
		b, err := readUpTo(r, k)
		if err != nil {
			return nil, corrupt("%s: %v", what, err)
		}
		if uint64(len(b)) != k {
			return nil, corrupt("truncated %s: %d of %d bytes", what, len(b), k)
		}
		return b, nil
	}
	body, err := readN(uint64(n)*9+4*uint64((n+31)/32), "node arrays")
	if err != nil {
		return nil, err
	}
	crc := crc32.Update(crc32.Checksum(hdr[:], castagnoli), castagnoli, body)
	keys, levels, dead := body[:8*n], body[8*n:9*n], body[9*n:]
	upperWords := uint64(0)
	for _, l := range levels {
		if l > maxLevel {
			return nil, corrupt("level %d above %d", l, maxLevel)
		}
		upperWords += uint64(l) * uint64(m+1)
	}
	h, err := New(&opts)
	if err != nil {
		return nil, corrupt("%v", err)
	}
	buf := make([]byte, min(1<<20, 4*n*max(dim, m0+1)))
	if vecBytes > 0 {
		words := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(h.vecs))), n*dim)
		if err := readWords(r, buf, words, &crc, h.vecMem.Populate); err != nil {
			return nil, corrupt("vectors: %v", err)
		}
		for _, x := range h.vecs[:n*dim] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, corrupt("vector value %v", x)
			}
		}
	}
	if err := readWords(r, buf, h.links0[:n*(m0+1)], &crc, h.linkMem.Populate); err != nil {
		return nil, corrupt("layer-0 neighbour blocks: %v", err)
	}
	upper, err := readN(4*upperWords+4, "upper layers")
	if err != nil {
		return nil, err
	}
	crc = crc32.Update(crc, castagnoli, upper[:len(upper)-4])
	if crc != le.Uint32(upper[len(upper)-4:]) {
		return nil, corrupt("checksum mismatch (truncated or damaged)")
	}
	h.n, h.live = n, live
	copy(h.levels, levels)
	liveBits := 0
	for i := range h.dead[:(n+31)/32] {
		w := le.Uint32(dead[4*i:])
		if i == (n-1)/32 && n%32 != 0 && w>>(n%32) != 0 {
			return nil, corrupt("tombstone bits beyond the last node")
		}
		h.dead[i] = w
		for b := w; b != 0; b &= b - 1 {
			liveBits++
		}
	}
	if n-liveBits != live {
		return nil, corrupt("%d tombstones but %d live of %d", liveBits, live, n)
	}
	for i := 0; i < n; i++ {
		h.keys[i] = le.Uint64(keys[8*i:])
		if !h.isDead(uint32(i)) {
			if !h.byKey.put(h.keys[i], uint32(i), h.keys) {
				return nil, corrupt("key %d appears twice", h.keys[i])
			}
		}
	}
	if vector != nil {
		if h.quant {
			h.codeMem.Populate(n * h.cstride)
		}
		if err := parallel(n, func(lo, hi int) error {
			for i := lo; i < hi; i++ {
				v := vector(h.keys[i])
				erased := h.isDead(uint32(i)) && len(v) == dim && !slices.ContainsFunc(v, func(x float32) bool { return x != 0 })
				if err := h.checkShared(v); err != nil && !erased { // Erase zeroes a deleted node's vector
					return fmt.Errorf("%w: the vector of key %d: %w", ErrCorrupt, h.keys[i], err)
				}
				h.setRef(uint32(i), unsafe.Pointer(unsafe.SliceData(v)))
				h.setCode(uint32(i)) // with quantize; as Quantize would
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	checkBlock := func(id int, blk []uint32, mmax int) error {
		if int(blk[0]) > mmax {
			return corrupt("node %d has %d neighbours, at most %d", id, blk[0], mmax)
		}
		for _, nb := range blk[1 : 1+blk[0]] {
			if int(nb) >= n || int(nb) == id {
				return corrupt("node %d links to %d (n = %d)", id, nb, n)
			}
		}
		return nil
	}
	p := 0
	topLevel := -1
	for id := 0; id < n; id++ {
		if err := checkBlock(id, h.list(uint32(id), 0), m0); err != nil {
			return nil, err
		}
		l := int(h.levels[id])
		topLevel = max(topLevel, l)
		if l == 0 {
			continue
		}
		u := h.newUpper(uint32(id), l)
		for j := range u {
			u[j] = le.Uint32(upper[p:])
			p += 4
		}
		for lv := 1; lv <= l; lv++ {
			blk := h.list(uint32(id), lv)
			if err := checkBlock(id, blk, m); err != nil {
				return nil, err
			}
			for _, nb := range blk[1 : 1+blk[0]] {
				if int(h.levels[nb]) < lv {
					return nil, corrupt("node %d links at level %d to node %d of level %d", id, lv, nb, h.levels[nb])
				}
			}
		}
	}
	switch entry, tl := uint32(top), int(top>>32)-1; {
	case n == 0 && top != 0:
		return nil, corrupt("entry point in an empty index")
	case n > 0 && (int(entry) >= n || tl != topLevel || int(h.levels[entry]) != tl):
		return nil, corrupt("entry point %d at level %d does not match the graph (top level %d)", entry, tl, topLevel)
	}
	h.top.Store(top)
	h.rng = rand.New(rand.NewPCG(seed^uint64(n), seed^0x9E3779B97F4A7C15))
	return h, nil
}

// readWords fills dst with little-endian 32-bit words from r, through buf
// a chunk at a time, adding the bytes to the CRC-32C crc and backing each
// chunk's elements with memory (populate, offheap.Array.Populate) just
// before writing them.
func readWords(r io.Reader, buf []byte, dst []uint32, crc *uint32, populate func(int)) error {
	le := binary.LittleEndian
	for done := 0; done < len(dst); {
		k := min(len(buf)/4, len(dst)-done)
		if _, err := io.ReadFull(r, buf[:4*k]); err != nil {
			return fmt.Errorf("after %d of %d bytes: %w", 4*done, 4*len(dst), err)
		}
		*crc = crc32.Update(*crc, castagnoli, buf[:4*k])
		populate(done + k)
		for i := range k {
			dst[done+i] = le.Uint32(buf[4*i:])
		}
		done += k
	}
	return nil
}

// readUpTo reads k bytes, or fewer when r ends first (with a nil error),
// into a buffer that starts at 4 MiB (or k) and doubles as bytes arrive:
// at most twice what arrived is allocated, in a few steps rather than
// io.ReadAll's many small ones (which, for an index's node arrays, cost
// more than reading them).
func readUpTo(r io.Reader, k uint64) ([]byte, error) {
	b := make([]byte, 0, min(k, 4<<20))
	for uint64(len(b)) < k {
		if len(b) == cap(b) {
			b = slices.Grow(b, int(min(uint64(len(b)), k-uint64(len(b)))))
		}
		n, err := r.Read(b[len(b):int(min(uint64(cap(b)), k))])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}
