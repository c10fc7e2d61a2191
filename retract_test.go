package tidemark

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidemark/tidemark/embed"
	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/temporal"
)

// searchIDs returns the ids a search finds, best first.
func searchIDs(t *testing.T, c *Collection, req *SearchRequest) []string {
	t.Helper()
	res, err := c.Search(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}

// copyDir copies the files of dir to a new directory: the image a crash
// would leave of a database whose writes all returned (each is fsynced).
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "LOCK" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(out, d.Name()), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// afterReopening closes db and opens it twice more, calling check with
// collection name each time: from the image a crash would have left
// before the Close (a log replay), and from dir itself (the snapshot
// Close wrote).
func afterReopening(t *testing.T, db *DB, dir string, opts *Options, name string, check func(c *Collection, how string)) {
	t.Helper()
	image := copyDir(t, dir)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, image} {
		how := map[bool]string{true: "after a snapshot", false: "after a log replay"}[d == dir]
		db := openTest(t, d, opts)
		c, err := db.Collection(name)
		if err != nil {
			t.Fatal(err)
		}
		check(c, how)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A retracted update stops being believed at the retraction: current
// answers return the value it had replaced, a query as of a transaction
// time before the retraction still finds it, and its history says who
// retracted it — the same after a log replay and after a snapshot.
func TestRetractRestoresTheVersionItReplaced(t *testing.T) {
	dir := t.TempDir()
	clock := time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)
	opts := &Options{Clock: func() time.Time { return clock }}
	db := openTest(t, dir, opts)
	defer func() { db.Close() }()
	ctx := context.Background()
	c := createTest(t, db, "facts", &CollectionOptions{Dim: 4})
	day := func(m, d int) time.Time { return time.Date(2025, time.Month(m), d, 0, 0, 0, 0, time.UTC) }
	put := func(m Memory) {
		t.Helper()
		if _, err := c.Put(ctx, []Memory{m}); err != nil {
			t.Fatal(err)
		}
	}
	put(Memory{ID: "limit-100", Text: "The API rate limit is 100 requests per minute.", Vector: unit(4, 0),
		Kind: temporal.Versioned, Subject: "api", Relation: "rate limit", Object: "100", ValidFrom: day(1, 1)})
	put(Memory{ID: "other", Text: "Requests time out after 30 seconds.", Vector: unit(4, 2)})
	clock = clock.Add(time.Hour)
	put(Memory{ID: "limit-250", Text: "The API rate limit is 250 requests per minute.", Vector: unit(4, 0),
		Kind: temporal.Versioned, Subject: "api", Relation: "rate limit", Object: "250", ValidFrom: day(6, 1)})
	q := &SearchRequest{Vector: unit(4, 0), K: 2}
	if got := searchIDs(t, c, q); !slices.Equal(got, []string{"limit-250", "other"}) {
		t.Fatalf("before the retraction: %v", got)
	}
	beforeRetraction := clock
	clock = clock.Add(time.Hour)
	res, err := c.Retract(ctx, "limit-250", &RetractOptions{By: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.IDs, []string{"limit-250"}) || !slices.Equal(res.Restored, []string{"limit-100"}) || res.Unchanged {
		t.Fatalf("result %+v", res)
	}
	if again, err := c.Retract(ctx, "limit-250", nil); err != nil || !again.Unchanged {
		t.Fatalf("a second retraction: %+v, %v", again, err)
	}
	if _, err := c.Retract(ctx, "nobody", nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown id: %v", err)
	}
	check := func(c *Collection, how string) {
		t.Helper()
		for _, plan := range []Plan{PlanExact, PlanANN} {
			for _, m := range []temporal.Method{temporal.MethodTidemark, temporal.MethodPlain} {
				p := temporal.Preset(m)
				q := &SearchRequest{Vector: unit(4, 0), K: 2, Plan: plan, Params: &p}
				if got := searchIDs(t, c, q); !slices.Equal(got, []string{"limit-100", "other"}) {
					t.Fatalf("%s, plan %v, method %v: current answers %v, want the restored limit-100 and other", how, plan, m, got)
				}
			}
			q := &SearchRequest{Vector: unit(4, 0), K: 1, Plan: plan, AsOfTx: beforeRetraction}
			if got := searchIDs(t, c, q); !slices.Equal(got, []string{"limit-250"}) {
				t.Fatalf("%s, plan %v: as of the transaction time before the retraction: %v", how, plan, got)
			}
		}
		m, err := c.Get(ctx, "limit-250")
		if err != nil {
			t.Fatal(err)
		}
		if m.Visible || m.RetractedBy != "alice" || !m.RetractedAt.Equal(beforeRetraction.Add(time.Hour)) {
			t.Fatalf("%s: the retracted memory: visible %v, retracted by %q at %v", how, m.Visible, m.RetractedBy, m.RetractedAt)
		}
		old, err := c.Get(ctx, "limit-100")
		if err != nil {
			t.Fatal(err)
		}
		if !old.Visible || old.SupersededBy != "" || !old.ValidTo.IsZero() || len(old.Beliefs) != 3 {
			t.Fatalf("%s: the restored memory: visible %v, superseded by %q, valid to %v, beliefs %+v", how, old.Visible, old.SupersededBy, old.ValidTo, old.Beliefs)
		}
		h, err := c.History(ctx, "limit-250")
		if err != nil || len(h) != 2 || h[1].ID != "limit-250" || h[1].RetractedBy != "alice" {
			t.Fatalf("%s: history %+v, %v", how, h, err)
		}
		var audited bool
		audit, err := c.Audit(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range audit {
			audited = audited || a.Rule == RuleRetract && a.ID == "limit-250" && a.By == "alice"
		}
		if !audited {
			t.Fatalf("%s: no audit entry for the retraction", how)
		}
		checkConsistent(t, c.db)
	}
	check(c, "live")

	// A later update of the fact supersedes the restored version as usual.
	afterReopening(t, db, dir, opts, "facts", func(c2 *Collection, how string) {
		check(c2, how)
		clock = clock.Add(time.Hour)
		if _, err := c2.Put(ctx, []Memory{{ID: "limit-300" + how, Text: "The API rate limit is 300 requests per minute.", Vector: unit(4, 0),
			Kind: temporal.Versioned, Subject: "api", Relation: "rate limit", Object: "300", ValidFrom: day(7, 1)}}); err != nil {
			t.Fatal(err)
		}
		if got := searchIDs(t, c2, &SearchRequest{Vector: unit(4, 0), K: 1}); !slices.Equal(got, []string{"limit-300" + how}) {
			t.Fatalf("%s: after a new update: %v", how, got)
		}
		checkConsistent(t, c2.db)
	})
}

// A purge erases a memory's text and vector from every file once a
// checkpoint has run, with the rest of its split family; the id stays
// retired, the audit says it was purged, and the database reopens
// consistent.
func TestPurgeErasesEveryCopy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db := openTest(t, dir, nil)
	defer func() { db.Close() }()
	ctx := context.Background()
	c := createTest(t, db, "notes", &CollectionOptions{Dim: 64, Embedder: "hashing"})
	secret := "The vault code is tangerine-4471 and the backup vault code is zebra-0098."
	out, err := c.Put(ctx, []Memory{
		{ID: "secret", Text: secret},
		{ID: "kept", Text: "The cafeteria opens at nine."},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out[0].Split) < 2 {
		t.Fatalf("the two-fact memory was not split: %+v", out[0])
	}
	sibling := out[0].Split[1]
	scan := func() (found []string) {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err == nil && (bytes.Contains(b, []byte("tangerine-4471")) || bytes.Contains(b, []byte("zebra-0098"))) {
				found = append(found, d.Name())
			}
			return nil
		})
		return found
	}
	if len(scan()) == 0 {
		t.Fatal("the text is in no file before the purge: the scan sees nothing")
	}
	vec, err := c.Get(ctx, "secret")
	if err != nil {
		t.Fatal(err)
	}
	// The family's vectors, to look for them after the purge.
	var family [][]float64
	for _, id := range append([]string{"secret"}, out[0].Split...) {
		m, err := c.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		family = append(family, float64s(m.Vector))
	}
	res, err := c.Retract(ctx, sibling, &RetractOptions{Purge: true, By: "dpo"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.IDs) != len(out[0].Split)+1 || res.IDs[0] != sibling || !slices.Contains(res.IDs, "secret") {
		t.Fatalf("purged %v, want %s and the rest of its family (%v and secret)", res.IDs, sibling, out[0].Split)
	}
	for _, id := range res.IDs {
		if _, err := c.Get(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(%s) after the purge: %v", id, err)
		}
	}
	plain := temporal.Preset(temporal.MethodPlain)
	if got := searchIDs(t, c, &SearchRequest{Vector: vec.Vector, K: 5, Params: &plain}); slices.ContainsFunc(got, func(id string) bool { return slices.Contains(res.IDs, id) }) {
		t.Fatalf("a search still finds a purged memory: %v", got)
	}
	if _, err := c.Put(ctx, []Memory{{ID: "secret", Text: "something else"}}); !errors.Is(err, ErrExists) {
		t.Fatalf("re-using a purged id: %v", err)
	}
	// In memory: no row, drift window or index holds the text or vector.
	c.mu.RLock()
	for _, id := range res.IDs {
		j := c.idRow(id)
		r := c.rows.at(j)
		if r.mem.Text != "" || r.normText != "" || !r.key.IsZero() || r.hash != [32]byte{} {
			t.Errorf("row of %s keeps content: %+v", id, r.mem)
		}
		for _, b := range r.beliefList() {
			if slices.ContainsFunc(c.batch.Vectors[b*64:(b+1)*64], func(x float32) bool { return x != 0 }) {
				t.Errorf("row of %s keeps its vector", id)
			}
		}
		if c.surface.Contains(uint64(j)) || c.archive.Contains(uint64(j)) {
			t.Errorf("an index holds row %d of %s", j, id)
		}
	}
	c.mu.RUnlock()
	c.mu.RLock()
	held := 0
	for name, g := range c.drift {
		for p := range g.det.Held() {
			held++
			for i, v := range family {
				if slices.Equal(g.det.Embedding(p), v) {
					t.Errorf("drift group %s keeps the vector of family member %d", name, i)
				}
			}
		}
	}
	c.mu.RUnlock()
	if held == 0 {
		t.Fatal("no drift window holds anything: the check sees nothing")
	}
	var purged int
	audit, err := c.Audit(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range audit {
		if a.Rule == RulePurge && a.By == "dpo" {
			purged++
		}
	}
	if purged != len(res.IDs) {
		t.Fatalf("%d purge audit entries for %d memories", purged, len(res.IDs))
	}
	if err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if found := scan(); len(found) > 0 {
		t.Fatalf("after the purge and a checkpoint the text is still in %v", found)
	}
	checkConsistent(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, dir, nil)
	c, err = db.Collection("notes")
	if err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, db)
	if m, err := c.Get(ctx, "kept"); err != nil || m.Text != "The cafeteria opens at nine." {
		t.Fatalf("kept memory: %+v %v", m, err)
	}
	if _, err := c.Get(ctx, "secret"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(secret) after reopening: %v", err)
	}
}

func float64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// A purged text's vector leaves the remote embedder's cache file too:
// after the purge the file holds no copy of it, and the same text written
// again is embedded again.
func TestPurgeForgetsTheCachedEmbedding(t *testing.T) {
	ctx := context.Background()
	f := newFakeEmbedder(t, 64, "")
	dir := t.TempDir()
	db := openTest(t, dir, nil)
	defer db.Close()
	c, err := db.CreateCollection(ctx, "docs", &CollectionOptions{Dim: 64, Embedder: "openai",
		Remote: RemoteEmbedder{BaseURL: f.srv.URL + "/v1", Model: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	text := "The vault code is tangerine-4471."
	if _, err := c.Put(ctx, []Memory{{ID: "secret", Text: text}, {ID: "kept", Text: "The cafeteria opens at nine."}}); err != nil {
		t.Fatal(err)
	}
	// The vector as the cache file stores it: the model's answer (the
	// fake's hashing embedder), as float32 bits.
	h, err := embed.NewHashing(&embed.HashingOptions{Dim: 64})
	if err != nil {
		t.Fatal(err)
	}
	answer, err := h.Embed(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 0, 4*64)
	for _, x := range answer[0] {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
	}
	cached := func() bool {
		b, err := os.ReadFile(filepath.Join(dir, embedCacheFile))
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Contains(b, raw)
	}
	if !cached() {
		t.Fatal("the vector is not in the cache file before the purge: the check sees nothing")
	}
	if _, err := c.Retract(ctx, "secret", &RetractOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if cached() {
		t.Fatal("the cache file still holds the purged text's vector")
	}
	before := f.txts.Load()
	if _, err := c.Put(ctx, []Memory{{ID: "again", Text: text}}); err != nil {
		t.Fatal(err)
	}
	if f.txts.Load() != before+1 {
		t.Fatal("the purged text was answered from the cache")
	}
}

// Metadata whose stored JSON outgrows the limit (a number written out)
// is refused at Put, not stored to make the log unreadable.
func TestMetadataLimitOnTheStoredForm(t *testing.T) {
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	c := createTest(t, db, "kb", &CollectionOptions{Dim: 4})
	md := Metadata{}
	for i := range 1200 {
		md[fmt.Sprintf("k%04d", i)] = json.Number("1e20")
	}
	if _, err := c.Put(context.Background(), []Memory{{ID: "a", Vector: unit(4, 0), Metadata: md}}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("metadata that grows past the limit: %v", err)
	}
}

// A purge leaves nothing of the memory's content: not its fact key (in
// the chains, or as a drift group's name), not its text in the maps, not
// its metadata in the columns, not its int8 code in the index it left
// before; and the drift windows read the same live and after a snapshot.
func TestPurgeLeavesNoContent(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir, nil)
	ctx := context.Background()
	c := createTest(t, db, "kb", &CollectionOptions{Dim: 4})
	put := func(ms ...Memory) {
		t.Helper()
		if _, err := c.Put(ctx, ms); err != nil {
			t.Fatal(err)
		}
	}
	put(Memory{ID: "doc", Text: "zqfirst secret draft of the plan", Vector: unit(4, 0), Subject: "zqsecretsubject", Relation: "zqsecretrelation",
		Object: "one", Metadata: Metadata{"tag": "zqmetavalue-secret"}})
	put(Memory{ID: "doc", Text: "zqsecond secret draft of the plan", Vector: unit(4, 1), Subject: "zqsecretsubject", Relation: "zqsecretrelation",
		Object: "two", Metadata: Metadata{"tag": "zqmetavalue-secret"}})
	// Two memories of one group with one vector: purging one keeps the other's observation.
	put(Memory{ID: "twin-a", Text: "twin a", Vector: unit(4, 2), Subject: "s", Relation: "r", Object: "a"},
		Memory{ID: "twin-b", Text: "twin b", Vector: unit(4, 2), Subject: "s", Relation: "q", Object: "b"})
	for _, id := range []string{"doc", "twin-a"} {
		if _, err := c.Retract(ctx, id, &RetractOptions{Purge: true}); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.RLock()
	for k := range c.byKey {
		if strings.Contains(k.Subject, "zq") {
			t.Errorf("byKey keeps %v", k)
		}
	}
	for name := range c.drift {
		if strings.Contains(name, "zq") {
			t.Errorf("a drift group is named %q", name)
		}
	}
	for text := range c.byText {
		if strings.Contains(text, "zq") {
			t.Errorf("byText keeps %q", text)
		}
	}
	for lead := range c.byLead {
		if strings.Contains(lead, "zq") {
			t.Errorf("byLead keeps %q", lead)
		}
	}
	for _, s := range c.meta.strs {
		if strings.Contains(s, "zq") {
			t.Errorf("the metadata columns keep %q", s)
		}
	}
	for _, h := range []*index.HNSW{c.surface, c.archive} {
		for _, row := range []uint64{0, 1} {
			if code := h.CodeOf(row); slices.ContainsFunc(code, func(x int8) bool { return x != 0 }) {
				t.Errorf("an index keeps the code of purged row %d: %v", row, code)
			}
		}
	}
	live := map[string][][]float64{}
	for name, g := range c.drift {
		for p := range g.det.Held() {
			live[name] = append(live[name], g.det.Embedding(p))
		}
	}
	c.mu.RUnlock()
	if err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		for _, s := range []string{"zqfirst", "zqsecond", "zqsecretsubject", "zqsecretrelation", "zqmetavalue"} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q after the purge and a checkpoint", e.Name(), s)
			}
		}
	}
	afterReopening(t, db, dir, nil, "kb", func(c *Collection, how string) {
		c.mu.RLock()
		defer c.mu.RUnlock()
		for name, g := range c.drift {
			var got [][]float64
			for p := range g.det.Held() {
				got = append(got, g.det.Embedding(p))
			}
			if !slices.EqualFunc(got, live[name], slices.Equal) {
				t.Errorf("%s: drift group %q holds %v, live %v", how, name, got, live[name])
			}
		}
		if len(c.drift) != len(live) {
			t.Errorf("%s: %d drift groups, live %d", how, len(c.drift), len(live))
		}
	})
}

// A write of another memory's text with other metadata is a memory of its
// own, not folded into the other (whose metadata, filters and
// retraction it would share).
func TestDuplicateTextWithOtherMetadataStaysApart(t *testing.T) {
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	ctx := context.Background()
	c := createTest(t, db, "kb", &CollectionOptions{Dim: 4})
	out, err := c.Put(ctx, []Memory{{ID: "a", Text: "The office opens at nine.", Vector: unit(4, 0), Metadata: Metadata{"tenant": "t1"}},
		{ID: "b", Text: "The office opens at nine.", Vector: unit(4, 0), Metadata: Metadata{"tenant": "t2"}}})
	if err != nil || out[1].Outcome != Stored {
		t.Fatalf("put: %+v %v", out, err)
	}
	t2, _ := ParseFilter([]byte(`{"tenant":"t2"}`))
	if n, _ := c.Count(ctx, &ListRequest{Filter: t2, All: true}); n != 1 {
		t.Fatalf("tenant t2 has %d memories, want 1", n)
	}
	res, err := c.Retract(ctx, "b", nil)
	if err != nil || !slices.Equal(res.IDs, []string{"b"}) {
		t.Fatalf("retracting b: %+v %v", res, err)
	}
	if m, _ := c.Get(ctx, "a"); m.RetractedAt != (time.Time{}) {
		t.Fatal("retracting b retracted a")
	}
}

// A memory that was split goes with its statements: retracting it
// withdraws its siblings, a new version of it withdraws the old
// version's siblings, and purging a sibling after the id was rewritten
// erases the version it came from.
func TestSplitMemoriesGoWithTheirSiblings(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir, nil)
	ctx := context.Background()
	c := createTest(t, db, "notes", &CollectionOptions{Dim: 64, Embedder: "hashing"})
	two := "The vault code is tangerine-4471 and the backup vault code is zebra-0098."
	out, err := c.Put(ctx, []Memory{{ID: "secret", Text: two}})
	if err != nil || len(out[0].Split) < 2 {
		t.Fatalf("not split: %+v %v", out, err)
	}
	sib := out[0].Split[0]
	if _, err := c.Put(ctx, []Memory{{ID: "secret", Text: "The vault is empty."}}); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Count(ctx, nil); n != 1 {
		all, _ := c.List(ctx, nil)
		t.Fatalf("after a new version of the split memory, %d current: %+v", n, all.Memories)
	}
	res, err := c.Retract(ctx, sib, &RetractOptions{Purge: true})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := c.Get(ctx, "secret"); err != nil || m.Text != "The vault is empty." || m.Purged {
		t.Fatalf("purging a sibling of the first version touched the second: %+v %v (%+v)", m, err, res)
	}
	if err := db.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if bytes.Contains(b, []byte("tangerine-4471")) || bytes.Contains(b, []byte("zebra-0098")) {
			t.Errorf("%s holds the first version's text", e.Name())
		}
	}
	out, err = c.Put(ctx, []Memory{{ID: "other", Text: "The gate opens at seven and the canteen opens at eight."}})
	if err != nil || len(out[0].Split) < 2 {
		t.Fatalf("not split: %+v %v", out, err)
	}
	if _, err := c.Retract(ctx, "other", nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Count(ctx, nil); n != 1 {
		t.Fatalf("after retracting a split memory, %d current, want 1 (secret)", n)
	}
	checkConsistent(t, db)
	db.Close()
}

// A retracted memory stays in its fact's history, after the fact's
// lineage, with who retracted it.
func TestFactHistoryKeepsRetractedVersions(t *testing.T) {
	db := openTest(t, t.TempDir(), nil)
	defer db.Close()
	ctx := context.Background()
	c := createTest(t, db, "kb", &CollectionOptions{Dim: 4})
	if _, err := c.Put(ctx, []Memory{{ID: "a", Vector: unit(4, 0), Subject: "api", Relation: "limit", Object: "100"},
		{ID: "b", Vector: unit(4, 0), Subject: "api", Relation: "limit", Object: "250"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Retract(ctx, "b", &RetractOptions{By: "ops"}); err != nil {
		t.Fatal(err)
	}
	h, err := c.FactHistory(ctx, "api", "limit")
	if err != nil || len(h) != 2 || h[0].ID != "a" || h[1].ID != "b" || h[1].RetractedBy != "ops" {
		t.Fatalf("fact history: %+v %v", h, err)
	}
	if _, err := c.Retract(ctx, "b", &RetractOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if h, _ := c.FactHistory(ctx, "api", "limit"); len(h) != 1 {
		t.Fatalf("a purged memory in its fact's history: %+v", h)
	}
}
