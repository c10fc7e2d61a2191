package tidemark_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/tidemark/tidemark"
)

// A memory that states two facts is split into one sibling per fact
// (CollectionOptions.Split, on by default for text collections), so that
// a later update supersedes only the fact it changes.
func ExampleSplitPolicy() {
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
	notes, err := db.CreateCollection(ctx, "notes", &tidemark.CollectionOptions{Dim: 256, Embedder: "hashing"})
	if err != nil {
		log.Fatal(err)
	}
	res, err := notes.Put(ctx, []tidemark.Memory{{ID: "ops-1",
		Text: "The API rate limit is 100 requests per minute and requests time out after 30 seconds."}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("split into", res[0].Split)
	res, err = notes.Put(ctx, []tidemark.Memory{{ID: "ops-2", Text: "The API rate limit is 250 requests per minute."}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ops-2 supersedes", res[0].Superseded)
	for _, q := range []string{"What is the API rate limit?", "When do requests time out?"} {
		r, err := notes.Search(ctx, &tidemark.SearchRequest{Text: q, K: 1})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s → %s: %s\n", q, r.Hits[0].ID, r.Hits[0].Memory.Text)
	}
	// Output:
	// split into [ops-1#1 ops-1#2]
	// ops-2 supersedes [ops-1#1]
	// What is the API rate limit? → ops-2: The API rate limit is 250 requests per minute.
	// When do requests time out? → ops-1#2: requests time out after 30 seconds.
}
