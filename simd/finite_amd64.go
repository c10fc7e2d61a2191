//go:build !noasm && amd64

package simd

// finiteAVX2 reports whether none of n elements (n a positive multiple of
// 32) has every exponent bit set (finite_amd64.s).
//
//go:noescape
func finiteAVX2(v *float32, n int) bool

// finiteAccel runs the AVX2 kernel over the 32-element blocks and the
// generic loop over the rest.
func finiteAccel(v []float32) bool {
	n := len(v) &^ 31
	if n == 0 {
		return finiteGeneric(v)
	}
	return finiteAVX2(&v[0], n) && finiteGeneric(v[n:])
}
