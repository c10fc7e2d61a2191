// selftest: drives a fake libcuda.so.1 built with toy.cu through every entry
// point and error path, the way the Go binding will: dlopen, dlsym, calls.
//
// Usage: selftest <path to libcuda.so.1> <path to toy.ptx>
// Prints PASS or FAIL per section, FAIL lines for each failed check, and
// exits non-zero on any failure.

#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;

enum {
  OK = 0,
  INVALID_VALUE = 1,
  OUT_OF_MEMORY = 2,
  NOT_INITIALIZED = 3,
  NO_DEVICE = 100,
  INVALID_DEVICE = 101,
  INVALID_IMAGE = 200,
  INVALID_CONTEXT = 201,
  INVALID_PTX = 218,
  UNSUPPORTED_PTX_VERSION = 222,
  INVALID_HANDLE = 400,
  NOT_FOUND = 500,
  OUT_OF_RESOURCES = 701,
  LAUNCH_FAILED = 719,
};

#define API(X) \
  X(CUresult, cuInit, (unsigned)) \
  X(CUresult, cuDriverGetVersion, (int*)) \
  X(CUresult, cuDeviceGetCount, (int*)) \
  X(CUresult, cuDeviceGet, (CUdevice*, int)) \
  X(CUresult, cuDeviceGetName, (char*, int, CUdevice)) \
  X(CUresult, cuDeviceTotalMem_v2, (size_t*, CUdevice)) \
  X(CUresult, cuDeviceGetAttribute, (int*, int, CUdevice)) \
  X(CUresult, cuDevicePrimaryCtxRetain, (CUcontext*, CUdevice)) \
  X(CUresult, cuDevicePrimaryCtxRelease_v2, (CUdevice)) \
  X(CUresult, cuCtxSetCurrent, (CUcontext)) \
  X(CUresult, cuCtxGetCurrent, (CUcontext*)) \
  X(CUresult, cuCtxSynchronize, ()) \
  X(CUresult, cuModuleLoadData, (CUmodule*, const void*)) \
  X(CUresult, cuModuleUnload, (CUmodule)) \
  X(CUresult, cuModuleGetFunction, (CUfunction*, CUmodule, const char*)) \
  X(CUresult, cuMemAlloc_v2, (CUdeviceptr*, size_t)) \
  X(CUresult, cuMemFree_v2, (CUdeviceptr)) \
  X(CUresult, cuMemcpyHtoD_v2, (CUdeviceptr, const void*, size_t)) \
  X(CUresult, cuMemcpyDtoH_v2, (void*, CUdeviceptr, size_t)) \
  X(CUresult, cuMemcpyDtoD_v2, (CUdeviceptr, CUdeviceptr, size_t)) \
  X(CUresult, cuMemsetD8_v2, (CUdeviceptr, unsigned char, size_t)) \
  X(CUresult, cuMemHostAlloc, (void**, size_t, unsigned)) \
  X(CUresult, cuMemFreeHost, (void*)) \
  X(CUresult, cuLaunchKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**)) \
  X(CUresult, cuStreamSynchronize, (CUstream)) \
  X(CUresult, cuEventCreate, (CUevent*, unsigned)) \
  X(CUresult, cuEventRecord, (CUevent, CUstream)) \
  X(CUresult, cuEventSynchronize, (CUevent)) \
  X(CUresult, cuEventElapsedTime, (float*, CUevent, CUevent)) \
  X(CUresult, cuEventDestroy_v2, (CUevent)) \
  X(CUresult, cuGetErrorName, (CUresult, const char**)) \
  X(CUresult, cuGetErrorString, (CUresult, const char**)) \
  X(int, tm_fake_inject, (const char*, int, int)) \
  X(void, tm_fake_set_devices, (int)) \
  X(void, tm_fake_reset, ()) \
  X(const char*, tm_fake_last_error, ()) \
  X(long long, tm_fake_live_allocations, ()) \
  X(int, tm_fake_abi_check, (const char*, int, const int*))

#define DECLARE(ret, name, args) ret(*name) args;
API(DECLARE)

static int sectionFailures = 0, totalFailures = 0;

static void fail(int line, const std::string& what) {
  std::printf("FAIL line %d: %s\n", line, what.c_str());
  ++sectionFailures;
  ++totalFailures;
}

static void checkEq(int line, const char* expr, long long got, long long want) {
  if (got != want) fail(line, std::string(expr) + " = " + std::to_string(got) + ", want " + std::to_string(want));
}

#define EQ(expr, want) checkEq(__LINE__, #expr, (long long)(expr), (long long)(want))
#define TRUE(cond) \
  do {             \
    if (!(cond)) fail(__LINE__, #cond); \
  } while (0)
#define HAS(str, part) \
  do { \
    const std::string s_ = (str); \
    if (s_.find(part) == std::string::npos) fail(__LINE__, "\"" + s_ + "\" lacks \"" + (part) + "\""); \
  } while (0)

static void section(const char* name, void (*fn)()) {
  sectionFailures = 0;
  fn();
  std::printf("%s %s\n", sectionFailures ? "FAIL" : "PASS", name);
  std::fflush(stdout);
}

static std::string toyPtx;

// A fresh driver with device 0's primary context current on this thread
// and toy.ptx loaded.
struct Session {
  CUcontext ctx = nullptr;
  CUmodule mod = nullptr;
};

static Session open() {
  Session s;
  tm_fake_reset();
  EQ(cuInit(0), OK);
  EQ(cuDevicePrimaryCtxRetain(&s.ctx, 0), OK);
  EQ(cuCtxSetCurrent(s.ctx), OK);
  EQ(cuModuleLoadData(&s.mod, toyPtx.c_str()), OK);
  return s;
}

static CUfunction fn(const Session& s, const char* name) {
  CUfunction f = nullptr;
  EQ(cuModuleGetFunction(&f, s.mod, name), OK);
  return f;
}

static CUresult launch(CUfunction f, unsigned grid, unsigned block, unsigned shared, std::vector<void*> params) {
  return cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shared, nullptr, params.data(), nullptr);
}

template <class T>
static CUdeviceptr upload(const std::vector<T>& v) {
  CUdeviceptr p = 0;
  EQ(cuMemAlloc_v2(&p, v.size() * sizeof(T)), OK);
  EQ(cuMemcpyHtoD_v2(p, v.data(), v.size() * sizeof(T)), OK);
  return p;
}

template <class T>
static std::vector<T> download(CUdeviceptr p, size_t n) {
  std::vector<T> v(n);
  EQ(cuMemcpyDtoH_v2(v.data(), p, n * sizeof(T)), OK);
  return v;
}

// ---------------------------------------------------------------------------

