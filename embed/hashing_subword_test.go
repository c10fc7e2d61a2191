package embed

import (
	"errors"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"testing"
)

// subwordCos returns the cosine of a and b under opts.
func subwordCos(t *testing.T, opts HashingOptions, a, b string) float64 {
	t.Helper()
	vs := embedT(t, newHashingT(t, &opts), a, b)
	return dot64(vs[0], vs[1])
}

// TestSubwordVariantsMeet pins the point of character n-grams: spelling
// variants that share no word feature get a clearly positive cosine.
func TestSubwordVariantsMeet(t *testing.T) {
	for _, p := range [][2]string{
		{"postgres", "PostgreSQL"},
		{"deploy", "deployment"},
		{"deploy", "deploys"},
		{"deployment", "deploys"},
		{"database", "databases"},
		{"configure", "Configuration"},
		{"deploy the service on friday", "the deployment of services happens fridays"},
	} {
		word := subwordCos(t, HashingOptions{}, p[0], p[1])
		sub := subwordCos(t, SubwordOptions(0), p[0], p[1])
		t.Logf("cos(%q, %q): words %.3f, subwords %.3f", p[0], p[1], word, sub)
		if !(sub > 0.25 && sub > word+0.15) {
			t.Errorf("cos(%q, %q) = %.3f with subwords, %.3f without; want > 0.25 and well above", p[0], p[1], sub, word)
		}
	}
	// The single-word variants share no word feature at all.
	if c := subwordCos(t, HashingOptions{}, "deploy", "deployment"); c != 0 {
		t.Errorf("words only: cos(deploy, deployment) = %v, want 0", c)
	}
}

// TestSubwordUnrelatedStayLow checks that words without a shared stem stay
// near orthogonal: only hash collisions (about 1 in Dim per pair of
// n-grams) and genuinely shared n-grams move them off 0.
func TestSubwordUnrelatedStayLow(t *testing.T) {
	words := strings.Fields("postgres deploy banana river quantum invoice ceo " +
		"migration keyboard purple tiger helmet lawyer winter copper saddle")
	h := newHashingT(t, &HashingOptions{CharNGramMax: 5})
	vs := embedT(t, h, words...)
	var sum, worst float64
	var n int
	for i := range vs {
		for j := i + 1; j < len(vs); j++ {
			c := math.Abs(dot64(vs[i], vs[j]))
			sum += c
			n++
			if c > worst {
				worst = c
			}
			if c > 0.15 {
				t.Errorf("cos(%q, %q) = %.3f, want near 0", words[i], words[j], c)
			}
		}
	}
	if mean := sum / float64(n); mean > 0.03 {
		t.Errorf("mean |cos| over %d unrelated pairs = %.3f, want < 0.03", n, mean)
	}
	t.Logf("unrelated pairs: mean |cos| %.4f, worst %.3f", sum/float64(n), worst)
}

// TestSubwordKeepsWordSimilarity checks that n-grams do not drown the word
// features: a paraphrase stays far closer than an unrelated text.
func TestSubwordKeepsWordSimilarity(t *testing.T) {
	h := newHashingT(t, new(SubwordOptions(0)))
	vs := embedT(t, h,
		"the quick brown fox jumps over the lazy dog",
		"a quick brown fox jumped over the lazy dog",
		"quarterly revenue grew four percent in europe",
	)
	para, unrelated := dot64(vs[0], vs[1]), dot64(vs[0], vs[2])
	if !(para > 0.6 && para > unrelated+0.4) {
		t.Errorf("cos(text, paraphrase) = %.3f, cos(text, unrelated) = %.3f; want the paraphrase far closer", para, unrelated)
	}
}

// TestSubwordWeight checks that SubwordWeight moves variants closer
// monotonically, and that identical texts stay identical.
func TestSubwordWeight(t *testing.T) {
	prev := subwordCos(t, HashingOptions{}, "deploy", "deployment")
	for _, w := range []float64{0.25, 0.5, 1, 2, 4} {
		c := subwordCos(t, HashingOptions{CharNGramMax: 5, SubwordWeight: w}, "deploy", "deployment")
		if !(c > prev) {
			t.Errorf("SubwordWeight %v: cos(deploy, deployment) = %.3f, not above %.3f at the lower weight", w, c, prev)
		}
		prev = c
	}
}

