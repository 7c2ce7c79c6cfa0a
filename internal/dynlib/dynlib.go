package dynlib

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Spec says where to look for one shared library.
type Spec struct {
	EnvVar  string   // a full path that replaces the search: NDCONV_LIBCUDA
	Sonames []string // tried in order, first by the dynamic loader's own search
	Dirs    []string // then in each of these directories
	// Globs are directory patterns searched after Dirs, their matches
	// newest first (reverse sorted order): /usr/local/cuda-*/lib64 puts
	// cuda-13.0 before cuda-12.4.
	Globs []string
}

// Symbol binds one C entry point to the variable that holds its address.
// It is an alias of an unnamed struct type so that the backends' symbol
// tables read as {"cuInit", &drv.cuInit} pairs, which vet accepts only for
// struct types that are not another package's named ones.
type Symbol = struct {
	Name string
	Addr *uintptr
}

// CString returns s as a NUL-terminated byte slice for a const char*.
func CString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// Library is an opened shared library.
type Library struct {
	Path   string // what dlopen succeeded with
	handle uintptr
}

// Candidates lists the paths Open gives to dlopen, in order: only the
// environment variable's path where it is set (an explicit choice is never
// second-guessed), else each soname as the loader finds it, then each
// soname that is not already a full path in each directory of Dirs and of
// Globs' matches.
func (spec Spec) Candidates(getenv func(string) string) []string {
	if p := getenv(spec.EnvVar); p != "" {
		return []string{p}
	}
	dirs := slices.Clone(spec.Dirs)
	for _, g := range spec.Globs {
		if matches, _ := filepath.Glob(g); len(matches) > 0 {
			slices.Sort(matches)
			slices.Reverse(matches)
			dirs = append(dirs, matches...)
		}
	}
	paths := slices.Clone(spec.Sonames)
	for _, dir := range dirs {
		for _, name := range spec.Sonames {
			if !filepath.IsAbs(name) {
				paths = append(paths, filepath.Join(dir, name))
			}
		}
	}
	return paths
}

// Open opens the first candidate that dlopen accepts. Its error is an
// *Error holding every path tried and the most telling dlopen message: one
// that is not merely "no such file" (a wrong architecture, a missing
// dependency) where there is one, else the loader's own search's.
func Open(spec Spec, getenv func(string) string) (*Library, error) {
	if !Supported {
		return nil, &Error{Library: spec.Sonames[0], Err: errors.New("run-time loading is not supported on " + runtime.GOOS)}
	}
	paths := spec.Candidates(getenv)
	var telling, first error
	for _, p := range paths {
		h, err := dlopen(p)
		if err == nil {
			return &Library{Path: p, handle: h}, nil
		}
		if first == nil {
			first = err
		}
		if telling == nil && !strings.Contains(err.Error(), "No such file") {
			telling = err
		}
	}
	if telling == nil {
		telling = first // the loader's own search, by soname
	}
	name := spec.Sonames[0]
	if p := getenv(spec.EnvVar); p != "" {
		name = p + " (from " + spec.EnvVar + ")"
	}
	return nil, &Error{Library: name, Tried: paths, Err: telling}
}

// OpenPath opens the library at path itself, with no search: a
// dependency loaded ahead of the library that needs it, so that the
// dynamic loader finds it resident. Its error is an *Error.
func OpenPath(path string) (*Library, error) {
	h, err := dlopen(path)
	if err != nil {
		return nil, &Error{Library: path, Tried: []string{path}, Err: err}
	}
	return &Library{Path: path, handle: h}, nil
}

// Bind resolves every symbol of table, failing with an *Error on the first
// one missing: an entry point that is not there means a library too old
// for ndconv, and is better reported now than as a crash at first use.
func (l *Library) Bind(table []Symbol) error {
	for _, s := range table {
		addr, err := dlsym(l.handle, s.Name)
		if err != nil {
			return &Error{Library: l.Path, Symbol: s.Name, Err: err}
		}
		*s.Addr = addr
	}
	return nil
}

// BindOptional resolves the symbols of table that the library has, and
// leaves the others 0: entry points a caller uses only where present.
func (l *Library) BindOptional(table []Symbol) {
	for _, s := range table {
		if addr, err := dlsym(l.handle, s.Name); err == nil {
			*s.Addr = addr
		}
	}
}

// Error is a shared library that could not be opened, or one that lacks a
// symbol. Its message has no package prefix: a backend presents it as an
// internal/gpu LibraryError (gpu.LibraryErrorOf), which has the same
// fields and the backend's name, and reads with that name before it.
type Error struct {
	Library string   // what was looked for: "libcuda.so.1", or the path opened
	Tried   []string // every path given to dlopen, in order
	Symbol  string   // the missing symbol, if the library opened
	Err     error    // dlopen's or dlsym's message
}

func (e *Error) Error() string {
	if e.Symbol != "" {
		return fmt.Sprintf("%s: missing symbol %s: %v", e.Library, e.Symbol, e.Err)
	}
	s := "cannot load " + e.Library
	switch n := len(e.Tried); {
	case n > 3:
		s += fmt.Sprintf(" (tried %s and %d more paths)", strings.Join(e.Tried[:2], ", "), n-2)
	case n > 1:
		s += fmt.Sprintf(" (tried %s)", strings.Join(e.Tried, ", "))
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }
