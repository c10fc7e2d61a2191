package embed

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"unicode"
)

// DefaultHashingDim is the output dimension of a [Hashing] embedder whose
// [HashingOptions.Dim] is zero.
const DefaultHashingDim = 1024

// MaxHashingDim is the largest dimension a Hashing embedder accepts.
const MaxHashingDim = 1 << 20

// MaxCharNGram is the longest character n-gram a Hashing embedder accepts
// ([HashingOptions.CharNGramMax]).
const MaxCharNGram = 16

// DefaultCharNGramMin is the shortest character n-gram when
// [HashingOptions.CharNGramMax] is positive and CharNGramMin is zero (or
// CharNGramMax, if that is shorter).
const DefaultCharNGramMin = 3

// DefaultSubwordWeight is the weight of the character n-gram features
// relative to the word features when [HashingOptions.CharNGramMax] is
// positive and [HashingOptions.SubwordWeight] is zero: both get the same say.
const DefaultSubwordWeight = 1.0

// hashingCtxEvery is how many texts Embed and Fit process between checks of
// the context.
const hashingCtxEvery = 256

// HashingOptions configures a [Hashing] embedder. A nil *HashingOptions, and
// the zero value, mean every default: 1024 dimensions, unigrams plus
// bigrams, sublinear term frequency, seed 0, lowercased text, no character
// n-grams. The zero value is the embedder that published numbers were made
// with; [SubwordOptions] returns the settings recommended for new
// collections (the same plus character n-grams).
//
// The boolean fields are phrased negatively so that their zero value is the
// default.
type HashingOptions struct {
	// Dim is the length of every output vector. Zero means
	// DefaultHashingDim (1024); a negative value is invalid. Each output
	// vector costs Dim float32s, and each text costs Dim float64s of scratch
	// space while it is embedded.
	Dim int

	// NoBigrams drops the adjacent-word bigram features ("new york"), leaving
	// unigrams only. Default false: unigrams and bigrams, the "1-2-gram"
	// features of a TF-IDF baseline.
	NoBigrams bool

	// NoSublinearTF weights a feature by its raw count tf in the text.
	// Default false: the weight is 1 + ln(tf), as in sklearn's
	// sublinear_tf=True.
	NoSublinearTF bool

	// Seed is mixed into every feature hash. Default 0. Embedders with
	// different seeds spread the same features over different coordinates
	// and signs; vectors from different seeds are not comparable.
	Seed uint64

	// NoLowercase keeps the case of the text. Default false: text is passed
	// through strings.ToLower before it is split into tokens.
	NoLowercase bool

	// CharNGramMax, when positive, adds character n-gram features, as in
	// fastText: every run of CharNGramMin…CharNGramMax characters (runes)
	// of each token wrapped in the boundary markers "<" and ">" — "deploy"
	// gives "<de", "dep", …, "oy>", "<dep", …, "loy>", "<depl", … — so that
	// "deploy", "deploys" and "deployment", or "postgres" and "PostgreSQL",
	// share most of their features where their words share none. Default 0:
	// no n-grams, words and bigrams only, bit for bit the vectors of
	// embedders made before this field existed. At most MaxCharNGram.
	CharNGramMax int

	// CharNGramMin is the shortest n-gram when CharNGramMax is positive.
	// Zero means min(DefaultCharNGramMin, CharNGramMax), so at most 3;
	// otherwise 1 ≤ CharNGramMin ≤ CharNGramMax. It must be 0 when
	// CharNGramMax is 0.
	CharNGramMin int

	// SubwordWeight is the weight of the n-gram features relative to the
	// word features. The words (with bigrams) and the n-grams of a text are
	// hashed into two vectors that are each normalised to unit length; the
	// output is the normalised sum words + SubwordWeight·ngrams, so the
	// cosine of two texts is about (cos_words + w²·cos_ngrams)/(1 + w²).
	// Zero means DefaultSubwordWeight (1) when CharNGramMax is positive; it
	// must be 0 when CharNGramMax is 0, and otherwise finite and positive.
	SubwordWeight float64
}

