// Package server is tidemark's HTTP/JSON service (`tidemark serve`): the
// engine's collections, writes, searches, rescoring, history, feedback,
// consolidation, audit and context assembly under /v1, behind bearer
// tokens scoped to collections and to reading or writing.
//
// # Errors
//
// Every error is a JSON object {"error": {"code": "…", "message": "…"}}
// with a status from one table (see errorStatus): 400 for bad input
// (malformed_json, unknown_field, invalid_argument, dimension_mismatch,
// not_finite), 401 unauthenticated, 403 forbidden, 404 not_found, 409
// already_exists, 413 too_large, 429 rate_limited, 503 unavailable or
// embedder_unavailable (the collection's remote embedder failed; nothing
// was stored), 504 timeout. A refused request writes nothing.
//
// # Limits
//
// Request bodies are capped (Config.MaxBodyBytes), every request has a
// deadline (Config.RequestTimeout), JSON is decoded strictly (unknown
// fields and trailing data are errors).
package server
