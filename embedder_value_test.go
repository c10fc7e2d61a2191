package tidemark

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidemark/tidemark/embed"
)

// countingEmbedder is an embedder of the caller's own: the hashing
// embedder with sub-words, counting the texts it embeds.
type countingEmbedder struct {
	h     *embed.Hashing
	texts atomic.Int64
}

func newCountingEmbedder(t testing.TB, dim int) *countingEmbedder {
	o := embed.SubwordOptions(dim)
	h, err := embed.NewHashing(&o)
	if err != nil {
		t.Fatal(err)
	}
	return &countingEmbedder{h: h}
}

func (e *countingEmbedder) Dim() int { return e.h.Dim() }

func (e *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.texts.Add(int64(len(texts)))
	return e.h.Embed(ctx, texts)
}

var valueEmbedderTexts = []Memory{
	{ID: "db", Text: "The billing service stores invoices in PostgreSQL."},
	{ID: "deploy", Text: "Deployments go out every Tuesday after the review."},
	{ID: "oncall", Text: "The on-call rotation changes each Monday morning."},
}

// searchText returns the ids a text search finds.
func searchText(t *testing.T, c *Collection, text string) []string {
	t.Helper()
	r, err := c.Search(context.Background(), &SearchRequest{Text: text, K: 3, Plan: PlanExact})
	if err != nil {
		t.Fatalf("search %q: %v", text, err)
	}
	var ids []string
	for _, h := range r.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}

func TestTextEmbedderPutAndSearch(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), &Options{NoSync: true})
	defer db.Close()
	e := newCountingEmbedder(t, 128)
	c, err := db.CreateCollection(ctx, "notes", &CollectionOptions{Dim: 128, TextEmbedder: e, Keys: KeysExplicit})
	if err != nil {
		t.Fatal(err)
	}
	if o := c.Options(); o.Embedder != EmbedderCustom || o.TextEmbedder != e {
		t.Fatalf("options: Embedder %q, TextEmbedder %v", o.Embedder, o.TextEmbedder)
	}
	if _, err := c.Put(ctx, valueEmbedderTexts); err != nil {
		t.Fatal(err)
	}
	if n := e.texts.Load(); n != 3 {
		t.Fatalf("the embedder embedded %d texts, want 3", n)
	}
	if ids := searchText(t, c, "which database holds the invoices"); len(ids) == 0 || ids[0] != "db" {
		t.Fatalf("search found %v, want db first", ids)
	}
	if n := e.texts.Load(); n != 4 {
		t.Fatalf("the embedder embedded %d texts, want 4", n)
	}
	// The stored vector is the embedder's, normalised.
	m, err := c.Get(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := e.h.Embed(ctx, []string{valueEmbedderTexts[0].Text})
	for i := range want[0] {
		if d := m.Vector[i] - want[0][i]; d > 1e-6 || d < -1e-6 {
			t.Fatalf("stored vector differs from the embedder's at %d: %v vs %v", i, m.Vector[i], want[0][i])
		}
	}
	// Documents use it too.
	if _, err := c.PutDocument(ctx, "guide", "Invoices are archived after seven years.", nil); err != nil {
		t.Fatal(err)
	}
}

