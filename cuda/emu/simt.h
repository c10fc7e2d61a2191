// simt.h: the CUDA kernel language on the host, by SIMT emulation.
//
// A kernel source written in the CUDA dialect compiles unchanged with
// `g++ -std=c++20 -x c++` once this header comes first. Every CUDA thread of
// a block is a real std::thread, so barriers, warp shuffles and atomics are
// executed, not simulated: a kernel whose synchronisation is wrong fails here
// (deadlock, wrong data, bad mask) much as it would on a GPU.
//
// One block runs at a time. That is what makes `__shared__` → `static` sound:
// a static local is shared by every thread of the block that is running, and
// no other block exists at that moment. The price is that static shared
// memory is zero-initialised once and keeps its contents from one block (and
// one launch) to the next, where a GPU gives each block undefined contents;
// dynamic shared memory (TM_DYNAMIC_SHARED) does not have that gap: it is
// refilled with 0xFF bytes before every block.
//
// The launch engine is tm_emu_launch at the end of this file.
#pragma once

#include <math.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cfloat>
#include <chrono>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#define TM_EMULATION 1

// ---------------------------------------------------------------------------
// Declaration specifiers. Device and host code are one and the same here.
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static

// TM_DYNAMIC_SHARED(T, name) declares `T* name`, the launch's dynamic shared
// memory (sharedMemBytes of cuLaunchKernel) for the running block. Use it in
// a kernel's body only: at file scope it would be evaluated once, outside any
// launch. On the device the kernel prelude defines it as `extern __shared__`.
#define TM_DYNAMIC_SHARED(T, name) T* name = static_cast<T*>(::tm_emu::dynamic_shared())

// ---------------------------------------------------------------------------
// Built-in variables.
struct uint3 {
  unsigned int x, y, z;
};

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
};

// Each emulated CUDA thread is an OS thread, so thread_local gives every
// thread its own builtins; the launch engine sets them.
inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;
inline constexpr int warpSize = 32;

