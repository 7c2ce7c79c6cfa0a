package opencl

import (
	"bytes"
	"cmp"
	"runtime"
	"unsafe"

	"github.com/ndconv/ndconv/internal/dynlib"
	"github.com/ndconv/ndconv/internal/gpu"
)

// openclLibrary is the ICD loader (ocl-icd, Khronos', or a vendor's),
// which dispatches every call to the platform that owns the object.
var openclLibrary = dynlib.Spec{
	EnvVar:  "NDCONV_LIBOPENCL",
	Sonames: openclSonames(),
	Dirs: []string{
		"/usr/lib/x86_64-linux-gnu",
		"/usr/lib/aarch64-linux-gnu",
		"/usr/lib64",
		"/usr/lib",
		"/usr/local/lib",
		"/opt/rocm/lib",
		"/usr/local/cuda/lib64",
		"/usr/lib/wsl/lib",
	},
}

func openclSonames() []string {
	if runtime.GOOS == "darwin" {
		return []string{"/System/Library/Frameworks/OpenCL.framework/OpenCL"}
	}
	return []string{"libOpenCL.so.1", "libOpenCL.so"}
}

// The ICD loader's entry points (gpu.Library), bound once by loadLibrary:
// each field is the C function it is named after, its prototype (cl.h) in
// its comment. No struct is passed by value.
var cl entryPoints

type entryPoints struct {
	clGetPlatformIDs                   gpu.Entry // cl_int (cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms)
	clGetPlatformInfo                  gpu.Entry // cl_int (cl_platform_id, cl_platform_info, size_t value_size, void *value, size_t *size_ret)
	clGetDeviceIDs                     gpu.Entry // cl_int (cl_platform_id, cl_device_type, cl_uint num_entries, cl_device_id *devices, cl_uint *num_devices)
	clGetDeviceInfo                    gpu.Entry // cl_int (cl_device_id, cl_device_info, size_t value_size, void *value, size_t *size_ret)
	clCreateContext                    gpu.Entry // cl_context (const cl_context_properties *, cl_uint num_devices, const cl_device_id *, void (*notify)(…), void *user_data, cl_int *errcode_ret)
	clReleaseContext                   gpu.Entry // cl_int (cl_context)
	clCreateCommandQueue               gpu.Entry // cl_command_queue (cl_context, cl_device_id, cl_command_queue_properties, cl_int *errcode_ret)
	clCreateCommandQueueWithProperties gpu.Entry `optional:"OpenCL 2.0"` // cl_command_queue (cl_context, cl_device_id, const cl_queue_properties *, cl_int *errcode_ret)
	clReleaseCommandQueue              gpu.Entry // cl_int (cl_command_queue)
	clCreateBuffer                     gpu.Entry // cl_mem (cl_context, cl_mem_flags, size_t size, void *host_ptr, cl_int *errcode_ret)
	clReleaseMemObject                 gpu.Entry // cl_int (cl_mem)
	clEnqueueReadBuffer                gpu.Entry // cl_int (cl_command_queue, cl_mem, cl_bool blocking, size_t offset, size_t size, void *ptr, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clEnqueueWriteBuffer               gpu.Entry // cl_int (cl_command_queue, cl_mem, cl_bool blocking, size_t offset, size_t size, const void *ptr, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clEnqueueCopyBuffer                gpu.Entry // cl_int (cl_command_queue, cl_mem src, cl_mem dst, size_t src_offset, size_t dst_offset, size_t size, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clEnqueueFillBuffer                gpu.Entry // cl_int (cl_command_queue, cl_mem, const void *pattern, size_t pattern_size, size_t offset, size_t size, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clEnqueueMapBuffer                 gpu.Entry // void *(cl_command_queue, cl_mem, cl_bool blocking, cl_map_flags, size_t offset, size_t size, cl_uint num_events, const cl_event *wait_list, cl_event *event, cl_int *errcode_ret)
	clEnqueueUnmapMemObject            gpu.Entry // cl_int (cl_command_queue, cl_mem, void *mapped_ptr, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clCreateProgramWithSource          gpu.Entry // cl_program (cl_context, cl_uint count, const char **strings, const size_t *lengths, cl_int *errcode_ret)
	clCreateProgramWithBinary          gpu.Entry // cl_program (cl_context, cl_uint num_devices, const cl_device_id *, const size_t *lengths, const unsigned char **binaries, cl_int *binary_status, cl_int *errcode_ret)
	clBuildProgram                     gpu.Entry // cl_int (cl_program, cl_uint num_devices, const cl_device_id *, const char *options, void (*notify)(…), void *user_data)
	clGetProgramBuildInfo              gpu.Entry // cl_int (cl_program, cl_device_id, cl_program_build_info, size_t value_size, void *value, size_t *size_ret)
	clGetProgramInfo                   gpu.Entry // cl_int (cl_program, cl_program_info, size_t value_size, void *value, size_t *size_ret)
	clReleaseProgram                   gpu.Entry // cl_int (cl_program)
	clCreateKernel                     gpu.Entry // cl_kernel (cl_program, const char *name, cl_int *errcode_ret)
	clSetKernelArg                     gpu.Entry // cl_int (cl_kernel, cl_uint index, size_t size, const void *value)
	clGetKernelWorkGroupInfo           gpu.Entry // cl_int (cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t value_size, void *value, size_t *size_ret)
	clReleaseKernel                    gpu.Entry // cl_int (cl_kernel)
	clEnqueueNDRangeKernel             gpu.Entry // cl_int (cl_command_queue, cl_kernel, cl_uint work_dim, const size_t *global_offset, const size_t *global_size, const size_t *local_size, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clFlush                            gpu.Entry // cl_int (cl_command_queue)
	clFinish                           gpu.Entry // cl_int (cl_command_queue)
	clEnqueueMarkerWithWaitList        gpu.Entry // cl_int (cl_command_queue, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clEnqueueBarrierWithWaitList       gpu.Entry // cl_int (cl_command_queue, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clWaitForEvents                    gpu.Entry // cl_int (cl_uint num_events, const cl_event *events)
	clGetEventProfilingInfo            gpu.Entry // cl_int (cl_event, cl_profiling_info, size_t value_size, void *value, size_t *size_ret)
	clReleaseEvent                     gpu.Entry // cl_int (cl_event)
}

