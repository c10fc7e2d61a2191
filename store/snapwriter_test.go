package store

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// snapshotFile writes body as snapshot "s" in a new directory, in writes
// of random sizes, with direct I/O where asked and possible, and returns
// the file's bytes.
func snapshotFile(t *testing.T, body []byte, seed uint64, direct bool) []byte {
	t.Helper()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(seed, 1))
	err := writeSnapshot(dir, "s", 7, func(w io.Writer) error {
		for p := body; len(p) > 0; {
			k := min(len(p), 1+r.IntN(3*directAlign))
			if r.IntN(20) == 0 {
				k = min(len(p), snapBlock+r.IntN(directAlign)) // a write past a whole block
			}
			if _, err := w.Write(p[:k]); err != nil {
				return err
			}
			p = p[k:]
		}
		return nil
	}, direct)
	if err != nil {
		t.Fatal(err)
	}
	seq, got, err := ReadSnapshot(dir, "s")
	if err != nil || seq != 7 || !bytes.Equal(got, body) {
		t.Fatalf("ReadSnapshot: seq %d, %d bytes (equal %v), %v; want %d bytes", seq, len(got), bytes.Equal(got, body), err, len(body))
	}
	b, err := os.ReadFile(filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Bodies around the alignment and the block size come back whole, and the
// file is byte for byte the one written without direct I/O, and the one
// written when the first direct write stops halfway, refused (the
// fallback).
func TestSnapshotDirectWrites(t *testing.T) {
	restoreHooks(t)
	haveDirect = probeDirect(t)
	r := rand.New(rand.NewPCG(3, 3))
	h := snapHeaderSize
	for _, n := range []int{0, 1, directAlign - h, directAlign - h - snapTrailerSize, directAlign + 1,
		snapBlock - h - snapTrailerSize, snapBlock - h, snapBlock, snapBlock + 17, 2*snapBlock + directAlign - h - snapTrailerSize, 9<<20 + 3} {
		body := make([]byte, n)
		for i := range body {
			body[i] = byte(r.Uint32())
		}
		direct := snapshotFile(t, body, uint64(n), true)
		buffered := snapshotFile(t, body, uint64(n)+1, false)
		refused := 0
		directWriteAt = func(f *os.File, p []byte, off int64) (int, error) {
			refused++
			// A partial write, then the refusal.
			k, _ := f.WriteAt(p[:len(p)/2], off)
			return k, syscall.EINVAL
		}
		fallback := snapshotFile(t, body, uint64(n)+2, true)
		directWriteAt = writeAt
		if !bytes.Equal(direct, buffered) || !bytes.Equal(direct, fallback) {
			t.Fatalf("body of %d bytes: direct, buffered and fallback files differ (%d, %d, %d bytes)", n, len(direct), len(buffered), len(fallback))
		}
		// A file of a whole block or more has one direct write, refused;
		// none where the system has no direct I/O.
		want := 0
		if haveDirect && len(direct) >= directAlign {
			want = 1
		}
		if refused != want {
			t.Errorf("body of %d bytes: %d direct writes tried with the refusing stub, want %d", n, refused, want)
		}
	}
}

// writeAt is directWriteAt's own value.
var writeAt = directWriteAt

// restoreHooks puts the direct-write hook back when t ends, however it
// ends.
func restoreHooks(t *testing.T) {
	t.Cleanup(func() { directWriteAt = writeAt })
}

// haveDirect says whether the test's temporary directory takes direct
// I/O (probeDirect).
var haveDirect bool

// probeDirect reports whether a snapshot writer in a new temporary
// directory opens its file for direct I/O.
func probeDirect(t *testing.T) bool {
	f, err := os.Create(filepath.Join(t.TempDir(), "probe"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := newSnapWriter(f, true)
	defer w.closeDirect()
	return w.direct != nil
}

// directSnapWriter creates file name in dir, closed when t ends, and a
// snapshot writer of it with direct I/O; it skips t where the system has
// none there.
func directSnapWriter(t *testing.T, dir, name string) (*os.File, *snapWriter) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	w := newSnapWriter(f, true)
	if w.direct == nil {
		t.Skipf("no direct I/O in %s on this system", dir)
	}
	return f, w
}

// On a file system that takes direct I/O (the temporary directory here
// usually does; tmpfs does not), whole blocks are written directly when
// asked, and not otherwise.
func TestSnapshotWriterUsesDirectIO(t *testing.T) {
	f, w := directSnapWriter(t, t.TempDir(), "probe")
	block := bytes.Repeat([]byte{1, 2, 3}, snapBlock)
	if _, err := w.Write(block); err != nil {
		t.Fatal(err)
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
	if w.directBytes < 2*snapBlock {
		t.Errorf("%d bytes written directly, want at least %d", w.directBytes, 2*snapBlock)
	}
	got, err := os.ReadFile(f.Name())
	if err != nil || !bytes.Equal(got, block) {
		t.Fatalf("file holds %d bytes (equal %v), %v", len(got), bytes.Equal(got, block), err)
	}
	if b := newSnapWriter(f, false); b.direct != nil {
		t.Error("a buffered snapshot writer opened the file for direct I/O")
	}
}

// A block is written while the next one is filled, and an error of that
// write comes back from a later Write (or from finish).
func TestSnapshotWriterOverlapsWrites(t *testing.T) {
	restoreHooks(t)
	dir := t.TempDir()
	f, w := directSnapWriter(t, dir, "overlap")
	started, release := make(chan struct{}, 4), make(chan struct{})
	directWriteAt = func(d *os.File, p []byte, off int64) (int, error) {
		started <- struct{}{}
		<-release
		return writeAt(d, p, off)
	}
	block := bytes.Repeat([]byte{7, 8, 9}, snapBlock/3+1)[:snapBlock]
	filled := make(chan error, 1)
	go func() {
		if _, err := w.Write(block); err != nil {
			filled <- err
			return
		}
		<-started // the first block's write has begun and waits for release
		_, err := w.Write(block[:snapBlock-1])
		filled <- err
	}()
	select {
	case err := <-filled:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("filling the second block waited for the first block's write")
	}
	close(release)
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(f.Name())
	if want := append(slices.Clip(block), block[:snapBlock-1]...); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("file holds %d bytes (equal %v), %v; want %d", len(got), bytes.Equal(got, want), err, len(want))
	}

	// A block whose write fails (refused directly, and the ordinary
	// descriptor closed under it): the next Write says so.
	g, err := os.Create(filepath.Join(dir, "failing"))
	if err != nil {
		t.Fatal(err)
	}
	w = newSnapWriter(g, true)
	directWriteAt = func(*os.File, []byte, int64) (int, error) {
		g.Close()
		return 0, syscall.EINVAL
	}
	if _, err := w.Write(block); err != nil {
		t.Fatalf("the first block's Write: %v (its write runs after it returns)", err)
	}
	if _, err := w.Write(block); err == nil {
		t.Fatal("Write after a block whose write failed: no error")
	}
	w.closeDirect()
}
