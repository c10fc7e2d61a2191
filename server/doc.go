// Package server is tidemark's HTTP/JSON service (`tidemark serve`): the
// engine's collections, writes (upserts with an expected version),
// retraction and purge, listing and counting, metadata-filtered searches,
// rescoring, history, feedback, consolidation, audit and context assembly
// under /v1, behind bearer
// tokens scoped to collections, to reading or writing, and to /metrics.
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
// 403 forbidden or quota_exceeded, 404 not_found (an unknown route too),
// 405 method_not_allowed, 409 already_exists or conflict, 413 too_large, 429
// rate_limited (with Retry-After), 503 unavailable or
// embedder_unavailable (the collection's remote embedder failed; nothing
// was stored), 504 timeout, 500 internal for anything else. A refused
// request writes nothing; a server-side failure is logged in full and
// answered with a message that names no file or host.
//
// # Limits
//
// A request is authorised from its headers before its body is read, and a
// refusal that leaves the body unread closes the connection. HTTPServer
// and Listener bound what a client may hold: header, body, write and idle
// timeouts, connections in all and per client address; Serve shuts down
// within a grace. Request bodies are capped (Config.MaxBodyBytes) and
// decoded strictly (UTF-8 only, no unknown fields, no trailing data, no
// zero time for "absent"); answers are encoded whole before they are sent
// and capped (Config.MaxResponseBytes, MaxK); failed authentications are
// rate-limited per client address; collections are capped
// (Config.MaxCollections). Metrics carry no tenant data in their labels.
package server
