// Package peak measures two limits of the machine that the kernels
// benchmark reports its rates against, in the same run: the floating-point
// peak (a tight loop of independent fused multiply-adds on every core, the
// most arithmetic the cores can retire) and the read bandwidth (a
// streaming reduction over a buffer far larger than every cache, the most
// a read-only scan can consume; a copy also writes, and is not that
// limit).
//
// On amd64 with AVX2 and FMA3 the loops are assembly: twelve independent
// 256-bit FMAs per iteration (enough to cover the FMA latency on two
// ports), and, where the CPU has AVX-512F, the same with 512-bit
// registers, reported separately since some cores run them at the same
// FLOP rate (split into two halves) and some at twice it. Elsewhere, and
// under the noasm tag, the loops are Go: a scalar float64 peak, the
// honest ceiling of the generic kernels.
package peak

import (
	"runtime"
	"sort"
	"sync"
	"time"
)

// Rate is one measured limit: the median and the best over the repeats.
type Rate struct {
	// Name says what ran, e.g. "avx2 fma, 256-bit" or "go scalar".
	Name   string
	Median float64
	Best   float64
}

// FMA measures the fused multiply-add peak in GFLOP/s (two FLOPs per lane
// per FMA) with workers goroutines, each repeat running about for long;
// one Rate per instruction set the CPU offers, widest last.
func FMA(workers, repeats int, long time.Duration) []Rate {
	workers, repeats = max(workers, 1), max(repeats, 1)
	var out []Rate
	for _, l := range loops() {
		// Calibrate the iteration count to the wanted duration.
		iters := 1 << 16
		for {
			start := time.Now()
			_ = l.run(iters)
			if el := time.Since(start); el > long/8 || iters > 1<<40 {
				iters = int(float64(iters) * float64(long) / float64(el))
				break
			}
			iters *= 4
		}
		iters = max(iters, 1)
		flops := float64(iters) * l.flopsPerIter * float64(workers)
		results := make([]float64, workers)
		out = append(out, measure(l.name, repeats, flops/1e9, func() {
			parallel(workers, func(w int) { results[w] = l.run(iters) })
		}))
		runtime.KeepAlive(results)
	}
	return out
}

// Read measures the read bandwidth in GB/s: workers goroutines each sum
// their share of a buffer of size bytes (touched first, so its pages
// exist), repeats times.
func Read(workers, repeats, size int) Rate {
	workers, repeats = max(workers, 1), max(repeats, 1)
	buf := make([]float32, max(size/4, 1024))
	for i := range buf {
		buf[i] = float32(i & 1023)
	}
	per := (len(buf) + workers - 1) / workers
	sums := make([]float32, workers)
	r := measure(readName, repeats, float64(len(buf))*4/1e9, func() {
		parallel(workers, func(w int) {
			lo, hi := min(len(buf), w*per), min(len(buf), (w+1)*per)
			sums[w] = sum(buf[lo:hi])
		})
	})
	runtime.KeepAlive(sums)
	return r
}

// measure times f repeats times and turns units per call into a rate.
func measure(name string, repeats int, units float64, f func()) Rate {
	f() // warm up: caches, page tables, frequency
	ts := make([]float64, repeats)
	for i := range ts {
		start := time.Now()
		f()
		ts[i] = time.Since(start).Seconds()
	}
	sort.Float64s(ts)
	med := ts[len(ts)/2]
	if len(ts)%2 == 0 {
		med = (ts[len(ts)/2-1] + ts[len(ts)/2]) / 2
	}
	return Rate{Name: name, Median: units / med, Best: units / ts[0]}
}

func parallel(workers int, f func(w int)) {
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			defer wg.Done()
			f(w)
		}()
	}
	wg.Wait()
}

// loop is one FMA loop: run(n) executes n iterations of flopsPerIter FLOPs
// (and returns a value computed from them, so none is optimised away).
type loop struct {
	name         string
	flopsPerIter float64
	run          func(n int) float64
}

// goLoop is the portable loop: eight independent float64 multiply-add
// chains (the compiler emits a multiply and an add, or an FMA where
// GOAMD64 allows it), two FLOPs each per iteration.
func goLoop(n int) float64 {
	a, b := 0.999999, 1e-9
	x0, x1, x2, x3, x4, x5, x6, x7 := 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0
	for i := 0; i < n; i++ {
		x0 = x0*a + b
		x1 = x1*a + b
		x2 = x2*a + b
		x3 = x3*a + b
		x4 = x4*a + b
		x5 = x5*a + b
		x6 = x6*a + b
		x7 = x7*a + b
	}
	return x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7
}

var goScalar = loop{name: "go scalar", flopsPerIter: 16, run: goLoop}

// sumGeneric is the portable streaming reduction, eight accumulators.
func sumGeneric(v []float32) float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(v); i += 8 {
		x := v[i : i+8 : i+8]
		s0 += x[0]
		s1 += x[1]
		s2 += x[2]
		s3 += x[3]
		s4 += x[4]
		s5 += x[5]
		s6 += x[6]
		s7 += x[7]
	}
	for ; i < len(v); i++ {
		s0 += v[i]
	}
	return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
}
