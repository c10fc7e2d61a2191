package embed

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"sync"
)

// File cache format, all integers little-endian. A header of 16 bytes:
//
//	[8]byte  magic "TDMKEMBC"
//	u32      version (1)
//	u32      flags (0)
//
// then records, appended one per Put:
//
//	u32      n, the payload length: 32 + 4·dim, dim ≥ 1
//	u32      CRC-32C (Castagnoli) of the payload
//	[32]byte key                    \ payload
//	[dim]u32 IEEE-754 float32 bits  /
const (
	fileCacheMagic   = "TDMKEMBC"
	fileCacheVersion = 1
	fileCacheHeader  = 16
	fileRecordHeader = 8
	maxFileRecord    = 32 + 4*MaxRemoteDim
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// FileCache is a [Cache] kept in a file, so that a restarted service does
// not pay again for vectors it had. It holds its vectors in memory, like a
// [MemoryCache] of the same capacity, and appends every new vector to the
// file as one CRC-checked record; [OpenFileCache] loads the file back.
//
// Writes are not synced: a crash can lose the last vectors, and a record
// cut short or damaged by a crash ("torn tail") is cut off at the next
// open, together with everything after it. When the file holds more than
// twice as many records as the cache keeps vectors (older duplicates and
// evicted vectors), it is rewritten with only the vectors held, oldest
// first, through a temporary file renamed over it.
//
// A write error is remembered: the cache goes on in memory only and
// reports the error from Err and Close. A FileCache is safe for concurrent
// use within one process; two FileCaches (in one process or several) must
// not use the same file at once.
type FileCache struct {
	path string

	mu        sync.Mutex // guards everything below
	lru       lru
	f         *os.File // nil after Close or a failed rewrite
	records   int      // records in the file
	err       error    // first write error, sticky
	closed    bool
	tornBytes int64 // bytes cut off the tail by OpenFileCache
	buf       []byte
}

var _ Cache = (*FileCache)(nil)

// OpenFileCache opens the cache file at path, creating it (mode 0600) if
// it does not exist, and loads its vectors, keeping the max most recently
// written (max ≤ 0 means DefaultCacheEntries). A torn or damaged tail is
// cut off (see [FileCache.TornBytes]). It returns an error wrapping
// [ErrCorrupt] if the file exists and is not an embedding cache, and the
// file system's error if it cannot be read or written.
func OpenFileCache(path string, max int) (*FileCache, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("embed: open cache: %w", err)
	}
	c := &FileCache{path: path, f: f}
	c.lru.init(max)
	if err := c.load(); err != nil {
		f.Close()
		return nil, err
	}
	if c.records > 2*c.lru.max {
		c.rewrite()
		if c.err != nil {
			err := c.err
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// load reads the file into c.lru, cuts off a torn tail, and leaves the file
// offset at the end, ready to append.
func (c *FileCache) load() error {
	st, err := c.f.Stat()
	if err != nil {
		return fmt.Errorf("embed: open cache: %w", err)
	}
	size := st.Size()
	br := bufio.NewReaderSize(c.f, 1<<20)
	hdr := make([]byte, fileCacheHeader)
	n, err := io.ReadFull(br, hdr)
	switch {
	case err == nil:
		if string(hdr[:8]) != fileCacheMagic {
			return fmt.Errorf("%w: %s: bad magic", ErrCorrupt, c.path)
		}
		if v := binary.LittleEndian.Uint32(hdr[8:]); v != fileCacheVersion {
			return fmt.Errorf("%w: %s: version %d, want %d", ErrCorrupt, c.path, v, fileCacheVersion)
		}
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		// An empty file, or a header torn while the file was created.
		if !bytes.Equal(hdr[:n], fileCacheHeaderBytes()[:n]) {
			return fmt.Errorf("%w: %s: bad magic", ErrCorrupt, c.path)
		}
		c.tornBytes = size
		if err := c.f.Truncate(0); err != nil {
			return fmt.Errorf("embed: open cache: %w", err)
		}
		if _, err := c.f.WriteAt(fileCacheHeaderBytes(), 0); err != nil {
			return fmt.Errorf("embed: open cache: %w", err)
		}
		if _, err := c.f.Seek(fileCacheHeader, io.SeekStart); err != nil {
			return fmt.Errorf("embed: open cache: %w", err)
		}
		return nil
	default:
		return fmt.Errorf("embed: open cache: %w", err)
	}

	good := int64(fileCacheHeader) // end of the last good record
	var rh [fileRecordHeader]byte
	for {
		if _, err := io.ReadFull(br, rh[:]); err != nil {
			break // EOF, or a torn record header
		}
		n := binary.LittleEndian.Uint32(rh[0:])
		if n < 36 || n > maxFileRecord || (n-32)%4 != 0 {
			break
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			break
		}
		if crc32.Checksum(payload, crcTable) != binary.LittleEndian.Uint32(rh[4:]) {
			break
		}
		var key [32]byte
		copy(key[:], payload)
		v := make([]float32, (n-32)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(payload[32+4*i:]))
		}
		c.lru.put(key, v)
		c.records++
		good += fileRecordHeader + int64(n)
	}
	if good < size {
		c.tornBytes = size - good
		if err := c.f.Truncate(good); err != nil {
			return fmt.Errorf("embed: open cache: cutting the torn tail: %w", err)
		}
	}
	if _, err := c.f.Seek(good, io.SeekStart); err != nil {
		return fmt.Errorf("embed: open cache: %w", err)
	}
	return nil
}

func fileCacheHeaderBytes() []byte {
	h := make([]byte, fileCacheHeader)
	copy(h, fileCacheMagic)
	binary.LittleEndian.PutUint32(h[8:], fileCacheVersion)
	return h
}

// appendRecord appends the record of (key, v) to b.
func appendRecord(b []byte, key [32]byte, v []float32) []byte {
	n := 32 + 4*len(v)
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	b = binary.LittleEndian.AppendUint32(b, 0) // CRC, below
	b = append(b, key[:]...)
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(b[start+fileRecordHeader:], crcTable))
	return b
}

// Get returns the vector stored under key, and marks it as recently used.
func (c *FileCache) Get(key [32]byte) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.get(key)
}