static void testNotInitialized() {
  tm_fake_reset();
  int v = 0;
  EQ(cuDriverGetVersion(&v), OK);
  EQ(v, 12080);
  EQ(cuDriverGetVersion(nullptr), INVALID_VALUE);
  const char* name = nullptr;
  EQ(cuGetErrorName(OUT_OF_MEMORY, &name), OK);
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction f;
  CUdeviceptr p;
  void* hp;
  CUevent ev;
  char buf[64];
  size_t bytes;
  float ms;
  EQ(cuDeviceGetCount(&v), NOT_INITIALIZED);
  EQ(cuDeviceGet(&dev, 0), NOT_INITIALIZED);
  EQ(cuDeviceGetName(buf, sizeof buf, 0), NOT_INITIALIZED);
  EQ(cuDeviceTotalMem_v2(&bytes, 0), NOT_INITIALIZED);
  EQ(cuDeviceGetAttribute(&v, 75, 0), NOT_INITIALIZED);
  EQ(cuDevicePrimaryCtxRetain(&ctx, 0), NOT_INITIALIZED);
  EQ(cuDevicePrimaryCtxRelease_v2(0), NOT_INITIALIZED);
  EQ(cuCtxSetCurrent(nullptr), NOT_INITIALIZED);
  EQ(cuCtxGetCurrent(&ctx), NOT_INITIALIZED);
  EQ(cuCtxSynchronize(), NOT_INITIALIZED);
  EQ(cuModuleLoadData(&mod, toyPtx.c_str()), NOT_INITIALIZED);
  EQ(cuModuleUnload(nullptr), NOT_INITIALIZED);
  EQ(cuModuleGetFunction(&f, nullptr, "vec_add"), NOT_INITIALIZED);
  EQ(cuMemAlloc_v2(&p, 16), NOT_INITIALIZED);
  EQ(cuMemFree_v2(0), NOT_INITIALIZED);
  EQ(cuMemcpyHtoD_v2(0, buf, 1), NOT_INITIALIZED);
  EQ(cuMemcpyDtoH_v2(buf, 0, 1), NOT_INITIALIZED);
  EQ(cuMemcpyDtoD_v2(0, 0, 1), NOT_INITIALIZED);
  EQ(cuMemsetD8_v2(0, 0, 1), NOT_INITIALIZED);
  EQ(cuMemHostAlloc(&hp, 16, 0), NOT_INITIALIZED);
  EQ(cuMemFreeHost(buf), NOT_INITIALIZED);
  EQ(cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), NOT_INITIALIZED);
  EQ(cuStreamSynchronize(nullptr), NOT_INITIALIZED);
  EQ(cuEventCreate(&ev, 0), NOT_INITIALIZED);
  EQ(cuEventRecord(nullptr, nullptr), NOT_INITIALIZED);
  EQ(cuEventSynchronize(nullptr), NOT_INITIALIZED);
  EQ(cuEventElapsedTime(&ms, nullptr, nullptr), NOT_INITIALIZED);
  EQ(cuEventDestroy_v2(nullptr), NOT_INITIALIZED);
  EQ(cuInit(1), INVALID_VALUE);
  EQ(cuDeviceGetCount(&v), NOT_INITIALIZED);
  EQ(cuInit(0), OK);
  EQ(cuInit(0), OK);
  EQ(cuDeviceGetCount(&v), OK);
  EQ(v, 1);
}

