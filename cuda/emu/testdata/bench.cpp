// bench: the cost of one rendezvous in the SIMT emulator (simt.h).
//
// Build and run (from the repository root):
//   g++ -std=c++20 -O1 -pthread -o /tmp/bench cuda/emu/testdata/bench.cpp && /tmp/bench [case]
// It is not part of the self-test: timings on a shared machine are noisy, so
// compare builds by running them alternately, several times.
//
// Each case launches one block whose threads do N rendezvous; the time per
// rendezvous is (median launch − median empty launch) / N, medians of 5, so
// that starting the threads is not counted.
#include "../simt.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

struct Args {
  int rounds;
  long long* out;
};

void empty(const void*) {}

void shflXor(const void* p) {
  const Args& a = *static_cast<const Args*>(p);
  const int lane = threadIdx.x % 32;
  long long v = lane;
  for (int i = 0; i < a.rounds; ++i) v += __shfl_xor_sync(0xffffffffu, v, 1 << (i % 5)) & 0xff;
  a.out[threadIdx.x] = v;
}

void syncThreads(const void* p) {
  const Args& a = *static_cast<const Args*>(p);
  static long long shared[1024];
  const unsigned n = blockDim.x;
  long long v = threadIdx.x;
  for (int i = 0; i < a.rounds; ++i) {
    shared[threadIdx.x] = v;
    __syncthreads();
    v += shared[(threadIdx.x + 1) % n] & 0xff;
    __syncthreads();
  }
  a.out[threadIdx.x] = v;
}

double launchMs(void (*body)(const void*), unsigned threads, int rounds, std::vector<long long>& out) {
  Args a{rounds, out.data()};
  char err[512] = "";
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = tm_emu_launch(body, &a, sizeof a, dim3(1), dim3(threads), 0, "bench", 0, err, sizeof err);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (rc != 0) {
    std::fprintf(stderr, "launch failed: %s\n", err);
    std::exit(1);
  }
  return ms;
}

double median5(void (*body)(const void*), unsigned threads, int rounds) {
  std::vector<long long> out(threads);
  std::vector<double> t;
  for (int i = 0; i < 5; ++i) t.push_back(launchMs(body, threads, rounds, out));
  std::sort(t.begin(), t.end());
  return t[2];
}

void report(const char* what, void (*body)(const void*), unsigned threads, int rounds, int perRound) {
  const double base = median5(empty, threads, 0);
  const double ms = median5(body, threads, rounds);
  std::printf("%-34s %4u threads  %5d rendezvous  launch %8.2f ms (empty %5.2f)  %8.2f us/rendezvous\n", what,
              threads, rounds * perRound, ms, base, (ms - base) * 1000.0 / (rounds * perRound));
}

}  // namespace

// With an argument, runs only case number argv[1] (0-3).
int main(int argc, char** argv) {
  const int only = argc > 1 ? std::atoi(argv[1]) : -1;
  if (only < 0 || only == 0) report("__shfl_xor_sync, 1 warp", shflXor, 32, 2000, 1);
  if (only < 0 || only == 1) report("__shfl_xor_sync, 2 warps", shflXor, 64, 2000, 1);
  if (only < 0 || only == 2) report("__syncthreads", syncThreads, 64, 250, 2);
  if (only < 0 || only == 3) report("__syncthreads", syncThreads, 256, 250, 2);
  return 0;
}
