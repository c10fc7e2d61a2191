// Package links is the typed-link graph of a collection: All-Mem's link
// topology (version, sibling, temporal, semantic) with SmartVector's
// dependency and contradiction edges, over memory keys that may be
// visible or archived.
//
// The engine derives its graph from its ledger — the rows' supersessions,
// dependencies and contradictions — and rebuilds it on load; it is not
// persisted. The package is split three ways: graph.go holds the nodes,
// the typed edges with their caps and the neighbour lists; expand.go the
// budgeted expansion and the no-orphan checks; codec.go a checked binary
// encoding on internal/wire, for tests and tools.
//
// [Graph] holds the typed links of All-Mem (version, sibling, temporal,
// semantic) and SmartVector (depends_on, depended_by, contradicts) between
// memories, visible or archived, with the deterministic degree caps of
// All-Mem Appendix B, budgeted hop-bounded expansion, and the no-orphan
// check.
package links