static void testErrorNames() {
  struct {
    int code;
    const char* name;
  } known[] = {{0, "CUDA_SUCCESS"},
               {1, "CUDA_ERROR_INVALID_VALUE"},
               {2, "CUDA_ERROR_OUT_OF_MEMORY"},
               {3, "CUDA_ERROR_NOT_INITIALIZED"},
               {100, "CUDA_ERROR_NO_DEVICE"},
               {101, "CUDA_ERROR_INVALID_DEVICE"},
               {200, "CUDA_ERROR_INVALID_IMAGE"},
               {201, "CUDA_ERROR_INVALID_CONTEXT"},
               {218, "CUDA_ERROR_INVALID_PTX"},
               {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
               {400, "CUDA_ERROR_INVALID_HANDLE"},
               {500, "CUDA_ERROR_NOT_FOUND"},
               {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
               {719, "CUDA_ERROR_LAUNCH_FAILED"}};
  for (const auto& k : known) {
    const char* s = nullptr;
    EQ(cuGetErrorName(k.code, &s), OK);
    TRUE(s && std::strcmp(s, k.name) == 0);
    s = nullptr;
    EQ(cuGetErrorString(k.code, &s), OK);
    TRUE(s && std::strlen(s) > 5);
  }
  const char* s = "x";
  EQ(cuGetErrorName(12345, &s), INVALID_VALUE);
  TRUE(s == nullptr);
  s = "x";
  EQ(cuGetErrorString(-1, &s), INVALID_VALUE);
  TRUE(s == nullptr);
  EQ(cuGetErrorName(0, nullptr), INVALID_VALUE);
  const char* oom = nullptr;
  EQ(cuGetErrorString(OUT_OF_MEMORY, &oom), OK);
  TRUE(oom && std::strcmp(oom, "out of memory") == 0);
}

static void testDevice() {
  tm_fake_reset();
  EQ(cuInit(0), OK);
  int n = -1;
  EQ(cuDeviceGetCount(&n), OK);
  EQ(n, 1);
  EQ(cuDeviceGetCount(nullptr), INVALID_VALUE);
  CUdevice dev = -1;
  EQ(cuDeviceGet(&dev, 0), OK);
  EQ(dev, 0);
  EQ(cuDeviceGet(&dev, 1), INVALID_DEVICE);
  EQ(cuDeviceGet(nullptr, 0), INVALID_VALUE);
  size_t* noBytes = nullptr;
  EQ(cuDeviceTotalMem_v2(noBytes, 0), INVALID_VALUE);
  EQ(cuDeviceGet(&dev, -1), INVALID_DEVICE);
  char name[128];
  EQ(cuDeviceGetName(name, sizeof name, 0), OK);
  TRUE(std::strcmp(name, "tidemark SIMT emulation (fake libcuda)") == 0);
  char small[9];
  EQ(cuDeviceGetName(small, sizeof small, 0), OK);
  TRUE(std::strcmp(small, "tidemark") == 0);
  EQ(cuDeviceGetName(name, 0, 0), INVALID_VALUE);
  EQ(cuDeviceGetName(name, sizeof name, 3), INVALID_DEVICE);
  size_t bytes = 0;
  EQ(cuDeviceTotalMem_v2(&bytes, 0), OK);
  EQ(bytes, 4ull << 30);
  EQ(cuDeviceTotalMem_v2(&bytes, 1), INVALID_DEVICE);
  const int attrs[][2] = {{75, 8}, {76, 0}, {16, 2}, {1, 1024}, {8, 49152}, {10, 32}};
  for (const auto& a : attrs) {
    int v = -1;
    EQ(cuDeviceGetAttribute(&v, a[0], 0), OK);
    EQ(v, a[1]);
  }
  int v;
  EQ(cuDeviceGetAttribute(&v, 9999, 0), INVALID_VALUE);
  EQ(cuDeviceGetAttribute(nullptr, 75, 0), INVALID_VALUE);
  EQ(cuDeviceGetAttribute(&v, 75, 1), INVALID_DEVICE);
}

static void testNoDevice() {
  tm_fake_reset();
  tm_fake_set_devices(0);
  EQ(cuInit(0), OK);
  int n = -1;
  EQ(cuDeviceGetCount(&n), OK);
  EQ(n, 0);
  CUdevice dev;
  EQ(cuDeviceGet(&dev, 0), INVALID_DEVICE);
  CUcontext ctx;
  EQ(cuDevicePrimaryCtxRetain(&ctx, 0), INVALID_DEVICE);
  tm_fake_reset();
  EQ(cuInit(0), OK);
  EQ(cuDeviceGetCount(&n), OK);
  EQ(n, 1);
  tm_fake_set_devices(2);
  EQ(cuDeviceGetCount(&n), OK);
  EQ(n, 2);
  EQ(cuDeviceGet(&dev, 1), OK);
  EQ(dev, 1);
}

static void testContext() {
  tm_fake_reset();
  EQ(cuInit(0), OK);
  CUcontext ctx = nullptr, cur = reinterpret_cast<CUcontext>(1);
  EQ(cuCtxGetCurrent(&cur), OK);
  TRUE(cur == nullptr);
  EQ(cuCtxGetCurrent(nullptr), INVALID_VALUE);
  CUdeviceptr p;
  EQ(cuMemAlloc_v2(&p, 16), INVALID_CONTEXT);
  EQ(cuCtxSynchronize(), INVALID_CONTEXT);
  EQ(cuDevicePrimaryCtxRelease_v2(0), INVALID_CONTEXT);
  EQ(cuDevicePrimaryCtxRetain(nullptr, 0), INVALID_VALUE);
  EQ(cuDevicePrimaryCtxRetain(&ctx, 0), OK);
  TRUE(ctx != nullptr);
  CUcontext again = nullptr;
  EQ(cuDevicePrimaryCtxRetain(&again, 0), OK);
  TRUE(again == ctx);
  EQ(cuCtxSetCurrent(reinterpret_cast<CUcontext>(&p)), INVALID_CONTEXT);
  EQ(cuCtxSetCurrent(ctx), OK);
  EQ(cuCtxGetCurrent(&cur), OK);
  TRUE(cur == ctx);
  EQ(cuCtxSynchronize(), OK);
  EQ(cuMemAlloc_v2(&p, 16), OK);
  // Two references: one release keeps it alive, the second destroys it.
  EQ(cuDevicePrimaryCtxRelease_v2(0), OK);
  EQ(cuCtxSynchronize(), OK);
  EQ(tm_fake_live_allocations(), 1);
  EQ(cuDevicePrimaryCtxRelease_v2(0), OK);
  EQ(tm_fake_live_allocations(), 0);
  EQ(cuCtxSynchronize(), INVALID_CONTEXT);
  EQ(cuMemAlloc_v2(&p, 16), INVALID_CONTEXT);
  EQ(cuCtxSetCurrent(ctx), INVALID_CONTEXT);
  EQ(cuDevicePrimaryCtxRelease_v2(0), INVALID_CONTEXT);
  EQ(cuDevicePrimaryCtxRelease_v2(5), INVALID_DEVICE);
  // Retained again, the same handle works for the thread that has it current.
  EQ(cuDevicePrimaryCtxRetain(&again, 0), OK);
  TRUE(again == ctx);
  EQ(cuCtxSynchronize(), OK);
  EQ(cuCtxSetCurrent(nullptr), OK);
  EQ(cuCtxSynchronize(), INVALID_CONTEXT);
}

// The current context belongs to an OS thread: another thread has none
// until it sets it.
static void testThreadAffinity() {
  Session s = open();
  CUfunction f = fn(s, "vec_add");
  CUdeviceptr mine = 0;
  EQ(cuMemAlloc_v2(&mine, 64), OK);
  std::thread([&] {
    CUdeviceptr p;
    CUmodule m;
    CUevent ev;
    CUcontext cur = reinterpret_cast<CUcontext>(1);
    EQ(cuCtxGetCurrent(&cur), OK);
    TRUE(cur == nullptr);
    EQ(cuMemAlloc_v2(&p, 64), INVALID_CONTEXT);
    EQ(cuMemFree_v2(mine), INVALID_CONTEXT);
    EQ(cuMemcpyHtoD_v2(mine, &p, 8), INVALID_CONTEXT);
    EQ(cuCtxSynchronize(), INVALID_CONTEXT);
    EQ(cuStreamSynchronize(nullptr), INVALID_CONTEXT);
    EQ(cuModuleLoadData(&m, toyPtx.c_str()), INVALID_CONTEXT);
    EQ(cuEventCreate(&ev, 0), INVALID_CONTEXT);
    EQ(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), INVALID_CONTEXT);
    EQ(cuCtxSetCurrent(s.ctx), OK);
    EQ(cuMemAlloc_v2(&p, 64), OK);
    EQ(cuMemFree_v2(p), OK);
  }).join();
  EQ(cuMemFree_v2(mine), OK);
  // Several threads allocating and copying at once, each with the context.
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      EQ(cuCtxSetCurrent(s.ctx), OK);
      for (int i = 0; i < 50; ++i) {
        CUdeviceptr p;
        int v = t * 1000 + i, back = -1;
        EQ(cuMemAlloc_v2(&p, 4), OK);
        EQ(cuMemcpyHtoD_v2(p, &v, 4), OK);
        EQ(cuMemcpyDtoH_v2(&back, p, 4), OK);
        EQ(back, v);
        EQ(cuMemFree_v2(p), OK);
      }
    });
  for (auto& t : ts) t.join();
  EQ(tm_fake_live_allocations(), 0);
}

static std::string withHeader(const char* header, const char* body = "") {
  return std::string(header) + "\n.visible .entry vec_add(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)\n{\n ret;\n}\n" + body;
}

