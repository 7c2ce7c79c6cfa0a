package opencl

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/ndconv/ndconv/internal/dynlib"
	"github.com/ndconv/ndconv/internal/gpu"
)

// The ICD loader's entry points, bound once by loadLibrary. Each holds the
// address of the C function whose prototype is in its comment (cl.h). No
// struct is ever passed by value: every argument is an integer, a handle or
// a pointer.
var cl entryPoints

type entryPoints struct {
	clGetPlatformIDs     uintptr // cl_int clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms)
	clGetPlatformInfo    uintptr // cl_int clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret)
	clGetDeviceIDs       uintptr // cl_int clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type, cl_uint num_entries, cl_device_id *devices, cl_uint *num_devices)
	clGetDeviceInfo      uintptr // cl_int clGetDeviceInfo(cl_device_id device, cl_device_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret)
	clCreateContext      uintptr // cl_context clCreateContext(const cl_context_properties *properties, cl_uint num_devices, const cl_device_id *devices, void (*pfn_notify)(const char *, const void *, size_t, void *), void *user_data, cl_int *errcode_ret)
	clReleaseContext     uintptr // cl_int clReleaseContext(cl_context context)
	clCreateCommandQueue uintptr // cl_command_queue clCreateCommandQueue(cl_context context, cl_device_id device, cl_command_queue_properties properties, cl_int *errcode_ret)
	// cl_command_queue clCreateCommandQueueWithProperties(cl_context context, cl_device_id device,
	//     const cl_queue_properties *properties, cl_int *errcode_ret) — OpenCL 2.0, optional
	clCreateCommandQueueWithProperties uintptr
	clReleaseCommandQueue              uintptr // cl_int clReleaseCommandQueue(cl_command_queue command_queue)
	clCreateBuffer                     uintptr // cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret)
	clReleaseMemObject                 uintptr // cl_int clReleaseMemObject(cl_mem memobj)
	// cl_int clEnqueueReadBuffer(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read,
	//     size_t offset, size_t size, void *ptr, cl_uint num_events_in_wait_list,
	//     const cl_event *event_wait_list, cl_event *event)
	clEnqueueReadBuffer uintptr
	// cl_int clEnqueueWriteBuffer(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write,
	//     size_t offset, size_t size, const void *ptr, cl_uint num_events_in_wait_list,
	//     const cl_event *event_wait_list, cl_event *event)
	clEnqueueWriteBuffer uintptr
	// cl_int clEnqueueCopyBuffer(cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer,
	//     size_t src_offset, size_t dst_offset, size_t size, cl_uint num_events_in_wait_list,
	//     const cl_event *event_wait_list, cl_event *event)
	clEnqueueCopyBuffer uintptr
	// void *clEnqueueMapBuffer(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_map,
	//     cl_map_flags map_flags, size_t offset, size_t size, cl_uint num_events_in_wait_list,
	//     const cl_event *event_wait_list, cl_event *event, cl_int *errcode_ret)
	clEnqueueMapBuffer uintptr
	// cl_int clEnqueueUnmapMemObject(cl_command_queue command_queue, cl_mem memobj, void *mapped_ptr,
	//     cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
	clEnqueueUnmapMemObject uintptr
	// cl_program clCreateProgramWithSource(cl_context context, cl_uint count, const char **strings,
	//     const size_t *lengths, cl_int *errcode_ret)
	clCreateProgramWithSource uintptr
	// cl_program clCreateProgramWithBinary(cl_context context, cl_uint num_devices, const cl_device_id *device_list,
	//     const size_t *lengths, const unsigned char **binaries, cl_int *binary_status, cl_int *errcode_ret)
	clCreateProgramWithBinary uintptr
	// cl_int clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id *device_list,
	//     const char *options, void (*pfn_notify)(cl_program, void *), void *user_data)
	clBuildProgram uintptr
	// cl_int clGetProgramBuildInfo(cl_program program, cl_device_id device, cl_program_build_info param_name,
	//     size_t param_value_size, void *param_value, size_t *param_value_size_ret)
	clGetProgramBuildInfo uintptr
	clGetProgramInfo      uintptr // cl_int clGetProgramInfo(cl_program program, cl_program_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret)
	clReleaseProgram      uintptr // cl_int clReleaseProgram(cl_program program)
	clCreateKernel        uintptr // cl_kernel clCreateKernel(cl_program program, const char *kernel_name, cl_int *errcode_ret)
	clSetKernelArg        uintptr // cl_int clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void *arg_value)
	// cl_int clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info param_name,
	//     size_t param_value_size, void *param_value, size_t *param_value_size_ret)
	clGetKernelWorkGroupInfo uintptr
	clReleaseKernel          uintptr // cl_int clReleaseKernel(cl_kernel kernel)
	// cl_int clEnqueueNDRangeKernel(cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
	//     const size_t *global_work_offset, const size_t *global_work_size, const size_t *local_work_size,
	//     cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
	clEnqueueNDRangeKernel  uintptr
	clFlush                 uintptr // cl_int clFlush(cl_command_queue command_queue)
	clFinish                uintptr // cl_int clFinish(cl_command_queue command_queue)
	clWaitForEvents         uintptr // cl_int clWaitForEvents(cl_uint num_events, const cl_event *event_list)
	clGetEventProfilingInfo uintptr // cl_int clGetEventProfilingInfo(cl_event event, cl_profiling_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret)
	clReleaseEvent          uintptr // cl_int clReleaseEvent(cl_event event)
	// cl_int clEnqueueMarkerWithWaitList(cl_command_queue command_queue, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
	clEnqueueMarkerWithWaitList uintptr
	// cl_int clEnqueueBarrierWithWaitList(cl_command_queue command_queue, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
	clEnqueueBarrierWithWaitList uintptr
	// cl_int clEnqueueFillBuffer(cl_command_queue command_queue, cl_mem buffer, const void *pattern, size_t pattern_size, size_t offset, size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
	clEnqueueFillBuffer uintptr
}