// SubwordOptions returns the recommended options for a Hashing embedder of
// dimension dim (0 for DefaultHashingDim): the defaults plus character
// 3-, 4- and 5-grams with SubwordWeight 1. Words that share a stem or a
// long substring ("deploy", "deploys", "deployment"; "postgres",
// "PostgreSQL") then have a clearly positive cosine (about 0.3 to 0.4 for
// single words) where the word features alone give about 0, while
// unrelated words stay near 0. Vectors made with these options are not
// comparable with those of the zero HashingOptions.
func SubwordOptions(dim int) HashingOptions {
	return HashingOptions{Dim: dim, CharNGramMin: 3, CharNGramMax: 5, SubwordWeight: 1}
}

// Validate reports whether o is usable. It returns nil for a nil o (all
// defaults); otherwise the error names the offending field and wraps a
// sentinel error of this package ([ErrBadDimension] for Dim, [ErrOptions]
// for the others).
func (o *HashingOptions) Validate() error {
	if o == nil {
		return nil
	}
	if o.Dim < 0 || o.Dim > MaxHashingDim {
		return fmt.Errorf("%w: HashingOptions.Dim = %d, want 1…%d (or 0 for the default %d)",
			ErrBadDimension, o.Dim, MaxHashingDim, DefaultHashingDim)
	}
	switch {
	case o.CharNGramMax < 0 || o.CharNGramMax > MaxCharNGram:
		return fmt.Errorf("%w: HashingOptions.CharNGramMax = %d, want 0…%d", ErrOptions, o.CharNGramMax, MaxCharNGram)
	case o.CharNGramMax == 0 && o.CharNGramMin != 0:
		return fmt.Errorf("%w: HashingOptions.CharNGramMin = %d without CharNGramMax", ErrOptions, o.CharNGramMin)
	case o.CharNGramMin < 0 || o.CharNGramMin > o.CharNGramMax:
		return fmt.Errorf("%w: HashingOptions.CharNGramMin = %d, want 1…CharNGramMax (%d), or 0 for the default",
			ErrOptions, o.CharNGramMin, o.CharNGramMax)
	case math.IsNaN(o.SubwordWeight) || math.IsInf(o.SubwordWeight, 0) || o.SubwordWeight < 0:
		return fmt.Errorf("%w: HashingOptions.SubwordWeight = %v, want a finite weight > 0 (or 0 for the default %v)",
			ErrOptions, o.SubwordWeight, DefaultSubwordWeight)
	case o.CharNGramMax == 0 && o.SubwordWeight != 0:
		return fmt.Errorf("%w: HashingOptions.SubwordWeight = %v without CharNGramMax", ErrOptions, o.SubwordWeight)
	}
	return nil
}

// WithDefaults returns a copy of o with every zero field that has a
// non-zero default filled in; a nil o gives every default. It does not
// validate.
func (o *HashingOptions) WithDefaults() HashingOptions {
	var r HashingOptions
	if o != nil {
		r = *o
	}
	if r.Dim == 0 {
		r.Dim = DefaultHashingDim
	}
	if r.CharNGramMax > 0 {
		if r.CharNGramMin == 0 {
			r.CharNGramMin = min(DefaultCharNGramMin, r.CharNGramMax)
		}
		if r.SubwordWeight == 0 {
			r.SubwordWeight = DefaultSubwordWeight
		}
	}
	return r
}

// subwords reports whether character n-gram features are on.
func (o *HashingOptions) subwords() bool { return o.CharNGramMax > 0 }

