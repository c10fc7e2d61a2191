package tidemark

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

func date(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

// hitIDs returns the ids of a search's hits.
func hitIDs(t *testing.T, c *Collection, req *SearchRequest) []string {
	t.Helper()
	res, err := c.Search(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res.ids()
}

// ids returns the ids of the hits, in order.
func (r *SearchResult) ids() []string {
	var ids []string
	for _, h := range r.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}

// The plain-text example through the Go API: a text collection,
// no keys. The second statement supersedes the first, whatever order
// they arrive in, and the key says it was extracted.
func TestKeysAtIngestPlainText(t *testing.T) {
	ctx := context.Background()
	for _, order := range [][]int{{0, 1}, {1, 0}} {
		clock := date("2025-07-01")
		db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return clock }})
		c, err := db.CreateCollection(ctx, "facts", &CollectionOptions{Dim: 256, Embedder: "hashing"})
		if err != nil {
			t.Fatal(err)
		}
		ms := []Memory{
			{ID: "limit-100", Text: "The API rate limit is 100 requests per minute.", ValidFrom: date("2025-01-01")},
			{ID: "limit-250", Text: "The API rate limit is 250 requests per minute.", ValidFrom: date("2025-06-01")},
		}
		for _, i := range order {
			if _, err := c.Put(ctx, []Memory{ms[i]}); err != nil {
				t.Fatal(err)
			}
			clock = clock.Add(time.Minute)
		}
		for _, q := range []string{"What is the API rate limit?", "Is the rate limit 100 requests per minute?"} {
			if got := hitIDs(t, c, &SearchRequest{Text: q, K: 5}); !slices.Equal(got, []string{"limit-250"}) {
				t.Errorf("order %v, %q now: %v, want [limit-250]", order, q, got)
			}
			if got := hitIDs(t, c, &SearchRequest{Text: q, K: 5, AsOf: date("2025-03-01")}); !slices.Equal(got, []string{"limit-100"}) {
				t.Errorf("order %v, %q as of 2025-03-01: %v, want [limit-100]", order, q, got)
			}
		}
		old, _ := c.Get(ctx, "limit-100")
		cur, _ := c.Get(ctx, "limit-250")
		if old.Visible || old.SupersededBy != "limit-250" || !strings.HasPrefix(old.KeyRule, "extract/") ||
			!strings.HasPrefix(cur.KeyRule, "extract/") || cur.Subject != "api rate limit" || cur.Object != "250" {
			t.Errorf("order %v: old %+v\ncurrent %+v", order, old, cur)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A marker-free update the extractor cannot key: the one-span change
// keys both, the older adopting the key, and it survives a reopen from
// the log and from a snapshot. A retry is unchanged.
func TestKeysUpdateByChangedSpan(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := date("2026-01-01")
	opts := &Options{Clock: func() time.Time { return clock }}
	db := openTest(t, dir, opts)
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 128, Embedder: "hashing"})
	a := Memory{ID: "mfa-1", Text: "Two-factor authentication is enabled for all contractor accounts."}
	b := Memory{ID: "mfa-2", Text: "Two-factor authentication is disabled for all contractor accounts."}
	if _, err := c.Put(ctx, []Memory{a}); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Get(ctx, "mfa-1"); m.Subject != "" {
		t.Fatalf("the extractor keyed %q: %+v; pick a sentence it cannot key", a.Text, m)
	}
	clock = clock.Add(time.Hour)
	res, err := c.Put(ctx, []Memory{b})
	if err != nil || len(res) != 1 || !slices.Equal(res[0].Superseded, []string{"mfa-1"}) {
		t.Fatalf("put: %+v %v", res, err)
	}
	check := func(when string) {
		t.Helper()
		old, _ := c.Get(ctx, "mfa-1")
		cur, _ := c.Get(ctx, "mfa-2")
		if old.Visible || old.SupersededBy != "mfa-2" || old.KeyRule != "adopted" || old.KeyFrom != "mfa-2" || old.Object != "enabled" ||
			cur.KeyRule != "update/complement" || cur.KeyFrom != "mfa-1" || cur.Object != "disabled" || cur.Subject != old.Subject {
			t.Fatalf("%s: old %+v\ncurrent %+v", when, old, cur)
		}
		hist, err := c.History(ctx, "mfa-2")
		if err != nil || len(hist) != 2 || hist[0].ID != "mfa-1" || hist[0].KeyRule != "adopted" {
			t.Fatalf("%s: history %+v %v", when, hist, err)
		}
	}
	check("live")
	// A retry of either write changes nothing, though its key is derived
	// anew.
	for _, m := range []Memory{a, b} {
		if res, err := c.Put(ctx, []Memory{m}); err != nil || res[0].Outcome != Unchanged {
			t.Fatalf("retry %s: %+v %v", m.ID, res, err)
		}
	}
	if err := db.Close(); err != nil { // Close checkpoints
		t.Fatal(err)
	}
	db = openTest(t, dir, &Options{Clock: opts.Clock, CheckpointRecords: -1})
	c, _ = db.Collection("c")
	check("after a snapshot")
	// Now from the log alone: the same writes with checkpoints off, and
	// the directory copied while the DB is open (no snapshot in it).
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	dir2 := t.TempDir()
	db2 := openTest(t, dir2, &Options{Clock: opts.Clock, CheckpointRecords: -1})
	c, _ = db2.CreateCollection(ctx, "c", &CollectionOptions{Dim: 128, Embedder: "hashing"})
	for _, m := range []Memory{a, b} {
		if _, err := c.Put(ctx, []Memory{m}); err != nil {
			t.Fatal(err)
		}
	}
	dir3 := t.TempDir()
	if err := os.CopyFS(dir3, os.DirFS(dir2)); err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	db = openTest(t, dir3, &Options{Clock: opts.Clock, CheckpointRecords: -1})
	defer db.Close()
	c, _ = db.Collection("c")
	check("after a log replay")
}

