package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/tidemark/tidemark/internal/offheap"
	"github.com/tidemark/tidemark/simd"
)

func randUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// mixture is a fixed set of cluster centres: data and queries drawn from
// it resemble real embeddings more than uniform noise does, where every
// neighbour is equally far.
type mixture [][]float32

func newMixture(r *rand.Rand, centres, dim int) mixture {
	m := make(mixture, centres)
	for i := range m {
		m[i] = randUnit(r, dim)
	}
	return m
}

// sample returns n vectors around the mixture's centres.
func (cs mixture) sample(r *rand.Rand, n int) [][]float32 {
	dim := len(cs[0])
	out := make([][]float32, n)
	for i := range out {
		c := cs[r.IntN(len(cs))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + 0.6*float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

// bruteForce returns the exact top-k keys among live, by cosine.
func bruteForce(vecs map[uint64][]float32, q []float32, k int) []uint64 {
	qn := make([]float32, len(q))
	_ = unitVector(q, qn, len(q))
	type kv struct {
		key uint64
		s   float64
	}
	var all []kv
	for key, v := range vecs {
		vn := make([]float32, len(v))
		_ = unitVector(v, vn, len(v))
		var s float64
		for i := range vn {
			s += float64(vn[i]) * float64(qn[i])
		}
		all = append(all, kv{key, s})
	}
	sort.Slice(all, func(a, b int) bool {
		if all[a].s != all[b].s {
			return all[a].s > all[b].s
		}
		return all[a].key < all[b].key
	})
	out := make([]uint64, 0, k)
	for _, x := range all[:min(k, len(all))] {
		out = append(out, x.key)
	}
	return out
}

// recall measures recall@k of h against brute force over vecs.
func recall(t testing.TB, h *HNSW, vecs map[uint64][]float32, queries [][]float32, k, ef int) float64 {
	t.Helper()
	hits, total := 0, 0
	for _, q := range queries {
		got, err := h.Search(context.Background(), q, k, &SearchOptions{Ef: ef})
		if err != nil {
			t.Fatal(err)
		}
		want := bruteForce(vecs, q, k)
		set := map[uint64]bool{}
		for _, w := range want {
			set[w] = true
		}
		for _, g := range got {
			if set[g.Key] {
				hits++
			}
		}
		total += len(want)
	}
	return float64(hits) / float64(total)
}

func TestRecallAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, dim = 3000, 32
	mix := newMixture(r, 20, dim)
	data := mix.sample(r, n)
	h, err := New(&Options{Dim: dim, M: 12, EfConstruction: 100})
	if err != nil {
		t.Fatal(err)
	}
	vecs := map[uint64][]float32{}
	for i, v := range data {
		key := uint64(i*7 + 3)
		if err := h.Insert(key, v); err != nil {
			t.Fatal(err)
		}
		vecs[key] = v
	}
	queries := mix.sample(r, 200)
	for _, c := range []struct {
		ef   int
		want float64
	}{{10, 0.90}, {64, 0.99}, {200, 0.99}} { // measured 0.936, 1.0, 1.0
		got := recall(t, h, vecs, queries, 10, c.ef)
		t.Logf("ef=%d recall@10 = %.4f", c.ef, got)
		if got < c.want {
			t.Errorf("ef=%d: recall@10 = %.4f, want ≥ %.2f", c.ef, got, c.want)
		}
	}
	if h.Len() != n {
		t.Errorf("Len = %d, want %d", h.Len(), n)
	}
}

func buildIndex(t testing.TB, r *rand.Rand, mix mixture, n int) (*HNSW, map[uint64][]float32) {
	t.Helper()
	h, err := New(&Options{Dim: len(mix[0]), M: 12, EfConstruction: 100})
	if err != nil {
		t.Fatal(err)
	}
	vecs := map[uint64][]float32{}
	for i, v := range mix.sample(r, n) {
		if err := h.Insert(uint64(i), v); err != nil {
			t.Fatal(err)
		}
		vecs[uint64(i)] = v
	}
	return h, vecs
}

// churnEf is low enough that recall is below 1 on the test mixture, so a
// degradation would show.
const churnEf = 12

// Deleting and re-inserting 30% of the set: deleted keys are never
// returned, and after Compact the recall is back to the fresh build's.
func TestDeleteReinsertRecall(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, dim = 3000, 32
	mix := newMixture(r, 20, dim)
	h, vecs := buildIndex(t, r, mix, n)
	queries := mix.sample(r, 150)
	fresh := recall(t, h, vecs, queries, 10, churnEf)

	gone := map[uint64]bool{}
	for _, i := range r.Perm(n)[:n*3/10] {
		key := uint64(i)
		if err := h.Delete(key); err != nil {
			t.Fatal(err)
		}
		gone[key] = true
	}
	if h.Len() != n-len(gone) || h.Deleted() != len(gone) {
		t.Fatalf("Len %d Deleted %d after deleting %d", h.Len(), h.Deleted(), len(gone))
	}
	liveVecs := map[uint64][]float32{}
	for k, v := range vecs {
		if !gone[k] {
			liveVecs[k] = v
		}
	}
	for _, q := range queries {
		res, _ := h.Search(context.Background(), q, 20, nil)
		for _, x := range res {
			if gone[x.Key] {
				t.Fatalf("deleted key %d returned", x.Key)
			}
		}
	}
	afterDelete := recall(t, h, liveVecs, queries, 10, churnEf)
	// Re-insert the same keys, churned twice, without compaction.
	for round := 0; round < 2; round++ {
		for k := range gone {
			if err := h.Insert(k, vecs[k]); err != nil {
				t.Fatal(err)
			}
		}
		if round == 0 {
			for k := range gone {
				if err := h.Delete(k); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	churned := recall(t, h, vecs, queries, 10, churnEf)
	removed := h.Compact()
	compacted := recall(t, h, vecs, queries, 10, churnEf)
	t.Logf("recall@10 ef=%d: fresh %.4f, after deleting 30%% %.4f, re-inserted twice %.4f, compacted %.4f (removed %d)",
		churnEf, fresh, afterDelete, churned, compacted, removed)
	if removed != 2*len(gone) || h.Deleted() != 0 || h.Len() != n {
		t.Errorf("Compact removed %d, Deleted %d, Len %d; want %d, 0, %d", removed, h.Deleted(), h.Len(), 2*len(gone), n)
	}
	if compacted < fresh-0.02 {
		t.Errorf("after churn and Compact recall %.4f, fresh %.4f", compacted, fresh)
	}
	if afterDelete < fresh-0.05 {
		t.Errorf("tombstones degraded recall to %.4f from %.4f", afterDelete, fresh)
	}
	// The compacted graph keeps working: more inserts and searches.
	for i := 0; i < 200; i++ {
		key := uint64(n + i)
		v := mix.sample(r, 1)[0]
		if err := h.Insert(key, v); err != nil {
			t.Fatal(err)
		}
		vecs[key] = v
	}
	if got := recall(t, h, vecs, queries, 10, churnEf); got < fresh-0.03 {
		t.Errorf("after compaction and 200 inserts recall %.4f", got)
	}
}

func TestCompactEverything(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	h, vecs := buildIndex(t, r, newMixture(r, 20, 8), 300)
	for k := range vecs {
		if err := h.Delete(k); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.Compact(); got != 300 || h.Len() != 0 {
		t.Fatalf("Compact = %d, Len = %d", got, h.Len())
	}
	if res, err := h.Search(context.Background(), vecs[1], 5, nil); err != nil || len(res) != 0 {
		t.Fatalf("search of an emptied index: %v %v", res, err)
	}
	if err := h.Insert(7, vecs[7]); err != nil {
		t.Fatal(err)
	}
	if res, _ := h.Search(context.Background(), vecs[7], 1, nil); len(res) != 1 || res[0].Key != 7 {
		t.Fatalf("insert after emptying: %v", res)
	}
}

// Concurrent inserts, deletes and searches (run with -race); afterwards
// every live key finds itself and no deleted key is returned.
func TestConcurrentStress(t *testing.T) {
	for _, quant := range []bool{false, true} {
		t.Run(fmt.Sprintf("quantize=%v", quant), func(t *testing.T) { concurrentStress(t, quant) })
	}
}

// concurrentStress runs writers (inserts, deletes) against readers
// (searches) on an index growing from a capacity of 16; with quant the
// searches walk the int8 codes the inserts write.
func concurrentStress(t *testing.T, quant bool) {
	const dim, writers, readers, per = 16, 4, 4, 400
	h, err := New(&Options{Dim: dim, M: 8, EfConstruction: 60, Capacity: 16, Quantize: quant})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	vecs := map[uint64][]float32{}
	deleted := map[uint64]bool{}
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; i < per; i++ {
				key := uint64(w*per + i)
				v := randUnit(r, dim)
				if err := h.Insert(key, v); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				vecs[key] = v
				mu.Unlock()
				if i%5 == 4 {
					victim := uint64(w*per + r.IntN(i))
					mu.Lock()
					if !deleted[victim] {
						if err := h.Delete(victim); err != nil {
							t.Error(err)
						}
						deleted[victim] = true
					}
					mu.Unlock()
				}
			}
		}()
	}
	for rd := 0; rd < readers; rd++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(rd), 10))
			for i := 0; i < 300; i++ {
				if _, err := h.Search(context.Background(), randUnit(r, dim), 5, &SearchOptions{Ef: 20}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if h.Len() != len(vecs)-len(deleted) {
		t.Fatalf("Len %d, want %d", h.Len(), len(vecs)-len(deleted))
	}
	found := 0
	for key, v := range vecs {
		res, err := h.Search(context.Background(), v, 3, &SearchOptions{Ef: 64})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range res {
			if deleted[x.Key] {
				t.Fatalf("deleted key %d returned", x.Key)
			}
		}
		if !deleted[key] && len(res) > 0 && res[0].Key == key {
			found++
		}
	}
	live := len(vecs) - len(deleted)
	if frac := float64(found) / float64(live); frac < 0.95 {
		t.Errorf("only %.3f of live keys find themselves", frac)
	}
}

func TestFilterAndEdgeCases(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	h, vecs := buildIndex(t, r, newMixture(r, 20, 16), 500)
	even := func(k uint64) bool { return k%2 == 0 }
	res, err := h.Search(context.Background(), vecs[3], 10, &SearchOptions{Filter: even})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 10 {
		t.Fatalf("%d results with a filter, want 10", len(res))
	}
	for i, x := range res {
		if x.Key%2 != 0 {
			t.Errorf("filter let odd key %d through", x.Key)
		}
		if i > 0 && x.Score > res[i-1].Score {
			t.Errorf("results out of order at %d", i)
		}
	}
	self, _ := h.Search(context.Background(), vecs[42], 1, nil)
	if len(self) != 1 || self[0].Key != 42 || self[0].Score < 0.9999 {
		t.Errorf("self search: %+v", self)
	}
	if res, _ := h.Search(context.Background(), vecs[1], 0, nil); len(res) != 0 {
		t.Errorf("k = 0 returned %v", res)
	}
	if res, _ := h.Search(context.Background(), vecs[1], 1000, nil); len(res) != 500 {
		t.Errorf("k > n returned %d", len(res))
	}
	empty, _ := New(&Options{Dim: 16})
	if res, err := empty.Search(context.Background(), vecs[1], 5, nil); err != nil || len(res) != 0 {
		t.Errorf("empty index: %v %v", res, err)
	}
}

func TestRejectsBadInput(t *testing.T) {
	h, _ := New(&Options{Dim: 4})
	ctx := context.Background()
	nan := float32(math.NaN())
	for name, c := range map[string]struct {
		err  error
		want error
	}{
		"insert dim":  {h.Insert(1, []float32{1, 2, 3}), ErrDimension},
		"insert NaN":  {h.Insert(1, []float32{1, nan, 0, 0}), ErrNotFinite},
		"insert Inf":  {h.Insert(1, []float32{float32(math.Inf(1)), 0, 0, 0}), ErrNotFinite},
		"insert zero": {h.Insert(1, []float32{0, 0, 0, 0}), ErrZeroVector},
		"delete none": {h.Delete(99), ErrNotFound},
		"options dim": {func() error { _, err := New(&Options{}); return err }(), ErrOptions},
		"options M":   {func() error { _, err := New(&Options{Dim: 4, M: 1}); return err }(), ErrOptions},
		"options ef":  {func() error { _, err := New(&Options{Dim: 4, Ef: -3}); return err }(), ErrOptions},
		"search dim":  {func() error { _, err := h.Search(ctx, []float32{1}, 1, nil); return err }(), ErrDimension},
		"search NaN":  {func() error { _, err := h.Search(ctx, []float32{nan, 0, 0, 1}, 1, nil); return err }(), ErrNotFinite},
		"search k":    {func() error { _, err := h.Search(ctx, []float32{1, 0, 0, 0}, -1, nil); return err }(), ErrOptions},
		"search ef":   {func() error { _, err := h.Search(ctx, []float32{1, 0, 0, 0}, 1, &SearchOptions{Ef: -1}); return err }(), ErrOptions},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", name, c.err, c.want)
		}
	}
	if h.Len() != 0 {
		t.Errorf("rejected inserts left %d keys", h.Len())
	}
	if err := h.Insert(1, []float32{1, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if err := h.Insert(1, []float32{0, 1, 0, 0}); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate insert: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h.Search(cancelled, []float32{1, 0, 0, 0}, 1, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v", err)
	}
	// A filter that rejects everything walks the whole graph; a context
	// cancelled during the walk stops it.
	r := rand.New(rand.NewPCG(41, 1))
	big, _ := buildIndex(t, r, newMixture(r, 10, 4), 3000)
	walkCtx, stop := context.WithCancel(ctx)
	calls := 0
	reject := func(uint64) bool {
		if calls++; calls == 500 {
			stop()
		}
		return false
	}
	if _, err := big.Search(walkCtx, []float32{1, 0, 0, 0}, 5, &SearchOptions{Filter: reject}); !errors.Is(err, context.Canceled) {
		t.Errorf("search cancelled mid-walk: %v after %d filter calls", err, calls)
	}
	if calls >= 3000 {
		t.Errorf("the cancelled search visited the whole graph (%d filter calls)", calls)
	}
	if res, err := big.Search(ctx, []float32{1, 0, 0, 0}, 5, nil); err != nil || len(res) != 5 {
		t.Errorf("search after a cancelled one: %v %v", res, err)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	mix := newMixture(r, 20, 16)
	h, vecs := buildIndex(t, r, mix, 800)
	for k := uint64(0); k < 50; k++ {
		if err := h.Delete(k * 3); err != nil {
			t.Fatal(err)
		}
		delete(vecs, k*3)
	}
	path := filepath.Join(t.TempDir(), "idx.hnsw")
	if err := h.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	g, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != h.Len() || g.Deleted() != h.Deleted() {
		t.Fatalf("loaded Len %d Deleted %d, saved %d %d", g.Len(), g.Deleted(), h.Len(), h.Deleted())
	}
	for _, q := range mix.sample(r, 50) {
		a, _ := h.Search(context.Background(), q, 10, nil)
		b, _ := g.Search(context.Background(), q, 10, nil)
		if len(a) != len(b) {
			t.Fatalf("result counts differ: %d vs %d", len(a), len(b))
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("result %d differs: %+v vs %+v", i, a[i], b[i])
			}
		}
	}
	// The loaded index keeps working: inserts, deletes, compaction.
	if err := g.Insert(5000, vecs[1]); err != nil {
		t.Fatal(err)
	}
	if err := g.Delete(1); err != nil {
		t.Fatal(err)
	}
	g.Compact()
	if res, _ := g.Search(context.Background(), vecs[1], 1, nil); len(res) != 1 || res[0].Key != 5000 {
		t.Errorf("after insert/delete/compact on a loaded index: %+v", res)
	}
	var b1, b2 bytes.Buffer
	if err := h.Save(&b1); err != nil {
		t.Fatal(err)
	}
	h2, err := Load(bytes.NewReader(b1.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := h2.Save(&b2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Error("save → load → save is not byte-identical")
	}
}

func smallIndexBytes(t testing.TB) []byte {
	r := rand.New(rand.NewPCG(13, 14))
	h, _ := buildIndex(t, r, newMixture(r, 5, 4), 60)
	h.Delete(5)
	var b bytes.Buffer
	if err := h.Save(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Every truncation and a bit flip in every byte is an error, never a panic.
func TestLoadRejectsCorruption(t *testing.T) {
	good := smallIndexBytes(t)
	if _, err := Load(bytes.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(good); n++ {
		if _, err := Load(bytes.NewReader(good[:n])); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	// In a stream, what follows the index is left for the caller…
	stream := bytes.NewReader(append(append([]byte(nil), good...), 'x', 'y'))
	if _, err := Load(stream); err != nil {
		t.Fatalf("index followed by data: %v", err)
	}
	if rest, _ := io.ReadAll(stream); string(rest) != "xy" {
		t.Fatalf("Load consumed the data after the index: %q left", rest)
	}
	// …but a file with bytes after the index is corrupt.
	path := filepath.Join(t.TempDir(), "trailing.hnsw")
	if err := os.WriteFile(path, append(append([]byte(nil), good...), 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("file with a trailing byte: %v", err)
	}
	for i := 0; i < len(good); i++ {
		bad := append([]byte(nil), good...)
		bad[i] ^= 0x10
		if _, err := Load(bytes.NewReader(bad)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipped byte %d: %v", i, err)
		}
	}
	// A header claiming 2³²−1 nodes reads only what is there.
	huge := append([]byte(nil), good[:headerSize]...)
	binary.LittleEndian.PutUint32(huge[28:], math.MaxUint32)
	if _, err := Load(bytes.NewReader(huge)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("huge header: %v", err)
	}
}

// FuzzLoad: the loader never panics; whatever it accepts is a working index.
func FuzzLoad(f *testing.F) {
	good := smallIndexBytes(f)
	f.Add(good)
	f.Add(good[:headerSize])
	f.Add([]byte(fileMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Let the fuzzer reach the structural checks behind the checksum.
		if len(data) > headerSize+4 {
			crc := crc32.Update(crc32.Checksum(data[:headerSize], castagnoli), castagnoli, data[headerSize:len(data)-4])
			fixed := append([]byte(nil), data...)
			binary.LittleEndian.PutUint32(fixed[len(fixed)-4:], crc)
			tryLoad(t, fixed)
		}
		tryLoad(t, data)
	})
}

func tryLoad(t *testing.T, data []byte) {
	h, err := Load(bytes.NewReader(data))
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error not wrapping ErrCorrupt: %v", err)
		}
		return
	}
	q := make([]float32, h.Dim())
	q[0] = 1
	if _, err := h.Search(context.Background(), q, 3, nil); err != nil {
		t.Fatalf("accepted index fails to search: %v", err)
	}
	if err := h.Insert(1<<63, q); err != nil && !errors.Is(err, ErrExists) {
		t.Fatalf("accepted index fails to insert: %v", err)
	}
}

// Compact and Save run while inserts, deletes and searches do: no insert
// may fall between its node's assignment and its linking (run with -race).
func TestConcurrentCompactAndSave(t *testing.T) {
	const dim = 8
	h, err := New(&Options{Dim: dim, M: 6, EfConstruction: 40})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	live := map[uint64][]float32{}
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 77))
			for i := 0; i < 300; i++ {
				key := uint64(w*1000 + i)
				v := randUnit(r, dim)
				if err := h.Insert(key, v); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				live[key] = v
				if i%3 == 2 {
					victim := uint64(w*1000 + r.IntN(i))
					if _, ok := live[victim]; ok {
						if err := h.Delete(victim); err != nil {
							t.Error(err)
						}
						delete(live, victim)
					}
				}
				mu.Unlock()
			}
		}()
	}
	done := make(chan struct{})
	var saves int
	go func() {
		defer close(done)
		for i := 0; i < 20; i++ {
			h.Compact()
			var b bytes.Buffer
			if err := h.Save(&b); err != nil {
				t.Error(err)
				return
			}
			if _, err := Load(&b); err != nil {
				t.Errorf("an image saved during inserts does not load: %v", err)
				return
			}
			saves++
		}
	}()
	wg.Wait()
	<-done
	h.Compact()
	if h.Len() != len(live) {
		t.Fatalf("Len %d, want %d", h.Len(), len(live))
	}
	found := 0
	for key, v := range live {
		res, err := h.Search(context.Background(), v, 1, &SearchOptions{Ef: 64})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) == 1 && res[0].Key == key {
			found++
		}
	}
	if frac := float64(found) / float64(len(live)); frac < 0.97 {
		t.Errorf("after concurrent compaction only %.3f of live keys find themselves (%d saves)", frac, saves)
	}
}

// Options.Quantize: the same graph searched through int8 codes finds
// nearly the float32 search's neighbours, returns exact cosines, and keeps
// working through deletes and Compact.
func TestQuantizedSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 2))
	const n, dim = 3000, 100 // GloVe's width: 100 codes padded to 128
	mix := newMixture(r, 20, dim)
	data := mix.sample(r, n)
	plain, err := New(&Options{Dim: dim, M: 12, EfConstruction: 100})
	if err != nil {
		t.Fatal(err)
	}
	quant, err := New(&Options{Dim: dim, M: 12, EfConstruction: 100, Quantize: true})
	if err != nil {
		t.Fatal(err)
	}
	vecs := map[uint64][]float32{}
	for i, v := range data {
		for _, h := range []*HNSW{plain, quant} {
			if err := h.Insert(uint64(i), v); err != nil {
				t.Fatal(err)
			}
		}
		vecs[uint64(i)] = v
	}
	queries := mix.sample(r, 200)
	for _, ef := range []int{16, 64} {
		rp, rq := recall(t, plain, vecs, queries, 10, ef), recall(t, quant, vecs, queries, 10, ef)
		t.Logf("ef=%d recall@10 float32 %.4f, int8 traversal %.4f", ef, rp, rq)
		if rq < rp-0.02 {
			t.Errorf("ef=%d: quantized recall %.4f < float32 %.4f − 0.02", ef, rq, rp)
		}
	}
	q := queries[0]
	res, err := quant.Search(context.Background(), q, 10, &SearchOptions{Ef: 64})
	if err != nil {
		t.Fatal(err)
	}
	qn := make([]float32, dim)
	if err := unitVector(q, qn, dim); err != nil {
		t.Fatal(err)
	}
	for i, x := range res {
		v := make([]float32, dim)
		if err := unitVector(vecs[x.Key], v, dim); err != nil {
			t.Fatal(err)
		}
		if want := simd.Dot(qn, v); math.Abs(float64(x.Score-want)) > 1e-5 {
			t.Fatalf("result %d: score %v, exact cosine %v", i, x.Score, want)
		}
		if i > 0 && res[i-1].Score < x.Score {
			t.Fatalf("results out of order at %d", i)
		}
	}
	// Delete a third and compact: the codes follow the renumbered rows.
	for k := uint64(0); k < n; k += 3 {
		if err := quant.Delete(k); err != nil {
			t.Fatal(err)
		}
		delete(vecs, k)
	}
	quant.Compact()
	if got := recall(t, quant, vecs, queries, 10, 64); got < 0.9 {
		t.Errorf("after Compact: quantized recall %.4f", got)
	}
}

// Code rows at widths around the 32-byte blocks: the row kernel over a
// node's code equals the dot of the codes' first dim elements (the
// padding and the scale add nothing), and SearchOptions.Float32 walks a
// quantized index exactly as an index without codes.
func TestQuantizedLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 2))
	for _, dim := range []int{1, 27, 28, 29, 30, 31, 32, 60, 61, 100} {
		mix := newMixture(r, 5, dim)
		data := mix.sample(r, 300)
		q, err := New(&Options{Dim: dim, M: 8, EfConstruction: 40, Quantize: true})
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(&Options{Dim: dim, M: 8, EfConstruction: 40})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range data {
			if err := q.Insert(uint64(i), v); err != nil {
				t.Fatal(err)
			}
			if err := p.Insert(uint64(i), v); err != nil {
				t.Fatal(err)
			}
		}
		s := q.searcher()
		s.qc = growI8(s.qc, q.cstride)
		s.qs = simd.QuantizeInt8(q.vec(0), s.qc[:q.cstride-4])
		clear(s.qc[q.cstride-4:])
		ids := []uint32{0, 7, 299}
		out := make([]int32, len(ids))
		simd.DotInt8Rows(s.qc, q.codes, ids, out)
		for i, id := range ids {
			if want := simd.DotInt8(s.qc[:dim], q.code(id)[:dim]); out[i] != want {
				t.Fatalf("dim %d row %d: %d, want %d over the codes alone", dim, id, out[i], want)
			}
		}
		q.pool.Put(s)
		for _, v := range mix.sample(r, 5) {
			a, err := q.Search(context.Background(), v, 5, &SearchOptions{Ef: 20, Float32: true})
			if err != nil {
				t.Fatal(err)
			}
			b, err := p.Search(context.Background(), v, 5, &SearchOptions{Ef: 20})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("dim %d: Float32 walk %v, plain index %v", dim, a, b)
			}
		}
		if q.CodeBytes() < 300*q.cstride || q.cstride%32 != 0 || q.cstride < dim+4 || p.CodeBytes() != 0 {
			t.Fatalf("CodeBytes %d, %d", q.CodeBytes(), p.CodeBytes())
		}
	}
}

