package opencl

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// libSpec says where to look for a shared library: the OpenCL ICD loader
// is one libSpec and one symbol table, opened by openLibrary and bound by
// (*library).bind.
type libSpec struct {
	envVar  string   // a full path that replaces the search: NDCONV_LIBOPENCL
	sonames []string // tried in order, first by the dynamic loader's own search
	dirs    []string // then in each of these directories
}

// symbol binds one C entry point to the variable that holds its address.
type symbol struct {
	name string
	addr *uintptr
}

// library is an opened shared library.
type library struct {
	path   string // what dlopen succeeded with
	handle uintptr
}

// openclLibrary is the ICD loader (ocl-icd, Khronos' loader, or a vendor's
// libOpenCL), which dispatches every call to the platform that owns the
// object: PoCL, NVIDIA, ROCm, Intel.
var openclLibrary = libSpec{
	envVar:  "NDCONV_LIBOPENCL",
	sonames: openclSonames(),
	dirs: []string{
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

// candidates lists the paths openLibrary gives to dlopen, in order: only
// the environment variable's path where it is set (an explicit choice is
// never second-guessed), else each soname as the loader finds it, then
// each soname in each directory of spec.dirs.
func (spec libSpec) candidates(getenv func(string) string) []string {
	if p := getenv(spec.envVar); p != "" {
		return []string{p}
	}
	paths := slices.Clone(spec.sonames)
	for _, dir := range spec.dirs {
		for _, name := range spec.sonames {
			if !filepath.IsAbs(name) {
				paths = append(paths, filepath.Join(dir, name))
			}
		}
	}
	return paths
}

// openLibrary opens the first candidate that dlopen accepts. Its error
// holds every path tried and the most telling dlopen message: one that is
// not merely "no such file" (a wrong architecture, a missing dependency)
// where there is one, else the loader's own search's.
func openLibrary(spec libSpec, getenv func(string) string) (*library, error) {
	if !dynamicLoading {
		return nil, &LibraryError{Library: spec.sonames[0], Err: errors.New("run-time loading is not supported on " + runtime.GOOS)}
	}
	paths := spec.candidates(getenv)
	var telling, first error
	for _, p := range paths {
		h, err := dlopen(p)
		if err == nil {
			return &library{path: p, handle: h}, nil
		}
		if first == nil {
			first = err
		}
		if telling == nil && !strings.Contains(err.Error(), "No such file") {
			telling = err
		}
	}
	if telling == nil {
		telling = first
	}
	name := spec.sonames[0]
	if p := getenv(spec.envVar); p != "" {
		name = p + " (from " + spec.envVar + ")"
	}
	return nil, &LibraryError{Library: name, Tried: paths, Err: telling}
}

// bind resolves every symbol of table, failing on the first one missing.
func (l *library) bind(table []symbol) error {
	for _, s := range table {
		addr, err := dlsym(l.handle, s.name)
		if err != nil {
			return &LibraryError{Library: l.path, Symbol: s.name, Err: err}
		}
		*s.addr = addr
	}
	return nil
}

// bindOptional resolves the symbols of table that the library has, and
// leaves the others 0: entry points newer than OpenCL 1.2 that a caller
// uses only where present.
func (l *library) bindOptional(table []symbol) {
	for _, s := range table {
		if addr, err := dlsym(l.handle, s.name); err == nil {
			*s.addr = addr
		}
	}
}

// lookupEnv is os.Getenv, a variable so that tests can present another
// environment without touching the process's.
var lookupEnv = os.Getenv
