package embed

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

func testKey(i int) [32]byte {
	var k [32]byte
	copy(k[:], fmt.Sprintf("key %d", i))
	return k
}

func testVec(i int) []float32 {
	v := make([]float32, 1+i%5)
	for j := range v {
		v[j] = float32(i) + float32(j)/8
	}
	return v
}

func TestMemoryCacheLRU(t *testing.T) {
	c := NewMemoryCache(2)
	c.Put(testKey(1), testVec(1))
	c.Put(testKey(2), testVec(2))
	if _, ok := c.Get(testKey(1)); !ok { // 1 is now the most recently used
		t.Fatal("key 1 missing")
	}
	c.Put(testKey(3), testVec(3)) // evicts 2
	if _, ok := c.Get(testKey(2)); ok {
		t.Error("key 2 survived eviction")
	}
	for _, i := range []int{1, 3} {
		if v, ok := c.Get(testKey(i)); !ok || !slices.Equal(v, testVec(i)) {
			t.Errorf("key %d: %v, %v", i, v, ok)
		}
	}
	c.Put(testKey(3), []float32{9}) // replace
	if v, _ := c.Get(testKey(3)); !slices.Equal(v, []float32{9}) || c.Len() != 2 {
		t.Errorf("after replace: %v, Len %d", v, c.Len())
	}
	if NewMemoryCache(0).lru.max != DefaultCacheEntries || NewMemoryCache(-1).lru.max != DefaultCacheEntries {
		t.Error("n ≤ 0 is not DefaultCacheEntries")
	}
}

func openFileCacheT(t *testing.T, path string, max int) *FileCache {
	t.Helper()
	c, err := OpenFileCache(path, max)
	if err != nil {
		t.Fatalf("OpenFileCache: %v", err)
	}
	return c
}

func closeT(t *testing.T, c *FileCache) {
	t.Helper()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// checkHas checks that c holds testVec(i) for every i in want, and
// nothing for the keys in gone.
func checkHas(t *testing.T, c *FileCache, want, gone []int) {
	t.Helper()
	for _, i := range want {
		if v, ok := c.Get(testKey(i)); !ok || !slices.Equal(v, testVec(i)) {
			t.Errorf("key %d: %v, %v; want %v", i, v, ok, testVec(i))
		}
	}
	for _, i := range gone {
		if _, ok := c.Get(testKey(i)); ok {
			t.Errorf("key %d is present, want it gone", i)
		}
	}
}

func TestFileCacheReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c")
	c := openFileCacheT(t, path, 0)
	for i := range 10 {
		c.Put(testKey(i), testVec(i))
	}
	c.Put(testKey(3), testVec(3)) // same vector again: not rewritten
	size := fileSize(t, path)
	c.Put(testKey(4), testVec(4))
	if fileSize(t, path) != size {
		t.Error("putting the same vector again appended a record")
	}
	closeT(t, c)

	c = openFileCacheT(t, path, 0)
	defer closeT(t, c)
	checkHas(t, c, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, []int{10})
	if c.Len() != 10 || c.TornBytes() != 0 {
		t.Errorf("Len %d, TornBytes %d; want 10, 0", c.Len(), c.TornBytes())
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, %v; want 0600", st.Mode(), err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestFileCacheTornTail damages the end of the file in the ways a crash
// can, and checks that open keeps every record before the damage, cuts the
// rest, and appends after the cut.
func TestFileCacheTornTail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(b []byte, last int) []byte // last: offset of the last record
		keep   []int
		lose   []int
	}{
		{"half a record", func(b []byte, last int) []byte { return b[:last+(len(b)-last)/2] }, []int{0, 1, 2, 3}, []int{4}},
		{"record header only", func(b []byte, last int) []byte { return b[:last+5] }, []int{0, 1, 2, 3}, []int{4}},
		{"bad CRC", func(b []byte, last int) []byte { b[len(b)-1] ^= 1; return b }, []int{0, 1, 2, 3}, []int{4}},
		{"garbage after", func(b []byte, last int) []byte { return append(b, "\x07\x00\x00\x00garbage"...) }, []int{0, 1, 2, 3, 4}, nil},
		{"zeroes after", func(b []byte, last int) []byte { return append(b, make([]byte, 100)...) }, []int{0, 1, 2, 3, 4}, nil},
		{"huge length", func(b []byte, last int) []byte { return append(b, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0) }, []int{0, 1, 2, 3, 4}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c")
			c := openFileCacheT(t, path, 0)
			var last int64
			for i := range 5 {
				last = fileSize(t, path)
				c.Put(testKey(i), testVec(i))
			}
			closeT(t, c)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			damaged := tc.damage(b, int(last))
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}

			c = openFileCacheT(t, path, 0)
			checkHas(t, c, tc.keep, tc.lose)
			good := int64(len(b))
			if len(tc.lose) > 0 {
				good = last
			}
			if got, want := c.TornBytes(), int64(len(damaged))-good; got != want {
				t.Errorf("TornBytes = %d, want %d", got, want)
			}
			c.Put(testKey(9), testVec(9))
			closeT(t, c)

			c = openFileCacheT(t, path, 0)
			defer closeT(t, c)
			checkHas(t, c, append(tc.keep, 9), tc.lose)
			if c.TornBytes() != 0 {
				t.Errorf("second open: TornBytes = %d, want 0", c.TornBytes())
			}
		})
	}
}

