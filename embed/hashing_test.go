package embed

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"
)

func newHashingT(t testing.TB, opts *HashingOptions) *Hashing {
	t.Helper()
	h, err := NewHashing(opts)
	if err != nil {
		t.Fatalf("NewHashing(%+v): %v", opts, err)
	}
	return h
}

func embedT(t testing.TB, h *Hashing, texts ...string) [][]float32 {
	t.Helper()
	vs, err := h.Embed(context.Background(), texts)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("Embed returned %d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs {
		if len(v) != h.Dim() {
			t.Fatalf("vector %d has length %d, want Dim() = %d", i, len(v), h.Dim())
		}
	}
	return vs
}

// dot64 is the float64 dot product; for unit vectors it is the cosine.
func dot64(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func norm64(v []float32) float64 { return math.Sqrt(dot64(v, v)) }

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

var hashingSampleTexts = []string{
	"The quick brown fox jumps over the lazy dog.",
	"Tidemark stores memories that expire; superseded facts are never returned.",
	"New York, New York — it's a wonderful town! 1-2-3 e-mail 3.14",
	"Straße ÇA VA? naïve café, 東京 タワー, हिन्दी भाषा, Ελληνικά",
	"a a a a a a a b",
	"",
	"!!! ...",
}

var hashingSampleCorpus = []string{
	"the cat sat on the mat",
	"the dog chased the cat",
	"the bird sang",
	"New York is big",
}

func TestHashingDeterministic(t *testing.T) {
	for _, opts := range []*HashingOptions{
		nil,
		{Dim: 7, NoBigrams: true},
		{Dim: 300, Seed: 42, NoSublinearTF: true, NoLowercase: true},
		func() *HashingOptions { o := SubwordOptions(0); return &o }(),
		{Dim: 7, CharNGramMin: 1, CharNGramMax: 2, SubwordWeight: 0.3, NoBigrams: true},
	} {
		for _, fit := range []bool{false, true} {
			a := newHashingT(t, opts)
			b := newHashingT(t, opts)
			if fit {
				if err := a.Fit(hashingSampleCorpus); err != nil {
					t.Fatal(err)
				}
				if err := b.Fit(slices.Clone(hashingSampleCorpus)); err != nil {
					t.Fatal(err)
				}
			}
			va := embedT(t, a, hashingSampleTexts...)
			vb := embedT(t, b, hashingSampleTexts...)
			// Embedding one text at a time must not change anything either.
			for i := range va {
				single := embedT(t, b, hashingSampleTexts[i])[0]
				if !sameBits(va[i], vb[i]) || !sameBits(va[i], single) {
					t.Errorf("opts %+v fit=%v text %q: vectors differ between embedders or batchings", opts, fit, hashingSampleTexts[i])
				}
			}
		}
	}
}

// TestHashingGolden pins the exact output bits, so that a change of
// algorithm, constant or platform arithmetic is noticed. If the algorithm is
// changed on purpose, replace want with the value the failure reports (and
// note that published numbers made with the old version are not comparable).
func TestHashingGolden(t *testing.T) {
	checkGolden(t, newHashingT(t, &HashingOptions{Dim: 64, Seed: 7}), 0xed27e813ac7f6ce0, 0x9e350efed8193aff)
}

// checkGolden compares the fingerprints of h's vectors of the sample texts
// before and after Fit with wantTF and wantTFIDF.
func checkGolden(t *testing.T, h *Hashing, wantTF, wantTFIDF uint64) {
	t.Helper()
	fp := func() uint64 {
		f := fnv.New64a()
		for _, v := range embedT(t, h, hashingSampleTexts...) {
			for _, x := range v {
				b := math.Float32bits(x)
				f.Write([]byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24)})
			}
		}
		return f.Sum64()
	}
	if got := fp(); got != wantTF {
		t.Errorf("TF fingerprint = %#x, want %#x", got, wantTF)
	}
	if err := h.Fit(hashingSampleCorpus); err != nil {
		t.Fatal(err)
	}
	if got := fp(); got != wantTFIDF {
		t.Errorf("TF-IDF fingerprint = %#x, want %#x", got, wantTFIDF)
	}
}

func TestHashingUnitNorm(t *testing.T) {
	for _, dim := range []int{7, 256, 1024} {
		h := newHashingT(t, &HashingOptions{Dim: dim})
		if err := h.Fit(hashingSampleCorpus); err != nil {
			t.Fatal(err)
		}
		texts := hashingSampleTexts[:5]
		for i, v := range embedT(t, h, texts...) {
			if n := norm64(v); math.Abs(n-1) > 1e-6 {
				t.Errorf("dim %d: |Embed(%q)| = %v, want 1", dim, texts[i], n)
			}
			for j, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("dim %d: Embed(%q)[%d] = %v", dim, texts[i], j, x)
				}
			}
		}
	}
}

