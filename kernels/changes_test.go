package kernels

import (
	"slices"
	"testing"
)

// ChangedSince returns exactly the rows recorded after a sequence number,
// says when it can no longer (after Reset, or when the log has been
// trimmed past it), and its sequence numbers never repeat.
func TestBatchChangedSince(t *testing.T) {
	b, err := NewBatch(2, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows, seq, ok := b.ChangedSince(0)
	if len(rows) != 0 || seq != 0 || !ok {
		t.Fatalf("empty log: %v %d %v", rows, seq, ok)
	}
	b.Changed(3)
	b.Changed(1, 4)
	rows, seq2, ok := b.ChangedSince(seq)
	if !slices.Equal(rows, []int{3, 1, 4}) || seq2 != 3 || !ok {
		t.Fatalf("after three changes: %v %d %v", rows, seq2, ok)
	}
	b.Changed(7)
	if rows, seq3, ok := b.ChangedSince(seq2); !slices.Equal(rows, []int{7}) || seq3 != 4 || !ok {
		t.Fatalf("since %d: %v %d %v", seq2, rows, seq3, ok)
	}
	if _, _, ok := b.ChangedSince(99); ok {
		t.Fatal("a sequence number from the future is complete")
	}
	b.Reset()
	if _, next, ok := b.ChangedSince(4); ok || next <= 4 {
		t.Fatalf("after Reset: complete %v, next %d", ok, next)
	}
	_, seq, _ = b.ChangedSince(0)
	for i := range 3*maxChanges + 5 {
		b.Changed(i)
	}
	if _, _, ok := b.ChangedSince(seq); ok {
		t.Fatal("a trimmed log claims to reach back")
	}
	rows, next, ok := b.ChangedSince(nextOf(b) - 10)
	if !ok || len(rows) != 10 || rows[9] != 3*maxChanges+4 || next != nextOf(b) {
		t.Fatalf("the last ten: %v %d %v", rows, next, ok)
	}
}

func nextOf(b *Batch) uint64 {
	_, n, _ := b.ChangedSince(0)
	return n
}
