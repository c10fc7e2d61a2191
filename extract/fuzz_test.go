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
