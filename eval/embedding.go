package eval

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tidemark/tidemark/embed"
)

// EmbedCorpus returns a vector for every line of a valid corpus: its own
// when it has one (a copy), else its text embedded with embed.Hashing
// fitted on every text of the corpus, at the corpus vectors' dimension
// or embed.DefaultHashingDim when no line has a vector. It also returns
// the fitted embedder (nil when the dimension is beyond the hashing
// embedder's) for EmbedQuery, and the dimension. Every Searcher built on
// this package embeds this way, so they all see the same vectors.
func EmbedCorpus(ctx context.Context, corpus []CorpusLine) (vecs [][]float32, emb *embed.Hashing, dim int, err error) {
	return EmbedCorpusWith(ctx, corpus, false)
}

// EmbedCorpusWith is EmbedCorpus with, when subwords is set, character
// n-gram features beside the words (embed.SubwordOptions): the offline
// default of the engine's collections, measured on the same benchmarks.
func EmbedCorpusWith(ctx context.Context, corpus []CorpusLine, subwords bool) (vecs [][]float32, emb *embed.Hashing, dim int, err error) {
	var texts, need []string
	for i := range corpus {
		if corpus[i].Vector != nil {
			dim = len(corpus[i].Vector)
		} else {
			need = append(need, corpus[i].Text)
		}
		if corpus[i].Text != "" {
			texts = append(texts, corpus[i].Text)
		}
	}
	if dim == 0 {
		dim = embed.DefaultHashingDim
	}
	var embedded [][]float32
	if dim <= embed.MaxHashingDim {
		ho := embed.HashingOptions{Dim: dim}
		if subwords {
			ho = embed.SubwordOptions(dim)
		}
		if emb, err = embed.NewHashing(&ho); err != nil {
			return nil, nil, 0, err
		}
		if err := emb.Fit(texts); err != nil && !errors.Is(err, embed.ErrEmptyVocabulary) {
			return nil, nil, 0, err
		}
		if embedded, err = emb.Embed(ctx, need); err != nil {
			return nil, nil, 0, err
		}
	} else if len(need) > 0 {
		return nil, nil, 0, fmt.Errorf("%w: the hashing embedder cannot embed text at the corpus dimension %d (at most %d)",
			ErrDimension, dim, embed.MaxHashingDim)
	}
	vecs = make([][]float32, len(corpus))
	for i := range corpus {
		if corpus[i].Vector != nil {
			vecs[i] = slices.Clone(corpus[i].Vector) // the caller keeps its slice
		} else {
			vecs[i], embedded = embedded[0], embedded[1:]
		}
	}
	return vecs, emb, dim, nil
}

// EmbedQuery returns q's vector, or its text embedded with emb (from
// EmbedCorpus), checked against the corpus dimension.
func EmbedQuery(ctx context.Context, emb *embed.Hashing, dim int, q *QueryLine) ([]float32, error) {
	qv := q.Vector
	if qv == nil {
		if emb == nil {
			return nil, fmt.Errorf("%w: query %q has no vector, and the hashing embedder cannot embed text at the corpus dimension %d",
				ErrDimension, q.ID, dim)
		}
		vs, err := emb.Embed(ctx, []string{q.Text})
		if err != nil {
			return nil, err
		}
		qv = vs[0]
	}
	if len(qv) != dim {
		return nil, fmt.Errorf("%w: query %q has %d dimensions, the memory %d", ErrDimension, q.ID, len(qv), dim)
	}
	return qv, nil
}
