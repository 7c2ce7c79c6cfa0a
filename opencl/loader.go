package opencl

import (
	"os"
	"runtime"

	"github.com/ndconv/ndconv/internal/dynlib"
)

// The OpenCL ICD loader is one dynlib.Spec and two symbol tables (required
// and optional), opened and the required one bound by gpu.OpenLibrary (its
// errors an *UnavailableError over a *LibraryError), the optional one by
// Library.BindOptional; the search, dlopen and the C calls themselves are
// internal/dynlib's.

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
