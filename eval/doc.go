// Package eval is tidemark's evaluation contract (DESIGN "Evaluation
// contract (black box)"): the file formats every quality benchmark writes,
// strict readers for them, the metrics, a [Searcher] interface for what is
// evaluated, and [Memory], an in-memory reference implementation.
//
// # Basics
//
// A benchmark writes two JSON Lines files: a corpus, one [CorpusLine] per
// line in the order the memories were learnt, and queries, one [QueryLine]
// per line with the gold and stale ids. [ReadCorpus] and [ReadQueries]
// decode them strictly — unknown fields, repeated fields, wrong types,
// unknown kinds, sources and profiles, bad times, non-finite vectors and
// mismatched dimensions are errors naming the line and the field — and
// [Run] ingests the corpus into a [Searcher], times each query and
// summarises the answers in a [Report]:
//
//	corpus, _ := eval.ReadCorpus(cf)
//	queries, _ := eval.ReadQueries(qf)
//	mem, _ := eval.NewMemory(&eval.MemoryOptions{Method: temporal.MethodTidemark})
//	rep, err := eval.Run(ctx, mem, corpus, queries, "tidemark")
//
// The command line is "tidemark eval --corpus C --queries Q [--method M]
// [--json]". [ArticleDemo] converts the Temporal RAG article's demo into
// the contract; testdata/demo_corpus.jsonl and demo_queries.jsonl are its
// output.
//
// # Metrics
//
// Over N queries, with each query's top k: accuracy@1 (top-1 ∈ gold), MRR
// (1/rank of the first gold id in the top k), recall@k (|gold ∩ top k| /
// |gold|), stale rate (top-1 ∈ stale), ECE over 10 equal-width bins of the
// top-1 confidence, the same per query type (by_type) and per memory kind
// of the top-1 answer (by_kind: is the confidence shown with static,
// versioned and event answers calibrated?), and the nearest-rank p50 and
// p99 of the search latency. Each function documents its formula.
//
// # Caveats
//
//   - A query must give now; a corpus line without recorded_at is recorded
//     at [FileOrderTime] of its index (the Unix epoch plus one second per
//     line), so its age is measured from 1970 unless it has a valid_from.
//   - [Memory] folds exact duplicates and same-fact restatements into the
//     first row; searches answer with that row's id.
//   - Text without a vector is embedded with the hashing embedder; when the
//     corpus mixes given vectors and text, the two are not in one space.
//
// # Concurrency
//
// The readers, writers and metrics are pure; [Memory] is safe for
// concurrent use. [Run] issues its queries one at a time.
package eval
