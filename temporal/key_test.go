package temporal

import "testing"

func TestNormalizeKeyPart(t *testing.T) {
	for in, want := range map[string]string{
		"API Rate-Limit":      "api rate limit",
		"api_rate_limit":      "api rate limit",
		"  api  rate limit  ": "api rate limit",
		"Café.Owner":          "café owner",
		"--":                  "",
		"v2":                  "v2",
	} {
		if got := NormalizeKeyPart(in); got != want {
			t.Errorf("NormalizeKeyPart(%q) = %q, want %q", in, got, want)
		}
	}
	if NewFactKey("Parser", "entry point") != NewFactKey("parser", "Entry-Point") {
		t.Error("equivalent keys differ")
	}
	if NewFactKey("a b", "c").String() == NewFactKey("a", "b c").String() {
		t.Error("distinct keys share a string")
	}
}

// MemStrata §4.1: same key and object → duplicate; same key, different
// object → the newer supersedes, whatever the arrival order.
func TestResolve(t *testing.T) {
	k := NewFactKey("config", "max retries")
	old := Assertion{ID: 1, Key: k, Object: "3", ValidFrom: 10, RecordedAt: 10}
	cur := Assertion{ID: 2, Key: k, Object: "5", ValidFrom: 20, RecordedAt: 21}
	if Resolve(cur, old) != Supersedes || Resolve(old, cur) != SupersededBy {
		t.Errorf("Resolve(new, old) = %v, Resolve(old, new) = %v", Resolve(cur, old), Resolve(old, cur))
	}
	if Resolve(Assertion{ID: 3, Key: k, Object: " 3 "}, old) != Duplicate {
		t.Error("same object is not a duplicate")
	}
	if Resolve(Assertion{ID: 3, Key: NewFactKey("config", "timeout"), Object: "3"}, old) != Unrelated {
		t.Error("different keys are related")
	}
	if Resolve(Assertion{Object: "x"}, Assertion{Object: "y"}) != Unrelated {
		t.Error("keyless assertions are related")
	}
	// Ties on valid time fall to recorded time, then to id.
	a := Assertion{ID: 5, Key: k, Object: "a", ValidFrom: 1, RecordedAt: 2}
	b := Assertion{ID: 4, Key: k, Object: "b", ValidFrom: 1, RecordedAt: 3}
	if Resolve(b, a) != Supersedes {
		t.Error("later recorded time did not win a valid-time tie")
	}
	b.RecordedAt = 2
	if Resolve(a, b) != Supersedes {
		t.Error("larger id did not win a full tie")
	}
}