static void testModule() {
  Session s = open();
  CUmodule m = nullptr;
  EQ(cuModuleLoadData(nullptr, toyPtx.c_str()), INVALID_VALUE);
  EQ(cuModuleLoadData(&m, nullptr), INVALID_VALUE);
  const struct {
    const char* header;
    int want;
  } headers[] = {
      {".version 7.0\n.target sm_80\n.address_size 64", OK},
      {".version 8.0\n.target sm_75\n.address_size 64", OK},
      {".version 6.4\n.target sm_52, debug\n.address_size 64", OK},
      {".version 8.1\n.target sm_80\n.address_size 64", UNSUPPORTED_PTX_VERSION},
      {".version 9.0\n.target sm_80\n.address_size 64", UNSUPPORTED_PTX_VERSION},
      {".version 7.0\n.target sm_86\n.address_size 64", INVALID_PTX},
      {".version 7.0\n.target sm_90a\n.address_size 64", INVALID_PTX},
      {".version 7.0\n.target compute_80\n.address_size 64", INVALID_PTX},
      {".version 7.0\n.target sm_80\n.address_size 32", INVALID_PTX},
      {".version seven\n.target sm_80\n.address_size 64", INVALID_PTX},
      {".target sm_80\n.address_size 64", INVALID_IMAGE},
      {".version 7.0\n.address_size 64", INVALID_IMAGE},
      {".version 7.0\n.target sm_80", INVALID_IMAGE},
      {"// .version 7.0\n.target sm_80\n.address_size 64", INVALID_IMAGE},
  };
  for (const auto& h : headers) {
    m = nullptr;
    const std::string ptx = withHeader(h.header);
    const CUresult r = cuModuleLoadData(&m, ptx.c_str());
    if (r != h.want) fail(__LINE__, std::string("header \"") + h.header + "\" gave " + std::to_string(r));
    if (r == OK) EQ(cuModuleUnload(m), OK);
  }
  EQ(cuModuleLoadData(&m, "\x7f" "ELF binary"), INVALID_IMAGE);
  const char* badEntries[] = {
      ".visible .entry k(.param .q32 x)\n",
      ".visible .entry k(.param .u32 x\n",
      ".visible .entry k(.param .u32 x[0])\n",
      ".visible .entry k(.param .u32)\n",
      ".visible .entry vec_add()\n",  // a second vec_add
  };
  for (const char* b : badEntries) {
    const std::string ptx = withHeader(".version 7.0\n.target sm_80\n.address_size 64", b);
    EQ(cuModuleLoadData(&m, ptx.c_str()), INVALID_PTX);
  }

  // Functions: every toy kernel resolves; names not in both the PTX and
  // the source do not.
  const char* kernels[] = {"vec_add", "block_sum", "dyn_reverse", "params_probe", "early_exit", "warp_ops", "atomics",
                           "index3d", "deadlock",  "overflow",    "bad_mask",     "trap5",      "spin"};
  for (const char* k : kernels) {
    CUfunction f = nullptr;
    EQ(cuModuleGetFunction(&f, s.mod, k), OK);
    CUfunction again = nullptr;
    EQ(cuModuleGetFunction(&again, s.mod, k), OK);
    TRUE(f != nullptr && f == again);
  }
  CUfunction f = nullptr;
  EQ(cuModuleGetFunction(&f, s.mod, "ptx_only"), NOT_FOUND);
  EQ(cuModuleGetFunction(&f, s.mod, "nothing"), NOT_FOUND);
  EQ(cuModuleGetFunction(nullptr, s.mod, "vec_add"), INVALID_VALUE);
  EQ(cuModuleGetFunction(&f, s.mod, nullptr), INVALID_VALUE);
  EQ(cuModuleGetFunction(&f, reinterpret_cast<CUmodule>(&f), "vec_add"), INVALID_HANDLE);
  // In the source but not in this module's PTX.
  const std::string onlyVecAdd = withHeader(".version 7.0\n.target sm_80\n.address_size 64");
  CUmodule small = nullptr;
  EQ(cuModuleLoadData(&small, onlyVecAdd.c_str()), OK);
  EQ(cuModuleGetFunction(&f, small, "vec_add"), OK);
  EQ(cuModuleGetFunction(&f, small, "block_sum"), NOT_FOUND);

  // ABI: a size or count that differs from the emulated source.
  const char* abiBad[] = {
      ".visible .entry vec_add(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 n)\n",
      ".visible .entry vec_add(.param .u64 a, .param .u64 b, .param .u64 c)\n",
      ".visible .entry params_probe(.param .align 8 .b8 p[12], .param .u32 i, .param .f32 f, .param .u8 u, "
      ".param .u64 o, .param .u64 b)\n",
  };
  for (const char* b : abiBad) {
    const std::string ptx = std::string(".version 7.0\n.target sm_80\n.address_size 64\n") + b;
    CUmodule bad = nullptr;
    EQ(cuModuleLoadData(&bad, ptx.c_str()), OK);
    const std::string name = std::strstr(b, "params_probe") ? "params_probe" : "vec_add";
    EQ(cuModuleGetFunction(&f, bad, name.c_str()), INVALID_IMAGE);
    HAS(tm_fake_last_error(), "kernel " + name + ": the PTX declares parameter sizes");
    EQ(cuModuleUnload(bad), OK);
  }
  const int good[] = {8, 8, 8, 4}, wrong[] = {8, 8, 8, 8};
  EQ(tm_fake_abi_check("vec_add", 4, good), OK);
  EQ(tm_fake_abi_check("vec_add", 4, wrong), INVALID_IMAGE);
  EQ(tm_fake_abi_check("vec_add", 3, good), INVALID_IMAGE);
  EQ(tm_fake_abi_check("nothing", 4, good), NOT_FOUND);
  EQ(tm_fake_abi_check("vec_add", 4, nullptr), INVALID_VALUE);

  // Unloading invalidates the module and its functions.
  CUfunction va = fn(s, "vec_add");
  EQ(cuModuleUnload(s.mod), OK);
  EQ(cuModuleUnload(s.mod), INVALID_HANDLE);
  EQ(cuModuleGetFunction(&f, s.mod, "vec_add"), INVALID_HANDLE);
  CUdeviceptr p = 0;
  int n = 0;
  void* params[] = {&p, &p, &p, &n};
  EQ(cuLaunchKernel(va, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), INVALID_HANDLE);
}