// Quantize after Load gives the index the codes it would have had from
// the start: the same searches give the same results as on an index built
// with Options.Quantize (the graph is built from float32 vectors either
// way), and again after the index grows.
func TestQuantizeAfterLoad(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 2))
	const n, dim = 1500, 48
	mix := newMixture(r, 10, dim)
	data := mix.sample(r, n)
	built, err := New(&Options{Dim: dim, M: 8, EfConstruction: 60, Quantize: true})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := New(&Options{Dim: dim, M: 8, EfConstruction: 60})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range data {
		for _, h := range []*HNSW{built, plain} {
			if err := h.Insert(uint64(i), v); err != nil {
				t.Fatal(err)
			}
		}
	}
	var buf bytes.Buffer
	if err := plain.Save(&buf); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.CodeBytes() != 0 {
		t.Fatal("Load returned codes")
	}
	loaded.Quantize()
	loaded.Quantize() // idempotent
	if loaded.CodeBytes() == 0 {
		t.Fatal("Quantize made no codes")
	}
	same := func(stage string) {
		t.Helper()
		for _, q := range mix.sample(r, 50) {
			a, err := built.Search(context.Background(), q, 10, &SearchOptions{Ef: 40})
			if err != nil {
				t.Fatal(err)
			}
			b, err := loaded.Search(context.Background(), q, 10, &SearchOptions{Ef: 40})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a, b) {
				t.Fatalf("%s: built with codes %v, quantized after load %v", stage, a, b)
			}
		}
	}
	same("after Load")
	for i, v := range mix.sample(r, 500) {
		for _, h := range []*HNSW{built, loaded} {
			if err := h.Insert(uint64(n+i), v); err != nil {
				t.Fatal(err)
			}
		}
	}
	same("after growing")
}

