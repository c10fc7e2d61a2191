package simd

// DotMany computes the dot product of every row of a block with every
// query: for the n = len(rows)/dim rows and m = len(qs)/dim queries (both
// row-major, dim columns) it sets
//
//	out[j*n+i] = Dot(rows[i*dim:(i+1)*dim], qs[j*dim:(j+1)*dim])
//
// query-major, so that each query's n similarities are contiguous. Nothing
// outside out is written.
//
// It is the many-queries case of [DotBatch]: there each row is read once
// per query, which bounds the speed by the cache's bandwidth; here, on the
// accelerated path, a tile of rows × queries is accumulated in registers —
// 3 rows × 8 queries in twenty-four 512-bit registers where the CPU has
// AVX-512F and VL, 3 × 4 in twelve 256-bit AVX2 registers otherwise — so
// each element loaded feeds three to eight fused multiply-adds and the
// speed is bound by the FMA units instead. (On the 2-core AMD EPYC we
// measure on, the AVX-512 tiles ran at 175–190 GFLOP/s per core against
// 100–109 for the AVX2 tiles and 43 for DotBatch: BenchmarkDotMany and
// BenchmarkDotManyAVX2Tiles, same run.) Callers get the most from it with
// a block of rows that fits in the L2 cache (package kernels uses 256
// KiB): every group of queries reads the whole block. The queries past
// the last group of four run as DotBatch.
//
// It panics if dim ≤ 0 while rows or qs is non-empty, if len(rows) or
// len(qs) is not a multiple of dim, or if len(out) != m*n.
func DotMany(rows, qs []float32, dim int, out []float32) {
	DotManyPrefetch(rows, qs, dim, out, nil)
}

// DotManyPrefetch is [DotMany] that also prefetches next — the block of
// rows the caller will pass to its next call — a few cache lines after
// each tile, so that a scan of many blocks reads memory at an even pace
// and finds each block in cache. next is touched only by prefetch hints,
// never read into a result; nil prefetches nothing, and the generic path
// ignores it.
func DotManyPrefetch(rows, qs []float32, dim int, out, next []float32) {
	if dim <= 0 {
		if len(rows) != 0 || len(qs) != 0 || len(out) != 0 {
			panic("simd: DotMany: dim must be positive")
		}
		return
	}
	if len(rows)%dim != 0 {
		panicLengths("DotMany", "len(rows)", len(rows), "a multiple of dim", dim)
	}
	if len(qs)%dim != 0 {
		panicLengths("DotMany", "len(qs)", len(qs), "a multiple of dim", dim)
	}
	n, m := len(rows)/dim, len(qs)/dim
	// n and m are each at most the length of a slice, but their product
	// may overflow: compare by division.
	if n != 0 && (len(out)%n != 0 || len(out)/n != m) || n == 0 && len(out) != 0 {
		panicLengths("DotMany", "len(out)", len(out), "rows·queries", n*m)
	}
	if n == 0 || m == 0 {
		return
	}
	if useAccel {
		dotManyAccel(rows, qs, dim, n, m, out, next)
		return
	}
	dotManyGeneric(rows, qs, dim, n, m, out)
}

// dotManyGeneric is DotMany's portable kernel: dotBatchGeneric once per
// query, which walks four rows per pass over the query.
func dotManyGeneric(rows, qs []float32, dim, n, m int, out []float32) {
	for j := 0; j < m; j++ {
		dotBatchGeneric(rows, dim, qs[j*dim:(j+1)*dim], out[j*n:(j+1)*n])
	}
}
