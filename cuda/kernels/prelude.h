// prelude.h: what tidemark.cu needs from the CUDA headers, for clang's
// device-only compilation without an NVIDIA toolkit (-nocudainc
// -nocudalib): the execution-space attributes, the built-in variables,
// and the intrinsics mapped to clang's NVPTX builtins. The SIMT emulation
// (../emu/simt.h) defines the same names for the host.
#ifndef TM_PRELUDE_H
#define TM_PRELUDE_H

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#include <__clang_cuda_builtin_vars.h>

// Dynamic shared memory, sized by the launch.
#define TM_DYNAMIC_SHARED(T, name) \
  extern __shared__ T tm_dynamic_shared_##name[]; \
  T* name = tm_dynamic_shared_##name

__device__ static inline float __uint_as_float(unsigned u) { return __builtin_bit_cast(float, u); }
__device__ static inline double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
__device__ static inline long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
__device__ static inline float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }

__device__ static inline void __syncwarp(unsigned mask = 0xffffffffu) { __nvvm_bar_warp_sync(mask); }
__device__ static inline unsigned atomicAdd(unsigned* p, unsigned v) {
  return (unsigned)__nvvm_atom_add_gen_i((volatile int*)p, (int)v);
}

#endif
