package store

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tidemark/tidemark/internal/crc32c"
)

// Record framing, all integers little-endian:
//
//	offset 0  u32  payload length n
//	offset 4  u32  CRC-32C (Castagnoli) of seq (8 bytes, LE) followed by the payload
//	offset 8  u64  sequence number
//	offset 16 [n]byte payload
const headerSize = 16

// segExt is the file-name extension of a segment; the name is the first
// sequence number of the segment in segDigits decimal digits.
const (
	segExt    = ".wal"
	segDigits = 20
)

var castagnoli = crc32c.Table

// recordCRC returns the CRC-32C of seq (8 bytes, little-endian) followed by
// payload.
func recordCRC(seq uint64, payload []byte) uint32 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seq)
	return crc32.Update(crc32.Update(0, castagnoli, b[:]), castagnoli, payload)
}

// putHeader fills h (headerSize bytes) for a record.
func putHeader(h []byte, seq uint64, payload []byte) {
	binary.LittleEndian.PutUint32(h[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[4:], recordCRC(seq, payload))
	binary.LittleEndian.PutUint64(h[8:], seq)
}

// segmentName returns the file name of the segment whose first record has
// sequence number first.
func segmentName(first uint64) string {
	return fmt.Sprintf("%0*d%s", segDigits, first, segExt)
}

// parseSegmentName returns the first sequence number encoded in a segment
// file name, and whether name is one.
func parseSegmentName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, segExt)
	if !ok || len(digits) != segDigits {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	first, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || first == 0 {
		return 0, false
	}
	return first, true
}

// listSegments returns the first sequence numbers of the segments in dir,
// ascending.
func listSegments(dir string) ([]uint64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []uint64
	for _, e := range entries {
		if first, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			segs = append(segs, first)
		}
	}
	slices.Sort(segs)
	return segs, nil
}

// scanResult is what scanSegment learned about one segment.
type scanResult struct {
	lastSeq  uint64 // last intact record, first-1 when there is none
	validEnd int64  // end of the last intact record
	damage   string // why the scan stopped before the end; "" if it did not
	badSeq   bool   // the record at validEnd is intact but out of sequence
}

// readBuffers are the read buffer and payload buffer that the segments of
// one Open or Replay share.
type readBuffers struct {
	br  *bufio.Reader
	buf []byte
}

// reader returns the shared bufio.Reader reset to read r.
func (b *readBuffers) reader(r io.Reader) *bufio.Reader {
	if b.br == nil {
		b.br = bufio.NewReaderSize(r, readBufferSize)
	} else {
		b.br.Reset(r)
	}
	return b.br
}

// payload returns the shared payload buffer resized to n bytes.
func (b *readBuffers) payload(n int64) []byte {
	if int64(cap(b.buf)) < n {
		b.buf = make([]byte, n)
	}
	b.buf = b.buf[:n]
	return b.buf
}

const readBufferSize = 256 << 10

// scanSegment reads the records of a segment of size bytes whose name says
// its first record is first. It stops at the first record that is not
// intact and in sequence and reports it in the result; only I/O errors
// are returned as errors.
func scanSegment(r io.ReaderAt, size int64, first uint64, rb *readBuffers) (scanResult, error) {
	br := rb.reader(io.NewSectionReader(r, 0, size))
	res := scanResult{lastSeq: first - 1}
	var hdr [headerSize]byte
	for {
		rem := size - res.validEnd
		if rem == 0 {
			return res, nil
		}
		if rem < headerSize {
			res.damage = fmt.Sprintf("short header (%d bytes)", rem)
			return res, nil
		}
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return res, err
		}
		n := int64(binary.LittleEndian.Uint32(hdr[0:]))
		crc := binary.LittleEndian.Uint32(hdr[4:])
		seq := binary.LittleEndian.Uint64(hdr[8:])
		if n > rem-headerSize {
			res.damage = fmt.Sprintf("short record (length %d, %d bytes left)", n, rem-headerSize)
			return res, nil
		}
		buf := rb.payload(n)
		if _, err := io.ReadFull(br, buf); err != nil {
			return res, err
		}
		if recordCRC(seq, buf) != crc {
			res.damage = "CRC mismatch"
			return res, nil
		}
		if seq != res.lastSeq+1 {
			res.damage = fmt.Sprintf("intact record with sequence %d, want %d", seq, res.lastSeq+1)
			res.badSeq = true
			return res, nil
		}
		res.lastSeq = seq
		res.validEnd += headerSize + n
	}
}

