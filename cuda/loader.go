package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// libSpec says where to look for one shared library. The CUDA driver, NVRTC
// and (later) cuFFT are each one libSpec and one symbol table, opened by
// openLibrary and bound by (*library).bind.
type libSpec struct {
	envVar  string   // a full path that replaces the search: NDCONV_LIBCUDA
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

// candidates lists the paths openLibrary gives to dlopen, in order: only
// the environment variable's path where it is set (an explicit choice is
// never second-guessed), else each soname as the loader finds it, then
// each soname in each directory of spec.dirs and of versioned CUDA
// installations (/usr/local/cuda-13.0/lib64, newest first).
func (spec libSpec) candidates(getenv func(string) string) []string {
	if p := getenv(spec.envVar); p != "" {
		return []string{p}
	}
	dirs := slices.Clone(spec.dirs)
	if versioned, _ := filepath.Glob("/usr/local/cuda-*/lib64"); len(versioned) > 0 {
		slices.Sort(versioned)
		slices.Reverse(versioned)
		dirs = append(dirs, versioned...)
	}
	paths := slices.Clone(spec.sonames)
	for _, dir := range dirs {
		for _, name := range spec.sonames {
			paths = append(paths, filepath.Join(dir, name))
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
		telling = first // the loader's own search, by soname
	}
	name := spec.sonames[0]
	if p := getenv(spec.envVar); p != "" {
		name = p + " (from " + spec.envVar + ")"
	}
	return nil, &LibraryError{Library: name, Tried: paths, Err: telling}
}

// bind resolves every symbol of table, failing on the first one missing:
// an entry point that is not there means a driver or toolkit too old for
// ndconv, and is better reported now than as a crash at first use.
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

// lookupEnv is os.Getenv, a variable so that tests can present another
// environment without touching the process's.
var lookupEnv = os.Getenv