// Hashing is a deterministic, dependency-free text embedder: signed feature
// hashing of word unigrams and bigrams (and, optionally, character n-grams)
// with sublinear term frequency, optional smoothed IDF weights learnt by
// [Hashing.Fit], and L2 normalisation. It stands in for the "TF-IDF with
// 1-2-gram features" first-stage retriever of the SmartVector benchmark
// without needing a vocabulary pass over the corpus: without Fit every
// feature has IDF 1 (plain sublinear TF).
//
// # Tokens and features
//
// Unless NoLowercase is set, a text is first lowercased with
// strings.ToLower. Tokens are then the maximal runs of Unicode letters and
// digits (unicode.IsLetter, unicode.IsDigit), with combining marks
// (unicode.Mark) kept inside a run so that scripts such as Devanagari and
// decomposed accents stay whole. Everything else separates tokens, so
// "it's" gives "it" and "s", "3.14" gives "3" and "14", and "e-mail" gives
// "e" and "mail". Text is not Unicode-normalised: normalise it first if
// "é" and "e\u0301" must match.
//
// The features of a text are its tokens (unigrams) and, unless NoBigrams is
// set, each pair of adjacent tokens joined by one space ("new york").
// Bigrams span punctuation: "York. Paris" yields the bigram "york paris".
//
// With CharNGramMax > 0 a text also has subword features: for each token t,
// every substring of CharNGramMin…CharNGramMax runes of "<" + t + ">" (the
// markers cannot occur inside a token, so "<de" only ever starts a word).
// A token shorter than CharNGramMin−2 runes has none; each token yields
// its n-grams once per occurrence, so repeated words count as repeated
// n-grams. N-gram features are hashed in their own domain (see below) and
// never coincide with a word feature spelled the same.
//
// # Weights
//
// Each distinct feature f with count tf in the text gets weight
//
//	w(f) = (1 + ln tf) · idf(f)     (tf itself if NoSublinearTF)
//
// where idf(f) is 1 before Fit. Its 64-bit hash h(f) (FNV-1a over the seed's
// eight little-endian bytes followed by the feature's UTF-8 bytes, then the
// MurmurHash3 fmix64 finaliser; for an n-gram, the byte 0xFF, which UTF-8
// text never contains, comes between the seed and the n-gram) picks the
// coordinate h(f) mod Dim and the sign + or − from the top bit of h(f); the
// vector is the signed sum of the weights, normalised to unit L2 norm.
// Distinct features that share a coordinate add up (or cancel), as in any
// hashing vectoriser.
//
// With n-grams, the word features and the n-gram features are first summed
// into two separate vectors W and G as above, each normalised to unit
// length (or left zero if it has no feature), and the output is
//
//	v = (W + s·G) / |W + s·G|     s = SubwordWeight
//
// so s sets how much spelling counts against whole words, whatever the
// number of n-grams a word has.
//
// A text with no tokens — "", "!!! ...", whitespace — yields the zero
// vector, as does, exceptionally, a text whose signed weights cancel exactly
// in every coordinate (possible at tiny Dim). Zero vectors have no
// direction: cosine similarity with them is undefined, and callers should
// treat them as matching nothing.
//
// # Determinism
//
// The same options, the same Fit corpus and the same texts give bit-for-bit
// identical vectors on every platform: features are accumulated in sorted
// hash order, the logarithm is computed by a portable routine using only
// correctly rounded IEEE-754 operations (not math.Log, which is assembly on
// some architectures), and every product is explicitly rounded so that no
// compiler may fuse it into a multiply-add. Tokenisation depends on the
// Unicode tables of the Go release (unicode.Version); text in scripts that
// a later Unicode version assigns may tokenise differently.
//
// # Concurrency
//
// A Hashing is safe for concurrent use. Fit replaces the IDF weights
// atomically: an Embed call that runs concurrently with Fit uses either the
// old or the new weights for all of its texts, never a mixture, but which
// one is unspecified, so call Fit before embedding anything that must be
// comparable.
type Hashing struct {
	opts HashingOptions
	idf  atomic.Pointer[hashingIDF] // nil until a successful Fit
}

// hashingIDF is the immutable result of one Fit.
type hashingIDF struct {
	docs   int                // N, the number of documents fitted
	byHash map[uint64]float64 // feature hash → idf, for features seen in Fit
	unseen float64            // idf of a feature seen in no document
}

var _ Embedder = (*Hashing)(nil)

// NewHashing returns a hashing embedder configured by opts; nil opts means
// all defaults (see [HashingOptions]). It returns an error wrapping
// [ErrBadDimension] if opts.Dim is negative. The embedder copies opts, so
// later changes to *opts do not affect it.
func NewHashing(opts *HashingOptions) (*Hashing, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Hashing{opts: opts.WithDefaults()}, nil
}

// Dim is the length of every vector Embed returns.
func (h *Hashing) Dim() int { return h.opts.Dim }

// Options returns the options in effect, with defaults filled in; record
// them beside any published number.
func (h *Hashing) Options() HashingOptions { return h.opts }

// Fitted reports the number of documents of the last successful Fit, or 0
// if Fit has not succeeded.
func (h *Hashing) Fitted() int {
	if t := h.idf.Load(); t != nil {
		return t.docs
	}
	return 0
}

