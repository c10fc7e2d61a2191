package temporal

import (
	"math"
	"testing"
	"time"
)

func TestAuthorityPriors(t *testing.T) {
	// SmartVector Table 1.
	want := map[string]float64{"official_db": 0.95, "policy": 0.90, "tech_doc": 0.85, "wiki": 0.75,
		"email": 0.50, "meeting": 0.45, "chat": 0.30, "unknown": 0.20}
	for name, prior := range want {
		s, err := ParseSource(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Authority() != prior || s.String() != name {
			t.Errorf("%s: authority %v name %q, want %v", name, s.Authority(), s.String(), prior)
		}
	}
	if s, err := ParseSource("Official-DB"); err != nil || s != SourceOfficialDB {
		t.Errorf("ParseSource(Official-DB) = %v, %v", s, err)
	}
	if s, err := ParseSource("slack"); err != nil || s != SourceChat {
		t.Errorf("ParseSource(slack) = %v, %v", s, err)
	}
	if _, err := ParseSource("rumour mill"); err == nil {
		t.Error("ParseSource accepted an unknown source")
	}
}

func TestTextRoundTrip(t *testing.T) {
	for k := Kind(0); k < numKinds; k++ {
		b, err := k.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Kind
		if err := back.UnmarshalText(b); err != nil || back != k {
			t.Errorf("kind %v round trip: %v %v", k, back, err)
		}
	}
	for s := Status(0); s < numStatuses; s++ {
		b, _ := s.MarshalText()
		var back Status
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Errorf("status %v round trip: %v %v", s, back, err)
		}
	}
	for r := Reason(0); r < numReasons; r++ {
		b, _ := r.MarshalText()
		var back Reason
		if err := back.UnmarshalText(b); err != nil || back != r {
			t.Errorf("reason %v round trip: %v %v", r, back, err)
		}
	}
	for _, m := range Methods() {
		b, _ := m.MarshalText()
		var back Method
		if err := back.UnmarshalText(b); err != nil || back != m {
			t.Errorf("method %v round trip: %v %v", m, back, err)
		}
	}
	if _, err := Kind(9).MarshalText(); err == nil {
		t.Error("invalid kind marshalled")
	}
	var k Kind
	if err := k.UnmarshalText([]byte("VERSIONED")); err != nil || k != Versioned {
		t.Errorf("case-insensitive kind: %v %v", k, err)
	}
	if err := k.UnmarshalText([]byte("eternal")); err == nil {
		t.Error("unknown kind accepted")
	}
}

func TestSets(t *testing.T) {
	var all KindSet
	if !all.Has(Event) || !all.Has(Static) {
		t.Error("zero KindSet must allow every kind")
	}
	s := KindsOf(Static, Event)
	if !s.Has(Static) || s.Has(Versioned) || !s.Has(Event) {
		t.Errorf("KindsOf(static, event) = %b", s)
	}
	ss := StatusesOf(Active)
	if !ss.Has(Active) || ss.Has(Dormant) {
		t.Errorf("StatusesOf(active) = %b", ss)
	}
}

// The article's validity_state: TEMPORAL only for an open EVENT; a versioned
// document with valid_from is still VALID; outside the window is EXPIRED.
func TestValidity(t *testing.T) {
	for _, c := range []struct {
		name string
		k    Kind
		w    Window
		at   float64
		want ValidityState
	}{
		{"no window", Static, Always, 0, Valid},
		{"no window event", Event, Always, 0, Valid},
		{"open event", Event, Window{-0.25, 1.75}, 0, Temporal},
		{"versioned with valid_from", Versioned, Window{-180, Open}, 0, Valid},
		{"expired versioned", Versioned, Window{-Open, -180}, 0, Expired},
		{"closed event", Event, Window{-3, -1}, 0, Expired},
		{"not yet valid", Static, Window{5, Open}, 0, Expired},
		{"half-open start", Versioned, Window{0, 10}, 0, Valid},
		{"half-open end", Versioned, Window{-10, 0}, 0, Expired},
		{"empty window at +Inf", Static, Window{Open, Open}, 0, Expired},
		{"empty window at -Inf", Event, Window{-Open, -Open}, 0, Expired},
		{"from equals to", Versioned, Window{5, 5}, 5, Expired},
	} {
		if got := Validity(c.k, c.w, c.at); got != c.want {
			t.Errorf("%s: Validity = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRecordedAndDays(t *testing.T) {
	if !Recorded(0, Open, 0) || Recorded(1, Open, 0) || Recorded(0, 5, 5) || !Recorded(0, 5, 4.99) {
		t.Error("Recorded is not rec ≤ tx < ret")
	}
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if d := Days(epoch, epoch.Add(36*time.Hour), 0); d != 1.5 {
		t.Errorf("Days = %v, want 1.5", d)
	}
	if d := Days(epoch, time.Time{}, Open); !math.IsInf(d, 1) {
		t.Errorf("zero time = %v, want +Inf", d)
	}
}
