// fakecuda.cpp: a fake libcuda.so.1 (CUDA driver API) that runs the real
// kernel source on the CPU through simt.h, so the GPU backend and its Go
// binding can be tested on machines without a GPU.
//
// Build (one kernel source per library), on one line:
//   g++ -std=c++20 -O1 -g -shared -fPIC -pthread -I<kernels dir>
//       -DTM_KERNELS_SOURCE='"<path to .cu>"' -o <dir>/libcuda.so.1 cuda/emu/fakecuda.cpp
//
// The kernel source is included at the END of this file, after the driver,
// so that its macros and names cannot change the driver's code; it must end
// with `#define TM_KERNEL_LIST(X) X(kernel_a) X(kernel_b) ...` naming its
// extern "C" __global__ kernels. Each is registered with KernelAdapter, which
// deduces the parameter types from the function pointer and unpacks
// kernelParams exactly as the real driver does.
//
// Strictness beyond a real driver, to catch bugs a GPU would catch later:
// device memory is host memory with guard zones, bounds-checked copies,
// fresh allocations filled with 0xFF; a pointer kernel parameter must be null
// or inside a live allocation; a module's PTX must declare the same
// parameter sizes as the emulated source.
//
// Test controls (extern "C", see the end of the driver section):
//   tm_fake_inject, tm_fake_set_devices, tm_fake_reset, tm_fake_last_error,
//   tm_fake_live_allocations, tm_fake_abi_check.
// Environment: TM_FAKE_WATCHDOG_MS (default 10000), read at every launch.

#include "simt.h"

#include <array>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

// Everything of the driver is in this namespace, so that the kernel source
// included at the end sees none of its names. The entry points are extern
// "C" inside it, which exports them under their plain names.
namespace tm_fake {

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;

enum : CUresult {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_FAILED = 719,
};

struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};
// The real driver's names and descriptions.
constexpr ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
};

constexpr int kDriverVersion = 12080;
constexpr int kMaxDevices = 8;
constexpr size_t kTotalMem = size_t(4) << 30;
constexpr unsigned kMaxSharedPerBlock = 48 * 1024;
constexpr const char* kDeviceName = "tidemark SIMT emulation (fake libcuda)";
// Allocation layout: [guard][user bytes][guard], user start 256-aligned.
constexpr size_t kAlign = 256;
constexpr size_t kGuard = 256;
constexpr unsigned char kGuardByte = 0xA5;
// Fresh memory is garbage on a GPU; 0xFF reads as NaN or -1.
constexpr unsigned char kFreshByte = 0xFF;

// Every entry point, for injection.
#define TM_FAKE_ENTRY_POINTS(X)                                                                                  \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceTotalMem_v2)   \
  X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease_v2) X(cuCtxSetCurrent)        \
  X(cuCtxGetCurrent) X(cuCtxSynchronize) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)           \
  X(cuMemAlloc_v2) X(cuMemFree_v2) X(cuMemcpyHtoD_v2) X(cuMemcpyDtoH_v2) X(cuMemcpyDtoD_v2) X(cuMemsetD8_v2)    \
  X(cuMemHostAlloc) X(cuMemFreeHost) X(cuLaunchKernel) X(cuStreamSynchronize) X(cuEventCreate) X(cuEventRecord) \
  X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy_v2) X(cuGetErrorName) X(cuGetErrorString)

enum class Entry {
#define TM_FAKE_ENUM(n) n,
  TM_FAKE_ENTRY_POINTS(TM_FAKE_ENUM)
#undef TM_FAKE_ENUM
      Count
};
constexpr const char* kEntryNames[] = {
#define TM_FAKE_NAME(n) #n,
    TM_FAKE_ENTRY_POINTS(TM_FAKE_NAME)
#undef TM_FAKE_NAME
};

// ---------------------------------------------------------------------------
// Registered kernels (defined after the kernel source, at the end).
using LaunchFn = int (*)(void** params, dim3 grid, dim3 block, size_t shared, const char* name, unsigned watchdogMs,
                         char* err, size_t errLen);
struct EmuKernel {
  const char* name;
  size_t nparams;
  const size_t* sizes;
  const bool* pointers;  // which parameters are pointers (checked at launch)
  LaunchFn launch;
};
const EmuKernel* findKernel(std::string_view name);

template <class T>
T loadParam(const void* p) {
  static_assert(std::is_trivially_copyable_v<T>, "kernel parameters must be trivially copyable: CUDA copies bytes");
  struct alignas(T) Raw {
    unsigned char b[sizeof(T)];
  } raw;
  std::memcpy(raw.b, p, sizeof(T));
  return std::bit_cast<T>(raw);
}

