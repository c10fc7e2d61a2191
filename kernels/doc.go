// Package kernels is tidemark's fused scoring stage, independent of the
// hardware it runs on.
//
// For one query (or many) and a [Batch] of N candidates it computes, in one
// pass over each candidate's vector, the cosine similarity and every
// temporal signal of temporal.ScorePool — masks, decay with floors, validity
// and the event gate, live confidence, the relational bonus, the semantic
// penalty — and selects the top k. package temporal is the specification:
// every [Backend] is tested against temporal.ScorePool on random inputs.
//
// # Layout
//
// A [Batch] is a struct of arrays: the vectors row-major and contiguous
// (normalised at ingest, so the cosine is a dot product) plus one float32 or
// integer column per metadata field the formulas read. Times are float32
// days relative to an epoch the caller chooses; open bounds are ±Inf.
//
// # Backends
//
// [CPU] runs on every machine: it splits the batch into chunks across cores
// and computes dot products through package simd (AVX2+FMA when the CPU has
// it, generic Go otherwise or under the noasm build tag). Many queries
// ([Backend.ScoreMany]) share the scan: each core takes a cache-sized block
// of rows, computes its similarities to every query in one register-blocked
// pass (simd.DotRows over the queries packed once per call, which also
// prefetches the next block), and when the queries share one time context
// computes each row's temporal signals once for all of them — lazily, only
// for rows whose similarity bound could enter some query's top k — and
// finds the few (row, query) pairs that can enter a top k with one
// float32 comparison per sixteen queries (simd.AboveLines), checking those
// exactly. [Plain] is the naive baseline the benchmarks compare it with.
// Package cuda is the GPU backend behind the same [Backend] interface; it
// validates its input with [Prepare] and follows a batch's in-place writes
// through [Batch.Changed]. The shared test body (package backendtest) runs
// over [Backends], [Plain] and the cuda backend.
//
// # Rescoring
//
// [Rescore] is for candidates that came from another vector store
// ([RescoreMany]: many queries over the same candidates in one batched
// pass): hand over
// their vectors (or precomputed similarities) and metadata, get tidemark's
// ranking with the per-signal explanation of each result and the reason code
// of each removed candidate.
//
// # Concurrency
//
// A Batch is safe for concurrent reads; appending to it while a backend
// reads it is a data race. A CPU backend is safe for concurrent use: each
// call takes its scratch space from a pool.
package kernels
