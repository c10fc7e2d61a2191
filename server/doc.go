// Package server is tidemark's HTTP/JSON service (`tidemark serve`): the
// engine's collections, writes, searches, rescoring, history, feedback,
// consolidation, audit and context assembly under /v1, behind bearer
// tokens scoped to collections and to reading or writing.
//
// The request and response bodies are the types of package api, the wire
// contract the Go client (package client) shares without linking the
// engine; the handlers, one file per resource, convert them to and from
// the engine's types, and routes.go lists every route.
//
// # Errors
//
// Every error is a JSON object {"error": {"code": "…", "message": "…"}}
// with a status from one table (see errorStatus; the codes are package
// api's Code constants): 400 for bad input (malformed_json, unknown_field,
// invalid_argument, dimension_mismatch, not_finite), 401 unauthenticated,
// 403 forbidden, 404 not_found, 409 already_exists, 413 too_large, 429
// rate_limited, 503 unavailable or embedder_unavailable (the collection's
// remote embedder failed; nothing was stored), 504 timeout, 500 internal
// for anything else. A refused request writes nothing.
//
// # Limits
//
// Request bodies are capped (Config.MaxBodyBytes), every request has a
// deadline (Config.RequestTimeout), JSON is decoded strictly (unknown
// fields and trailing data are errors).
package server
