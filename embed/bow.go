package embed

import (
	"context"
	"math"
	"sort"
	"strings"
	"unicode"
)

// ArticleDim is the dimension of the temporal-RAG article's bag-of-words
// embedder.
const ArticleDim = 256

// BagOfWords is the temporal-RAG article's demo embedder (Temporal RAG,
// "Run It Yourself"): tokens are text.lower().split(); the vocabulary is the
// sorted set of corpus tokens; token number i of that sorted list maps to
// index i mod Dim; a text's vector counts its in-vocabulary tokens per index
// and is L2-normalised. Tokens outside the vocabulary are ignored, and a text
// with none yields the zero vector.
//
// It exists so that the article's published numbers can be reproduced; it is
// not a good embedder. Fit must be called before Embed. After Fit returns, a
// BagOfWords is safe for concurrent use.
type BagOfWords struct {
	dim   int
	vocab map[string]int
}

// NewBagOfWords returns an unfitted bag-of-words embedder of the given
// dimension (the article uses [ArticleDim]).
func NewBagOfWords(dim int) (*BagOfWords, error) {
	if dim <= 0 {
		return nil, ErrBadDimension
	}
	return &BagOfWords{dim: dim}, nil
}

// Fit builds the vocabulary from corpus, replacing any earlier one.
// It returns [ErrEmptyVocabulary] when the corpus has no tokens.
func (e *BagOfWords) Fit(corpus []string) error {
	set := make(map[string]struct{})
	for _, t := range corpus {
		for _, tok := range pySplitLower(t) {
			set[tok] = struct{}{}
		}
	}
	if len(set) == 0 {
		return ErrEmptyVocabulary
	}
	words := make([]string, 0, len(set))
	for w := range set {
		words = append(words, w)
	}
	// Go orders strings by UTF-8 bytes, which is Unicode code point order:
	// the same order as Python's sorted().
	sort.Strings(words)
	vocab := make(map[string]int, len(words))
	for i, w := range words {
		vocab[w] = i % e.dim
	}
	e.vocab = vocab
	return nil
}

// Dim returns the vector dimension.
func (e *BagOfWords) Dim() int { return e.dim }

// Embed returns the normalised count vector of each text.
func (e *BagOfWords) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(e.vocab) == 0 {
		return nil, ErrEmptyVocabulary
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = toFloat32(e.Embed64(t))
	}
	return out, nil
}

// Embed64 returns the normalised count vector of text in float64, the
// precision the article computed in. It returns nil before Fit.
func (e *BagOfWords) Embed64(text string) []float64 {
	if len(e.vocab) == 0 {
		return nil
	}
	v := make([]float64, e.dim)
	for _, tok := range pySplitLower(text) {
		if i, ok := e.vocab[tok]; ok {
			v[i]++
		}
	}
	var ss float64
	for _, x := range v {
		ss += float64(x * x) // no fused multiply-add: identical bits on every platform
	}
	if ss > 0 {
		n := math.Sqrt(ss)
		for i := range v {
			v[i] /= n
		}
	}
	return v
}

// pySplitLower is Python's text.lower().split(): lower-case, then split on
// runs of whitespace. Python counts the ASCII separators U+001C–U+001F as
// whitespace; unicode.IsSpace does not, so they are added here.
func pySplitLower(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
	})
}

func toFloat32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}
