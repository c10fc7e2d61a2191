package tidemark

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tidemark/tidemark/temporal"
)

// The conflicting-sources example of SmartVector §8: an authoritative wiki
// page and a chat rumour about the same fact; the block annotates both,
// flags the conflict, and stays within its budget.
func TestAssembleContextConflict(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 4, 20, 0, 0, 0, 0, time.UTC)
	db := openTest(t, t.TempDir(), &Options{Clock: func() time.Time { return clock }})
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 4, Method: temporal.MethodSmartVector, Keys: KeysExplicit})
	if _, err := c.Put(ctx, []Memory{
		{ID: "wiki-sky", Text: "Section 1: The sky-color calibration uses a yellow baseline for atmospheric modelling.", Vector: []float32{1, 0.3, 0, 0},
			Source: temporal.SourceWiki, DocID: "sky-wiki", Version: 2, Created: time.Date(2026, 4, 17, 0, 0, 0, 0, time.UTC),
			Subject: "sky calibration", Relation: "baseline", Object: "yellow", Positive: 4, Access: 5},
	}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	if _, err := c.Put(ctx, []Memory{
		{ID: "slack-sky", Text: "I heard the sky calibration is switching to a blue baseline next quarter.", Vector: []float32{1, 0.5, 0, 0},
			Source: temporal.SourceChat, Created: time.Date(2026, 4, 12, 0, 0, 0, 0, time.UTC), ValidFrom: time.Date(2026, 4, 12, 0, 0, 0, 0, time.UTC),
			Subject: "sky calibration", Relation: "baseline", Object: "blue"},
	}); err != nil {
		t.Fatal(err)
	}
	// The rumour is older in valid time, so the wiki page stays current and
	// the rumour goes to the archive; a method without masks still
	// retrieves both, and the block must flag them.
	blk, err := c.AssembleContext(ctx, &SearchRequest{Vector: []float32{1, 0.4, 0, 0}, K: 5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := blk.Text()
	t.Log("\n" + text)
	if len(blk.Documents) != 1 || blk.Deduplicated != 1 {
		t.Fatalf("two versions of one fact in the block: %d documents, %d deduplicated", len(blk.Documents), blk.Deduplicated)
	}
	if !strings.Contains(text, "[wiki-sky]") || !strings.Contains(text, "Source: wiki | Version: sky-wiki v2") ||
		!strings.Contains(text, "Feedback: +4/-0") || !strings.Contains(text, "FINAL: ") {
		t.Fatalf("block:\n%s", text)
	}
	// Two sources without a fact key that disagree on a number: the
	// consolidation run flags the topic conflict and the block shows it.
	if _, err := c.Put(ctx, []Memory{
		{ID: "wiki-cal", Text: "Sensors are recalibrated every 3 months against the yellow sky baseline.", Vector: []float32{1, 0.4, 0.1, 0},
			Source: temporal.SourceWiki, Created: time.Date(2026, 4, 17, 0, 0, 0, 0, time.UTC), Positive: 4, Access: 5},
		{ID: "email-cal", Text: "Sensors are recalibrated every 6 months against the yellow sky baseline.", Vector: []float32{1, 0.42, 0.1, 0},
			Source: temporal.SourceEmail, Created: time.Date(2026, 4, 19, 0, 0, 0, 0, time.UTC)},
	}); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Consolidate(ctx, nil); err != nil || r.Contradictions == 0 {
		t.Fatalf("consolidation found no conflict: %+v %v", r, err)
	}
	blk, err = c.AssembleContext(ctx, &SearchRequest{Vector: []float32{1, 0.4, 0, 0}, K: 5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	text = blk.Text()
	t.Log("\n" + text)
	if len(blk.Documents) < 2 || len(blk.Warnings) == 0 || !strings.Contains(text, "CONFLICTS WITH DOC") || !strings.Contains(blk.Warnings[0], "CONFLICT") {
		t.Fatalf("block:\n%s", text)
	}
	if blk.Tokens > blk.Budget || blk.Tokens < estimateTokens(text)-5 || blk.Tokens > estimateTokens(text)+5 {
		t.Fatalf("tokens %d, budget %d, text estimate %d", blk.Tokens, blk.Budget, estimateTokens(text))
	}
	if _, err := json.Marshal(blk); err != nil {
		t.Fatal(err)
	}
	// A small budget keeps the best documents and omits the rest.
	small, err := c.AssembleContext(ctx, &SearchRequest{Vector: []float32{1, 0.4, 0, 0}, K: 5}, &ContextOptions{TokenBudget: blk.Tokens - 10})
	if err != nil || len(small.Documents) != len(blk.Documents)-1 || small.Omitted != 1 || small.Tokens > small.Budget {
		t.Fatalf("small budget: %+v %v", small, err)
	}
}
