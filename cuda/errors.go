package cuda

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ndconv/ndconv/internal/gpu"
)

// Error is a failed CUDA driver or NVRTC call. Call names the entry point
// as the C API documents it (cuMemAlloc, not cuMemAlloc_v2); Code is the
// CUresult or nvrtcResult; Name and Message are what the library reports
// for the code (cuGetErrorName, cuGetErrorString, nvrtcGetErrorString).
type Error struct {
	Call    string
	Code    int
	Name    string
	Message string
}

func (e *Error) Error() string {
	s := "cuda: " + e.Call + ": " + e.Name
	if e.Message != "" && e.Message != e.Name {
		s += " (" + e.Message + ")"
	}
	return s
}

// CUresult codes that callers act on. The rest are reported by name.
const (
	CodeInvalidValue       = 1
	CodeOutOfMemory        = 2
	CodeNotInitialized     = 3
	CodeNoDevice           = 100
	CodeInvalidDevice      = 101
	CodeInvalidImage       = 200
	CodeInvalidContext     = 201
	CodeNoBinaryForGPU     = 209
	CodeInvalidHandle      = 400
	CodeNotFound           = 500
	CodeNotReady           = 600
	CodeIllegalAddress     = 700
	CodeLaunchOutOfRes     = 701
	CodeLaunchFailed       = 719
	CodeUnknown            = 999
	nvrtcCodeInvalidOption = 5
	nvrtcCodeCompilation   = 6
)

// CUresult codes of registering host memory (cuMemHostRegister), which a
// failure answers by copying through staging.
const (
	CodeHostMemoryAlreadyRegistered = 712
	CodeHostMemoryNotRegistered     = 713
)

// IsOutOfMemory reports whether err is, or wraps, a CUDA out-of-memory
// error, the one failure a caller can answer by working in smaller pieces.
func IsOutOfMemory(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeOutOfMemory && strings.HasPrefix(e.Call, "cu")
}

// knownResults mirrors cuda.h's names and cuGetErrorString's messages for
// the codes most often seen, so that an error reads well even when the
// driver cannot be asked (it failed to load, or the call was cuInit).
var knownResults = map[int][2]string{
	CodeInvalidValue:   {"CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	CodeOutOfMemory:    {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	CodeNotInitialized: {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	4:                  {"CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
	34:                 {"CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
	46:                 {"CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
	CodeNoDevice:       {"CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	CodeInvalidDevice:  {"CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	CodeInvalidImage:   {"CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	CodeInvalidContext: {"CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	CodeNoBinaryForGPU: {"CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
	218:                {"CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
	222:                {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."},
	CodeInvalidHandle:  {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	CodeNotFound:       {"CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	CodeNotReady:       {"CUDA_ERROR_NOT_READY", "device not ready"},
	CodeIllegalAddress: {"CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
	CodeLaunchOutOfRes: {"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
	702:                {"CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
	CodeLaunchFailed:   {"CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
	803:                {"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination"},
	804:                {"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility was attempted on non supported HW"},
	CodeUnknown:        {"CUDA_ERROR_UNKNOWN", "unknown error"},

	CodeHostMemoryAlreadyRegistered: {"CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "part or all of the requested memory range is already mapped"},
	CodeHostMemoryNotRegistered:     {"CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "pointer does not correspond to a registered memory region"},
}

// nvrtcResultNames mirrors nvrtc.h's nvrtcResult, for when
// nvrtcGetErrorString cannot be asked.
var nvrtcResultNames = []string{
	"NVRTC_SUCCESS",
	"NVRTC_ERROR_OUT_OF_MEMORY",
	"NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
	"NVRTC_ERROR_INVALID_INPUT",
	"NVRTC_ERROR_INVALID_PROGRAM",
	"NVRTC_ERROR_INVALID_OPTION",
	"NVRTC_ERROR_COMPILATION",
	"NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	"NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
	"NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	"NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
	"NVRTC_ERROR_INTERNAL_ERROR",
}

// knownResult returns the name and message cuda.h gives code, or a
// numbered placeholder.
func knownResult(code int) (name, message string) {
	if nm, ok := knownResults[code]; ok {
		return nm[0], nm[1]
	}
	return fmt.Sprintf("CUDA_ERROR_%d", code), ""
}

// The failure classes both GPU backends share are one type each in
// internal/gpu, with the backend named in a field ("cuda") that begins the
// message; this package's names for them are aliases, so errors.As with,
// say, a *cuda.UnavailableError matches them.
type (
	// UnavailableError says why the CUDA backend cannot be used on this
	// machine. It is an ordinary answer, not a malfunction: callers fall
	// back to another backend.
	UnavailableError = gpu.UnavailableError
	// LibraryError is a shared library that could not be opened, or one
	// that lacks a symbol ndconv needs (see gpu.OpenLibrary).
	LibraryError = gpu.LibraryError
	// UnsupportedError is a device or request this package does not
	// support.
	UnsupportedError = gpu.UnsupportedError
	// RangeError is a copy, memset or view that does not fit its buffer.
	RangeError = gpu.RangeError
	// CompileError is an NVRTC compilation that failed, with its log and
	// every option.
	CompileError = gpu.BuildError
)

// ErrClosed is returned by operations on a Device after its last Close.
var ErrClosed = errors.New("cuda: device is closed")