static void testMemory() {
  open();
  CUdeviceptr p = 0;
  EQ(cuMemAlloc_v2(&p, 0), INVALID_VALUE);
  EQ(cuMemAlloc_v2(nullptr, 16), INVALID_VALUE);
  EQ(cuMemAlloc_v2(&p, (4ull << 30) + 1), OUT_OF_MEMORY);
  EQ(cuMemAlloc_v2(&p, ~size_t(0)), OUT_OF_MEMORY);
  EQ(tm_fake_live_allocations(), 0);
  EQ(cuMemAlloc_v2(&p, 1000), OK);
  EQ(p % 256, 0);
  EQ(tm_fake_live_allocations(), 1);
  // Fresh memory is garbage (0xFF), not zero.
  std::vector<unsigned char> bytes = download<unsigned char>(p, 1000);
  TRUE(bytes[0] == 0xFF && bytes[999] == 0xFF);
  std::vector<int> v(250);
  for (int i = 0; i < 250; ++i) v[i] = i * 7;
  EQ(cuMemcpyHtoD_v2(p, v.data(), 1000), OK);
  EQ(download<int>(p, 250) == v, 1);
  // Ranges inside, at the end, and past it.
  int x = -1;
  EQ(cuMemcpyDtoH_v2(&x, p + 996, 4), OK);
  EQ(x, 249 * 7);
  EQ(cuMemcpyDtoH_v2(&x, p + 997, 4), INVALID_VALUE);
  EQ(cuMemcpyHtoD_v2(p + 996, v.data(), 8), INVALID_VALUE);
  EQ(cuMemcpyHtoD_v2(p - 4, v.data(), 4), INVALID_VALUE);
  EQ(cuMemcpyHtoD_v2(p, nullptr, 4), INVALID_VALUE);
  EQ(cuMemcpyDtoH_v2(nullptr, p, 4), INVALID_VALUE);
  EQ(cuMemcpyHtoD_v2(p, v.data(), 0), OK);
  EQ(cuMemcpyDtoH_v2(&x, 12345, 4), INVALID_VALUE);
  EQ(cuMemsetD8_v2(p + 4, 0, 8), OK);
  EQ(download<int>(p, 4)[1], 0);
  EQ(download<int>(p, 4)[3], 21);
  EQ(cuMemsetD8_v2(p + 999, 1, 2), INVALID_VALUE);
  // Device to device, within and across allocations (never spanning two).
  CUdeviceptr q = 0;
  EQ(cuMemAlloc_v2(&q, 1000), OK);
  EQ(cuMemcpyDtoD_v2(q, p, 1000), OK);
  EQ(download<int>(q, 250)[100], 700);
  EQ(cuMemcpyDtoD_v2(q + 4, q, 8), OK);
  EQ(download<int>(q, 3)[2], 0);
  EQ(cuMemcpyDtoD_v2(q, p, 1001), INVALID_VALUE);
  EQ(cuMemcpyDtoD_v2(q + 1, p, 1000), INVALID_VALUE);
  // Frees: only the start of a live allocation, once.
  EQ(cuMemFree_v2(p + 4), INVALID_VALUE);
  EQ(cuMemFree_v2(p), OK);
  EQ(cuMemFree_v2(p), INVALID_VALUE);
  EQ(cuMemcpyDtoH_v2(&x, p, 4), INVALID_VALUE);
  EQ(cuMemFree_v2(0), INVALID_VALUE);
  // Pinned host memory: tracked apart from device memory.
  void* h = nullptr;
  EQ(cuMemHostAlloc(&h, 4096, 0), OK);
  EQ(reinterpret_cast<uintptr_t>(h) % 256, 0);
  std::memset(h, 3, 4096);
  EQ(cuMemHostAlloc(&h, 0, 0), INVALID_VALUE);
  EQ(cuMemHostAlloc(nullptr, 16, 0), INVALID_VALUE);
  EQ(cuMemHostAlloc(&h, 16, 0x80), INVALID_VALUE);
  void* h2 = nullptr;
  EQ(cuMemHostAlloc(&h2, 64, 0x3), OK);
  EQ(tm_fake_live_allocations(), 1);
  EQ(cuMemcpyHtoD_v2(q, h, 1000), OK);
  EQ(cuMemcpyHtoD_v2(reinterpret_cast<CUdeviceptr>(h), v.data(), 4), INVALID_VALUE);
  EQ(cuMemFree_v2(reinterpret_cast<CUdeviceptr>(h)), INVALID_VALUE);
  EQ(cuMemFreeHost(reinterpret_cast<void*>(q)), INVALID_VALUE);
  EQ(cuMemFreeHost(&x), INVALID_VALUE);
  EQ(cuMemFreeHost(h), OK);
  EQ(cuMemFreeHost(h), INVALID_VALUE);
  EQ(cuMemFreeHost(h2), OK);
  EQ(cuMemFree_v2(q), OK);
  EQ(tm_fake_live_allocations(), 0);
}

static void testInject() {
  open();
  EQ(tm_fake_inject("cuNothing", 0, 2), NOT_FOUND);
  EQ(tm_fake_inject("cuMemAlloc_v2", -1, 2), INVALID_VALUE);
  EQ(tm_fake_inject("cuMemAlloc_v2", 1, OUT_OF_MEMORY), OK);
  CUdeviceptr a = 0, b = 0, c = 0;
  EQ(cuMemAlloc_v2(&a, 16), OK);
  EQ(cuMemAlloc_v2(&b, 16), OUT_OF_MEMORY);
  TRUE(b == 0);  // nothing done
  EQ(cuMemAlloc_v2(&c, 16), OK);
  EQ(tm_fake_live_allocations(), 2);
  EQ(cuMemFree_v2(a), OK);
  EQ(cuMemFree_v2(c), OK);
  // An injected launch failure does nothing, so it leaves no sticky state.
  EQ(tm_fake_inject("cuLaunchKernel", 0, LAUNCH_FAILED), OK);
  EQ(cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), LAUNCH_FAILED);
  EQ(cuCtxSynchronize(), OK);
  // Injection precedes every other check, initialisation included.
  tm_fake_reset();
  EQ(tm_fake_inject("cuInit", 0, NO_DEVICE), OK);
  EQ(cuInit(0), NO_DEVICE);
  int n = -1;
  EQ(cuDeviceGetCount(&n), NOT_INITIALIZED);
  EQ(cuInit(0), OK);
  EQ(tm_fake_inject("cuGetErrorName", 0, 999), OK);
  const char* str;
  EQ(cuGetErrorName(0, &str), 999);
  EQ(cuGetErrorName(0, &str), OK);
  // reset disarms.
  EQ(tm_fake_inject("cuDeviceGetCount", 0, INVALID_VALUE), OK);
  tm_fake_reset();
  EQ(cuInit(0), OK);
  EQ(cuDeviceGetCount(&n), OK);
}

