// Package temporal is tidemark's domain model and its reference math.
//
// Everything here is float64 and scalar on purpose: this package is the
// specification that every fast path (the fused stage in package kernels,
// on the CPU: AVX2+FMA or generic Go; there is no GPU backend yet) is
// tested against. Each function's doc comment states its formula and cites
// the source document it comes from:
//
//   - SmartVector: memories as living objects — the source-authority priors
//     (Table 1), the four-signal score (§4), the ConfidenceEngine (§5), ripple
//     propagation (§6.3), the lifecycle (§3.3).
//   - Temporal RAG (the practitioner's article): validity states and document
//     kinds, per-type decay profiles with floors, the pool-normalised hybrid
//     reranker, the event relevance gate, the semantic penalty, confidence
//     tiers, reason codes, time-range parsing, query-dependent weights.
//   - All-Mem: the visible surface and archival without deletion.
//   - VDD (Volatility-Driven Decay): the drift detector and λ(t).
//   - MemStrata: the (subject, relation) → object supersession rule over a
//     bi-temporal ledger.
//
// # Time
//
// Times inside the scoring math are float64 days relative to an epoch chosen
// by the caller ([Days] converts). An open bound is ±Inf ([Open]), so every
// window test is a plain comparison. Valid time (when a fact is true in the
// world) and transaction time (when tidemark learned it and when it stopped
// believing it) are separate axes; a [Query] has a reference time on each.
//
// # Concurrency
//
// Every function is pure; the only stateful type, [DriftDetector], is not
// safe for concurrent use and says so.
package temporal
