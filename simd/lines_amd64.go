//go:build !noasm && amd64

package simd

//go:noescape
func aboveLinesAVX512(sims *float32, ld, n int, a, c, thr *float32, masks *uint16)

//go:noescape
func aboveLinesAVX2(sims *float32, ld, n int, a, c, thr *float32, masks *uint16)

func aboveLinesAccel(sims []float32, ld int, a, c, thr []float32, masks []uint16) {
	if use512 {
		aboveLinesAVX512(&sims[0], ld, len(a), &a[0], &c[0], &thr[0], &masks[0])
		return
	}
	aboveLinesAVX2(&sims[0], ld, len(a), &a[0], &c[0], &thr[0], &masks[0])
}
