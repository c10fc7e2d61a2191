package tidemark

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/tidemark/tidemark/internal/crc32c"
	"github.com/tidemark/tidemark/internal/wire"
)

// rowsPerChunk is how many snapshot rows decodeRows hands a parser at a
// time.
const rowsPerChunk = 256

// frameChunk is rows [first, first+n) of a snapshot collection: their frames
// as read, then as parsed. Chunks are reused, buffers and all.
type frameChunk struct {
	first, n int
	frames   [rowsPerChunk][]byte
	rows     [rowsPerChunk]parsedRow
	errs     [rowsPerChunk]error
	readErr  error // reading the frames failed at row first+n
	fault    error // the mapped file faulted while the rows were parsed
	// From a mapped body: the bytes the frames span, each frame's end in
	// them, and their CRC-32C, computed by the parser as it goes.
	span   []byte
	ends   [rowsPerChunk]int
	crc    uint32
	parsed chan struct{} // receives when rows and errs are filled
}

// decodeRows reads the nrows row frames of a snapshot collection (format
// v) into the ledger, naming a bad row through bad. Frames are read in
// order; parsing a row needs nothing of the ledger (parseRow), so with
// more than one core, chunks of rows are parsed on other goroutines while
// the next frames are read, and each chunk is added to the ledger
// (addRow) in order, here. Memory in flight is bounded by a fixed set of
// reused chunks. A parser decodes each row's vector into its place in the
// column store, and, from a mapped body, checksums the chunk's bytes as
// it parses them: each byte of the body is read from memory once.
func (l *ledger) decodeRows(r snapSource, v byte, nrows int, bad func(string, error) error) error {
	// Row j's first belief is belief base+j (addRow; the rows' later
	// beliefs come after all of them): where the column store already
	// has room for every row, a row's vector is parsed straight into its
	// place, by whichever goroutine parses the row.
	var slots []float32
	base, d := l.batch.Len(), l.opts.Dim
	if all := l.batch.Vectors[:cap(l.batch.Vectors)]; len(all) >= (base+nrows)*d {
		slots = all[base*d : (base+nrows)*d]
	}
	slot := func(j int) []float32 {
		if slots == nil {
			return nil
		}
		return slots[j*d : (j+1)*d : (j+1)*d]
	}
	var later []int
	parsers := min(runtime.GOMAXPROCS(0), nrows/rowsPerChunk)
	if parsers <= 1 {
		var buf []byte
		var p parsedRow
		for j := range nrows {
			var err error
			if buf, err = r.frame(buf); err != nil {
				return err
			}
			fr := wire.NewReader(buf)
			l.parseRow(fr, v, nrows, &p, slot(j))
			if fr.Err() != nil {
				return bad(fmt.Sprintf("row %d", j), fr.Err())
			}
			if l.addRow(j, nrows, v, &p) {
				later = append(later, j)
			}
		}
		l.addLaterBeliefs(later)
		return nil
	}
	// A mapped body's CRC is computed by the parsers, each chunk's as it
	// parses it (the bytes then come from memory once), and folded in
	// here in order.
	ms, _ := r.(*mappedSource)
	if ms != nil {
		ms.deferCRC = true
	}
	free := make(chan *frameChunk, 2*parsers+1)
	for range cap(free) {
		free <- &frameChunk{parsed: make(chan struct{}, 1)}
	}
	work := make(chan *frameChunk, cap(free))
	ordered := make(chan *frameChunk, cap(free))
	quit := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(quit)
	for range parsers {
		wg.Go(func() {
			for ch := range work {
				ch.fault = r.guarded(func() error {
					ch.crc = 0
					from := 0
					for i := range ch.n {
						if ch.span != nil {
							ch.crc = crc32.Update(ch.crc, crc32c.Table, ch.span[from:ch.ends[i]])
							from = ch.ends[i]
						}
						fr := wire.NewReader(ch.frames[i])
						l.parseRow(fr, v, nrows, &ch.rows[i], slot(ch.first+i))
						ch.errs[i] = fr.Err()
					}
					return nil
				})
				ch.parsed <- struct{}{}
			}
		})
	}
	// The reader: fills free chunks with frames, in order, until the rows
	// or the frames end, or the adder below stops.
	wg.Go(func() {
		defer close(ordered)
		defer close(work)
		for first := 0; first < nrows; first += rowsPerChunk {
			var ch *frameChunk
			select {
			case ch = <-free:
			case <-quit:
				return
			}
			ch.first, ch.n, ch.span = first, 0, nil
			var start int
			if ms != nil {
				start = ms.off
			}
			ch.readErr = r.guarded(func() error {
				for ch.n < min(rowsPerChunk, nrows-first) {
					b, err := r.frame(ch.frames[ch.n])
					if err != nil {
						return err
					}
					ch.frames[ch.n] = b
					if ms != nil {
						ch.ends[ch.n] = ms.off - start
					}
					ch.n++
				}
				return nil
			})
			if ms != nil {
				ch.span = ms.body[start:ms.off] // the whole frames read
			}
			work <- ch // never blocks: at most cap(free) chunks exist
			ordered <- ch
			if ch.readErr != nil {
				return
			}
		}
	})
	for ch := range ordered {
		<-ch.parsed
		if ch.fault != nil {
			return ch.fault
		}
		if ms != nil {
			ms.addCRC(ch.crc, len(ch.span))
		}
		for i := range ch.n {
			if err := ch.errs[i]; err != nil {
				return bad(fmt.Sprintf("row %d", ch.first+i), err)
			}
			if l.addRow(ch.first+i, nrows, v, &ch.rows[i]) {
				later = append(later, ch.first+i)
			}
		}
		if ch.readErr != nil {
			return ch.readErr
		}
		free <- ch
	}
	// Every chunk was parsed (and the parsers write nothing else): the
	// column store may grow now.
	l.addLaterBeliefs(later)
	if ms != nil {
		ms.deferCRC = false // the reader has stopped: ms is this goroutine's again
	}
	return nil
}

