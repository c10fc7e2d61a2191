package store

import "testing"

// The defaults are the values before the options idiom (at be9705b).
func TestOptionsWithDefaultsKeepsOldValues(t *testing.T) {
	for name, o := range map[string]*Options{"nil": nil, "zero": {}} {
		d := o.WithDefaults()
		if d.SegmentSize != 64<<20 || d.MaxRecordSize != 64<<20 || d.MaxGroupBytes != 16<<20 || d.writeBufferSize != 1<<20 ||
			d.NoSync || d.Recovery != RecoverStrict {
			t.Errorf("%s: %+v", name, d)
		}
	}
}
