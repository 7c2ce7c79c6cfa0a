// Package opencl is ndconv's binding of the OpenCL ICD loader and the
// engine that runs the portable kernels (package kernels) on any OpenCL
// device: AMD, Intel and NVIDIA GPUs, and PoCL on the CPU for CI. It owns
// loading the library at run time, platforms and devices, contexts,
// queues, buffers, building programs with the program-binary cache, and
// launching kernels.Launch specialisations.
//
// # No cgo, no SDK at build time
//
// libOpenCL.so.1 (else libOpenCL.so) is opened on first use with purego,
// never from init, so the package builds with CGO_ENABLED=0 and a binary
// runs unchanged where no OpenCL is: Available then returns an
// *UnavailableError saying why (no ICD loader, no platform registered, no
// device with a compiler), an ordinary answer that callers fall back on.
// NDCONV_LIBOPENCL names the library's full path instead of the search
// (internal/dynlib's, shared with the CUDA backend).
// Every OpenCL 1.2 symbol is resolved up front and a missing one is
// reported by name (*LibraryError); clCreateCommandQueueWithProperties is
// used where the library has it and the device is OpenCL 2.0 or newer.
//
// # Calls
//
// Each entry point has a typed wrapper in api.go named after it, its C
// prototype beside its variable, that calls through purego's SyscallN and
// turns the cl_int into an *Error naming the call and the code as cl.h
// does: "opencl: clBuildProgram: CL_BUILD_PROGRAM_FAILURE". Only integers,
// handles and pointers are passed, never a struct by value; arrays of
// pointers handed to the library (program sources and binaries) point into
// pinned memory (runtime.Pinner). Transfers between Go memory and buffers
// are blocking, so the library is done with the Go slice when the call
// returns; a queue's transfers are non-blocking only between buffers and a
// HostBuffer's memory, which the library allocated (CL_MEM_ALLOC_HOST_PTR,
// pinned on GPUs) and keeps mapped. OpenCL's API
// is thread-safe but for a kernel's arguments, which Kernel.Enqueue sets
// and queues under the kernel's lock: any goroutine may use any Device,
// Queue, Buffer or Kernel.
//
// # Devices
//
// Devices are named opencl:P:D, P the platform's index in the ICD loader's
// order and D the device's within it; Devices lists them all with their
// names, versions and limits (Info) for `ndconv devices`. Open returns the
// one *Device of an index, with a context of its own (Open and Close are
// counted; the last Close releases it).
//
// # Programs and the cache
//
// Device.Program builds OpenCL C source with -D defines and caches the
// result in memory (one *Program per device and key, however many
// goroutines ask at once) and its binary on disk (CacheDir:
// NDCONV_CACHE_DIR/opencl, else the user cache directory's ndconv/opencl),
// keyed by the SHA-256 of the source, the sorted options and the platform's
// name and version, the device's name and version and the driver version.
// Files are written atomically (a temporary file renamed into place) and
// carry a checksum; a damaged file, or one the driver refuses, is rebuilt
// and replaced (internal/gpucache, shared with the CUDA backend).
// ClearCache empties the directory. A failed build is a
// *BuildError with the compiler's log, the defines and the option string.
// PoCL takes about a second to build and first run a specialisation, which
// is why the tests share specialisations and, on PoCL, build most of them
// unoptimised and leave the disk cache to PoCL's own (gpu_test.go;
// docs/perf/ci-time.md has the figures).
//
// # For the engine
//
// The engine is internal/gpu's, written once for every GPU API: this
// package serves it a device (OpenEngineDevice: gpu.Device over the calls
// above, engine.go) and plans for one not opened (Planner, for warm-up's
// counts). A queue's Record and Wait are markers and barriers
// (clEnqueueMarkerWithWaitList, clEnqueueBarrierWithWaitList, OpenCL 1.2),
// timed by the queue's profiling counters; a launch the device cannot run
// (work-group limits, local or constant memory, float64 without
// cl_khr_fp64) is refused by CheckLaunch with an *UnsupportedError before
// it is queued. Setting NDCONV_OPENCL_SYNC=1 makes every launch wait for
// its kernel and report the kernel's failure against its name.
package opencl
