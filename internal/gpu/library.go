package gpu

import (
	"cmp"
	"errors"
	"os"
	"reflect"
	"sync"

	"github.com/ndconv/ndconv/internal/dynlib"
)

// Library is a C library a binding calls (CUDA's driver, NVRTC and cuFFT;
// the OpenCL ICD loader), loaded once, on first use. Entries points to a
// struct of Entry fields, each bound to the symbol it is named after, or
// to its sym tag's where the header maps the name to a versioned symbol
// (cuMemAlloc to cuMemAlloc_v2: the plain one is the legacy ABI); one
// tagged optional, a later API version's, may stay unbound.
type Library struct {
	Backend             string // "cuda", "opencl"
	Spec                dynlib.Spec
	Entries             any
	NoLibrary, NoSymbol string // the *UnavailableError's reasons
	// Result turns a returned register into nil or the binding's error
	// naming the call; Unbound is what an unbound entry point returns, a
	// code Result reads as the library not loaded.
	Result  func(call string, r uintptr) error
	Unbound uintptr
	// Init, where set, runs once the entry points are bound (cuInit).
	Init func(path string) error

	once sync.Once
	err  error // an *UnavailableError
	path string
}

// Load opens the library, binds its entry points (a missing one is
// reported now, not as a crash at first use) and runs Init, once.
func (l *Library) Load() error {
	l.once.Do(func() {
		required, optional := l.Symbols()
		lib, err := dynlib.Open(l.Spec, os.Getenv)
		if err != nil {
			l.err = &UnavailableError{Backend: l.Backend, Reason: l.NoLibrary, Err: LibraryErrorOf(l.Backend, err)}
			return
		}
		if err := lib.Bind(required); err != nil {
			for _, s := range required { // no half-bound table
				*s.Addr = 0
			}
			l.err = &UnavailableError{Backend: l.Backend, Reason: l.NoSymbol, Err: LibraryErrorOf(l.Backend, err)}
			return
		}
		lib.BindOptional(optional)
		l.path = lib.Path
		if l.Init != nil {
			l.err = l.Init(lib.Path)
		}
	})
	return l.err
}

// Path is what the library was opened from, once loaded.
func (l *Library) Path() string { return l.path }

// Symbols names l's entry points and lists the symbols they bind: the
// required ones, and those tagged optional.
func (l *Library) Symbols() (required, optional []dynlib.Symbol) {
	table := reflect.ValueOf(l.Entries).Elem()
	for i := range table.NumField() {
		f := table.Type().Field(i)
		e := (*Entry)(table.Field(i).Addr().UnsafePointer())
		e.lib, e.name = l, f.Name
		s := dynlib.Symbol{Name: cmp.Or(f.Tag.Get("sym"), f.Name), Addr: &e.addr}
		if f.Tag.Get("optional") != "" {
			optional = append(optional, s)
		} else {
			required = append(required, s)
		}
	}
	return required, optional
}

// Entry is one C entry point of a Library, bound when the library loads.
type Entry struct {
	lib  *Library
	name string
	addr uintptr // 0 where unbound
}

// Bound reports whether the entry point is bound.
func (e *Entry) Bound() bool { return e.addr != 0 }

// Call calls the entry point and turns its result into nil or the
// binding's error (Library.Result). Every caller converts pointers to
// uintptr in the call expression; uintptrescapes keeps the objects they
// point to alive until the call returns.
//
//go:uintptrescapes
func (e *Entry) Call(args ...uintptr) error {
	return e.lib.Result(e.name, dynlib.Call(e.addr, e.lib.Unbound, args...))
}

// Raw calls the entry point as Call does and returns its result unchecked:
// a handle or pointer, whose error code comes back another way.
//
//go:uintptrescapes
func (e *Entry) Raw(args ...uintptr) uintptr { return dynlib.Call(e.addr, e.lib.Unbound, args...) }

// Release frees the handle at h once, through do (a binding's Device.do)
// with each of frees in turn: it zeroes *h first, and a zero handle (never
// made, or released already) frees nothing.
func Release(h *uintptr, do func(func() error) error, frees ...*Entry) error {
	handle := *h
	if handle == 0 {
		return nil
	}
	*h = 0
	return do(func() error {
		errs := make([]error, len(frees))
		for i, free := range frees {
			errs[i] = free.Call(handle)
		}
		if len(errs) == 1 {
			return errs[0] // unwrapped, as the entry point's
		}
		return errors.Join(errs...)
	})
}