static void testKernels() {
  Session s = open();
  // vec_add over 1000 elements in 8 blocks of 128: the last block's tail
  // threads return at once.
  {
    const int n = 1000;
    std::vector<float> a(n), b(n);
    for (int i = 0; i < n; ++i) a[i] = i * 0.5f, b[i] = 1000 - i;
    CUdeviceptr da = upload(a), db = upload(b), dc = upload(std::vector<float>(n, -1));
    int nn = n;
    EQ(launch(fn(s, "vec_add"), 8, 128, 0, {&da, &db, &dc, &nn}), OK);
    std::vector<float> c = download<float>(dc, n);
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += c[i] != a[i] + b[i];
    EQ(bad, 0);
    for (CUdeviceptr p : {da, db, dc}) EQ(cuMemFree_v2(p), OK);
  }
  // block_sum: shuffles, static shared, __syncthreads, atomicAdd over 4 blocks.
  {
    const int n = 1000;
    std::vector<float> in(n);
    float want = 0;
    for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i % 7), want += in[i];
    CUdeviceptr din = upload(in), dout = upload(std::vector<float>{0});
    int nn = n;
    EQ(launch(fn(s, "block_sum"), 4, 256, 0, {&din, &dout, &nn}), OK);
    EQ(download<float>(dout, 1)[0], want);
    for (CUdeviceptr p : {din, dout}) EQ(cuMemFree_v2(p), OK);
  }
  // dyn_reverse: dynamic shared memory, refilled with 0xFF for each block.
  {
    const int n = 128;
    std::vector<int> in(n);
    for (int i = 0; i < n; ++i) in[i] = i * 3;
    CUdeviceptr din = upload(in), dout = upload(std::vector<int>(n, 0)), dprobe = upload(std::vector<unsigned>(n, 0));
    EQ(launch(fn(s, "dyn_reverse"), 2, 64, 64 * sizeof(int), {&din, &dout, &dprobe}), OK);
    std::vector<int> out = download<int>(dout, n);
    std::vector<unsigned> probe = download<unsigned>(dprobe, n);
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += out[i] != in[i / 64 * 64 + 63 - i % 64] || probe[i] != 0xFFFFFFFFu;
    EQ(bad, 0);
    // One byte of dynamic shared memory too few: the last thread writes
    // past it and the launch fails.
    EQ(launch(fn(s, "dyn_reverse"), 1, 64, 64 * sizeof(int) - 1, {&din, &dout, &dprobe}), LAUNCH_FAILED);
    HAS(tm_fake_last_error(), "kernel dyn_reverse: block (0,0,0) wrote outside its 255 bytes of dynamic shared memory");
  }
  s = open();
  // params_probe: a 16-byte struct and five scalars, each read as exactly
  // its own size from kernelParams.
  {
    struct Pair {
      double a;
      long long b;
    } pair = {2.5, -(1ll << 40)};
    int i = -7;
    float f = 0.25f;
    unsigned char u8 = 200;
    long long big = (1ll << 50) + 3;
    CUdeviceptr dout = upload(std::vector<double>(6, 0));
    EQ(launch(fn(s, "params_probe"), 1, 32, 0, {&pair, &i, &f, &u8, &dout, &big}), OK);
    std::vector<double> o = download<double>(dout, 6);
    TRUE(o[0] == 2.5 && o[1] == -(double)(1ll << 40) && o[2] == -7 && o[3] == 0.25 && o[4] == 200 &&
         o[5] == (double)((1ll << 50) + 3));
    EQ(cuMemFree_v2(dout), OK);
  }
  // early_exit: threads that returned count as arrived at barriers and
  // are absent from their warp; 96 threads, 40 stay.
  {
    const int keep = 40;
    CUdeviceptr dout = upload(std::vector<int>(96, -1)), gates = upload(std::vector<int>{0, 0});
    int k = keep;
    EQ(launch(fn(s, "early_exit"), 1, 96, 0, {&dout, &k, &gates}), OK);
    std::vector<int> out = download<int>(dout, 96);
    int bad = 0;
    for (int t = 0; t < 96; ++t) {
      int down = t + 1;
      if (t == 31 || t == keep - 1) down = t;  // segment end / exited source: own value
      const int want = t < keep ? ((t + 1) % keep) * 10 * 1000 + down : -1;
      bad += out[t] != want;
    }
    EQ(bad, 0);
    for (CUdeviceptr p : {dout, gates}) EQ(cuMemFree_v2(p), OK);
  }
  // warp_ops: every shuffle flavour, votes and types, in two warps.
  {
    CUdeviceptr dout = upload(std::vector<long long>(64 * 14, -1));
    EQ(launch(fn(s, "warp_ops"), 1, 64, 0, {&dout}), OK);
    std::vector<long long> o = download<long long>(dout, 64 * 14);
    int bad = 0;
    for (int t = 0; t < 64; ++t) {
      const long long lane = t % 32;
      float lanef = static_cast<float>(lane & ~7ll);
      unsigned bits;
      std::memcpy(&bits, &lanef, 4);
      const long long want[14] = {((lane + 3) % 32) * 3,
                                  lane == 0 ? 0 : lane - 1,
                                  (lane % 16) + 2 < 16 ? lane + 2 : lane,
                                  lane ^ 5,
                                  0xAAAAAAAAll,
                                  1,
                                  0,
                                  63 - 2 * lane,
                                  (lane ^ 1) << 40,
                                  bits,
                                  32,
                                  lane < 16 ? lane : lane - 16,
                                  (lane & ~7ll) + ((lane + 3) & 7),
                                  (lane & 7) >= 3 ? lane - 3 : lane};
      for (int j = 0; j < 14; ++j)
        if (o[t * 14 + j] != want[j]) {
          if (bad++ < 5)
            fail(__LINE__, "warp_ops thread " + std::to_string(t) + " word " + std::to_string(j) + " = " +
                               std::to_string(o[t * 14 + j]) + ", want " + std::to_string(want[j]));
        }
    }
    EQ(bad, 0);
    EQ(cuMemFree_v2(dout), OK);
  }
  // atomics from 2 × 64 threads.
  {
    CUdeviceptr di = upload(std::vector<int>{0}), du = upload(std::vector<unsigned>{0}),
                dull = upload(std::vector<unsigned long long>{0}), df = upload(std::vector<float>{0}),
                dd = upload(std::vector<double>{0}), dmn = upload(std::vector<int>{1 << 30}),
                dmx = upload(std::vector<unsigned>{0}), dcas = upload(std::vector<unsigned>{0}),
                dex = upload(std::vector<int>{0});
    EQ(launch(fn(s, "atomics"), 2, 64, 0, {&di, &du, &dull, &df, &dd, &dmn, &dmx, &dcas, &dex}), OK);
    EQ(download<int>(di, 1)[0], 128);
    EQ(download<unsigned>(du, 1)[0], 256);
    EQ(download<unsigned long long>(dull, 1)[0], 128ull << 33);
    EQ(download<float>(df, 1)[0], 64);
    EQ(download<double>(dd, 1)[0], 32);
    EQ(download<int>(dmn, 1)[0], 1000 - 127);
    EQ(download<unsigned>(dmx, 1)[0], 127);
    EQ(download<unsigned>(dcas, 1)[0], 384);
    EQ(download<int>(dex, 1)[0], 7);
    for (CUdeviceptr p : {di, du, dull, df, dd, dmn, dmx, dcas, dex}) EQ(cuMemFree_v2(p), OK);
  }
  // index3d: builtins in three dimensions; blocks run x fastest, then y, z.
  {
    CUdeviceptr dout = upload(std::vector<unsigned>(128, 0)), dorder = upload(std::vector<unsigned>(8, 99)),
                dticket = upload(std::vector<unsigned>{0});
    void* params[] = {&dout, &dorder, &dticket};
    EQ(cuLaunchKernel(fn(s, "index3d"), 2, 2, 2, 4, 2, 2, 0, nullptr, params, nullptr), OK);
    std::vector<unsigned> out = download<unsigned>(dout, 128), order = download<unsigned>(dorder, 8);
    int bad = 0;
    for (unsigned b = 0; b < 8; ++b) {
      bad += order[b] != b;
      for (unsigned t = 0; t < 16; ++t) {
        const unsigned want = (t % 4) | (t / 4 % 2) << 4 | (t / 8) << 8 | (b % 2) << 12 | (b / 2 % 2) << 16 |
                              (b / 4) << 20;
        bad += out[b * 16 + t] != want;
      }
    }
    EQ(bad, 0);
    for (CUdeviceptr p : {dout, dorder, dticket}) EQ(cuMemFree_v2(p), OK);
  }
  EQ(tm_fake_live_allocations(), 0);
}

