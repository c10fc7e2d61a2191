// Package crc32c is the CRC-32C (Castagnoli) the snapshot and log files
// are checked with, and Combine, which joins the checksums of two pieces
// of a stream computed apart: goroutines checking consecutive parts of a
// file (a mapped snapshot's rows) then need not wait for one another.
package crc32c

import "hash/crc32"

// Table is the Castagnoli table of package hash/crc32.
var Table = crc32.MakeTable(crc32.Castagnoli)

// poly is the Castagnoli polynomial, bit-reversed (as hash/crc32 has it).
const poly = crc32.Castagnoli

// Combine returns the CRC-32C of a stream A‖B from crcA, that of A, and
// crcB, that of B, which is lenB bytes long (each as crc32.Checksum gives
// it). The checksum is linear over GF(2): appending lenB zero bytes
// multiplies A's by x^(8·lenB) modulo the polynomial, and B's own checksum
// adds in; the pre- and post-inversions of the two cancel out. It costs
// O(log lenB) polynomial products.
func Combine(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	return mulmod(xpow8n(uint64(lenB)), crcA) ^ crcB
}

// The polynomials below are bit-reversed: bit 31 holds x^0, bit 0 x^31.
const one = uint32(1) << 31

// mulmod returns a·b modulo poly.
func mulmod(a, b uint32) uint32 {
	var p uint32
	for m := one; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		// b·x: a shift toward bit 0, reduced when x^32 would appear.
		if b&1 != 0 {
			b = b>>1 ^ poly
		} else {
			b >>= 1
		}
	}
	return p
}

// squares[k] is x^(2^k) modulo poly.
var squares = func() (s [64]uint32) {
	s[0] = one >> 1 // x
	for k := 1; k < len(s); k++ {
		s[k] = mulmod(s[k-1], s[k-1])
	}
	return s
}()

// xpow8n returns x^(8·n) modulo poly: the product of x^(2^k) over the
// bits k of 8·n.
func xpow8n(n uint64) uint32 {
	p := one
	for k := 3; n != 0; k, n = k+1, n>>1 {
		if n&1 != 0 {
			p = mulmod(squares[k%64], p)
		}
	}
	return p
}
