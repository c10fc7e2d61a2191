// Package index is tidemark's approximate nearest-neighbour index over the
// visible surface of memories (the typed-link graph that keeps archived
// memories reachable from it is internal/links).
//
// # HNSW
//
// [HNSW] is a hierarchical navigable small world graph (Malkov & Yashunin,
// "Efficient and robust approximate nearest neighbor search using
// Hierarchical Navigable Small World graphs", 2016/2018) following
// hnswlib's algorithm: levels drawn with multiplier 1/ln M, greedy descent
// through the upper layers, a beam search of width ef at the bottom, and
// hnswlib's neighbour-selection heuristic (a candidate is kept only if it is
// closer to the new element than to every neighbour already kept). The
// metric is cosine similarity, computed as the dot product of vectors
// normalised at insert through package simd.
//
// Layout: the vectors live in one contiguous arena aligned to 64 bytes;
// nodes have uint32 internal ids and a key ↔ id map; layer 0 stores a
// fixed-size block of 2M neighbours per node, the upper layers M. The
// vectors, codes and layer-0 blocks are off-heap arrays (internal/offheap
// on Linux): they grow in place without copying, and the garbage collector
// neither scans them nor counts them in its heap goal. With
// [Options.SharedVectors] the index keeps a pointer to each caller's unit
// vector instead of a copy: the engine's indexes share its column store's
// vectors, so each lives once in memory.
//
// With [Options.Quantize] each node also keeps an int8 code of its vector
// (simd.QuantizeInt8, a quarter of the bytes, its scale on the same cache
// line) and a search walks the graph with code dots, a node's unvisited
// neighbours in one kernel call, then re-scores the best max(4k, 40) of
// its ef results in float32. Graph traversal is bound by memory latency, so
// reading a quarter of the bytes is what makes it faster: on GloVe-100 the
// walk takes about 0.7× the time of the float32 walk on the same graph at
// the same recall (0.66× in BenchmarkGloveSearch at ef 160, whose output
// is not kept; 0.59–0.74× in the tidemark bench ann runs of
// bench/results, ann-glove100-2026-11-22-int8-run15…17.json).
//
// The beam search at the bottom keeps its state in one array sorted by
// distance rather than hnswlib's two heaps (a candidate queue and the ef
// best): the candidates are the entries not yet expanded. It visits the
// same nodes in the same order and returns the same results (a test holds
// it to the heaps on every query), and a node admitted costs a branch-free
// binary search and one copy instead of two heap sifts with unpredictable
// branches. Filtered searches, and indexes where a quarter of the nodes
// are tombstones, keep the heaps (the array would hold every tombstone
// that routes).
//
// Deletes are tombstones: a deleted node still routes searches but is never
// returned, and [HNSW.Compact] repairs the neighbourhoods around deleted
// nodes and removes them, so deletes do not degrade recall over time.
//
// # Concurrency
//
// An HNSW is safe for concurrent use: inserts, deletes and searches may run
// from any number of goroutines. Each node's neighbour lists are written
// under that node's lock and read with atomic loads; growing the arrays and
// compaction take an exclusive lock for their duration.
//
// # Persistence
//
// [HNSW.Save] writes a flat, versioned file with a CRC-32C; [Load] reads it
// back without rebuilding the graph. [HNSW.SaveGraph] and [LoadGraph] do
// the same without the vectors, for a caller that keeps them (the
// engine's ledger does), and the int8 codes are never saved:
// [HNSW.Quantize] makes them again, or [LoadGraphQuantized] as it reads
// the graph and checks each vector. A truncated or corrupt file is an error
// wrapping [ErrCorrupt], never a panic.
package index
