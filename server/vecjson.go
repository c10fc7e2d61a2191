package server

import (
	"bytes"
	"strconv"
	"strings"
	"unsafe"
)

// Fast decoding of the vectors in request bodies (issue 16, "the service
// path").
//
// encoding/json decodes a []float32 element by element through
// reflection, after its scanner has walked every byte once already: about
// 160 µs of a search's server time for one 768-d query, 1.5 ms for a Put
// of ten, more than the HTTP exchange itself. liftVectors takes the vector
// arrays out of a body before encoding/json sees it: it parses each in one
// pass (the JSON number grammar, float32 rounding and range exactly as
// encoding/json applies them) and leaves null in its place, so encoding/json
// still decodes everything else as strictly as ever (unknown fields, types,
// trailing data), and the caller puts the vectors back.
//
// Whatever it does not recognise as plain — an array holding anything but
// numbers, a number out of float32's range, a "vector" or list key given
// twice or spelt with escapes or in another case (encoding/json matches keys
// case-insensitively), malformed JSON — makes it give up and return nil:
// the body is then decoded as before, by encoding/json alone, with the same
// result and the same error.

// liftedVectors are the vectors liftVectors took out of a body, by the
// index of the list element that held each (0 for a top-level vector).
type liftedVectors map[int][]float32

// liftVectors finds the "vector" arrays of body: the top-level object's
// when list is "", else those of the objects in the top-level array field
// named list ("memories"). It returns the body with each replaced by null,
// and the vectors; ok false means it gave up (see above) and nothing is
// returned.
func liftVectors(body []byte, list string) (out []byte, vecs liftedVectors, ok bool) {
	p := &vecScanner{b: body, list: list, vecs: liftedVectors{}}
	p.skipSpace()
	if !p.object(0, -1) {
		return nil, nil, false
	}
	p.skipSpace()
	if p.i != len(p.b) || len(p.cuts) == 0 {
		// Trailing data is encoding/json's to report; no vector, nothing
		// to gain.
		return nil, nil, false
	}
	out = make([]byte, 0, len(body))
	prev := 0
	for _, c := range p.cuts {
		out = append(out, body[prev:c[0]]...)
		out = append(out, "null"...)
		prev = c[1]
	}
	out = append(out, body[prev:]...)
	return out, p.vecs, true
}

// vecScanner walks a JSON body, recording the vector arrays it lifts.
type vecScanner struct {
	b    []byte
	i    int
	list string
	cuts [][2]int // the lifted arrays' byte ranges, in order
	vecs liftedVectors
}

func (p *vecScanner) skipSpace() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// object reads an object at p.i. depth 0 is the body; elem ≥ 0 is the
// object's index in the list array (its vector is lifted).
func (p *vecScanner) object(depth, elem int) bool {
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	p.i++
	seenVector, seenList := false, false
	for first := true; ; first = false {
		p.skipSpace()
		if p.i < len(p.b) && p.b[p.i] == '}' && first {
			p.i++
			return true
		}
		key, ok := p.str()
		if !ok {
			return false
		}
		p.skipSpace()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		p.skipSpace()
		liftHere := (depth == 0 && p.list == "") || elem >= 0
		switch {
		case liftHere && strings.EqualFold(key, "vector"):
			// Only the plain spelling, once: anything else is left to
			// encoding/json's rules.
			if key != `vector` || seenVector {
				return false
			}
			seenVector = true
			if p.i < len(p.b) && p.b[p.i] == '[' {
				start := p.i
				v, ok := p.numbers()
				if !ok {
					return false
				}
				p.cuts = append(p.cuts, [2]int{start, p.i})
				p.vecs[max(elem, 0)] = v
			} else if !p.skip() {
				return false
			}
		case depth == 0 && p.list != "" && strings.EqualFold(key, p.list):
			// Once, and spelt plainly: encoding/json keeps the last of
			// two, which would not be the elements counted here.
			if key != p.list || seenList || !p.listArray() {
				return false
			}
			seenList = true
		default:
			if !p.skip() {
				return false
			}
		}
		if more, ok := p.next('}'); !more {
			return ok
		}
	}
}

// next passes the separator after a member or element: a comma (more),
// or the container's close (done, ok); anything else is not JSON.
func (p *vecScanner) next(close byte) (more, ok bool) {
	p.skipSpace()
	if p.i >= len(p.b) {
		return false, false
	}
	switch p.b[p.i] {
	case ',':
		p.i++
		return true, true
	case close:
		p.i++
		return false, true
	}
	return false, false
}

// listArray reads the list field's array of objects (null is left to
// encoding/json).
func (p *vecScanner) listArray() bool {
	if p.i < len(p.b) && p.b[p.i] != '[' {
		return p.skip()
	}
	p.i++
	for n := 0; ; n++ {
		p.skipSpace()
		if p.i < len(p.b) && p.b[p.i] == ']' && n == 0 {
			p.i++
			return true
		}
		if p.i < len(p.b) && p.b[p.i] == '{' {
			if !p.object(1, n) {
				return false
			}
		} else if !p.skip() {
			return false
		}
		if more, ok := p.next(']'); !more {
			return ok
		}
	}
}

// str reads a string without escapes (a key; an escaped one gives up).
func (p *vecScanner) str() (string, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", false
	}
	end := bytes.IndexByte(p.b[p.i+1:], '"')
	if end < 0 {
		return "", false
	}
	s := p.b[p.i+1 : p.i+1+end]
	if bytes.IndexByte(s, '\\') >= 0 {
		return "", false
	}
	p.i += end + 2
	return string(s), true
}

// skip passes over one value of any kind: a string (with its escapes), a
// container (its nesting, and the strings inside it), or a scalar up to the
// next delimiter. It validates only what it needs to find the value's end:
// encoding/json validates the rest.
func (p *vecScanner) skip() bool {
	if p.i >= len(p.b) {
		return false
	}
	switch p.b[p.i] {
	case '"':
		return p.skipString()
	case '{', '[':
		depth := 0
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case '"':
				if !p.skipString() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					p.i++
					return true
				}
			}
			p.i++
		}
		return false
	}
	start := p.i
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return p.i > start
		}
		p.i++
	}
	return p.i > start
}

// skipString passes over the string at p.i.
func (p *vecScanner) skipString() bool {
	p.i++
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
		case '"':
			p.i++
			return true
		default:
			p.i++
		}
	}
	return false
}

// numbers reads an array of JSON numbers as float32s (as encoding/json
// would: strconv.ParseFloat with 32 bits; out of range gives up).
func (p *vecScanner) numbers() ([]float32, bool) {
	p.i++ // '['
	v := make([]float32, 0, 1024)
	for first := true; ; first = false {
		p.skipSpace()
		if p.i < len(p.b) && p.b[p.i] == ']' && first {
			p.i++
			return v, true
		}
		start := p.i
		if !p.number() {
			return nil, false
		}
		tok := p.b[start:p.i]
		f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(tok), len(tok)), 32)
		if err != nil {
			return nil, false
		}
		v = append(v, float32(f))
		if more, ok := p.next(']'); !more {
			if !ok {
				return nil, false
			}
			return v, true
		}
	}
}

// number passes over one number of the JSON grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *vecScanner) number() bool {
	b, i := p.b, p.i
	digits := func() bool {
		s := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > s
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	p.i = i
	return true
}
