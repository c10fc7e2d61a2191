package tidemark

import (
	"bufio"
	"fmt"
	"runtime"
	"sync"

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
	readErr  error         // reading the frames failed at row first+n
	parsed   chan struct{} // receives when rows and errs are filled
}

// decodeRows reads the nrows row frames of a snapshot collection (format
// v) into the ledger, naming a bad row through bad. Frames are read in
// order; parsing a row needs nothing of the ledger (parseRow), so with
// more than one core, chunks of rows are parsed on other goroutines while
// the next frames are read, and each chunk is added to the ledger
// (addRow) in order, here. Memory in flight is bounded by a fixed set of
// reused chunks.
func (l *ledger) decodeRows(r *bufio.Reader, v byte, nrows int, bad func(string, error) error) error {
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
			if buf, err = readFrame(r, buf); err != nil {
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
				for i := range ch.n {
					fr := wire.NewReader(ch.frames[i])
					l.parseRow(fr, v, nrows, &ch.rows[i], slot(ch.first+i))
					ch.errs[i] = fr.Err()
				}
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
			ch.first, ch.n, ch.readErr = first, 0, nil
			for ch.n < min(rowsPerChunk, nrows-first) {
				b, err := readFrame(r, ch.frames[ch.n])
				if err != nil {
					ch.readErr = err
					break
				}
				ch.frames[ch.n] = b
				ch.n++
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
	return nil
}
