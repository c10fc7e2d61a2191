// Toy kernels in the CUDA dialect for the emulator's self-test. They compile
// on the host only through fakecuda.cpp (which includes simt.h first);
// toy.ptx declares the same entries with the same parameter sizes.

struct Pair {
  double a;
  long long b;
};

// c = a + b; threads past n leave at once.
extern "C" __global__ void vec_add(const float* __restrict__ a, const float* __restrict__ b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  c[i] = a[i] + b[i];
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// *out += sum(in[0:n]): a warp reduction, per-warp partials in static shared
// memory, then warp 0 reduces the partials. Every thread takes part in the
// shuffles (those past n contribute 0), as full masks require.
extern "C" __global__ void __launch_bounds__(256) block_sum(const float* in, float* out, int n) {
  __shared__ float partial[32];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float v = warp_sum(i < n ? in[i] : 0.0f);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (int)(blockDim.x / 32) ? partial[lane] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) atomicAdd(out, v);
  }
}

// Reverses each block's slice through dynamic shared memory; probe records
// what each thread found in shared memory before anyone wrote it.
extern "C" __global__ void dyn_reverse(const int* in, int* out, unsigned* probe) {
  TM_DYNAMIC_SHARED(int, buf);
  const unsigned t = threadIdx.x, base = blockIdx.x * blockDim.x;
  probe[base + t] = (unsigned)buf[t];
  __syncthreads();
  buf[t] = in[base + t];
  __syncthreads();
  out[base + t] = buf[blockDim.x - 1 - t];
}

// Parameter unpacking: a struct by value among scalars of several sizes.
extern "C" __global__ void params_probe(Pair p, int i, float f, unsigned char u8, double* out, long long big) {
  if (threadIdx.x != 0) return;
  out[0] = p.a;
  out[1] = (double)p.b;
  out[2] = (double)i;
  out[3] = (double)f;
  out[4] = (double)u8;
  out[5] = (double)big;
}

// Threads at or past `keep` return before a shuffle and a barrier. They
// leave only once the staying threads are (about to be) waiting: lanes of
// the partly staying warp at the shuffle, the rest at the barrier, so that
// the exits are what completes them. The partial warp passes exactly its
// remaining lanes as the mask.
extern "C" __global__ void early_exit(int* out, int keep, int* gates) {
  __shared__ int vals[256];
  const int t = threadIdx.x;
  if (t >= keep) {
    int* gate = &gates[t / 32 == keep / 32 ? 0 : 1];
    while (atomicAdd(gate, 0) < keep) {
    }
    return;
  }
  vals[t] = t * 10;
  const int warpFirst = t / 32 * 32;
  const unsigned mask = keep - warpFirst >= 32 ? 0xffffffffu : (1u << (keep - warpFirst)) - 1;
  atomicAdd(&gates[0], 1);
  const int down = __shfl_down_sync(mask, t, 1);
  atomicAdd(&gates[1], 1);
  __syncthreads();
  out[t] = vals[(t + 1) % keep] * 1000 + down;
}

// Every warp intrinsic, with results per lane (14 words each).
extern "C" __global__ void warp_ops(long long* out) {
  const int lane = threadIdx.x % 32;
  long long* o = out + (blockIdx.x * blockDim.x + threadIdx.x) * 14;
  o[0] = __shfl_sync(0xffffffffu, lane * 3, (lane + 3) % 32);
  o[1] = __shfl_up_sync(0xffffffffu, lane, 1u);
  o[2] = __shfl_down_sync(0xffffffffu, lane, 2u, 16);
  o[3] = __shfl_xor_sync(0xffffffffu, lane, 5);
  o[4] = __ballot_sync(0xffffffffu, lane & 1);
  o[5] = __any_sync(0xffffffffu, lane == 7);
  o[6] = __all_sync(0xffffffffu, lane < 31);
  o[7] = (long long)(__shfl_sync(0xffffffffu, lane + 0.5, 31 - lane) * 2);
  o[8] = __shfl_xor_sync(0xffffffffu, (long long)lane << 40, 1);
  o[9] = (long long)__float_as_uint(__shfl_sync(0xffffffffu, (float)lane, 0, 8));
  __syncwarp();
  o[10] = __popc(__ballot_sync(0xffffffffu, 1));
  o[11] = __shfl_xor_sync(0xffffffffu, lane, 16, 16);  // lanes 0-15 would read a later segment
  o[12] = __shfl_sync(0xffffffffu, lane, lane + 35, 8);
  o[13] = __shfl_up_sync(0xffffffffu, lane, 3u, 8);
}

// Atomics from every thread: counters, min/max, a CAS loop, exchange.
extern "C" __global__ void atomics(int* i, unsigned* u, unsigned long long* ull, float* f, double* d, int* mn,
                                   unsigned* mx, unsigned* cas, int* exch) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(i, 1);
  atomicAdd(u, 2u);
  atomicAdd(ull, 1ull << 33);
  atomicAdd(f, 0.5f);
  atomicAdd(d, 0.25);
  atomicMin(mn, 1000 - t);
  atomicMax(mx, (unsigned)t);
  // The first guess is 0, not a plain read of *cas, which would race
  // with the other threads' CAS.
  unsigned old = 0, seen;
  while ((seen = atomicCAS(cas, old, old + 3)) != old) old = seen;
  atomicExch(exch, 7);
  __threadfence();
}

// Builtins in three dimensions, and block order: thread (0,0,0) of each
// block takes a ticket.
extern "C" __global__ void index3d(unsigned* out, unsigned* order, unsigned* ticket) {
  const unsigned blockLinear = blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y;
  const unsigned threadLinear = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
  const unsigned n = blockDim.x * blockDim.y * blockDim.z;
  out[blockLinear * n + threadLinear] = threadIdx.x | threadIdx.y << 4 | threadIdx.z << 8 | blockIdx.x << 12 |
                                        blockIdx.y << 16 | blockIdx.z << 20;
  if (threadLinear == 0) order[blockLinear] = atomicAdd(ticket, 1u);
}

// Deadlock: lane 0 of warp 0 waits at __syncthreads while its warp's other
// lanes wait for it at __syncwarp.
extern "C" __global__ void deadlock(int* out) {
  if (threadIdx.x == 0) __syncthreads();
  else if (threadIdx.x < 32) __syncwarp();
  else __syncthreads();
  out[threadIdx.x] = 1;
}

// Writes one element past its buffer.
extern "C" __global__ void overflow(int* buf, int n) {
  if (threadIdx.x == 0) buf[n] = 42;
}

// A half mask from a full warp: the launch must fail.
extern "C" __global__ void bad_mask(float* out) { out[threadIdx.x] = __shfl_sync(0x0000ffffu, 1.0f, 0); }

// Thread 5 traps.
extern "C" __global__ void trap5(int* out) {
  if (threadIdx.x == 5) __trap();
  __syncthreads();
  out[threadIdx.x] = 1;
}

// Thread 0 spins, with no barrier, until the host sets *flag; the others
// return. The watchdog fails the launch and leaves thread 0 detached.
extern "C" __global__ void spin(int* flag) {
  if (threadIdx.x != 0) return;
  while (atomicAdd(flag, 0) == 0) {
  }
}

#define TM_KERNEL_LIST(X) \
  X(vec_add) X(block_sum) X(dyn_reverse) X(params_probe) X(early_exit) X(warp_ops) X(atomics) X(index3d) \
  X(deadlock) X(overflow) X(bad_mask) X(trap5) X(spin)
