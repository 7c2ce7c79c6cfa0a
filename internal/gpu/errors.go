package gpu

import (
	"fmt"
	"strings"

	"github.com/ndconv/ndconv/internal/dynlib"
)

// The failure classes both GPU backends report, which cuda and opencl
// export as type aliases. Backend ("cuda", "opencl") begins the message.

// UnavailableError says why a GPU backend cannot be used on this machine
// (no library, no device, a failing initialisation): an ordinary answer;
// callers fall back to another backend.
type UnavailableError struct {
	Backend string // "cuda", "opencl"
	Reason  string // "no CUDA driver library", "no OpenCL platform", …
	Err     error  // the underlying failure, if any
}

// Error reads "cuda: unavailable: ", the reason, then the underlying
// error without the backend's prefix.
func (e *UnavailableError) Error() string {
	s := e.Backend + ": unavailable: " + e.Reason
	if e.Err != nil {
		s += ": " + strings.TrimPrefix(e.Err.Error(), e.Backend+": ")
	}
	return s
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// LibraryError is a shared library that could not be opened, or lacks a
// symbol ndconv needs: a backend's dynlib.Error.
type LibraryError struct {
	Backend string   // "cuda", "opencl"
	Library string   // what was looked for: "libcuda.so.1", or the path opened
	Tried   []string // every path given to dlopen, in order
	Symbol  string   // the missing symbol, if the library opened
	Err     error    // dlopen's or dlsym's message
}

func (e *LibraryError) Error() string {
	d := dynlib.Error{Library: e.Library, Tried: e.Tried, Symbol: e.Symbol, Err: e.Err}
	return e.Backend + ": " + d.Error()
}

func (e *LibraryError) Unwrap() error { return e.Err }

// LibraryErrorOf presents a *dynlib.Error as backend's *LibraryError;
// other errors, nil among them, pass unchanged.
func LibraryErrorOf(backend string, err error) error {
	if e, ok := err.(*dynlib.Error); ok {
		return &LibraryError{Backend: backend, Library: e.Library, Tried: e.Tried, Symbol: e.Symbol, Err: e.Err}
	}
	return err
}

// CallError is a failed call into a binding's library: the entry point as
// the C API documents it (cuMemAlloc, not cuMemAlloc_v2), the result code,
// and the library's name and message for that code.
type CallError struct {
	Backend string // "cuda", "opencl"
	Call    string
	Code    int
	Name    string // "CUDA_ERROR_OUT_OF_MEMORY", "CL_BUILD_PROGRAM_FAILURE"
	Message string // where the library gives one
}

func (e *CallError) Error() string {
	s := e.Backend + ": " + e.Call + ": " + e.Name
	if e.Message != "" && e.Message != e.Name {
		s += " (" + e.Message + ")"
	}
	return s
}

// UnsupportedError is a device or request a backend does not support (an
// old GPU, float64 without cl_khr_fp64, a work-group too large).
type UnsupportedError struct {
	Backend string // "cuda", "opencl"
	What    string // "compute capability", "work-group size", …
	Value   string // omitted from the message where empty
	Reason  string
}

func (e *UnsupportedError) Error() string {
	s := e.Backend + ": unsupported " + e.What
	if e.Value != "" {
		s += " " + e.Value
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// OutOfMemoryError is a problem that cannot be cut into pieces that fit
// the device's memory budget.
type OutOfMemoryError struct {
	Backend string
	Msg     string
}

func (e *OutOfMemoryError) Error() string { return e.Backend + ": out of memory: " + e.Msg }

// RangeError is a copy, memset or view that does not fit its buffer.
type RangeError struct {
	Backend        string // "cuda", "opencl"
	Op             string // "CopyFromHost", "Memset", "Write", …
	Offset, Length int
	Size           int // of the buffer
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("%s: %s: %d bytes at offset %d do not fit a %d-byte buffer", e.Backend, e.Op, e.Length, e.Offset, e.Size)
}

// CheckRange refuses, with a *RangeError, n bytes at off that do not lie
// inside buf.
func CheckRange(backend, op string, buf Buffer, off, n int) error {
	if size := buf.Size(); off < 0 || n < 0 || off > size || n > size-off {
		return &RangeError{Backend: backend, Op: op, Offset: off, Length: n, Size: size}
	}
	return nil
}

// BuildError is a kernel source that failed to build, with what
// reproduces the failure.
type BuildError struct {
	Backend string   // "cuda", "opencl"
	Program string   // the kernel family ("direct") or the name given to the compiler
	Device  string   // the device built for, where the build names one
	Defines []string // as given, without -D (where the binding reports them apart)
	Options []string // as passed to the compiler
	Log     string   // the compiler's log
	Code    string   // the compiler's result by name: "NVRTC_ERROR_COMPILATION", "CL_BUILD_PROGRAM_FAILURE"
	Err     error    // the failed call's error
}

func (e *BuildError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: building %s", e.Backend, e.Program)
	if e.Device != "" {
		fmt.Fprintf(&b, " for %s", e.Device)
	}
	fmt.Fprintf(&b, " failed: %s", e.Code)
	if len(e.Defines) > 0 {
		fmt.Fprintf(&b, "\ndefines: %s", strings.Join(e.Defines, " "))
	}
	fmt.Fprintf(&b, "\noptions: %s", strings.Join(e.Options, " "))
	if log := strings.TrimSpace(e.Log); log != "" {
		b.WriteString("\nbuild log:\n")
		b.WriteString(log)
	}
	return b.String()
}

func (e *BuildError) Unwrap() error { return e.Err }

// Value is v as an interface value I, or nil with err: a typed nil
// pointer must not become a non-nil interface.
func Value[I any, T any](v T, err error) (I, error) {
	if err != nil {
		var zero I
		return zero, err
	}
	return any(v).(I), nil
}