// Adapts one kernel: its parameter sizes, and a launcher that reads
// kernelParams[i] as exactly sizeof(A_i) bytes, as the real driver does,
// packing them end to end (as the driver packs its parameter bank); each
// emulated thread unpacks its own copies of the arguments from the pack.
template <auto K>
struct KernelAdapter;
template <class... A, void (*K)(A...)>
struct KernelAdapter<K> {
  static constexpr size_t n = sizeof...(A);
  static constexpr std::array<size_t, n> sizes{sizeof(A)...};
  static constexpr std::array<bool, n> pointers{std::is_pointer_v<A>...};
  static constexpr std::array<size_t, n> offsets = [] {
    std::array<size_t, n> o{};
    for (size_t i = 1; i < n; ++i) o[i] = o[i - 1] + sizes[i - 1];
    return o;
  }();
  static constexpr size_t packed = (0 + ... + sizeof(A));

  template <size_t... I>
  static void call([[maybe_unused]] const unsigned char* pack, std::index_sequence<I...>) {
    K(loadParam<A>(pack + offsets[I])...);
  }
  static void body(const void* pack) { call(static_cast<const unsigned char*>(pack), std::index_sequence_for<A...>{}); }

  static int launch(void** params, dim3 grid, dim3 block, size_t shared, const char* name, unsigned watchdogMs,
                    char* err, size_t errLen) {
    std::array<unsigned char, packed> pack;
    for (size_t i = 0; i < n; ++i) std::memcpy(pack.data() + offsets[i], params[i], sizes[i]);
    return tm_emu_launch(&body, pack.data(), packed, grid, block, shared, name, watchdogMs, err, errLen);
  }
};

// ---------------------------------------------------------------------------
// Driver state.
struct Alloc {
  unsigned char* raw;  // what aligned_alloc returned
  size_t size;         // the user's bytes
  bool host;           // cuMemHostAlloc rather than cuMemAlloc
};

struct Module;
struct Function {
  Module* module;
  const EmuKernel* kernel;
};

struct Module {
  std::map<std::string, std::vector<size_t>, std::less<>> entries;  // PTX .entry → parameter sizes
  std::map<std::string, std::unique_ptr<Function>, std::less<>> functions;
};

struct Event {
  unsigned flags;
  bool recorded = false;
  std::chrono::steady_clock::time_point at;
};

constexpr unsigned kEventDisableTiming = 0x2;

// A device's primary context. The object lives for the whole process, so a
// thread's current-context pointer never dangles: it stays the handle for
// that device, inactive while the reference count is 0.
struct Context {
  int refs = 0;
  bool sticky = false;  // a launch failed: every call fails until re-created
  std::map<uintptr_t, Alloc> allocs;
  size_t deviceBytes = 0;
  std::map<Module*, std::unique_ptr<Module>> modules;
  std::set<Function*> functions;
  std::map<Event*, std::unique_ptr<Event>> events;
};

struct Injection {
  bool armed = false;
  int skip = 0;
  CUresult result = 0;
};

struct Driver {
  std::mutex mu;  // guards everything; launches run holding it (one at a time)
  bool initialized = false;
  int devices = 1;
  std::array<Context, kMaxDevices> contexts;
  std::array<Injection, static_cast<size_t>(Entry::Count)> injections;
  std::string lastError;
};

// Never destroyed: a kernel thread leaked by the watchdog, or a late call
// from another thread at exit, must not meet a destroyed driver.
Driver& driver() {
  static Driver* d = new Driver;
  return *d;
}

thread_local Context* tCurrent = nullptr;

int deviceOf(const Context* c) {
  Driver& d = driver();
  for (int i = 0; i < d.devices; ++i)
    if (&d.contexts[i] == c) return i;
  return -1;
}

// Every entry point starts with a Call: it takes the driver lock and
// applies a pending injection.
struct Call {
  std::unique_lock<std::mutex> lock;
  std::optional<CUresult> injected;

  explicit Call(Entry e) : lock(driver().mu) {
    Injection& in = driver().injections[static_cast<size_t>(e)];
    if (!in.armed) return;
    if (in.skip > 0) {
      --in.skip;
      return;
    }
    in.armed = false;
    injected = in.result;
  }

  CUresult initialized() const { return driver().initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED; }