// SaveGraph and LoadGraph give back the index Save and Load give, its
// vectors taken from the caller; the graph file is refused by Load, and a
// missing or mis-sized vector by LoadGraph.
func TestSaveGraphLoadGraph(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 2))
	mix := newMixture(r, 8, 40)
	h, vecs := buildIndex(t, r, mix, 800)
	for k := uint64(0); k < 800; k += 7 {
		if err := h.Delete(k); err != nil {
			t.Fatal(err)
		}
	}
	var full, graph bytes.Buffer
	if err := h.Save(&full); err != nil {
		t.Fatal(err)
	}
	if err := h.SaveGraph(&graph); err != nil {
		t.Fatal(err)
	}
	if graph.Len() >= full.Len()/2 {
		t.Fatalf("graph %d bytes, full %d", graph.Len(), full.Len())
	}
	if _, err := Load(bytes.NewReader(graph.Bytes())); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Load of a graph file: %v", err)
	}
	// The vectors as the index keeps them: of unit length (LoadGraph
	// shares them, it does not normalise them again).
	units := make([][]float32, len(vecs))
	for k, v := range vecs {
		units[k] = make([]float32, len(v))
		if err := unitVector(v, units[k], len(v)); err != nil {
			t.Fatal(err)
		}
	}
	vector := func(key uint64) []float32 { return units[key] }
	if _, err := LoadGraph(bytes.NewReader(graph.Bytes()), func(key uint64) []float32 { return vecs[key] }); !errors.Is(err, ErrCorrupt) || !errors.Is(err, ErrNotUnit) {
		t.Fatalf("LoadGraph with vectors not of unit length: %v", err)
	}
	g, err := LoadGraph(bytes.NewReader(graph.Bytes()), vector)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := g.Save(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), full.Bytes()) {
		t.Fatal("LoadGraph gave another index than Save and Load")
	}
	// LoadGraphQuantized is LoadGraph then Quantize: the same graph, the
	// same codes, the same code walk.
	q, err := LoadGraphQuantized(bytes.NewReader(graph.Bytes()), vector)
	if err != nil {
		t.Fatal(err)
	}
	again.Reset()
	if err := q.Save(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), full.Bytes()) {
		t.Fatal("LoadGraphQuantized gave another graph than Save and Load")
	}
	g.Quantize()
	if !q.quant || !g.quant || q.n != g.n || !slices.Equal(q.codes[:q.n*q.cstride], g.codes[:g.n*g.cstride]) {
		t.Fatal("LoadGraphQuantized made other codes than LoadGraph and Quantize")
	}
	for _, v := range mix.sample(r, 20) {
		a, err := q.Search(context.Background(), v, 10, &SearchOptions{CodeScores: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := g.Search(context.Background(), v, 10, &SearchOptions{CodeScores: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) {
			t.Fatalf("code walks differ: %v and %v", a, b)
		}
	}
	// A full file (Save) read through it is coded too.
	fq, err := LoadGraphQuantized(bytes.NewReader(full.Bytes()), vector)
	if err != nil || !fq.quant || !slices.Equal(fq.codes[:fq.n*fq.cstride], g.codes[:g.n*g.cstride]) {
		t.Fatalf("LoadGraphQuantized of a file with its vectors: %v, codes made %v", err, err == nil && fq.quant)
	}
	if _, err := LoadGraphQuantized(bytes.NewReader(graph.Bytes()), nil); !errors.Is(err, ErrOptions) {
		t.Fatalf("LoadGraphQuantized without the vectors: %v", err)
	}
	if _, err := LoadGraph(bytes.NewReader(graph.Bytes()), func(uint64) []float32 { return nil }); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("LoadGraph without the vectors: %v", err)
	}
	if _, err := LoadGraph(bytes.NewReader(graph.Bytes()), func(uint64) []float32 { return make([]float32, 39) }); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("LoadGraph with vectors of another dimension: %v", err)
	}
}

