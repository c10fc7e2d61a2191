package extract

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidemark/tidemark/temporal"
)

// FuzzKey checks that Key never panics, is deterministic, and returns
// valid UTF-8, normalised key parts and a non-blank object when it keys.
func FuzzKey(f *testing.F) {
	for _, p := range heldOut.same {
		f.Add(p[0])
	}
	for _, s := range heldOut.none {
		f.Add(s)
	}
	for _, s := range []string{
		"", "'", "(((", "fetch_user(uid, org", "The x is '", "The x is \xff\xfe 5.", "= = =",
		"The function f( is 3.", "GET /", "a==1", "The v is ==.", "-- is --x", "The 'a b c d e f g h' is 'x'.",
		strings.Repeat("The port is 8080 ", 40),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := Key(s)
		again, ok2 := Key(s)
		if got != again || ok != ok2 {
			t.Fatalf("Key(%q) not deterministic: %+v %v, then %+v %v", s, got, ok, again, ok2)
		}
		if !ok {
			if got != (Fact{}) {
				t.Fatalf("Key(%q) = %+v with ok false", s, got)
			}
			return
		}
		for _, part := range []string{got.Subject, got.Relation, got.Object} {
			if !utf8.ValidString(part) {
				t.Fatalf("Key(%q) = %+v: invalid UTF-8", s, got)
			}
		}
		if temporal.NormalizeObject(got.Object) == "" {
			t.Fatalf("Key(%q) = %+v: blank object", s, got)
		}
		if got.Subject == "" || got.Relation == "" || temporal.NormalizeKeyPart(got.Subject) != got.Subject ||
			temporal.NormalizeKeyPart(got.Relation) != got.Relation {
			t.Fatalf("Key(%q) = %+v: key parts empty or not normalised", s, got)
		}
	})
}

// FuzzCompare checks that Compare never panics, is deterministic, and
// returns a normalised key and two different values when it finds more
// than Unrelated.
func FuzzCompare(f *testing.F) {
	for _, c := range compareCases {
		f.Add(c.older, c.newer)
	}
	for _, p := range heldOut.same {
		f.Add(p[0], p[1])
	}
	f.Add("The x is 5.", "The x is")
	f.Add("a b", "a b c d e f")
	f.Add("The \xff is 3.", "The \xff is 4.")
	f.Fuzz(func(t *testing.T, a, b string) {
		got := Compare(a, b)
		if again := Compare(a, b); got != again {
			t.Fatalf("Compare(%q, %q) not deterministic: %+v, then %+v", a, b, got, again)
		}
		if got.Verdict == Unrelated {
			if got != (Change{}) {
				t.Fatalf("Compare(%q, %q) = %+v with Unrelated", a, b, got)
			}
			return
		}
		if got.Subject == "" || got.Relation == "" || temporal.NormalizeKeyPart(got.Subject) != got.Subject ||
			temporal.NormalizeKeyPart(got.Relation) != got.Relation || !utf8.ValidString(got.Old+got.New) {
			t.Fatalf("Compare(%q, %q) = %+v: key parts empty or not normalised", a, b, got)
		}
		if got.Verdict == Update && (temporal.NormalizeObject(got.Old) == temporal.NormalizeObject(got.New) || got.Old == "" || got.New == "") {
			t.Fatalf("Compare(%q, %q) = %+v: an update needs two different values", a, b, got)
		}
	})
}
