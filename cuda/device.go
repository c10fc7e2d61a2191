package cuda

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// Options configure Open.
type Options struct {
	// Library is the driver library to load; empty means the
	// TIDEMARK_LIBCUDA environment variable, else DefaultLibrary.
	Library string
	// Ordinal is the device to use (0, the first, by default).
	Ordinal int
}

// Info describes the backend Probe or Open found.
type Info struct {
	// Backend is "cuda" when a device is usable, "cpu" otherwise.
	Backend string `json:"backend"`
	// Reason says why the CPU backend runs (empty for cuda).
	Reason string `json:"reason,omitempty"`
	// Library is the driver library tried or loaded.
	Library string `json:"library"`
	// DriverVersion is the driver's CUDA version (12080 is 12.8).
	DriverVersion int `json:"driver_version,omitempty"`
	// Device, MemoryBytes, ComputeCapability and Multiprocessors
	// describe the device.
	Device            string `json:"device,omitempty"`
	MemoryBytes       uint64 `json:"memory_bytes,omitempty"`
	ComputeCapability string `json:"compute_capability,omitempty"`
	Multiprocessors   int    `json:"multiprocessors,omitempty"`
}

// Device is one CUDA device with its primary context and tidemark's
// kernels loaded. The context is current per OS thread and goroutines move
// between threads, so one goroutine locked to its OS thread owns it and
// runs every driver call; the methods hand their work to it. It is safe
// for concurrent use. Close releases it.
type Device struct {
	drv     *driver
	ordinal int32
	info    Info
	calls   chan func()
	mu      sync.Mutex // guards closed and lost against Close racing a call
	closed  bool
	lost    error // set by a sticky driver error: every later call returns it
	done    chan struct{}

	// Owned by the thread: valid between open and close.
	ctx     uintptr
	mod     uintptr
	fns     map[string]uintptr
	staging unsafe.Pointer // pinned host memory, stagingBytes long
}

// stagingBytes is the pinned host buffer copies go through: the Go heap is
// pageable, and a copy from pageable memory is staged by the driver
// anyway; doing it here bounds the pinned memory and lets one buffer serve
// every copy.
const stagingBytes = 8 << 20