// Fit learns IDF weights from corpus, one document per element, replacing
// those of any earlier Fit. With N documents, a feature that occurs in df of
// them gets the smoothed inverse document frequency
//
//	idf = ln((1 + N) / (1 + df)) + 1
//
// which is scikit-learn's TfidfTransformer formula with smooth_idf=True
// (https://scikit-learn.org/stable/modules/feature_extraction.html#tfidf-term-weighting):
// one extra document containing every feature, so that no idf is infinite
// and a feature in every document keeps weight 1. A feature that Embed meets
// but Fit did not (df = 0) gets ln(1 + N) + 1, the largest weight.
//
// IDF weights are keyed by the 64-bit feature hash, not by output
// coordinate, so features that share a coordinate keep their own weights.
// Features — words, bigrams and, if on, character n-grams — are counted
// with the same tokenisation and options as Embed.
//
// Fit returns [ErrEmptyVocabulary] if corpus is empty or has no tokens at
// all; the embedder is then left as it was.
func (h *Hashing) Fit(corpus []string) error {
	df := make(map[uint64]int)
	var scratch []uint64
	for _, doc := range corpus {
		scratch = h.appendFeatureHashes(scratch[:0], doc)
		scratch = h.appendSubwordHashes(scratch, doc)
		slices.Sort(scratch)
		for i, fh := range scratch {
			if i == 0 || fh != scratch[i-1] {
				df[fh]++
			}
		}
	}
	if len(df) == 0 {
		return fmt.Errorf("%w: Hashing.Fit on %d documents with no tokens", ErrEmptyVocabulary, len(corpus))
	}
	n := float64(len(corpus))
	t := &hashingIDF{
		docs:   len(corpus),
		byHash: make(map[uint64]float64, len(df)),
		unseen: portableLog(1+n) + 1,
	}
	// Each idf depends only on its own df, so map order does not matter.
	for fh, d := range df {
		t.byHash[fh] = portableLog((1+n)/(1+float64(d))) + 1
	}
	h.idf.Store(t)
	return nil
}

// Embed returns one unit-length (or zero, see [Hashing]) vector of length
// Dim per text, in order. It checks ctx every few hundred texts and returns
// ctx.Err() if ctx is done; a ctx already done when Embed is called always
// yields its error. Embed never fails otherwise.
func (h *Hashing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	dim := h.opts.Dim
	idf := h.idf.Load() // one table for the whole call
	out := make([][]float32, len(texts))
	backing := make([]float32, len(texts)*dim)
	acc := make([]float64, dim)
	var (
		feats, grams []uint64
		touched      []int
		sub          *subwordScratch
	)
	if h.opts.subwords() {
		sub = &subwordScratch{acc: make([]float64, dim)}
	}
	for i, text := range texts {
		if i%hashingCtxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v := backing[i*dim : (i+1)*dim : (i+1)*dim]
		feats = h.appendFeatureHashes(feats[:0], text)
		if sub == nil {
			touched = h.vectorize(v, acc, touched[:0], feats, idf)
		} else {
			grams = h.appendSubwordHashes(grams[:0], text)
			touched = h.vectorizeSubword(v, acc, touched[:0], sub, feats, grams, idf)
		}
		out[i] = v
	}
	return out, nil
}

// vectorize writes into v (zeroed, length Dim) the normalised vector of the
// features whose hashes are feats, one entry per occurrence, in any order;
// it sorts feats. acc is float64 scratch of length Dim, all zero on entry and
// on return; touched is scratch for the coordinates written, returned for
// reuse. idf may be nil (no Fit).
func (h *Hashing) vectorize(v []float32, acc []float64, touched []int, feats []uint64, idf *hashingIDF) []int {
	if len(feats) == 0 {
		return touched
	}
	touched = h.accumulate(acc, touched, feats, idf)
	slices.Sort(touched)
	touched = slices.Compact(touched)
	normalizeInto(v, acc, touched)
	return touched
}

// subwordScratch is the scratch space of the n-gram vector G.
type subwordScratch struct {
	acc     []float64 // length Dim, all zero between texts
	touched []int
}

