package wire

import (
	"errors"
	"math"
	"testing"
	"time"
	"unsafe"
)

func TestRoundTrip(t *testing.T) {
	var w Writer
	when := time.Date(-44, 3, 15, 12, 0, 0, 7, time.UTC)
	w.Uvarint(300)
	w.Varint(-5)
	w.Bool(true)
	w.String("héllo")
	w.Bytes([]byte{1, 2})
	w.Float64(math.Pi)
	w.Float32s([]float32{1.5, -2})
	w.Time(when)
	w.Time(time.Time{})
	r := NewReader(w.B)
	if r.Uvarint() != 300 || r.Varint() != -5 || !r.Bool() || r.String(10) != "héllo" || string(r.Bytes(2)) != "\x01\x02" ||
		r.Float64() != math.Pi {
		t.Fatal("scalars differ")
	}
	if v := r.Float32s(2, nil); len(v) != 2 || v[0] != 1.5 || v[1] != -2 {
		t.Fatalf("float32s %v", v)
	}
	if got := r.Time(); !got.Equal(when) {
		t.Fatalf("time %v, want %v", got, when)
	}
	if !r.Time().IsZero() || r.Err() != nil || r.Len() != 0 {
		t.Fatalf("zero time, err %v, %d left", r.Err(), r.Len())
	}
}

// Hostile input never panics and never allocates past what it holds.
func TestHostileInput(t *testing.T) {
	var w Writer
	w.Uvarint(1 << 40) // a huge count
	for _, read := range []func(r *Reader){
		func(r *Reader) { r.String(1 << 50) },
		func(r *Reader) { r.Bytes(1 << 50) },
		func(r *Reader) { r.Float32s(1<<50, nil) },
		func(r *Reader) { r.Count(1<<50, 1) },
	} {
		r := NewReader(w.B)
		read(r)
		if !errors.Is(r.Err(), ErrShort) {
			t.Fatalf("huge count: err %v", r.Err())
		}
	}
	for _, b := range [][]byte{nil, {0xff}, {2, 0xff, 0xfe}, {1, 2}, {7}} {
		r := NewReader(b)
		r.Time()
		r.String(10)
		r.Bool()
		r.Float64()
		_ = r.Err() // no panic is the point; the error sticks
		if len(b) > 0 && r.Err() == nil {
			t.Fatalf("%x decoded without error", b)
		}
	}
	r := NewReader([]byte{5, 'a', 'b'})
	if r.String(10); !errors.Is(r.Err(), ErrShort) {
		t.Fatalf("short string: %v", r.Err())
	}
	r = NewReader([]byte{2, 0xff, 0xfe})
	if r.String(10); r.Err() == nil {
		t.Fatal("invalid UTF-8 accepted")
	}
}

// Float32sApart's bytes and what it returns are what Float32s writes, and
// what it returns is the slice's own memory (no copy) where it returns
// anything.
func TestFloat32sApart(t *testing.T) {
	v := []float32{1.5, -2, float32(math.Pi), 0, float32(math.Inf(1))}
	var whole, apart Writer
	whole.String("before")
	apart.String("before")
	whole.Float32s(v)
	raw := apart.Float32sApart(v)
	if got := append(append([]byte(nil), apart.B...), raw...); string(got) != string(whole.B) {
		t.Fatalf("Float32sApart wrote %x and returned %x; Float32s wrote %x", apart.B, raw, whole.B)
	}
	if littleEndian && (len(raw) != 4*len(v) || &raw[0] != (*byte)(unsafe.Pointer(&v[0]))) {
		t.Fatal("Float32sApart copied the elements on a little-endian machine")
	}
	r := NewReader(whole.B)
	if r.String(10) != "before" || len(r.Float32s(10, nil)) != len(v) || r.Err() != nil {
		t.Fatalf("reading it back: %v", r.Err())
	}
}
