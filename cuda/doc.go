// Package cuda is the fused scoring stage on an NVIDIA GPU: a
// kernels.Backend whose scan, masks, temporal signals and top-k selection
// run as CUDA kernels over a corpus kept in device memory.
//
// # The driver
//
// The CUDA driver API is loaded at run time from libcuda.so.1 (or
// Options.Library, or $TIDEMARK_LIBCUDA) through
// github.com/ebitengine/purego: no cgo, so CGO_ENABLED=0 builds keep
// working and a machine without a driver simply runs the CPU backend
// ([Probe] says why; tidemark gpu-info prints it). The entry points are
// bound by their versioned names (cuMemAlloc_v2, cuMemcpyHtoD_v2,
// cuDevicePrimaryCtxRelease_v2, …, as CUDA 12's and 13's cuda.h define
// them), the device's primary context is used (never cuCtxCreate, whose
// signature changed in CUDA 13), and because a context is current per OS
// thread while goroutines move between threads, one goroutine locked to
// its OS thread owns the context and makes every driver call ([Device]).
// Copies go through a pinned staging buffer. Every failed call is an
// [*Error] with the entry point and the driver's name and description of
// the code; after one that leaves a context unusable (an illegal address,
// a failed launch) the device answers [ErrLost] until it is opened again.
// A backend keeps a device copy of each batch it scores (up to
// BackendOptions.Resident, least recently used dropped first).
//
// # The kernels
//
// kernels/tidemark.cu is CUDA C: tm_fused (one warp per row, up to eight
// queries, the score in double precision: kernels/fused.go's arithmetic
// with its own exp and log, since PTX has no double exponential and no
// libdevice is linked), its two passes for pooled parameters, tm_tile
// (ScoreMany as a tiled product, 32 rows × 16 queries staged in shared
// memory), tm_select and tm_merge (the top k per chunk of rows, with the
// reason counts, then per query, on the device: only k results cross the
// bus). Vectors are stored as float32 or, with
// BackendOptions.BF16, bfloat16; products accumulate in float32. Debian's
// clang-16 compiles it to PTX ISA 7.0 for sm_80 with no NVIDIA toolkit
// (kernels/prelude.h stands in for the CUDA headers); the PTX is
// committed and embedded, the driver JIT-compiles it for sm_80 and every
// newer GPU, go generate rebuilds it and TestPTXUpToDate checks it.
//
// # Verification without a GPU
//
// The same tidemark.cu is compiled for the host by g++ under a SIMT
// emulation (emu/simt.h: every thread of a block a real thread,
// __syncthreads and the warp intrinsics real barriers, __shared__ shared
// by a block's threads) into a fake libcuda.so.1 (emu/fakecuda.cpp) that
// implements the driver entry points the binding uses: device memory is
// host memory with guard zones checked after every launch,
// cuModuleLoadData checks the PTX header and reads its entries,
// cuModuleGetFunction finds the emulated kernel and checks that its
// parameters match the PTX entry's, cuLaunchKernel unpacks the parameter
// array exactly as the driver does, the current context is tracked per
// thread, and errors can be injected. The tests build it
// (internal/fakecuda) and run package kernels' shared backend body
// (kernels/backendtest) on the backend over it, against the float64
// reference, along with the error paths and an engine search compared
// with the CPU's.
//
// What this does not verify: timings on real silicon, and the PTX's JIT
// compilation by a given driver. On a machine with a GPU,
//
//	go test ./cuda -gpu
//
// runs the same tests on the real driver, and tidemark bench kernels
// --backend cuda [--bf16] measures the scan against a device-to-device
// copy in the same run.
package cuda
