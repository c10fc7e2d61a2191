package store

import "errors"

// Errors returned by the write-ahead log and the snapshot helpers, wrapped
// with detail; test with errors.Is.
var (
	// ErrCorrupt: a segment or snapshot that fails its checks in a way a
	// crash cannot explain — a CRC mismatch followed by intact records, a
	// damaged record in a segment that is not the last, a gap or regression
	// in the sequence numbers, a snapshot with a bad header or checksum.
	// Acknowledged data may be at stake, so nothing is repaired silently.
	ErrCorrupt = errors.New("store: corrupt data")
	// ErrClosed: an operation on a WAL after Close.
	ErrClosed = errors.New("store: log is closed")
	// ErrTooLarge: a payload longer than Options.MaxRecordSize. Nothing of
	// the call is written.
	ErrTooLarge = errors.New("store: record too large")
	// ErrFailed: a write or fsync of the log failed. The WAL refuses every
	// later append, because after a failed fsync the kernel may have dropped
	// the dirty pages and a retry could report success for data that is not
	// on disk; close it and open the directory again to recover.
	ErrFailed = errors.New("store: log failed; reopen to recover")
	// ErrOutOfRange: a sequence number outside the log — a Replay from
	// before the oldest kept record or past LastSeq()+1, a Checkpoint past
	// LastSeq().
	ErrOutOfRange = errors.New("store: sequence number out of range")
	// ErrLocked: the directory is held by another open WAL (this process or
	// another one).
	ErrLocked = errors.New("store: log directory is locked")
	// ErrOptions: invalid Options, or an invalid snapshot name.
	ErrOptions = errors.New("store: invalid options")
)