// CodeScores returns the codes' best k unre-scored: nearly the nodes the
// re-scored search returns, each score within the codes' error of the
// exact cosine.
func TestCodeScores(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 2))
	mix := newMixture(r, 10, 64)
	h, err := New(&Options{Dim: 64, M: 12, EfConstruction: 80, Quantize: true})
	if err != nil {
		t.Fatal(err)
	}
	data := mix.sample(r, 2000)
	for i, v := range data {
		if err := h.Insert(uint64(i), v); err != nil {
			t.Fatal(err)
		}
	}
	unit := func(v []float32) []float32 {
		u := make([]float32, len(v))
		if err := unitVector(v, u, len(v)); err != nil {
			t.Fatal(err)
		}
		return u
	}
	same, total := 0, 0
	for _, q := range mix.sample(r, 30) {
		exact, err := h.Search(context.Background(), q, 40, &SearchOptions{Ef: 80})
		if err != nil {
			t.Fatal(err)
		}
		coded, err := h.Search(context.Background(), q, 40, &SearchOptions{Ef: 80, CodeScores: true})
		if err != nil {
			t.Fatal(err)
		}
		in := map[uint64]bool{}
		for _, e := range exact {
			in[e.Key] = true
		}
		qn := unit(q)
		for i, c := range coded {
			if i > 0 && coded[i-1].Score < c.Score {
				t.Fatal("code scores out of order")
			}
			if cos := simd.Dot(qn, unit(data[c.Key])); math.Abs(float64(cos-c.Score)) > 0.05 {
				t.Fatalf("key %d: code score %v, exact cosine %v", c.Key, c.Score, cos)
			}
			if in[c.Key] {
				same++
			}
			total++
		}
	}
	if float64(same) < 0.9*float64(total) {
		t.Fatalf("%d of %d code-ranked results are in the re-scored top k", same, total)
	}
}