namespace tm_emu {

inline constexpr unsigned kWarp = 32;
inline constexpr unsigned kMaxThreads = 1024;
inline constexpr unsigned kDefaultWatchdogMs = 10000;
// Guard bytes each side of the dynamic shared memory, checked after each
// block; 256 keeps the memory itself 256-byte aligned like a GPU's.
inline constexpr size_t kSharedGuard = 256;
inline constexpr unsigned char kSharedGuardByte = 0xA5;

__attribute__((format(printf, 1, 2))) inline std::string fmt(const char* f, ...) {
  va_list ap;
  va_start(ap, f);
  va_list ap2;
  va_copy(ap2, ap);
  const int n = std::vsnprintf(nullptr, 0, f, ap);
  va_end(ap);
  std::string s(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(s.data(), s.size() + 1, f, ap2);
  va_end(ap2);
  return s;
}

// Unwinds a kernel thread once its launch has failed for another reason, so
// that threads blocked at a barrier leave instead of hanging.
struct Aborted {};

// A fault the kernel itself caused (bad warp mask, __trap): fails the launch
// with what().
struct Fault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Rendezvous are lock-free: arrivals and exits are single atomic
// read-modify-writes on a word that holds both who must come and who has
// come, so exactly one thread (the one whose arrival or exit makes the two
// equal) sees the rendezvous complete, and completes it. Waiters sleep on a
// separate 32-bit generation word with std::atomic::wait (a futex): the
// completer bumps it and wakes them, and none of them has to re-acquire a
// lock on the way out. (A mutex and condition variables shared by the whole
// launch made every wake-up a convoy through that mutex: 0.3 ms per warp
// rendezvous, 3 ms per __syncthreads of 256 threads, on two cores.) The
// launch's mutex remains for the rare paths only: block start and end,
// thread end, abort.
//
// Generation words count in steps of 2; bit 0 is set once the launch
// aborts, which changes the word and so also wakes (and unwinds) sleepers.
inline constexpr uint32_t kAbortBit = 1;
inline constexpr uint32_t kGenStep = 2;

// Counts (block barrier) or lane bits (warp) packed as `live << 32 | arrived`.
inline constexpr uint32_t arrivedOf(uint64_t s) { return static_cast<uint32_t>(s); }
inline constexpr uint32_t liveOf(uint64_t s) { return static_cast<uint32_t>(s >> 32); }
inline constexpr uint64_t kLiveOne = uint64_t{1} << 32;

// A waiter yields this many times before it sleeps. On a 2-core VM with 32
// threads per warp, where a futex sleep plus its wake-up costs several times
// a yield, going straight to sleep made a warp rendezvous about twice as
// slow: yielding lets the lanes yet to arrive run, and mostly the rendezvous
// completes before the waiter has to sleep (and be woken). Spinning without
// yielding (pause) was far worse: it takes the core from those lanes.
inline constexpr int kYieldsBeforeSleep = 4;

// Waits until `gen` moves on from `seen`; unwinds if it moved because the
// launch aborted (a launch that fails just after this rendezvous completed
// may unwind here too: it fails either way).
inline void awaitGeneration(const std::atomic<uint32_t>& gen, uint32_t seen) {
  for (int i = 0; i < kYieldsBeforeSleep && gen.load(std::memory_order_acquire) == seen; ++i)
    std::this_thread::yield();
  uint32_t now;
  while ((now = gen.load(std::memory_order_acquire)) == seen) gen.wait(seen, std::memory_order_acquire);
  if (now & kAbortBit) throw Aborted{};
}

// The warp-level rendezvous: every live lane deposits a 64-bit word, and the
// rendezvous completes when every lane that has not exited has arrived.
// Aligned so that two warps' hot words do not share a cache line.
struct alignas(64) Warp {
  // live lanes (those still running the kernel in this block) << 32 | lanes
  // waiting at the current rendezvous.
  std::atomic<uint64_t> state{0};
  std::atomic<uint32_t> gen{0};  // see kAbortBit
  // A lane writes its own entries below before it arrives; the completer
  // reads them all after the arrival or exit that completes, and waiters read
  // them after seeing the generation move on: both are ordered by the
  // atomics above, so plain memory suffices.
  //
  // Double-buffered by generation parity: a lane that races ahead to the
  // next rendezvous writes the other buffer, and cannot reach the one after
  // that before every lane has arrived at (so finished reading) this one. So
  // one barrier per intrinsic suffices.
  uint64_t slot[2][kWarp] = {};
  unsigned mask[2][kWarp] = {};     // the mask each lane passed
  const char* op[2][kWarp] = {};    // the intrinsic each lane called, for messages
  unsigned members[2] = {0, 0};     // the lanes that took part, set by the completer
  std::string fault;  // set when a rendezvous completed with a bad mask
};

class Launch;
// The launch and linear thread id (x + y·bx + z·bx·by) of the calling
// emulated thread; null / 0 on any other thread.
inline thread_local Launch* tLaunch = nullptr;
inline thread_local unsigned tLinear = 0;

class Launch {
 public:
  Launch(void (*body)(const void*), const void* args, size_t argsBytes, dim3 grid, dim3 block, size_t dynBytes,
         const char* name, unsigned watchdogMs)
      : body_(body),
        args_(static_cast<const unsigned char*>(args), static_cast<const unsigned char*>(args) + argsBytes),
        grid_(grid),
        block_(block),
        nthreads_(block.x * block.y * block.z),
        nblocks_(static_cast<unsigned long long>(grid.x) * grid.y * grid.z),
        dynBytes_(dynBytes),
        name_(name ? name : "?"),
        watchdog_(watchdogMs ? watchdogMs : kDefaultWatchdogMs),
        warps_((nthreads_ + kWarp - 1) / kWarp),
        doneFlags_(nthreads_, 0),
        dynStore_(dynBytes + 3 * kSharedGuard) {
    // A full guard in front, then the first 256-aligned address: the store
    // has room for up to 255 bytes of slack, the memory and the back guard.
    const uintptr_t store = reinterpret_cast<uintptr_t>(dynStore_.data());
    const uintptr_t aligned = (store + 2 * kSharedGuard - 1) & ~static_cast<uintptr_t>(kSharedGuard - 1);
    dyn_ = dynStore_.data() + (aligned - store);
  }

  // Runs the whole grid; returns "" or why the launch failed.
  static std::string run(const std::shared_ptr<Launch>& self);

  const std::string& name() const { return name_; }
  unsigned char* dynamicShared() const { return dyn_; }

  // __syncthreads: every thread of the block that has not exited.
  void syncthreads() {
    progress_.fetch_add(1, std::memory_order_relaxed);
    // Read before arriving: the barrier cannot complete without us, so this
    // is the generation of the barrier we are about to wait at.
    const uint32_t gen = barGen_.load(std::memory_order_acquire);
    if (gen & kAbortBit) throw Aborted{};
    // acq_rel: our writes before the barrier reach the completer, and from
    // it (through barGen_) every thread after the barrier.
    const uint64_t now = barState_.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (arrivedOf(now) == liveOf(now)) completeBarrier();
    else awaitGeneration(barGen_, gen);
  }

  // The calling lane deposits `mine`, waits for every live lane of its warp,
  // and returns pick(deposits, lanes that took part, own lane). Every lane
  // evaluates pick on the same deposits, which stay unchanged until it has
  // arrived at its next rendezvous.
  template <class Pick>
  auto warpExchange(unsigned mask, uint64_t mine, const char* op, Pick pick) {
    const unsigned lane = tLinear % kWarp;
    const unsigned warpIndex = tLinear / kWarp;
    Warp& w = warps_[warpIndex];
    progress_.fetch_add(1, std::memory_order_relaxed);
    const uint32_t gen = w.gen.load(std::memory_order_acquire);
    if (gen & kAbortBit) throw Aborted{};
    const unsigned p = gen / kGenStep & 1;
    w.slot[p][lane] = mine;
    w.mask[p][lane] = mask;
    w.op[p][lane] = op;
    const uint64_t bit = uint64_t{1} << lane;
    const uint64_t now = w.state.fetch_or(bit, std::memory_order_acq_rel) | bit;
    if (arrivedOf(now) == liveOf(now)) completeWarp(w, warpIndex, arrivedOf(now), p);
    else awaitGeneration(w.gen, gen);
    if (!w.fault.empty()) throw Fault(w.fault);
    return pick(w.slot[p], w.members[p], lane);
  }

  // Where the calling thread is, for messages.
  static std::string where();

 private:
  static void workerMain(std::shared_ptr<Launch> self, unsigned linear);
  void runBlock(unsigned long long b);
  void waitBlock();
  void windDown(std::vector<std::thread>& threads);
  void threadExit(unsigned linear);
  void abort(const std::string& why);
  std::string stallReport();
  uint3 blockCoord(unsigned long long b) const {
    return uint3{static_cast<unsigned>(b % grid_.x), static_cast<unsigned>(b / grid_.x % grid_.y),
                 static_cast<unsigned>(b / (static_cast<unsigned long long>(grid_.x) * grid_.y))};
  }
  // Called by the one thread whose arrival or exit made every live thread
  // of the block arrived. Until the generation moves on, nobody else touches
  // barState_: every live thread is waiting.
  void completeBarrier() {
    barState_.fetch_and(~uint64_t{0xffffffff}, std::memory_order_relaxed);  // arrived = 0
    progress_.fetch_add(1, std::memory_order_relaxed);
    barGen_.fetch_add(kGenStep, std::memory_order_release);
    barGen_.notify_all();
  }
  // The same for warp `warpIndex`, whose lanes `arrived` (all its live lanes)
  // wrote buffer p.
  void completeWarp(Warp& w, unsigned warpIndex, unsigned arrived, unsigned p) {
    // Every lane must pass exactly the warp's live lanes.
    const unsigned first = static_cast<unsigned>(std::countr_zero(arrived));
    const unsigned want = w.mask[p][first];
    unsigned other = first;
    for (unsigned l = first; l < kWarp; ++l)
      if ((arrived >> l & 1u) && w.mask[p][l] != want) {
        other = l;
        break;
      }
    if (other != first) {
      w.fault = fmt(
          "kernel %s: %s in warp %u of block (%u,%u,%u): lanes passed different masks (lane %u 0x%08x, lane %u "
          "0x%08x), but the lanes that have not exited are 0x%08x (the emulator requires mask == those lanes)",
          name_.c_str(), w.op[p][first], warpIndex, blockIdx.x, blockIdx.y, blockIdx.z, first, want, other,
          w.mask[p][other], arrived);
    } else if (want != arrived) {
      w.fault = fmt(
          "kernel %s: %s in warp %u of block (%u,%u,%u): mask 0x%08x, but the lanes that have not exited "
          "are 0x%08x (the emulator requires mask == those lanes)",
          name_.c_str(), w.op[p][first], warpIndex, blockIdx.x, blockIdx.y, blockIdx.z, want, arrived);
    }
    w.members[p] = arrived;
    w.state.fetch_and(~uint64_t{0xffffffff}, std::memory_order_relaxed);  // arrived = 0
    progress_.fetch_add(1, std::memory_order_relaxed);
    w.gen.fetch_add(kGenStep, std::memory_order_release);
    w.gen.notify_all();
  }
  unsigned initialLanes(unsigned warpIndex) const {
    const unsigned n = std::min(kWarp, nthreads_ - warpIndex * kWarp);
    return n == kWarp ? ~0u : (1u << n) - 1;
  }

  void (*const body_)(const void*);
  // The launch's own copy of the argument bytes: a thread detached after a
  // failure may still read them when the caller's copy is long gone.
  const std::vector<unsigned char> args_;
  const dim3 grid_, block_;
  const unsigned nthreads_;
  const unsigned long long nblocks_;
  const size_t dynBytes_;
  const std::string name_;
  const std::chrono::milliseconds watchdog_;
  std::vector<Warp> warps_;

  // The block barrier: threads of the block not yet exited << 32 | threads
  // waiting at it; and its generation (see kAbortBit).
  alignas(64) std::atomic<uint64_t> barState_{0};
  std::atomic<uint32_t> barGen_{0};
  // Block start: the number of blocks released so far (mod 2^31) times
  // kGenStep, plus kAbortBit; workers sleep on it between blocks.
  alignas(64) std::atomic<uint32_t> startGen_{0};
  std::atomic<unsigned> finished_{0};  // threads done with the current block
  std::atomic<bool> aborted_{false};

  // The rare paths: the launching thread's waits, thread ends, abort.
  // Everything below is guarded by mu_.
  std::mutex mu_;
  std::condition_variable coordCv_;  // the launching thread
  unsigned long long started_ = 0;   // blocks released so far
  unsigned done_ = 0;                // threads done with the whole launch
  std::vector<char> doneFlags_;
  std::string why_;
  // Bumped at every barrier arrival and completion and thread exit: the
  // watchdog's notion of progress. (Shared by all threads, but a relaxed
  // increment is cheap next to a rendezvous.)
  std::atomic<unsigned long long> progress_{0};

  std::vector<unsigned char> dynStore_;
  unsigned char* dyn_ = nullptr;
};

// The launch the calling emulated thread belongs to. A device intrinsic
// called from plain host code is a programming error with nobody to report
// to, so it ends the process loudly.
inline Launch& current(const char* what) {
  if (!tLaunch) {
    std::fprintf(stderr, "tm_emu: %s called outside a kernel launch\n", what);
    std::abort();
  }
  return *tLaunch;
}

inline void* dynamic_shared() { return current("TM_DYNAMIC_SHARED").dynamicShared(); }

inline std::string Launch::where() {
  return fmt("thread (%u,%u,%u) of block (%u,%u,%u)", threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x,
             blockIdx.y, blockIdx.z);
}

inline void Launch::abort(const std::string& why) {
  {
    std::lock_guard lk(mu_);
    if (aborted_.load()) return;  // the first reason is the one reported
    why_ = why;
    aborted_.store(true);
  }
  // Setting the abort bit changes every word a thread may sleep on, so a
  // thread that read it just before cannot go to sleep on a value that will
  // never change again; and one that reads it after sees the bit.
  auto wake = [](std::atomic<uint32_t>& gen) {
    gen.fetch_or(kAbortBit);
    gen.notify_all();
  };
  for (Warp& w : warps_) wake(w.gen);
  wake(barGen_);
  wake(startGen_);
  std::lock_guard lk(mu_);
  coordCv_.notify_all();
}

inline void Launch::threadExit(unsigned linear) {
  // An exited lane counts as arrived at every later barrier (Volta and
  // later), so its absence may complete the one its peers wait at. After a
  // failure the barrier state is stale (lanes unwound from inside a
  // barrier), and every waiter is woken by abort anyway.
  const unsigned lane = linear % kWarp;
  Warp& w = warps_[linear / kWarp];
  const uint64_t bit = uint64_t{1} << (32 + lane);
  const uint64_t warpNow = w.state.fetch_and(~bit, std::memory_order_acq_rel) & ~bit;
  if (!aborted_.load() && arrivedOf(warpNow) != 0 && arrivedOf(warpNow) == liveOf(warpNow))
    completeWarp(w, linear / kWarp, arrivedOf(warpNow), w.gen.load(std::memory_order_relaxed) / kGenStep & 1);
  const uint64_t barNow = barState_.fetch_sub(kLiveOne, std::memory_order_acq_rel) - kLiveOne;
  if (!aborted_.load() && arrivedOf(barNow) != 0 && arrivedOf(barNow) == liveOf(barNow)) completeBarrier();
  progress_.fetch_add(1, std::memory_order_relaxed);
  // acq_rel: the launching thread, which reads finished_ with acquire, then
  // sees everything the block did (it checks the shared memory guards).
  if (finished_.fetch_add(1, std::memory_order_acq_rel) + 1 == nthreads_) {
    // Under mu_, so that the launching thread is either before its check of
    // finished_ or asleep on coordCv_, not in between.
    std::lock_guard lk(mu_);
    coordCv_.notify_all();
  }
}

inline void Launch::workerMain(std::shared_ptr<Launch> self, unsigned linear) {
  Launch& L = *self;
  tLaunch = &L;
  tLinear = linear;
  threadIdx = uint3{linear % L.block_.x, linear / L.block_.x % L.block_.y, linear / (L.block_.x * L.block_.y)};
  blockDim = L.block_;
  gridDim = L.grid_;
  for (unsigned long long b = 0; b < L.nblocks_; ++b) {
    // Block b is released when startGen_ moves on from b blocks released
    // (it cannot move further before this thread has finished block b).
    const uint32_t waiting = static_cast<uint32_t>(b) * kGenStep;
    L.startGen_.wait(waiting, std::memory_order_acquire);
    if (L.startGen_.load(std::memory_order_acquire) & kAbortBit) break;
    blockIdx = L.blockCoord(b);
    try {
      L.body_(L.args_.data());
    } catch (const Aborted&) {
      // Another thread's failure is the one reported.
    } catch (const Fault& e) {
      L.abort(e.what());
    } catch (const std::exception& e) {
      L.abort(fmt("kernel %s: %s threw: %s", L.name_.c_str(), where().c_str(), e.what()));
    } catch (...) {
      L.abort(fmt("kernel %s: %s threw an exception that is not a std::exception", L.name_.c_str(),
                  where().c_str()));
    }
    L.threadExit(linear);
  }
  tLaunch = nullptr;
  std::lock_guard lk(L.mu_);
  ++L.done_;
  L.doneFlags_[linear] = 1;
  L.progress_.fetch_add(1, std::memory_order_relaxed);
  L.coordCv_.notify_all();
}

inline void Launch::runBlock(unsigned long long b) {
  {
    std::lock_guard lk(mu_);
    if (aborted_.load()) return;
    // Every thread has finished the previous block, so nobody else touches
    // this state until startGen_ releases the block (and publishes it).
    for (unsigned i = 0; i < warps_.size(); ++i) {
      warps_[i].state.store(uint64_t{initialLanes(i)} << 32, std::memory_order_relaxed);
      warps_[i].fault.clear();
    }
    barState_.store(uint64_t{nthreads_} << 32, std::memory_order_relaxed);
    finished_.store(0, std::memory_order_relaxed);
    // A GPU gives each block shared memory with undefined contents; 0xFF
    // bytes (NaN floats, -1 integers) make a read of never-written shared
    // memory show up in results.
    std::memset(dyn_ - kSharedGuard, kSharedGuardByte, kSharedGuard);
    std::memset(dyn_, 0xFF, dynBytes_);
    std::memset(dyn_ + dynBytes_, kSharedGuardByte, kSharedGuard);
    started_ = b + 1;
    startGen_.fetch_add(kGenStep, std::memory_order_release);
  }
  startGen_.notify_all();
  waitBlock();
  if (aborted_.load()) return;
  for (size_t i = 0; i < kSharedGuard; ++i) {
    long long off = 0;
    if (dyn_[-1 - static_cast<long long>(i)] != kSharedGuardByte) off = -1 - static_cast<long long>(i);
    else if (dyn_[dynBytes_ + i] != kSharedGuardByte) off = static_cast<long long>(dynBytes_ + i);
    else continue;
    const uint3 c = blockCoord(b);
    abort(fmt("kernel %s: block (%u,%u,%u) wrote outside its %zu bytes of dynamic shared memory (byte at "
              "offset %lld)",
              name_.c_str(), c.x, c.y, c.z, dynBytes_, off));
    return;
  }
}

// Called with mu_ held: what the stuck block's threads are doing.
inline std::string Launch::stallReport() {
  unsigned atWarp = 0;
  for (Warp& w : warps_) atWarp += std::popcount(arrivedOf(w.state.load()));
  return fmt("%u of %u threads exited, %u waiting at __syncthreads, %u at warp intrinsics, the rest running",
             finished_.load(), nthreads_, arrivedOf(barState_.load()), atWarp);
}

inline void Launch::waitBlock() {
  using clock = std::chrono::steady_clock;
  const auto slice = std::max(std::chrono::milliseconds(1), std::min(watchdog_ / 4, std::chrono::milliseconds(100)));
  std::unique_lock lk(mu_);
  auto seen = progress_.load();
  auto since = clock::now();
  while (finished_.load(std::memory_order_acquire) < nthreads_ && !aborted_.load()) {
    coordCv_.wait_for(lk, slice);
    const auto now = progress_.load();
    if (now != seen) {
      seen = now;
      since = clock::now();
      continue;
    }
    if (clock::now() - since < watchdog_) continue;
    const uint3 c = blockCoord(started_ - 1);
    const std::string why =
        fmt("kernel %s: watchdog: block (%u,%u,%u) made no progress for %lld ms (%s): a deadlock, e.g. a "
            "barrier some threads never reach, or a loop that does not end",
            name_.c_str(), c.x, c.y, c.z, static_cast<long long>(watchdog_.count()), stallReport().c_str());
    lk.unlock();
    abort(why);
    lk.lock();
  }
}

// After the last block, or a failure: wait for the threads to leave. Those
// that make no progress for another watchdog period (a thread spinning in a
// loop without barriers cannot be interrupted) are detached and leaked: they
// keep a reference to this Launch, so its memory and the argument copy stay
// valid, but they may go on touching device memory the caller frees later;
// the caller must treat the process as tainted (fakecuda marks the context
// failed).
inline void Launch::windDown(std::vector<std::thread>& threads) {
  using clock = std::chrono::steady_clock;
  std::vector<char> done;
  {
    std::unique_lock lk(mu_);
    auto seen = progress_.load();
    auto since = clock::now();
    while (done_ < threads.size()) {
      coordCv_.wait_for(lk, std::chrono::milliseconds(100));
      const auto now = progress_.load();
      if (now != seen) {
        seen = now;
        since = clock::now();
      } else if (clock::now() - since >= watchdog_) {
        break;  // only after a failure: a finished block's threads leave at once
      }
    }
    done = doneFlags_;
  }
  for (size_t i = 0; i < threads.size(); ++i) {
    if (done[i]) threads[i].join();
    else threads[i].detach();
  }
}

inline std::string Launch::run(const std::shared_ptr<Launch>& self) {
  Launch& L = *self;
  std::vector<std::thread> threads;
  threads.reserve(L.nthreads_);
  // Emulated threads inherit a mask blocking every signal, so the host
  // process's handlers (a Go runtime's, say) only ever run on its own
  // threads. Faults in kernel code are synchronous and still delivered.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    for (unsigned i = 0; i < L.nthreads_; ++i) threads.emplace_back(&Launch::workerMain, self, i);
  } catch (const std::system_error& e) {
    L.abort(fmt("kernel %s: could not start emulated thread %zu of %u: %s", L.name_.c_str(), threads.size(),
                L.nthreads_, e.what()));
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  for (unsigned long long b = 0; b < L.nblocks_ && !L.aborted_.load(); ++b) L.runBlock(b);
  L.windDown(threads);
  std::lock_guard lk(L.mu_);
  return L.why_;
}

// ---------------------------------------------------------------------------
// Warp intrinsics' helpers.
template <class T>
concept ShuffleType = std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && (sizeof(T) == 4 || sizeof(T) == 8);

// src(lane) is the source lane, or -1 for "own value" (CUDA's rule for a
// source outside the caller's segment). A source lane that has exited also
// yields the caller's own value.
template <ShuffleType T, class Src>
T shuffle(unsigned mask, T var, int width, const char* op, Src src) {
  Launch& L = current(op);
  if (width < 1 || width > warpSize || !std::has_single_bit(static_cast<unsigned>(width)))
    throw Fault(fmt("kernel %s: %s in %s: width %d is not a power of two in [1, 32]", L.name().c_str(), op,
                    Launch::where().c_str(), width));
  uint64_t mine = 0;
  std::memcpy(&mine, &var, sizeof(T));
  const uint64_t got = L.warpExchange(mask, mine, op, [&](const uint64_t* slots, unsigned members, unsigned lane) {
    const long long s = src(lane);
    return (s >= 0 && s < static_cast<long long>(kWarp) && (members >> s & 1u)) ? slots[s] : slots[lane];
  });
  T out;
  std::memcpy(&out, &got, sizeof(T));
  return out;
}

struct Vote {
  unsigned ballot, members;
};

inline Vote vote(unsigned mask, int pred, const char* op) {
  return current(op).warpExchange(mask, pred != 0, op, [](const uint64_t* slots, unsigned members, unsigned) {
    unsigned b = 0;
    for (unsigned l = 0; l < kWarp; ++l)
      if ((members >> l & 1u) && slots[l]) b |= 1u << l;
    return Vote{b, members};
  });
}

// Read-modify-write by compare-and-swap, for operations std::atomic_ref
// lacks (min, max).
template <class T, class F>
T atomicUpdate(T* addr, F f) {
  std::atomic_ref<T> r(*addr);
  T old = r.load();
  while (!r.compare_exchange_weak(old, f(old))) {
  }
  return old;
}

template <class T>
T cas(T* a, T compare, T v) {
  // On failure compare_exchange stores the current value into `compare`; on
  // success it already equals it: either way it is the old value.
  std::atomic_ref<T>(*a).compare_exchange_strong(compare, v);
  return compare;
}

}  // namespace tm_emu

// ---------------------------------------------------------------------------
// Synchronisation.
inline void __syncthreads() { tm_emu::current("__syncthreads").syncthreads(); }

inline void __syncwarp(unsigned mask = 0xffffffffu) {
  tm_emu::current("__syncwarp").warpExchange(mask, 0, "__syncwarp", [](const uint64_t*, unsigned, unsigned) {
    return 0;
  });
}

inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// Fails the launch, as a device-side trap makes a GPU launch fail.
[[noreturn]] inline void __trap() {
  throw tm_emu::Fault(tm_emu::fmt("kernel %s: __trap() in %s", tm_emu::current("__trap").name().c_str(),
                                  tm_emu::Launch::where().c_str()));
}

// ---------------------------------------------------------------------------
// Warp shuffles and votes. The groups are 32 consecutive linear thread ids
// (x + y·bx + z·bx·by). `mask` must be exactly the lanes of the warp that
// have not exited, or the launch fails.
template <tm_emu::ShuffleType T>
inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize) {
  return tm_emu::shuffle(mask, var, width, "__shfl_sync", [=](unsigned lane) -> long long {
    const unsigned w = static_cast<unsigned>(width);
    return (lane & ~(w - 1)) + (static_cast<unsigned>(srcLane) & (w - 1));
  });
}

