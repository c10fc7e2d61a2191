package temporal

import "testing"

// The defaults are the values before the options idiom (at be9705b).
func TestDriftOptionsWithDefaultsKeepsOldValues(t *testing.T) {
	want := DriftOptions{RecentWindow: 5, ArchiveWindow: 200, LambdaBase: 0.2, LambdaMax: 0.9, K: 10, BurnIn: 50,
		FallbackV0: 0.1, PeerAlpha: 0.1, PeerThreshold: 0.3, PeerSpike: 0.8}
	for name, o := range map[string]*DriftOptions{"nil": nil, "zero": {}} {
		if got := o.WithDefaults(); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	if DefaultDrift() != want {
		t.Errorf("DefaultDrift() = %+v", DefaultDrift())
	}
	set := DriftOptions{RecentWindow: 1, ArchiveWindow: 2, LambdaBase: 0.3, LambdaMax: 0.4, K: 5, V0: 0.2, BurnIn: 3,
		FallbackV0: 0.5, Smoothing: SmoothingPeer, PeerAlpha: 0.6, PeerThreshold: 0.7, PeerSpike: 0.9}
	if got := set.WithDefaults(); got != set {
		t.Errorf("set fields changed: %+v", got)
	}
}