// An index over shared vectors (Options.SharedVectors) is the index that
// copies them: the same graph from the same inserts, the same saved bytes,
// the same searches, through deletes and Compact; and it refuses vectors
// it cannot keep as they are.
func TestSharedVectors(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 2))
	mix := newMixture(r, 8, 48)
	data := mix.sample(r, 1500)
	// The shared vectors live off the Go heap, as the engine's do.
	mem := offheap.New[float32](0)
	arena := mem.Grow(len(data) * 48)
	for i, v := range data {
		if err := unitVector(v, arena[i*48:(i+1)*48], 48); err != nil {
			t.Fatal(err)
		}
	}
	own, err := New(&Options{Dim: 48, M: 10, EfConstruction: 80, Quantize: true})
	if err != nil {
		t.Fatal(err)
	}
	shared, err := New(&Options{Dim: 48, M: 10, EfConstruction: 80, Quantize: true, SharedVectors: true, KeepAlive: mem})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range data {
		if err := own.Insert(uint64(i), v); err != nil {
			t.Fatal(err)
		}
		if err := shared.Insert(uint64(i), arena[i*48:(i+1)*48]); err != nil {
			t.Fatal(err)
		}
	}
	same := func(when string) {
		t.Helper()
		var a, b bytes.Buffer
		if err := own.Save(&a); err != nil {
			t.Fatal(err)
		}
		if err := shared.Save(&b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("%s: the shared index saves other bytes than the copying one", when)
		}
		for _, q := range mix.sample(r, 20) {
			x, err1 := own.Search(context.Background(), q, 10, nil)
			y, err2 := shared.Search(context.Background(), q, 10, nil)
			if err1 != nil || err2 != nil || !slices.Equal(x, y) {
				t.Fatalf("%s: searches differ: %v %v / %v %v", when, x, err1, y, err2)
			}
		}
	}
	same("built")
	for k := uint64(0); k < 1500; k += 5 {
		if err := own.Delete(k); err != nil {
			t.Fatal(err)
		}
		if err := shared.Delete(k); err != nil {
			t.Fatal(err)
		}
	}
	own.Compact()
	shared.Compact()
	same("compacted")

	if err := shared.Insert(9000, data[0]); !errors.Is(err, ErrNotUnit) {
		t.Fatalf("Insert of a vector not of unit length: %v", err)
	}
	bad := slices.Clone(arena[:48])
	bad[3] = float32(math.NaN())
	if err := shared.Insert(9001, bad); !errors.Is(err, ErrNotFinite) {
		t.Fatalf("Insert of a NaN vector: %v", err)
	}
	if err := shared.Insert(9002, arena[:47]); !errors.Is(err, ErrDimension) {
		t.Fatalf("Insert of a short vector: %v", err)
	}
}

