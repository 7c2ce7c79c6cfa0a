// Package dynlib owns how the GPU backends reach their C libraries without
// cgo: finding a shared library (an environment variable's explicit path,
// else each soname through the dynamic loader's own search, then in the
// usual installation directories), opening it with purego's dlopen,
// binding a table of entry points (every one required, or those present),
// and calling an entry point with integer and pointer arguments. OpenPath
// opens one file with no search (CUDA preloads NVRTC's builtins library
// with it).
//
// A backend describes each library with a Spec and each symbol table as
// []Symbol; what the library is (libcuda, NVRTC, the OpenCL ICD loader)
// and what its result codes mean stay in the backend. Failures are
// *Error values, which the backends present as their LibraryError
// (internal/gpu's, the same fields and the backend's name; see Error).
//
// Where purego cannot dlopen (Supported is false), Open fails with an
// *Error saying so and the backend is simply unavailable.
package dynlib
