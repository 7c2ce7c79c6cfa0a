package cuda

import (
	"unsafe"
)

// drv holds the driver's entry points, each the C function in its comment.
var drv struct {
	cuInit                    uintptr // CUresult cuInit(unsigned int Flags)
	cuDriverGetVersion        uintptr // CUresult cuDriverGetVersion(int *driverVersion)
	cuGetErrorName            uintptr // CUresult cuGetErrorName(CUresult error, const char **pStr)
	cuGetErrorString          uintptr // CUresult cuGetErrorString(CUresult error, const char **pStr)
	cuDeviceGetCount          uintptr // CUresult cuDeviceGetCount(int *count)
	cuDeviceGet               uintptr // CUresult cuDeviceGet(CUdevice *device, int ordinal)
	cuDeviceGetName           uintptr // CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
	cuDeviceGetAttribute      uintptr // CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
	cuDeviceTotalMem          uintptr `sym:"cuDeviceTotalMem_v2"` // CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
	cuDevicePrimaryCtxRetain  uintptr // CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
	cuDevicePrimaryCtxRelease uintptr `sym:"cuDevicePrimaryCtxRelease_v2"` // CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
	cuCtxSetCurrent           uintptr // CUresult cuCtxSetCurrent(CUcontext ctx)
	cuCtxSynchronize          uintptr // CUresult cuCtxSynchronize(void)
	cuMemGetInfo              uintptr `sym:"cuMemGetInfo_v2"`      // CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
	cuMemAlloc                uintptr `sym:"cuMemAlloc_v2"`        // CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
	cuMemFree                 uintptr `sym:"cuMemFree_v2"`         // CUresult cuMemFree_v2(CUdeviceptr dptr)
	cuMemcpyHtoDAsync         uintptr `sym:"cuMemcpyHtoDAsync_v2"` // CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
	cuMemcpyDtoHAsync         uintptr `sym:"cuMemcpyDtoHAsync_v2"` // CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
	cuMemcpyDtoDAsync         uintptr `sym:"cuMemcpyDtoDAsync_v2"` // CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
	cuMemsetD8Async           uintptr // CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s)
	cuMemHostAlloc            uintptr // CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
	cuMemFreeHost             uintptr // CUresult cuMemFreeHost(void *p)
	cuMemHostRegister         uintptr `sym:"cuMemHostRegister_v2"` // CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
	cuMemHostUnregister       uintptr // CUresult cuMemHostUnregister(void *p)
	cuStreamCreate            uintptr // CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
	cuStreamSynchronize       uintptr // CUresult cuStreamSynchronize(CUstream hStream)
	cuStreamDestroy           uintptr `sym:"cuStreamDestroy_v2"` // CUresult cuStreamDestroy_v2(CUstream hStream)
	cuStreamWaitEvent         uintptr // CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
	cuEventCreate             uintptr // CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
	cuEventRecord             uintptr // CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
	cuEventSynchronize        uintptr // CUresult cuEventSynchronize(CUevent hEvent)
	cuEventElapsedTime        uintptr // CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
	cuEventDestroy            uintptr `sym:"cuEventDestroy_v2"` // CUresult cuEventDestroy_v2(CUevent hEvent)
	cuModuleLoadData          uintptr // CUresult cuModuleLoadData(CUmodule *module, const void *image)
	cuModuleUnload            uintptr // CUresult cuModuleUnload(CUmodule hmod)
	cuModuleGetFunction       uintptr // CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
	cuFuncGetAttribute        uintptr // CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
	cuPointerGetAttribute     uintptr // CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
	// CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, gridDimY, gridDimZ,
	//     unsigned int blockDimX, blockDimY, blockDimZ, unsigned int sharedMemBytes,
	//     CUstream hStream, void **kernelParams, void **extra)
	cuLaunchKernel uintptr
}

var driverLib = library{
	spec:      cudaSpec("NDCONV_LIBCUDA", "libcuda.so.1", "libcuda.so"),
	entries:   &drv,
	noLibrary: "no CUDA driver library",
	noSymbol:  "CUDA driver library lacks an entry point (driver too old?)",
	init:      initDriver,
}

// driverVersion is cuDriverGetVersion's 1000*major + 10*minor, once the
// driver is loaded.
var driverVersion int

func initDriver(string) error {
	if err := initFailed("cuInit", check("cuInit", ccall(drv.cuInit, 0))); err != nil {
		return err
	}
	var v int32
	err := check("cuDriverGetVersion", ccall(drv.cuDriverGetVersion, uintptr(unsafe.Pointer(&v))))
	driverVersion = int(v)
	return initFailed("cuDriverGetVersion", err)
}

