package opencl

import (
	"bytes"
	"cmp"
	"os"
	"reflect"
	"runtime"
	"sync"
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

// The ICD loader's entry points, bound once by loadLibrary: each field
// holds the address of the C function it is named after, its prototype
// (cl.h) in its comment. No struct is passed by value.
var cl entryPoints

type entryPoints struct {
	clGetPlatformIDs                   uintptr // cl_int (cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms)
	clGetPlatformInfo                  uintptr // cl_int (cl_platform_id, cl_platform_info, size_t value_size, void *value, size_t *size_ret)
	clGetDeviceIDs                     uintptr // cl_int (cl_platform_id, cl_device_type, cl_uint num_entries, cl_device_id *devices, cl_uint *num_devices)
	clGetDeviceInfo                    uintptr // cl_int (cl_device_id, cl_device_info, size_t value_size, void *value, size_t *size_ret)
	clCreateContext                    uintptr // cl_context (const cl_context_properties *, cl_uint num_devices, const cl_device_id *, void (*notify)(…), void *user_data, cl_int *errcode_ret)
	clReleaseContext                   uintptr // cl_int (cl_context)
	clCreateCommandQueue               uintptr // cl_command_queue (cl_context, cl_device_id, cl_command_queue_properties, cl_int *errcode_ret)
	clCreateCommandQueueWithProperties uintptr `optional:"OpenCL 2.0"` // cl_command_queue (cl_context, cl_device_id, const cl_queue_properties *, cl_int *errcode_ret)
	clReleaseCommandQueue              uintptr // cl_int (cl_command_queue)
	clCreateBuffer                     uintptr // cl_mem (cl_context, cl_mem_flags, size_t size, void *host_ptr, cl_int *errcode_ret)
	clReleaseMemObject                 uintptr // cl_int (cl_mem)
	clEnqueueReadBuffer                uintptr // cl_int (cl_command_queue, cl_mem, cl_bool blocking, size_t offset, size_t size, void *ptr, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clEnqueueWriteBuffer               uintptr // cl_int (cl_command_queue, cl_mem, cl_bool blocking, size_t offset, size_t size, const void *ptr, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clEnqueueCopyBuffer                uintptr // cl_int (cl_command_queue, cl_mem src, cl_mem dst, size_t src_offset, size_t dst_offset, size_t size, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clEnqueueFillBuffer                uintptr // cl_int (cl_command_queue, cl_mem, const void *pattern, size_t pattern_size, size_t offset, size_t size, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clEnqueueMapBuffer                 uintptr // void *(cl_command_queue, cl_mem, cl_bool blocking, cl_map_flags, size_t offset, size_t size, cl_uint num_events, const cl_event *wait_list, cl_event *event, cl_int *errcode_ret)
	clEnqueueUnmapMemObject            uintptr // cl_int (cl_command_queue, cl_mem, void *mapped_ptr, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clCreateProgramWithSource          uintptr // cl_program (cl_context, cl_uint count, const char **strings, const size_t *lengths, cl_int *errcode_ret)
	clCreateProgramWithBinary          uintptr // cl_program (cl_context, cl_uint num_devices, const cl_device_id *, const size_t *lengths, const unsigned char **binaries, cl_int *binary_status, cl_int *errcode_ret)
	clBuildProgram                     uintptr // cl_int (cl_program, cl_uint num_devices, const cl_device_id *, const char *options, void (*notify)(…), void *user_data)
	clGetProgramBuildInfo              uintptr // cl_int (cl_program, cl_device_id, cl_program_build_info, size_t value_size, void *value, size_t *size_ret)
	clGetProgramInfo                   uintptr // cl_int (cl_program, cl_program_info, size_t value_size, void *value, size_t *size_ret)
	clReleaseProgram                   uintptr // cl_int (cl_program)
	clCreateKernel                     uintptr // cl_kernel (cl_program, const char *name, cl_int *errcode_ret)
	clSetKernelArg                     uintptr // cl_int (cl_kernel, cl_uint index, size_t size, const void *value)
	clGetKernelWorkGroupInfo           uintptr // cl_int (cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t value_size, void *value, size_t *size_ret)
	clReleaseKernel                    uintptr // cl_int (cl_kernel)
	clEnqueueNDRangeKernel             uintptr // cl_int (cl_command_queue, cl_kernel, cl_uint work_dim, const size_t *global_offset, const size_t *global_size, const size_t *local_size, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clFlush                            uintptr // cl_int (cl_command_queue)
	clFinish                           uintptr // cl_int (cl_command_queue)
	clEnqueueMarkerWithWaitList        uintptr // cl_int (cl_command_queue, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clEnqueueBarrierWithWaitList       uintptr // cl_int (cl_command_queue, cl_uint num_events, const cl_event *wait_list, cl_event *event)
	clWaitForEvents                    uintptr // cl_int (cl_uint num_events, const cl_event *events)
	clGetEventProfilingInfo            uintptr // cl_int (cl_event, cl_profiling_info, size_t value_size, void *value, size_t *size_ret)
	clReleaseEvent                     uintptr // cl_int (cl_event)
}

// symbols is cl's fields as symbol tables: required, the OpenCL 1.2 core
// every ICD loader exports, and optional (tagged so).
func symbols() (required, optional []dynlib.Symbol) {
	v := reflect.ValueOf(&cl).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		s := dynlib.Symbol{Name: f.Name, Addr: (*uintptr)(v.Field(i).Addr().UnsafePointer())}
		if f.Tag.Get("optional") != "" {
			optional = append(optional, s)
		} else {
			required = append(required, s)
		}
	}
	return required, optional
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

// loadLibrary opens the ICD loader and binds its symbols, once, on first
// use: nil, or an *UnavailableError.
var loadLibrary = sync.OnceValue(func() error {
	required, optional := symbols()
	l, err := gpu.OpenLibrary("opencl", openclLibrary, os.Getenv, required, func() { cl = entryPoints{} },
		"no OpenCL library", "OpenCL library lacks an OpenCL 1.2 entry point")
	if err == nil {
		l.BindOptional(optional)
	}
	return err
})

// ccall calls the C function at fn and returns its integer result, or
// notLoadedResult where fn is unbound. Every caller converts pointers to
// uintptr in its own call expression; uintptrescapes keeps the objects
// they point to alive until the call returns.
//
//go:uintptrescapes
func ccall(fn uintptr, args ...uintptr) uintptr {
	return dynlib.Call(fn, notLoadedResult, args...)
}

// goString copies the NUL-terminated C string in b (or all of b).
func goString(b []byte) string {
	s, _, _ := bytes.Cut(b, []byte{0})
	return string(s)
}

// ptr is the address of b's first byte, or nil for an empty slice: an
// unsafe.Pointer, converted in ccall's own argument list (uintptr(ptr(b)))
// so that uintptrescapes keeps b alive for the call. A helper returning a
// uintptr let b's memory be reused while the driver read it (NVIDIA's
// clBuildProgram then built other programs' options).
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
// pointers in ccall's own argument list.
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
		return ccall(cl.clGetPlatformIDs, n, uintptr(ids), uintptr(count))
	})
	if isCode(err, codePlatformNotFound) { // the ICD loader found no vendor file
		return nil, nil
	}
	return ids, err
}