func TestHashingZeroVector(t *testing.T) {
	h := newHashingT(t, nil)
	if err := h.Fit(hashingSampleCorpus); err != nil {
		t.Fatal(err)
	}
	texts := []string{"", "!!! ...", "   \t\n", "— ¿? …", "\xff\xfe"}
	for i, v := range embedT(t, h, texts...) {
		for j, x := range v {
			if math.Float32bits(x) != 0 {
				t.Errorf("Embed(%q)[%d] = %v, want +0 everywhere", texts[i], j, x)
				break
			}
		}
	}
}

func TestHashingDims(t *testing.T) {
	for _, dim := range []int{1, 7, 256, 1024} {
		h := newHashingT(t, &HashingOptions{Dim: dim})
		if h.Dim() != dim {
			t.Errorf("Dim() = %d, want %d", h.Dim(), dim)
		}
		// embedT checks every length; at Dim 1 a vector is ±1 or, if the
		// signed weights cancel, 0.
		for i, v := range embedT(t, h, hashingSampleTexts...) {
			if n := norm64(v); n != 0 && math.Abs(n-1) > 1e-6 {
				t.Errorf("dim %d: |Embed(%q)| = %v, want 0 or 1", dim, hashingSampleTexts[i], n)
			}
		}
	}
}

// TestHashingCancellation covers signed weights that cancel exactly: at
// Dim 1 with raw counts, two features of opposite sign sum to zero, and a
// third feature hashed after them must count once in the norm.
func TestHashingCancellation(t *testing.T) {
	h := newHashingT(t, &HashingOptions{Dim: 1, NoBigrams: true, NoSublinearTF: true})
	hashOf := func(w string) uint64 { return h.appendFeatureHashes(nil, w)[0] }
	var a, b, c string
search:
	for i := range 50 {
		for j := range 50 {
			for k := range 50 {
				x, y, z := fmt.Sprint("w", i), fmt.Sprint("w", j), fmt.Sprint("w", k)
				hx, hy, hz := hashOf(x), hashOf(y), hashOf(z)
				if hx < hy && hy < hz && hx>>63 != hy>>63 {
					a, b, c = x, y, z
					break search
				}
			}
		}
	}
	if a == "" {
		t.Fatal("no suitable words found")
	}
	vs := embedT(t, h, a+" "+b, a+" "+b+" "+c)
	if vs[0][0] != 0 {
		t.Errorf("Embed(%q)[0] = %v, want 0 (opposite signs cancel)", a+" "+b, vs[0][0])
	}
	if got := math.Abs(float64(vs[1][0])); got != 1 {
		t.Errorf("|Embed(%q)[0]| = %v, want 1", a+" "+b+" "+c, got)
	}
}

func TestHashingOptionsValidate(t *testing.T) {
	for _, dim := range []int{-1, -1024, math.MinInt} {
		o := &HashingOptions{Dim: dim}
		err := o.Validate()
		if !errors.Is(err, ErrBadDimension) {
			t.Fatalf("Validate(Dim=%d) = %v, want ErrBadDimension", dim, err)
		}
		if !strings.Contains(err.Error(), "HashingOptions.Dim") {
			t.Errorf("Validate(Dim=%d) = %q, does not name the field", dim, err)
		}
		if h, err := NewHashing(o); !errors.Is(err, ErrBadDimension) || h != nil {
			t.Errorf("NewHashing(Dim=%d) = %v, %v; want nil, ErrBadDimension", dim, h, err)
		}
	}
	for _, o := range []*HashingOptions{nil, {}, {Dim: 1}, {Dim: 1 << 20, Seed: math.MaxUint64}} {
		if err := o.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", o, err)
		}
	}
}