  // The calling thread's current context, which must be active and not
  // failed.
  CUresult context(Context*& out) const {
    if (!driver().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Context* c = tCurrent;
    if (!c || deviceOf(c) < 0 || c->refs == 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (c->sticky) return CUDA_ERROR_LAUNCH_FAILED;
    out = c;
    return CUDA_SUCCESS;
  }

  CUresult device(CUdevice dev) const {
    if (!driver().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    return dev >= 0 && dev < driver().devices ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
  }
};

// A failure the caller can only learn about through tm_fake_last_error:
// marks the context failed as a real one is after a faulting kernel.
CUresult fail(Context& c, std::string why) {
  c.sticky = true;
  driver().lastError = std::move(why);
  return CUDA_ERROR_LAUNCH_FAILED;
}

// The first corrupted guard byte of a, as an offset from its start
// (negative: before it), repairing the guards so each corruption is
// reported once.
std::optional<long long> checkGuard(uintptr_t base, const Alloc& a) {
  std::optional<long long> bad;
  const unsigned char* user = reinterpret_cast<const unsigned char*>(base);
  for (size_t i = kGuard; i-- > 0 && !bad;)
    if (a.raw[i] != kGuardByte) bad = static_cast<long long>(i) - static_cast<long long>(kGuard);
  for (size_t i = 0; i < kGuard && !bad; ++i)
    if (user[a.size + i] != kGuardByte) bad = static_cast<long long>(a.size + i);
  if (bad) {
    std::memset(a.raw, kGuardByte, kGuard);
    std::memset(a.raw + kGuard + a.size, kGuardByte, kGuard);
  }
  return bad;
}

std::string describeCorruption(const char* who, uintptr_t base, const Alloc& a, long long off) {
  return tm_emu::fmt("%s wrote outside %s allocation 0x%llx (%zu bytes): guard byte at offset %lld was changed", who,
                     a.host ? "host" : "device", static_cast<unsigned long long>(base), a.size, off);
}

// Checks every allocation's guards; returns the first corruption's message.
std::optional<std::string> checkAllGuards(Context& c, const char* who) {
  std::optional<std::string> first;
  for (const auto& [base, a] : c.allocs)
    if (auto off = checkGuard(base, a); off && !first) first = describeCorruption(who, base, a, *off);
  return first;
}

CUresult allocate(Context& c, size_t size, bool host, uintptr_t& out) {
  if (size == 0) return CUDA_ERROR_INVALID_VALUE;
  if (!host && (size > kTotalMem || c.deviceBytes > kTotalMem - size)) return CUDA_ERROR_OUT_OF_MEMORY;
  if (size > SIZE_MAX - 2 * kGuard - kAlign) return CUDA_ERROR_OUT_OF_MEMORY;
  const size_t total = (2 * kGuard + size + kAlign - 1) / kAlign * kAlign;
  auto* raw = static_cast<unsigned char*>(std::aligned_alloc(kAlign, total));
  if (!raw) return CUDA_ERROR_OUT_OF_MEMORY;
  std::memset(raw, kGuardByte, kGuard);
  std::memset(raw + kGuard, kFreshByte, size);
  std::memset(raw + kGuard + size, kGuardByte, kGuard);
  out = reinterpret_cast<uintptr_t>(raw + kGuard);
  c.allocs.emplace(out, Alloc{raw, size, host});
  if (!host) c.deviceBytes += size;
  return CUDA_SUCCESS;
}

// The live allocation of the given kind containing [addr, addr+n], or end().
std::map<uintptr_t, Alloc>::iterator findRange(Context& c, uintptr_t addr, size_t n, bool host) {
  auto it = c.allocs.upper_bound(addr);
  if (it == c.allocs.begin()) return c.allocs.end();
  --it;
  const Alloc& a = it->second;
  if (a.host != host || addr - it->first > a.size || n > a.size - (addr - it->first)) return c.allocs.end();
  return it;
}

void release(Context& c, std::map<uintptr_t, Alloc>::iterator it) {
  if (!it->second.host) c.deviceBytes -= it->second.size;
  std::free(it->second.raw);
  c.allocs.erase(it);
}

// Frees everything the context owns; returns the first guard corruption.
std::optional<std::string> destroy(Context& c) {
  std::optional<std::string> bad = checkAllGuards(c, "host code");
  while (!c.allocs.empty()) release(c, c.allocs.begin());
  c.functions.clear();
  c.modules.clear();
  c.events.clear();
  c.sticky = false;
  c.refs = 0;
  return bad;
}

bool validStream(CUstream s) {
  // Only the default streams exist: NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD.
  const auto v = reinterpret_cast<uintptr_t>(s);
  return v == 0 || v == 1 || v == 2;
}

Event* findEvent(Context& c, CUevent h) {
  auto it = c.events.find(reinterpret_cast<Event*>(h));
  return it == c.events.end() ? nullptr : it->second.get();
}

unsigned watchdogMs() {
  const char* s = std::getenv("TM_FAKE_WATCHDOG_MS");
  if (!s || !*s) return tm_emu::kDefaultWatchdogMs;
  char* end = nullptr;
  const unsigned long v = std::strtoul(s, &end, 10);
  return (*end || v == 0 || v > 3600000) ? tm_emu::kDefaultWatchdogMs : static_cast<unsigned>(v);
}

// ---------------------------------------------------------------------------
// PTX header and entry parsing.

// Splits PTX into tokens: runs of [A-Za-z0-9_.$%] and single punctuation
// characters; comments are dropped and quoted strings kept whole.
std::vector<std::string_view> tokenize(std::string_view s) {
  std::vector<std::string_view> out;
  auto word = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == '$' || ch == '%';
  };
  size_t i = 0;
  while (i < s.size()) {
    const char ch = s[i];
    if (std::isspace(static_cast<unsigned char>(ch))) {
      ++i;
    } else if (s.compare(i, 2, "//") == 0) {
      const size_t e = s.find('\n', i);
      i = e == std::string_view::npos ? s.size() : e;
    } else if (s.compare(i, 2, "/*") == 0) {
      const size_t e = s.find("*/", i + 2);
      i = e == std::string_view::npos ? s.size() : e + 2;
    } else if (ch == '"') {
      const size_t e = s.find('"', i + 1);
      const size_t end = e == std::string_view::npos ? s.size() : e + 1;
      out.push_back(s.substr(i, end - i));
      i = end;
    } else if (word(ch)) {
      size_t j = i;
      while (j < s.size() && word(s[j])) ++j;
      out.push_back(s.substr(i, j - i));
      i = j;
    } else {
      out.push_back(s.substr(i, 1));
      ++i;
    }
  }
  return out;
}

bool parseUnsigned(std::string_view t, unsigned long long& v) {
  if (t.empty() || t.size() > 18) return false;
  v = 0;
  for (char ch : t) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + static_cast<unsigned>(ch - '0');
  }
  return true;
}

size_t ptxTypeSize(std::string_view t) {
  static const std::map<std::string_view, size_t> sizes = {
      {".b8", 1},  {".u8", 1},  {".s8", 1},  {".b16", 2}, {".u16", 2}, {".s16", 2}, {".f16", 2},
      {".b32", 4}, {".u32", 4}, {".s32", 4}, {".f32", 4}, {".b64", 8}, {".u64", 8}, {".s64", 8},
      {".f64", 8},
  };
  auto it = sizes.find(t);
  return it == sizes.end() ? 0 : it->second;
}

// One `.param` of an .entry parameter list, starting at tokens[i] (the
// `.param`); leaves i after the parameter.
bool parseParam(const std::vector<std::string_view>& t, size_t& i, size_t& size) {
  if (t[i] != ".param") return false;
  ++i;
  size_t elem = 0;
  // State-space qualifiers and alignment, in any order around the type:
  // `.align 8 .b8`, `.u64 .ptr.global.align 16`.
  while (i < t.size() && t[i].starts_with(".")) {
    if (size_t s = ptxTypeSize(t[i])) {
      if (elem) return false;
      elem = s;
      ++i;
    } else if (t[i] == ".align" || (t[i].starts_with(".ptr") && t[i].ends_with(".align"))) {
      unsigned long long a;
      if (i + 1 >= t.size() || !parseUnsigned(t[i + 1], a)) return false;
      i += 2;
    } else if (t[i].starts_with(".ptr")) {
      ++i;
    } else {
      return false;
    }
  }
  if (!elem || i >= t.size()) return false;
  const char first = t[i][0];
  if (!std::isalpha(static_cast<unsigned char>(first)) && first != '_' && first != '$' && first != '%') return false;
  ++i;  // the name
  unsigned long long count = 1;
  if (i < t.size() && t[i] == "[") {
    if (i + 2 >= t.size() || !parseUnsigned(t[i + 1], count) || t[i + 2] != "]" || count == 0) return false;
    i += 3;
  }
  size = elem * count;
  return true;
}

CUresult parsePtx(std::string_view text, Module& m) {
  const std::vector<std::string_view> t = tokenize(text);
  std::optional<size_t> version, target, addressSize;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i] == ".version" && !version) version = i + 1;
    else if (t[i] == ".target" && !target) target = i + 1;
    else if (t[i] == ".address_size" && !addressSize) addressSize = i + 1;
  }
  if (!version || !target || !addressSize) return CUDA_ERROR_INVALID_IMAGE;

  const std::string_view v = t[*version];
  const size_t dot = v.find('.');
  unsigned long long major, minor;
  if (dot == std::string_view::npos || !parseUnsigned(v.substr(0, dot), major) ||
      !parseUnsigned(v.substr(dot + 1), minor))
    return CUDA_ERROR_INVALID_PTX;
  if (major > 8 || (major == 8 && minor > 0)) return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;

  std::string_view sm = t[*target];
  unsigned long long arch;
  if (!sm.starts_with("sm_")) return CUDA_ERROR_INVALID_PTX;
  sm.remove_prefix(3);
  if (!sm.empty() && std::isalpha(static_cast<unsigned char>(sm.back()))) sm.remove_suffix(1);  // sm_90a
  if (!parseUnsigned(sm, arch) || arch > 80) return CUDA_ERROR_INVALID_PTX;

  if (t[*addressSize] != "64") return CUDA_ERROR_INVALID_PTX;

  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != ".entry") continue;
    if (++i >= t.size()) return CUDA_ERROR_INVALID_PTX;
    const std::string name(t[i++]);
    std::vector<size_t> params;
    if (i < t.size() && t[i] == "(") {
      ++i;
      while (i < t.size() && t[i] != ")") {
        size_t size;
        if (!parseParam(t, i, size)) return CUDA_ERROR_INVALID_PTX;
        params.push_back(size);
        if (i < t.size() && t[i] == ",") ++i;
        else if (i >= t.size() || t[i] != ")") return CUDA_ERROR_INVALID_PTX;
      }
      if (i >= t.size()) return CUDA_ERROR_INVALID_PTX;
    }
    if (!m.entries.emplace(name, std::move(params)).second) return CUDA_ERROR_INVALID_PTX;
  }
  return CUDA_SUCCESS;
}