// Open loads the driver, initialises it, retains the device's primary
// context on a dedicated OS thread and loads tidemark's kernels (the
// embedded PTX, which the driver JIT-compiles for the device). Errors wrap
// ErrNoDriver or ErrNoDevice when there is no driver or device, or are an
// *Error from the driver.
func Open(o *Options) (*Device, error) {
	if o == nil {
		o = &Options{}
	}
	drv, err := loadDriver(libraryPath(o.Library))
	if err != nil {
		return nil, err
	}
	d := &Device{drv: drv, ordinal: int32(o.Ordinal), calls: make(chan func()), done: make(chan struct{})}
	d.info = Info{Backend: "cuda", Library: drv.path}
	ready := make(chan error)
	go d.own(ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	return d, nil
}

// own is the owner goroutine: it locks itself to its OS thread, opens the
// device there, then serves calls until Close.
func (d *Device) own(ready chan<- error) {
	runtime.LockOSThread()
	// The thread is never unlocked: when this goroutine returns, the
	// runtime ends the thread with it, and the context goes too.
	if err := d.open(); err != nil {
		d.release()
		ready <- err
		return
	}
	ready <- nil
	for f := range d.calls {
		f()
	}
	d.release()
	close(d.done)
}

func (d *Device) open() error {
	drv := d.drv
	if err := drv.check("cuInit", drv.cuInit(0)); err != nil {
		var e *Error
		if errors.As(err, &e) && e.Code == cudaErrorNoDevice {
			return fmt.Errorf("%w: %v", ErrNoDevice, err)
		}
		return err
	}
	var v, n int32
	if err := drv.check("cuDriverGetVersion", drv.cuDriverGetVersion(&v)); err != nil {
		return err
	}
	d.info.DriverVersion = int(v)
	if err := drv.check("cuDeviceGetCount", drv.cuDeviceGetCount(&n)); err != nil {
		return err
	}
	if d.ordinal < 0 || d.ordinal >= n {
		return fmt.Errorf("%w: device %d requested, the driver reports %d", ErrNoDevice, d.ordinal, n)
	}
	var dev int32
	if err := drv.check("cuDeviceGet", drv.cuDeviceGet(&dev, d.ordinal)); err != nil {
		return err
	}
	d.ordinal = dev
	name := make([]byte, 256)
	if err := drv.check("cuDeviceGetName", drv.cuDeviceGetName(&name[0], int32(len(name)), dev)); err != nil {
		return err
	}
	d.info.Device = goString(&name[0])
	if err := drv.check("cuDeviceTotalMem_v2", drv.cuDeviceTotalMem(&d.info.MemoryBytes, dev)); err != nil {
		return err
	}
	var major, minor, sms int32
	for _, a := range []struct {
		attr int32
		v    *int32
	}{{attrCCMajor, &major}, {attrCCMinor, &minor}, {attrMultiprocessor, &sms}} {
		if err := drv.check("cuDeviceGetAttribute", drv.cuDeviceGetAttribute(a.v, a.attr, dev)); err != nil {
			return err
		}
	}
	d.info.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
	d.info.Multiprocessors = int(sms)
	var ctx uintptr
	if err := drv.check("cuDevicePrimaryCtxRetain", drv.cuDevicePrimaryCtxRetain(&ctx, dev)); err != nil {
		return err
	}
	d.ctx = ctx
	if err := drv.check("cuCtxSetCurrent", drv.cuCtxSetCurrent(ctx)); err != nil {
		return err
	}
	if err := drv.check("cuMemHostAlloc", drv.cuMemHostAlloc(&d.staging, stagingBytes, 0)); err != nil {
		return err
	}
	img := append([]byte(ptx), 0)
	var pinner runtime.Pinner
	pinner.Pin(&img[0])
	err := drv.check("cuModuleLoadData", drv.cuModuleLoadData(&d.mod, unsafe.Pointer(&img[0])))
	pinner.Unpin()
	if err != nil {
		return fmt.Errorf("loading the kernels' PTX: %w", err)
	}
	d.fns = map[string]uintptr{}
	for _, k := range kernelNames {
		var f uintptr
		if err := drv.check("cuModuleGetFunction", drv.cuModuleGetFunction(&f, d.mod, cString(k))); err != nil {
			return fmt.Errorf("kernel %s: %w", k, err)
		}
		d.fns[k] = f
	}
	return nil
}

// release undoes what open did, in reverse; errors are dropped, as nothing
// can be done about them on the way out.
func (d *Device) release() {
	drv := d.drv
	if d.mod != 0 {
		drv.cuModuleUnload(d.mod)
		d.mod = 0
	}
	if d.staging != nil {
		drv.cuMemFreeHost(d.staging)
		d.staging = nil
	}
	if d.ctx != 0 {
		drv.cuCtxSetCurrent(0)
		drv.cuDevicePrimaryCtxRelease(d.ordinal)
		d.ctx = 0
	}
}

// ErrClosed is returned by a Device (and a Backend over it) after Close;
// ErrLost after an error that leaves the context unusable (an illegal
// address or a failed launch on a real GPU: the driver reports it again to
// every later call), wrapped with that error. Close the device and open
// it again.
var (
	ErrClosed = errors.New("cuda: device closed")
	ErrLost   = errors.New("cuda: device context lost")
)

// stickyCodes are the CUresults after which a context is unusable.
var stickyCodes = map[int]bool{
	700: true, // CUDA_ERROR_ILLEGAL_ADDRESS
	714: true, // CUDA_ERROR_HARDWARE_STACK_ERROR
	715: true, // CUDA_ERROR_ILLEGAL_INSTRUCTION
	716: true, // CUDA_ERROR_MISALIGNED_ADDRESS
	717: true, // CUDA_ERROR_INVALID_ADDRESS_SPACE
	718: true, // CUDA_ERROR_INVALID_PC
	719: true, // CUDA_ERROR_LAUNCH_FAILED
}

// do runs f on the owner thread and returns its error. A panic in f is
// returned as an error (the owner goroutine must survive it), and a
// sticky driver error marks the device lost.
func (d *Device) do(f func() error) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	if d.lost != nil {
		err := d.lost
		d.mu.Unlock()
		return err
	}
	errc := make(chan error, 1)
	d.calls <- func() {
		defer func() {
			if r := recover(); r != nil {
				errc <- fmt.Errorf("cuda: panic on the device's thread: %v", r)
			}
		}()
		errc <- f()
	}
	d.mu.Unlock()
	err := <-errc
	var e *Error
	if errors.As(err, &e) && stickyCodes[e.Code] {
		d.mu.Lock()
		if d.lost == nil {
			d.lost = fmt.Errorf("%w: %w", ErrLost, err)
		}
		d.mu.Unlock()
	}
	return err
}