// TestTextEmbedderAcrossReopen: a collection created with a Go embedder
// stores its name, EmbedderCustom; reopened without it, the collection
// and its memories are there, vectors work, and whatever needs text
// embedded fails with ErrEmbedder saying how to give it back; given back
// in Options.Embedders, text works again with the same answers. Both
// recovery paths: the snapshot (Close) and the log alone (a crash).
func TestTextEmbedderAcrossReopen(t *testing.T) {
	for _, crash := range []bool{false, true} {
		name := "snapshot"
		if crash {
			name = "log"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			e := newCountingEmbedder(t, 128)
			db := openTest(t, dir, &Options{NoSync: true, CheckpointRecords: -1})
			c, err := db.CreateCollection(ctx, "notes", &CollectionOptions{Dim: 128, TextEmbedder: e, Keys: KeysExplicit})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Put(ctx, valueEmbedderTexts); err != nil {
				t.Fatal(err)
			}
			const query = "which database holds the invoices"
			want := searchText(t, c, query)
			if crash {
				db.wal.Close() // no final snapshot: the log is replayed
			} else if err := db.Close(); err != nil {
				t.Fatal(err)
			}

			db = openTest(t, dir, &Options{NoSync: true})
			if crash != (db.Recovery().SnapshotSeq == 0) {
				t.Fatalf("recovery %+v", db.Recovery())
			}
			c, err = db.Collection("notes")
			if err != nil {
				t.Fatal(err)
			}
			if o := c.Options(); o.Embedder != EmbedderCustom || o.TextEmbedder != nil {
				t.Fatalf("reopened without it: Embedder %q, TextEmbedder %v", o.Embedder, o.TextEmbedder)
			}
			if stored, _ := c.Len(); stored != 3 {
				t.Fatalf("%d memories after reopening, want 3", stored)
			}
			m, err := c.Get(ctx, "db")
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.Search(ctx, &SearchRequest{Vector: m.Vector, K: 1})
			if err != nil || len(r.Hits) != 1 || r.Hits[0].ID != "db" {
				t.Fatalf("vector search without the embedder: %v %v", r, err)
			}
			if _, err := c.Put(ctx, []Memory{{ID: "vec", Vector: m.Vector, Text: "given with its vector"}}); err != nil {
				t.Fatalf("a put with a vector: %v", err)
			}
			missing := []error{
				func() error { _, err := c.Put(ctx, []Memory{{ID: "new", Text: "A new note."}}); return err }(),
				func() error { _, err := c.Search(ctx, &SearchRequest{Text: query}); return err }(),
				func() error { _, err := c.PutDocument(ctx, "doc", "A document.", nil); return err }(),
			}
			for i, err := range missing {
				if !errors.Is(err, ErrEmbedder) || !strings.Contains(err.Error(), `Options.Embedders["notes"]`) {
					t.Errorf("text %d without the embedder: %v", i, err)
				}
			}
			if _, err := c.Get(ctx, "new"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("the refused put stored something: %v", err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}

			db = openTest(t, dir, &Options{NoSync: true, Embedders: map[string]embed.Embedder{"notes": e}})
			defer db.Close()
			c, err = db.Collection("notes")
			if err != nil {
				t.Fatal(err)
			}
			if o := c.Options(); o.Embedder != EmbedderCustom || o.TextEmbedder != e {
				t.Fatalf("reopened with it: Embedder %q, TextEmbedder %v", o.Embedder, o.TextEmbedder)
			}
			// The same answers, but for the memory given with db's vector.
			got := slices.DeleteFunc(searchText(t, c, query), func(id string) bool { return id == "vec" })
			if len(got) == 0 || !slices.Equal(got, want[:len(got)]) {
				t.Fatalf("search after reopening: %v, want %v", got, want)
			}
			if _, err := c.Put(ctx, []Memory{{ID: "new", Text: "A new note."}}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestTextEmbedderOptionsErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := newCountingEmbedder(t, 64)
	db := openTest(t, dir, &Options{NoSync: true})
	// Embedder "custom" needs a value.
	if _, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 64, Embedder: EmbedderCustom}); !errors.Is(err, ErrOptions) ||
		!strings.Contains(err.Error(), "CollectionOptions.TextEmbedder") {
		t.Fatalf("custom without a value: %v", err)
	}
	if _, err := db.CreateCollection(ctx, "words", &CollectionOptions{Dim: 64, Embedder: "hashing"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateCollection(ctx, "notes", &CollectionOptions{Dim: 64, TextEmbedder: e}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// An entry for a collection with a named embedder, or of the wrong
	// dimension, fails Open, and nothing is lost.
	other := newCountingEmbedder(t, 32)
	for name, embs := range map[string]map[string]embed.Embedder{
		"named":     {"words": e},
		"dimension": {"notes": other},
	} {
		if _, err := Open(dir, &Options{NoSync: true, Embedders: embs}); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "Options.Embedders") {
			t.Errorf("%s: Open = %v, want ErrOptions naming Options.Embedders", name, err)
		}
	}
	// An entry for a collection yet to be created serves a create with
	// Embedder "custom"; one for a name created with another embedder is
	// refused.
	db = openTest(t, dir, &Options{NoSync: true, Embedders: map[string]embed.Embedder{"notes": e, "later": e, "plain": e}})
	defer db.Close()
	if got := db.Collections(); !slices.Equal(got, []string{"notes", "words"}) {
		t.Fatalf("collections %v", got)
	}
	c, err := db.CreateCollection(ctx, "later", &CollectionOptions{Dim: 64, Embedder: EmbedderCustom})
	if err != nil {
		t.Fatal(err)
	}
	if c.Options().TextEmbedder != e {
		t.Fatal("the Options.Embedders entry was not used")
	}
	if _, err := c.Put(ctx, []Memory{{ID: "x", Text: "Some text."}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateCollection(ctx, "plain", &CollectionOptions{Dim: 64}); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), `Options.Embedders["plain"]`) {
		t.Fatalf("a create that leaves an entry unused: %v", err)
	}
}

// TestNamedEmbeddersUnchanged: the named embedders embed exactly as
// embed.Hashing with their options, and hold no Go value.
func TestNamedEmbeddersUnchanged(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), &Options{NoSync: true})
	defer db.Close()
	sub := embed.SubwordOptions(64)
	for name, ho := range map[string]*embed.HashingOptions{"hashing": &sub, "hashing-words": {Dim: 64}} {
		c, err := db.CreateCollection(ctx, name, &CollectionOptions{Dim: 64, Embedder: name})
		if err != nil {
			t.Fatal(err)
		}
		if o := c.Options(); o.Embedder != name || o.TextEmbedder != nil {
			t.Fatalf("%s: Embedder %q, TextEmbedder %v", name, o.Embedder, o.TextEmbedder)
		}
		h, err := embed.NewHashing(ho)
		if err != nil {
			t.Fatal(err)
		}
		texts := []string{"Deployments go out every Tuesday.", "PostgreSQL holds the invoices."}
		want, _ := h.Embed(ctx, texts)
		got, err := c.embedTexts(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("%s: text %d embeds differently", name, i)
			}
		}
	}
}
