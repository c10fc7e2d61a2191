package embed

import (
	"testing"
	"time"
)

// The defaults are the values before the options idiom (at be9705b).
func TestOptionsWithDefaultsKeepsOldValues(t *testing.T) {
	if got, want := (*HashingOptions)(nil).WithDefaults(), (HashingOptions{Dim: 1024}); got != want {
		t.Errorf("nil HashingOptions: %+v, want %+v", got, want)
	}
	if got, want := (&HashingOptions{CharNGramMax: 5}).WithDefaults(), (HashingOptions{Dim: 1024, CharNGramMax: 5, CharNGramMin: 3, SubwordWeight: 1}); got != want {
		t.Errorf("n-grams: %+v, want %+v", got, want)
	}
	if got := (&HashingOptions{CharNGramMax: 2}).WithDefaults(); got.CharNGramMin != 2 {
		t.Errorf("CharNGramMin for CharNGramMax 2: %d", got.CharNGramMin)
	}
	for name, o := range map[string]*RemoteOptions{"nil": nil, "zero": {}} {
		d := o.WithDefaults()
		if d.API != APIOpenAI || d.BatchSize != 64 || d.Concurrency != 4 || d.Timeout != 30*time.Second || d.MaxRetries != 4 ||
			d.BackoffBase != 250*time.Millisecond || d.BackoffMax != 30*time.Second || d.MaxAnswerBytes != 64<<20 {
			t.Errorf("%s RemoteOptions: %+v", name, d)
		}
	}
	if d := (&RemoteOptions{MaxRetries: -3}).WithDefaults(); d.MaxRetries != -1 {
		t.Errorf("MaxRetries -3 → %d, want -1", d.MaxRetries)
	}
}
