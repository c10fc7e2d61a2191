package tidemark

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/tidemark/tidemark/internal/wire"
	"github.com/tidemark/tidemark/temporal"
)

// snapshotSeed is a snapshot body of a collection that used every record
// kind: keyed facts with a supersession, a dependency, a document and its
// update, feedback, access counts and a consolidation run.
func snapshotSeed(t testing.TB) []byte {
	ctx := context.Background()
	clock := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return clock }})
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 64, Embedder: "hashing"})
	if err != nil {
		t.Fatal(err)
	}
	day := func(d int) time.Time { return time.Date(2025, 1, d, 0, 0, 0, 0, time.UTC) }
	if _, err := c.Put(ctx, []Memory{
		{ID: "a", Text: "The API rate limit is 100 requests per minute.", ValidFrom: day(1), Source: temporal.SourcePolicy},
		{ID: "b", Text: "The API rate limit is 250 requests per minute.", ValidFrom: day(20)},
		{ID: "c", Text: "Clients retry after a 429.", DependsOn: []string{"b"}},
		{ID: "c2", Text: "Clients retry after a 429!"},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutDocument(ctx, "guide", "Intro paragraph.\n\nThe limit section says 250.", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateDocument(ctx, "guide", "Intro paragraph.\n\nThe limit section says 300.", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Feedback(ctx, "b", true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Search(ctx, &SearchRequest{Text: "rate limit", K: 3, CountAccess: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Consolidate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	return snapshotBody(t, db)
}

// snapshotBody is the snapshot body db writes now.
func snapshotBody(t testing.TB, db *DB) []byte {
	t.Helper()
	var buf bytes.Buffer
	db.seq.mu.Lock()
	err := db.writeState(&buf)
	db.seq.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The snapshot body round-trips: what writeState writes, readState reads
// into collections that agree with their indexes and derive the same link
// graph, and that write the same bytes again.
func TestSnapshotBodyRoundTrip(t *testing.T) {
	b := snapshotSeed(t)
	db := &DB{opts: (*Options)(nil).WithDefaults(), colls: map[string]*Collection{}}
	if err := db.readState(bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
	if len(db.info.IndexRebuilt) != 0 {
		t.Fatalf("indexes rebuilt on load: %v", db.info.IndexRebuilt)
	}
	checkConsistent(t, db)
	var again bytes.Buffer
	if err := db.writeState(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), b) {
		t.Fatalf("the snapshot re-encodes to other bytes (%d, was %d)", again.Len(), len(b))
	}
}

// A snapshot body is read without panicking whatever its bytes; what reads
// without error is a consistent ledger that writes itself again.
func FuzzSnapshotBody(f *testing.F) {
	f.Add(snapshotSeed(f))
	f.Add(driftSnapshotSeed(f))
	f.Add([]byte{3, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		db := &DB{opts: (*Options)(nil).WithDefaults(), colls: map[string]*Collection{}}
		if err := db.readState(bytes.NewReader(b), int64(len(b))); err != nil {
			return
		}
		for _, c := range db.colls {
			if err := c.checkLinks(); err != nil {
				t.Fatalf("collection %q: %v", c.name, err)
			}
		}
		var out bytes.Buffer
		if err := db.writeState(&out); err != nil {
			t.Fatalf("a snapshot that reads does not write: %v", err)
		}
	})
}

// A database written by the build before the link graph was derived
// (snapshot format 2, with the graph in it; testdata/snapshot-v2, made by
// commit be9705b) opens: the stored graph is skipped, the derived one
// matches the ledger, and the memories read as they were written.
func TestOpenSnapshotFormat2(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"snapshot", "00000000000000000001.wal"} {
		b, err := os.ReadFile(filepath.Join("testdata", "snapshot-v2", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := openTest(t, dir, nil)
	defer db.Close()
	checkConsistent(t, db)
	c, err := db.Collection("c")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := c.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Get(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if a.Visible || a.SupersededBy != "b" || !b.Visible {
		t.Fatalf("a %+v\nb %+v", a, b)
	}
	if stored, _ := c.Len(); stored != 5 {
		t.Fatalf("%d memories stored, want 5: a, b, c (c2 restates it), the document's chunk and its update", stored)
	}
}

// A consolidation record naming row -1 is refused by the decoder.
func TestDecodeHostileConsolidateRecord(t *testing.T) {
	var w wire.Writer
	encodeEdits(&w, []edit{{rule: RuleRipple, row: 0, other: -1, value: 0.1}}, nil)
	r := &record{typ: recConsolidate, coll: "c"}
	enc := r.encode()
	enc = append(enc[:len(enc)-2], w.B...) // replace the empty edit lists
	if _, err := decodeRecord(enc); err == nil {
		t.Fatal("a ripple edit with other = -1 decoded")
	}
}

// A log record is decoded without panicking whatever its bytes.
func FuzzDecodeRecord(f *testing.F) {
	for _, r := range []*record{
		{typ: recCreate, coll: "c", opts: CollectionOptions{Dim: 4}},
		{typ: recPut, coll: "c", mems: []Memory{{ID: "a", Text: "t", Vector: []float32{1, 2}, DependsOn: []string{"b"}, ValidFrom: time.Unix(5, 0)}}},
		{typ: recFeedback, coll: "c", id: "a", positive: 1},
		{typ: recDrop, coll: "c"},
		{typ: recConsolidate, coll: "c", edits: []edit{{rule: RuleRipple, row: 1, other: 0, value: 0.15}, {rule: RuleLifecycle, row: 0, value: 1}}, seeds: []int{0}},
		{typ: recPutDoc, coll: "c", mems: []Memory{{ID: "d#0@v2", Text: "t", Vector: []float32{1}}}, replaced: []string{"d#0@v1"}, later: []string{"d#1@v1"}, shift: -3},
		{typ: recAccess, coll: "c", access: []accessCount{{row: 2, n: 5}}},
		{typ: recRetract, coll: "c", id: "a", source: "alice"},
		{typ: recRetract, coll: "c", id: "a", purge: true},
		{typ: recPut, coll: "c", mems: []Memory{{ID: "a", Vector: []float32{1}, IfRevision: 2, metaJSON: `{"team":"red","n":[1,2]}`, Metadata: Metadata{"team": "red", "n": []any{1.0, 2.0}}}}},
	} {
		f.Add(r.encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			return
		}
		// What decodes encodes to a record that decodes to itself.
		enc := r.encode()
		r2, err := decodeRecord(enc)
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if string(r2.encode()) != string(enc) {
			t.Fatalf("round trip differs:\n%x\n%x", r2.encode(), enc)
		}
	})
}

// Rows of a large snapshot are parsed on several goroutines and added in
// order (decodeRows): the collection read that way writes the same bytes
// as the one read row by row, and a damaged or truncated row fails both
// ways with the same error. The collection spans several chunks, the
// last one partial, with keyed supersessions (rows with lists), aliases,
// metadata and text.
func TestSnapshotRowsInParallel(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 16})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(61, 1))
	const n = 3*rowsPerChunk + 77
	var ms []Memory
	for i := range n {
		v := make([]float32, 16)
		for k := range v {
			v[k] = float32(r.NormFloat64())
		}
		m := Memory{ID: fmt.Sprintf("m%d", i), Text: fmt.Sprintf("note %d", i), Vector: v,
			Metadata: map[string]any{"i": i, "team": []string{"red", "blue"}[i%2]}}
		if i%5 == 0 {
			m.Subject, m.Relation, m.Object = fmt.Sprintf("svc%d", i%40), "limit", fmt.Sprint(i)
		}
		ms = append(ms, m)
		if i%97 == 0 { // the same content under another id: an alias
			ms = append(ms, Memory{ID: fmt.Sprintf("alias%d", i), Text: m.Text, Vector: v, Metadata: m.Metadata, Subject: m.Subject, Relation: m.Relation, Object: m.Object})
		}
	}
	for lo := 0; lo < len(ms); lo += 200 {
		if _, err := c.Put(ctx, ms[lo:min(lo+200, len(ms))]); err != nil {
			t.Fatal(err)
		}
	}
	b := snapshotBody(t, db)
	read := func(procs int, body []byte) ([]byte, error) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		d := &DB{opts: (*Options)(nil).WithDefaults(), colls: map[string]*Collection{}}
		if err := d.readState(bytes.NewReader(body), int64(len(body))); err != nil {
			return nil, err
		}
		checkConsistent(t, d)
		if multi := sameBeliefs(t, c, d.colls["c"]); multi == 0 {
			t.Fatal("no row has more than one belief: the test covers less than it says")
		}
		var out bytes.Buffer
		if err := d.writeState(&out); err != nil {
			t.Fatal(err)
		}
		return out.Bytes(), nil
	}
	for _, procs := range []int{1, 2, 4} {
		got, err := read(procs, b)
		if err != nil {
			t.Fatalf("GOMAXPROCS %d: %v", procs, err)
		}
		if !bytes.Equal(got, b) {
			t.Fatalf("GOMAXPROCS %d: the snapshot re-encodes to other bytes (%d, was %d)", procs, len(got), len(b))
		}
	}
	// A row's frame made unreadable (its vector's length claims more than
	// the frame holds), and the body cut in the middle of the rows.
	at := bytes.Index(b, []byte("note 600"))
	if at < 0 {
		t.Fatal("row 600 not found")
	}
	damaged := bytes.Clone(b)
	damaged[at+len("note 600")] = 0xff
	for name, body := range map[string][]byte{"damaged": damaged, "truncated": b[:at]} {
		_, want := read(1, body)
		_, got := read(4, body)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Fatalf("%s: row by row %v, in parallel %v", name, want, got)
		}
		t.Logf("%s: %v", name, got)
	}
}

// TestRowFieldsShareTheirZeros checks that a memory that sets none of the
// rarely set fields allocates nothing for them: storeFields and setText
// share the zero values and copy to the heap only what is set (building
// the value behind a pointer allocated it for every row: Open of a million
// 768-d memories allocated 1.10 GB, and 0.49 GB once neither they nor
// parseRow's row lists did).
func TestRowFieldsShareTheirZeros(t *testing.T) {
	m := Memory{ID: "a", Text: "a note", Vector: []float32{1, 0}}
	var s stored
	if n := testing.AllocsPerRun(100, func() { s = storeFields(&m) }); n != 0 || s.storedRest != &noRest {
		t.Fatalf("storeFields of a memory without the rarer fields: %v allocations, shares noRest %v", n, s.storedRest == &noRest)
	}
	m.Subject = "svc"
	if n := testing.AllocsPerRun(100, func() { s = storeFields(&m) }); n != 1 || s.Subject != "svc" || s.storedRest == &noRest {
		t.Fatalf("storeFields of a memory with a subject: %v allocations, subject %q", n, s.Subject)
	}
	var r row
	if n := testing.AllocsPerRun(100, func() { r.setText(rowText{}) }); n != 0 || r.rowText != &noText {
		t.Fatalf("setText of nothing: %v allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() { r.setText(rowText{normText: "a note"}) }); n != 1 || r.normText != "a note" || r.rowText == &noText {
		t.Fatalf("setText of a text: %v allocations, %q", n, r.normText)
	}
}

// sameBeliefs checks that every row of b has a's beliefs: as many as its
// states, each with the row's vector (a's first belief's) and the
// columns its state gives
// (decodeRows numbers them otherwise than the writes did: each row's
// first belief, then the later ones). It returns how many rows have more
// than one.
func sameBeliefs(t *testing.T, a, b *Collection) (multi int) {
	t.Helper()
	if a.rows.len() != b.rows.len() || a.batch.Len() != b.batch.Len() {
		t.Fatalf("%d rows, %d beliefs; read back %d, %d", a.rows.len(), a.batch.Len(), b.rows.len(), b.batch.Len())
	}
	d := a.opts.Dim
	for j := range a.rows.len() {
		ra, rb := a.rows.at(j), b.rows.at(j)
		ba, bb := ra.beliefList(), rb.beliefList()
		if len(bb) != len(ba) || len(bb) != len(rb.stateList()) {
			t.Fatalf("row %d: %d beliefs, %d states; was %d beliefs", j, len(bb), len(rb.stateList()), len(ba))
		}
		if len(bb) > 1 {
			multi++
		}
		for k := range bb {
			x, y := ba[k], bb[k]
			if !slices.Equal(a.batch.Vectors[ba[0]*d:(ba[0]+1)*d], b.batch.Vectors[y*d:(y+1)*d]) || b.batch.ID[y] != uint64(j) ||
				b.batch.ValidFrom[y] != a.batch.ValidFrom[x] || b.batch.ValidTo[y] != a.batch.ValidTo[x] ||
				b.batch.RecordedAt[y] != a.batch.RecordedAt[x] || b.batch.RetiredAt[y] != a.batch.RetiredAt[x] {
				t.Fatalf("row %d belief %d (%d, was %d): the vector or columns differ", j, k, y, x)
			}
		}
	}
	return multi
}
