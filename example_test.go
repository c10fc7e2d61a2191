package tidemark_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/temporal"
)

// A fact that changes: the newer value supersedes the older one, a
// search now sees only the current value, and a search as of a past time
// finds the version that held then.
func Example() {
	dir, err := os.MkdirTemp("", "tidemark-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := tidemark.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	facts, err := db.CreateCollection(ctx, "facts", &tidemark.CollectionOptions{Dim: 3})
	if err != nil {
		log.Fatal(err)
	}
	day := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	_, err = facts.Put(ctx, []tidemark.Memory{
		{ID: "limit-v1", Text: "The API rate limit is 100 requests per minute.", Vector: []float32{1, 0.1, 0},
			Kind: temporal.Versioned, Source: temporal.SourceTechDoc, ValidFrom: day("2025-01-01"),
			Subject: "api", Relation: "rate limit", Object: "100/min"},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := facts.Put(ctx, []tidemark.Memory{
		{ID: "limit-v2", Text: "The API rate limit is 250 requests per minute.", Vector: []float32{1, 0.12, 0},
			Kind: temporal.Versioned, Source: temporal.SourceTechDoc, ValidFrom: day("2025-06-01"),
			Subject: "API", Relation: "rate  limit", Object: "250/min"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res[0].ID, res[0].Outcome, "supersedes", res[0].Superseded)

	q := []float32{1, 0.1, 0}
	now, err := facts.Search(ctx, &tidemark.SearchRequest{Vector: q, K: 2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("now:", now.Hits[0].ID, "hits:", len(now.Hits))
	then, _ := facts.Search(ctx, &tidemark.SearchRequest{Vector: q, K: 2, AsOf: day("2025-03-01")})
	fmt.Println("as of 2025-03-01:", then.Hits[0].ID)

	old, _ := facts.Get(ctx, "limit-v1")
	fmt.Println(old.ID, "valid until", old.ValidTo.Format(time.DateOnly), "superseded by", old.SupersededBy, "visible:", old.Visible)
	// Output:
	// limit-v2 stored supersedes [limit-v1]
	// now: limit-v2 hits: 1
	// as of 2025-03-01: limit-v1
	// limit-v1 valid until 2025-06-01 superseded by limit-v2 visible: false
}

// Candidates from another vector store, with their metadata, ranked by
// tidemark: the expired promotion is removed with its reason, the
// authoritative current document outranks a closer chat message.
func ExampleRescore() {
	day := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	res, err := tidemark.Rescore(context.Background(), &tidemark.RescoreRequest{
		Now: day("2026-03-01"),
		Candidates: []tidemark.RescoreCandidate{
			{Sim: 0.91, HasSim: true, Memory: tidemark.Memory{ID: "promo", Kind: temporal.Event,
				ValidFrom: day("2025-11-01"), ValidTo: day("2025-12-01"), Source: temporal.SourceOfficialDB}},
			{Sim: 0.78, HasSim: true, Memory: tidemark.Memory{ID: "chat", Source: temporal.SourceChat,
				RecordedAt: day("2026-02-27")}},
			{Sim: 0.74, HasSim: true, Memory: tidemark.Memory{ID: "policy", Kind: temporal.Versioned, Profile: "policy",
				Source: temporal.SourcePolicy, ValidFrom: day("2026-02-20")}},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range res.Hits {
		fmt.Printf("%-6s score %.3f  sim %.2f  confidence %.3f\n", h.ID, h.Score, h.Signals.Sim, h.Confidence)
	}
	for _, r := range res.Removed {
		fmt.Println("removed", r.ID, r.Reason)
	}
	// Output:
	// policy score 0.689  sim 0.74  confidence 0.900
	// chat   score 0.656  sim 0.78  confidence 0.300
	// removed promo HARD_EXPIRED_EVENT
}

// Two phrasings of one question rescored over a shortlist in one batch:
// the expired promotion is removed for both, and each phrasing ranks the
// rest by its own similarities.
func ExampleRescoreMany() {
	day := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	res, err := tidemark.RescoreMany(context.Background(), &tidemark.RescoreRequest{
		Now: day("2026-03-01"),
		Candidates: []tidemark.RescoreCandidate{
			{Memory: tidemark.Memory{ID: "promo", Kind: temporal.Event, Vector: []float32{1, 0, 0},
				ValidFrom: day("2025-11-01"), ValidTo: day("2025-12-01")}},
			{Memory: tidemark.Memory{ID: "pricing", Vector: []float32{0.9, 0.4, 0}, RecordedAt: day("2026-02-27")}},
			{Memory: tidemark.Memory{ID: "refunds", Vector: []float32{0.2, 1, 0}, RecordedAt: day("2026-02-27")}},
		},
	}, [][]float32{{1, 0.2, 0}, {0.3, 1, 0}})
	if err != nil {
		log.Fatal(err)
	}
	for j, r := range res {
		fmt.Printf("phrasing %d:", j)
		for _, h := range r.Hits {
			fmt.Printf(" %s (sim %.2f)", h.ID, h.Cosine)
		}
		fmt.Println(" removed:", r.Removed[0].ID)
	}
	// Output:
	// phrasing 0: pricing (sim 0.98) refunds (sim 0.38) removed: promo
	// phrasing 1: refunds (sim 1.00) pricing (sim 0.65) removed: promo
}

// History lists every version of a fact, oldest first, with the window
// each was believed to hold.
func ExampleCollection_History() {
	dir, err := os.MkdirTemp("", "tidemark-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := tidemark.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	c, err := db.CreateCollection(ctx, "deps", &tidemark.CollectionOptions{Dim: 2})
	if err != nil {
		log.Fatal(err)
	}
	day := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	for i, v := range []string{"17.0", "18.2", "19.1"} {
		_, err := c.Put(ctx, []tidemark.Memory{{ID: "react-" + v, Text: "the app uses React " + v, Vector: []float32{1, float32(i)},
			Kind: temporal.Versioned, Subject: "app", Relation: "react version", Object: v,
			ValidFrom: day(fmt.Sprintf("202%d-01-01", 3+i))}})
		if err != nil {
			log.Fatal(err)
		}
	}
	versions, err := c.History(ctx, "react-18.2")
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range versions {
		to := "now"
		if !m.ValidTo.IsZero() {
			to = m.ValidTo.Format(time.DateOnly)
		}
		fmt.Printf("%s valid %s … %s, current: %v\n", m.ID, m.ValidFrom.Format(time.DateOnly), to, m.Visible)
	}
	// Output:
	// react-17.0 valid 2023-01-01 … 2024-01-01, current: false
	// react-18.2 valid 2024-01-01 … 2025-01-01, current: false
	// react-19.1 valid 2025-01-01 … now, current: true
}
