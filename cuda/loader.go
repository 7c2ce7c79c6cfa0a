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
// NVRTC, cuFFT): where to find it, its entry points, and the outcome of
// loading it, which happens once, on first use, never from init.
type library struct {
	spec    dynlib.Spec
	entries any // a pointer to the struct of its entry points (see symbols)
	// noLibrary and noSymbol are the *UnavailableError's reason where the
	// library does not open, and where it lacks an entry point.
	noLibrary, noSymbol string
	init                func(path string) error // once bound: cuInit, the version

	once sync.Once
	err  error // an *UnavailableError
	path string
}

// load opens the library, binds every entry point (a missing one is
// reported by name now, not as a crash at first use) and runs init, once.
func (l *library) load() error {
	l.once.Do(func() {
		table := reflect.ValueOf(l.entries).Elem()
		lib, err := gpu.OpenLibrary("cuda", l.spec, lookupEnv, symbols(table), func() { table.SetZero() }, l.noLibrary, l.noSymbol)
		if err == nil {
			l.path = lib.Path
			err = l.init(lib.Path)
		}
		l.err = err
	})
	return l.err
}

// symbols lists the entry points of table, a struct of uintptr fields:
// each binds the symbol it is named after, or the one its sym tag names
// where cuda.h maps the name to a versioned symbol (cuMemAlloc to
// cuMemAlloc_v2: the plain one is the legacy 32-bit ABI).
func symbols(table reflect.Value) []dynlib.Symbol {
	syms := make([]dynlib.Symbol, table.NumField())
	for i := range syms {
		f := table.Type().Field(i)
		syms[i] = dynlib.Symbol{Name: cmp.Or(f.Tag.Get("sym"), f.Name), Addr: (*uintptr)(unsafe.Pointer(table.Field(i).UnsafeAddr()))}
	}
	return syms
}

// initFailed is err, from a library's initialisation call, as the
// *UnavailableError that makes the backend unavailable.
func initFailed(call string, err error) error {
	if err == nil {
		return nil
	}
	return &UnavailableError{Backend: "cuda", Reason: call + " failed", Err: err}
}

// cudaSpec finds one of CUDA's libraries: envVar's path, else each soname
// through the dynamic loader's search, then in the usual CUDA directories,
// then in versioned installations newest first (/usr/local/cuda-13.0/lib64
// before 12.4's).
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

// ccall calls the C function at fn with integer and pointer arguments and
// returns its integer result, or codeNotInitialized where fn is unbound
// (its library failed to load, reported there). Every caller converts
// pointers to uintptr in its own call expression; uintptrescapes keeps the
// objects they point to alive (and on the heap) until the call returns.
//
//go:uintptrescapes
func ccall(fn uintptr, args ...uintptr) uintptr {
	return dynlib.Call(fn, codeNotInitialized, args...)
}

// lookupEnv is os.Getenv, a variable so that tests can present another
// environment without touching the process's.
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

// cString returns s as a NUL-terminated byte slice for a const char*.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}