// vectorizeSubword is vectorize with n-grams: it writes into v the
// normalised W + SubwordWeight·G (see [Hashing]) of the word features
// words and the n-gram features grams, sorting both. acc and sub.acc are
// zero on entry and on return.
func (h *Hashing) vectorizeSubword(v []float32, acc []float64, touched []int, sub *subwordScratch,
	words, grams []uint64, idf *hashingIDF) []int {
	touched = h.accumulate(acc, touched, words, idf)
	slices.Sort(touched)
	touched = slices.Compact(touched)
	if nw := blockNorm(acc, touched); nw > 0 {
		for _, k := range touched {
			acc[k] /= nw
		}
	}
	st := h.accumulate(sub.acc, sub.touched[:0], grams, idf)
	slices.Sort(st)
	st = slices.Compact(st)
	if ng := blockNorm(sub.acc, st); ng > 0 {
		s := h.opts.SubwordWeight
		for _, k := range st {
			acc[k] += float64(s * (sub.acc[k] / ng))
		}
		touched = append(touched, st...)
	}
	for _, k := range st {
		sub.acc[k] = 0
	}
	sub.touched = st
	slices.Sort(touched)
	touched = slices.Compact(touched)
	normalizeInto(v, acc, touched)
	return touched
}

// blockNorm is the L2 norm of acc over the sorted, distinct coordinates
// touched (the others are zero).
func blockNorm(acc []float64, touched []int) float64 {
	var ss float64
	for _, k := range touched {
		ss += float64(acc[k] * acc[k])
	}
	return math.Sqrt(ss) // correctly rounded on every platform
}

// normalizeInto writes acc/|acc| into v (zeroed) at the sorted, distinct
// coordinates touched, or leaves v zero if acc is, and zeroes acc there.
func normalizeInto(v []float32, acc []float64, touched []int) {
	var ss float64
	for _, k := range touched {
		ss += float64(acc[k] * acc[k])
	}
	if ss > 0 {
		norm := math.Sqrt(ss) // correctly rounded on every platform
		for _, k := range touched {
			v[k] = float32(acc[k] / norm)
		}
	}
	for _, k := range touched {
		acc[k] = 0
	}
}

// accumulate adds into acc the signed weight of every distinct feature of
// feats (hashes, one per occurrence, sorted in place here) and appends to
// touched the coordinates it makes non-zero, possibly more than once.
func (h *Hashing) accumulate(acc []float64, touched []int, feats []uint64, idf *hashingIDF) []int {
	// Sorting fixes the order of accumulation (floating-point addition is
	// not associative) and groups equal features for counting.
	slices.Sort(feats)
	dim := uint64(len(acc))
	for i := 0; i < len(feats); {
		fh := feats[i]
		j := i + 1
		for j < len(feats) && feats[j] == fh {
			j++
		}
		tf := float64(j - i)
		i = j

		w := tf
		if !h.opts.NoSublinearTF {
			w = 1 + portableLog(tf)
		}
		if idf != nil {
			f, ok := idf.byHash[fh]
			if !ok {
				f = idf.unseen
			}
			w = float64(w * f)
		}
		if fh>>63 != 0 {
			w = -w
		}
		k := int(fh % dim)
		if acc[k] == 0 {
			// May repeat a coordinate whose sum cancelled back to zero;
			// duplicates are removed below.
			touched = append(touched, k)
		}
		acc[k] += w
	}
	return touched
}

// appendFeatureHashes appends to dst the hash of every feature occurrence of
// text (unigrams, then bigrams unless disabled) and returns the result.
func (h *Hashing) appendFeatureHashes(dst []uint64, text string) []uint64 {
	if !h.opts.NoLowercase {
		text = strings.ToLower(text)
	}
	seeded := fnvSeed(h.opts.Seed)
	prev := ""
	for tok := range hashTokens(text) {
		dst = append(dst, fmix64(fnvString(seeded, tok)))
		if !h.opts.NoBigrams && prev != "" {
			b := fnvString(seeded, prev)
			b = fnvByte(b, ' ')
			dst = append(dst, fmix64(fnvString(b, tok)))
		}
		prev = tok
	}
	return dst
}

// subwordTag is folded into the hash state between the seed and an n-gram,
// so that no n-gram hash is the hash of the word spelled the same. No
// UTF-8 text contains the byte 0xFF.
const subwordTag = 0xFF