// Constants mirrored from cl.h (checked against the header by
// TestConstantsMatchHeader where the header is installed).
const (
	clFalse = 0
	clTrue  = 1

	clPlatformVersion = 0x0901
	clPlatformName    = 0x0902

	clDeviceTypeCPU = 1 << 1 // then GPU, accelerator and custom: 1 << 2, 3 and 4
	clDeviceTypeAll = 0xFFFFFFFF

	clDeviceType                  = 0x1000
	clDeviceMaxComputeUnits       = 0x1002
	clDeviceMaxWorkGroupSize      = 0x1004
	clDeviceMaxWorkItemSizes      = 0x1005
	clDeviceMaxMemAllocSize       = 0x1010
	clDeviceGlobalMemSize         = 0x101F
	clDeviceMaxConstantBufferSize = 0x1020
	clDeviceLocalMemSize          = 0x1023
	clDeviceAvailable             = 0x1027
	clDeviceCompilerAvailable     = 0x1028
	clDeviceName                  = 0x102B
	clDriverVersion               = 0x102D
	clDeviceVersion               = 0x102F
	clDeviceExtensions            = 0x1030
	clDeviceDoubleFPConfig        = 0x1032

	clContextPlatform = 0x1084

	clQueueProperties      = 0x1093
	clQueueProfilingEnable = 1 << 1

	clMemReadWrite    = 1 << 0
	clMemAllocHostPtr = 1 << 4

	clMapRead  = 1 << 0
	clMapWrite = 1 << 1

	clProgramBinarySizes = 0x1165
	clProgramBinaries    = 0x1166
	clProgramBuildLog    = 0x1183

	clKernelWorkGroupSize = 0x11B0

	clProfilingCommandEnd = 0x1283
)

// openclLib is the ICD loader: an entry point's cl_int result, or one
// stored in errcode_ret, is an *Error (check).
var openclLib = gpu.Library{
	Backend:   "opencl",
	Spec:      openclLibrary,
	Entries:   &cl,
	NoLibrary: "no OpenCL library",
	NoSymbol:  "OpenCL library lacks an OpenCL 1.2 entry point",
	Result:    check,
	Unbound:   notLoadedResult,
}

// loadLibrary opens the ICD loader and binds its entry points, once, on
// first use: nil, or an *UnavailableError.
func loadLibrary() error { return openclLib.Load() }

// goString copies the NUL-terminated C string in b (or all of b).
func goString(b []byte) string {
	s, _, _ := bytes.Cut(b, []byte{0})
	return string(s)
}

// ptr is the address of b's first byte, or nil for an empty slice: an
// unsafe.Pointer, converted in the entry point's own argument list
// (uintptr(ptr(b))) so that uintptrescapes keeps b alive for the call. A
// helper returning a uintptr let b's memory be reused while the driver
// read it (NVIDIA's clBuildProgram then built other programs' options).
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

func clBool(b bool) uintptr {
	if b {
		return clTrue
	}
	return clFalse
}

// Typed wrappers of the entry points, named after them.