std::string sizeList(size_t n, const size_t* s) {
  std::string out = "{";
  for (size_t i = 0; i < n; ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "}";
}

// Whether the emulated kernel takes parameters of exactly these sizes.
bool abiMatches(const EmuKernel& k, size_t n, const size_t* sizes) {
  if (n != k.nparams) return false;
  for (size_t i = 0; i < n; ++i)
    if (sizes[i] != k.sizes[i]) return false;
  return true;
}

// ---------------------------------------------------------------------------
// Entry points.

#define TM_FAKE_BEGIN(entry)   \
  Call call(Entry::entry);     \
  if (call.injected) return *call.injected

extern "C" {

CUresult cuInit(unsigned int flags) {
  TM_FAKE_BEGIN(cuInit);
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  driver().initialized = true;
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* version) {
  TM_FAKE_BEGIN(cuDriverGetVersion);
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  *version = kDriverVersion;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  TM_FAKE_BEGIN(cuDeviceGetCount);
  if (CUresult r = call.initialized()) return r;
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  *count = driver().devices;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  TM_FAKE_BEGIN(cuDeviceGet);
  if (CUresult r = call.initialized()) return r;
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = call.device(ordinal)) return r;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  TM_FAKE_BEGIN(cuDeviceGetName);
  if (CUresult r = call.initialized()) return r;
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = call.device(dev)) return r;
  std::snprintf(name, static_cast<size_t>(len), "%s", kDeviceName);
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  TM_FAKE_BEGIN(cuDeviceTotalMem_v2);
  if (CUresult r = call.initialized()) return r;
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = call.device(dev)) return r;
  *bytes = kTotalMem;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice dev) {
  TM_FAKE_BEGIN(cuDeviceGetAttribute);
  if (CUresult r = call.initialized()) return r;
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = call.device(dev)) return r;
  switch (attribute) {
    case 1: *value = static_cast<int>(tm_emu::kMaxThreads); break;   // MAX_THREADS_PER_BLOCK
    case 8: *value = static_cast<int>(kMaxSharedPerBlock); break;    // MAX_SHARED_MEMORY_PER_BLOCK
    case 10: *value = warpSize; break;                               // WARP_SIZE
    case 16: *value = 2; break;                                      // MULTIPROCESSOR_COUNT
    case 75: *value = 8; break;                                      // COMPUTE_CAPABILITY_MAJOR
    case 76: *value = 0; break;                                      // COMPUTE_CAPABILITY_MINOR
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  TM_FAKE_BEGIN(cuDevicePrimaryCtxRetain);
  if (CUresult r = call.initialized()) return r;
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = call.device(dev)) return r;
  Context& c = driver().contexts[dev];
  ++c.refs;
  *pctx = reinterpret_cast<CUcontext>(&c);
  return CUDA_SUCCESS;
}

