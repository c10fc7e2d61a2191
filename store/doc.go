// Package store makes tidemark durable: a write-ahead log ([WAL]) with a
// CRC per record and group commit, and atomic, checksummed snapshots
// ([WriteSnapshot], [WriteSnapshotDirect] past the page cache,
// [ReadSnapshot], [OpenSnapshot], [MapSnapshot]). The engine logs every
// mutation before applying it, periodically writes its state (the HNSW
// graph, the ledger) to a snapshot tagged with the last sequence number it
// includes, calls [WAL.Checkpoint] with that number, and on start loads the
// snapshot and replays the log from the next sequence number.
//
// # Basics
//
//	w, err := store.Open(dir, nil) // recovers the log; see w.Recovery()
//	seq, err := w.Append(ctx, payload)
//	err = w.Replay(snapSeq+1, func(seq uint64, payload []byte) error { … })
//	err = w.Checkpoint(snapSeq)
//	err = w.Close()
//
// A [WAL] is safe for concurrent use. Every append goes through one writer
// goroutine: it takes the appends that are waiting, writes them, calls
// fsync once for the whole group, and only then answers each caller. A nil
// error from [WAL.Append] or [WAL.AppendBatch] means the records are on
// stable storage. Concurrent appenders therefore share fsyncs; a single
// goroutine appending one record at a time pays one fsync per record and
// should use AppendBatch.
//
// # Format
//
// A log is a directory of segment files named after the sequence number of
// their first record in 20 decimal digits, 00000000000000000001.wal,
// 00000000000000004097.wal, …, plus a LOCK file that an open WAL holds an
// exclusive flock(2) on. A segment is a sequence of records with no file
// header; each record is, little-endian:
//
//	u32      payload length n
//	u32      CRC-32C (Castagnoli) of the sequence number (8 bytes, LE) followed by the payload
//	u64      sequence number
//	[n]byte  payload
//
// Sequence numbers start at 1 and increase by one per record, across
// segments: a segment's records continue exactly where the previous
// segment's end, and its first record carries the sequence number in its
// name. A record never spans segments; the log rolls over to a new segment
// when the next record would take the active one past
// [Options.SegmentSize].
//
// A snapshot is one file: an 8-byte magic "TDMKSNAP", a u32 version (1), a
// u32 of flags (0), the u64 sequence number the snapshot includes, the body,
// then a trailer of the u64 body length and the CRC-32C of everything
// before the CRC.
//
// # Guarantees
//
//   - A record is durable when its Append returns nil: it was written and
//     fsynced, and if it was the first record of a new segment, the
//     directory was fsynced too. Open replays every such record, with the
//     same sequence number and payload, after a crash of the process or of
//     the machine (given a device that honours fsync).
//   - Nothing is acknowledged that a crash can take away. Recovery cuts a
//     damaged record only at the very end of the log, where a crash leaves
//     the unacknowledged group it was writing; it refuses (ErrCorrupt) when
//     intact records follow the damage. One case it cannot tell apart: a
//     bit flip in the last record of the log looks like a torn write and is
//     cut, so the last acknowledged record can be lost to media corruption
//     (never to a crash).
//   - A segment is fsynced before the next one is created, so every
//     segment but the last is whole at all times.
//   - Records are replayed in sequence order, each checked again against
//     its CRC as it is read.
//   - A snapshot file is either the previous one or the new one, whole,
//     after a crash during [WriteSnapshot]; a damaged one is ErrCorrupt on
//     read, never data.
//
// # Recovery
//
// Open reads every segment in order and checks every record: its length
// fits in the file, its CRC matches, its sequence number is the one after
// the previous record's, and the segment names continue the sequence.
// What happens at the first record that fails depends on where it is.
//
// A crash can only damage the bytes written after the last completed
// fsync, which belong to the group commit in progress: records that no
// caller was told are durable, at the end of the last segment. A killed
// process leaves a prefix of its writes (a record cut short); a machine
// crash may also leave pages of that last group unwritten or zeroed in any
// order. So:
//
//   - Damage in the last segment that is not followed by any intact record
//     is a torn tail: the segment is truncated to the end of the last good
//     record, the truncation is fsynced, and the cut is reported in
//     [WAL.Recovery] (TruncatedBytes, TruncatedSegment, Reason). The next
//     append continues with the next sequence number.
//   - Damage in the last segment followed by an intact record (one whose
//     CRC matches and whose sequence number could follow) is an error
//     wrapping ErrCorrupt: a bit flip in an acknowledged record looks just
//     like that, and cutting there would silently drop the acknowledged
//     records after it. (The one crash that produces this pattern is a
//     machine crash whose unwritten pages lie inside the last,
//     unacknowledged group; [RecoverTruncateCorruptTail] opens such a log
//     by cutting at the first damaged record — see Caveats.)
//   - An intact record whose sequence number does not follow is
//     ErrCorrupt wherever it is in the default (strict) mode: a torn write
//     cannot produce a record with a valid CRC, since segments are never
//     reused or overwritten. RecoverTruncateCorruptTail cuts it instead.
//   - Any damage in a segment other than the last, or a gap between
//     segments (one missing in the middle), is ErrCorrupt: those segments
//     were fsynced whole before the next one existed. Missing oldest
//     segments look like a Checkpoint; [WAL.Replay] from a sequence number
//     before [WAL.FirstSeq] is ErrOutOfRange, which is how a snapshot that
//     is older than the log catches it.
//
// Open fsyncs the last segment after recovery, so records it found — even
// ones whose append had not been acknowledged when the process died — are
// durable before any new record follows them.
//
// # Concurrency and context
//
// [WAL.Append] and [WAL.AppendBatch] honour their context until the writer
// takes the request: cancelled before that, they return ctx.Err() and
// write nothing; once taken, the write completes and the call waits for
// its fsync whatever the context does. [WAL.Replay] reads the records up to
// the LastSeq of its start while appends go on. [WAL.Checkpoint] waits for
// Replays in progress. [WAL.Close] lets the group being committed finish
// and fails the appends still waiting with ErrClosed.
//
// # Caveats
//
//   - Durability is only as good as fsync on the device and file system:
//     a disk that acknowledges a flush it has not done (a volatile write
//     cache without power-loss protection) can lose acknowledged records.
//   - After a failed write or fsync the WAL refuses every later append
//     (ErrFailed): after a failed fsync the kernel may have dropped the
//     dirty pages, so retrying could acknowledge data that is not on disk.
//     Close the WAL and Open it again, which recovers from what the file
//     really holds. The appends that failed may or may not be in the log.
//   - AppendBatch is durable as a whole when it returns, but not atomic
//     across a crash: recovery may find any prefix of an unacknowledged
//     batch. Records found by recovery but never acknowledged (the caller
//     died waiting) are kept; a caller that must know should write
//     idempotent records.
//   - [Options.NoSync] turns every fsync off: records then survive the
//     process being killed but not a machine crash. For tests and
//     benchmarks only.
//   - [RecoverTruncateCorruptTail] can drop acknowledged records if the
//     damage it cuts at is real corruption rather than a torn group; use it
//     only by hand, after a machine crash, on a log strict recovery refused.
//   - Strict recovery looks behind damage in the last segment for an
//     intact record frame with a plausible sequence number. A payload that
//     itself contains a well-formed frame of this format with a future
//     sequence number, cut by a crash, makes Open refuse the log
//     (ErrCorrupt) rather than guess; nothing is lost, but opening it takes
//     RecoverTruncateCorruptTail.
//   - Open reads the whole log to check it; keep it short with snapshots
//     and Checkpoint.
//   - The directory lock is flock(2), on Linux, the BSDs and macOS; on other
//     systems nothing stops two processes from opening the same log.
//   - A record is held in memory whole, on write and on replay
//     ([MaxRecordSizeLimit] is 1 GiB).
//   - The segment format has no version field; a future format will use a
//     different file extension.
package store
