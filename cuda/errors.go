package cuda

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ndconv/ndconv/internal/gpu"
)

// Error is a failed CUDA driver, NVRTC or cuFFT call.
type Error = gpu.CallError

// The codes this package acts on.
const (
	codeInvalidValue       = 1
	codeOutOfMemory        = 2
	codeNotInitialized     = 3
	codeInvalidImage       = 200
	nvrtcCodeInvalidOption = 5
	nvrtcCodeCompilation   = 6
)

// isOutOfMemory reports whether err is, or wraps, the driver's (not
// NVRTC's) out-of-memory error.
func isOutOfMemory(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == codeOutOfMemory && strings.HasPrefix(e.Call, "cu")
}

// knownResults mirrors cuda.h's names and messages of common codes, for
// when the driver cannot be asked (it failed to load, or in cuInit).
var knownResults = map[int][2]string{
	codeInvalidValue:   {"CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	codeOutOfMemory:    {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	codeNotInitialized: {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	4:                  {"CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
	34:                 {"CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
	46:                 {"CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
	100:                {"CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	101:                {"CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	codeInvalidImage:   {"CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	201:                {"CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	209:                {"CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
	218:                {"CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
	222:                {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."},
	400:                {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	500:                {"CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	600:                {"CUDA_ERROR_NOT_READY", "device not ready"},
	700:                {"CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
	701:                {"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
	702:                {"CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
	712:                {"CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "part or all of the requested memory range is already mapped"},
	713:                {"CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "pointer does not correspond to a registered memory region"},
	719:                {"CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
	803:                {"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination"},
	804:                {"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility was attempted on non supported HW"},
	999:                {"CUDA_ERROR_UNKNOWN", "unknown error"},
}

// knownResult returns knownResults' entry, or a numbered placeholder.
func knownResult(code int) (name, message string) {
	if nm, ok := knownResults[code]; ok {
		return nm[0], nm[1]
	}
	return fmt.Sprintf("CUDA_ERROR_%d", code), ""
}

// nvrtcResultNames mirrors nvrtc.h's nvrtcResult (for when
// nvrtcGetErrorString cannot be asked), cufftResultNames cufft.h's.
var (
	nvrtcResultNames = []string{
		"NVRTC_SUCCESS", "NVRTC_ERROR_OUT_OF_MEMORY", "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
		"NVRTC_ERROR_INVALID_INPUT", "NVRTC_ERROR_INVALID_PROGRAM", "NVRTC_ERROR_INVALID_OPTION",
		"NVRTC_ERROR_COMPILATION", "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
		"NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION", "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
		"NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID", "NVRTC_ERROR_INTERNAL_ERROR",
	}
	cufftResultNames = []string{
		"CUFFT_SUCCESS", "CUFFT_INVALID_PLAN", "CUFFT_ALLOC_FAILED", "CUFFT_INVALID_TYPE",
		"CUFFT_INVALID_VALUE", "CUFFT_INTERNAL_ERROR", "CUFFT_EXEC_FAILED", "CUFFT_SETUP_FAILED",
		"CUFFT_INVALID_SIZE", "CUFFT_UNALIGNED_DATA", "CUFFT_INCOMPLETE_PARAMETER_LIST",
		"CUFFT_INVALID_DEVICE", "CUFFT_PARSE_ERROR", "CUFFT_NO_WORKSPACE", "CUFFT_NOT_IMPLEMENTED",
		"CUFFT_LICENSE_ERROR", "CUFFT_NOT_SUPPORTED",
	}
)

// codeName is names[code], or prefix and the number.
func codeName(names []string, prefix string, code int) string {
	if code < len(names) {
		return names[code]
	}
	return fmt.Sprintf("%s%d", prefix, code)
}

// The failure classes both GPU backends share, named here too.
type (
	UnavailableError = gpu.UnavailableError // the backend cannot be used here: callers fall back
	LibraryError     = gpu.LibraryError     // a library that does not open, or lacks a symbol
	UnsupportedError = gpu.UnsupportedError // a device or request this package does not support
	RangeError       = gpu.RangeError       // a copy or fill that does not fit its buffer
	CompileError     = gpu.BuildError       // an NVRTC compilation that failed, with its log and options
)

// ErrClosed is returned by operations on a Device after its last Close.
var ErrClosed = errors.New("cuda: device is closed")
