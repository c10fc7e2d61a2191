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

// snapWriter writes a snapshot file in snapBlock blocks. For
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
type snapWriter struct {
	f      *os.File // the temporary file: the tail, fallback writes, fsync
	direct *os.File // the same file opened with O_DIRECT; nil when not used
	buf    []byte   // snapBlock bytes, directAlign-aligned
	n      int      // bytes in buf
	off    int64    // file offset of buf[0]
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
	raw := make([]byte, size+directAlign)
	skip := int((directAlign - uintptr(unsafe.Pointer(&raw[0]))%directAlign) % directAlign)
	w.buf = raw[skip : skip+size : skip+size]
	return w
}

// bufferedBlock is the buffer of a snapWriter without direct I/O.
const bufferedBlock = 1 << 20

// directWriteAt is the direct write (a test refuses it to check the
// fallback).
var directWriteAt = func(f *os.File, p []byte, off int64) (int, error) { return f.WriteAt(p, off) }

func (w *snapWriter) Write(p []byte) (int, error) {
	done := 0
	for len(p) > 0 {
		if w.direct == nil && w.n == 0 && len(p) >= len(w.buf) {
			// Buffered I/O, nothing held and a buffer's worth or more to
			// write: as bufio does, no copy into the buffer first.
			k, err := w.f.WriteAt(p, w.off)
			w.off += int64(k)
			return done + k, err
		}
		k := copy(w.buf[w.n:], p)
		w.n += k
		done += k
		p = p[k:]
		if w.n == len(w.buf) {
			if err := w.writeOut(w.n); err != nil {
				return done, err
			}
		}
	}
	return done, nil
}

// writeOut writes buf[:n] at off, directly when n is aligned and direct
// I/O is on, and moves what is left of buf to its start.
func (w *snapWriter) writeOut(n int) error {
	p := w.buf[:n]
	if w.direct != nil && n%directAlign == 0 && n > 0 {
		k, err := directWriteAt(w.direct, p, w.off)
		if err == nil {
			w.directBytes += int64(k)
		} else {
			// Refused (an alignment this device does not take, a file
			// system without direct I/O): the rest goes through the
			// page cache, from where the direct write stopped.
			w.direct.Close()
			w.direct = nil
			if _, err := w.f.WriteAt(p[k:], w.off+int64(k)); err != nil {
				return err
			}
		}
	} else if _, err := w.f.WriteAt(p, w.off); err != nil {
		return err
	}
	w.off += int64(n)
	w.n = copy(w.buf, w.buf[n:w.n])
	return nil
}

// finish writes what is buffered: its aligned part like a block, the
// rest through the page cache. The caller then syncs and closes f.
func (w *snapWriter) finish() error {
	if a := w.n / directAlign * directAlign; a > 0 {
		if err := w.writeOut(a); err != nil {
			return err
		}
	}
	if w.n > 0 {
		if err := w.writeOut(w.n); err != nil {
			return err
		}
	}
	return w.closeDirect()
}

// closeDirect closes the direct descriptor, if any.
func (w *snapWriter) closeDirect() error {
	if w.direct == nil {
		return nil
	}
	err := w.direct.Close()
	w.direct = nil
	return err
}
