package simd_test

import (
	"fmt"

	"github.com/tidemark/tidemark/simd"
)

func ExampleDot() {
	a := []float32{1, 2, 3, 4}
	b := []float32{4, 3, 2, 1}
	fmt.Println(simd.Dot(a, b))
	// Output: 20
}

func ExampleDotBatch() {
	// Three stored vectors of dimension 2, one row each.
	rows := []float32{
		1, 0,
		0, 1,
		3, 4,
	}
	q := []float32{2, 1}
	scores := make([]float32, 3)
	simd.DotBatch(rows, 2, q, scores)
	fmt.Println(scores)
	// Output: [2 1 10]
}

func ExampleNormalize() {
	x := []float32{3, 0, 4}
	norm := simd.Normalize(x)
	fmt.Println(norm, x)

	zero := []float32{0, 0}
	fmt.Println(simd.Normalize(zero), zero)
	// Output:
	// 5 [0.6 0 0.8]
	// 0 [0 0]
}

func ExampleAxpy() {
	// Move a centroid a quarter of the way towards a new member:
	// c += 0.25 * (m - c), written as two Axpy calls.
	c := []float32{0, 4}
	m := []float32{4, 0}
	simd.Axpy(-0.25, c, c)
	simd.Axpy(0.25, m, c)
	fmt.Println(c)
	// Output: [1 3]
}