func TestHashingNilOptionsAreDefaults(t *testing.T) {
	want := HashingOptions{Dim: DefaultHashingDim}
	hNil := newHashingT(t, nil)
	hZero := newHashingT(t, &HashingOptions{})
	if got := hNil.Options(); got != want {
		t.Errorf("NewHashing(nil).Options() = %+v, want %+v", got, want)
	}
	if got := hZero.Options(); got != want {
		t.Errorf("NewHashing(&HashingOptions{}).Options() = %+v, want %+v", got, want)
	}
	if hNil.Dim() != 1024 {
		t.Errorf("default Dim() = %d, want 1024", hNil.Dim())
	}
	// The defaults are: bigrams, sublinear tf, lowercase, seed 0.
	explicit := newHashingT(t, &HashingOptions{Dim: 1024, Seed: 0})
	a := embedT(t, hNil, hashingSampleTexts...)
	b := embedT(t, explicit, hashingSampleTexts...)
	for i := range a {
		if !sameBits(a[i], b[i]) {
			t.Errorf("nil options and explicit defaults differ on %q", hashingSampleTexts[i])
		}
	}
	// And each default is really on: turning it off changes the output.
	text := "New New New York"
	base := embedT(t, hNil, text)[0]
	for _, o := range []*HashingOptions{{NoBigrams: true}, {NoSublinearTF: true}, {NoLowercase: true}, {Seed: 1}} {
		if sameBits(base, embedT(t, newHashingT(t, o), text)[0]) {
			t.Errorf("%+v gives the same vector as the defaults", o)
		}
	}
	// Options is a copy: changing the caller's struct later has no effect.
	o := &HashingOptions{Dim: 16}
	h := newHashingT(t, o)
	o.Dim = 32
	if h.Dim() != 16 {
		t.Errorf("Dim() = %d after the caller changed its options, want 16", h.Dim())
	}
}

func TestHashingSimilarity(t *testing.T) {
	h := newHashingT(t, nil)
	vs := embedT(t, h,
		"the quick brown fox jumps over the lazy dog",
		"a quick brown fox jumped over the lazy dog",
		"quarterly revenue grew four percent in europe",
	)
	para, unrelated := dot64(vs[0], vs[1]), dot64(vs[0], vs[2])
	if !(para > 0.5 && para > unrelated+0.3) {
		t.Errorf("cos(text, paraphrase) = %.3f, cos(text, unrelated) = %.3f; want the paraphrase far closer", para, unrelated)
	}
	// Case folding: same text in capitals is identical by default.
	up := embedT(t, h, "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG")[0]
	if !sameBits(vs[0], up) {
		t.Error("lowercasing: upper-case text embeds differently")
	}
}

func TestHashingBigrams(t *testing.T) {
	on := newHashingT(t, nil)
	vs := embedT(t, on, "new york", "york new")
	if c := dot64(vs[0], vs[1]); c > 0.9 {
		t.Errorf("bigrams on: cos(new york, york new) = %.3f, want well below 1", c)
	}
	off := newHashingT(t, &HashingOptions{NoBigrams: true})
	vs = embedT(t, off, "new york", "york new")
	if !sameBits(vs[0], vs[1]) {
		t.Error("bigrams off: \"new york\" and \"york new\" differ, want identical")
	}
}

func TestHashingSublinearTF(t *testing.T) {
	// One feature repeated 4 times against one feature once, bigrams off and
	// a large dimension so that the two land on different coordinates.
	for _, tc := range []struct {
		opts  HashingOptions
		ratio float64
	}{
		{HashingOptions{Dim: 1 << 16, NoBigrams: true}, 1 + math.Log(4)},
		{HashingOptions{Dim: 1 << 16, NoBigrams: true, NoSublinearTF: true}, 4},
	} {
		h := newHashingT(t, &tc.opts)
		v := embedT(t, h, "cat cat dog cat cat")[0]
		var mags []float64
		for _, x := range v {
			if x != 0 {
				mags = append(mags, math.Abs(float64(x)))
			}
		}
		if len(mags) != 2 {
			t.Fatalf("%+v: %d non-zero coordinates, want 2", tc.opts, len(mags))
		}
		got := max(mags[0], mags[1]) / min(mags[0], mags[1])
		if math.Abs(got-tc.ratio) > 1e-5 {
			t.Errorf("%+v: weight ratio cat/dog = %.6f, want %.6f", tc.opts, got, tc.ratio)
		}
	}
}

