// Package wire is the little binary encoding of the engine's log records
// and snapshots: unsigned and zig-zag varints, length-prefixed strings,
// little-endian float32 and float64 values. A Reader never panics on
// short or hostile input: the first problem sticks in Err and every later
// read returns a zero value.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
	"unicode/utf8"
	"unsafe"
)

// ErrShort is wrapped by a Reader's error when the input ends early or a
// length is out of bounds.
var ErrShort = errors.New("wire: short or malformed input")

// Writer appends encoded values to B.
type Writer struct{ B []byte }

// Uvarint appends x as an unsigned varint.
func (w *Writer) Uvarint(x uint64) { w.B = binary.AppendUvarint(w.B, x) }

// Varint appends x as a zig-zag varint.
func (w *Writer) Varint(x int64) { w.B = binary.AppendVarint(w.B, x) }

// Byte appends one byte.
func (w *Writer) Byte(b byte) { w.B = append(w.B, b) }

// Bool appends b as one byte.
func (w *Writer) Bool(b bool) {
	if b {
		w.B = append(w.B, 1)
	} else {
		w.B = append(w.B, 0)
	}
}

// String appends s with its length.
func (w *Writer) String(s string) {
	w.Uvarint(uint64(len(s)))
	w.B = append(w.B, s...)
}

// Bytes appends p with its length.
func (w *Writer) Bytes(p []byte) {
	w.Uvarint(uint64(len(p)))
	w.B = append(w.B, p...)
}

// Float64 appends f as 8 little-endian bytes.
func (w *Writer) Float64(f float64) { w.B = binary.LittleEndian.AppendUint64(w.B, math.Float64bits(f)) }

// Uint32 appends x as 4 little-endian bytes.
func (w *Writer) Uint32(x uint32) { w.B = binary.LittleEndian.AppendUint32(w.B, x) }

// Uint64 appends x as 8 little-endian bytes.
func (w *Writer) Uint64(x uint64) { w.B = binary.LittleEndian.AppendUint64(w.B, x) }

// Float32s appends v with its length, 4 little-endian bytes a value.
// Float32sApart writes what Float32s writes, but leaves the elements to
// the caller where it can: on a little-endian machine it writes only the
// count and returns v's memory, the bytes Float32s would have appended
// next, for the caller to write after w.B without copying them into it;
// elsewhere it writes all of it, as Float32s, and returns nil.
func (w *Writer) Float32sApart(v []float32) []byte {
	if !littleEndian {
		w.Float32s(v)
		return nil
	}
	w.Uvarint(uint64(len(v)))
	return float32Bytes(v)
}

func (w *Writer) Float32s(v []float32) {
	w.Uvarint(uint64(len(v)))
	off := len(w.B)
	w.B = slices.Grow(w.B, 4*len(v))[:off+4*len(v)]
	if littleEndian {
		copy(w.B[off:], float32Bytes(v))
		return
	}
	for i, x := range v {
		binary.LittleEndian.PutUint32(w.B[off+4*i:], math.Float32bits(x))
	}
}

// Time appends t (any year) as seconds and nanoseconds; the zero time is
// written as one byte and reads back as the zero time.
func (w *Writer) Time(t time.Time) {
	if t.IsZero() {
		w.Byte(0)
		return
	}
	w.Byte(1)
	w.Varint(t.Unix())
	w.Uvarint(uint64(t.Nanosecond()))
}

// Reader decodes what a Writer wrote.
type Reader struct {
	b   []byte
	err error
}

// NewReader reads from b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err returns the first problem met, or nil.
func (r *Reader) Err() error { return r.err }

// Len returns the number of bytes left.
func (r *Reader) Len() int { return len(r.b) }

// Fail records err (when none is recorded yet).
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *Reader) short(what string) {
	r.Fail(fmt.Errorf("%w: %s", ErrShort, what))
	r.b = nil
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.short("varint")
		return 0
	}
	r.b = r.b[n:]
	return x
}

// Varint reads a zig-zag varint.
func (r *Reader) Varint() int64 {
	if r.err != nil {
		return 0
	}
	x, n := binary.Varint(r.b)
	if n <= 0 {
		r.short("varint")
		return 0
	}
	r.b = r.b[n:]
	return x
}