// requiredSymbols is the OpenCL 1.2 core ndconv needs: every ICD loader
// exports it.
func requiredSymbols() []dynlib.Symbol {
	return []dynlib.Symbol{
		{"clGetPlatformIDs", &cl.clGetPlatformIDs},
		{"clGetPlatformInfo", &cl.clGetPlatformInfo},
		{"clGetDeviceIDs", &cl.clGetDeviceIDs},
		{"clGetDeviceInfo", &cl.clGetDeviceInfo},
		{"clCreateContext", &cl.clCreateContext},
		{"clReleaseContext", &cl.clReleaseContext},
		{"clCreateCommandQueue", &cl.clCreateCommandQueue},
		{"clReleaseCommandQueue", &cl.clReleaseCommandQueue},
		{"clCreateBuffer", &cl.clCreateBuffer},
		{"clReleaseMemObject", &cl.clReleaseMemObject},
		{"clEnqueueReadBuffer", &cl.clEnqueueReadBuffer},
		{"clEnqueueWriteBuffer", &cl.clEnqueueWriteBuffer},
		{"clEnqueueCopyBuffer", &cl.clEnqueueCopyBuffer},
		{"clEnqueueMapBuffer", &cl.clEnqueueMapBuffer},
		{"clEnqueueUnmapMemObject", &cl.clEnqueueUnmapMemObject},
		{"clCreateProgramWithSource", &cl.clCreateProgramWithSource},
		{"clCreateProgramWithBinary", &cl.clCreateProgramWithBinary},
		{"clBuildProgram", &cl.clBuildProgram},
		{"clGetProgramBuildInfo", &cl.clGetProgramBuildInfo},
		{"clGetProgramInfo", &cl.clGetProgramInfo},
		{"clReleaseProgram", &cl.clReleaseProgram},
		{"clCreateKernel", &cl.clCreateKernel},
		{"clSetKernelArg", &cl.clSetKernelArg},
		{"clGetKernelWorkGroupInfo", &cl.clGetKernelWorkGroupInfo},
		{"clReleaseKernel", &cl.clReleaseKernel},
		{"clEnqueueNDRangeKernel", &cl.clEnqueueNDRangeKernel},
		{"clFlush", &cl.clFlush},
		{"clFinish", &cl.clFinish},
		{"clWaitForEvents", &cl.clWaitForEvents},
		{"clGetEventProfilingInfo", &cl.clGetEventProfilingInfo},
		{"clReleaseEvent", &cl.clReleaseEvent},
		{"clEnqueueMarkerWithWaitList", &cl.clEnqueueMarkerWithWaitList},
		{"clEnqueueBarrierWithWaitList", &cl.clEnqueueBarrierWithWaitList},
		{"clEnqueueFillBuffer", &cl.clEnqueueFillBuffer},
	}
}

