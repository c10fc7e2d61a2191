package index_test

import (
	"context"
	"fmt"

	"github.com/tidemark/tidemark/index"
)

// Build an index, search it, delete a key and search again.
func ExampleNew() {
	h, err := index.New(&index.Options{Dim: 3})
	if err != nil {
		panic(err)
	}
	vectors := map[uint64][]float32{
		1: {1, 0, 0},
		2: {0.9, 0.1, 0},
		3: {0, 1, 0},
		4: {0, 0, 1},
	}
	for key := uint64(1); key <= 4; key++ {
		if err := h.Insert(key, vectors[key]); err != nil {
			panic(err)
		}
	}
	res, _ := h.Search(context.Background(), []float32{1, 0.05, 0}, 2, nil)
	for _, r := range res {
		fmt.Printf("key %d score %.3f\n", r.Key, r.Score)
	}
	_ = h.Delete(1) // superseded: off the visible surface
	res, _ = h.Search(context.Background(), []float32{1, 0.05, 0}, 2, nil)
	fmt.Println("after delete:", res[0].Key, "then", res[1].Key, "; live:", h.Len())
	// Output:
	// key 1 score 0.999
	// key 2 score 0.998
	// after delete: 2 then 3 ; live: 3
}
