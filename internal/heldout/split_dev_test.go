package heldout

import (
	"time"

	"context"
	"github.com/tidemark/tidemark"
	"testing"
)

func TestSplitDevTry(t *testing.T) {
	mf, nr, err := LoadSplitSet("split/dev")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunSplit(context.Background(), mf, nr)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rep.Outcomes {
		if !o.Split || o.Stale || !o.Fresh || !o.KeptCurrent {
			t.Logf("%s split=%v sib=%d fresh=%v stale=%v kept=%v keptcur=%v\n   %s\n   %s", o.Item.ID, o.Split, o.Siblings, o.Fresh, o.Stale, o.Kept, o.KeptCurrent, o.Item.Memory, o.Item.Update)
		}
	}
	t.Logf("memories %d split %d fresh %d stale %d kept %d keptcur %d; narratives %d split %d %v", rep.Memories, rep.Split, rep.Fresh, rep.Stale, rep.Kept, rep.KeptCurrent, rep.Narratives, rep.NarrativesSplit, rep.SplitNarratives)
}

func TestSplitDevOne(t *testing.T) {
	mf, _, err := LoadSplitSet("split/dev")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, tick, done, _ := openDB()
	defer done()
	for _, item := range mf {
		if item.ID != "mf-060" && item.ID != "mf-048" {
			continue
		}
		c, _ := db.CreateCollection(ctx, item.ID, &tidemark.CollectionOptions{Dim: 256, Embedder: "hashing"})
		tick(24 * time.Hour)
		res, _ := c.Put(ctx, []tidemark.Memory{{ID: "memory", Text: item.Memory}})
		t.Logf("%+v", res)
		tick(24 * time.Hour)
		res, _ = c.Put(ctx, []tidemark.Memory{{ID: "update", Text: item.Update}})
		t.Logf("%+v", res)
		for _, q := range []string{item.QueryUpdated, item.QueryKept} {
			hits, _ := c.Search(ctx, &tidemark.SearchRequest{Text: q, K: 10})
			for _, h := range hits.Hits {
				t.Logf("%s | %s %.3f %.3f %q key=%q/%q", q, h.ID, h.Score, h.Cosine, h.Memory.Text, h.Memory.Subject, h.Memory.Relation)
			}
		}
	}
}
