package store

import (
	"fmt"
	"time"
)

// Limits on Options.
const (
	// MaxRecordSizeLimit is the largest MaxRecordSize accepted: 1 GiB. The
	// record header can describe up to 4 GiB − 1, but a record is held in
	// memory whole, on write and on replay.
	MaxRecordSizeLimit = 1 << 30
	// MinSegmentSize is the smallest SegmentSize accepted: 4 KiB.
	MinSegmentSize = 4 << 10
)

// Default values of Options.
const (
	DefaultSegmentSize   = 64 << 20
	DefaultMaxRecordSize = 64 << 20
	DefaultMaxGroupBytes = 16 << 20
)

// RecoveryMode chooses what Open does with a damaged record in the last
// segment that is followed by intact records. See the package
// documentation, "Recovery".
type RecoveryMode uint8

const (
	// RecoverStrict (the default) cuts a damaged tail of the last segment
	// only when no intact record follows the damage; otherwise Open fails
	// with ErrCorrupt. It never drops a record that may have been
	// acknowledged.
	RecoverStrict RecoveryMode = iota
	// RecoverTruncateCorruptTail cuts the last segment at its first
	// damaged record even when intact records follow, and reports the cut
	// in RecoveryInfo. Use it, knowingly, to open a log that
	// RecoverStrict refuses after a machine crash (power loss, kernel
	// panic) on a file system that may persist the pages of the last,
	// unacknowledged group commit out of order. If the damage is real
	// corruption instead, acknowledged records after it are lost.
	RecoverTruncateCorruptTail
)

// String returns the name of the mode.
func (m RecoveryMode) String() string {
	switch m {
	case RecoverStrict:
		return "strict"
	case RecoverTruncateCorruptTail:
		return "truncate-corrupt-tail"
	}
	return fmt.Sprintf("RecoveryMode(%d)", uint8(m))
}

// MarshalText returns the name of the mode.
func (m RecoveryMode) MarshalText() ([]byte, error) {
	if m > RecoverTruncateCorruptTail {
		return nil, fmt.Errorf("%w: unknown RecoveryMode %d", ErrOptions, uint8(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText parses a name returned by String.
func (m *RecoveryMode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "strict":
		*m = RecoverStrict
	case "truncate-corrupt-tail":
		*m = RecoverTruncateCorruptTail
	default:
		return fmt.Errorf("%w: unknown RecoveryMode %q", ErrOptions, b)
	}
	return nil
}

// Options configure a WAL. A nil *Options means the defaults; a zero field
// takes its default.
type Options struct {
	// SegmentSize is the size at which the log rolls over to a new segment
	// file (default 64 MiB, at least MinSegmentSize). A record never spans
	// segments: a record that does not fit in the rest of a non-empty
	// segment starts a new one, and a record larger than SegmentSize gets a
	// segment of its own, which is then larger than SegmentSize.
	SegmentSize int64
	// MaxRecordSize is the largest payload Append accepts (default 64 MiB,
	// at most MaxRecordSizeLimit); a larger one fails with ErrTooLarge and
	// nothing is written. It limits writing only: Open and Replay read
	// records of any size that the log holds, so lowering it never makes a
	// log unreadable.
	MaxRecordSize int
	// MaxGroupBytes bounds the payload bytes of one group commit (default
	// 16 MiB): the writer stops gathering pending appends into a group
	// once it holds this much, so one fsync does not wait behind an
	// unbounded queue. A single append larger than this is one group.
	MaxGroupBytes int
	// NoSync skips every fsync (default false). Appends are then
	// acknowledged once written to the operating system: they survive the
	// process being killed but NOT a machine crash or power loss, and the
	// durability guarantees of this package do not hold. For tests and
	// benchmarks only.
	NoSync bool
	// OnSync, when set, is called with the duration of every fsync of a
	// segment (from the writer goroutine: it must be quick and must not
	// call the WAL). For metrics.
	OnSync func(time.Duration)
	// Recovery chooses how Open treats a damaged record in the last segment
	// that is followed by intact records (default RecoverStrict).
	Recovery RecoveryMode

	// writeBufferSize is the size of the writer's buffer (default 1 MiB);
	// the crash test makes it small so that a group takes many write(2)
	// calls and a kill can tear it.
	writeBufferSize int
}

// WithDefaults returns a copy of o (or the defaults for nil) with every
// zero field set to its default. It does not validate.
func (o *Options) WithDefaults() Options {
	var d Options
	if o != nil {
		d = *o
	}
	if d.SegmentSize == 0 {
		d.SegmentSize = DefaultSegmentSize
	}
	if d.MaxRecordSize == 0 {
		d.MaxRecordSize = DefaultMaxRecordSize
	}
	if d.MaxGroupBytes == 0 {
		d.MaxGroupBytes = DefaultMaxGroupBytes
	}
	if d.writeBufferSize == 0 {
		d.writeBufferSize = 1 << 20
	}
	return d
}

// Validate reports the first invalid field of o, after defaults, as an
// error wrapping ErrOptions that names it. A nil *Options is valid.
func (o *Options) Validate() error {
	d := o.WithDefaults()
	switch {
	case d.SegmentSize < MinSegmentSize:
		return fmt.Errorf("%w: Options.SegmentSize = %d, want at least %d", ErrOptions, d.SegmentSize, MinSegmentSize)
	case d.MaxRecordSize < 0 || d.MaxRecordSize > MaxRecordSizeLimit:
		return fmt.Errorf("%w: Options.MaxRecordSize = %d, want 1…%d", ErrOptions, d.MaxRecordSize, MaxRecordSizeLimit)
	case d.MaxGroupBytes < 0:
		return fmt.Errorf("%w: Options.MaxGroupBytes = %d, want positive", ErrOptions, d.MaxGroupBytes)
	case d.Recovery > RecoverTruncateCorruptTail:
		return fmt.Errorf("%w: Options.Recovery = %d, want RecoverStrict or RecoverTruncateCorruptTail", ErrOptions, uint8(d.Recovery))
	}
	return nil
}