// A caller's key overrides an extracted one: a later write with an
// explicit key that restates a memory keyed by the extractor gives it
// the caller's key and supersedes it.
func TestKeysExplicitOverridesExtracted(t *testing.T) {
	ctx := context.Background()
	clock := date("2026-01-01")
	db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return clock }})
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 128, Embedder: "hashing"})
	if _, err := c.Put(ctx, []Memory{{ID: "v1", Text: "The API rate limit is 100 requests per minute."}}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	if _, err := c.Put(ctx, []Memory{{ID: "v2", Text: "The API rate limit is 250 requests per minute.",
		Subject: "api", Relation: "rate limit", Object: "250/min"}}); err != nil {
		t.Fatal(err)
	}
	v1, _ := c.Get(ctx, "v1")
	v2, _ := c.Get(ctx, "v2")
	if v1.Visible || v1.SupersededBy != "v2" || v1.Subject != "api" || v1.Relation != "rate limit" || v1.Object != "100" ||
		v1.KeyRule != "adopted" || v2.KeyRule != "" || v2.Object != "250/min" {
		t.Fatalf("v1 %+v\nv2 %+v", v1, v2)
	}
	// A third, plain statement continues the caller's key.
	clock = clock.Add(time.Hour)
	if _, err := c.Put(ctx, []Memory{{ID: "v3", Text: "The API rate limit is 500 requests per minute."}}); err != nil {
		t.Fatal(err)
	}
	v3, _ := c.Get(ctx, "v3")
	if v2, _ = c.Get(ctx, "v2"); v2.Visible || v3.Subject != "api" || v3.KeyRule != "update/value" || v3.Object != "500" {
		t.Fatalf("v2 %+v\nv3 %+v", v2, v3)
	}
}