// Info describes the device.
func (d *Device) Info() Info { return d.info }

// Close releases the kernels, the staging buffer and the primary context,
// and ends the owner thread. Buffers still allocated are freed with the
// context. Close is idempotent.
func (d *Device) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	close(d.calls)
	d.mu.Unlock()
	<-d.done
	return nil
}

// buffer is device memory.
type buffer struct {
	ptr  uint64
	size uintptr
}

// alloc allocates size bytes of device memory (owner thread only).
func (d *Device) alloc(size uintptr) (buffer, error) {
	var p uint64
	if err := d.drv.check("cuMemAlloc_v2", d.drv.cuMemAlloc(&p, size)); err != nil {
		return buffer{}, err
	}
	return buffer{p, size}, nil
}

// free releases b (owner thread only); the zero buffer is a no-op.
func (d *Device) free(b *buffer) error {
	if b.ptr == 0 {
		return nil
	}
	err := d.drv.check("cuMemFree_v2", d.drv.cuMemFree(b.ptr))
	*b = buffer{}
	return err
}

// upload copies the n bytes at src to b at offset off through the pinned
// staging buffer (owner thread only).
func (d *Device) upload(b buffer, off uintptr, src unsafe.Pointer, n uintptr) error {
	if off > b.size || n > b.size-off {
		return fmt.Errorf("cuda: upload of %d bytes at %d into a %d-byte buffer", n, off, b.size)
	}
	for done := uintptr(0); done < n; {
		c := min(n-done, stagingBytes)
		// src+done stays inside the source (never one past its end, which
		// the race detector's pointer checks reject).
		copy(unsafe.Slice((*byte)(d.staging), c), unsafe.Slice((*byte)(unsafe.Add(src, done)), c))
		if err := d.drv.check("cuMemcpyHtoD_v2", d.drv.cuMemcpyHtoD(b.ptr+uint64(off+done), d.staging, c)); err != nil {
			return err
		}
		done += c
	}
	return nil
}

// download copies n bytes of b at offset off to dst through the staging
// buffer (owner thread only).
func (d *Device) download(dst unsafe.Pointer, b buffer, off, n uintptr) error {
	if off > b.size || n > b.size-off {
		return fmt.Errorf("cuda: download of %d bytes at %d from a %d-byte buffer", n, off, b.size)
	}
	for done := uintptr(0); done < n; {
		c := min(n-done, stagingBytes)
		if err := d.drv.check("cuMemcpyDtoH_v2", d.drv.cuMemcpyDtoH(d.staging, b.ptr+uint64(off+done), c)); err != nil {
			return err
		}
		copy(unsafe.Slice((*byte)(unsafe.Add(dst, done)), c), unsafe.Slice((*byte)(d.staging), c))
		done += c
	}
	return nil
}

