//go:build !noasm && amd64

package simd

import (
	"math/rand/v2"
	"testing"
)

// Both int8 row kernels, VNNI (where the CPU has it) and AVX2, equal the
// generic loop, over the whole int8 range (−128 included: the VNNI
// kernel's unsigned bias wraps) and at the longest strides, whose sums
// wrap the kernel's lanes.
func TestDotInt8RowsKernels(t *testing.T) {
	if !haveAccel {
		t.Skip("no AVX2 here")
	}
	r := rand.New(rand.NewPCG(29, 3))
	prevVNNI, prevAccel := useVNNI, useAccel
	defer func() { useVNNI, useAccel = prevVNNI, prevAccel }()
	useAccel = true
	kernels := []bool{false}
	if haveVNNI {
		kernels = append(kernels, true)
	} else {
		t.Log("no AVX-512 VNNI here: the AVX2 kernel only")
	}
	for _, vnni := range kernels {
		useVNNI = vnni
		for _, stride := range []int{32, 64, 96, 800, 4096, MaxInt8Len &^ 31} {
			const nrows = 6
			rows, q := randInt8(r, nrows*stride), randInt8(r, stride)
			if stride > 4096 {
				// The extremes: every product 128·127 (sum near the int32
				// bound) and −128·−128.
				for i := range q {
					q[i], rows[i], rows[stride+i] = -128, 127, -128
				}
			}
			ids := []uint32{5, 0, 1, 1, 3}
			out := make([]int32, len(ids))
			DotInt8Rows(q, rows, ids, out)
			for i, id := range ids {
				if want := dotInt8Generic(q, rows[int(id)*stride:int(id+1)*stride]); out[i] != want {
					t.Fatalf("vnni %v stride %d row %d: %d, want %d", vnni, stride, id, out[i], want)
				}
			}
		}
	}
}

// BenchmarkDotInt8Rows is one expansion of a 768-d walk: 32 neighbours'
// codes (stride 800, as index.HNSW lays them out), warm in cache, by each
// kernel.
func BenchmarkDotInt8Rows(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const stride, nrows = 800, 4096
	rows := make([]int8, nrows*stride)
	for i := range rows {
		rows[i] = int8(r.IntN(255) - 127)
	}
	q := rows[:stride]
	ids := make([]uint32, 32)
	for i := range ids {
		ids[i] = uint32(r.IntN(64))
	}
	out := make([]int32, len(ids))
	prev := useVNNI
	defer func() { useVNNI = prev }()
	for _, vnni := range []bool{false, true} {
		if vnni && !haveVNNI {
			continue
		}
		name := "avx2"
		if vnni {
			name = "vnni"
		}
		b.Run(name, func(b *testing.B) {
			useVNNI = vnni
			for b.Loop() {
				DotInt8Rows(q, rows, ids, out)
			}
		})
	}
}