// Different facts that share their wording are not keyed together, nor
// are many-valued relations; events and KeysExplicit collections get no
// derived keys.
func TestKeysPrecision(t *testing.T) {
	ctx := context.Background()
	clock := date("2026-01-01")
	db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return clock }})
	defer db.Close()
	pairs := [][2]string{
		{"The Paris office opens at 9.", "The Lyon office opens at 9."},
		{"The Marseille office opens at 9.", "The Marseille office closes at 9."},
		{"Alice reports to Bob.", "Carol reports to Bob."},
		{"Annual leave is 25 days for full-time staff.", "Annual leave is 25 days for contractors."},
		{"The clinic accepts Aetna insurance.", "The clinic accepts Cigna insurance."},
		{"Dr Okafor speaks French.", "Dr Okafor speaks Portuguese."},
		{"The clinic is open until 8 p.m. on Tuesdays.", "The clinic is open until 8 p.m. on Thursdays."},
		{"Alice is a nurse.", "Alice is a pharmacist."},
	}
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 256, Embedder: "hashing"})
	for i, p := range pairs {
		for j, text := range p {
			clock = clock.Add(time.Hour)
			res, err := c.Put(ctx, []Memory{{ID: string(rune('a'+i)) + string(rune('0'+j)), Text: text}})
			if err != nil || res[0].Outcome != Stored || len(res[0].Superseded) > 0 || res[0].SupersededBy != "" {
				t.Errorf("%q after %q: %+v %v", text, p[0], res, err)
			}
		}
	}
	if _, vis := c.Len(); vis != 2*len(pairs) {
		t.Errorf("%d visible, want %d", vis, 2*len(pairs))
	}
	if r, err := c.Consolidate(ctx, nil); err != nil || r.Contradicted != 0 {
		t.Errorf("consolidation penalised different facts: %+v %v", r, err)
	}
	ex, _ := db.CreateCollection(ctx, "explicit", &CollectionOptions{Dim: 256, Embedder: "hashing", Keys: KeysExplicit})
	for _, id := range []string{"x1", "x2"} {
		text := map[string]string{"x1": "The API rate limit is 100 requests per minute.", "x2": "The API rate limit is 250 requests per minute."}[id]
		if _, err := ex.Put(ctx, []Memory{{ID: id, Text: text}}); err != nil {
			t.Fatal(err)
		}
	}
	if m, _ := ex.Get(ctx, "x1"); !m.Visible || m.Subject != "" || m.KeyRule != "" {
		t.Errorf("KeysExplicit derived a key: %+v", m)
	}
}

// A conflict that no key catches counts in ranking: consolidation links
// the two, penalises the one that loses the vote, and says so.
func TestKeysConflictPenalised(t *testing.T) {
	ctx := context.Background()
	clock := date("2026-01-01")
	db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return clock }})
	defer db.Close()
	// The query is a little closer to the memory that will lose the vote
	// (it is older), as a question naming the old value would be.
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4})
	if _, err := c.Put(ctx, []Memory{{ID: "tabs", Text: "The frontend team prefers tabs.", Vector: []float32{1, 0, 0, 0}, Source: temporal.SourceWiki}}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(24 * time.Hour)
	if _, err := c.Put(ctx, []Memory{{ID: "spaces", Text: "The frontend team prefers spaces.", Vector: []float32{1, 0.3, 0, 0}, Source: temporal.SourceWiki}}); err != nil {
		t.Fatal(err)
	}
	score := func(id string) float64 {
		res, err := c.Search(ctx, &SearchRequest{Vector: []float32{1, 0, 0, 0}, K: 2})
		if err != nil || len(res.Hits) != 2 {
			t.Fatalf("search: %+v %v", res, err)
		}
		for _, h := range res.Hits {
			if h.ID == id {
				return h.Score
			}
		}
		t.Fatalf("%s not found", id)
		return 0
	}
	before := score("tabs")
	if before <= score("spaces") {
		t.Fatalf("set-up: the loser should rank first before the run (%.4f vs %.4f)", before, score("spaces"))
	}
	r, err := c.Consolidate(ctx, &ConsolidateOptions{ConflictSim: 0.5})
	if err != nil || r.Contradictions != 1 || r.Contradicted != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	loser, _ := c.Get(ctx, "tabs")
	winner, _ := c.Get(ctx, "spaces")
	if !slices.Equal(loser.ContradictedBy, []string{"spaces"}) || loser.Penalty != DefaultConflictPenalty || winner.Penalty != 0 ||
		!slices.Contains(winner.Contradicts, "tabs") {
		t.Fatalf("loser %+v\nwinner %+v", loser, winner)
	}
	after := score("tabs")
	if !(after < before*0.97) || score("spaces") <= after {
		t.Fatalf("the penalty did not count: the loser scores %.4f before, %.4f after, the winner %.4f", before, after, score("spaces"))
	}
	audit, _ := c.Audit(ctx, 0)
	found := false
	for _, a := range audit {
		found = found || a.Rule == RuleContradicted && a.ID == "tabs" && a.Reason == "CONTRADICTED" && a.Penalty == DefaultConflictPenalty
	}
	if !found {
		t.Fatalf("no penalty in the audit: %+v", audit)
	}
	// A second run does not penalise twice.
	if r, err := c.Consolidate(ctx, &ConsolidateOptions{ConflictSim: 0.5}); err != nil || r.Contradicted != 0 {
		t.Fatalf("second run: %+v %v", r, err)
	}
}