func TestHashingIDF(t *testing.T) {
	corpus := []string{
		"the the the the the the the the the the",
		"my cat sat on the mat by the door",
		"the dog barked at the postman",
		"the stock market fell in the morning",
		"the rain in the north",
		"the train left the station",
	}
	h := newHashingT(t, nil)
	cos := func() (cat, the float64) {
		vs := embedT(t, h, "the cat", corpus[1], corpus[0])
		return dot64(vs[0], vs[1]), dot64(vs[0], vs[2])
	}
	// Without IDF the repeated "the" wins: the test corpus is built so that
	// Fit must change the ranking.
	cat, the := cos()
	t.Logf("before Fit: cos(query, cat doc) = %.3f, cos(query, the doc) = %.3f", cat, the)
	if !(the > cat) {
		t.Fatalf("before Fit: cos(query, cat doc) = %.3f, cos(query, the doc) = %.3f; want the \"the\" doc ahead (test corpus too easy)", cat, the)
	}
	if err := h.Fit(corpus); err != nil {
		t.Fatal(err)
	}
	if h.Fitted() != len(corpus) {
		t.Errorf("Fitted() = %d, want %d", h.Fitted(), len(corpus))
	}
	cat, the = cos()
	t.Logf("after Fit: cos(query, cat doc) = %.3f, cos(query, the doc) = %.3f", cat, the)
	if !(cat > the) {
		t.Errorf("after Fit: cos(query, cat doc) = %.3f, cos(query, the doc) = %.3f; want the cat doc closer", cat, the)
	}

	// The stored idf values follow the smoothed formula.
	tab := h.idf.Load()
	n := float64(len(corpus))
	feat := func(s string) uint64 { return h.appendFeatureHashes(nil, s)[0] }
	for _, tc := range []struct {
		feature string
		df      float64
	}{{"the", 6}, {"cat", 1}, {"in", 2}} {
		want := math.Log((1+n)/(1+tc.df)) + 1
		if got := tab.byHash[feat(tc.feature)]; math.Abs(got-want) > 1e-12 {
			t.Errorf("idf(%q) = %v, want %v", tc.feature, got, want)
		}
	}
	if want := math.Log(1+n) + 1; math.Abs(tab.unseen-want) > 1e-12 {
		t.Errorf("unseen idf = %v, want %v", tab.unseen, want)
	}
}

func TestHashingFitEmpty(t *testing.T) {
	h := newHashingT(t, nil)
	for _, corpus := range [][]string{nil, {}, {""}, {"!!!", " ... "}} {
		if err := h.Fit(corpus); !errors.Is(err, ErrEmptyVocabulary) {
			t.Errorf("Fit(%q) = %v, want ErrEmptyVocabulary", corpus, err)
		}
	}
	if h.Fitted() != 0 {
		t.Errorf("Fitted() = %d after failed Fits, want 0", h.Fitted())
	}
	// A failed Fit leaves an earlier one in place.
	if err := h.Fit(hashingSampleCorpus); err != nil {
		t.Fatal(err)
	}
	before := embedT(t, h, hashingSampleTexts...)
	if err := h.Fit(nil); !errors.Is(err, ErrEmptyVocabulary) {
		t.Fatalf("Fit(nil) = %v, want ErrEmptyVocabulary", err)
	}
	after := embedT(t, h, hashingSampleTexts...)
	for i := range before {
		if !sameBits(before[i], after[i]) {
			t.Errorf("failed Fit changed the vector of %q", hashingSampleTexts[i])
		}
	}
}

