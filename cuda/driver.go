package cuda

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"
)

// DefaultLibrary is the driver library Open loads when neither
// Options.Library nor the TIDEMARK_LIBCUDA environment variable names one:
// the soname every NVIDIA driver installs.
const DefaultLibrary = "libcuda.so.1"

// ErrNoDriver means the CUDA driver library could not be loaded; ErrNoDevice
// that it loaded but reports no usable device. Either way the CPU backend
// runs, and Probe says why.
var (
	ErrNoDriver = errors.New("cuda: driver not found")
	ErrNoDevice = errors.New("cuda: no CUDA device")
)

// Error is a failed driver call: the entry point, the CUresult and the
// driver's own name and description of it.
type Error struct {
	Op      string // the entry point, e.g. "cuMemAlloc_v2"
	Code    int
	Name    string // e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Message string // the driver's description
}

func (e *Error) Error() string {
	return fmt.Sprintf("cuda: %s: %s (%d): %s", e.Op, e.Name, e.Code, e.Message)
}

// CUresult values the binding tests for.
const (
	cudaSuccess        = 0
	cudaErrorNoDevice  = 100
	cudaErrorNotFound  = 500
	cudaErrorOutOfMem  = 2
	cudaErrorLaunch    = 719
	attrMultiprocessor = 16
	attrCCMajor        = 75
	attrCCMinor        = 76
)

// driver is the loaded library: the entry points the binding uses, bound
// by their versioned names. cuda.h maps the plain names to these with
// #define (CUDA 12 and 13: cuDeviceTotalMem → cuDeviceTotalMem_v2,
// cuMemAlloc → cuMemAlloc_v2, cuDevicePrimaryCtxRelease →
// cuDevicePrimaryCtxRelease_v2, …); a program that dlsyms the plain name
// gets the CUDA 3.x ABI (32-bit sizes) or nothing. The primary context is
// used, never cuCtxCreate, whose signature changed in CUDA 13.
type driver struct {
	path string
	lib  uintptr

	cuInit                    func(flags uint32) int32
	cuDriverGetVersion        func(v *int32) int32
	cuDeviceGetCount          func(n *int32) int32
	cuDeviceGet               func(dev *int32, ordinal int32) int32
	cuDeviceGetName           func(name *byte, n int32, dev int32) int32
	cuDeviceTotalMem          func(bytes *uint64, dev int32) int32
	cuDeviceGetAttribute      func(v *int32, attr int32, dev int32) int32
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease func(dev int32) int32
	cuCtxSetCurrent           func(ctx uintptr) int32
	cuCtxSynchronize          func() int32
	cuModuleLoadData          func(mod *uintptr, image unsafe.Pointer) int32
	cuModuleUnload            func(mod uintptr) int32
	cuModuleGetFunction       func(f *uintptr, mod uintptr, name *byte) int32
	cuMemAlloc                func(p *uint64, size uintptr) int32
	cuMemFree                 func(p uint64) int32
	cuMemcpyHtoD              func(dst uint64, src unsafe.Pointer, n uintptr) int32
	cuMemcpyDtoH              func(dst unsafe.Pointer, src uint64, n uintptr) int32
	cuMemcpyDtoD              func(dst, src uint64, n uintptr) int32
	cuMemHostAlloc            func(p *unsafe.Pointer, size uintptr, flags uint32) int32
	cuMemFreeHost             func(p unsafe.Pointer) int32
	cuLaunchKernel            func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params, extra unsafe.Pointer) int32
	cuEventCreate             func(e *uintptr, flags uint32) int32
	cuEventRecord             func(e, stream uintptr) int32
	cuEventSynchronize        func(e uintptr) int32
	cuEventElapsedTime        func(ms *float32, start, end uintptr) int32
	cuEventDestroy            func(e uintptr) int32
	cuGetErrorName            func(code int32, s **byte) int32
	cuGetErrorString          func(code int32, s **byte) int32
}