// optionalSymbols are used where the library has them.
func optionalSymbols() []dynlib.Symbol {
	return []dynlib.Symbol{
		{"clCreateCommandQueueWithProperties", &cl.clCreateCommandQueueWithProperties},
	}
}

// Constants mirrored from cl.h (checked against the header by
// TestConstantsMatchHeader where the header is installed).
const (
	clFalse = 0
	clTrue  = 1

	clPlatformProfile    = 0x0900
	clPlatformVersion    = 0x0901
	clPlatformName       = 0x0902
	clPlatformVendor     = 0x0903
	clPlatformExtensions = 0x0904

	clDeviceTypeCPU         = 1 << 1
	clDeviceTypeGPU         = 1 << 2
	clDeviceTypeAccelerator = 1 << 3
	clDeviceTypeCustom      = 1 << 4
	clDeviceTypeAll         = 0xFFFFFFFF

	clDeviceType                  = 0x1000
	clDeviceMaxComputeUnits       = 0x1002
	clDeviceMaxWorkItemDimensions = 0x1003
	clDeviceMaxWorkGroupSize      = 0x1004
	clDeviceMaxWorkItemSizes      = 0x1005
	clDeviceMaxClockFrequency     = 0x100C
	clDeviceMaxMemAllocSize       = 0x1010
	clDeviceGlobalMemSize         = 0x101F
	clDeviceMaxConstantBufferSize = 0x1020
	clDeviceMaxConstantArgs       = 0x1021
	clDeviceLocalMemType          = 0x1022
	clDeviceLocalMemSize          = 0x1023
	clDeviceAvailable             = 0x1027
	clDeviceCompilerAvailable     = 0x1028
	clDeviceName                  = 0x102B
	clDeviceVendor                = 0x102C
	clDriverVersion               = 0x102D
	clDeviceVersion               = 0x102F
	clDeviceExtensions            = 0x1030
	clDeviceDoubleFPConfig        = 0x1032
	clDeviceOpenCLCVersion        = 0x103D

	clLocal = 0x1 // cl_device_local_mem_type: dedicated local memory

	clContextPlatform = 0x1084

	clQueueProperties               = 0x1093
	clQueueProfilingEnable          = 1 << 1
	clQueueOutOfOrderExecModeEnable = 1 << 0

	clMemReadWrite    = 1 << 0
	clMemWriteOnly    = 1 << 1
	clMemReadOnly     = 1 << 2
	clMemUseHostPtr   = 1 << 3
	clMemAllocHostPtr = 1 << 4
	clMemCopyHostPtr  = 1 << 5

	clMapRead  = 1 << 0
	clMapWrite = 1 << 1

	clProgramNumDevices   = 0x1162
	clProgramBinarySizes  = 0x1165
	clProgramBinaries     = 0x1166
	clProgramBuildStatus  = 0x1181
	clProgramBuildOptions = 0x1182
	clProgramBuildLog     = 0x1183

	clKernelWorkGroupSize  = 0x11B0
	clKernelLocalMemSize   = 0x11B2
	clKernelPrivateMemSize = 0x11B4

	clProfilingCommandQueued = 0x1280
	clProfilingCommandSubmit = 0x1281
	clProfilingCommandStart  = 0x1282
	clProfilingCommandEnd    = 0x1283
)

// library is the process's one binding of the ICD loader: loaded and bound
// on first use (never from init), the outcome kept.
var lib struct {
	once sync.Once
	err  error // an *UnavailableError
	path string
}

// loadLibrary opens the ICD loader and binds its symbols, once.
func loadLibrary() error {
	lib.once.Do(func() {
		l, err := gpu.OpenLibrary("opencl", openclLibrary, lookupEnv, requiredSymbols(), func() { cl = entryPoints{} },
			"no OpenCL library", "OpenCL library lacks an OpenCL 1.2 entry point")
		if err != nil {
			lib.err = err
			return
		}
		l.BindOptional(optionalSymbols())
		lib.path = l.Path
	})
	return lib.err
}

// LibraryPath is the ICD loader in use, or "" where none loaded.
func LibraryPath() string {
	if loadLibrary() != nil {
		return ""
	}
	return lib.path
}

