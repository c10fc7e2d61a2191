// Package simd provides the float32 vector primitives tidemark's CPU paths
// are built on: the dot product ([Dot]), the product of a row-major matrix
// with a vector ([DotBatch], for scoring a batch of stored vectors against
// a query), the product of a block of rows with many queries packed once
// ([Panels], [DotRows], for scoring many queries in one pass) and the
// filter of its results against per-query thresholds ([AboveLines]),
// squared Euclidean norms
// ([SquaredNorm], [SquaredNorms]), the update y += alpha*x ([Axpy], for
// centroids), in-place scaling ([Scale]) and normalization to unit length
// ([Normalize]).
//
// # Basics
//
// Every exported function checks the lengths of its arguments once and
// panics with a message naming them on a mismatch, in the manner of
// gonum's floats package; the inner kernels then run unchecked. The
// functions allocate nothing and write nothing outside the slice they
// document as their output.
//
// Results are computed in float32. Kernels sum in different orders (several
// independent accumulators, fused multiply-adds on the accelerated path),
// so two kernels may differ in the last bits of a result; callers should
// not compare results across machines for exact equality.
//
// # Dispatch
//
// The CPU is inspected once, when the package is initialised, with
// github.com/klauspost/cpuid/v2. On amd64 CPUs with AVX2 and FMA3 (and an
// OS that saves the AVX state) the kernels come from github.com/viterin/vek
// (vek32.Dot, vek32.MulNumber_Inplace, vek32.Add_Inplace); everywhere else
// portable Go kernels, unrolled by eight with independent accumulators, are
// used. [DotBatch] and [SquaredNorms] run the dot kernel over each row;
// vek's MatMul is not used, being much slower for a matrix-vector product.
// Vectors shorter than 32 elements always take the portable kernels, which
// are faster there than vek's scalar loop. [Path] names the kernels chosen
// ("avx2+fma (vek)" or "generic") and [CPUFeatures] what the CPU offers.
// The int8 kernels ([DotInt8], [DotInt8Rows]) are tidemark's own AVX2
// assembly on the same path; [DotInt8Rows] uses AVX-512 VNNI (VPDPBUSD on
// 256-bit registers) where the CPU has it. [DotRows], every row of a
// block against many packed queries, is register-blocked tiles in
// tidemark's own assembly (written by gen_panels.go): 6 rows × 64 queries
// on 512-bit registers where the CPU has AVX-512F (a compute-bound
// product, where the wider FMAs pay; a single-query scan is memory-bound
// and stays on AVX2), 6 × 16 on 256-bit AVX2 registers otherwise; and
// [AboveLines] compares sixteen queries per instruction on AVX-512, eight
// on AVX2.
//
// Building with the noasm tag (go build -tags noasm) leaves out vek and
// forces the portable kernels, which are also the reference the
// accelerated kernels are tested against.
//
// # Concurrency
//
// All functions are safe for concurrent use, as long as no goroutine
// writes a slice that another call is reading or writing (out, y, and x
// for [Scale] and [Normalize]).
//
// # Caveats
//
// vek keeps its own global switch, vek32.SetAcceleration, which is not
// safe for concurrent use; a program that turns it off makes the
// "avx2+fma (vek)" path run vek's plain Go loops instead.
package simd
