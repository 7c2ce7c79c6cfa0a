// Package cuda is ndconv's binding of the CUDA driver API and NVRTC, and
// the ground the CUDA engine is built on: it owns loading the libraries at
// run time, devices and their contexts, device and pinned memory with a
// pool for temporaries, streams and events, run-time compilation of kernel
// source, loading and launching modules, and the module cache.
//
// # No cgo, no toolkit at build time
//
// libcuda.so.1 and libnvrtc.so.13 (else .12) are opened on first use with
// purego, never from init, so the package builds with CGO_ENABLED=0 and a
// binary runs unchanged where no GPU is: Available then returns an
// *UnavailableError saying why (no driver library, cuInit failing, no
// device, no NVRTC), an ordinary answer that callers fall back on. The
// libraries are searched for by soname (LD_LIBRARY_PATH, ld.so.cache), then
// in the usual CUDA directories; NDCONV_LIBCUDA and NDCONV_LIBNVRTC name a
// library's full path instead. Every symbol is resolved up front, and a
// missing one is reported by name (*LibraryError). cuFFT (libcufft.so.12,
// else .11; NDCONV_LIBCUFFT) is one more dynlib.Spec and symbol table
// (cufft.go), loaded only when FFT convolution is asked for; without it
// CUFFTAvailable says why and the planner falls back. The search, dlopen and the calls are internal/dynlib's, shared
// with the OpenCL backend.
//
// # Calls and contexts
//
// Each driver entry point has a typed wrapper in driver.go named after it
// (cuMemAlloc, cuLaunchKernel, …) that calls through ccall (purego's
// SyscallN, about 0.2 µs) and turns the CUresult into an *Error:
// "cuda: cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)". Structs are
// only ever passed by pointer. The wrappers assume the right context is
// current on the calling OS thread; a CUDA context is current per thread,
// and a goroutine may change threads between two statements, so every
// operation on a Device runs inside d.do (or doValue), which locks the
// goroutine's thread, makes the device's retained primary context current,
// runs the work and unlocks. Any goroutine may therefore use any Device,
// several at once. do must not be nested: code inside it calls the
// wrappers, never a method that itself calls do.
//
// # Devices and memory
//
// Open returns the one *Device of an ordinal (Open and Close are counted;
// the last Close releases the context); devices older than compute
// capability 6.0 are refused. Devices lists them all with their limits
// (Info). A Buffer is device memory; its copy and memset methods take byte
// offsets and []byte host memory (Bytes views a typed slice), in a
// synchronous and a stream-ordered (Async) form. Asynchronous copies
// overlap other work only from and to pinned memory (HostBuffer, HostView);
// from Go memory the driver finishes with the slice before returning, so
// Go memory is always safe to pass. Device.Pool hands out temporaries by
// size class and takes them back on Free; an allocation the device cannot
// meet trims the pool, retries once, and is then an *Error (IsOutOfMemory).
// A nil *Stream is the default stream.
//
// # Kernels
//
// Device.Module compiles CUDA C++ source with NVRTC for the device's exact
// architecture (a CUBIN, --gpu-architecture=sm_XY) with -D defines, and
// caches the result in memory and on disk (CacheDir: NDCONV_CACHE_DIR/cuda,
// else the user cache directory's ndconv/cuda), keyed by the SHA-256 of
// source, sorted defines, options, architecture and NVRTC and driver
// versions: a kernel is compiled once per machine, and once per process
// however many goroutines ask at the same time. A failed compilation is a
// *CompileError carrying NVRTC's log and every option. The cache's layers
// (keys, the checksummed file format, atomic writes, compiling once) are
// internal/gpucache's, shared with the OpenCL backend. Module.Function
// finds a kernel; Function.Launch queues it with arguments given as Go
// values (DevicePtr, *Buffer, sized integers, float32, float64), marshalled
// into a kernel-parameter block pinned for the call.
//
// In short:
//
//	d, err := cuda.Open(0)
//	m, err := d.Module(source, "conv.cu", []string{"KW=5", "BORDER=1"})
//	f, err := m.Function("correlate")
//	in, err := d.Pool().Get(n * 4)
//	err = in.CopyFromHostAsync(0, cuda.Bytes(data), stream)
//	err = f.Launch(grid, block, shared, stream, in, out, int32(width))
//
// # For the engine
//
// The engine is internal/gpu's, written once for every GPU API: this
// package serves it a device (OpenEngineDevice: gpu.Device over the calls
// above, engine.go) and plans for one not opened (Planner, for warm-up's
// counts). Two capabilities only CUDA has it offers beside: registering
// the caller's host memory (cuMemHostRegister, gpu.Registrar), so that the
// engine's pipeline copies straight from and to the caller's arrays, and
// cuFFT's plans (gpu.FFTLibrary, cufft.go). MeasureTransfers and
// MeasureRoofline measure the pinned transfer rates and the device's copy
// and FMA rates the bench holds results against.
//
// Setting NDCONV_CUDA_SYNC=1 makes every Launch wait for its kernel and
// report the kernel's own faults against its name, for debugging.
// NDCONV_CUDA_FFT_LAYOUT=real, paired or fftcl makes the FFT method
// transform every problem's blocks (of at most 3 axes) one way: real
// blocks by cuFFT's real-to-complex plans, two real blocks per complex one
// by its complex-to-complex plans, or those by kernels/fft.cl; by default
// every problem of at most 3 axes pairs, and kernels spanning more axes
// than cuFFT's 3 take fft.cl (chooseLayout says why).
package cuda