// goString copies the NUL-terminated C string in b (or all of b).
func goString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// cString returns s as a NUL-terminated byte slice for a const char*.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// ptr is the address of b's first byte, or nil for an empty slice. It is
// an unsafe.Pointer, converted to uintptr in ccall's own argument list
// (uintptr(ptr(b))), so that uintptrescapes keeps b alive for the call: a
// helper returning a uintptr would leave b free to be collected and its
// memory reused while the driver still reads it (NVIDIA's clBuildProgram
// then built other programs' options).
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// Typed wrappers, one per entry point, each named after it.

func clGetPlatformIDs() ([]uintptr, error) {
	var n uint32
	if err := check("clGetPlatformIDs", ccall(cl.clGetPlatformIDs, 0, 0, uintptr(unsafe.Pointer(&n)))); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	ids := make([]uintptr, n)
	err := check("clGetPlatformIDs", ccall(cl.clGetPlatformIDs, uintptr(n), uintptr(unsafe.Pointer(&ids[0])), uintptr(unsafe.Pointer(&n))))
	return ids[:min(int(n), len(ids))], err
}

// infoBytes asks an info query (clGet*Info) for its size, then its value.
// query(size, value, sizeRet) makes the call; it converts the pointers to
// uintptr in ccall's own argument list, as every call here does, so that
// what they point to stays put and alive until the call returns.
func infoBytes(call string, query func(size uintptr, value, sizeRet unsafe.Pointer) uintptr) ([]byte, error) {
	var size uintptr
	if err := check(call, query(0, nil, unsafe.Pointer(&size))); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, nil
	}
	buf := make([]byte, size)
	err := check(call, query(size, unsafe.Pointer(&buf[0]), nil))
	return buf, err
}

func clGetPlatformInfoString(platform uintptr, param int) (string, error) {
	b, err := infoBytes("clGetPlatformInfo", func(size uintptr, value, sizeRet unsafe.Pointer) uintptr {
		return ccall(cl.clGetPlatformInfo, platform, uintptr(param), size, uintptr(value), uintptr(sizeRet))
	})
	return goString(b), err
}

func clGetDeviceIDs(platform uintptr, deviceType uint64) ([]uintptr, error) {
	var n uint32
	r := ccall(cl.clGetDeviceIDs, platform, uintptr(deviceType), 0, 0, uintptr(unsafe.Pointer(&n)))
	if resultCode(r) == CodeDeviceNotFound {
		return nil, nil
	}
	if err := check("clGetDeviceIDs", r); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	ids := make([]uintptr, n)
	err := check("clGetDeviceIDs", ccall(cl.clGetDeviceIDs, platform, uintptr(deviceType), uintptr(n), uintptr(unsafe.Pointer(&ids[0])), uintptr(unsafe.Pointer(&n))))
	return ids[:min(int(n), len(ids))], err
}

func clGetDeviceInfoBytes(device uintptr, param int) ([]byte, error) {
	return infoBytes("clGetDeviceInfo", func(size uintptr, value, sizeRet unsafe.Pointer) uintptr {
		return ccall(cl.clGetDeviceInfo, device, uintptr(param), size, uintptr(value), uintptr(sizeRet))
	})
}

func clGetDeviceInfoString(device uintptr, param int) (string, error) {
	b, err := clGetDeviceInfoBytes(device, param)
	return goString(b), err
}

// clGetDeviceInfoUint reads a cl_uint, cl_ulong, size_t or cl_bool query:
// the value is as wide as the call says it is.
func clGetDeviceInfoUint(device uintptr, param int) (uint64, error) {
	var v uint64
	var size uintptr
	err := check("clGetDeviceInfo", ccall(cl.clGetDeviceInfo, device, uintptr(param), 8, uintptr(unsafe.Pointer(&v)), uintptr(unsafe.Pointer(&size))))
	if err != nil {
		return 0, err
	}
	switch size { // little-endian: a narrower value sits in v's low bytes
	case 1:
		v &= 0xff
	case 2:
		v &= 0xffff
	case 4:
		v &= 0xffffffff
	}
	return v, nil
}

func clCreateContext(platform, device uintptr) (uintptr, error) {
	props := [3]uintptr{clContextPlatform, platform, 0}
	code := int32(codeNotLoaded)
	h := ccall(cl.clCreateContext, uintptr(unsafe.Pointer(&props[0])), 1, uintptr(unsafe.Pointer(&device)), 0, 0, uintptr(unsafe.Pointer(&code)))
	return h, checkCode("clCreateContext", int(code))
}