// findIntact looks in tail, the bytes from a damaged record to the end of
// a segment, for an intact record that could belong after sequence number
// after: one whose CRC matches and whose sequence number lies in the range
// the bytes before it leave room for. It returns the offset of the first
// one in tail, or -1.
func findIntact(tail []byte, after uint64) int {
	for i := 1; i+headerSize <= len(tail); i++ {
		seq := binary.LittleEndian.Uint64(tail[i+8:])
		// The record with sequence after+k starts at least (k-1)·headerSize
		// bytes into tail.
		if seq <= after || seq-after-1 > uint64(i/headerSize) {
			continue
		}
		n := int(binary.LittleEndian.Uint32(tail[i:]))
		if n > len(tail)-i-headerSize {
			continue
		}
		if recordCRC(seq, tail[i+headerSize:i+headerSize+n]) == binary.LittleEndian.Uint32(tail[i+4:]) {
			return i
		}
	}
	return -1
}

// segmentReader reads the records of one segment in order for Replay,
// checking each.
type segmentReader struct {
	name   string
	br     *bufio.Reader
	rb     *readBuffers
	off    int64
	size   int64 // the segment file's size: no length beyond it is trusted
	expect uint64
	hdr    [headerSize]byte
}

// next returns the next record. The payload is valid until the next call.
func (s *segmentReader) next() (uint64, []byte, error) {
	if _, err := io.ReadFull(s.br, s.hdr[:]); err != nil {
		return 0, nil, s.readErr(err)
	}
	n := binary.LittleEndian.Uint32(s.hdr[0:])
	crc := binary.LittleEndian.Uint32(s.hdr[4:])
	seq := binary.LittleEndian.Uint64(s.hdr[8:])
	if int64(n) > s.size-s.off-headerSize {
		return 0, nil, fmt.Errorf("%w: %s: record at offset %d claims %d bytes, the segment holds %d", ErrCorrupt, s.name, s.off, n, s.size-s.off-headerSize)
	}
	buf := s.rb.payload(int64(n))
	if _, err := io.ReadFull(s.br, buf); err != nil {
		return 0, nil, s.readErr(err)
	}
	if recordCRC(seq, buf) != crc {
		return 0, nil, fmt.Errorf("%w: %s: CRC mismatch in record at offset %d", ErrCorrupt, s.name, s.off)
	}
	if seq != s.expect {
		return 0, nil, fmt.Errorf("%w: %s: record at offset %d has sequence %d, want %d", ErrCorrupt, s.name, s.off, seq, s.expect)
	}
	s.off += headerSize + int64(n)
	s.expect++
	return seq, buf, nil
}

func (s *segmentReader) readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %s: record %d missing or cut short at offset %d", ErrCorrupt, s.name, s.expect, s.off)
	}
	return err
}

// syncDir fsyncs a directory so that the entries created, renamed or
// removed in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdirDurable creates dir (and its missing parents) if it does not exist,
// and fsyncs the parent of dir so that its entry is durable; with sync
// false it only creates it.
func mkdirDurable(dir string, sync bool) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if !sync {
		return nil
	}
	return syncDir(filepath.Dir(filepath.Clean(dir)))
}

func segmentPath(dir string, first uint64) string {
	return filepath.Join(dir, segmentName(first))
}
