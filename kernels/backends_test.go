package kernels_test

import (
	"testing"

	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/kernels/backendtest"
)

// TestBackends runs the shared backend test body on every backend of this
// package: those Backends returns, a CPU backend with tiny chunks (which
// exercises the parallel split and the chunk boundaries even on small
// inputs) and Plain. Plain's sequential float32 sum has a larger cosine
// error than package simd's dot products: 2.0e-6 at worst over 3000 pairs
// (half of them near-copies, cos ≈ 0.95) at d = 33…1536, against 2.2e-7
// with AVX2 and 2.6e-7 generic (noasm); its bound is 5e-6, the CPU's the
// default 5.5e-7.
func TestBackends(t *testing.T) {
	for _, be := range kernels.Backends() {
		t.Run(be.Name(), func(t *testing.T) { backendtest.Run(t, be, backendtest.Options{}) })
	}
	small := kernels.NewCPU(&kernels.CPUOptions{Workers: 3, ChunkRows: 7, BlockRows: 5})
	defer small.Close()
	t.Run("cpu-small-chunks", func(t *testing.T) { backendtest.Run(t, small, backendtest.Options{}) })
	t.Run("plain-go", func(t *testing.T) { backendtest.Run(t, kernels.Plain{}, backendtest.Options{SimErr: 5e-6}) })
}