template <tm_emu::ShuffleType T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  return tm_emu::shuffle(mask, var, width, "__shfl_up_sync", [=](unsigned lane) -> long long {
    return (lane & (static_cast<unsigned>(width) - 1)) >= delta ? static_cast<long long>(lane) - delta : -1;
  });
}

template <tm_emu::ShuffleType T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  return tm_emu::shuffle(mask, var, width, "__shfl_down_sync", [=](unsigned lane) -> long long {
    const unsigned long long inSeg = lane & (static_cast<unsigned>(width) - 1);
    return inSeg + delta < static_cast<unsigned>(width) ? static_cast<long long>(lane + delta) : -1;
  });
}

template <tm_emu::ShuffleType T>
inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize) {
  return tm_emu::shuffle(mask, var, width, "__shfl_xor_sync", [=](unsigned lane) -> long long {
    // Lanes may read earlier segments but not later ones.
    const unsigned src = lane ^ static_cast<unsigned>(laneMask);
    const unsigned end = (lane & ~(static_cast<unsigned>(width) - 1)) + static_cast<unsigned>(width);
    return src < end ? static_cast<long long>(src) : -1;
  });
}

inline unsigned __ballot_sync(unsigned mask, int pred) { return tm_emu::vote(mask, pred, "__ballot_sync").ballot; }
inline int __any_sync(unsigned mask, int pred) { return tm_emu::vote(mask, pred, "__any_sync").ballot != 0; }
inline int __all_sync(unsigned mask, int pred) {
  const tm_emu::Vote v = tm_emu::vote(mask, pred, "__all_sync");
  return v.ballot == v.members;
}