// Count reads a length or count and checks it is at most max and that
// at least count·minBytes bytes are left, so a hostile count cannot make
// the caller allocate more than the input could fill.
func (r *Reader) Count(max int, minBytes int) int {
	x := r.Uvarint()
	if r.err != nil {
		return 0
	}
	if x > uint64(max) || (minBytes > 0 && x > uint64(len(r.b)/minBytes)) {
		r.short(fmt.Sprintf("count %d (at most %d, %d bytes left)", x, max, len(r.b)))
		return 0
	}
	return int(x)
}

// Int reads a varint that must fit an int in [lo, hi].
func (r *Reader) Int(lo, hi int64) int64 {
	x := r.Varint()
	if r.err == nil && (x < lo || x > hi) {
		r.short(fmt.Sprintf("value %d outside [%d, %d]", x, lo, hi))
		return 0
	}
	return x
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 1 {
		r.short("byte")
		return 0
	}
	b := r.b[0]
	r.b = r.b[1:]
	return b
}

// Bool reads a byte written by Writer.Bool.
func (r *Reader) Bool() bool {
	switch b := r.Byte(); b {
	case 0:
		return false
	case 1:
		return true
	default:
		r.short(fmt.Sprintf("bool byte %d", b))
		return false
	}
}

// String reads a string of at most max bytes that is valid UTF-8.
func (r *Reader) String(max int) string {
	n := r.Count(max, 1)
	if r.err != nil {
		return ""
	}
	if len(r.b) < n {
		r.short("string")
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	if !utf8.ValidString(s) {
		r.short("string is not UTF-8")
		return ""
	}
	return s
}

// Bytes reads a byte slice of at most max bytes (a copy).
func (r *Reader) Bytes(max int) []byte {
	n := r.Count(max, 1)
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.short("bytes")
		return nil
	}
	p := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return p
}

// Uint32 reads 4 little-endian bytes.
func (r *Reader) Uint32() uint32 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 4 {
		r.short("uint32")
		return 0
	}
	x := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return x
}

// Uint64 reads 8 little-endian bytes.
func (r *Reader) Uint64() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.short("uint64")
		return 0
	}
	x := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return x
}

// Float64 reads 8 little-endian bytes.
func (r *Reader) Float64() float64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.short("float64")
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return f
}

// Float32s reads a float32 slice of at most max values into dst's
// backing array when it has room (nil when the length is 0).
func (r *Reader) Float32s(max int, dst []float32) []float32 {
	n := r.Count(max, 4)
	if r.err != nil || n == 0 {
		return nil
	}
	if cap(dst) >= n {
		dst = dst[:n]
	} else {
		dst = make([]float32, n)
	}
	if littleEndian {
		copy(float32Bytes(dst), r.b[:4*n])
	} else {
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(r.b[4*i:]))
		}
	}
	r.b = r.b[4*n:]
	return dst
}

// Time reads a time written by Writer.Time, in UTC.
func (r *Reader) Time() time.Time {
	switch r.Byte() {
	case 0:
		return time.Time{}
	case 1:
		sec := r.Varint()
		ns := r.Uvarint()
		if r.err != nil {
			return time.Time{}
		}
		if ns >= 1e9 {
			r.short("nanoseconds")
			return time.Time{}
		}
		return time.Unix(sec, int64(ns)).UTC()
	default:
		r.short("time tag")
		return time.Time{}
	}
}

// Bytes0 reads exactly n raw bytes (no length prefix); the slice aliases
// the input.
func (r *Reader) Bytes0(n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.short("raw bytes")
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

// Int64Max reads an unsigned varint that must be at most max.
func (r *Reader) Int64Max(max int64) int64 {
	x := r.Uvarint()
	if r.err == nil && (max < 0 || x > uint64(max)) {
		r.short(fmt.Sprintf("index %d beyond %d", x, max))
		return 0
	}
	return int64(x)
}

// littleEndian says the host stores a float32 as its encoding does, so
// that a vector is read and written as one copy of its bytes.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// float32Bytes is v's memory as bytes.
func float32Bytes(v []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}