// launch runs kernel name over grid × block threads with shared bytes of
// dynamic shared memory (owner thread only) and waits for it. Each
// argument is one kernel parameter: int32, uint32, int64, uint64, float32,
// float64 or a buffer (its device pointer). cuLaunchKernel reads
// kernelParams as an array of pointers, each to its parameter's value of
// exactly the parameter's size; here each value sits in its own 8-byte
// slot (little-endian, so a 4-byte parameter reads the slot's low half),
// and both arrays are pinned for the call.
func (d *Device) launch(name string, grid, block [3]uint32, shared uint32, args ...any) error {
	f, ok := d.fns[name]
	if !ok {
		return fmt.Errorf("cuda: no kernel %q", name)
	}
	vals := make([]uint64, len(args)+1)
	ptrs := make([]unsafe.Pointer, len(args)+1)
	for i, a := range args {
		switch v := a.(type) {
		case int32:
			vals[i] = uint64(uint32(v))
		case uint32:
			vals[i] = uint64(v)
		case int64:
			vals[i] = uint64(v)
		case uint64:
			vals[i] = v
		case float32:
			vals[i] = uint64(math.Float32bits(v))
		case float64:
			vals[i] = math.Float64bits(v)
		case buffer:
			vals[i] = v.ptr
		default:
			return fmt.Errorf("cuda: kernel %s: parameter %d of type %T", name, i, a)
		}
		ptrs[i] = unsafe.Pointer(&vals[i])
	}
	var pinner runtime.Pinner
	pinner.Pin(&vals[0])
	pinner.Pin(&ptrs[0])
	defer pinner.Unpin()
	drv := d.drv
	err := drv.check("cuLaunchKernel", drv.cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, 0, unsafe.Pointer(&ptrs[0]), nil))
	if err != nil {
		return fmt.Errorf("kernel %s: %w", name, err)
	}
	if err := drv.check("cuCtxSynchronize", drv.cuCtxSynchronize()); err != nil {
		return fmt.Errorf("kernel %s: %w", name, err)
	}
	return nil
}

// Probe reports which backend runs on this machine and why: it opens the
// device (loading the driver and the kernels) and closes it again. It
// never fails: a missing driver, a missing device or a driver error is the
// CPU backend with the reason.
func Probe(o *Options) Info {
	if o == nil {
		o = &Options{}
	}
	d, err := Open(o)
	if err != nil {
		return Info{Backend: "cpu", Reason: err.Error(), Library: libraryPath(o.Library)}
	}
	defer d.Close()
	return d.Info()
}

// CopyBandwidth measures the device's memory bandwidth the way a scan
// uses it: a bytes-long buffer copied to another on the device
// (cuMemcpyDtoD), timed by events, repeats times. The rate counts the
// bytes read and written (2·bytes per copy), the traffic a read-only scan
// of the same memory is bound by; median and best in GB/s.
func (d *Device) CopyBandwidth(bytes, repeats int) (median, best float64, err error) {
	err = d.do(func() error {
		src, err := d.alloc(uintptr(bytes))
		if err != nil {
			return err
		}
		defer d.free(&src)
		dst, err := d.alloc(uintptr(bytes))
		if err != nil {
			return err
		}
		defer d.free(&dst)
		drv := d.drv
		var start, end uintptr
		if err := drv.check("cuEventCreate", drv.cuEventCreate(&start, 0)); err != nil {
			return err
		}
		defer drv.cuEventDestroy(start)
		if err := drv.check("cuEventCreate", drv.cuEventCreate(&end, 0)); err != nil {
			return err
		}
		defer drv.cuEventDestroy(end)
		rates := make([]float64, 0, repeats)
		for i := -1; i < repeats; i++ { // the first copy warms up
			if err := drv.check("cuEventRecord", drv.cuEventRecord(start, 0)); err != nil {
				return err
			}
			if err := drv.check("cuMemcpyDtoD_v2", drv.cuMemcpyDtoD(dst.ptr, src.ptr, uintptr(bytes))); err != nil {
				return err
			}
			if err := drv.check("cuEventRecord", drv.cuEventRecord(end, 0)); err != nil {
				return err
			}
			if err := drv.check("cuEventSynchronize", drv.cuEventSynchronize(end)); err != nil {
				return err
			}
			var ms float32
			if err := drv.check("cuEventElapsedTime", drv.cuEventElapsedTime(&ms, start, end)); err != nil {
				return err
			}
			if i >= 0 && ms > 0 {
				rates = append(rates, 2*float64(bytes)/(float64(ms)/1e3)/1e9)
			}
		}
		if len(rates) == 0 {
			return fmt.Errorf("cuda: no copy took measurable time")
		}
		slices.Sort(rates)
		median, best = rates[len(rates)/2], rates[len(rates)-1]
		return nil
	})
	return median, best, err
}
