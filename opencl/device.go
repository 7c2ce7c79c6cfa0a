package opencl

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ndconv/ndconv/internal/gpu"
)

// Info describes one OpenCL device of one platform: what `ndconv devices`
// prints and what the engine sizes its work by. Sizes are in bytes.
type Info struct {
	Platform        int // P of opencl:P:D: the platform's index in clGetPlatformIDs' order
	Device          int // D: the device's index within its platform
	PlatformName    string
	PlatformVendor  string
	PlatformVersion string // "OpenCL 3.0 PoCL 3.1+debian …"
	Name            string
	Vendor          string
	Type            string // "GPU", "CPU", "accelerator", "custom"
	Version         string // CL_DEVICE_VERSION: "OpenCL 3.0 …"
	DriverVersion   string
	OpenCLCVersion  string // CL_DEVICE_OPENCL_C_VERSION: "OpenCL C 1.2 …"

	ComputeUnits      int
	ClockMHz          int
	MaxWorkGroupSize  int
	MaxWorkItemSizes  [3]int
	LocalMemory       int64
	LocalMemoryOnChip bool // CL_LOCAL; false where local memory is emulated in global memory
	GlobalMemory      int64
	MaxAlloc          int64 // the largest single buffer
	MaxConstantBuffer int64 // the largest __constant argument
	MaxConstantArgs   int
	FP64              bool // cl_khr_fp64, or a nonzero CL_DEVICE_DOUBLE_FP_CONFIG
	Available         bool
	CompilerAvailable bool
	Extensions        []string
}

// Spec is the device's name in --device syntax: "opencl:P:D".
func (i Info) Spec() string { return fmt.Sprintf("opencl:%d:%d", i.Platform, i.Device) }

// VersionAtLeast reports whether the device's CL_DEVICE_VERSION ("OpenCL
// M.N …") is major.minor or newer.
func (i Info) VersionAtLeast(major, minor int) bool {
	ma, mi, ok := parseVersion(i.Version)
	return ok && (ma > major || ma == major && mi >= minor)
}

// parseVersion reads "OpenCL M.N …" (and "OpenCL C M.N …").
func parseVersion(s string) (major, minor int, ok bool) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "OpenCL "), "C ")
	v, _, _ := strings.Cut(s, " ")
	ma, mi, found := strings.Cut(v, ".")
	if !found {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(ma)
	minor, err2 := strconv.Atoi(mi)
	return major, minor, err1 == nil && err2 == nil
}

// platformDevices is one platform with its devices' handles.
type platformDevices struct {
	id      uintptr
	devices []uintptr
}

// enumerate lists every platform and its devices, in the ICD loader's
// order, which is what P and D index. The handles are the process's for
// good, so the driver is asked once: NVIDIA's driver crashed (SIGSEGV in
// clGetDeviceInfo) when one goroutine listed the devices while another
// queried a handle from an earlier listing — the CLI's prewarm opening
// the device beside the planner reading its name.
var enumerate = sync.OnceValues(enumerateOnce)

func enumerateOnce() ([]platformDevices, error) {
	if err := loadLibrary(); err != nil {
		return nil, err
	}
	ids, err := clGetPlatformIDs()
	var e *Error
	if errors.As(err, &e) && e.Code == CodePlatformNotFound {
		return nil, nil // the ICD loader found no vendor file: no platform
	}
	if err != nil {
		return nil, err
	}
	out := make([]platformDevices, len(ids))
	for i, id := range ids {
		devs, err := clGetDeviceIDs(id, clDeviceTypeAll)
		if err != nil {
			return nil, fmt.Errorf("platform %d: %w", i, err)
		}
		out[i] = platformDevices{id: id, devices: devs}
	}
	return out, nil
}