static void testLaunchValidation() {
  Session s = open();
  CUfunction f = fn(s, "vec_add");
  CUdeviceptr p = 0;
  EQ(cuMemAlloc_v2(&p, 4096), OK);
  int n = 0;
  void* params[] = {&p, &p, &p, &n};
  auto L = [&](unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shm,
               CUstream st, void** kp, void** extra) { return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shm, st, kp, extra); };
  EQ(L(1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), OK);
  EQ(L(0, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), INVALID_VALUE);
  EQ(L(1, 0, 1, 32, 1, 1, 0, nullptr, params, nullptr), INVALID_VALUE);
  EQ(L(1, 1, 1, 32, 1, 0, 0, nullptr, params, nullptr), INVALID_VALUE);
  EQ(L(1, 65536, 1, 32, 1, 1, 0, nullptr, params, nullptr), INVALID_VALUE);
  EQ(L(1, 1, 1, 1, 1, 65, 0, nullptr, params, nullptr), INVALID_VALUE);
  EQ(L(1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), INVALID_VALUE);
  void* holes[] = {&p, nullptr, &p, &n};
  EQ(L(1, 1, 1, 32, 1, 1, 0, nullptr, holes, nullptr), INVALID_VALUE);
  void* extra[] = {nullptr};
  EQ(L(1, 1, 1, 32, 1, 1, 0, nullptr, params, extra), INVALID_VALUE);
  EQ(L(1, 1, 1, 1025, 1, 1, 0, nullptr, params, nullptr), OUT_OF_RESOURCES);
  EQ(L(1, 1, 1, 64, 4, 5, 0, nullptr, params, nullptr), OUT_OF_RESOURCES);
  EQ(L(1, 1, 1, 64, 4, 4, 0, nullptr, params, nullptr), OK);
  EQ(L(1, 1, 1, 32, 1, 1, 48 * 1024 + 1, nullptr, params, nullptr), OUT_OF_RESOURCES);
  EQ(L(1, 1, 1, 32, 1, 1, 48 * 1024, nullptr, params, nullptr), OK);
  EQ(L(1, 1, 1, 32, 1, 1, 0, reinterpret_cast<CUstream>(0x1), params, nullptr), OK);
  EQ(L(1, 1, 1, 32, 1, 1, 0, reinterpret_cast<CUstream>(0x1234), params, nullptr), INVALID_HANDLE);
  EQ(cuLaunchKernel(reinterpret_cast<CUfunction>(&n), 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), INVALID_HANDLE);
  EQ(cuLaunchKernel(nullptr, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), INVALID_HANDLE);
  EQ(cuStreamSynchronize(nullptr), OK);
  EQ(cuStreamSynchronize(reinterpret_cast<CUstream>(0x2)), OK);
  EQ(cuStreamSynchronize(reinterpret_cast<CUstream>(0x1234)), INVALID_HANDLE);
  EQ(cuCtxSynchronize(), OK);
  EQ(cuMemFree_v2(p), OK);
}

static void testEvents() {
  open();
  CUevent a = nullptr, b = nullptr, quiet = nullptr;
  EQ(cuEventCreate(&a, 0), OK);
  EQ(cuEventCreate(&b, 1), OK);
  EQ(cuEventCreate(&quiet, 2), OK);
  EQ(cuEventCreate(nullptr, 0), INVALID_VALUE);
  EQ(cuEventCreate(&a, 0x10), INVALID_VALUE);
  float ms = -1;
  EQ(cuEventElapsedTime(&ms, a, b), INVALID_HANDLE);  // not recorded
  EQ(cuEventRecord(a, nullptr), OK);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EQ(cuEventRecord(b, nullptr), OK);
  EQ(cuEventRecord(b, reinterpret_cast<CUstream>(0x99)), INVALID_HANDLE);
  EQ(cuEventSynchronize(b), OK);
  EQ(cuEventElapsedTime(&ms, a, b), OK);
  TRUE(ms >= 19.0f && ms < 2000.0f);
  EQ(cuEventElapsedTime(nullptr, a, b), INVALID_VALUE);
  EQ(cuEventRecord(quiet, nullptr), OK);
  EQ(cuEventElapsedTime(&ms, a, quiet), INVALID_HANDLE);
  EQ(cuEventDestroy_v2(a), OK);
  EQ(cuEventDestroy_v2(a), INVALID_HANDLE);
  EQ(cuEventSynchronize(a), INVALID_HANDLE);
  EQ(cuEventRecord(a, nullptr), INVALID_HANDLE);
  EQ(cuEventElapsedTime(&ms, a, b), INVALID_HANDLE);
  EQ(cuEventDestroy_v2(b), OK);
  EQ(cuEventDestroy_v2(quiet), OK);
}

// After a failed launch every call in the context fails until the primary
// context is released to zero and retained again.
// f is any function of the module, fetched before the failure (fetching
// fails too once the context has).
static void expectSticky(Session& s, CUfunction f, const char* message) {
  HAS(tm_fake_last_error(), message);
  CUdeviceptr p;
  CUmodule m;
  CUevent ev;
  EQ(cuCtxSynchronize(), LAUNCH_FAILED);
  EQ(cuMemAlloc_v2(&p, 16), LAUNCH_FAILED);
  EQ(cuModuleLoadData(&m, toyPtx.c_str()), LAUNCH_FAILED);
  EQ(cuEventCreate(&ev, 0), LAUNCH_FAILED);
  EQ(cuStreamSynchronize(nullptr), LAUNCH_FAILED);
  CUfunction g;
  EQ(cuModuleGetFunction(&g, s.mod, "vec_add"), LAUNCH_FAILED);
  EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), LAUNCH_FAILED);
  // The device is still there, and the context comes back re-created.
  int n;
  EQ(cuDeviceGetCount(&n), OK);
  EQ(cuDevicePrimaryCtxRelease_v2(0), OK);
  EQ(tm_fake_live_allocations(), 0);
  CUcontext again = nullptr;
  EQ(cuDevicePrimaryCtxRetain(&again, 0), OK);
  TRUE(again == s.ctx);
  EQ(cuCtxSynchronize(), OK);
  EQ(cuMemAlloc_v2(&p, 16), OK);
  EQ(cuMemFree_v2(p), OK);
  EQ(cuModuleLoadData(&s.mod, toyPtx.c_str()), OK);
}

