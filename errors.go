package tidemark

import "errors"

// Errors returned by the engine, wrapped with detail; test with errors.Is.
var (
	// ErrInvalid: a bad argument or memory — an empty or overlong id or
	// text, an unknown kind, source or profile, an empty valid window,
	// negative counters, a bad time.
	ErrInvalid = errors.New("tidemark: invalid input")
	// ErrDimension: a vector whose length is not the collection's.
	ErrDimension = errors.New("tidemark: dimension mismatch")
	// ErrNotFinite: a vector or number that is NaN or ±Inf, or a zero vector
	// (which has no direction to compare).
	ErrNotFinite = errors.New("tidemark: value is not finite")
	// ErrTooLarge: a batch, text, vector or record past its limit.
	ErrTooLarge = errors.New("tidemark: too large")
	// ErrNotFound: an unknown collection or memory id.
	ErrNotFound = errors.New("tidemark: not found")
	// ErrExists: a collection name that is taken, or a memory id that
	// exists with different content.
	ErrExists = errors.New("tidemark: already exists")
	// ErrConflict: a write's precondition failed — the memory id is not
	// at the revision the writer expected (Memory.IfRevision): someone
	// else wrote it in between.
	ErrConflict = errors.New("tidemark: conflict")
	// ErrClosed: a call on a DB after Close.
	ErrClosed = errors.New("tidemark: database is closed")
	// ErrFailed: the write-ahead log failed (a write or fsync error). The
	// DB refuses every later write (reads go on); close it and open the
	// directory again, which recovers what the log really holds.
	ErrFailed = errors.New("tidemark: database failed; reopen to recover")
	// ErrCorrupt: the data directory holds a log or snapshot that fails
	// its checks in a way a crash cannot explain.
	ErrCorrupt = errors.New("tidemark: corrupt data")
	// ErrRateLimited: feedback from a source past its limits for a
	// memory (CollectionOptions.FeedbackPerDay, FeedbackPerSource); it is
	// not counted.
	ErrRateLimited = errors.New("tidemark: rate limited")
	// ErrEmbedder: the collection's embedder could not embed a text (its
	// endpoint is down, slow or answered badly); the write or search was
	// refused and nothing of it was stored.
	ErrEmbedder = errors.New("tidemark: embedder failed")
	// ErrUnavailable: a PostgreSQL store's database cannot be reached, so
	// the write was not acknowledged (reads go on from the state last
	// applied), or a wait for a change (DB.WaitApplied) timed out.
	ErrUnavailable = errors.New("tidemark: unavailable")
	// ErrOptions: invalid Options or CollectionOptions.
	ErrOptions = errors.New("tidemark: invalid options")
)
