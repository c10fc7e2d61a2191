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
