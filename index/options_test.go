package index

import (
	"errors"
	"strings"
	"testing"
)

// The defaults are the values New used before the options idiom (16, 100,
// 64, 1024, 42 at be9705b).
func TestOptionsWithDefaultsKeepsOldValues(t *testing.T) {
	want := Options{Dim: 0, M: 16, EfConstruction: 100, Ef: 64, Capacity: 1024, Seed: 42}
	for name, o := range map[string]*Options{"nil": nil, "zero": {}} {
		if got := o.WithDefaults(); got != want {
			t.Errorf("%s: WithDefaults = %+v, want %+v", name, got, want)
		}
	}
	set := Options{Dim: 3, M: 4, EfConstruction: 5, Ef: 6, Capacity: 7, Seed: 8, Quantize: true}
	if got := set.WithDefaults(); got != set {
		t.Errorf("WithDefaults changed set fields: %+v", got)
	}
	if DefaultM != 16 || DefaultEfConstruction != 100 || DefaultEf != 64 || DefaultCapacity != 1024 || DefaultSeed != 42 {
		t.Error("the exported defaults changed")
	}
}

func TestNewNilOptions(t *testing.T) {
	// nil is the defaults, and Dim has none: an error naming it, no panic.
	h, err := New(nil)
	if h != nil || !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "Options.Dim") {
		t.Fatalf("New(nil) = %v, %v", h, err)
	}
	if err := (*Options)(nil).Validate(); !errors.Is(err, ErrOptions) {
		t.Fatalf("nil Validate = %v", err)
	}
	h, err = New(&Options{Dim: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Insert(1, []float32{1, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if h.m != DefaultM || h.efc != DefaultEfConstruction || h.ef != DefaultEf || h.seed != DefaultSeed {
		t.Fatalf("New(&Options{Dim: 3}) has m %d, efc %d, ef %d, seed %d", h.m, h.efc, h.ef, h.seed)
	}
}

func TestOptionsValidateNamesTheField(t *testing.T) {
	for _, c := range []struct {
		o     Options
		field string
	}{
		{Options{Dim: -1}, "Options.Dim"},
		{Options{Dim: MaxDim + 1}, "Options.Dim"},
		{Options{Dim: 4, M: 1}, "Options.M"},
		{Options{Dim: 4, M: MaxM + 1}, "Options.M"},
		{Options{Dim: 4, EfConstruction: -1}, "Options.EfConstruction"},
		{Options{Dim: 4, Ef: -3}, "Options.Ef"},
		{Options{Dim: 4, Capacity: -1}, "Options.Capacity"},
	} {
		before := c.o
		err := c.o.Validate()
		if c.o != before {
			t.Errorf("Validate changed %+v", before)
		}
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("Validate(%+v) = %v, want ErrOptions naming %s", c.o, err, c.field)
		}
	}
}
