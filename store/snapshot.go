package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Snapshot file layout, all integers little-endian:
//
//	offset 0   [8]byte magic "TDMKSNAP"
//	offset 8   u32     version (1)
//	offset 12  u32     flags (0)
//	offset 16  u64     WAL sequence number the snapshot includes
//	offset 24  body
//	trailer    u64     body length
//	           u32     CRC-32C of everything before it (header, body, length)
const (
	snapMagic       = "TDMKSNAP"
	snapVersion     = 1
	snapHeaderSize  = 24
	snapTrailerSize = 12
)

// WriteSnapshot writes a snapshot named name in dir, tagged with seq, the
// last WAL sequence number whose effect the body includes; write produces
// the body. The file appears atomically: it is written to a temporary file
// in dir, fsynced, renamed over name and the directory fsynced, so that
// after a crash name holds either the previous snapshot or this one, whole.
// An error from write aborts the snapshot and is returned wrapped;
// the previous snapshot, if any, is left in place.
//
// name is a plain file name (no separator, not starting with '.', not a
// WAL segment or lock file name). At most one WriteSnapshot per name may
// run at a time; temporary files left by an earlier crash are removed.
func WriteSnapshot(dir, name string, seq uint64, write func(io.Writer) error) error {
	return writeSnapshot(dir, name, seq, write, false)
}

// WriteSnapshotDirect is WriteSnapshot with the file's whole blocks
// written with direct I/O where the system allows (Linux), past the page
// cache (snapWriter says why), for a snapshot that will likely be
// replaced before it is read: writing it costs less, and the first read
// of it comes from the disk and costs more.
func WriteSnapshotDirect(dir, name string, seq uint64, write func(io.Writer) error) error {
	return writeSnapshot(dir, name, seq, write, true)
}

