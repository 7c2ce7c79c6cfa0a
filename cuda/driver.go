package cuda

import (
	"unsafe"

	"github.com/ndconv/ndconv/internal/gpu"
)

// drv holds the driver's entry points (gpu.Library.Entries), C prototypes beside.
var drv struct {
	cuInit                    entry // CUresult cuInit(unsigned int Flags)
	cuDriverGetVersion        entry // CUresult cuDriverGetVersion(int *driverVersion)
	cuGetErrorName            entry // CUresult cuGetErrorName(CUresult error, const char **pStr)
	cuGetErrorString          entry // CUresult cuGetErrorString(CUresult error, const char **pStr)
	cuDeviceGetCount          entry // CUresult cuDeviceGetCount(int *count)
	cuDeviceGet               entry // CUresult cuDeviceGet(CUdevice *device, int ordinal)
	cuDeviceGetName           entry // CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
	cuDeviceGetAttribute      entry // CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
	cuDeviceTotalMem          entry `sym:"cuDeviceTotalMem_v2"` // CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
	cuDevicePrimaryCtxRetain  entry // CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
	cuDevicePrimaryCtxRelease entry `sym:"cuDevicePrimaryCtxRelease_v2"` // CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
	cuCtxSetCurrent           entry // CUresult cuCtxSetCurrent(CUcontext ctx)
	cuCtxSynchronize          entry // CUresult cuCtxSynchronize(void)
	cuMemGetInfo              entry `sym:"cuMemGetInfo_v2"`      // CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
	cuMemAlloc                entry `sym:"cuMemAlloc_v2"`        // CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
	cuMemFree                 entry `sym:"cuMemFree_v2"`         // CUresult cuMemFree_v2(CUdeviceptr dptr)
	cuMemcpyHtoDAsync         entry `sym:"cuMemcpyHtoDAsync_v2"` // CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
	cuMemcpyDtoHAsync         entry `sym:"cuMemcpyDtoHAsync_v2"` // CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
	cuMemcpyDtoDAsync         entry `sym:"cuMemcpyDtoDAsync_v2"` // CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
	cuMemsetD8Async           entry // CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s)
	cuMemHostAlloc            entry // CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
	cuMemFreeHost             entry // CUresult cuMemFreeHost(void *p)
	cuMemHostRegister         entry `sym:"cuMemHostRegister_v2"` // CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
	cuMemHostUnregister       entry // CUresult cuMemHostUnregister(void *p)
	cuStreamCreate            entry // CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
	cuStreamSynchronize       entry // CUresult cuStreamSynchronize(CUstream hStream)
	cuStreamDestroy           entry `sym:"cuStreamDestroy_v2"` // CUresult cuStreamDestroy_v2(CUstream hStream)
	cuStreamWaitEvent         entry // CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
	cuEventCreate             entry // CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
	cuEventRecord             entry // CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
	cuEventSynchronize        entry // CUresult cuEventSynchronize(CUevent hEvent)
	cuEventElapsedTime        entry // CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
	cuEventDestroy            entry `sym:"cuEventDestroy_v2"` // CUresult cuEventDestroy_v2(CUevent hEvent)
	cuModuleLoadData          entry // CUresult cuModuleLoadData(CUmodule *module, const void *image)
	cuModuleUnload            entry // CUresult cuModuleUnload(CUmodule hmod)
	cuModuleGetFunction       entry // CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
	cuFuncGetAttribute        entry // CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
	cuPointerGetAttribute     entry // CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
	// CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, gridDimY, gridDimZ,
	//     unsigned int blockDimX, blockDimY, blockDimZ, unsigned int sharedMemBytes,
	//     CUstream hStream, void **kernelParams, void **extra)
	cuLaunchKernel entry
}

var driverLib = gpu.Library{
	Backend:   "cuda",
	Spec:      cudaSpec("NDCONV_LIBCUDA", "libcuda.so.1", "libcuda.so"),
	Entries:   &drv,
	NoLibrary: "no CUDA driver library",
	NoSymbol:  "CUDA driver library lacks an entry point (driver too old?)",
	Result:    resultOf(describeDriver),
	Unbound:   codeNotInitialized,
	Init:      initDriver,
}

// driverVersion is the loaded driver's 1000*major + 10*minor.
var driverVersion int

func initDriver(string) error {
	if err := initFailed("cuInit", drv.cuInit.Call(0)); err != nil {
		return err
	}
	v, err := out[int32](&drv.cuDriverGetVersion)
	driverVersion = int(v)
	return initFailed("cuDriverGetVersion", err)
}

// describeDriver names a CUresult as the driver does where it can be
// asked, else as cuda.h does.
func describeDriver(code int) (name, message string) {
	name, message = knownResult(code)
	if s, ok := driverString(&drv.cuGetErrorName, code); ok {
		name = s
	}
	if s, ok := driverString(&drv.cuGetErrorString, code); ok {
		message = s
	}
	return name, message
}

// driverString asks cuGetErrorName or cuGetErrorString about code.
func driverString(e *entry, code int) (string, bool) {
	var p *byte
	if !e.Bound() || e.Raw(uintptr(code), uintptr(unsafe.Pointer(&p))) != 0 || p == nil {
		return "", false
	}
	return goString(p), true
}

// Entry points passed as functions (to gpu.FreeList).

func cuMemFree(p DevicePtr) error { return drv.cuMemFree.Call(uintptr(p)) }

func cuMemFreeHost(p unsafe.Pointer) error { return drv.cuMemFreeHost.Call(uintptr(p)) }
