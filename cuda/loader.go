package cuda

import (
	"unsafe"

	"github.com/ndconv/ndconv/internal/dynlib"
	"github.com/ndconv/ndconv/internal/gpu"
)

// entry is one C entry point of the driver, NVRTC or cuFFT (gpu.Library);
// its caller makes the right context current (Device.do).
type entry = gpu.Entry

// resultOf turns r, call's result code (a 32-bit enum in the register's
// lower half), into nil or an *Error named by describe.
func resultOf(describe func(code int) (name, message string)) func(call string, r uintptr) error {
	return func(call string, r uintptr) error {
		code := int(uint32(r))
		if code == 0 {
			return nil
		}
		name, message := describe(code)
		return &Error{Backend: "cuda", Call: call, Code: code, Name: name, Message: message}
	}
}

// out calls e with a pointer to a T (an out-parameter) before args, and
// returns the T. args are at most two, never pointers to Go memory.
func out[T any](e *entry, args ...uintptr) (T, error) {
	var v T
	var err error
	switch len(args) {
	case 0:
		err = e.Call(uintptr(unsafe.Pointer(&v)))
	case 1:
		err = e.Call(uintptr(unsafe.Pointer(&v)), args[0])
	default:
		err = e.Call(uintptr(unsafe.Pointer(&v)), args[0], args[1])
	}
	return v, err
}

// initFailed wraps an initialisation call's err in an *UnavailableError.
func initFailed(call string, err error) error {
	if err == nil {
		return nil
	}
	return &UnavailableError{Backend: "cuda", Reason: call + " failed", Err: err}
}

// cudaSpec finds one of CUDA's libraries: envVar's path, else each soname
// through the loader's search, the usual CUDA directories, then versioned
// installations newest first.
func cudaSpec(envVar string, sonames ...string) dynlib.Spec {
	return dynlib.Spec{EnvVar: envVar, Sonames: sonames, Dirs: cudaLibraryDirs, Globs: []string{"/usr/local/cuda-*/lib64"}}
}

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

// goString copies the NUL-terminated C string at p.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