// fill asks a call that fills an array (handles, an info query's bytes)
// for its length, then the values, through query, which converts the
// pointers in the entry point's own argument list.
func fill[T any](call string, query func(n uintptr, values, ret unsafe.Pointer) uintptr) ([]T, error) {
	var n uintptr // a size_t, or a cl_uint count in its low bytes (little-endian)
	if err := check(call, query(0, nil, unsafe.Pointer(&n))); err != nil || n == 0 {
		return nil, err
	}
	v := make([]T, n)
	err := check(call, query(n, unsafe.Pointer(&v[0]), unsafe.Pointer(&n)))
	return v[:min(int(n), len(v))], err
}

// isCode reports whether err is the *Error of code.
func isCode(err error, code int) bool {
	e, ok := err.(*Error)
	return ok && e.Code == code
}

func clGetPlatformIDs() ([]uintptr, error) {
	ids, err := fill[uintptr]("clGetPlatformIDs", func(n uintptr, ids, count unsafe.Pointer) uintptr {
		return cl.clGetPlatformIDs.Raw(n, uintptr(ids), uintptr(count))
	})
	if isCode(err, codePlatformNotFound) { // the ICD loader found no vendor file
		return nil, nil
	}
	return ids, err
}

func clGetDeviceIDs(platform uintptr) ([]uintptr, error) {
	ids, err := fill[uintptr]("clGetDeviceIDs", func(n uintptr, ids, count unsafe.Pointer) uintptr {
		return cl.clGetDeviceIDs.Raw(platform, clDeviceTypeAll, n, uintptr(ids), uintptr(count))
	})
	if isCode(err, codeDeviceNotFound) {
		return nil, nil
	}
	return ids, err
}

func clGetPlatformInfo(platform uintptr, param int) ([]byte, error) {
	return fill[byte]("clGetPlatformInfo", func(size uintptr, value, sizeRet unsafe.Pointer) uintptr {
		return cl.clGetPlatformInfo.Raw(platform, uintptr(param), size, uintptr(value), uintptr(sizeRet))
	})
}

func clGetDeviceInfo(device uintptr, param int) ([]byte, error) {
	return fill[byte]("clGetDeviceInfo", func(size uintptr, value, sizeRet unsafe.Pointer) uintptr {
		return cl.clGetDeviceInfo.Raw(device, uintptr(param), size, uintptr(value), uintptr(sizeRet))
	})
}

func clCreateContext(platform, device uintptr) (uintptr, error) {
	props := [3]uintptr{clContextPlatform, platform, 0}
	code := int32(codeNotLoaded)
	h := cl.clCreateContext.Raw(uintptr(unsafe.Pointer(&props[0])), 1, uintptr(unsafe.Pointer(&device)), 0, 0, uintptr(unsafe.Pointer(&code)))
	return h, checkCode("clCreateContext", int(code))
}

// clCreateQueue makes an in-order queue with profiling on, through
// clCreateCommandQueueWithProperties on OpenCL 2.0 or newer (where the
// 1.2 call is deprecated).
func clCreateQueue(ctx, device uintptr, modern bool) (uintptr, error) {
	code := int32(codeNotLoaded)
	if modern && cl.clCreateCommandQueueWithProperties.Bound() {
		props := [3]uint64{clQueueProperties, clQueueProfilingEnable, 0}
		h := cl.clCreateCommandQueueWithProperties.Raw(ctx, device, uintptr(unsafe.Pointer(&props[0])), uintptr(unsafe.Pointer(&code)))
		return h, checkCode("clCreateCommandQueueWithProperties", int(code))
	}
	h := cl.clCreateCommandQueue.Raw(ctx, device, clQueueProfilingEnable, uintptr(unsafe.Pointer(&code)))
	return h, checkCode("clCreateCommandQueue", int(code))
}

func clCreateBuffer(ctx uintptr, flags uint64, size int) (uintptr, error) {
	code := int32(codeNotLoaded)
	h := cl.clCreateBuffer.Raw(ctx, uintptr(flags), uintptr(size), 0, uintptr(unsafe.Pointer(&code)))
	return h, checkCode("clCreateBuffer", int(code))
}

// clEnqueueMapBuffer maps size bytes of buf for reading and writing,
// blocking, and returns the host pointer.
func clEnqueueMapBuffer(q, buf uintptr, size int) (unsafe.Pointer, error) {
	code := int32(codeNotLoaded)
	p := cl.clEnqueueMapBuffer.Raw(q, buf, clTrue, clMapRead|clMapWrite, 0, uintptr(size), 0, 0, 0, uintptr(unsafe.Pointer(&code)))
	if err := checkCode("clEnqueueMapBuffer", int(code)); err != nil {
		return nil, err
	}
	return *(*unsafe.Pointer)(unsafe.Pointer(&p)), nil // C memory the library owns
}

func clEnqueueUnmapMemObject(q, buf uintptr, mapped unsafe.Pointer) error {
	return cl.clEnqueueUnmapMemObject.Call(q, buf, uintptr(mapped), 0, 0, 0)
}