// snapSource is what a snapshot body is read from: a stream
// (streamSource), or the file mapped into memory (mappedSource).
type snapSource interface {
	io.Reader
	io.ByteReader
	// frame returns the next frame: in buf (reused when large enough), or
	// where it lies in the mapped file.
	frame(buf []byte) ([]byte, error)
	// guarded runs f and returns its error, or, where the body is mapped,
	// an error wrapping ErrCorrupt when reading it faults (the file cut
	// short or unreadable). Every goroutine that reads the body's bytes
	// does so under it.
	guarded(f func() error) error
}

// streamSource reads a snapshot body through a bufio.Reader.
type streamSource struct{ *bufio.Reader }

// frame reads one frame into buf (reused when large enough). It grows the
// buffer as the bytes arrive, a megabyte at a time, so a hostile length
// costs at most what the input holds, not what it claims.
func (s streamSource) frame(buf []byte) ([]byte, error) {
	n, err := binary.ReadUvarint(s)
	if err != nil {
		return nil, fmt.Errorf("%w: snapshot frame: %w", ErrCorrupt, err)
	}
	if n > maxFrame {
		return nil, fmt.Errorf("%w: snapshot frame of %d bytes", ErrCorrupt, n)
	}
	buf = buf[:0]
	for uint64(len(buf)) < n {
		k := len(buf)
		step := int(min(n-uint64(k), 1<<20))
		buf = slices.Grow(buf, step)[:k+step]
		if _, err := io.ReadFull(s, buf[k:]); err != nil {
			return nil, fmt.Errorf("%w: snapshot frame: %w", ErrCorrupt, err)
		}
	}
	return buf, nil
}

func (streamSource) guarded(f func() error) error { return f() }

// mappedSource reads a snapshot body mapped into memory
// (store.MapSnapshot): its frames are where they lie, not copied. It
// computes the body's CRC-32C as it goes, so that the body is read from
// memory once: crc covers body[:crcOff], continued from the header's
// (store.MappedSnapshot.Seed). While decodeRows reads rows (deferCRC),
// the frames it takes are checked by its parsers, a chunk at a time, and
// folded in, in order (addCRC).
type mappedSource struct {
	body     []byte
	off      int // body[:off] is read
	crc      uint32
	crcOff   int
	deferCRC bool
}

// advance marks n more bytes read.
func (m *mappedSource) advance(n int) {
	m.off += n
	if !m.deferCRC {
		m.crc = crc32.Update(m.crc, crc32c.Table, m.body[m.crcOff:m.off])
		m.crcOff = m.off
	}
}

// addCRC folds in crc, the CRC-32C of the next n bytes read while deferCRC.
func (m *mappedSource) addCRC(crc uint32, n int) {
	m.crc = crc32c.Combine(m.crc, crc, int64(n))
	m.crcOff += n
}

func (m *mappedSource) Read(p []byte) (int, error) {
	if m.off == len(m.body) {
		return 0, io.EOF
	}
	n := copy(p, m.body[m.off:])
	m.advance(n)
	return n, nil
}

func (m *mappedSource) ReadByte() (byte, error) {
	if m.off == len(m.body) {
		return 0, io.EOF
	}
	c := m.body[m.off]
	m.advance(1)
	return c, nil
}

// frame returns the next frame where it lies (capped: an append to it
// cannot reach the mapping), with streamSource.frame's errors.
func (m *mappedSource) frame([]byte) ([]byte, error) {
	rest := m.body[m.off:]
	n, k := binary.Uvarint(rest)
	switch {
	case k == 0 && len(rest) == 0:
		return nil, fmt.Errorf("%w: snapshot frame: %w", ErrCorrupt, io.EOF)
	case k == 0:
		return nil, fmt.Errorf("%w: snapshot frame: %w", ErrCorrupt, io.ErrUnexpectedEOF)
	case k < 0:
		return nil, fmt.Errorf("%w: snapshot frame: the length overflows 64 bits", ErrCorrupt)
	case n > maxFrame:
		return nil, fmt.Errorf("%w: snapshot frame of %d bytes", ErrCorrupt, n)
	case n > uint64(len(rest)-k):
		return nil, fmt.Errorf("%w: snapshot frame: %w", ErrCorrupt, io.ErrUnexpectedEOF)
	}
	f := rest[k : k+int(n) : k+int(n)]
	m.advance(k + int(n))
	return f, nil
}

func (*mappedSource) guarded(f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			fault, ok := r.(interface{ Addr() uintptr })
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("%w: snapshot: reading the mapped file faulted at %#x (the file was cut short, or is unreadable)", ErrCorrupt, fault.Addr())
		}
	}()
	return f()
}
