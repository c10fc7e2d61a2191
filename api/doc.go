// Package api is the wire contract of tidemark's HTTP/JSON service: every
// request and response body that package server encodes or decodes and
// package client sends or receives, the error body and its codes.
//
// It depends on the standard library and on package temporal (a leaf
// package of the standard library only) for the enumerations the engine
// and the wire share — kinds, sources, statuses, removal reasons,
// validity states. It never imports the engine, so a client
// binary links neither the engine nor its indexes, kernels or metrics.
//
// The JSON of these types is the service's protocol, described by the
// OpenAPI document the server serves at /v1/openapi.json: field names and
// shapes change only with that document; every field name is snake_case.
// Times are written as RFC 3339 and read as RFC 3339 or as YYYY-MM-DD
// dates (Time); a nil pointer or an empty value tagged omitempty/omitzero
// is absent. The
// server converts between these types and the engine's (package server,
// next to its handlers).
package api
