package cuda

import _ "embed"

// The kernels' PTX, compiled from kernels/tidemark.cu by Debian's clang-16
// with no NVIDIA toolkit (kernels/prelude.h stands in for the CUDA
// headers): PTX ISA 7.0 for sm_80, which the driver JIT-compiles for
// sm_80 and every newer GPU (an sm_90a-style target would not be forward
// compatible, and PTX newer than the driver fails with
// CUDA_ERROR_UNSUPPORTED_PTX_VERSION). The PTX is committed, so building
// tidemark needs no clang; TestPTXUpToDate checks it matches its source.
//
//go:generate clang++-16 -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -nocudainc -nocudalib -Xclang -target-feature -Xclang +ptx70 -O3 -S -o kernels/tidemark.ptx kernels/tidemark.cu
//go:embed kernels/tidemark.ptx
var ptx string

// kernelNames are the kernels Open looks up in the module.
var kernelNames = []string{"tm_fused", "tm_tile", "tm_select", "tm_merge"}

// ptxCompileArgs is the go:generate command's arguments, which
// TestPTXUpToDate runs again.
var ptxCompileArgs = []string{"-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80", "-nocudainc", "-nocudalib",
	"-Xclang", "-target-feature", "-Xclang", "+ptx70", "-O3", "-S"}
