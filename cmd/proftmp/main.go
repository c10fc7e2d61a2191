package main

import (
	"context"
	"os"
	"runtime/pprof"
	"time"

	"github.com/tidemark/tidemark/bench"
)

func main() {
	f, _ := os.Create("/tmp/k.prof")
	pprof.StartCPUProfile(f)
	rep, err := bench.RunKernels(context.Background(), bench.KernelsConfig{Ns: []int{200000}, Dims: []int{768}, Queries: []int{64}, Repeats: 11, CopyBytes: 1 << 20, PlainBudget: time.Millisecond})
	pprof.StopCPUProfile()
	if err != nil {
		panic(err)
	}
	rep.WriteTable(os.Stdout)
}
