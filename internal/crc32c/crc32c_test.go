package crc32c

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// Combine of the checksums of two pieces is the checksum of the whole, at
// every split of streams of many lengths, the empty pieces included.
func TestCombine(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{0, 1, 2, 7, 64, 1000, 4096 + 13, 1 << 20} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		whole := crc32.Checksum(b, Table)
		splits := []int{0, n / 2, n}
		for range 20 {
			splits = append(splits, r.IntN(n+1))
		}
		for _, s := range splits {
			a, c := crc32.Checksum(b[:s], Table), crc32.Checksum(b[s:], Table)
			if got := Combine(a, c, int64(n-s)); got != whole {
				t.Fatalf("n %d, split at %d: Combine %#x, want %#x", n, s, got, whole)
			}
		}
	}
}

// Combining many consecutive pieces in order gives the stream's checksum.
func TestCombineMany(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	b := make([]byte, 3<<20)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	var acc uint32
	for lo := 0; lo < len(b); {
		hi := min(len(b), lo+r.IntN(200000))
		acc = Combine(acc, crc32.Checksum(b[lo:hi], Table), int64(hi-lo))
		lo = hi
	}
	if want := crc32.Checksum(b, Table); acc != want {
		t.Fatalf("combined %#x, want %#x", acc, want)
	}
}

func BenchmarkCombine(b *testing.B) {
	for b.Loop() {
		Combine(0x12345678, 0x9abcdef0, 850<<10)
	}
}