// ---------------------------------------------------------------------------
// Atomics. Return the old value, as CUDA's do.
inline int atomicAdd(int* a, int v) { return std::atomic_ref<int>(*a).fetch_add(v); }
inline unsigned atomicAdd(unsigned* a, unsigned v) { return std::atomic_ref<unsigned>(*a).fetch_add(v); }
inline unsigned long long atomicAdd(unsigned long long* a, unsigned long long v) {
  return std::atomic_ref<unsigned long long>(*a).fetch_add(v);
}
inline float atomicAdd(float* a, float v) { return std::atomic_ref<float>(*a).fetch_add(v); }
inline double atomicAdd(double* a, double v) { return std::atomic_ref<double>(*a).fetch_add(v); }

inline int atomicMin(int* a, int v) { return tm_emu::atomicUpdate(a, [v](int o) { return std::min(o, v); }); }
inline unsigned atomicMin(unsigned* a, unsigned v) {
  return tm_emu::atomicUpdate(a, [v](unsigned o) { return std::min(o, v); });
}
inline int atomicMax(int* a, int v) { return tm_emu::atomicUpdate(a, [v](int o) { return std::max(o, v); }); }
inline unsigned atomicMax(unsigned* a, unsigned v) {
  return tm_emu::atomicUpdate(a, [v](unsigned o) { return std::max(o, v); });
}