func writeSnapshot(dir, name string, seq uint64, write func(io.Writer) error, direct bool) (err error) {
	if err := checkSnapshotName(name); err != nil {
		return err
	}
	if err := mkdirDurable(dir, true); err != nil {
		return fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	tmpPrefix := "." + name + ".tmp-"
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), tmpPrefix) {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	tmp, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	bw := newSnapWriter(tmp, direct)
	defer func() {
		if err != nil {
			bw.closeDirect()
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	cw := &countingWriter{w: bw, h: crc32.New(castagnoli)}
	var hdr [snapHeaderSize]byte
	copy(hdr[:], snapMagic)
	binary.LittleEndian.PutUint32(hdr[8:], snapVersion)
	binary.LittleEndian.PutUint64(hdr[16:], seq)
	if _, err := cw.Write(hdr[:]); err != nil {
		return fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	if err := write(cw); err != nil {
		return fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(cw.n-snapHeaderSize))
	if _, err := cw.Write(n[:]); err != nil {
		return fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	var crc [4]byte
	binary.LittleEndian.PutUint32(crc[:], cw.h.Sum32())
	if _, err := bw.Write(crc[:]); err != nil {
		return fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	if err := bw.finish(); err != nil {
		return fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	if err := syncDir(dir); err != nil {
		// The rename happened; only its durability is in doubt.
		return fmt.Errorf("store: snapshot %s: sync directory: %w", name, err)
	}
	return nil
}

// ReadSnapshot reads the snapshot name in dir whole, checks it, and
// returns the WAL sequence number it was tagged with and its body. A
// damaged, truncated or foreign file is an error wrapping ErrCorrupt; a
// missing one wraps fs.ErrNotExist. For a large body, OpenSnapshot streams
// it instead of holding it in memory.
func ReadSnapshot(dir, name string) (seq uint64, body []byte, err error) {
	if err := checkSnapshotName(name); err != nil {
		return 0, nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return 0, nil, fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	if len(b) < snapHeaderSize+snapTrailerSize {
		return 0, nil, fmt.Errorf("%w: snapshot %s: %d bytes, shorter than header and trailer", ErrCorrupt, name, len(b))
	}
	seq, n, want, err := checkSnapshot(name, int64(len(b)), b[:snapHeaderSize], b[len(b)-snapTrailerSize:])
	if err != nil {
		return 0, nil, err
	}
	if crc32.Checksum(b[:len(b)-4], castagnoli) != want {
		return 0, nil, crcMismatch(name)
	}
	return seq, b[snapHeaderSize : snapHeaderSize+n : snapHeaderSize+n], nil
}

// SnapshotReader streams the body of a snapshot, checking it as it goes.
// It is not buffered: each Read reads the file (and sums what it read), so
// a caller that reads in small pieces wraps it in a bufio.Reader, which
// then is the only copy between the page cache and the caller (a buffer
// here too would copy every byte once more: 3.4 GB for a million 768-d
// memories). It is not safe for concurrent use.
type SnapshotReader struct {
	// Seq is the WAL sequence number the snapshot was tagged with.
	Seq uint64
	// Size is the length of the body in bytes.
	Size int64
	f    *os.File
	r    io.Reader
}

// OpenSnapshot opens the snapshot name in dir and checks its header and
// trailer (magic, version, body length), and returns a reader positioned
// at the start of its body. The file's CRC-32C is computed as the body is
// read: at the end of the body Read returns io.EOF when it matches the
// trailer's and an error wrapping ErrCorrupt when it does not. So the
// file is read once, not once to check and once to use, and a caller
// must read the body to io.EOF before it trusts anything built from it
// (a damaged body may parse; its end is refused). Errors are as for
// ReadSnapshot. The caller must Close the reader. Snapshots are never
// rewritten in place, so the body read is the body checked.
func OpenSnapshot(dir, name string) (*SnapshotReader, error) {
	f, err := openSnapshotFile(dir, name)
	if err != nil {
		return nil, err
	}
	s, err := openSnapshot(name, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// openSnapshotFile checks name and opens the snapshot file.
func openSnapshotFile(dir, name string) (*os.File, error) {
	if err := checkSnapshotName(name); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	return f, nil
}

func openSnapshot(name string, f *os.File) (*SnapshotReader, error) {
	e, err := readEnds(name, f)
	if err != nil {
		return nil, err
	}
	// The CRC is checked at the end of the body (checkedBody).
	h := crc32.New(castagnoli)
	h.Write(e.hdr[:])
	body := &checkedBody{r: io.NewSectionReader(f, snapHeaderSize, e.n), h: h, tail: e.trailer[:8], want: e.want, name: name}
	return &SnapshotReader{Seq: e.seq, Size: e.n, f: f, r: body}, nil
}

// snapEnds is a snapshot file's header and trailer, checked (readEnds).
type snapEnds struct {
	size    int64 // of the file
	hdr     [snapHeaderSize]byte
	trailer [snapTrailerSize]byte
	seq     uint64 // the tagged WAL sequence number
	n       int64  // the body's length
	want    uint32 // the CRC-32C the trailer gives
}

// readEnds reads and checks the header and trailer of snapshot file f.
func readEnds(name string, f *os.File) (*snapEnds, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	e := &snapEnds{size: st.Size()}
	if e.size < snapHeaderSize+snapTrailerSize {
		return nil, fmt.Errorf("%w: snapshot %s: %d bytes, shorter than header and trailer", ErrCorrupt, name, e.size)
	}
	if _, err := f.ReadAt(e.hdr[:], 0); err != nil {
		return nil, fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	if _, err := f.ReadAt(e.trailer[:], e.size-snapTrailerSize); err != nil {
		return nil, fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	if e.seq, e.n, e.want, err = checkSnapshot(name, e.size, e.hdr[:], e.trailer[:]); err != nil {
		return nil, err
	}
	return e, nil
}

// MappedSnapshot is a snapshot file mapped into memory (MapSnapshot).
type MappedSnapshot struct {
	// Seq is the WAL sequence number the snapshot was tagged with.
	Seq uint64
	// Body is the snapshot's body, read-only, until Close. Reading it
	// faults (SIGBUS) where the file has been cut short meanwhile or its
	// disk fails: a reader that must survive that runs with
	// runtime/debug.SetPanicOnFault and recovers.
	Body []byte
	name string
	data []byte // the mapping, the whole file
	ends *snapEnds
}

// MapSnapshot maps the snapshot name in dir read-only and checks its
// header and trailer as OpenSnapshot does. The pages come from the page
// cache as Body is read: no copy is made, where OpenSnapshot's reader
// copies every byte once (3.4 GB for a million 768-d memories). The body
// is not checked: Check computes its CRC, and may run while Body is read,
// but nothing built from Body may be trusted before Check returns nil.
// Where files cannot be mapped it returns an error wrapping
// errors.ErrUnsupported. The caller must Close it.
func MapSnapshot(dir, name string) (*MappedSnapshot, error) {
	f, err := openSnapshotFile(dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close() // a mapping outlives its descriptor
	e, err := readEnds(name, f)
	if err != nil {
		return nil, err
	}
	data, err := mapFile(f, e.size)
	if err != nil {
		return nil, fmt.Errorf("store: snapshot %s: %w", name, err)
	}
	return &MappedSnapshot{Seq: e.seq, Body: data[snapHeaderSize : snapHeaderSize+e.n : snapHeaderSize+e.n], name: name, data: data, ends: e}, nil
}

// Check computes the CRC-32C of the file (from the header read by
// MapSnapshot, the mapped body, and the trailer's length) and returns an
// error wrapping ErrCorrupt unless it is the trailer's. Like any reader of
// Body, it faults where the file was cut short.
func (m *MappedSnapshot) Check() error {
	return m.CheckSum(crc32.Update(m.Seed(), castagnoli, m.Body))
}

// Seed is the CRC-32C of the file's header: a caller that checks the body
// as it reads it (rather than with Check, a second pass) continues from it
// and gives the result to CheckSum.
func (m *MappedSnapshot) Seed() uint32 { return crc32.Checksum(m.ends.hdr[:], castagnoli) }

// CheckSum returns nil when crc, the CRC-32C of the header and the whole
// body (Seed continued over Body), makes the trailer's, and an error
// wrapping ErrCorrupt when it does not.
func (m *MappedSnapshot) CheckSum(crc uint32) error {
	if crc32.Update(crc, castagnoli, m.ends.trailer[:8]) != m.ends.want {
		return crcMismatch(m.name)
	}
	return nil
}

// Close unmaps the file; Body must not be read after it.
func (m *MappedSnapshot) Close() error {
	if m.data == nil {
		return nil
	}
	data := m.data
	m.data, m.Body = nil, nil
	return unmapFile(data)
}

// checkedBody reads a snapshot's body through its CRC: at the end it adds
// the trailer's length field and returns io.EOF only when the sum is the
// trailer's.
type checkedBody struct {
	r    io.Reader
	h    hash.Hash32
	tail []byte
	want uint32
	name string
	err  error // sticky, once the end is reached
}

func (b *checkedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	b.h.Write(p[:n])
	if err == io.EOF {
		b.h.Write(b.tail)
		b.err = io.EOF
		if b.h.Sum32() != b.want {
			b.err = crcMismatch(b.name)
		}
		if n > 0 {
			return n, nil
		}
		return 0, b.err
	}
	return n, err
}

// Read reads from the body; see OpenSnapshot for its end.
func (s *SnapshotReader) Read(p []byte) (int, error) { return s.r.Read(p) }

// Close closes the file.
func (s *SnapshotReader) Close() error { return s.f.Close() }

// checkSnapshot checks the header and trailer of a snapshot file of size
// bytes. It returns the tagged sequence number, the body length and the
// CRC-32C the trailer gives for everything but its own last 4 bytes.
func checkSnapshot(name string, size int64, hdr, trailer []byte) (seq uint64, n int64, crc uint32, err error) {
	if !bytes.Equal(hdr[:8], []byte(snapMagic)) {
		return 0, 0, 0, fmt.Errorf("%w: snapshot %s: bad magic %q", ErrCorrupt, name, hdr[:8])
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != snapVersion {
		return 0, 0, 0, fmt.Errorf("%w: snapshot %s: unsupported version %d", ErrCorrupt, name, v)
	}
	if f := binary.LittleEndian.Uint32(hdr[12:]); f != 0 {
		return 0, 0, 0, fmt.Errorf("%w: snapshot %s: unknown flags %#x", ErrCorrupt, name, f)
	}
	length := binary.LittleEndian.Uint64(trailer[0:])
	if length != uint64(size-snapHeaderSize-snapTrailerSize) {
		return 0, 0, 0, fmt.Errorf("%w: snapshot %s: body length %d in a file of %d bytes", ErrCorrupt, name, length, size)
	}
	return binary.LittleEndian.Uint64(hdr[16:]), int64(length), binary.LittleEndian.Uint32(trailer[8:]), nil
}

// crcMismatch is the error for a snapshot whose contents are not the ones
// its trailer's CRC was taken of.
func crcMismatch(name string) error {
	return fmt.Errorf("%w: snapshot %s: CRC mismatch", ErrCorrupt, name)
}

// countingWriter feeds a hash and counts bytes on their way to w.
type countingWriter struct {
	w io.Writer
	h hash.Hash32
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}

// checkSnapshotName rejects names that are not plain file names or that
// would collide with the files of a WAL or with temporary files.
func checkSnapshotName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
	case strings.ContainsAny(name, `/\`) || filepath.Base(name) != name:
	case strings.HasPrefix(name, "."):
	case name == lockName:
	default:
		if _, ok := parseSegmentName(name); !ok {
			return nil
		}
	}
	return fmt.Errorf("%w: snapshot name %q", ErrOptions, name)
}