func TestFileCacheHeader(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		content []byte
		corrupt bool
	}{
		{"empty", nil, false},
		{"torn header", fileCacheHeaderBytes()[:5], false},
		{"torn header, version", fileCacheHeaderBytes()[:12], false},
		{"another file", []byte("name,value\nx,1\n"), true},
		{"another short file", []byte("TDMX"), true},
		{"future version", append([]byte(fileCacheMagic), 2, 0, 0, 0, 0, 0, 0, 0), true},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, tc.content, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := OpenFileCache(path, 0)
		if tc.corrupt {
			if !errors.Is(err, ErrCorrupt) || c != nil {
				t.Errorf("%s: OpenFileCache = %v, %v; want ErrCorrupt", tc.name, c, err)
			}
			if b, _ := os.ReadFile(path); !bytes.Equal(b, tc.content) {
				t.Errorf("%s: a file that is not a cache was modified", tc.name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		c.Put(testKey(1), testVec(1))
		closeT(t, c)
		c = openFileCacheT(t, path, 0)
		checkHas(t, c, []int{1}, nil)
		closeT(t, c)
	}
	if _, err := OpenFileCache(filepath.Join(dir, "no", "such", "dir"), 0); err == nil {
		t.Error("OpenFileCache in a missing directory succeeded")
	}
}

// TestFileCacheRewrite: the file is rewritten with the vectors held once it
// has more than twice as many records, so it stays bounded.
func TestFileCacheRewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c")
	c := openFileCacheT(t, path, 4)
	var maxSize int64
	for i := range 50 {
		c.Put(testKey(i), testVec(i))
		maxSize = max(maxSize, fileSize(t, path))
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	closeT(t, c)
	// 9 records of at most 8+32+20 bytes, plus the header.
	if limit := int64(fileCacheHeader + 9*60); maxSize > limit {
		t.Errorf("file grew to %d bytes, want at most %d", maxSize, limit)
	}
	c = openFileCacheT(t, path, 4)
	checkHas(t, c, []int{46, 47, 48, 49}, []int{0, 45})
	closeT(t, c)
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left behind: %v", err)
	}

	// A file written with a larger capacity is rewritten on open.
	path = filepath.Join(t.TempDir(), "c2")
	c = openFileCacheT(t, path, 100)
	for i := range 50 {
		c.Put(testKey(i), testVec(i))
	}
	closeT(t, c)
	before := fileSize(t, path)
	c = openFileCacheT(t, path, 10)
	checkHas(t, c, []int{40, 49}, []int{0, 39})
	closeT(t, c)
	if after := fileSize(t, path); after >= before/2 {
		t.Errorf("open with a smaller capacity left %d bytes of %d", after, before)
	}
}

func TestFileCacheConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c")
	c := openFileCacheT(t, path, 0)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				k := g*50 + i
				c.Put(testKey(k), testVec(k))
				if _, ok := c.Get(testKey(k)); !ok {
					t.Errorf("key %d missing right after Put", k)
				}
				c.Get(testKey(i))
			}
		})
	}
	wg.Wait()
	closeT(t, c)
	c = openFileCacheT(t, path, 0)
	defer closeT(t, c)
	if c.Len() != 200 {
		t.Errorf("Len = %d after reopen, want 200", c.Len())
	}
	checkHas(t, c, []int{0, 77, 199}, nil)
}

func TestFileCacheCloseAndErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c")
	c := openFileCacheT(t, path, 0)
	c.Put(testKey(1), testVec(1))
	c.Put(testKey(2), nil) // not stored
	c.Put(testKey(3), make([]float32, MaxRemoteDim+1))
	if c.Len() != 1 {
		t.Errorf("Len = %d, want 1 (empty and oversized vectors are not stored)", c.Len())
	}
	// A write error is kept and reported; the cache goes on in memory.
	c.f.Close()
	c.Put(testKey(4), testVec(4))
	if c.Err() == nil {
		t.Fatal("no error after writing to a closed file")
	}
	checkHas(t, c, []int{1, 4}, nil)
	if err := c.Close(); err == nil || !errors.Is(err, os.ErrClosed) {
		t.Errorf("Close = %v, want the write error", err)
	}
	if err := c.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	c.Put(testKey(5), testVec(5))
	checkHas(t, c, []int{1}, []int{5})
}

func FuzzFileCacheOpen(f *testing.F) {
	var rec []byte
	rec = append(rec, fileCacheHeaderBytes()...)
	rec = appendRecord(rec, testKey(1), testVec(1))
	rec = appendRecord(rec, testKey(2), testVec(2))
	f.Add(rec)
	f.Add(rec[:len(rec)-3])
	f.Add([]byte(fileCacheMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, content []byte) {
		path := filepath.Join(t.TempDir(), "c")
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := OpenFileCache(path, 3)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("OpenFileCache: %v, want nil or ErrCorrupt", err)
			}
			return
		}
		if c.Len() > 3 {
			t.Fatalf("Len = %d, want ≤ 3", c.Len())
		}
		c.Put(testKey(7), testVec(7))
		n := c.Len()
		closeT(t, c)
		c = openFileCacheT(t, path, 3)
		defer closeT(t, c)
		if c.TornBytes() != 0 || c.Len() != n {
			t.Fatalf("reopen: TornBytes %d, Len %d; want 0, %d", c.TornBytes(), c.Len(), n)
		}
		checkHas(t, c, []int{7}, nil)
	})
}

// Delete forgets keys in memory and rewrites the file without them, even
// when the file holds a key's older record that memory evicted; a
// reopened cache does not have them.
func TestFileCacheDelete(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c")
	c := openFileCacheT(t, path, 3)
	for i := range 5 { // keys 0 and 1 are evicted from memory, their records stay
		c.Put(testKey(i), testVec(i))
	}
	if n := c.Delete(testKey(0), testKey(3)); n != 1 {
		t.Fatalf("Delete held %d keys in memory, want 1 (key 3)", n)
	}
	checkHas(t, c, []int{2, 4}, []int{0, 1, 3})
	closeT(t, c)
	c = openFileCacheT(t, path, 10)
	defer closeT(t, c)
	checkHas(t, c, []int{2, 4}, []int{0, 1, 3})

	m := NewMemoryCache(4)
	m.Put(testKey(1), testVec(1))
	if m.Delete(testKey(1), testKey(2)) != 1 || m.Len() != 0 {
		t.Fatalf("MemoryCache.Delete: len %d", m.Len())
	}
}