// symbols lists every entry point with the field it binds: the versioned
// name where cuda.h defines one.
func (d *driver) symbols() []struct {
	name string
	fn   any
} {
	return []struct {
		name string
		fn   any
	}{
		{"cuInit", &d.cuInit},
		{"cuDriverGetVersion", &d.cuDriverGetVersion},
		{"cuDeviceGetCount", &d.cuDeviceGetCount},
		{"cuDeviceGet", &d.cuDeviceGet},
		{"cuDeviceGetName", &d.cuDeviceGetName},
		{"cuDeviceTotalMem_v2", &d.cuDeviceTotalMem},
		{"cuDeviceGetAttribute", &d.cuDeviceGetAttribute},
		{"cuDevicePrimaryCtxRetain", &d.cuDevicePrimaryCtxRetain},
		{"cuDevicePrimaryCtxRelease_v2", &d.cuDevicePrimaryCtxRelease},
		{"cuCtxSetCurrent", &d.cuCtxSetCurrent},
		{"cuCtxSynchronize", &d.cuCtxSynchronize},
		{"cuModuleLoadData", &d.cuModuleLoadData},
		{"cuModuleUnload", &d.cuModuleUnload},
		{"cuModuleGetFunction", &d.cuModuleGetFunction},
		{"cuMemAlloc_v2", &d.cuMemAlloc},
		{"cuMemFree_v2", &d.cuMemFree},
		{"cuMemcpyHtoD_v2", &d.cuMemcpyHtoD},
		{"cuMemcpyDtoH_v2", &d.cuMemcpyDtoH},
		{"cuMemcpyDtoD_v2", &d.cuMemcpyDtoD},
		{"cuMemHostAlloc", &d.cuMemHostAlloc},
		{"cuMemFreeHost", &d.cuMemFreeHost},
		{"cuLaunchKernel", &d.cuLaunchKernel},
		{"cuEventCreate", &d.cuEventCreate},
		{"cuEventRecord", &d.cuEventRecord},
		{"cuEventSynchronize", &d.cuEventSynchronize},
		{"cuEventElapsedTime", &d.cuEventElapsedTime},
		{"cuEventDestroy_v2", &d.cuEventDestroy},
		{"cuGetErrorName", &d.cuGetErrorName},
		{"cuGetErrorString", &d.cuGetErrorString},
	}
}

var (
	driversMu sync.Mutex
	drivers   = map[string]*driver{} // by path: a library is loaded once per process
)

// libraryPath is the library to load: path, else $TIDEMARK_LIBCUDA, else
// DefaultLibrary.
func libraryPath(path string) string {
	if path != "" {
		return path
	}
	if env := os.Getenv("TIDEMARK_LIBCUDA"); env != "" {
		return env
	}
	return DefaultLibrary
}

// loadDriver loads the library at path (once per process) and binds every
// entry point; a missing library or symbol is ErrNoDriver with the loader's
// message.
func loadDriver(path string) (*driver, error) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if d, ok := drivers[path]; ok {
		return d, nil
	}
	lib, err := dlopen(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDriver, err)
	}
	d := &driver{path: path, lib: lib}
	for _, s := range d.symbols() {
		sym, err := dlsym(lib, s.name)
		if err != nil {
			dlclose(lib)
			return nil, fmt.Errorf("%w: %s has no %s: %v", ErrNoDriver, path, s.name, err)
		}
		bind(s.fn, sym)
	}
	drivers[path] = d
	return d, nil
}

// check turns a CUresult into nil or an *Error with the driver's name and
// description of the code.
func (d *driver) check(op string, code int32) error {
	if code == cudaSuccess {
		return nil
	}
	e := &Error{Op: op, Code: int(code), Name: fmt.Sprintf("CUresult %d", code), Message: "unknown error"}
	var s *byte
	if d.cuGetErrorName(code, &s) == cudaSuccess && s != nil {
		e.Name = goString(s)
	}
	s = nil
	if d.cuGetErrorString(code, &s) == cudaSuccess && s != nil {
		e.Message = goString(s)
	}
	return e
}

// goString copies a NUL-terminated C string.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// cString is s NUL-terminated, for the driver.
func cString(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}
