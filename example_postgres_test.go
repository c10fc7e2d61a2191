package tidemark_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/tidemark/tidemark"
)

// Two nodes of one PostgreSQL database: a memory written through one is
// read through the other once that node has applied the write's change
// (WaitApplied with the writer's Seq). Run it with TIDEMARK_PG_URL set to
// a database tidemark may create its tables in.
func ExampleOpenPostgres() {
	ctx := context.Background()
	url := os.Getenv("TIDEMARK_PG_URL")
	a, err := tidemark.OpenPostgres(ctx, url, "", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b, err := tidemark.OpenPostgres(ctx, url, "", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	notes, err := a.CreateCollection(ctx, "notes", &tidemark.CollectionOptions{Dim: 3})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := notes.Put(ctx, []tidemark.Memory{{ID: "n1", Text: "written on A", Vector: []float32{1, 0, 0}}}); err != nil {
		log.Fatal(err)
	}
	if err := b.WaitApplied(ctx, a.Seq()); err != nil { // read-your-writes on B
		log.Fatal(err)
	}
	onB, err := b.Collection("notes")
	if err != nil {
		log.Fatal(err)
	}
	m, err := onB.Get(ctx, "n1")
	fmt.Println(m.Text, err, b.Replication().Behind)
}
