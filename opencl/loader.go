package opencl

import (
	"os"
	"runtime"

	"github.com/ndconv/ndconv/internal/dynlib"
	"github.com/ndconv/ndconv/internal/gpu"
)

// The OpenCL ICD loader is one dynlib.Spec and two symbol tables (required
// and optional), opened by dynlib.Open and bound by Library.Bind and
// BindOptional (their errors passed through libraryError); the search,
// dlopen and the C calls themselves are internal/dynlib's.

// openclLibrary is the ICD loader (ocl-icd, Khronos' loader, or a vendor's
// libOpenCL), which dispatches every call to the platform that owns the
// object: PoCL, NVIDIA, ROCm, Intel.
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

// libraryError presents an error of dynlib.Open or Library.Bind (a
// *dynlib.Error) as this package's *LibraryError.
func libraryError(err error) error { return gpu.LibraryErrorOf("opencl", err) }

// ccall calls the C function at fn with integer and pointer arguments and
// returns its integer result, or notLoadedResult where fn is unbound (the
// library failed to load, reported there). Every caller converts pointers
// to uintptr in its own call expression; uintptrescapes keeps the objects
// they point to alive (and on the heap) until the call returns.
//
//go:uintptrescapes
func ccall(fn uintptr, args ...uintptr) uintptr {
	return dynlib.Call(fn, notLoadedResult, args...)
}

// lookupEnv is os.Getenv, a variable so that tests can present another
// environment without touching the process's.
var lookupEnv = os.Getenv