// The arrays of pointers handed to the library point into pinned memory.

func clCreateProgramWithSource(ctx uintptr, source string) (uintptr, error) {
	src := dynlib.CString(source)
	var pinner runtime.Pinner
	pinner.Pin(&src[0])
	defer pinner.Unpin()
	strs := [1]uintptr{uintptr(unsafe.Pointer(&src[0]))}
	lengths := [1]uintptr{uintptr(len(source))}
	code := int32(codeNotLoaded)
	h := cl.clCreateProgramWithSource.Raw(ctx, 1, uintptr(unsafe.Pointer(&strs[0])), uintptr(unsafe.Pointer(&lengths[0])), uintptr(unsafe.Pointer(&code)))
	return h, checkCode("clCreateProgramWithSource", int(code))
}

func clCreateProgramWithBinary(ctx, device uintptr, binary []byte) (uintptr, error) {
	if len(binary) == 0 {
		return 0, checkCode("clCreateProgramWithBinary", codeInvalidBinary)
	}
	var pinner runtime.Pinner
	pinner.Pin(&binary[0])
	defer pinner.Unpin()
	bins := [1]uintptr{uintptr(unsafe.Pointer(&binary[0]))}
	lengths := [1]uintptr{uintptr(len(binary))}
	status := int32(codeNotLoaded)
	code := int32(codeNotLoaded)
	h := cl.clCreateProgramWithBinary.Raw(ctx, 1, uintptr(unsafe.Pointer(&device)), uintptr(unsafe.Pointer(&lengths[0])),
		uintptr(unsafe.Pointer(&bins[0])), uintptr(unsafe.Pointer(&status)), uintptr(unsafe.Pointer(&code)))
	if err := cmp.Or(checkCode("clCreateProgramWithBinary", int(code)), checkCode("clCreateProgramWithBinary", int(status))); err != nil {
		if h != 0 && code != codeNotLoaded {
			cl.clReleaseProgram.Call(h)
		}
		return 0, err
	}
	return h, nil
}

func clBuildProgram(program, device uintptr, options string) error {
	opts := dynlib.CString(options)
	return cl.clBuildProgram.Call(program, 1, uintptr(unsafe.Pointer(&device)), uintptr(ptr(opts)), 0, 0)
}

func clGetProgramBuildLog(program, device uintptr) (string, error) {
	b, err := fill[byte]("clGetProgramBuildInfo", func(size uintptr, value, sizeRet unsafe.Pointer) uintptr {
		return cl.clGetProgramBuildInfo.Raw(program, device, clProgramBuildLog, size, uintptr(value), uintptr(sizeRet))
	})
	return goString(b), err
}

// clGetProgramBinary returns the binary of a program built for one device.
func clGetProgramBinary(program uintptr) ([]byte, error) {
	var size uintptr
	if err := cl.clGetProgramInfo.Call(program, clProgramBinarySizes, unsafe.Sizeof(size), uintptr(unsafe.Pointer(&size)), 0); err != nil || size == 0 {
		return nil, err
	}
	bin := make([]byte, size)
	var pinner runtime.Pinner
	pinner.Pin(&bin[0])
	defer pinner.Unpin()
	ptrs := [1]uintptr{uintptr(unsafe.Pointer(&bin[0]))} // unsigned char**: one pointer per device
	err := cl.clGetProgramInfo.Call(program, clProgramBinaries, unsafe.Sizeof(ptrs), uintptr(unsafe.Pointer(&ptrs[0])), 0)
	return bin, err
}

func clCreateKernel(program uintptr, name string) (uintptr, error) {
	n := dynlib.CString(name)
	code := int32(codeNotLoaded)
	h := cl.clCreateKernel.Raw(program, uintptr(ptr(n)), uintptr(unsafe.Pointer(&code)))
	return h, checkCode("clCreateKernel", int(code))
}

func clGetKernelWorkGroupSize(kernel, device uintptr) (int, error) {
	var v uintptr
	err := cl.clGetKernelWorkGroupInfo.Call(kernel, device, clKernelWorkGroupSize, unsafe.Sizeof(v), uintptr(unsafe.Pointer(&v)), 0)
	return int(v), err
}

func clGetEventProfilingInfo(event uintptr, param int) (uint64, error) {
	var v uint64
	err := cl.clGetEventProfilingInfo.Call(event, uintptr(param), 8, uintptr(unsafe.Pointer(&v)), 0)
	return v, err
}

// clEnqueueMarker queues a marker: its event completes with earlier work.
func clEnqueueMarker(q uintptr) (uintptr, error) {
	var event uintptr
	err := cl.clEnqueueMarkerWithWaitList.Call(q, 0, 0, uintptr(unsafe.Pointer(&event)))
	return event, err
}
