package tidemark

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemark/tidemark/embed"
)

// A one-word edit inside one chunk re-embeds exactly that chunk, which
// supersedes its old version; edges into it move to the replacement, its
// dependants get a ripple at the next consolidation, and a query as of
// before the edit still finds the old text.
func TestSurgicalUpdate(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return clock }})
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "docs", &CollectionOptions{Dim: 256})
	h, _ := embed.NewHashing(&embed.HashingOptions{Dim: 256})
	var embedded atomic.Int64
	opts := &DocumentOptions{ChunkBytes: 120, Embed: func(ctx context.Context, texts []string) ([][]float32, error) {
		embedded.Add(int64(len(texts)))
		return h.Embed(ctx, texts)
	}}
	paras := []string{
		"Refunds are accepted within 30 days of purchase with a receipt.",
		"Shipping is free for orders above 50 euros inside the EU.",
		"Support answers email within two business days, phone within one hour.",
		"Gift cards never expire and can be used in every store.",
		"Warranty covers manufacturing defects for two years from delivery.",
	}
	text := strings.Join(paras, "\n\n")
	rep, err := c.PutDocument(ctx, "policy", text, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Chunks != 5 || rep.Reembedded != 5 || embedded.Load() != 5 {
		t.Fatalf("put: %+v, %d embedded", rep, embedded.Load())
	}
	if _, err := c.PutDocument(ctx, "policy", text, opts); !errors.Is(err, ErrExists) {
		t.Fatalf("a second PutDocument: %v", err)
	}
	// A memory that depends on the shipping chunk.
	if _, err := c.Put(ctx, []Memory{{ID: "faq-shipping", Text: "Do I pay for shipping?", Vector: mustEmbed(t, h, "Do I pay for shipping?"),
		DependsOn: []string{rep.Created[1]}}}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(24 * time.Hour)
	edited := strings.Replace(text, "50 euros", "80 euros", 1)
	embedded.Store(0)
	up, err := c.UpdateDocument(ctx, "policy", edited, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("one-word edit (50 → 80 euros): %+v; embedder called for %d chunk(s)", up, embedded.Load())
	if up.Reembedded != 1 || embedded.Load() != 1 || len(up.Superseded) != 1 || up.Superseded[0] != rep.Created[1] || up.Transferred != 1 {
		t.Fatalf("update: %+v, %d embedded", up, embedded.Load())
	}
	nw, err := c.Get(ctx, up.Created[0])
	if err != nil || !strings.Contains(nw.Text, "80 euros") || nw.Version != 2 || nw.Chunk != 1 {
		t.Fatalf("new chunk %+v %v", nw, err)
	}
	if old, _ := c.Get(ctx, rep.Created[1]); old.Visible || old.SupersededBy != nw.ID {
		t.Fatalf("old chunk %+v", old)
	}
	// The document reads back as the edited text.
	cur, _ := c.currentChunks("policy")
	var sb strings.Builder
	for _, m := range cur {
		sb.WriteString(m.Text)
	}
	if sb.String() != edited {
		t.Fatalf("document after the edit:\n%q\nwant\n%q", sb.String(), edited)
	}
	q := mustEmbed(t, h, "free shipping orders above euros")
	now, _ := c.Search(ctx, &SearchRequest{Vector: q, K: 1})
	then, _ := c.Search(ctx, &SearchRequest{Vector: q, K: 1, AsOf: clock.Add(-time.Hour), AsOfTx: clock.Add(-time.Hour)})
	if len(now.Hits) != 1 || now.Hits[0].ID != nw.ID || len(then.Hits) != 1 || then.Hits[0].ID != rep.Created[1] {
		t.Fatalf("now %v, before the edit %v", now.Hits, then.Hits)
	}
	// The dependant now depends on the new chunk, and is flagged.
	r, err := c.Consolidate(ctx, nil)
	if err != nil || r.Ripples != 1 {
		t.Fatalf("consolidate %+v %v", r, err)
	}
	if f, _ := c.Get(ctx, "faq-shipping"); len(f.Review) != 1 || f.Review[0] != rep.Created[1] {
		t.Fatalf("faq %+v", f)
	}
	// An insertion at the very end touches the last chunk only.
	embedded.Store(0)
	up, err = c.UpdateDocument(ctx, "policy", edited+" Extended warranty is sold separately.", opts)
	if err != nil || up.Reembedded != 1 || up.Superseded[0] != rep.Created[4] {
		t.Fatalf("append: %+v %v", up, err)
	}
	if _, err := c.UpdateDocument(ctx, "nope", "x", opts); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown document: %v", err)
	}
}

func mustEmbed(t *testing.T, h *embed.Hashing, s string) []float32 {
	t.Helper()
	v, err := h.Embed(context.Background(), []string{s})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func TestChunkText(t *testing.T) {
	text := "One two three. Four five six seven.\n\nEight nine ten eleven twelve. Thirteen"
	for _, max := range []int{16, 20, 40, 1000} {
		pieces := chunkText(text, max)
		if strings.Join(pieces, "") != text {
			t.Fatalf("max %d: pieces %q do not rebuild the text", max, pieces)
		}
		for _, p := range pieces {
			if len(p) > max && strings.Contains(strings.TrimSpace(p), " ") {
				t.Fatalf("max %d: piece %q too long", max, p)
			}
		}
	}
	for _, tc := range []struct {
		s  string
		n  int
		ok bool
	}{{"alpha beta gamma delta", 2, true}, {"alpha beta gamma delta", 3, true}, {"abc", 3, true}, {"ab", 3, false}, {"émigré", 4, true}} {
		got, ok := splitInto(tc.s, tc.n)
		if ok != tc.ok || (ok && (strings.Join(got, "") != tc.s || len(got) != tc.n || slices.Contains(got, ""))) {
			t.Fatalf("splitInto(%q, %d) = %q, %v", tc.s, tc.n, got, ok)
		}
	}
}

// Random edits: the document always reads back as the new text, and
// only chunks an edit touches are re-embedded.
func TestUpdateDocumentRandomEdits(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), &Options{NoSync: true})
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "docs", &CollectionOptions{Dim: 64, Embedder: "hashing"})
	words := strings.Fields("the quick brown fox jumps over a lazy dog while seven tired émigrés sing über songs near the river bank")
	rng := uint64(7)
	next := func(n int) int { rng = rng*6364136223846793005 + 1442695040888963407; return int(rng>>33) % n }
	var sb strings.Builder
	for i := range 120 {
		sb.WriteString(words[next(len(words))])
		if i%17 == 16 {
			sb.WriteString(".\n\n")
		} else {
			sb.WriteString(" ")
		}
	}
	text := sb.String()
	if _, err := c.PutDocument(ctx, "d", text, &DocumentOptions{ChunkBytes: 100}); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		a := next(len(text))
		for a > 0 && !utf8RuneStart(text[a]) {
			a--
		}
		b := min(len(text), a+next(12))
		for b < len(text) && !utf8RuneStart(text[b]) {
			b++
		}
		edited := text[:a] + words[next(len(words))] + text[b:]
		before, _ := c.currentChunks("d")
		rep, err := c.UpdateDocument(ctx, "d", edited, &DocumentOptions{ChunkBytes: 100})
		if err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
		cur, _ := c.currentChunks("d")
		var got strings.Builder
		for _, m := range cur {
			got.WriteString(m.Text)
		}
		if got.String() != edited {
			t.Fatalf("edit %d: the document reads back as\n%q\nwant\n%q", i, got.String(), edited)
		}
		if len(cur) != len(before) || (edited != text && rep.Reembedded == 0) || rep.Reembedded > len(cur) {
			t.Fatalf("edit %d: %+v, %d chunks before, %d after", i, rep, len(before), len(cur))
		}
		text = edited
	}
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Documents: a case-only edit is a new version, offsets of later chunks
// move, a template fact key is refused.
func TestDocumentEditsReview(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), &Options{NoSync: true})
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 64, Embedder: "hashing"})
	text := "Refunds within 30 days.\n\nShipping is free above 50 euros.\n\nSupport answers within a day."
	rep, err := c.PutDocument(ctx, "d", text, &DocumentOptions{ChunkBytes: 40})
	if err != nil || rep.Chunks != 3 {
		t.Fatalf("%+v %v", rep, err)
	}
	edited := strings.Replace(text, "Refunds", "REFUNDS", 1)
	if up, err := c.UpdateDocument(ctx, "d", edited, nil); err != nil || up.Reembedded != 1 {
		t.Fatalf("case-only edit %+v %v", up, err)
	}
	longer := strings.Replace(edited, "30 days", "thirty calendar days", 1)
	if up, err := c.UpdateDocument(ctx, "d", longer, nil); err != nil || up.Reembedded != 1 {
		t.Fatalf("second edit %+v %v", up, err)
	}
	cur, _ := c.currentChunks("d")
	var sb strings.Builder
	for _, m := range cur {
		if m.Start != sb.Len() || m.End != sb.Len()+len(m.Text) {
			t.Fatalf("chunk %d offsets [%d, %d), want [%d, %d)", m.Chunk, m.Start, m.End, sb.Len(), sb.Len()+len(m.Text))
		}
		sb.WriteString(m.Text)
	}
	if sb.String() != longer {
		t.Fatalf("document reads %q", sb.String())
	}
	if _, err := c.PutDocument(ctx, "e", "x y z", &DocumentOptions{Template: Memory{Subject: "s", Relation: "r"}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("template with a fact key: %v", err)
	}
	if _, err := c.AssembleContext(ctx, &SearchRequest{Text: "refunds"}, &ContextOptions{TokenBudget: 5}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a budget below the instructions: %v", err)
	}
}
