//go:build (linux || darwin || freebsd || netbsd) && !android

package dynlib

import (
	"errors"
	"runtime"

	"github.com/ebitengine/purego"
)

// Supported reports whether this system can load libraries at run time.
const Supported = true

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

// Call calls the C function at fn with integer and pointer arguments and
// returns its integer result; where fn is 0 (unbound: its library failed
// to load, reported there) it returns unbound without calling anything.
//
// A caller that converts pointers to uintptr must do so in the call
// expression of a function marked //go:uintptrescapes, which keeps the
// objects they point to alive (and on the heap) until it returns: the
// backends' ccall wrappers are, and Call is too, for callers that convert
// in its own call expression.
//
//go:uintptrescapes
func Call(fn, unbound uintptr, args ...uintptr) uintptr {
	if fn == 0 {
		return unbound
	}
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
