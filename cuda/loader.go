package cuda

import (
	"os"

	"github.com/ndconv/ndconv/internal/dynlib"
)

// The CUDA driver, NVRTC and cuFFT are each one dynlib.Spec and one
// symbol table, opened and bound by gpu.OpenLibrary (its errors an
// *UnavailableError over a *LibraryError); the search, dlopen and the C
// calls themselves are internal/dynlib's.

// cudaLibraryDirs are where CUDA installations put their libraries, searched
// after the dynamic loader's own paths (LD_LIBRARY_PATH, ld.so.cache).
var cudaLibraryDirs = []string{
	"/usr/local/cuda/lib64",
	"/usr/local/cuda/targets/x86_64-linux/lib",
	"/usr/local/cuda/targets/sbsa-linux/lib",
	"/usr/lib/x86_64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu",
	"/usr/local/nvidia/lib64",
	"/usr/local/nvidia/lib",
	"/usr/lib/wsl/lib",
	"/usr/lib64",
	"/opt/cuda/lib64",
}

// cudaLibraryGlobs are versioned CUDA installations, searched after
// cudaLibraryDirs, newest first (/usr/local/cuda-13.0/lib64 before 12.4's).
var cudaLibraryGlobs = []string{"/usr/local/cuda-*/lib64"}

// ccall calls the C function at fn with integer and pointer arguments and
// returns its integer result, or CodeNotInitialized where fn is unbound
// (the library failed to load, reported there). Every caller converts
// pointers to uintptr in its own call expression; uintptrescapes keeps the
// objects they point to alive (and on the heap) until the call returns.
//
//go:uintptrescapes
func ccall(fn uintptr, args ...uintptr) uintptr {
	return dynlib.Call(fn, CodeNotInitialized, args...)
}

// lookupEnv is os.Getenv, a variable so that tests can present another
// environment without touching the process's.
var lookupEnv = os.Getenv
