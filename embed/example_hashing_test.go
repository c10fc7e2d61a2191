package embed_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tidemark/tidemark/embed"
)

func ExampleNewHashing() {
	h, err := embed.NewHashing(nil) // defaults: 1024 dims, 1-2-grams, sublinear tf
	if err != nil {
		log.Fatal(err)
	}
	texts := []string{
		"The cat sat on the mat.",
		"A cat was sitting on the mat.",
		"Stock markets fell sharply on Monday.",
	}
	// Optional: learn IDF weights so that common words count for less.
	if err := h.Fit(texts); err != nil {
		log.Fatal(err)
	}
	vecs, err := h.Embed(context.Background(), texts)
	if err != nil {
		log.Fatal(err)
	}
	// The vectors have unit length (or are zero for a text without
	// words), so the dot product is the cosine. "on" is shared by the
	// first and last sentence, hence their small positive similarity.
	cos := func(a, b []float32) float64 {
		var s float64
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	fmt.Printf("dim %d\n", h.Dim())
	fmt.Printf("cat/cat:   %.2f\n", cos(vecs[0], vecs[1]))
	fmt.Printf("cat/stock: %.2f\n", cos(vecs[0], vecs[2]))
	fmt.Printf("self:      %.2f\n", cos(vecs[2], vecs[2]))
	// Output:
	// dim 1024
	// cat/cat:   0.39
	// cat/stock: 0.04
	// self:      1.00
}