inline int atomicCAS(int* a, int c, int v) { return tm_emu::cas(a, c, v); }
inline unsigned atomicCAS(unsigned* a, unsigned c, unsigned v) { return tm_emu::cas(a, c, v); }
inline unsigned long long atomicCAS(unsigned long long* a, unsigned long long c, unsigned long long v) {
  return tm_emu::cas(a, c, v);
}

inline int atomicExch(int* a, int v) { return std::atomic_ref<int>(*a).exchange(v); }
inline unsigned atomicExch(unsigned* a, unsigned v) { return std::atomic_ref<unsigned>(*a).exchange(v); }
inline unsigned long long atomicExch(unsigned long long* a, unsigned long long v) {
  return std::atomic_ref<unsigned long long>(*a).exchange(v);
}
inline float atomicExch(float* a, float v) { return std::atomic_ref<float>(*a).exchange(v); }

// ---------------------------------------------------------------------------
// Loads, bit reinterpretation, arithmetic.
template <class T>
inline T __ldg(const T* p) {
  return *p;
}

inline float __int_as_float(int v) { return std::bit_cast<float>(v); }
inline int __float_as_int(float v) { return std::bit_cast<int>(v); }
inline float __uint_as_float(unsigned v) { return std::bit_cast<float>(v); }
inline unsigned __float_as_uint(float v) { return std::bit_cast<unsigned>(v); }
inline long long __double_as_longlong(double v) { return std::bit_cast<long long>(v); }
inline double __longlong_as_double(long long v) { return std::bit_cast<double>(v); }