// appendSubwordHashes appends to dst the hash of every character n-gram
// occurrence of text (see [HashingOptions.CharNGramMax]), token by token and
// within a token by start then length, and returns the result. It appends
// nothing when n-grams are off.
func (h *Hashing) appendSubwordHashes(dst []uint64, text string) []uint64 {
	lo, hi := h.opts.CharNGramMin, h.opts.CharNGramMax
	if hi <= 0 {
		return dst
	}
	if !h.opts.NoLowercase {
		text = strings.ToLower(text)
	}
	seeded := fnvByte(fnvSeed(h.opts.Seed), subwordTag)
	var (
		wordBuf  [64]byte
		startBuf [64]int
		word     = wordBuf[:0]  // "<" + token + ">"
		starts   = startBuf[:0] // byte offset of each rune of word, then len(word)
	)
	for tok := range hashTokens(text) {
		word = append(append(append(word[:0], '<'), tok...), '>')
		starts = starts[:0]
		for i := range string(word) {
			starts = append(starts, i)
		}
		runes := len(starts)
		starts = append(starts, len(word))
		for s := 0; s+lo <= runes; s++ {
			f := seeded
			end := starts[s]
			for n := 1; n <= hi && s+n <= runes; n++ {
				for ; end < starts[s+n]; end++ {
					f = fnvByte(f, word[end])
				}
				if n >= lo {
					dst = append(dst, fmix64(f))
				}
			}
		}
	}
	return dst
}

// hashTokens yields the tokens of text: maximal runs of Unicode letters and
// digits, with combining marks continuing (but never starting) a run. The
// tokens are substrings of text; no case folding is done here.
func hashTokens(text string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		start := -1 // byte offset of the current token, or -1
		for i, r := range text {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r):
				if start < 0 {
					start = i
				}
			case start >= 0 && unicode.Is(unicode.Mark, r):
				// continue the token
			default:
				if start >= 0 {
					if !yield(text[start:i]) {
						return
					}
					start = -1
				}
			}
		}
		if start >= 0 {
			yield(text[start:])
		}
	}
}

// FNV-1a, 64-bit (http://www.isthe.com/chongo/tech/comp/fnv/), written out
// so that hashing a feature allocates nothing; it agrees with hash/fnv's
// New64a.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// fnvByte folds one byte into the FNV-1a state h.
func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime64 }

// fnvString folds the bytes of s into the FNV-1a state h.
func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = fnvByte(h, s[i])
	}
	return h
}

// fnvSeed is the FNV-1a state after the eight little-endian bytes of seed.
func fnvSeed(seed uint64) uint64 {
	h := uint64(fnvOffset64)
	for i := 0; i < 8; i++ {
		h = fnvByte(h, byte(seed>>(8*i)))
	}
	return h
}

// fmix64 is the MurmurHash3 64-bit finaliser, a bijection that spreads every
// input bit over every output bit. FNV-1a alone mixes its low bits poorly,
// and h mod Dim for a power-of-two Dim uses only those.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// portableLog returns the natural logarithm of x for finite x > 0 (it is
// only called with x ≥ 1), using only correctly rounded IEEE-754 operations
// with every product explicitly rounded, so that the result is bit-identical
// on every platform. It is accurate to a few units in the last place.
//
// With x = m·2^e, m in [√2/2, √2) (math.Frexp is exact), and
// s = (m−1)/(m+1), |s| < 0.172:
//
//	ln x = e·ln 2 + 2·atanh(s) = e·ln 2 + 2s·(1 + s²/3 + s⁴/5 + …)
//
// The series is cut after s²⁴/25, where the next term is below 2⁻⁵⁸
// relative; ln 2 is split into a high part exact in 32 bits and a low part
// (fdlibm's ln2_hi, ln2_lo) so that e·ln2_hi is exact.
func portableLog(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01 // 0x3fe62e42fee00000
		ln2Lo = 1.90821492927058770002e-10 // 0x3dea39ef35793c76
	)
	m, e := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}
	f := m - 1 // exact (Sterbenz)
	s := f / (2 + f)
	s2 := float64(s * s)
	// Horner over 1/(2k+1), k = 12 … 0.
	p := float64(1.0 / 25)
	for _, c := range [...]float64{1.0 / 23, 1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13,
		1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1} {
		p = float64(p*s2) + c
	}
	lnm := float64(float64(2*s) * p)
	k := float64(e)
	return float64(k*ln2Hi) + (float64(k*ln2Lo) + lnm)
}