func clReleaseContext(ctx uintptr) error {
	return check("clReleaseContext", ccall(cl.clReleaseContext, ctx))
}

// clCreateQueue makes an in-order queue with profiling on, through
// clCreateCommandQueueWithProperties where the device is OpenCL 2.0 or
// newer (clCreateCommandQueue is deprecated there), else the 1.2 call.
func clCreateQueue(ctx, device uintptr, modern bool) (uintptr, error) {
	code := int32(codeNotLoaded)
	if modern && cl.clCreateCommandQueueWithProperties != 0 {
		props := [3]uint64{clQueueProperties, clQueueProfilingEnable, 0}
		h := ccall(cl.clCreateCommandQueueWithProperties, ctx, device, uintptr(unsafe.Pointer(&props[0])), uintptr(unsafe.Pointer(&code)))
		return h, checkCode("clCreateCommandQueueWithProperties", int(code))
	}
	h := ccall(cl.clCreateCommandQueue, ctx, device, clQueueProfilingEnable, uintptr(unsafe.Pointer(&code)))
	return h, checkCode("clCreateCommandQueue", int(code))
}

func clReleaseCommandQueue(q uintptr) error {
	return check("clReleaseCommandQueue", ccall(cl.clReleaseCommandQueue, q))
}

// clCreateBuffer allocates size bytes; with clMemCopyHostPtr in flags the
// buffer starts as a copy of host (which must hold size bytes), done before
// the call returns.
func clCreateBuffer(ctx uintptr, flags uint64, size int, host []byte) (uintptr, error) {
	code := int32(codeNotLoaded)
	h := ccall(cl.clCreateBuffer, ctx, uintptr(flags), uintptr(size), uintptr(ptr(host)), uintptr(unsafe.Pointer(&code)))
	return h, checkCode("clCreateBuffer", int(code))
}

func clReleaseMemObject(m uintptr) error {
	return check("clReleaseMemObject", ccall(cl.clReleaseMemObject, m))
}

// The transfers between Go memory and a buffer are blocking: the
// implementation is done with the Go slice when the call returns, which
// keeps the slice alive (uintptrescapes) for exactly that long.

func clEnqueueWriteBuffer(q, buf uintptr, offset int, src []byte) error {
	return check("clEnqueueWriteBuffer", ccall(cl.clEnqueueWriteBuffer, q, buf, clTrue, uintptr(offset), uintptr(len(src)), uintptr(ptr(src)), 0, 0, 0))
}

func clEnqueueReadBuffer(q, buf uintptr, offset int, dst []byte) error {
	return check("clEnqueueReadBuffer", ccall(cl.clEnqueueReadBuffer, q, buf, clTrue, uintptr(offset), uintptr(len(dst)), uintptr(ptr(dst)), 0, 0, 0))
}

// The non-blocking transfers move between a buffer and host memory that
// is not Go memory (a mapped pinned buffer, whose pointer the caller
// keeps valid until the transfer's event completes). They wait for the
// events of wait and return their own.

func clEnqueueWriteBufferAsync(q, buf uintptr, offset int, src unsafe.Pointer, n int, wait []uintptr) (uintptr, error) {
	var event uintptr
	err := check("clEnqueueWriteBuffer", ccall(cl.clEnqueueWriteBuffer, q, buf, clFalse, uintptr(offset), uintptr(n), uintptr(src),
		uintptr(len(wait)), uintptr(waitList(wait)), uintptr(unsafe.Pointer(&event))))
	return event, err
}

func clEnqueueReadBufferAsync(q, buf uintptr, offset int, dst unsafe.Pointer, n int, wait []uintptr) (uintptr, error) {
	var event uintptr
	err := check("clEnqueueReadBuffer", ccall(cl.clEnqueueReadBuffer, q, buf, clFalse, uintptr(offset), uintptr(n), uintptr(dst),
		uintptr(len(wait)), uintptr(waitList(wait)), uintptr(unsafe.Pointer(&event))))
	return event, err
}

// waitList is a cl_event* for a wait list of len(wait) events (NULL when
// empty, as OpenCL requires), converted in the call (see ptr).
func waitList(wait []uintptr) unsafe.Pointer {
	if len(wait) == 0 {
		return nil
	}
	return unsafe.Pointer(&wait[0])
}

