package api

// ErrorBody is every error answer: {"error": {"code": "…", "message": "…"}}.
// The HTTP status and the code come from one table in package server.
type ErrorBody struct {
	// Error is the error's code and message.
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inner object of an ErrorBody.
type ErrorDetail struct {
	// Code is machine-readable: one of the Code constants.
	Code string `json:"code"`
	// Message is for people; its text is not part of the contract.
	Message string `json:"message"`
}

// The error codes, with the HTTP status the server answers them with.
const (
	// CodeMalformedJSON (400): the body is not one JSON value (empty,
	// truncated, trailing data), or not UTF-8 (or escapes a lone
	// surrogate): it is refused, never repaired.
	CodeMalformedJSON = "malformed_json"
	// CodeUnknownField (400): the body names a field the request does not
	// have (decoding is strict).
	CodeUnknownField = "unknown_field"
	// CodeInvalidArgument (400): a value of the wrong JSON type, or one
	// the engine refuses (an empty id, k out of range, an unknown method,
	// plan or enumeration value, a time that is not RFC 3339 or is the
	// zero time, non-finite or absurd weights, …).
	CodeInvalidArgument = "invalid_argument"
	// CodeDimensionMismatch (400): a vector whose length is not the
	// collection's dimension.
	CodeDimensionMismatch = "dimension_mismatch"
	// CodeNotFinite (400): a NaN, an infinity or a zero vector.
	CodeNotFinite = "not_finite"
	// CodeUnauthenticated (401): no bearer token, or an unknown one.
	CodeUnauthenticated = "unauthenticated"
	// CodeForbidden (403): the token may not read or write this
	// collection, or may not configure a remote embedder.
	CodeForbidden = "forbidden"
	// CodeNotFound (404): an unknown collection, memory or fact, or a
	// path no route takes.
	CodeNotFound = "not_found"
	// CodeMethodNotAllowed (405): a method the path does not take (the
	// Allow header lists those it does).
	CodeMethodNotAllowed = "method_not_allowed"
	// CodeQuotaExceeded (403): creating a collection past the server's
	// limit on collections.
	CodeQuotaExceeded = "quota_exceeded"
	// CodeAlreadyExists (409): a collection name that is taken, or a
	// memory id written before with other content.
	CodeAlreadyExists = "already_exists"
	// CodeConflict (409): a write's precondition failed: the memory is
	// not at the version the writer expected (if_version).
	CodeConflict = "conflict"
	// CodeTooLarge (413): a body, batch, text or vector past its limit, or
	// an answer that would be past the server's response limit.
	CodeTooLarge = "too_large"
	// CodeRateLimited (429): the token is over its request rate, the
	// client address over its rate of failed authentications, or feedback
	// is over the collection's limits for a memory. Retry-After says when
	// to try again (not for feedback).
	CodeRateLimited = "rate_limited"
	// CodeUnavailable (503): the database is closed or has failed (or, from
	// /readyz, its checkpoints are failing).
	CodeUnavailable = "unavailable"
	// CodeEmbedderUnavailable (503): the collection's remote embedder
	// failed; nothing was stored.
	CodeEmbedderUnavailable = "embedder_unavailable"
	// CodeTimeout (504): the request ran past the server's deadline.
	CodeTimeout = "timeout"
	// CodeInternal (500): anything else.
	CodeInternal = "internal"
)

// Health is the answer of GET /healthz ({"status": "ok"}) and of GET
// /readyz when the database is ready ({"status": "ready"}).
type Health struct {
	// Status is "ok" or "ready".
	Status string `json:"status"`
	// Replication, on /readyz, says how far this node is behind its
	// store's log.
	Replication *Replication `json:"replication,omitempty"`
}

// Replication is how far a node is behind the log of its store: the
// embedded one, or a PostgreSQL database shared by several nodes.
type Replication struct {
	// Store is "embedded" or "postgres".
	Store string `json:"store"`
	// Applied is the last change this node applied, Head the newest one
	// committed that it has seen, Behind their difference.
	Applied uint64 `json:"applied"`
	Head    uint64 `json:"head"`
	Behind  uint64 `json:"behind"`
	// Reachable says whether the node's last read of the database
	// succeeded (always true for the embedded store); StaleSeconds is the
	// time since the node last read it (0 for the embedded store). While
	// the database is out of reach, searches answer from the state last
	// applied and writes fail with 503.
	Reachable    bool    `json:"reachable"`
	StaleSeconds float64 `json:"stale_seconds"`
	// NeedsRestart: the store's log was trimmed past what this node
	// applied, so it cannot catch up; /readyz then answers 503.
	NeedsRestart bool `json:"needs_restart,omitempty"`
}

// HeaderSeq is the response header of every authenticated request: the
// last change the node had applied when it answered. After a write it
// covers the write; give it as MinSeqParam to another node of the same
// store to read that write there.
const HeaderSeq = "Tidemark-Seq"

// MinSeqParam is the query parameter, accepted by every authenticated
// route, that makes the node wait (at most MaxMinSeqWait, within the
// request's timeout) until it has applied that change; past it the
// answer is 503 unavailable.
const MinSeqParam = "min_seq"

// MaxMinSeqWait bounds the wait a min_seq asks for, in seconds.
const MaxMinSeqWait = 10