// BenchmarkPutPlainText measures Put of plain statements (every sentence of
// the development pairs of internal/heldout, 384-d random vectors, fsync
// off, batches of 100) with keys at ingest and without, in one run: the
// cost of extract.Key and extract.Compare on the write path.
func BenchmarkPutPlainText(b *testing.B) {
	var texts []string
	files, err := filepath.Glob("internal/heldout/testdata/dev*.jsonl")
	if err != nil || len(files) == 0 {
		b.Fatalf("no development pairs: %v", err)
	}
	for _, f := range files {
		{
			raw, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				var p map[string]string
				if err := json.Unmarshal([]byte(line), &p); err != nil {
					b.Fatal(err)
				}
				for _, k := range []string{"old", "new", "a", "b"} {
					if p[k] != "" {
						texts = append(texts, p[k])
					}
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	vecs := make([][]float32, len(texts))
	for i := range vecs {
		vecs[i] = make([]float32, 384)
		for j := range vecs[i] {
			vecs[i][j] = float32(rng.NormFloat64())
		}
	}
	for _, policy := range []KeyPolicy{KeysAuto, KeysExplicit} {
		b.Run(policy.String(), func(b *testing.B) {
			ctx := context.Background()
			db := openTest(b, b.TempDir(), &Options{NoSync: true, CheckpointRecords: -1, CheckpointBytes: -1})
			defer db.Close()
			n := 0
			for b.Loop() {
				c, err := db.CreateCollection(ctx, fmt.Sprint("c", n), &CollectionOptions{Dim: 384, Keys: policy})
				if err != nil {
					b.Fatal(err)
				}
				for start := 0; start < len(texts); start += 100 {
					var ms []Memory
					for i := start; i < min(start+100, len(texts)); i++ {
						ms = append(ms, Memory{ID: fmt.Sprint(i), Text: texts[i], Vector: vecs[i]})
					}
					if _, err := c.Put(ctx, ms); err != nil {
						b.Fatal(err)
					}
				}
				_ = db.DropCollection(ctx, c.Name())
				n++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*len(texts)), "ns/memory")
		})
	}
}

// Derived keys that would pass the limits are dropped, not logged: the
// database reopens from its snapshot and from its log alone.
func TestKeysDerivedWithinLimits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openTest(t, dir, &Options{CheckpointRecords: -1})
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 8, Embedder: "hashing"})
	// Ⱥ (2 bytes) lower-cases to ⱥ (3 bytes): the subject grows past
	// MaxKeyBytes while the text stays under it.
	text := strings.Repeat("ȺȺȺȺȺȺȺȺȺȺ ", 40) + "limit is 5 days."
	if _, err := c.Put(ctx, []Memory{{ID: "long", Text: text}}); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Get(ctx, "long"); m.KeyRule != "" || m.Subject != "" {
		t.Fatalf("an over-long derived key was kept: %d bytes", len(m.Subject))
	}
	logOnly := t.TempDir()
	if err := os.CopyFS(logOnly, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, logOnly} {
		db := openTest(t, d, nil)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// Two Puts racing with a statement and its update: whichever is logged
// second supersedes the first, every time.
func TestKeysConcurrentPuts(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), &Options{NoSync: true})
	defer db.Close()
	for round := range 20 {
		c, _ := db.CreateCollection(ctx, fmt.Sprint("c", round), &CollectionOptions{Dim: 64, Embedder: "hashing"})
		var wg sync.WaitGroup
		for _, m := range []Memory{
			{ID: "on", Text: "Two-factor authentication is enabled for all contractor accounts."},
			{ID: "off", Text: "Two-factor authentication is disabled for all contractor accounts."},
		} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := c.Put(ctx, []Memory{m}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if _, vis := c.Len(); vis != 1 {
			t.Fatalf("round %d: %d current memories, want 1", round, vis)
		}
	}
}