// At refcount 0 the context and everything in it are destroyed; a guard
// corrupted since the last check (a host write through a device pointer) is
// reported as LAUNCH_FAILED, after the release has happened.
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  TM_FAKE_BEGIN(cuDevicePrimaryCtxRelease_v2);
  if (CUresult r = call.device(dev)) return r;
  Context& c = driver().contexts[dev];
  if (c.refs == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (--c.refs > 0) return CUDA_SUCCESS;
  if (auto bad = destroy(c)) {
    driver().lastError = *bad;
    return CUDA_ERROR_LAUNCH_FAILED;
  }
  return CUDA_SUCCESS;
}

// The current context is per OS thread, as in the real driver.
CUresult cuCtxSetCurrent(CUcontext ctx) {
  TM_FAKE_BEGIN(cuCtxSetCurrent);
  if (CUresult r = call.initialized()) return r;
  Context* c = reinterpret_cast<Context*>(ctx);
  if (c && (deviceOf(c) < 0 || c->refs == 0)) return CUDA_ERROR_INVALID_CONTEXT;
  tCurrent = c;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext* pctx) {
  TM_FAKE_BEGIN(cuCtxGetCurrent);
  if (CUresult r = call.initialized()) return r;
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  *pctx = reinterpret_cast<CUcontext>(tCurrent);
  return CUDA_SUCCESS;
}

// Launches are synchronous, so synchronising only reports the context's state.
CUresult cuCtxSynchronize(void) {
  TM_FAKE_BEGIN(cuCtxSynchronize);
  Context* c;
  return call.context(c);
}

CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  TM_FAKE_BEGIN(cuModuleLoadData);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
  auto m = std::make_unique<Module>();
  if (CUresult r = parsePtx(static_cast<const char*>(image), *m)) return r;
  Module* h = m.get();
  c->modules.emplace(h, std::move(m));
  *module = reinterpret_cast<CUmodule>(h);
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule module) {
  TM_FAKE_BEGIN(cuModuleUnload);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  auto it = c->modules.find(reinterpret_cast<Module*>(module));
  if (it == c->modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  for (auto& [name, f] : it->second->functions) c->functions.erase(f.get());
  c->modules.erase(it);
  return CUDA_SUCCESS;
}

// The name must be an .entry of the module's PTX and a registered kernel,
// with the same parameter sizes in both: that ties the PTX's ABI to the
// emulated source.
CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule module, const char* name) {
  TM_FAKE_BEGIN(cuModuleGetFunction);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
  auto mit = c->modules.find(reinterpret_cast<Module*>(module));
  if (mit == c->modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  Module& m = *mit->second;
  if (auto fit = m.functions.find(name); fit != m.functions.end()) {
    *hfunc = reinterpret_cast<CUfunction>(fit->second.get());
    return CUDA_SUCCESS;
  }
  auto eit = m.entries.find(name);
  const EmuKernel* k = findKernel(name);
  if (eit == m.entries.end() || !k) return CUDA_ERROR_NOT_FOUND;
  const std::vector<size_t>& ptx = eit->second;
  if (!abiMatches(*k, ptx.size(), ptx.data())) {
    driver().lastError = tm_emu::fmt("kernel %s: the PTX declares parameter sizes %s, the emulated source %s", name,
                                     sizeList(ptx.size(), ptx.data()).c_str(), sizeList(k->nparams, k->sizes).c_str());
    return CUDA_ERROR_INVALID_IMAGE;
  }
  auto f = std::make_unique<Function>(Function{&m, k});
  Function* h = f.get();
  m.functions.emplace(name, std::move(f));
  c->functions.insert(h);
  *hfunc = reinterpret_cast<CUfunction>(h);
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  TM_FAKE_BEGIN(cuMemAlloc_v2);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  if (!dptr) return CUDA_ERROR_INVALID_VALUE;
  uintptr_t p;
  if (CUresult r = allocate(*c, bytesize, false, p)) return r;
  *dptr = p;
  return CUDA_SUCCESS;
}

// A corrupted guard is reported as LAUNCH_FAILED (the memory is freed all
// the same).
CUresult cuMemFree_v2(CUdeviceptr dptr) {
  TM_FAKE_BEGIN(cuMemFree_v2);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  auto it = c->allocs.find(static_cast<uintptr_t>(dptr));
  if (it == c->allocs.end() || it->second.host) return CUDA_ERROR_INVALID_VALUE;
  const auto off = checkGuard(it->first, it->second);
  const std::string why = off ? describeCorruption("host code", it->first, it->second, *off) : "";
  release(*c, it);
  return off ? fail(*c, why) : CUDA_SUCCESS;
}

// Copies of zero bytes succeed without looking at the addresses, as the
// real driver's do.
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  TM_FAKE_BEGIN(cuMemcpyHtoD_v2);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  if (n == 0) return CUDA_SUCCESS;
  if (!src || findRange(*c, dst, n, false) == c->allocs.end()) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(reinterpret_cast<void*>(dst), src, n);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  TM_FAKE_BEGIN(cuMemcpyDtoH_v2);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  if (n == 0) return CUDA_SUCCESS;
  if (!dst || findRange(*c, src, n, false) == c->allocs.end()) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(dst, reinterpret_cast<const void*>(src), n);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  TM_FAKE_BEGIN(cuMemcpyDtoD_v2);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  if (n == 0) return CUDA_SUCCESS;
  if (findRange(*c, dst, n, false) == c->allocs.end() || findRange(*c, src, n, false) == c->allocs.end())
    return CUDA_ERROR_INVALID_VALUE;
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
  return CUDA_SUCCESS;
}

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n) {
  TM_FAKE_BEGIN(cuMemsetD8_v2);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  if (n == 0) return CUDA_SUCCESS;
  if (findRange(*c, dst, n, false) == c->allocs.end()) return CUDA_ERROR_INVALID_VALUE;
  std::memset(reinterpret_cast<void*>(dst), value, n);
  return CUDA_SUCCESS;
}

