package heldout

import (
	"context"
	"testing"
)

// Issue 22's Split sets (split/README.md): on multi-fact memories with one
// fact later updated, the stale rate must be 0 and the untouched fact
// still current; narrative texts split at most 1%. The held-out set of
// the first round (now dev2/) was measured once at d04fd55: split
// 195/220, stale 34/220, untouched fact current 220/220, narratives split
// 1/260. The rules were then tuned on dev/ and dev2/, and the held-out set
// of the second round, final2/, measured once at 3157122: split 199/220,
// stale 29/220 (13.2%), the untouched fact current in 220/220, narratives
// split 1/260. It then became dev3/ for split on update, and the third
// round's held-out set, final3/, was measured once (below). The stale
// target is missed; the test holds every rate to what was measured, so
// that none regresses, and checks the targets that hold.
type splitBounds struct {
	set                           string
	minSplit, maxStale, minKept   int
	narratives, maxNarrativeSplit int
}

var splitSetBounds = []splitBounds{
	{set: "dev", minSplit: 58, maxStale: 2, minKept: 60, narratives: 60, maxNarrativeSplit: 0},
	{set: "dev2", minSplit: 210, maxStale: 15, minKept: 220, narratives: 260, maxNarrativeSplit: 0},
	// dev3/ was the second round's held-out set (final2/, measured once at
	// 3157122 as above), then given to development for split on update.
	{set: "dev3", minSplit: 199, maxStale: 13, minKept: 220, narratives: 260, maxNarrativeSplit: 1},
	// final3/, the third round's held-out set, measured once at 8785cb7
	// (split on update added): split 204/220, stale 21/220 (9.5%: 12 split
	// at Put whose update extract.Compare did not recognise, 9 kept whole
	// and not split on update either), the untouched fact current in
	// 220/220, narratives split 1/260 (0.4%).
	{set: "final3", minSplit: 204, maxStale: 21, minKept: 220, narratives: 260, maxNarrativeSplit: 1},
}

func TestSplitSets(t *testing.T) {
	for _, b := range splitSetBounds {
		mf, nr, err := LoadSplitSet("split/" + b.set)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := RunSplit(context.Background(), mf, nr)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d memories, split %d, fresh@1 %d, stale %d, kept@1 %d, kept current %d; narratives %d, split %d %v",
			b.set, rep.Memories, rep.Split, rep.Fresh, rep.Stale, rep.Kept, rep.KeptCurrent, rep.Narratives, rep.NarrativesSplit, rep.SplitNarratives)
		if testing.Verbose() {
			for _, o := range rep.Outcomes {
				if o.Stale || !o.KeptCurrent {
					t.Logf("  %s split %v stale %v kept %v | %s | %s", o.Item.ID, o.Split, o.Stale, o.KeptCurrent, o.Item.Memory, o.Item.Update)
				}
			}
		}
		switch {
		case rep.Split < b.minSplit:
			t.Errorf("%s: %d memories split, measured %d", b.set, rep.Split, b.minSplit)
		case rep.Stale > b.maxStale:
			t.Errorf("%s: stale in %d, measured %d", b.set, rep.Stale, b.maxStale)
		case rep.KeptCurrent < b.minKept:
			t.Errorf("%s: the untouched fact current in %d, measured %d", b.set, rep.KeptCurrent, b.minKept)
		case rep.Narratives != b.narratives || rep.NarrativesSplit > b.maxNarrativeSplit || Ratio(rep.NarrativesSplit, rep.Narratives) > 0.01:
			t.Errorf("%s: %d of %d narratives split, measured %d (target ≤ 1%%)", b.set, rep.NarrativesSplit, rep.Narratives, b.maxNarrativeSplit)
		}
		if rep.Stale > 0 {
			t.Logf("%s: stale %d/%d: the issue's target (0) is missed (known; see split/README.md)", b.set, rep.Stale, rep.Memories)
		}
	}
}