// check turns a CUresult into nil or an *Error for call, named by the
// driver where it can be asked, else by cuda.h (knownResults).
func check(call string, r uintptr) error {
	return resultError(call, r, func(code int) (name, message string) {
		name, message = knownResult(code)
		if s, ok := driverString(drv.cuGetErrorName, code); ok {
			name = s
		}
		if s, ok := driverString(drv.cuGetErrorString, code); ok {
			message = s
		}
		return name, message
	})
}

// driverString asks cuGetErrorName or cuGetErrorString about code.
func driverString(fn uintptr, code int) (string, bool) {
	var p *byte
	if fn == 0 || ccall(fn, uintptr(code), uintptr(unsafe.Pointer(&p))) != 0 || p == nil {
		return "", false
	}
	return goString(p), true
}

// Typed wrappers, one per entry point, each named after it. They assume
// the caller made the right context current (Device.do). Host memory is
// passed as a *byte to its first byte: Go memory is safe in the copies
// (the driver is done with pageable memory when the call returns), pinned
// memory is C memory.

func cuDeviceGetCount() (int, error) {
	var n int32
	err := check("cuDeviceGetCount", ccall(drv.cuDeviceGetCount, uintptr(unsafe.Pointer(&n))))
	return int(n), err
}

func cuDeviceGet(ordinal int) (int32, error) {
	var dev int32
	err := check("cuDeviceGet", ccall(drv.cuDeviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(ordinal)))
	return dev, err
}

func cuDeviceGetName(dev int32) (string, error) {
	var buf [256]byte
	if err := check("cuDeviceGetName", ccall(drv.cuDeviceGetName, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)-1), uintptr(dev))); err != nil {
		return "", err
	}
	return goString(&buf[0]), nil
}

func cuDeviceGetAttribute(attr int, dev int32) (int, error) {
	var v int32
	err := check("cuDeviceGetAttribute", ccall(drv.cuDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(dev)))
	return int(v), err
}

func cuDeviceTotalMem(dev int32) (int64, error) {
	var n uintptr
	err := check("cuDeviceTotalMem", ccall(drv.cuDeviceTotalMem, uintptr(unsafe.Pointer(&n)), uintptr(dev)))
	return int64(n), err
}

func cuDevicePrimaryCtxRetain(dev int32) (uintptr, error) {
	var ctx uintptr
	err := check("cuDevicePrimaryCtxRetain", ccall(drv.cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&ctx)), uintptr(dev)))
	return ctx, err
}

func cuDevicePrimaryCtxRelease(dev int32) error {
	return check("cuDevicePrimaryCtxRelease", ccall(drv.cuDevicePrimaryCtxRelease, uintptr(dev)))
}

func cuCtxSetCurrent(ctx uintptr) error {
	return check("cuCtxSetCurrent", ccall(drv.cuCtxSetCurrent, ctx))
}

func cuCtxSynchronize() error { return check("cuCtxSynchronize", ccall(drv.cuCtxSynchronize)) }

func cuMemGetInfo() (free, total int64, err error) {
	var f, t uintptr
	err = check("cuMemGetInfo", ccall(drv.cuMemGetInfo, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t))))
	return int64(f), int64(t), err
}

func cuMemAlloc(n int) (DevicePtr, error) {
	var p DevicePtr
	err := check("cuMemAlloc", ccall(drv.cuMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(n)))
	return p, err
}

func cuMemFree(p DevicePtr) error { return check("cuMemFree", ccall(drv.cuMemFree, uintptr(p))) }

func cuMemcpyHtoDAsync(dst DevicePtr, src *byte, n int, stream uintptr) error {
	return check("cuMemcpyHtoDAsync", ccall(drv.cuMemcpyHtoDAsync, uintptr(dst), uintptr(unsafe.Pointer(src)), uintptr(n), stream))
}

func cuMemcpyDtoHAsync(dst *byte, src DevicePtr, n int, stream uintptr) error {
	return check("cuMemcpyDtoHAsync", ccall(drv.cuMemcpyDtoHAsync, uintptr(unsafe.Pointer(dst)), uintptr(src), uintptr(n), stream))
}

func cuMemcpyDtoDAsync(dst, src DevicePtr, n int, stream uintptr) error {
	return check("cuMemcpyDtoDAsync", ccall(drv.cuMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(n), stream))
}

func cuMemsetD8Async(dst DevicePtr, value byte, n int, stream uintptr) error {
	return check("cuMemsetD8Async", ccall(drv.cuMemsetD8Async, uintptr(dst), uintptr(value), uintptr(n), stream))
}

// cuMemHostAllocPortable makes pinned memory usable from every context.
const cuMemHostAllocPortable = 0x01