// clEnqueueMapBuffer maps size bytes of buf for reading and writing and
// returns the host pointer, once the map is done (blocking).
func clEnqueueMapBuffer(q, buf uintptr, size int) (unsafe.Pointer, error) {
	code := int32(codeNotLoaded)
	p := ccall(cl.clEnqueueMapBuffer, q, buf, clTrue, clMapRead|clMapWrite, 0, uintptr(size), 0, 0, 0, uintptr(unsafe.Pointer(&code)))
	if err := checkCode("clEnqueueMapBuffer", int(code)); err != nil {
		return nil, err
	}
	return *(*unsafe.Pointer)(unsafe.Pointer(&p)), nil // C memory the library owns
}

func clEnqueueUnmapMemObject(q, buf uintptr, mapped unsafe.Pointer) error {
	return check("clEnqueueUnmapMemObject", ccall(cl.clEnqueueUnmapMemObject, q, buf, uintptr(mapped), 0, 0, 0))
}

func clEnqueueCopyBuffer(q, src, dst uintptr, srcOffset, dstOffset, n int) error {
	return check("clEnqueueCopyBuffer", ccall(cl.clEnqueueCopyBuffer, q, src, dst, uintptr(srcOffset), uintptr(dstOffset), uintptr(n), 0, 0, 0))
}

func clCreateProgramWithSource(ctx uintptr, source string) (uintptr, error) {
	src := cString(source)
	var pinner runtime.Pinner
	pinner.Pin(&src[0])
	defer pinner.Unpin()
	strs := [1]uintptr{uintptr(unsafe.Pointer(&src[0]))} // const char**: pointers to pinned memory
	lengths := [1]uintptr{uintptr(len(source))}
	code := int32(codeNotLoaded)
	h := ccall(cl.clCreateProgramWithSource, ctx, 1, uintptr(unsafe.Pointer(&strs[0])), uintptr(unsafe.Pointer(&lengths[0])), uintptr(unsafe.Pointer(&code)))
	return h, checkCode("clCreateProgramWithSource", int(code))
}

func clCreateProgramWithBinary(ctx, device uintptr, binary []byte) (uintptr, error) {
	if len(binary) == 0 {
		return 0, &Error{Call: "clCreateProgramWithBinary", Code: CodeInvalidBinary, Name: ErrorName(CodeInvalidBinary)}
	}
	var pinner runtime.Pinner
	pinner.Pin(&binary[0])
	defer pinner.Unpin()
	bins := [1]uintptr{uintptr(unsafe.Pointer(&binary[0]))}
	lengths := [1]uintptr{uintptr(len(binary))}
	status := int32(codeNotLoaded)
	code := int32(codeNotLoaded)
	h := ccall(cl.clCreateProgramWithBinary, ctx, 1, uintptr(unsafe.Pointer(&device)), uintptr(unsafe.Pointer(&lengths[0])),
		uintptr(unsafe.Pointer(&bins[0])), uintptr(unsafe.Pointer(&status)), uintptr(unsafe.Pointer(&code)))
	if err := checkCode("clCreateProgramWithBinary", int(code)); err != nil {
		if h != 0 && code != codeNotLoaded {
			clReleaseProgram(h)
		}
		return 0, err
	}
	if err := checkCode("clCreateProgramWithBinary", int(status)); err != nil {
		clReleaseProgram(h)
		return 0, err
	}
	return h, nil
}

func clBuildProgram(program, device uintptr, options string) error {
	opts := cString(options)
	return check("clBuildProgram", ccall(cl.clBuildProgram, program, 1, uintptr(unsafe.Pointer(&device)), uintptr(ptr(opts)), 0, 0))
}

func clGetProgramBuildLog(program, device uintptr) (string, error) {
	b, err := infoBytes("clGetProgramBuildInfo", func(size uintptr, value, sizeRet unsafe.Pointer) uintptr {
		return ccall(cl.clGetProgramBuildInfo, program, device, clProgramBuildLog, size, uintptr(value), uintptr(sizeRet))
	})
	return goString(b), err
}

// clGetProgramBinary returns the binary of a program built for one device.
func clGetProgramBinary(program uintptr) ([]byte, error) {
	var size uintptr
	if err := check("clGetProgramInfo", ccall(cl.clGetProgramInfo, program, clProgramBinarySizes, unsafe.Sizeof(size), uintptr(unsafe.Pointer(&size)), 0)); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, nil
	}
	bin := make([]byte, size)
	var pinner runtime.Pinner
	pinner.Pin(&bin[0])
	defer pinner.Unpin()
	ptrs := [1]uintptr{uintptr(unsafe.Pointer(&bin[0]))} // unsigned char**: one pointer per device
	err := check("clGetProgramInfo", ccall(cl.clGetProgramInfo, program, clProgramBinaries, unsafe.Sizeof(ptrs), uintptr(unsafe.Pointer(&ptrs[0])), 0))
	return bin, err
}

