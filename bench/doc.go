// Package bench holds tidemark's benchmark workloads as libraries: each is
// a Config with documented defaults and a Run function returning a report
// that prints as a table or JSON. The CLI (tidemark bench …) only binds
// flags to a Config.
//
// Timings on shared machines are noisy, so every report gives min and
// median over repeats and states each speed as a ratio to a baseline
// measured in the same run — except the filter workload (RunFilter),
// whose measurement is recall and whose latencies are one run's medians
// beside the unfiltered search's: repeat the command for min and median.
//
// # Data
//
// The fused-stage workload (RunKernels) scans every row, so its cost does
// not depend on the vectors' values: it uses random unit vectors with
// varied metadata, and divides by the machine's limits measured in the
// same process (copy and read bandwidth, the FMA peak of internal/peak).
//
// The engine, service, scale and consolidation workloads (RunEngine,
// RunServe, RunScale, RunConsolidate) take their vectors from a
// [VectorSet], named by the --data flag
// (OpenVectorSet); each report names the set it used:
//
//   - Lifted real data (the default, DefaultData): GloVe-100, 100k real
//     word embeddings with 1,000 queries and their exact top 10
//     (../shared/data/glove100, read by LoadANN), lifted to the
//     benchmark's dimension (384, 768, 1536, …) by a fixed D×100 matrix
//     with orthonormal columns (NewLift: a Gaussian matrix from LiftSeed,
//     Gram–Schmidt twice in float64, stored as float32). Q preserves every
//     dot product, so neighbours, recall and the file's ground truth are
//     exactly GloVe's (up to float32 rounding), while each vector costs the
//     bytes and the dot-product work of a D-d embedding model's. Dimension
//     100 is GloVe itself. Any file set in the same format (a larger
//     conversion of the full 341k GloVe, say) can be given as the prefix.
//   - Synthetic clustered ("synthetic", NewSynthetic), for sizes past the
//     real data (1M): 10,000 cluster centres on the unit sphere of a 64-d
//     subspace, each point its centre plus a Gaussian offset of norm about
//     0.5, lifted to D the same way; deterministic by seed, each vector
//     made on demand. It is SYNTHETIC, and labelled so.
//   - Random Gaussian ("gaussian", NewGaussian): i.i.d. normal coordinates,
//     with no neighbourhood structure — the worst case for any graph index
//     and unlike any model's output. It is kept only as a labelled
//     worst-case row.
//
// Base vectors are made (read and lifted, or generated) a batch at a time
// when a workload needs them, so a benchmark never holds a second copy of
// what it loads into the engine: the peak resident set RunScale reports is
// the engine's plus the Go runtime's and the benchmark's small fixed state
// (a batch, the queries, their exact neighbours).
//
// # Scale
//
// RunScale (tidemark bench scale) is issue 16's benchmark contract: one
// JSON object (ScaleResult's fields) describing the engine at production
// shape — load through Put, snapshot size and read time, Open after
// Close, recall@10 against exact, search latency, peak RSS — beside a bare
// index.HNSW built and searched with the engine's options in the same run:
//
//	tidemark bench scale --dim 768 --n 100000 --data ../shared/data/glove100/glove100 --json
//	tidemark bench scale --dim 768 --n 1000000 --data synthetic --json
package bench