static void testFailures() {
  Session s = open();
  // Guard zones: one element past the end.
  {
    CUdeviceptr buf = upload(std::vector<int>(100, 0)), other = upload(std::vector<int>(10, 0));
    int n = 100;
    CUfunction f = fn(s, "overflow");
    EQ(launch(f, 1, 32, 0, {&buf, &n}), LAUNCH_FAILED);
    HAS(tm_fake_last_error(), "kernel overflow wrote outside device allocation");
    HAS(tm_fake_last_error(), "(400 bytes): guard byte at offset 400");
    EQ(cuMemFree_v2(other), LAUNCH_FAILED);
    expectSticky(s, f, "wrote outside");
  }
  // Watchdog: a barrier some threads never reach.
  {
    setenv("TM_FAKE_WATCHDOG_MS", "500", 1);
    CUdeviceptr out = upload(std::vector<int>(64, 0));
    CUfunction f = fn(s, "deadlock");
    const auto t0 = std::chrono::steady_clock::now();
    EQ(launch(f, 1, 64, 0, {&out}), LAUNCH_FAILED);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    TRUE(secs >= 0.4 && secs < 5.0);
    unsetenv("TM_FAKE_WATCHDOG_MS");
    HAS(tm_fake_last_error(), "kernel deadlock: watchdog: block (0,0,0) made no progress for 500 ms");
    HAS(tm_fake_last_error(), "0 of 64 threads exited, 33 waiting at __syncthreads, 31 at warp intrinsics");
    expectSticky(s, f, "deadlock");
  }
  // A thread spinning without barriers cannot be unwound: the launch fails
  // and it is left running (detached) until the host releases it.
  {
    setenv("TM_FAKE_WATCHDOG_MS", "300", 1);
    CUdeviceptr flag = upload(std::vector<int>{0});
    CUfunction f = fn(s, "spin");
    const auto t0 = std::chrono::steady_clock::now();
    EQ(launch(f, 1, 64, 0, {&flag}), LAUNCH_FAILED);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    TRUE(secs >= 0.5 && secs < 5.0);  // the watchdog, then as long again for the thread to leave
    unsetenv("TM_FAKE_WATCHDOG_MS");
    HAS(tm_fake_last_error(), "kernel spin: watchdog: block (0,0,0) made no progress for 300 ms (63 of 64 threads exited");
    __atomic_store_n(reinterpret_cast<int*>(flag), 1, __ATOMIC_SEQ_CST);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    expectSticky(s, f, "loop that does not end");
  }
  // A mask that is not the warp's live lanes.
  {
    CUdeviceptr out = upload(std::vector<float>(64, 0));
    CUfunction f = fn(s, "bad_mask");
    EQ(launch(f, 1, 64, 0, {&out}), LAUNCH_FAILED);
    HAS(tm_fake_last_error(), "kernel bad_mask: __shfl_sync in warp");
    HAS(tm_fake_last_error(), "mask 0x0000ffff, but the lanes that have not exited are 0xffffffff");
    expectSticky(s, f, "mask");
  }
  // __trap in one thread while the others wait at a barrier.
  {
    CUdeviceptr out = upload(std::vector<int>(64, 0));
    CUfunction f = fn(s, "trap5");
    EQ(launch(f, 2, 64, 0, {&out}), LAUNCH_FAILED);
    HAS(tm_fake_last_error(), "kernel trap5: __trap() in thread (5,0,0) of block (0,0,0)");
    expectSticky(s, f, "__trap");
  }
  // A host pointer where the kernel wants device memory.
  {
    std::vector<int> host(64);
    int* hp = host.data();
    int n = 1;
    CUfunction f = fn(s, "overflow");
    EQ(launch(f, 1, 32, 0, {&hp, &n}), LAUNCH_FAILED);
    HAS(tm_fake_last_error(), "kernel overflow: parameter 0 (pointer 0x");
    HAS(tm_fake_last_error(), "is not inside a live allocation");
    EQ(host[1], 0);  // the kernel did not run
    expectSticky(s, f, "not inside");
  }
  // Host code writing through a device pointer past the end: found at free.
  {
    CUfunction f = fn(s, "vec_add");
    CUdeviceptr p = upload(std::vector<int>(4, 0));
    reinterpret_cast<unsigned char*>(p)[16] = 0;
    EQ(cuMemFree_v2(p), LAUNCH_FAILED);
    HAS(tm_fake_last_error(), "host code wrote outside device allocation");
    EQ(tm_fake_live_allocations(), 0);
    expectSticky(s, f, "host code");
  }
  // ... and at context release.
  {
    CUdeviceptr p = upload(std::vector<int>(4, 0));
    reinterpret_cast<unsigned char*>(p)[-1] = 0;
    EQ(cuDevicePrimaryCtxRelease_v2(0), LAUNCH_FAILED);
    HAS(tm_fake_last_error(), "guard byte at offset -1");
    EQ(tm_fake_live_allocations(), 0);
    EQ(cuCtxSynchronize(), INVALID_CONTEXT);
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <libcuda.so.1> <toy.ptx>\n", argv[0]);
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "FAIL dlopen: %s\n", dlerror());
    return 1;
  }
#define BIND(ret, name, args)                                     \
  name = reinterpret_cast<ret(*) args>(dlsym(lib, #name));        \
  if (!name) {                                                    \
    std::fprintf(stderr, "FAIL dlsym %s: %s\n", #name, dlerror()); \
    return 1;                                                     \
  }
  API(BIND)
  std::ifstream in(argv[2]);
  std::stringstream ss;
  ss << in.rdbuf();
  toyPtx = ss.str();
  if (!in || toyPtx.empty()) {
    std::fprintf(stderr, "FAIL reading %s\n", argv[2]);
    return 1;
  }

  section("not-initialized", testNotInitialized);
  section("error-names", testErrorNames);
  section("device", testDevice);
  section("no-device", testNoDevice);
  section("context", testContext);
  section("thread-affinity", testThreadAffinity);
  section("module", testModule);
  section("memory", testMemory);
  section("inject", testInject);
  section("kernels", testKernels);
  section("launch-validation", testLaunchValidation);
  section("events", testEvents);
  section("failures", testFailures);
  tm_fake_reset();
  std::printf("%s: %d failed checks\n", totalFailures ? "FAIL" : "PASS", totalFailures);
  return totalFailures ? 1 : 0;
}
