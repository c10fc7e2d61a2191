//go:build noasm || !amd64

package simd

// accelName is empty: this build has no accelerated kernels.
const accelName = ""

// detectAccel reports false: built with the noasm tag or for a platform
// other than amd64, only the generic kernels exist.
func detectAccel() bool { return false }

// The accelerated entry points are the generic kernels here, so that the
// dispatch in simd.go compiles unchanged; useAccel is never true in this
// build.

func dotAccel(a, b []float32) float32 { return dotGeneric(a, b) }

func dotBatchAccel(rows []float32, dim int, q, out []float32) {
	dotBatchGeneric(rows, dim, q, out)
}

func axpyAccel(alpha float32, x, y []float32) { axpyGeneric(alpha, x, y) }

func scaleAccel(alpha float32, x []float32) { scaleGeneric(alpha, x) }

// cpuFeatures reports no features: none is used in this build.
func cpuFeatures() Features { return Features{} }

func dotInt8Accel(a, b []int8) int32 { return dotInt8Generic(a, b) }

func dotInt8RowsAccel(q, rows []int8, ids []uint32, out []int32) {
	dotInt8RowsGeneric(q, rows, ids, out)
}

func quantizeInt8Accel(v []float32, dst []int8) float32 { return quantizeInt8Generic(v, dst) }

func dotRowsAccel(rows, panels []float32, dim, n, np int, out []float32, ld int, _ []float32) {
	dotRowsGeneric(rows, panels, dim, n, np, out, ld)
}

func aboveLinesAccel(sims []float32, ld int, a, c, thr []float32, masks []uint16) {
	aboveLinesGeneric(sims, ld, a, c, thr, masks)
}

func finiteAccel(v []float32) bool { return finiteGeneric(v) }