// A node inserted when every node the search meets is deleted is still
// found: it links to the tombstones rather than to nothing (it used to be
// unreachable from the entry point).
func TestInsertAfterEveryNodeDeleted(t *testing.T) {
	for _, quant := range []bool{false, true} {
		h, err := New(&Options{Dim: 4, Quantize: quant})
		if err != nil {
			t.Fatal(err)
		}
		for k := range 5 {
			if err := h.Insert(uint64(k), []float32{1, float32(k), 0, 0}); err != nil {
				t.Fatal(err)
			}
		}
		for k := range 5 {
			if err := h.Delete(uint64(k)); err != nil {
				t.Fatal(err)
			}
		}
		for k := 10; k < 13; k++ {
			if err := h.Insert(uint64(k), []float32{0, 1, float32(k), 0}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := h.Search(context.Background(), []float32{0, 1, 11, 0}, 5, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 3 || res[0].Key != 11 {
			t.Fatalf("quantize %v: found %+v, want the 3 live nodes, 11 first", quant, res)
		}
	}
}

// Erase deletes a key and zeroes its vector and code; the index saves and
// loads with the erased node as a tombstone.
func TestEraseZeroesTheVector(t *testing.T) {
	h, err := New(&Options{Dim: 4, Quantize: true})
	if err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		if err := h.Insert(uint64(k), []float32{1, float32(k), 1, 0}); err != nil {
			t.Fatal(err)
		}
	}
	id, _ := h.byKey.get(1, h.keys)
	if err := h.Erase(1); err != nil {
		t.Fatal(err)
	}
	if h.Contains(1) || h.Len() != 2 {
		t.Fatalf("after Erase: contains %v, len %d", h.Contains(1), h.Len())
	}
	for _, x := range h.vec(id) {
		if x != 0 {
			t.Fatalf("vector %v", h.vec(id))
		}
	}
	for _, x := range h.code(id) {
		if x != 0 {
			t.Fatalf("code %v", h.code(id))
		}
	}
	if err := h.Erase(1); err != nil {
		t.Fatalf("a second Erase (the deleted node's zeros again): %v", err)
	}
	if err := h.Erase(77); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Erase of a key never inserted: %v", err)
	}
	res, err := h.Search(context.Background(), []float32{1, 1, 1, 0}, 3, nil)
	if err != nil || len(res) != 2 {
		t.Fatalf("search after Erase: %+v %v", res, err)
	}
}

// Keys yields every live key once, in the order of insertion (a key
// inserted again after Delete at its new place), deleted and erased ones
// not, and stops when the loop does.
func TestKeys(t *testing.T) {
	h, err := New(&Options{Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for k := range uint64(50) {
		v := []float32{float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64()), 1}
		if err := h.Insert(k*3, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Delete(9); err != nil {
		t.Fatal(err)
	}
	if err := h.Erase(12); err != nil {
		t.Fatal(err)
	}
	if err := h.Insert(9, []float32{0, 0, 1, 1}); err != nil { // a new node, the old one a tombstone
		t.Fatal(err)
	}
	var got []uint64
	for k := range h.Keys() {
		got = append(got, k)
	}
	var want []uint64 // in the order of insertion
	for k := range uint64(50) {
		if k*3 != 9 && k*3 != 12 {
			want = append(want, k*3)
		}
	}
	want = append(want, 9)
	if !slices.Equal(got, want) || len(got) != h.Len() {
		t.Fatalf("Keys %v (Len %d), want %v", got, h.Len(), want)
	}
	n := 0
	for range h.Keys() {
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Fatalf("the loop ran %d times after a break at 3", n)
	}
}

// Shared vectors on the Go heap, which nothing but the index references,
// stay alive and unchanged through collections: the index's references
// live off the heap, where the collector does not look, so it pins them.
func TestSharedHeapVectorsStayAlive(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 2))
	const n, dim = 2000, 32
	h, err := New(&Options{Dim: dim, M: 8, EfConstruction: 40, SharedVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]float32, n)
	for i := range n {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		if err := unitVector(v, v, dim); err != nil {
			t.Fatal(err)
		}
		want[i] = slices.Clone(v)
		if err := h.Insert(uint64(i), v); err != nil {
			t.Fatal(err)
		}
	}
	// Collect, and fill the freed memory with other values of the same size.
	var junk [][]float32
	for range 3 {
		runtime.GC()
		for range 4 * n {
			j := make([]float32, dim)
			for k := range j {
				j[k] = 7
			}
			junk = append(junk, j)
		}
	}
	runtime.KeepAlive(junk)
	for i := range n {
		id, ok := h.byKey.get(uint64(i), h.keys)
		if !ok || !slices.Equal(h.vec(id), want[i]) {
			t.Fatalf("key %d: its vector changed after a collection", i)
		}
	}
}
