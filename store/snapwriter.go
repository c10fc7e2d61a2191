package store

import (
	"os"
	"unsafe"
)

// directAlign is the alignment of a direct write's memory, offset and
// length: the logical block size of nearly every device (512 or 4096
// bytes) divides it. A device that wants more refuses the first direct
// write, and the writer falls back to buffered writes.
const directAlign = 4096

// snapBlock is the size of snapWriter's buffer, a multiple of
// directAlign.
const snapBlock = 4 << 20

// snapWriter writes a snapshot file in blocks (snapBlock with direct I/O,
// bufferedBlock without). For
// WriteSnapshotDirect, where the system allows, whole blocks go through a
// second descriptor opened with O_DIRECT, past the page cache. On a host
// whose memory is under pressure, filling the page cache costs the kernel
// several times the disk's own time (3.4 GB on the development VM: 5–9 s
// buffered, 4.8–8.3 s of it system time, against 1.5–1.7 s direct), and
// writers wait for a checkpoint (one of 1M × 768 memories took 5.3–10.4 s
// buffered, 2.6–3.5 s direct). Direct I/O moves that cost to the first
// read of the file (a direct-written 340 MB file took 0.59 s to read, all
// system time, and 0.03 s the second time), and more: in `tidemark bench
// scale`, with every snapshot direct, Open after Close at 1M took 6.4 s
// against 2.9 s, its file read just before from a cold cache. So only a
// snapshot that is likely replaced unread — the DB's background
// checkpoints, not Close's — is written directly. The unaligned tail,
// and every block after a direct write is refused, go through the file's
// ordinary descriptor; the bytes on disk are the same either way.
//
// The writer fills one block while the block before it is written, on
// another goroutine: a checkpoint's encoding and its disk writes overlap
// (a 1M × 768 checkpoint spent about 1.6 s encoding and 1.7 s waiting for
// the disk, one after the other).
type snapWriter struct {
	f      *os.File // the temporary file: the tail, fallback writes, fsync
	direct *os.File // the same file opened with O_DIRECT; nil when not used
	buf    []byte   // the block being filled, directAlign-aligned
	spare  []byte   // the other block: being written while pending is set
	n      int      // bytes in buf
	off    int64    // file offset of buf[0]
	// pending receives the result of the block being written; nil when
	// none is. While it is set, only that write uses direct and
	// directBytes.
	pending chan error
	// directBytes counts the bytes written with direct I/O (tests).
	directBytes int64
}

// newSnapWriter writes to f, directly when asked and openDirect allows.
func newSnapWriter(f *os.File, direct bool) *snapWriter {
	w := &snapWriter{f: f}
	if direct {
		if d, err := openDirect(f.Name()); err == nil {
			// The same file, not one renamed over its name meanwhile.
			a, errA := f.Stat()
			b, errB := d.Stat()
			if errA == nil && errB == nil && os.SameFile(a, b) {
				w.direct = d
			} else {
				d.Close()
			}
		}
	}
	size := bufferedBlock
	if w.direct != nil {
		size = snapBlock
	}
	w.buf, w.spare = alignedBlock(size), alignedBlock(size)
	return w
}

// alignedBlock returns size bytes starting at a directAlign boundary.
func alignedBlock(size int) []byte {
	raw := make([]byte, size+directAlign)
	skip := int((directAlign - uintptr(unsafe.Pointer(&raw[0]))%directAlign) % directAlign)
	return raw[skip : skip+size : skip+size]
}

// bufferedBlock is the block of a snapWriter without direct I/O.
const bufferedBlock = 1 << 20

// directWriteAt is the direct write (a test refuses it to check the
// fallback).
var directWriteAt = func(f *os.File, p []byte, off int64) (int, error) { return f.WriteAt(p, off) }

func (w *snapWriter) Write(p []byte) (int, error) {
	done := 0
	for len(p) > 0 {
		k := copy(w.buf[w.n:], p)
		w.n += k
		done += k
		p = p[k:]
		if w.n == len(w.buf) {
			if err := w.handOff(); err != nil {
				return done, err
			}
		}
	}
	return done, nil
}

// handOff starts writing the full block on another goroutine, once the
// block before it is written, and goes on filling the other one. An error
// of that write is returned by the next handOff or by finish.
func (w *snapWriter) handOff() error {
	if err := w.wait(); err != nil {
		return err
	}
	block, off := w.buf, w.off
	done := make(chan error, 1)
	go func() { done <- w.writeBlock(block, off) }()
	w.pending = done
	w.off += int64(len(block))
	w.buf, w.spare, w.n = w.spare, block, 0
	return nil
}

// wait waits for the block being written, if any, and returns its error.
func (w *snapWriter) wait() error {
	if w.pending == nil {
		return nil
	}
	err := <-w.pending
	w.pending = nil
	return err
}

// writeBlock writes p at off, directly when p is aligned and direct I/O is
// on.
func (w *snapWriter) writeBlock(p []byte, off int64) error {
	if w.direct != nil && len(p)%directAlign == 0 && len(p) > 0 {
		k, err := directWriteAt(w.direct, p, off)
		if err == nil {
			w.directBytes += int64(k)
			return nil
		}
		// Refused (an alignment this device does not take, a file
		// system without direct I/O): the rest goes through the page
		// cache, from where the direct write stopped.
		w.direct.Close()
		w.direct = nil
		_, err = w.f.WriteAt(p[k:], off+int64(k))
		return err
	}
	_, err := w.f.WriteAt(p, off)
	return err
}

// finish writes what is buffered, once the block before it is written:
// its aligned part like a block, the rest through the page cache. The
// caller then syncs and closes f.
func (w *snapWriter) finish() error {
	if err := w.wait(); err != nil {
		return err
	}
	a := w.n / directAlign * directAlign
	for _, p := range [][]byte{w.buf[:a], w.buf[a:w.n]} {
		if len(p) == 0 {
			continue
		}
		if err := w.writeBlock(p, w.off); err != nil {
			return err
		}
		w.off += int64(len(p))
	}
	w.n = 0
	return w.closeDirect()
}

// closeDirect waits for the block being written, if any, and closes the
// direct descriptor, if any.
func (w *snapWriter) closeDirect() error {
	w.wait()
	if w.direct == nil {
		return nil
	}
	err := w.direct.Close()
	w.direct = nil
	return err
}
