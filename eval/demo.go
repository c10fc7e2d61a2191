package eval

import (
	"fmt"
	"slices"
	"time"

	"github.com/tidemark/tidemark/embed"
	"github.com/tidemark/tidemark/internal/demo"
	"github.com/tidemark/tidemark/temporal"
)

// articleTop1 is the top temporal result the Temporal RAG article published
// for each of its four demo queries (internal/demo/testdata/
// temporal-rag-demo.txt), in query order.
var articleTop1 = []string{"announcement_today", "research_2024", "news_old", "policy_v2"}

// ArticleDemo converts the Temporal RAG article's demo corpus (the copy
// embedded in internal/demo) into the evaluation contract, with every time
// relative to now:
//
//   - each document is a corpus line with its kind, recorded_at = now −
//     age_days, valid_from and valid_to from the window's days-ago values,
//     and no profile or source (the article's demo gives every document
//     one half-life, 60 days: run it with MemoryOptions.HalfLife = 60 to
//     reproduce its scores);
//   - a supersedes_id chain becomes one doc_id (the first document's id)
//     with versions 1, 2, …;
//   - vectors are the article's bag-of-words embedder
//     (embed.NewBagOfWords(embed.ArticleDim), fitted on the corpus), so the
//     cosine similarities are the article's;
//   - each query is a "current" query at now with k = 3 (the article's
//     top-k), gold = the article's published top temporal result, and
//     stale = the documents whose validity ended by now.
func ArticleDemo(now time.Time) ([]CorpusLine, []QueryLine, error) {
	c, err := demo.Load()
	if err != nil {
		return nil, nil, err
	}
	if len(c.Queries) != len(articleTop1) {
		return nil, nil, fmt.Errorf("eval: the demo corpus has %d queries, want %d", len(c.Queries), len(articleTop1))
	}
	bow, err := embed.NewBagOfWords(embed.ArticleDim)
	if err != nil {
		return nil, nil, err
	}
	texts := make([]string, len(c.Docs))
	for i := range c.Docs {
		texts[i] = c.Docs[i].Content
	}
	if err := bow.Fit(texts); err != nil {
		return nil, nil, err
	}
	vector := func(text string) []float32 {
		v := bow.Embed64(text)
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(x)
		}
		return out
	}
	ago := func(d float64) *time.Time {
		t := now.Add(-time.Duration(d * float64(temporal.Day)))
		return &t
	}
	byID := map[string]int{}
	corpus := make([]CorpusLine, len(c.Docs))
	var stale []string
	for i := range c.Docs {
		d := &c.Docs[i]
		kind, err := temporal.ParseKind(d.Kind)
		if err != nil {
			return nil, nil, err
		}
		l := CorpusLine{ID: d.ID, Text: d.Content, Vector: vector(d.Content), Kind: kind, RecordedAt: ago(d.AgeDays)}
		if d.ValidFromDaysAgo != nil {
			l.ValidFrom = ago(*d.ValidFromDaysAgo)
		}
		if d.ValidUntilDaysAgo != nil {
			l.ValidTo = ago(*d.ValidUntilDaysAgo)
			if !l.ValidTo.After(now) {
				stale = append(stale, d.ID)
			}
		}
		if d.SupersedesID != nil {
			j, ok := byID[*d.SupersedesID]
			if !ok {
				return nil, nil, fmt.Errorf("eval: demo document %q supersedes %q, which does not come before it", d.ID, *d.SupersedesID)
			}
			prev := &corpus[j]
			if prev.DocID == "" {
				prev.DocID, prev.Version = prev.ID, 1
			}
			l.DocID, l.Version = prev.DocID, prev.Version+1
		}
		byID[d.ID] = i
		corpus[i] = l
	}
	queries := make([]QueryLine, len(c.Queries))
	for i, text := range c.Queries {
		queries[i] = QueryLine{ID: fmt.Sprintf("q%d", i+1), Text: text, Vector: vector(text), Now: now, K: 3,
			Gold: []string{articleTop1[i]}, Stale: slices.Clone(stale), Type: "current"}
	}
	return corpus, queries, nil
}
