//go:build (linux || darwin || freebsd || netbsd) && !android

package opencl

import (
	"errors"
	"runtime"

	"github.com/ebitengine/purego"
)

const dynamicLoading = true

// dlopen opens path with every symbol bound now (RTLD_NOW), so that a
// library with unresolvable dependencies fails here, not at a call. The
// thread is locked because dlerror's message is per thread.
func dlopen(path string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err == nil && h == 0 {
		err = errors.New("dlopen returned no handle")
	}
	return h, err
}

func dlsym(handle uintptr, name string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	addr, err := purego.Dlsym(handle, name)
	if err == nil && addr == 0 {
		err = errors.New("symbol has a null address")
	}
	return addr, err
}

// ccall calls the C function at fn with integer and pointer arguments and
// returns its integer result. Every caller converts pointers to uintptr in
// its own call expression; uintptrescapes keeps the objects they point to
// alive (and on the heap) until the call returns.
//
//go:uintptrescapes
func ccall(fn uintptr, args ...uintptr) uintptr {
	if fn == 0 { // unbound: the library failed to load, reported there
		return notLoadedResult
	}
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