// queryInfo reads everything ndconv uses about one device.
func queryInfo(p, d int, platform, device uintptr) (Info, error) {
	info := Info{Platform: p, Device: d}
	var errs []error
	str := func(dst *string, get func() (string, error)) {
		v, err := get()
		*dst = strings.TrimSpace(v)
		errs = append(errs, err)
	}
	pstr := func(dst *string, param int) {
		str(dst, func() (string, error) { return clGetPlatformInfoString(platform, param) })
	}
	dstr := func(dst *string, param int) {
		str(dst, func() (string, error) { return clGetDeviceInfoString(device, param) })
	}
	num := func(param int) uint64 {
		v, err := clGetDeviceInfoUint(device, param)
		errs = append(errs, err)
		return v
	}
	pstr(&info.PlatformName, clPlatformName)
	pstr(&info.PlatformVendor, clPlatformVendor)
	pstr(&info.PlatformVersion, clPlatformVersion)
	dstr(&info.Name, clDeviceName)
	dstr(&info.Vendor, clDeviceVendor)
	dstr(&info.Version, clDeviceVersion)
	dstr(&info.DriverVersion, clDriverVersion)
	dstr(&info.OpenCLCVersion, clDeviceOpenCLCVersion)
	var ext string
	dstr(&ext, clDeviceExtensions)
	info.Extensions = strings.Fields(ext)

	info.Type = deviceTypeName(num(clDeviceType))
	info.ComputeUnits = int(num(clDeviceMaxComputeUnits))
	info.ClockMHz = int(num(clDeviceMaxClockFrequency))
	info.MaxWorkGroupSize = int(num(clDeviceMaxWorkGroupSize))
	info.LocalMemory = int64(num(clDeviceLocalMemSize))
	info.LocalMemoryOnChip = num(clDeviceLocalMemType) == clLocal
	info.GlobalMemory = int64(num(clDeviceGlobalMemSize))
	info.MaxAlloc = int64(num(clDeviceMaxMemAllocSize))
	info.MaxConstantBuffer = int64(num(clDeviceMaxConstantBufferSize))
	info.MaxConstantArgs = int(num(clDeviceMaxConstantArgs))
	info.Available = num(clDeviceAvailable) != 0
	info.CompilerAvailable = num(clDeviceCompilerAvailable) != 0
	if b, err := clGetDeviceInfoBytes(device, clDeviceMaxWorkItemSizes); err == nil {
		for i := 0; i < 3 && 8*(i+1) <= len(b); i++ { // size_t[], at least 3 of them
			for j := 7; j >= 0; j-- {
				info.MaxWorkItemSizes[i] = info.MaxWorkItemSizes[i]<<8 | int(b[8*i+j])
			}
		}
	} else {
		errs = append(errs, err)
	}
	// cl_khr_fp64 is how 1.x devices say it; OpenCL 3.0 devices may report
	// the capability through CL_DEVICE_DOUBLE_FP_CONFIG alone.
	info.FP64 = slices.Contains(info.Extensions, "cl_khr_fp64")
	if !info.FP64 {
		if cfg, err := clGetDeviceInfoUint(device, clDeviceDoubleFPConfig); err == nil && cfg != 0 {
			info.FP64 = true
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Info{}, fmt.Errorf("opencl:%d:%d: %w", p, d, err)
	}
	return info, nil
}

func deviceTypeName(t uint64) string {
	var names []string
	for _, n := range []struct {
		bit  uint64
		name string
	}{{clDeviceTypeGPU, "GPU"}, {clDeviceTypeCPU, "CPU"}, {clDeviceTypeAccelerator, "accelerator"}, {clDeviceTypeCustom, "custom"}} {
		if t&n.bit != 0 {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "unknown"
	}
	return strings.Join(names, "+")
}

// Available reports whether the OpenCL backend can run here: nil, or an
// *UnavailableError saying why not (no ICD loader, no platform, no
// device with a compiler). It never panics and costs one library load and
// one enumeration the first time, nothing after.
func Available() error { return availability() }

var availability = sync.OnceValue(checkAvailable)

func checkAvailable() error {
	plats, err := enumerate()
	if err != nil {
		var u *UnavailableError
		if errors.As(err, &u) {
			return err
		}
		return &UnavailableError{Backend: "opencl", Reason: "cannot list platforms and devices", Err: err}
	}
	if len(plats) == 0 {
		return &UnavailableError{Backend: "opencl", Reason: "no OpenCL platform (the ICD loader found no vendor driver; see /etc/OpenCL/vendors or OCL_ICD_VENDORS)"}
	}
	found := 0
	for p, pl := range plats {
		for d, dev := range pl.devices {
			found++
			if info, err := queryInfo(p, d, pl.id, dev); err == nil && info.Available && info.CompilerAvailable {
				return nil
			}
		}
	}
	if found == 0 {
		return &UnavailableError{Backend: "opencl", Reason: fmt.Sprintf("no OpenCL device on %d platform(s)", len(plats))}
	}
	return &UnavailableError{Backend: "opencl", Reason: fmt.Sprintf("none of %d OpenCL device(s) is available with a compiler", found)}
}

// Devices describes every device of every platform, in the order
// opencl:P:D indexes them.
func Devices() ([]Info, error) {
	plats, err := enumerate()
	if err != nil {
		return nil, err
	}
	var infos []Info
	for p, pl := range plats {
		for d, dev := range pl.devices {
			info, err := queryInfo(p, d, pl.id, dev)
			if err != nil {
				return nil, err
			}
			infos = append(infos, info)
		}
	}
	return infos, nil
}

// Device is one OpenCL device with a context of its own. Every method may
// be called from any goroutine, several at once (OpenCL 1.2 is thread-safe
// but for clSetKernelArg, which Kernel serialises).
type Device struct {
	info     Info
	platform uintptr // cl_platform_id
	id       uintptr // cl_device_id
	ctx      uintptr // cl_context

	life gpu.Life // shared by every operation (do), exclusive for the last Close

	programs programCache
	hostFree *gpu.FreeList[*HostBuffer] // the engines' idle staging
	pinned   pinnedRanges               // the HostBuffers' memory
	hostQ    struct {                   // hostQueue's
		mu sync.Mutex
		q  *Queue
	}
	// Build settings for the package's tests, which set them on their
	// shared device where it is PoCL's, to bound its cold builds
	// (gpu_test.go; the product leaves both false). withoutBinaries skips
	// fetching a built program's binary, so nothing goes to the disk
	// cache: PoCL compiles every kernel a second time (for any work-group
	// size) to give one, doubling a cold build. unoptimised builds with
	// -cl-opt-disable, in under half PoCL's time; the program key holds
	// the option, so such programs are never mistaken for optimised ones.
	withoutBinaries atomic.Bool
	unoptimised     atomic.Bool
}

// registry holds the one Device per (platform, device), with its count
// of Opens.
var registry gpu.Registry[[2]int, *Device]

// Open returns the Device opencl:platform:device, creating its context on
// first use. Opening it again returns the same *Device; each Open is
// balanced by one Close, and the last Close releases the context.
func Open(platform, device int) (*Device, error) {
	if err := loadLibrary(); err != nil {
		return nil, err
	}
	return registry.Open([2]int{platform, device}, func() (*Device, error) { return openDevice(platform, device) })
}

// openDevice makes the Device opencl:platform:device (Open's first).
func openDevice(platform, device int) (*Device, error) {
	plats, err := enumerate()
	if err != nil {
		return nil, err
	}
	if platform < 0 || platform >= len(plats) {
		return nil, fmt.Errorf("opencl: no platform %d (this machine has %d)", platform, len(plats))
	}
	pl := plats[platform]
	if device < 0 || device >= len(pl.devices) {
		return nil, fmt.Errorf("opencl: platform %d has no device %d (it has %d)", platform, device, len(pl.devices))
	}
	info, err := queryInfo(platform, device, pl.id, pl.devices[device])
	if err != nil {
		return nil, err
	}
	if !info.Available || !info.CompilerAvailable {
		return nil, &UnsupportedError{Backend: "opencl", What: "device", Value: info.Spec() + " (" + info.Name + ")", Reason: "not available, or without an OpenCL C compiler"}
	}
	ctx, err := clCreateContext(pl.id, pl.devices[device])
	if err != nil {
		return nil, err
	}
	return &Device{info: info, platform: pl.id, id: pl.devices[device], ctx: ctx, hostFree: gpu.NewFreeList[*HostBuffer](gpu.HostFreeLimit)}, nil
}

// Close balances one Open. The last Close releases the cached programs and
// the context; every later call on d returns ErrClosed. Closing more often
// than opening does nothing.
func (d *Device) Close() error {
	return registry.Close([2]int{d.info.Platform, d.info.Device}, d, d.release)
}

// release is the last Close's.
func (d *Device) release() error {
	return d.life.End(func() error { // once the operations in flight are done
		var errs []error
		for _, h := range d.hostFree.Drain() {
			errs = append(errs, clEnqueueUnmapMemObject(h.q.h, h.buf.h, h.p), clReleaseMemObject(h.buf.h))
		}
		if q := d.hostQ.q; q != nil {
			errs = append(errs, clFinish(q.h), clReleaseCommandQueue(q.h))
		}
		for _, p := range d.programs.Drain() {
			errs = append(errs, p.release())
		}
		errs = append(errs, clReleaseContext(d.ctx))
		return errors.Join(errs...)
	})
}

// do runs fn while d is open (shared with other operations, exclusive of
// the last Close). It must not be nested.
func (d *Device) do(fn func() error) error { return d.life.Do(ErrClosed, fn) }

// Info describes the device.
func (d *Device) Info() Info { return d.info }

// Queue is an in-order command queue with profiling on. Enqueued work runs
// in order; Finish waits for it all. Any goroutine may use a Queue, but
// work from several goroutines interleaves in the order it is enqueued.
type Queue struct {
	dev *Device
	h   uintptr
}

// NewQueue creates a command queue on d.
func (d *Device) NewQueue() (*Queue, error) {
	var h uintptr
	err := d.do(func() (err error) {
		h, err = clCreateQueue(d.ctx, d.id, d.info.VersionAtLeast(2, 0))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Queue{dev: d, h: h}, nil
}

// Finish waits for every command queued so far, and reports a failure of
// any of them.
func (q *Queue) Finish() error {
	return q.dev.do(func() error { return clFinish(q.h) })
}

// Flush submits the queued commands to the device without waiting.
func (q *Queue) Flush() error {
	return q.dev.do(func() error { return clFlush(q.h) })
}

// Close waits for the queue's work and releases it.
func (q *Queue) Close() error {
	if q == nil || q.h == 0 {
		return nil
	}
	err := q.dev.do(func() error { return errors.Join(clFinish(q.h), clReleaseCommandQueue(q.h)) })
	q.h = 0
	return err
}

// Buffer is device memory (cl_mem).
type Buffer struct {
	dev  *Device
	h    uintptr
	size int
}

// Alloc allocates n bytes of uninitialised device memory (n ≥ 1).
func (d *Device) Alloc(n int) (*Buffer, error) {
	return d.alloc(clMemReadWrite, n, nil)
}

// AllocCopy allocates a read-only buffer holding a copy of data (at least
// one byte).
func (d *Device) AllocCopy(data []byte) (*Buffer, error) {
	return d.alloc(clMemReadOnly|clMemCopyHostPtr, len(data), data)
}

func (d *Device) alloc(flags uint64, n int, host []byte) (*Buffer, error) {
	if n <= 0 {
		return nil, &RangeError{Backend: "opencl", Op: "Alloc", Length: n}
	}
	if int64(n) > d.info.MaxAlloc && d.info.MaxAlloc > 0 {
		return nil, &UnsupportedError{Backend: "opencl", What: "buffer size", Value: fmt.Sprintf("%d bytes", n),
			Reason: fmt.Sprintf("the largest buffer %s allows is %d bytes", d.info.Name, d.info.MaxAlloc)}
	}
	var h uintptr
	err := d.do(func() (err error) {
		h, err = clCreateBuffer(d.ctx, flags, n, host)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Buffer{dev: d, h: h, size: n}, nil
}

// Size is the buffer's length in bytes.
func (b *Buffer) Size() int { return b.size }

// Write copies src into the buffer at offset, in q's order, and returns
// when the copy is done (src may then be reused).
func (b *Buffer) Write(q *Queue, offset int, src []byte) error {
	if offset < 0 || offset+len(src) > b.size {
		return &RangeError{Backend: "opencl", Op: "Write", Offset: offset, Length: len(src), Size: b.size}
	}
	if len(src) == 0 {
		return nil
	}
	return b.dev.do(func() error { return clEnqueueWriteBuffer(q.h, b.h, offset, src) })
}

// Read copies len(dst) bytes from the buffer at offset into dst, in q's
// order (after the work queued before it), and returns when they are there.
func (b *Buffer) Read(q *Queue, dst []byte, offset int) error {
	if offset < 0 || offset+len(dst) > b.size {
		return &RangeError{Backend: "opencl", Op: "Read", Offset: offset, Length: len(dst), Size: b.size}
	}
	if len(dst) == 0 {
		return nil
	}
	return b.dev.do(func() error { return clEnqueueReadBuffer(q.h, b.h, offset, dst) })
}

// CopyTo queues a copy of n bytes from b at srcOffset to dst at dstOffset.
func (b *Buffer) CopyTo(q *Queue, dst *Buffer, dstOffset, srcOffset, n int) error {
	if srcOffset < 0 || srcOffset+n > b.size {
		return &RangeError{Backend: "opencl", Op: "CopyTo", Offset: srcOffset, Length: n, Size: b.size}
	}
	if dstOffset < 0 || dstOffset+n > dst.size {
		return &RangeError{Backend: "opencl", Op: "CopyTo", Offset: dstOffset, Length: n, Size: dst.size}
	}
	if n == 0 {
		return nil
	}
	return b.dev.do(func() error { return clEnqueueCopyBuffer(q.h, b.h, dst.h, srcOffset, dstOffset, n) })
}

// Free releases the buffer. Commands already queued that use it still
// complete: OpenCL frees the memory once they are done.
func (b *Buffer) Free() error {
	if b == nil || b.h == 0 {
		return nil
	}
	err := b.dev.do(func() error { return clReleaseMemObject(b.h) })
	b.h = 0
	return err
}

// HostBuffer is host memory that transfers to and from the device run
// from while other work goes on: a buffer the implementation allocates in
// host memory (CL_MEM_ALLOC_HOST_PTR, page-locked on GPUs), mapped once
// for as long as it lives, as NVIDIA's OpenCL guide does pinned memory.
// Bytes is the mapping; WriteAsync and ReadAsync move between it and
// device buffers without blocking.
type HostBuffer struct {
	buf *Buffer
	q   *Queue         // the queue it was mapped on, which unmaps it
	p   unsafe.Pointer // the mapping; nil once freed
}

// AllocHost allocates and maps n bytes of pinned host memory, mapping it
// on q, which must outlive it.
func (d *Device) AllocHost(q *Queue, n int) (*HostBuffer, error) {
	b, err := d.alloc(clMemReadWrite|clMemAllocHostPtr, n, nil)
	if err != nil {
		return nil, err
	}
	var p unsafe.Pointer
	err = d.do(func() (err error) {
		p, err = clEnqueueMapBuffer(q.h, b.h, n)
		return err
	})
	if err != nil {
		b.Free()
		return nil, err
	}
	h := &HostBuffer{buf: b, q: q, p: p}
	d.pinned.add(h.Bytes())
	return h, nil
}

// Bytes is the mapped memory; nil after Free.
func (h *HostBuffer) Bytes() []byte {
	if h == nil || h.p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(h.p), h.buf.size)
}

// Size is the buffer's length in bytes.
func (h *HostBuffer) Size() int { return h.buf.size }

// Free unmaps and releases the memory, once the transfers queued from and
// to it are done (the caller waits for them). Freeing twice does nothing.
func (h *HostBuffer) Free() error {
	if h == nil || h.p == nil {
		return nil
	}
	h.buf.dev.pinned.remove(h.Bytes())
	p := h.p
	h.p = nil
	err := h.buf.dev.do(func() error {
		return errors.Join(clEnqueueUnmapMemObject(h.q.h, h.buf.h, p), clFinish(h.q.h))
	})
	return errors.Join(err, h.buf.Free())
}

// IsOpen reports whether opencl:platform:device is open in this process
// (its context made), without opening it.
func IsOpen(platform, device int) bool {
	_, ok := registry.Lookup([2]int{platform, device})
	return ok
}
