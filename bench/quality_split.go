package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tidemark/tidemark/internal/heldout"
)

// SplitRow is the Split benchmark on one set of internal/heldout/split
// (issue 22; All-Mem's Split): multi-fact memories written as plain text,
// one fact of each updated a day later, then a consolidation run; and
// narrative texts that must stay whole. Rates are of the set's memories
// (narratives).
type SplitRow struct {
	Set       string `json:"set"`
	Memories  int    `json:"memories"`
	Narrative int    `json:"narratives"`
	// Split: memories split at Put. Fresh: the first answer to a question
	// about the updated fact holds its new value. Stale: an answer to it
	// (any current memory returned) states the old value — a superseded
	// fact served. Kept: the first answer about an untouched fact holds
	// its value; KeptCurrent: a current memory still states it.
	Split, Fresh, Stale, Kept, KeptCurrent float64
	// NarrativeSplit: narrative texts split (must be ≤ 1%).
	NarrativeSplit float64 `json:"narrative_split"`
}

// SplitReport is the Split benchmark over the sets found.
type SplitReport struct {
	Rows []SplitRow `json:"rows"`
}

// splitSets are the sets the benchmark measures, when present under
// QualityConfig.SplitData: the development sets the rules were written
// against (dev2 and dev3 were earlier rounds' held-out sets) and the
// held-out set written apart from them.
var splitSets = []string{"dev", "dev2", "dev3", "final3"}

// split measures the Split sets.
func (q *qualityRun) split(ctx context.Context) (SplitReport, string, error) {
	var rep SplitReport
	for _, name := range splitSets {
		dir := filepath.Join(q.cfg.SplitData, name)
		if _, err := os.Stat(filepath.Join(dir, "multifact.jsonl")); err != nil {
			continue
		}
		mf, nr, err := heldout.LoadSplitSet(dir)
		if err != nil {
			return rep, "", err
		}
		r, err := heldout.RunSplit(ctx, mf, nr)
		if err != nil {
			return rep, "", err
		}
		n, m := r.Memories, r.Narratives
		rep.Rows = append(rep.Rows, SplitRow{Set: name, Memories: n, Narrative: m,
			Split: heldout.Ratio(r.Split, n), Fresh: heldout.Ratio(r.Fresh, n), Stale: heldout.Ratio(r.Stale, n),
			Kept: heldout.Ratio(r.Kept, n), KeptCurrent: heldout.Ratio(r.KeptCurrent, n), NarrativeSplit: heldout.Ratio(r.NarrativesSplit, m)})
	}
	if len(rep.Rows) == 0 {
		return rep, fmt.Sprintf("split skipped: no sets under %s", q.cfg.SplitData), nil
	}
	return rep, "", nil
}

func (s *SplitReport) markdown(b *mdWriter) {
	b.printf("## Split: multi-fact memories, one fact updated (All-Mem Split; issue 22)\n\n")
	b.printf("Each memory written as plain text (default collection: keys at ingest, split, offline embedder), one of its facts restated with a new value a day later, one consolidation run. " +
		"Fresh: top-1 answer about the updated fact holds the new value; stale: any current answer states the old value; kept: top-1 / any current answer holds the untouched fact. " +
		"Sets written apart from the code (internal/heldout/split/*/README.md); dev, dev2 and dev3 were used to write the rules (dev2 and dev3 were held out once each), final3 is held out.\n\n")
	b.header("set", "memories", "split", "fresh@1", "stale", "kept@1", "kept current", "narratives", "narratives split")
	for _, r := range s.Rows {
		b.row(r.Set, fmt.Sprint(r.Memories), pct(r.Split), pct(r.Fresh), pct(r.Stale), pct(r.Kept), pct(r.KeptCurrent), fmt.Sprint(r.Narrative), pct(r.NarrativeSplit))
	}
	b.printf("\n")
}