// fmaf and fma come from <math.h>. Note the GPU also contracts a*b+c into an
// FMA by default, which the host build does not: compare results with a
// tolerance.
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float rsqrtf(float v) { return 1.0f / std::sqrt(v); }

inline int __popc(unsigned v) { return std::popcount(v); }
inline int __popcll(unsigned long long v) { return std::popcount(v); }
inline int __clz(int v) { return std::countl_zero(static_cast<unsigned>(v)); }
inline int __ffs(int v) { return v == 0 ? 0 : std::countr_zero(static_cast<unsigned>(v)) + 1; }

// CUDA's min and max for equal argument types.
inline int min(int a, int b) { return std::min(a, b); }
inline unsigned min(unsigned a, unsigned b) { return std::min(a, b); }
inline long long min(long long a, long long b) { return std::min(a, b); }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return std::min(a, b); }
inline float min(float a, float b) { return fminf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline int max(int a, int b) { return std::max(a, b); }
inline unsigned max(unsigned a, unsigned b) { return std::max(a, b); }
inline long long max(long long a, long long b) { return std::max(a, b); }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return std::max(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

// ---------------------------------------------------------------------------
// tm_emu_launch runs body(args) as every thread of every block of a grid.
//
// args is argsBytes bytes that the engine copies before the launch: body
// gets a pointer to that copy, which lives as long as any thread of the
// launch, and must not write it (the threads share it).
//
// It starts block.x·y·z std::threads once, then runs the blocks one after
// another (x fastest, then y, z); a block starts when every thread has
// finished the previous one. Each thread sees its own threadIdx, blockIdx,
// blockDim, gridDim. dynShared bytes of dynamic shared memory
// (TM_DYNAMIC_SHARED) are filled with 0xFF before each block and guarded
// against out-of-range writes.
//
// A watchdog fails the launch when a block makes no progress (no barrier
// arrival, no thread exit) for watchdogMs (0: 10 s). A fault inside the
// kernel (an exception, __trap, a bad warp mask) fails it too; threads
// waiting at barriers are then released and unwound. A thread that cannot be
// unwound (spinning in a loop with no barrier) is detached and leaked; see
// Launch::windDown.
//
// Returns 0, or -1 with the reason (naming the kernel `name`) in err.
inline int tm_emu_launch(void (*body)(const void* args), const void* args, size_t argsBytes, dim3 grid, dim3 block,
                         size_t dynShared, const char* name, unsigned watchdogMs, char* err, size_t errLen) {
  const char* kname = name ? name : "?";
  std::string why;
  const unsigned long long threads = static_cast<unsigned long long>(block.x) * block.y * block.z;
  if (!body || (argsBytes && !args)) {
    why = tm_emu::fmt("kernel %s: no kernel body or no arguments", kname);
  } else if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0) {
    why = tm_emu::fmt("kernel %s: grid (%u,%u,%u) or block (%u,%u,%u) has a zero dimension", kname, grid.x,
                      grid.y, grid.z, block.x, block.y, block.z);
  } else if (threads > tm_emu::kMaxThreads) {
    why = tm_emu::fmt("kernel %s: %llu threads per block, more than %u", kname, threads, tm_emu::kMaxThreads);
  } else {
    try {
      auto launch =
          std::make_shared<tm_emu::Launch>(body, args, argsBytes, grid, block, dynShared, kname, watchdogMs);
      why = tm_emu::Launch::run(launch);
    } catch (const std::bad_alloc&) {
      why = tm_emu::fmt("kernel %s: out of host memory setting up the launch", kname);
    }
  }
  if (why.empty()) return 0;
  if (err && errLen) std::snprintf(err, errLen, "%s", why.c_str());
  return -1;
}