func TestHashingContextCanceled(t *testing.T) {
	h := newHashingT(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, texts := range [][]string{{"hello"}, make([]string, 3*hashingCtxEvery)} {
		vs, err := h.Embed(ctx, texts)
		if !errors.Is(err, context.Canceled) || vs != nil {
			t.Errorf("Embed(cancelled ctx, %d texts) = %d vectors, %v; want nil, context.Canceled", len(texts), len(vs), err)
		}
	}
	// Empty input is not an error.
	vs, err := h.Embed(context.Background(), nil)
	if err != nil || len(vs) != 0 {
		t.Errorf("Embed(nil) = %v, %v; want no vectors, nil", vs, err)
	}
}

func TestHashingConcurrent(t *testing.T) {
	// Run with -race: Embed is safe for concurrent use, also with Fit.
	h := newHashingT(t, &HashingOptions{Dim: 64})
	// Every concurrent Embed must see either the unfitted weights or the
	// fitted ones, never a mixture.
	before := embedT(t, h, hashingSampleTexts...)
	fitted := newHashingT(t, &HashingOptions{Dim: 64})
	if err := fitted.Fit(hashingSampleCorpus); err != nil {
		t.Fatal(err)
	}
	after := embedT(t, fitted, hashingSampleTexts...)
	same := func(a, b [][]float32) bool {
		for i := range a {
			for j := range a[i] {
				if a[i][j] != b[i][j] {
					return false
				}
			}
		}
		return true
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				vs, err := h.Embed(context.Background(), hashingSampleTexts)
				if err != nil || len(vs) != len(before) {
					t.Errorf("concurrent Embed: %d vectors, %v", len(vs), err)
					return
				}
				if !same(vs, before) && !same(vs, after) {
					t.Error("concurrent Embed returned neither the unfitted nor the fitted vectors")
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 10 {
			if err := h.Fit(hashingSampleCorpus); err != nil {
				t.Errorf("concurrent Fit: %v", err)
			}
		}
	})
	wg.Wait()
}

func TestHashTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"!!! ...", nil},
		{"hello", []string{"hello"}},
		{"  Hello,  World!  ", []string{"Hello", "World"}},
		{"it's 3.14 e-mail x_y", []string{"it", "s", "3", "14", "e", "mail", "x", "y"}},
		{"naïve café", []string{"naïve", "café"}},
		{"cafe\u0301 \u0301x", []string{"cafe\u0301", "x"}}, // marks continue, never start
		{"हिन्दी भाषा", []string{"हिन्दी", "भाषा"}},
		{"東京タワー", []string{"東京タワー"}},
		{"a\xffb", []string{"a", "b"}}, // invalid UTF-8 separates
		{"٣٤ x²", []string{"٣٤", "x"}},
	} {
		got := slices.Collect(hashTokens(tc.in))
		if !slices.Equal(got, tc.want) {
			t.Errorf("hashTokens(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if unicode.IsLetter(utf8.RuneError) || unicode.IsDigit(utf8.RuneError) {
		t.Error("utf8.RuneError counts as a token rune")
	}
	// Early stop is honoured.
	for tok := range hashTokens("a b c") {
		if tok != "a" {
			t.Fatalf("iteration continued after break: %q", tok)
		}
		break
	}
}

func TestHashingFeatures(t *testing.T) {
	h := newHashingT(t, &HashingOptions{Seed: 99})
	got := h.appendFeatureHashes(nil, "New York city")
	hash := func(s string) uint64 {
		f := fnv.New64a()
		var seed [8]byte
		for i := range seed {
			seed[i] = byte(uint64(99) >> (8 * i))
		}
		f.Write(seed[:])
		f.Write([]byte(s))
		return fmix64(f.Sum64())
	}
	want := []uint64{hash("new"), hash("york"), hash("new york"), hash("city"), hash("york city")}
	if !slices.Equal(got, want) {
		t.Errorf("feature hashes = %x, want %x (hash/fnv reference)", got, want)
	}
}

func TestPortableLog(t *testing.T) {
	check := func(x float64) {
		t.Helper()
		got, want := portableLog(x), math.Log(x)
		if tol := 4e-16 * math.Max(1, math.Abs(want)); math.Abs(got-want) > tol {
			t.Errorf("portableLog(%v) = %v, math.Log = %v (diff %g)", x, got, want, got-want)
		}
	}
	if got := portableLog(1); got != 0 {
		t.Errorf("portableLog(1) = %v, want 0", got)
	}
	for x := 1.0; x <= 100000; x++ {
		check(x)
	}
	for _, x := range []float64{1 + 0x1p-52, math.Sqrt2, math.Sqrt2 / 2, 1.0 / 3, 7.0 / 5, 1e-300, 1e300, math.MaxFloat64, 1 << 62} {
		check(x)
	}
	for x := 1.0; x < 1e18; x = x*1.37 + 0.5 {
		check(x)
	}
}

func FuzzHashingEmbed(f *testing.F) {
	for _, s := range hashingSampleTexts {
		f.Add(s, uint64(0), 16)
	}
	f.Add("\xff\x00 a a", uint64(1), 1)
	f.Fuzz(func(t *testing.T, text string, seed uint64, dim int) {
		dim = 1 + int(uint(dim)%2048)
		h := newHashingT(t, &HashingOptions{Dim: dim, Seed: seed})
		v := embedT(t, h, text)[0]
		n := norm64(v)
		if n != 0 && math.Abs(n-1) > 1e-5 {
			t.Fatalf("|Embed(%q)| = %v at dim %d", text, n, dim)
		}
		// A single token is a single feature, which cannot cancel.
		if n == 0 && len(slices.Collect(hashTokens(strings.ToLower(text)))) == 1 {
			t.Fatalf("one-token text %q gave the zero vector", text)
		}
	})
}

func BenchmarkHashingEmbed(b *testing.B) {
	for _, c := range []struct {
		name string
		opts *HashingOptions
	}{{"words", nil}, {"subwords", new(SubwordOptions(0))}} {
		b.Run(c.name, func(b *testing.B) {
			h := newHashingT(b, c.opts)
			if err := h.Fit(hashingSampleCorpus); err != nil {
				b.Fatal(err)
			}
			texts := make([]string, 64)
			var n int
			for i := range texts {
				texts[i] = strings.Repeat(hashingSampleTexts[i%5]+" ", 4)
				n += len(texts[i])
			}
			b.SetBytes(int64(n))
			for b.Loop() {
				if _, err := h.Embed(b.Context(), texts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
