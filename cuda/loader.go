package cuda

import (
	"cmp"
	"os"
	"reflect"
	"sync"
	"unsafe"

	"github.com/ndconv/ndconv/internal/dynlib"
	"github.com/ndconv/ndconv/internal/gpu"
)

// library is one of the C libraries this package binds (the driver,
// NVRTC, cuFFT), loaded once, on first use.
type library struct {
	spec dynlib.Spec
	// entries points to the struct of its entry points: entry fields, each
	// named after the C function and bound to that symbol, or to its sym
	// tag's where the header maps the name to a versioned symbol
	// (cuMemAlloc to cuMemAlloc_v2: the plain one is the legacy ABI).
	entries             any
	noLibrary, noSymbol string                                // the *UnavailableError's reasons
	describe            func(code int) (name, message string) // a result code, for its *Error
	init                func(path string) error               // once bound: cuInit, the version

	once sync.Once
	err  error // an *UnavailableError
	path string
}

// load opens the library, binds every entry point (a missing one is
// reported now, not as a crash at first use) and runs init, once.
func (l *library) load() error {
	l.once.Do(func() {
		syms := l.symbols()
		unbind := func() {
			for _, s := range syms {
				*s.Addr = 0
			}
		}
		lib, err := gpu.OpenLibrary("cuda", l.spec, lookupEnv, syms, unbind, l.noLibrary, l.noSymbol)
		if err == nil {
			l.path = lib.Path
			err = l.init(lib.Path)
		}
		l.err = err
	})
	return l.err
}

// symbols names l's entry points and lists the symbols they bind.
func (l *library) symbols() []dynlib.Symbol {
	table := reflect.ValueOf(l.entries).Elem()
	syms := make([]dynlib.Symbol, table.NumField())
	for i := range syms {
		f := table.Type().Field(i)
		e := (*entry)(unsafe.Pointer(table.Field(i).UnsafeAddr()))
		e.lib, e.name = l, f.Name
		syms[i] = dynlib.Symbol{Name: cmp.Or(f.Tag.Get("sym"), f.Name), Addr: &e.addr}
	}
	return syms
}

// result turns r, call's result code (a 32-bit enum in the register's
// lower half), into nil or an *Error.
func (l *library) result(call string, r uintptr) error {
	code := int(uint32(r))
	if code == 0 {
		return nil
	}
	name, message := l.describe(code)
	return &Error{Call: call, Code: code, Name: name, Message: message}
}

// entry is one C entry point of a library, bound when the library loads.
type entry struct {
	lib  *library
	name string
	addr uintptr // 0 where unbound
}

// call calls the entry point and turns its result into nil or an *Error.
// Every caller converts pointers to uintptr in the call expression;
// uintptrescapes keeps the objects they point to alive until the call
// returns. The caller makes the right context current (Device.do).
//
//go:uintptrescapes
func (e *entry) call(args ...uintptr) error { return e.lib.result(e.name, ccall(e.addr, args...)) }

// out calls e with a pointer to a T (an out-parameter) before args, and
// returns the T. args are at most two, never pointers to Go memory.
func out[T any](e *entry, args ...uintptr) (T, error) {
	var v T
	var err error
	switch len(args) {
	case 0:
		err = e.call(uintptr(unsafe.Pointer(&v)))
	case 1:
		err = e.call(uintptr(unsafe.Pointer(&v)), args[0])
	default:
		err = e.call(uintptr(unsafe.Pointer(&v)), args[0], args[1])
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

// ccall calls the C function at fn as entry.call does, and returns its
// result unchecked, or codeNotInitialized where fn is unbound.
//
//go:uintptrescapes
func ccall(fn uintptr, args ...uintptr) uintptr {
	return dynlib.Call(fn, codeNotInitialized, args...)
}

// lookupEnv is os.Getenv, a variable for tests.
var lookupEnv = os.Getenv

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