// Put stores v under key and appends it to the file, unless key already
// holds the same vector. Vectors of length 0 or above MaxRemoteDim are not
// stored. After Close, Put does nothing.
func (c *FileCache) Put(key [32]byte, v []float32) {
	if len(v) == 0 || len(v) > MaxRemoteDim {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || !c.lru.put(key, v) || c.err != nil {
		return
	}
	c.buf = appendRecord(c.buf[:0], key, v)
	if _, err := c.f.Write(c.buf); err != nil {
		c.err = fmt.Errorf("embed: cache %s: %w", c.path, err)
		return
	}
	c.records++
	if c.records > 2*c.lru.max {
		c.rewrite()
	}
}

// rewrite replaces the file by one holding only the vectors in memory,
// oldest first. On failure it sets c.err and leaves the old file (or, if the
// rename succeeded and the reopen failed, no file) in use.
func (c *FileCache) rewrite() {
	tmp := c.path + ".tmp"
	fail := func(err error) {
		c.err = fmt.Errorf("embed: cache %s: rewriting: %w", c.path, err)
		os.Remove(tmp)
	}
	t, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		fail(err)
		return
	}
	bw := bufio.NewWriterSize(t, 1<<20)
	bw.Write(fileCacheHeaderBytes())
	records := 0
	c.lru.oldestFirst(func(key [32]byte, v []float32) {
		c.buf = appendRecord(c.buf[:0], key, v)
		bw.Write(c.buf)
		records++
	})
	err = bw.Flush() // a bufio.Writer keeps its first error
	if err == nil {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, c.path)
	}
	if err != nil {
		fail(err)
		return
	}
	c.f.Close()
	c.f = nil
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		fail(err)
		return
	}
	c.f, c.records = f, records
}

// Delete forgets the vectors of keys, in memory and in the file: the file
// is rewritten without them (it may hold a key's older records even when
// memory no longer does), so that no copy of an erased text's vector
// stays on disk. It returns how many keys memory held.
func (c *FileCache) Delete(keys ...[32]byte) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.lru.remove(keys...)
	if c.f != nil && len(keys) > 0 {
		c.rewrite()
	}
	return n
}

// Len returns the number of vectors held in memory.
func (c *FileCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.ll.Len()
}

// TornBytes returns how many bytes OpenFileCache cut off the end of the
// file: a record torn by a crash, or damage, and everything after it.
func (c *FileCache) TornBytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tornBytes
}

// Err returns the first error writing the file, or nil. After an error
// the cache works in memory only.
func (c *FileCache) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the file and returns the first error writing it, if any.
// Get still answers from memory after Close; Put does nothing. Closing
// twice returns ErrClosed.
func (c *FileCache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	c.closed = true
	err := c.err
	if c.f != nil {
		if cerr := c.f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("embed: cache %s: %w", c.path, cerr)
		}
		c.f = nil
	}
	return err
}