// Flags: CU_MEMHOSTALLOC_PORTABLE | DEVICEMAP | WRITECOMBINED.
CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int flags) {
  TM_FAKE_BEGIN(cuMemHostAlloc);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  if (!pp || (flags & ~0x7u)) return CUDA_ERROR_INVALID_VALUE;
  uintptr_t p;
  if (CUresult r = allocate(*c, bytesize, true, p)) return r;
  *pp = reinterpret_cast<void*>(p);
  return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void* p) {
  TM_FAKE_BEGIN(cuMemFreeHost);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  auto it = c->allocs.find(reinterpret_cast<uintptr_t>(p));
  if (it == c->allocs.end() || !it->second.host) return CUDA_ERROR_INVALID_VALUE;
  const auto off = checkGuard(it->first, it->second);
  const std::string why = off ? describeCorruption("host code", it->first, it->second, *off) : "";
  release(*c, it);
  return off ? fail(*c, why) : CUDA_SUCCESS;
}

// Runs the kernel to completion before returning, holding the driver lock:
// one launch at a time, and no allocation can change under it.
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned sharedMemBytes, CUstream stream, void** kernelParams, void** extra) {
  TM_FAKE_BEGIN(cuLaunchKernel);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  if (!c->functions.count(reinterpret_cast<Function*>(f)) || !validStream(stream)) return CUDA_ERROR_INVALID_HANDLE;
  const EmuKernel& k = *reinterpret_cast<Function*>(f)->kernel;
  if (!gx || !gy || !gz || !bx || !by || !bz || gx > 0x7fffffffu || gy > 65535 || gz > 65535 || bz > 64 || extra)
    return CUDA_ERROR_INVALID_VALUE;
  if (k.nparams > 0 && !kernelParams) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < k.nparams; ++i)
    if (!kernelParams[i]) return CUDA_ERROR_INVALID_VALUE;
  if (static_cast<unsigned long long>(bx) * by * bz > tm_emu::kMaxThreads || sharedMemBytes > kMaxSharedPerBlock)
    return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;

  // A pointer the kernel gets must be device (or pinned host) memory: a
  // host pointer would work here and fault on a GPU.
  for (size_t i = 0; i < k.nparams; ++i) {
    if (!k.pointers[i]) continue;
    uintptr_t p;
    std::memcpy(&p, kernelParams[i], sizeof p);
    if (p && findRange(*c, p, 0, false) == c->allocs.end() && findRange(*c, p, 0, true) == c->allocs.end())
      return fail(*c, tm_emu::fmt("kernel %s: parameter %zu (pointer 0x%llx) is not inside a live allocation",
                                  k.name, i, static_cast<unsigned long long>(p)));
  }

  char err[1024];
  if (k.launch(kernelParams, dim3(gx, gy, gz), dim3(bx, by, bz), sharedMemBytes, k.name, watchdogMs(), err,
               sizeof err) != 0)
    return fail(*c, err);
  if (auto bad = checkAllGuards(*c, tm_emu::fmt("kernel %s", k.name).c_str())) return fail(*c, *bad);
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream stream) {
  TM_FAKE_BEGIN(cuStreamSynchronize);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  return validStream(stream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

// Flags: CU_EVENT_BLOCKING_SYNC | DISABLE_TIMING | INTERPROCESS.
CUresult cuEventCreate(CUevent* event, unsigned int flags) {
  TM_FAKE_BEGIN(cuEventCreate);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  if (!event || (flags & ~0x7u)) return CUDA_ERROR_INVALID_VALUE;
  auto e = std::make_unique<Event>(Event{flags, false, {}});
  Event* h = e.get();
  c->events.emplace(h, std::move(e));
  *event = reinterpret_cast<CUevent>(h);
  return CUDA_SUCCESS;
}

// Work is synchronous, so the event completes when recorded.
CUresult cuEventRecord(CUevent event, CUstream stream) {
  TM_FAKE_BEGIN(cuEventRecord);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  Event* e = findEvent(*c, event);
  if (!e || !validStream(stream)) return CUDA_ERROR_INVALID_HANDLE;
  e->recorded = true;
  e->at = std::chrono::steady_clock::now();
  return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent event) {
  TM_FAKE_BEGIN(cuEventSynchronize);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  return findEvent(*c, event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

// As the real driver: INVALID_HANDLE if either event was never recorded or
// was created with CU_EVENT_DISABLE_TIMING.
CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  TM_FAKE_BEGIN(cuEventElapsedTime);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  if (!ms) return CUDA_ERROR_INVALID_VALUE;
  Event* a = findEvent(*c, start);
  Event* b = findEvent(*c, end);
  if (!a || !b || !a->recorded || !b->recorded || ((a->flags | b->flags) & kEventDisableTiming))
    return CUDA_ERROR_INVALID_HANDLE;
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent event) {
  TM_FAKE_BEGIN(cuEventDestroy_v2);
  Context* c;
  if (CUresult r = call.context(c)) return r;
  return c->events.erase(reinterpret_cast<Event*>(event)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuGetErrorName(CUresult error, const char** str) {
  TM_FAKE_BEGIN(cuGetErrorName);
  if (!str) return CUDA_ERROR_INVALID_VALUE;
  for (const ErrorText& e : kErrors)
    if (e.code == error) return *str = e.name, CUDA_SUCCESS;
  *str = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char** str) {
  TM_FAKE_BEGIN(cuGetErrorString);
  if (!str) return CUDA_ERROR_INVALID_VALUE;
  for (const ErrorText& e : kErrors)
    if (e.code == error) return *str = e.text, CUDA_SUCCESS;
  *str = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

// ---------------------------------------------------------------------------
// Test controls.

// Makes entry point `entry` return `result`, without doing anything, on its
// (skip+1)-th call from now, once; a second injection for the same entry
// replaces the first. Returns CUDA_SUCCESS, CUDA_ERROR_NOT_FOUND for an
// unknown entry name, or CUDA_ERROR_INVALID_VALUE for a negative skip.
int tm_fake_inject(const char* entry, int skip, int result) {
  if (!entry) return CUDA_ERROR_NOT_FOUND;
  if (skip < 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lk(driver().mu);
  for (size_t i = 0; i < static_cast<size_t>(Entry::Count); ++i) {
    if (std::strcmp(kEntryNames[i], entry) != 0) continue;
    driver().injections[i] = Injection{true, skip, result};
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_NOT_FOUND;
}

// Sets how many devices exist (clamped to [0, 8]; 0 is a machine without a
// GPU: cuDeviceGetCount reports 0, cuDeviceGet says INVALID_DEVICE). The
// contexts of devices that no longer exist are destroyed.
void tm_fake_set_devices(int n) {
  std::lock_guard lk(driver().mu);
  Driver& d = driver();
  d.devices = std::clamp(n, 0, kMaxDevices);
  for (int i = d.devices; i < kMaxDevices; ++i) destroy(d.contexts[i]);
}

// Back to the state at load: not initialised, one device, every context
// destroyed (threads keep their current-context handle, which answers
// INVALID_CONTEXT until the primary context is retained again), no
// injections, no last error.
void tm_fake_reset(void) {
  std::lock_guard lk(driver().mu);
  Driver& d = driver();
  for (Context& c : d.contexts) destroy(c);
  d.initialized = false;
  d.devices = 1;
  d.injections = {};
  d.lastError.clear();
}

// The message of the last launch failure (kernel fault, watchdog, guard
// corruption, bad pointer parameter) or PTX/source ABI mismatch; "" if none.
// Valid until the next failure or tm_fake_reset.
const char* tm_fake_last_error(void) {
  std::lock_guard lk(driver().mu);
  return driver().lastError.c_str();
}

// Live cuMemAlloc allocations over all contexts, for leak tests.
long long tm_fake_live_allocations(void) {
  std::lock_guard lk(driver().mu);
  long long n = 0;
  for (const Context& c : driver().contexts)
    for (const auto& [base, a] : c.allocs) n += !a.host;
  return n;
}

// Whether the emulated kernel takes nparams parameters of these byte
// sizes: CUDA_SUCCESS, CUDA_ERROR_NOT_FOUND (no such kernel),
// CUDA_ERROR_INVALID_IMAGE (different), CUDA_ERROR_INVALID_VALUE.
int tm_fake_abi_check(const char* kernel, int nparams, const int* sizes) {
  if (!kernel || nparams < 0 || (nparams > 0 && !sizes)) return CUDA_ERROR_INVALID_VALUE;
  const EmuKernel* k = findKernel(kernel);
  if (!k) return CUDA_ERROR_NOT_FOUND;
  std::vector<size_t> s(static_cast<size_t>(nparams));
  for (int i = 0; i < nparams; ++i) {
    if (sizes[i] < 0) return CUDA_ERROR_INVALID_VALUE;
    s[static_cast<size_t>(i)] = static_cast<size_t>(sizes[i]);
  }
  return abiMatches(*k, s.size(), s.data()) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_IMAGE;
}

}  // extern "C"

}  // namespace tm_fake

// ---------------------------------------------------------------------------
// The kernel source, and its registration.
#ifndef TM_KERNELS_SOURCE
#error "define TM_KERNELS_SOURCE as the quoted path of the kernel source (.cu)"
#endif
#include TM_KERNELS_SOURCE
#ifndef TM_KERNEL_LIST
#error "the kernel source must end with #define TM_KERNEL_LIST(X) X(kernel) ..."
#endif

namespace tm_fake {

#define TM_FAKE_REGISTER(k)                                                                            \
  EmuKernel{#k, KernelAdapter<&::k>::sizes.size(), KernelAdapter<&::k>::sizes.data(),                  \
            KernelAdapter<&::k>::pointers.data(), &KernelAdapter<&::k>::launch},
const EmuKernel kKernels[] = {TM_KERNEL_LIST(TM_FAKE_REGISTER)};
#undef TM_FAKE_REGISTER

const EmuKernel* findKernel(std::string_view name) {
  for (const EmuKernel& k : kKernels)
    if (name == k.name) return &k;
  return nullptr;
}

}  // namespace tm_fake