// A memory that adopts a key later keeps the drift group it joined when
// written: a snapshot reproduces the live grouping.
func TestKeysDriftAfterAdopt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openTest(t, dir, nil)
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 64, Embedder: "hashing"})
	for _, m := range []Memory{
		{ID: "mfa-1", Text: "Two-factor authentication is enabled for all contractor accounts."},
		{ID: "mfa-2", Text: "Two-factor authentication is disabled for all contractor accounts."},
		{ID: "x", Text: "Lunch is served in the atrium."},
	} {
		if _, err := c.Put(ctx, []Memory{m}); err != nil {
			t.Fatal(err)
		}
	}
	groups := func(c *Collection) []string {
		var out []string
		for _, d := range c.Drift() {
			out = append(out, fmt.Sprintf("%s:%d", d.Group, d.Observations))
		}
		slices.Sort(out)
		return out
	}
	live := groups(c)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, dir, nil)
	defer db.Close()
	c, _ = db.Collection("c")
	if got := groups(c); !slices.Equal(got, live) {
		t.Fatalf("drift groups after a snapshot %v, live %v", got, live)
	}
}

// A consolidation run cut short by its budget keeps a conflict and its
// penalty together: the loser is penalised once, by whichever run links
// the pair.
func TestKeysPenaltySurvivesBudget(t *testing.T) {
	ctx := context.Background()
	clock := date("2026-01-01")
	db := openTest(t, t.TempDir(), &Options{NoSync: true, Clock: func() time.Time { return clock }})
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 8, Keys: KeysExplicit})
	rng := rand.New(rand.NewPCG(3, 4))
	var ms []Memory
	for i := range 600 {
		v := make([]float32, 8)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		v[0] = -10 // far from the pair below
		ms = append(ms, Memory{ID: fmt.Sprint("f", i), Text: fmt.Sprint("filler ", i), Vector: v})
	}
	ms = append(ms, Memory{ID: "tabs", Text: "The frontend team prefers tabs.", Vector: []float32{1, 0, 0, 0, 0, 0, 0, 0}, Source: temporal.SourceWiki})
	if _, err := c.Put(ctx, ms); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(24 * time.Hour)
	if _, err := c.Put(ctx, []Memory{{ID: "spaces", Text: "The frontend team prefers spaces.", Vector: []float32{1, 0.1, 0, 0, 0, 0, 0, 0}, Source: temporal.SourceWiki}}); err != nil {
		t.Fatal(err)
	}
	contradicted := 0
	for range 10 {
		r, err := c.Consolidate(ctx, &ConsolidateOptions{Budget: time.Nanosecond, ConflictSim: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		contradicted += r.Contradicted
		if !r.Truncated {
			break
		}
	}
	loser, _ := c.Get(ctx, "tabs")
	if contradicted != 1 || loser.Penalty != DefaultConflictPenalty || !slices.Equal(loser.ContradictedBy, []string{"spaces"}) {
		t.Fatalf("contradicted %d times; loser %+v", contradicted, loser)
	}
}
