package tidemark_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/tidemark/tidemark"
	"github.com/tidemark/tidemark/embed"
)

// A collection whose embedder is a Go value (any embed.Embedder; here the
// hashing embedder with options of our choosing). Only its name, "custom",
// is stored: reopened, the collection needs the value again in
// Options.Embedders to embed text.
func ExampleCollectionOptions_textEmbedder() {
	dir, err := os.MkdirTemp("", "tidemark-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	emb, err := embed.NewHashing(&embed.HashingOptions{Dim: 256, CharNGramMax: 4})
	if err != nil {
		log.Fatal(err)
	}
	db, err := tidemark.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	notes, err := db.CreateCollection(ctx, "notes", &tidemark.CollectionOptions{Dim: 256, TextEmbedder: emb})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := notes.Put(ctx, []tidemark.Memory{
		{ID: "db", Text: "The billing service stores invoices in PostgreSQL."},
		{ID: "deploy", Text: "Deployments go out every Tuesday."},
	}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("embedder:", notes.Options().Embedder)
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}

	// Reopened without the value: text cannot be embedded.
	db, err = tidemark.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	notes, _ = db.Collection("notes")
	_, err = notes.Search(ctx, &tidemark.SearchRequest{Text: "where are invoices stored"})
	fmt.Println("without it:", errors.Is(err, tidemark.ErrEmbedder))
	db.Close()

	// Reopened with it.
	db, err = tidemark.Open(dir, &tidemark.Options{Embedders: map[string]embed.Embedder{"notes": emb}})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	notes, _ = db.Collection("notes")
	res, err := notes.Search(ctx, &tidemark.SearchRequest{Text: "where are invoices stored", K: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("with it:", res.Hits[0].ID)
	// Output:
	// embedder: custom
	// without it: true
	// with it: db
}