func clReleaseProgram(p uintptr) error {
	return check("clReleaseProgram", ccall(cl.clReleaseProgram, p))
}

func clCreateKernel(program uintptr, name string) (uintptr, error) {
	n := cString(name)
	code := int32(codeNotLoaded)
	h := ccall(cl.clCreateKernel, program, uintptr(ptr(n)), uintptr(unsafe.Pointer(&code)))
	return h, checkCode("clCreateKernel", int(code))
}

// clSetKernelArg sets argument index to the size bytes at value, which the
// implementation copies before returning.
func clSetKernelArg(kernel uintptr, index int, size uintptr, value unsafe.Pointer) error {
	return check("clSetKernelArg", ccall(cl.clSetKernelArg, kernel, uintptr(index), size, uintptr(value)))
}

func clGetKernelWorkGroupInfoUint(kernel, device uintptr, param int) (uint64, error) {
	var v uint64
	err := check("clGetKernelWorkGroupInfo", ccall(cl.clGetKernelWorkGroupInfo, kernel, device, uintptr(param), 8, uintptr(unsafe.Pointer(&v)), 0))
	return v, err
}

func clReleaseKernel(k uintptr) error {
	return check("clReleaseKernel", ccall(cl.clReleaseKernel, k))
}

// clEnqueueNDRangeKernel queues kernel over global work-items in groups of
// local (both [3]uintptr, work_dim 3), after the events of wait, and
// returns its event.
func clEnqueueNDRangeKernel(q, kernel uintptr, global, local *[3]uintptr, wait []uintptr) (uintptr, error) {
	var event uintptr
	err := check("clEnqueueNDRangeKernel", ccall(cl.clEnqueueNDRangeKernel, q, kernel, 3, 0,
		uintptr(unsafe.Pointer(global)), uintptr(unsafe.Pointer(local)), uintptr(len(wait)), uintptr(waitList(wait)), uintptr(unsafe.Pointer(&event))))
	return event, err
}

func clFlush(q uintptr) error  { return check("clFlush", ccall(cl.clFlush, q)) }
func clFinish(q uintptr) error { return check("clFinish", ccall(cl.clFinish, q)) }

func clWaitForEvents(events ...uintptr) error {
	if len(events) == 0 {
		return nil
	}
	return check("clWaitForEvents", ccall(cl.clWaitForEvents, uintptr(len(events)), uintptr(unsafe.Pointer(&events[0]))))
}

func clGetEventProfilingInfo(event uintptr, param int) (uint64, error) {
	var v uint64
	err := check("clGetEventProfilingInfo", ccall(cl.clGetEventProfilingInfo, event, uintptr(param), 8, uintptr(unsafe.Pointer(&v)), 0))
	return v, err
}

func clReleaseEvent(e uintptr) error {
	return check("clReleaseEvent", ccall(cl.clReleaseEvent, e))
}

// clEnqueueMarker queues a marker, whose event completes with the work
// queued before it.
func clEnqueueMarker(q uintptr) (uintptr, error) {
	var event uintptr
	err := check("clEnqueueMarkerWithWaitList", ccall(cl.clEnqueueMarkerWithWaitList, q, 0, 0, uintptr(unsafe.Pointer(&event))))
	return event, err
}

// clEnqueueBarrier makes the work queued on q after it wait for event.
func clEnqueueBarrier(q, event uintptr) error {
	return check("clEnqueueBarrierWithWaitList", ccall(cl.clEnqueueBarrierWithWaitList, q, 1, uintptr(unsafe.Pointer(&event)), 0))
}

// clEnqueueFillBuffer sets n bytes of buf from offset to value.
func clEnqueueFillBuffer(q, buf uintptr, value byte, offset, n int) error {
	pattern := [1]byte{value}
	return check("clEnqueueFillBuffer", ccall(cl.clEnqueueFillBuffer, q, buf, uintptr(unsafe.Pointer(&pattern[0])), 1, uintptr(offset), uintptr(n), 0, 0, 0))
}
