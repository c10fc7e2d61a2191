package heldout

import (
	"context"
	"testing"
)

// Issue 22's Split sets (split/README.md): on multi-fact memories with one
// fact later updated, the stale rate must be 0 and the untouched fact
// still current; narrative texts split at most 1%. The held-out set
// final/ was measured once at commit d04fd55 (its rules frozen before):
// 195/220 memories split, stale 34/220 (15.5%: 25 memories the rules
// kept whole, 9 split whose sibling the update did not supersede —
// extract.Compare's misses, issue 14), the untouched fact current in
// 220/220, narratives split 1/260 (0.4%). The stale target is missed; the
// test holds every rate to what was measured, so that none regresses, and
// checks the targets that hold.
type splitBounds struct {
	set                           string
	minSplit, maxStale, minKept   int
	narratives, maxNarrativeSplit int
}

var splitSetBounds = []splitBounds{
	// dev/ (the rules were written against it): 59/60 split, stale 3/60.
	{set: "dev", minSplit: 59, maxStale: 3, minKept: 60, narratives: 60, maxNarrativeSplit: 0},
	{set: "final", minSplit: 195, maxStale: 34, minKept: 220, narratives: 260, maxNarrativeSplit: 1},
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
