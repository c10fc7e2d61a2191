package links

import (
	"errors"
	"strings"
	"testing"
)

// The defaults are the caps the graph used before the options idiom (4,
// unbounded, 1, 8, unbounded, unbounded at be9705b), and Validate names
// the field it refuses.
func TestOptionsWithDefaultsAndValidate(t *testing.T) {
	want := Options{CapSibling: 4, CapVersion: Unbounded, CapTemporal: 1, CapSemantic: 8, CapDepends: Unbounded, CapContradicts: Unbounded}
	if got := (*Options)(nil).WithDefaults(); got != want {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
	for _, c := range []struct {
		o     Options
		field string
	}{
		{Options{CapSibling: -2}, "Options.CapSibling"},
		{Options{CapContradicts: -5}, "Options.CapContradicts"},
	} {
		if err := c.o.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalid naming %s", c.o, err, c.field)
		}
	}
}
