package simd

// This file holds the portable kernels. They are compiled on every platform
// and in every build: they are the whole implementation under the noasm tag
// or off amd64, the fallback on CPUs without AVX2+FMA, and the reference the
// accelerated kernels are tested against.
//
// Kernels trust their caller: lengths are checked once by the exported
// functions in simd.go. The doc comment of each kernel gives the reference
// loop it computes; the code differs only in summation order (independent
// accumulators, so the loop is not bound by the latency of one add chain).

// dotGeneric returns the dot product of a and b[:len(a)]:
//
//	for i := range a {
//		sum += a[i] * b[i]
//	}
func dotGeneric(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i <= n-8; i += 8 {
		x := a[i : i+8 : i+8]
		y := b[i : i+8 : i+8]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		s4 += x[4] * y[4]
		s5 += x[5] * y[5]
		s6 += x[6] * y[6]
		s7 += x[7] * y[7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// dotBatchGeneric sets out[i] to the dot product of row i of the row-major
// matrix rows (dim columns) with q[:dim], for every i < len(out):
//
//	for i := range out {
//		out[i] = dotGeneric(rows[i*dim:(i+1)*dim], q)
//	}
//
// It walks four rows at a time, one accumulator per row, so each element of
// q is loaded once per four rows and four add chains are in flight. (With
// Go 1.26 on amd64 this measured faster than one dotGeneric per row, than
// two accumulators per row, and than eight rows at a time.) The columns are
// summed in blocks of dotBlock with fresh accumulators that are then added
// to the row's total: a single float32 chain over all dim products drifts by
// up to dim·ε when the products share a sign (2·10⁻⁵ relative at d = 768,
// seen against the float64 reference), two levels by (dotBlock + dim/dotBlock)·ε.
func dotBatchGeneric(rows []float32, dim int, q, out []float32) {
	q = q[:dim]
	n := len(out)
	i := 0
	for ; i+4 <= n; i += 4 {
		r0 := rows[i*dim : (i+1)*dim]
		r1 := rows[(i+1)*dim : (i+2)*dim]
		r2 := rows[(i+2)*dim : (i+3)*dim]
		r3 := rows[(i+3)*dim : (i+4)*dim]
		var t0, t1, t2, t3 float32
		for lo := 0; lo < dim; lo += dotBlock {
			qb := q[lo:min(lo+dotBlock, dim)]
			// Reslicing to len(qb) lets the compiler drop the bounds
			// checks in the inner loop.
			a0 := r0[lo:][:len(qb)]
			a1 := r1[lo:][:len(qb)]
			a2 := r2[lo:][:len(qb)]
			a3 := r3[lo:][:len(qb)]
			var s0, s1, s2, s3 float32
			for j, qj := range qb {
				s0 += a0[j] * qj
				s1 += a1[j] * qj
				s2 += a2[j] * qj
				s3 += a3[j] * qj
			}
			t0, t1, t2, t3 = t0+s0, t1+s1, t2+s2, t3+s3
		}
		o := out[i : i+4 : i+4]
		o[0], o[1], o[2], o[3] = t0, t1, t2, t3
	}
	for ; i < n; i++ {
		out[i] = dotGeneric(rows[i*dim:(i+1)*dim], q)
	}
}

// dotBlock is the number of columns dotBatchGeneric sums before folding
// the partial sums into each row's total.
const dotBlock = 64

// axpyGeneric adds alpha*x to y[:len(x)]:
//
//	for i := range x {
//		y[i] += alpha * x[i]
//	}
func axpyGeneric(alpha float32, x, y []float32) {
	n := len(x)
	y = y[:n]
	i := 0
	for ; i <= n-8; i += 8 {
		xs := x[i : i+8 : i+8]
		ys := y[i : i+8 : i+8]
		ys[0] += alpha * xs[0]
		ys[1] += alpha * xs[1]
		ys[2] += alpha * xs[2]
		ys[3] += alpha * xs[3]
		ys[4] += alpha * xs[4]
		ys[5] += alpha * xs[5]
		ys[6] += alpha * xs[6]
		ys[7] += alpha * xs[7]
	}
	for ; i < n; i++ {
		y[i] += alpha * x[i]
	}
}

// scaleGeneric multiplies x by alpha in place:
//
//	for i := range x {
//		x[i] *= alpha
//	}
func scaleGeneric(alpha float32, x []float32) {
	n := len(x)
	i := 0
	for ; i <= n-8; i += 8 {
		xs := x[i : i+8 : i+8]
		xs[0] *= alpha
		xs[1] *= alpha
		xs[2] *= alpha
		xs[3] *= alpha
		xs[4] *= alpha
		xs[5] *= alpha
		xs[6] *= alpha
		xs[7] *= alpha
	}
	for ; i < n; i++ {
		x[i] *= alpha
	}
}
