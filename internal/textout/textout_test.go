package textout

import (
	"bytes"
	"errors"
	"testing"
)

type failAfter struct {
	n   int
	buf bytes.Buffer
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return f.buf.Write(p)
}

func TestWriterKeepsFirstError(t *testing.T) {
	f := &failAfter{n: 1}
	w := &Writer{W: f}
	w.Printf("a%d", 1)
	w.Printf("b")
	w.Printf("c")
	if f.buf.String() != "a1" || w.Err == nil || w.Err.Error() != "disk full" {
		t.Fatalf("wrote %q, err %v", f.buf.String(), w.Err)
	}
}