func clGetDeviceIDs(platform uintptr) ([]uintptr, error) {
	ids, err := fill[uintptr]("clGetDeviceIDs", func(n uintptr, ids, count unsafe.Pointer) uintptr {
		return ccall(cl.clGetDeviceIDs, platform, clDeviceTypeAll, n, uintptr(ids), uintptr(count))
	})
	if isCode(err, codeDeviceNotFound) {
		return nil, nil
	}
	return ids, err
}

func clGetPlatformInfo(platform uintptr, param int) ([]byte, error) {
	return fill[byte]("clGetPlatformInfo", func(size uintptr, value, sizeRet unsafe.Pointer) uintptr {
		return ccall(cl.clGetPlatformInfo, platform, uintptr(param), size, uintptr(value), uintptr(sizeRet))
	})
}

func clGetDeviceInfo(device uintptr, param int) ([]byte, error) {
	return fill[byte]("clGetDeviceInfo", func(size uintptr, value, sizeRet unsafe.Pointer) uintptr {
		return ccall(cl.clGetDeviceInfo, device, uintptr(param), size, uintptr(value), uintptr(sizeRet))
	})
}

func clCreateContext(platform, device uintptr) (uintptr, error) {
	props := [3]uintptr{clContextPlatform, platform, 0}
	code := int32(codeNotLoaded)
	h := ccall(cl.clCreateContext, uintptr(unsafe.Pointer(&props[0])), 1, uintptr(unsafe.Pointer(&device)), 0, 0, uintptr(unsafe.Pointer(&code)))
	return h, checkCode("clCreateContext", int(code))
}

