package links

import "errors"

// Errors returned by [Graph], wrapped with detail; test with errors.Is.
var (
	// ErrUnknown: a key that is not a node of the graph.
	ErrUnknown = errors.New("links: unknown node")
	// ErrInvalid: a malformed argument — an invalid link type, a
	// self-loop, a non-finite similarity or time, a temporal link that does
	// not point back in time, or invalid Options.
	ErrInvalid = errors.New("links: invalid input")
	// ErrExists: AddNode of a key that is present with a different time.
	ErrExists = errors.New("links: node exists with a different time")
	// ErrOrphan: an archived node that no visible node reaches by version
	// links (All-Mem App. B.4, Eq. 24).
	ErrOrphan = errors.New("links: orphaned archived node")
	// ErrCorrupt: an encoding that is truncated, damaged or not a link
	// graph.
	ErrCorrupt = errors.New("links: corrupt graph encoding")
)