func cuMemHostAlloc(n int) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	err := check("cuMemHostAlloc", ccall(drv.cuMemHostAlloc, uintptr(unsafe.Pointer(&p)), uintptr(n), cuMemHostAllocPortable))
	return p, err
}

func cuMemFreeHost(p unsafe.Pointer) error {
	return check("cuMemFreeHost", ccall(drv.cuMemFreeHost, uintptr(p)))
}

// cuMemHostRegister page-locks n bytes of ordinary host memory at addr
// for this context's copies (flags 0: not portable, not mapped, read and
// written). The memory is the caller's, passed as an address: the caller
// keeps it alive and mapped until cuMemHostUnregister.
func cuMemHostRegister(addr uintptr, n int) error {
	return check("cuMemHostRegister", ccall(drv.cuMemHostRegister, addr, uintptr(n), 0))
}

func cuMemHostUnregister(addr uintptr) error {
	return check("cuMemHostUnregister", ccall(drv.cuMemHostUnregister, addr))
}

func cuStreamCreate(flags int) (uintptr, error) {
	var s uintptr
	err := check("cuStreamCreate", ccall(drv.cuStreamCreate, uintptr(unsafe.Pointer(&s)), uintptr(flags)))
	return s, err
}

func cuStreamSynchronize(s uintptr) error {
	return check("cuStreamSynchronize", ccall(drv.cuStreamSynchronize, s))
}

func cuStreamDestroy(s uintptr) error { return check("cuStreamDestroy", ccall(drv.cuStreamDestroy, s)) }

func cuStreamWaitEvent(s, e uintptr) error {
	return check("cuStreamWaitEvent", ccall(drv.cuStreamWaitEvent, s, e, 0))
}

func cuEventCreate(flags int) (uintptr, error) {
	var e uintptr
	err := check("cuEventCreate", ccall(drv.cuEventCreate, uintptr(unsafe.Pointer(&e)), uintptr(flags)))
	return e, err
}

func cuEventRecord(e, stream uintptr) error {
	return check("cuEventRecord", ccall(drv.cuEventRecord, e, stream))
}

func cuEventSynchronize(e uintptr) error {
	return check("cuEventSynchronize", ccall(drv.cuEventSynchronize, e))
}

func cuEventElapsedTime(start, end uintptr) (float32, error) {
	var ms float32
	err := check("cuEventElapsedTime", ccall(drv.cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), start, end))
	return ms, err
}

func cuEventDestroy(e uintptr) error { return check("cuEventDestroy", ccall(drv.cuEventDestroy, e)) }

func cuModuleLoadData(image []byte) (uintptr, error) {
	if len(image) == 0 {
		return 0, &Error{Call: "cuModuleLoadData", Code: codeInvalidImage, Name: "CUDA_ERROR_INVALID_IMAGE", Message: "empty module image"}
	}
	// The driver is given no length: it reads an ELF or fatbin image by
	// its headers, anything else as PTX text up to a NUL. A NUL at the end
	// keeps a damaged or textual image from being read past its end.
	if image[len(image)-1] != 0 {
		image = append(image[:len(image):len(image)], 0)
	}
	var m uintptr
	err := check("cuModuleLoadData", ccall(drv.cuModuleLoadData, uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&image[0]))))
	return m, err
}

func cuModuleUnload(m uintptr) error { return check("cuModuleUnload", ccall(drv.cuModuleUnload, m)) }

func cuModuleGetFunction(m uintptr, name string) (uintptr, error) {
	var f uintptr
	cname := cString(name)
	err := check("cuModuleGetFunction", ccall(drv.cuModuleGetFunction, uintptr(unsafe.Pointer(&f)), m, uintptr(unsafe.Pointer(&cname[0]))))
	return f, err
}

func cuFuncGetAttribute(attr int, f uintptr) (int, error) {
	var v int32
	err := check("cuFuncGetAttribute", ccall(drv.cuFuncGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), f))
	return int(v), err
}

// cuLaunchKernel launches f; params is the address of a pinned void*[]
// (see paramBlock).
func cuLaunchKernel(f uintptr, grid, block [3]uint32, stream uintptr, params unsafe.Pointer) error {
	return check("cuLaunchKernel", ccall(drv.cuLaunchKernel, f,
		uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
		uintptr(block[0]), uintptr(block[1]), uintptr(block[2]),
		0, stream, uintptr(params), 0))
}

// cuPointerGetAttribute reads one attribute (a CUpointer_attribute) of
// the allocation holding p into a value of up to 8 bytes (zeroed first:
// the 4-byte attributes fill its low half).
func cuPointerGetAttribute(attr int, p DevicePtr) (uint64, error) {
	var v uint64
	err := check("cuPointerGetAttribute", ccall(drv.cuPointerGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(p)))
	return v, err
}