// clCreateQueue makes an in-order queue with profiling on, through
// clCreateCommandQueueWithProperties on OpenCL 2.0 or newer (where the
// 1.2 call is deprecated).
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

func clCreateBuffer(ctx uintptr, flags uint64, size int) (uintptr, error) {
	code := int32(codeNotLoaded)
	h := ccall(cl.clCreateBuffer, ctx, uintptr(flags), uintptr(size), 0, uintptr(unsafe.Pointer(&code)))
	return h, checkCode("clCreateBuffer", int(code))
}

func clReleaseContext(h uintptr) error {
	return check("clReleaseContext", ccall(cl.clReleaseContext, h))
}
func clReleaseCommandQueue(h uintptr) error {
	return check("clReleaseCommandQueue", ccall(cl.clReleaseCommandQueue, h))
}
func clReleaseMemObject(h uintptr) error {
	return check("clReleaseMemObject", ccall(cl.clReleaseMemObject, h))
}
func clReleaseProgram(h uintptr) error {
	return check("clReleaseProgram", ccall(cl.clReleaseProgram, h))
}
func clReleaseKernel(h uintptr) error { return check("clReleaseKernel", ccall(cl.clReleaseKernel, h)) }
func clReleaseEvent(h uintptr) error  { return check("clReleaseEvent", ccall(cl.clReleaseEvent, h)) }
func clFlush(q uintptr) error         { return check("clFlush", ccall(cl.clFlush, q)) }
func clFinish(q uintptr) error        { return check("clFinish", ccall(cl.clFinish, q)) }

// Transfers between host memory and a buffer: blocking, or from and to a
// mapped host buffer that the caller keeps until the queue is done.

func clEnqueueWriteBuffer(q, buf uintptr, blocking bool, offset int, src []byte) error {
	return check("clEnqueueWriteBuffer", ccall(cl.clEnqueueWriteBuffer, q, buf, clBool(blocking), uintptr(offset), uintptr(len(src)), uintptr(ptr(src)), 0, 0, 0))
}

func clEnqueueReadBuffer(q, buf uintptr, blocking bool, offset int, dst []byte) error {
	return check("clEnqueueReadBuffer", ccall(cl.clEnqueueReadBuffer, q, buf, clBool(blocking), uintptr(offset), uintptr(len(dst)), uintptr(ptr(dst)), 0, 0, 0))
}

// clEnqueueMapBuffer maps size bytes of buf for reading and writing,
// blocking, and returns the host pointer.
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

// clEnqueueFillBuffer sets n bytes of buf from offset to value.
func clEnqueueFillBuffer(q, buf uintptr, value byte, offset, n int) error {
	pattern := [1]byte{value}
	return check("clEnqueueFillBuffer", ccall(cl.clEnqueueFillBuffer, q, buf, uintptr(unsafe.Pointer(&pattern[0])), 1, uintptr(offset), uintptr(n), 0, 0, 0))
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
	h := ccall(cl.clCreateProgramWithSource, ctx, 1, uintptr(unsafe.Pointer(&strs[0])), uintptr(unsafe.Pointer(&lengths[0])), uintptr(unsafe.Pointer(&code)))
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
	h := ccall(cl.clCreateProgramWithBinary, ctx, 1, uintptr(unsafe.Pointer(&device)), uintptr(unsafe.Pointer(&lengths[0])),
		uintptr(unsafe.Pointer(&bins[0])), uintptr(unsafe.Pointer(&status)), uintptr(unsafe.Pointer(&code)))
	if err := cmp.Or(checkCode("clCreateProgramWithBinary", int(code)), checkCode("clCreateProgramWithBinary", int(status))); err != nil {
		if h != 0 && code != codeNotLoaded {
			clReleaseProgram(h)
		}
		return 0, err
	}
	return h, nil
}