// TestSubwordZeroValueUnchanged: options with n-grams off, however they are
// written, give the vectors of the zero HashingOptions (which
// TestHashingGolden pins).
func TestSubwordZeroValueUnchanged(t *testing.T) {
	base := embedT(t, newHashingT(t, &HashingOptions{Dim: 64, Seed: 7}), hashingSampleTexts...)
	same := embedT(t, newHashingT(t, &HashingOptions{Dim: 64, Seed: 7, CharNGramMax: 0}), hashingSampleTexts...)
	on := embedT(t, newHashingT(t, &HashingOptions{Dim: 64, Seed: 7, CharNGramMax: 5}), hashingSampleTexts...)
	for i := range base {
		if !sameBits(base[i], same[i]) {
			t.Errorf("%q: CharNGramMax 0 changes the vector", hashingSampleTexts[i])
		}
		if norm64(base[i]) != 0 && sameBits(base[i], on[i]) {
			t.Errorf("%q: CharNGramMax 5 does not change the vector", hashingSampleTexts[i])
		}
	}
	if h := newHashingT(t, nil); h.appendSubwordHashes(nil, "deployment") != nil {
		t.Error("default options produce n-gram features")
	}
}

// TestSubwordGolden pins the exact output bits with n-grams, without and
// with Fit. If the algorithm is changed on purpose, replace want with the
// value the failure reports.
func TestSubwordGolden(t *testing.T) {
	o := SubwordOptions(64)
	o.Seed = 7
	checkGolden(t, newHashingT(t, &o), 0xf75dc1ec9b0d6ed8, 0x58d904e7648cb916)
}

// TestSubwordFeatures checks the n-gram hashes against hash/fnv and a
// spelled-out list of n-grams, in runes, with boundary markers.
func TestSubwordFeatures(t *testing.T) {
	ref := func(seed uint64, s string) uint64 {
		f := fnv.New64a()
		var b [9]byte
		for i := range 8 {
			b[i] = byte(seed >> (8 * i))
		}
		b[8] = 0xFF
		f.Write(b[:])
		f.Write([]byte(s))
		return fmix64(f.Sum64())
	}
	for _, tc := range []struct {
		opts HashingOptions
		text string
		want []string
	}{
		{HashingOptions{CharNGramMax: 4}, "Cats", []string{"<ca", "<cat", "cat", "cats", "ats", "ats>", "ts>"}},
		{HashingOptions{CharNGramMin: 2, CharNGramMax: 2, Seed: 5}, "a b", []string{"<a", "a>", "<b", "b>"}},
		{HashingOptions{CharNGramMax: 5}, "東京", []string{"<東京", "<東京>", "東京>"}},
		{HashingOptions{CharNGramMax: 3}, "x", []string{"<x>"}},
		{HashingOptions{CharNGramMin: 4, CharNGramMax: 4}, "x yz", []string{"<yz>"}}, // "<x>" is too short
		{HashingOptions{CharNGramMax: 3, NoLowercase: true}, "Hi!", []string{"<Hi", "Hi>"}},
		{HashingOptions{CharNGramMax: 3}, "!!! ...", nil},
	} {
		h := newHashingT(t, &tc.opts)
		var want []uint64
		for _, g := range tc.want {
			want = append(want, ref(tc.opts.Seed, g))
		}
		if got := h.appendSubwordHashes(nil, tc.text); !slices.Equal(got, want) {
			t.Errorf("%+v: n-gram hashes of %q = %x, want %x (%q)", tc.opts, tc.text, got, want, tc.want)
		}
	}
	// An n-gram never hashes like the word spelled the same.
	h := newHashingT(t, &HashingOptions{CharNGramMin: 3, CharNGramMax: 3})
	if w, g := h.appendFeatureHashes(nil, "cat"), h.appendSubwordHashes(nil, "a cat b"); slices.Contains(g, w[0]) {
		t.Error("the 3-gram \"cat\" has the hash of the word \"cat\"")
	}
}

// TestSubwordFit checks that Fit learns n-gram weights: an n-gram in every
// document ("ing>") gets idf 1, a rare one more.
func TestSubwordFit(t *testing.T) {
	h := newHashingT(t, new(SubwordOptions(0)))
	corpus := []string{"running", "singing", "swimming deploy"}
	if err := h.Fit(corpus); err != nil {
		t.Fatal(err)
	}
	tab := h.idf.Load()
	gram := func(text string, i int) uint64 { return h.appendSubwordHashes(nil, text)[i] }
	// For "ing" (one token, 3…5-grams by start): "ing>" is the 4-gram at start 2.
	grams := h.appendSubwordHashes(nil, "ing")
	if len(grams) != 6 {
		t.Fatalf("%d n-grams of \"ing\", want 6", len(grams))
	}
	if got := tab.byHash[grams[4]]; got != 1 {
		t.Errorf("idf(\"ing>\") = %v, want 1 (in every document)", got)
	}
	if got, want := tab.byHash[gram("deploy", 0)], math.Log(4.0/2)+1; math.Abs(got-want) > 1e-12 {
		t.Errorf("idf(\"<de\") = %v, want %v", got, want)
	}
}

func TestSubwordOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o     HashingOptions
		field string
	}{
		{HashingOptions{CharNGramMax: -1}, "CharNGramMax"},
		{HashingOptions{CharNGramMax: MaxCharNGram + 1}, "CharNGramMax"},
		{HashingOptions{CharNGramMin: 3}, "CharNGramMin"},
		{HashingOptions{CharNGramMin: 4, CharNGramMax: 3}, "CharNGramMin"},
		{HashingOptions{CharNGramMin: -1, CharNGramMax: 3}, "CharNGramMin"},
		{HashingOptions{SubwordWeight: 1}, "SubwordWeight"},
		{HashingOptions{CharNGramMax: 5, SubwordWeight: -1}, "SubwordWeight"},
		{HashingOptions{CharNGramMax: 5, SubwordWeight: math.NaN()}, "SubwordWeight"},
		{HashingOptions{CharNGramMax: 5, SubwordWeight: math.Inf(1)}, "SubwordWeight"},
	} {
		err := tc.o.Validate()
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "HashingOptions."+tc.field) {
			t.Errorf("Validate(%+v) = %v, want ErrOptions naming %s", tc.o, err, tc.field)
		}
		if h, err := NewHashing(&tc.o); h != nil || !errors.Is(err, ErrOptions) {
			t.Errorf("NewHashing(%+v) = %v, %v; want nil, ErrOptions", tc.o, h, err)
		}
	}
	for _, tc := range []struct{ in, want HashingOptions }{
		{SubwordOptions(0), HashingOptions{Dim: DefaultHashingDim, CharNGramMin: 3, CharNGramMax: 5, SubwordWeight: 1}},
		{SubwordOptions(384), HashingOptions{Dim: 384, CharNGramMin: 3, CharNGramMax: 5, SubwordWeight: 1}},
		{HashingOptions{CharNGramMax: 4}, HashingOptions{Dim: DefaultHashingDim, CharNGramMin: 3, CharNGramMax: 4, SubwordWeight: DefaultSubwordWeight}},
		{HashingOptions{CharNGramMax: 2, SubwordWeight: 0.5}, HashingOptions{Dim: DefaultHashingDim, CharNGramMin: 2, CharNGramMax: 2, SubwordWeight: 0.5}},
		{HashingOptions{CharNGramMin: 1, CharNGramMax: MaxCharNGram}, HashingOptions{Dim: DefaultHashingDim, CharNGramMin: 1, CharNGramMax: MaxCharNGram, SubwordWeight: 1}},
	} {
		if got := newHashingT(t, &tc.in).Options(); got != tc.want {
			t.Errorf("NewHashing(%+v).Options() = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func FuzzHashingSubword(f *testing.F) {
	for _, s := range hashingSampleTexts {
		f.Add(s, uint64(0), 16, 3, 5)
	}
	f.Add("\xff\x00 a a", uint64(1), 1, 1, 1)
	f.Fuzz(func(t *testing.T, text string, seed uint64, dim, lo, hi int) {
		hi = 1 + int(uint(hi)%MaxCharNGram)
		lo = 1 + int(uint(lo)%uint(hi))
		dim = 1 + int(uint(dim)%2048)
		h := newHashingT(t, &HashingOptions{Dim: dim, Seed: seed, CharNGramMin: lo, CharNGramMax: hi})
		v := embedT(t, h, text)[0]
		if n := norm64(v); n != 0 && math.Abs(n-1) > 1e-5 {
			t.Fatalf("|Embed(%q)| = %v at dim %d, n-grams %d…%d", text, n, dim, lo, hi)
		}
		if dim >= 256 && len(slices.Collect(hashTokens(strings.ToLower(text)))) == 1 && norm64(v) == 0 {
			// At small Dim the word and its n-grams can cancel exactly.
			t.Fatalf("one-token text %q gave the zero vector", text)
		}
	})
}
