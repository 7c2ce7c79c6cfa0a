package cuda

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestErrorFormat(t *testing.T) {
	e := &Error{Backend: "cuda", Call: "cuMemAlloc", Code: codeOutOfMemory, Name: "CUDA_ERROR_OUT_OF_MEMORY", Message: "out of memory"}
	if got, want := e.Error(), "cuda: cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	// NVRTC reports a name only.
	n := &Error{Backend: "cuda", Call: "nvrtcCreateProgram", Code: 3, Name: "NVRTC_ERROR_INVALID_INPUT"}
	if got, want := n.Error(), "cuda: nvrtcCreateProgram: NVRTC_ERROR_INVALID_INPUT"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestCheck checks the CUresult → *Error conversion (gpu.Library.Result), with the driver's
// strings where it is loaded and cuda.h's where it is not: both read the
// same for the codes mirrored.
func TestCheck(t *testing.T) {
	if err := driverLib.Result("cuInit", 0); err != nil {
		t.Errorf("result(0) = %v, want nil", err)
	}
	// Only the low 32 bits are the CUresult: garbage above must not count.
	if err := driverLib.Result("cuInit", 0xdeadbeef_00000000); err != nil {
		t.Errorf("result with garbage upper half = %v, want nil", err)
	}
	err := driverLib.Result("cuMemAlloc", 0xdeadbeef_00000002)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("result(2) = %T %v, want *Error", err, err)
	}
	if e.Code != codeOutOfMemory || e.Call != "cuMemAlloc" || e.Name != "CUDA_ERROR_OUT_OF_MEMORY" || e.Message != "out of memory" {
		t.Errorf("result(2) = %+v", e)
	}
	if !isOutOfMemory(fmt.Errorf("chunk 3: %w", err)) {
		t.Error("isOutOfMemory does not see through wrapping")
	}
	if isOutOfMemory(driverLib.Result("cuMemAlloc", codeInvalidValue)) || isOutOfMemory(nil) {
		t.Error("isOutOfMemory true for another error")
	}
	// NVRTC's out-of-memory is code 1, and not a device out-of-memory.
	if isOutOfMemory(&Error{Backend: "cuda", Call: "nvrtcCompileProgram", Code: 2}) {
		t.Error("isOutOfMemory true for an NVRTC code")
	}
	// An unknown code still gets a readable name.
	if err := driverLib.Result("cuX", 12345); !strings.Contains(err.Error(), "12345") {
		t.Errorf("unknown code reads %q", err)
	}
}

func TestNVRTCResult(t *testing.T) {
	if err := nvrtcLib.Result("nvrtcVersion", 0); err != nil {
		t.Errorf("nvrtc result(0) = %v", err)
	}
	err := nvrtcLib.Result("nvrtcCompileProgram", 0xffffffff_00000006)
	var e *Error
	if !errors.As(err, &e) || e.Code != nvrtcCodeCompilation || e.Name != "NVRTC_ERROR_COMPILATION" {
		t.Errorf("nvrtc result(6) = %#v", err)
	}
}

func TestCompileErrorFormat(t *testing.T) {
	e := &CompileError{
		Backend: "cuda",
		Code:    "NVRTC_ERROR_COMPILATION",
		Program: "conv.cu",
		Options: []string{"--gpu-architecture=sm_90", "-DKW=5"},
		Log:     "conv.cu(3): error: identifier \"x\" is undefined\n\n1 error detected\n",
		Err:     &Error{Backend: "cuda", Call: "nvrtcCompileProgram", Code: nvrtcCodeCompilation, Name: "NVRTC_ERROR_COMPILATION"},
	}
	msg := e.Error()
	for _, want := range []string{"conv.cu", "NVRTC_ERROR_COMPILATION", "-DKW=5", "--gpu-architecture=sm_90", `identifier "x" is undefined`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	var inner *Error
	if !errors.As(error(e), &inner) || inner.Code != nvrtcCodeCompilation {
		t.Error("CompileError does not unwrap to its *Error")
	}
}

func TestUnavailableAndLibraryErrors(t *testing.T) {
	lib := &LibraryError{Backend: "cuda", Library: "libcuda.so.1", Tried: []string{"libcuda.so.1", "/usr/local/cuda/lib64/libcuda.so.1"}, Err: errors.New("libcuda.so.1: cannot open shared object file: No such file or directory")}
	u := &UnavailableError{Backend: "cuda", Reason: "no CUDA driver library", Err: lib}
	want := "cuda: unavailable: no CUDA driver library: cannot load libcuda.so.1 (tried libcuda.so.1, /usr/local/cuda/lib64/libcuda.so.1): libcuda.so.1: cannot open shared object file: No such file or directory"
	if got := u.Error(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	var l *LibraryError
	if !errors.As(error(u), &l) || l != lib {
		t.Error("UnavailableError does not unwrap to its LibraryError")
	}
	sym := &LibraryError{Backend: "cuda", Library: "/x/libcuda.so.1", Symbol: "cuMemAlloc_v2", Err: errors.New("undefined symbol")}
	if got, want := sym.Error(), "cuda: /x/libcuda.so.1: missing symbol cuMemAlloc_v2: undefined symbol"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := (&UnavailableError{Backend: "cuda", Reason: "no CUDA device"}).Error(), "cuda: unavailable: no CUDA device"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestAvailableIsAnAnswer: wherever the tests run, Available answers nil
// or an *UnavailableError, and Devices and Open agree with it.
func TestAvailableIsAnAnswer(t *testing.T) {
	err := Available()
	if err == nil {
		t.Log("CUDA is available")
		return
	}
	var u *UnavailableError
	if !errors.As(err, &u) || !strings.HasPrefix(err.Error(), "cuda: unavailable: ") {
		t.Fatalf("Available() = %T %v, want *UnavailableError", err, err)
	}
	t.Logf("Available: %v", err)
	if driverErr := driverLib.Load(); driverErr != nil {
		if _, err := Open(0); err == nil {
			t.Error("Open succeeded without a driver")
		}
		if infos, err := Devices(); err == nil || infos != nil {
			t.Errorf("Devices() = %v, %v without a driver", infos, err)
		}
	}
}