func clBuildProgram(program, device uintptr, options string) error {
	opts := dynlib.CString(options)
	return check("clBuildProgram", ccall(cl.clBuildProgram, program, 1, uintptr(unsafe.Pointer(&device)), uintptr(ptr(opts)), 0, 0))
}

func clGetProgramBuildLog(program, device uintptr) (string, error) {
	b, err := fill[byte]("clGetProgramBuildInfo", func(size uintptr, value, sizeRet unsafe.Pointer) uintptr {
		return ccall(cl.clGetProgramBuildInfo, program, device, clProgramBuildLog, size, uintptr(value), uintptr(sizeRet))
	})
	return goString(b), err
}

// clGetProgramBinary returns the binary of a program built for one device.
func clGetProgramBinary(program uintptr) ([]byte, error) {
	var size uintptr
	if err := check("clGetProgramInfo", ccall(cl.clGetProgramInfo, program, clProgramBinarySizes, unsafe.Sizeof(size), uintptr(unsafe.Pointer(&size)), 0)); err != nil || size == 0 {
		return nil, err
	}
	bin := make([]byte, size)
	var pinner runtime.Pinner
	pinner.Pin(&bin[0])
	defer pinner.Unpin()
	ptrs := [1]uintptr{uintptr(unsafe.Pointer(&bin[0]))} // unsigned char**: one pointer per device
	err := check("clGetProgramInfo", ccall(cl.clGetProgramInfo, program, clProgramBinaries, unsafe.Sizeof(ptrs), uintptr(unsafe.Pointer(&ptrs[0])), 0))
	return bin, err
}

func clCreateKernel(program uintptr, name string) (uintptr, error) {
	n := dynlib.CString(name)
	code := int32(codeNotLoaded)
	h := ccall(cl.clCreateKernel, program, uintptr(ptr(n)), uintptr(unsafe.Pointer(&code)))
	return h, checkCode("clCreateKernel", int(code))
}

// clSetKernelArg sets argument index to value, copied before it returns.
func clSetKernelArg(kernel uintptr, index int, value []byte) error {
	return check("clSetKernelArg", ccall(cl.clSetKernelArg, kernel, uintptr(index), uintptr(len(value)), uintptr(ptr(value))))
}

func clGetKernelWorkGroupSize(kernel, device uintptr) (int, error) {
	var v uintptr
	err := check("clGetKernelWorkGroupInfo", ccall(cl.clGetKernelWorkGroupInfo, kernel, device, clKernelWorkGroupSize, unsafe.Sizeof(v), uintptr(unsafe.Pointer(&v)), 0))
	return int(v), err
}

// clEnqueueNDRangeKernel queues kernel over global work-items in groups of
// local (work_dim 3; an int is a size_t).
func clEnqueueNDRangeKernel(q, kernel uintptr, global, local *[3]int) error {
	return check("clEnqueueNDRangeKernel", ccall(cl.clEnqueueNDRangeKernel, q, kernel, 3, 0, uintptr(unsafe.Pointer(global)), uintptr(unsafe.Pointer(local)), 0, 0, 0))
}

func clWaitForEvent(event uintptr) error {
	return check("clWaitForEvents", ccall(cl.clWaitForEvents, 1, uintptr(unsafe.Pointer(&event))))
}

func clGetEventProfilingInfo(event uintptr, param int) (uint64, error) {
	var v uint64
	err := check("clGetEventProfilingInfo", ccall(cl.clGetEventProfilingInfo, event, uintptr(param), 8, uintptr(unsafe.Pointer(&v)), 0))
	return v, err
}

// clEnqueueMarker queues a marker: its event completes with earlier work.
func clEnqueueMarker(q uintptr) (uintptr, error) {
	var event uintptr
	err := check("clEnqueueMarkerWithWaitList", ccall(cl.clEnqueueMarkerWithWaitList, q, 0, 0, uintptr(unsafe.Pointer(&event))))
	return event, err
}

// clEnqueueBarrier makes the work queued on q after it wait for event.
func clEnqueueBarrier(q, event uintptr) error {
	return check("clEnqueueBarrierWithWaitList", ccall(cl.clEnqueueBarrierWithWaitList, q, 1, uintptr(unsafe.Pointer(&event)), 0))
}
