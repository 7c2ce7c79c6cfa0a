package opencl

import (
	"bufio"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestErrorFormat(t *testing.T) {
	e := &Error{Backend: "opencl", Call: "clBuildProgram", Code: -11, Name: "CL_BUILD_PROGRAM_FAILURE"}
	if got, want := e.Error(), "opencl: clBuildProgram: CL_BUILD_PROGRAM_FAILURE"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestCheck checks the cl_int → *Error conversion: named codes, the upper
// half of the register ignored, unknown codes numbered.
func TestCheck(t *testing.T) {
	if err := check("clFinish", 0); err != nil {
		t.Errorf("check(0) = %v", err)
	}
	if err := check("clFinish", 0xdeadbeef_00000000); err != nil {
		t.Errorf("check with garbage upper half = %v, want nil", err)
	}
	for code, name := range map[int]string{
		-11:   "CL_BUILD_PROGRAM_FAILURE",
		-5:    "CL_OUT_OF_RESOURCES",
		-54:   "CL_INVALID_WORK_GROUP_SIZE",
		-46:   "CL_INVALID_KERNEL_NAME",
		-1001: "CL_PLATFORM_NOT_FOUND_KHR",
		-72:   "CL_MAX_SIZE_RESTRICTION_EXCEEDED",
	} {
		r := uintptr(0xdeadbeef_00000000) | uintptr(uint32(int32(code)))
		err := check("clX", r)
		var e *Error
		if !errors.As(err, &e) || e.Code != code || e.Name != name || e.Call != "clX" {
			t.Errorf("check(%d) = %#v, want %s", code, err, name)
		}
	}
	if got := errorName(-1234); got != "CL_ERROR_-1234" {
		t.Errorf("unknown code reads %q", got)
	}
	if resultCode(notLoadedResult) != codeNotLoaded {
		t.Errorf("notLoadedResult is code %d", resultCode(notLoadedResult))
	}
}

func TestBuildErrorFormat(t *testing.T) {
	e := &BuildError{
		Backend: "opencl",
		Code:    "CL_BUILD_PROGRAM_FAILURE",
		Program: "direct",
		Device:  "pthread-cpu",
		Defines: []string{"KX=5", "BORDER=0"},
		Options: []string{"-DBORDER=0", "-DKX=5"},
		Log:     "<source>:3:1: error: use of undeclared identifier 'x'\n",
		Err:     &Error{Backend: "opencl", Call: "clBuildProgram", Code: -11, Name: "CL_BUILD_PROGRAM_FAILURE"},
	}
	msg := e.Error()
	for _, want := range []string{"direct", "pthread-cpu", "CL_BUILD_PROGRAM_FAILURE", "KX=5 BORDER=0", "-DBORDER=0 -DKX=5", "undeclared identifier 'x'"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	var inner *Error
	if !errors.As(error(e), &inner) || inner.Code != -11 {
		t.Error("BuildError does not unwrap to its *Error")
	}
}

func TestUnavailableAndLibraryErrors(t *testing.T) {
	lib := &LibraryError{Backend: "opencl", Library: "libOpenCL.so.1", Tried: []string{"libOpenCL.so.1", "libOpenCL.so"}, Err: errors.New("libOpenCL.so.1: cannot open shared object file: No such file or directory")}
	u := &UnavailableError{Backend: "opencl", Reason: "no OpenCL library", Err: lib}
	want := "opencl: unavailable: no OpenCL library: cannot load libOpenCL.so.1 (tried libOpenCL.so.1, libOpenCL.so): libOpenCL.so.1: cannot open shared object file: No such file or directory"
	if got := u.Error(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	var l *LibraryError
	if !errors.As(error(u), &l) || l != lib {
		t.Error("UnavailableError does not unwrap to its LibraryError")
	}
	sym := &LibraryError{Backend: "opencl", Library: "/x/libOpenCL.so.1", Symbol: "clBuildProgram", Err: errors.New("undefined symbol")}
	if got, want := sym.Error(), "opencl: /x/libOpenCL.so.1: missing symbol clBuildProgram: undefined symbol"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := (&UnavailableError{Backend: "opencl", Reason: "no OpenCL platform"}).Error(), "opencl: unavailable: no OpenCL platform"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := (&UnsupportedError{Backend: "opencl", What: "work-group size", Value: "512", Reason: "at most 256"}).Error(), "opencl: unsupported work-group size 512: at most 256"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestAvailableIsAnAnswer: wherever the tests run, Available answers nil
// or an *UnavailableError, and Devices and Open agree with it.
func TestAvailableIsAnAnswer(t *testing.T) {
	err := Available()
	if err == nil {
		infos, err := Devices()
		if err != nil || len(infos) == 0 {
			t.Fatalf("available, but Devices() = %v, %v", infos, err)
		}
		for _, i := range infos {
			t.Logf("%s: %s (%s), %s, %s, %d CUs, fp64 %v", i.Spec(), i.Name, i.Type, i.Version, i.DriverVersion, i.ComputeUnits, i.FP64)
		}
		return
	}
	var u *UnavailableError
	if !errors.As(err, &u) || !strings.HasPrefix(err.Error(), "opencl: unavailable: ") {
		t.Fatalf("Available() = %T %v, want *UnavailableError", err, err)
	}
	t.Logf("Available: %v", err)
	if _, err := Open(0, 0); err == nil {
		t.Error("Open succeeded where OpenCL is unavailable")
	}
}

// TestConstantsMatchHeader compares every constant mirrored from cl.h
// with the header, where it is installed (opencl-c-headers on Debian).
func TestConstantsMatchHeader(t *testing.T) {
	defines := map[string]int64{}
	for _, path := range []string{"/usr/include/CL/cl.h", "/usr/include/CL/cl_ext.h"} {
		f, err := os.Open(path)
		if err != nil {
			t.Skipf("no OpenCL headers: %v", err)
		}
		re := regexp.MustCompile(`^#define\s+(CL_\w+)\s+\(?\s*(-?(?:0x[0-9A-Fa-f]+|\d+))\s*\)?\s*$`)
		shift := regexp.MustCompile(`^#define\s+(CL_\w+)\s+\(\s*1\s*<<\s*(\d+)\s*\)\s*$`)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(strings.SplitN(sc.Text(), "/*", 2)[0])
			if m := re.FindStringSubmatch(line); m != nil {
				v, err := strconv.ParseInt(m[2], 0, 64)
				if err == nil {
					defines[m[1]] = v
				}
			} else if m := shift.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[2])
				defines[m[1]] = 1 << n
			}
		}
		f.Close()
	}
	mirrored := map[string]int64{
		"CL_FALSE":                           clFalse,
		"CL_TRUE":                            clTrue,
		"CL_PLATFORM_VERSION":                clPlatformVersion,
		"CL_PLATFORM_NAME":                   clPlatformName,
		"CL_DEVICE_TYPE_CPU":                 clDeviceTypeCPU,
		"CL_DEVICE_TYPE_ALL":                 clDeviceTypeAll,
		"CL_DEVICE_TYPE":                     clDeviceType,
		"CL_DEVICE_MAX_COMPUTE_UNITS":        clDeviceMaxComputeUnits,
		"CL_DEVICE_MAX_WORK_GROUP_SIZE":      clDeviceMaxWorkGroupSize,
		"CL_DEVICE_MAX_WORK_ITEM_SIZES":      clDeviceMaxWorkItemSizes,
		"CL_DEVICE_MAX_MEM_ALLOC_SIZE":       clDeviceMaxMemAllocSize,
		"CL_DEVICE_GLOBAL_MEM_SIZE":          clDeviceGlobalMemSize,
		"CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE": clDeviceMaxConstantBufferSize,
		"CL_DEVICE_LOCAL_MEM_SIZE":           clDeviceLocalMemSize,
		"CL_DEVICE_AVAILABLE":                clDeviceAvailable,
		"CL_DEVICE_COMPILER_AVAILABLE":       clDeviceCompilerAvailable,
		"CL_DEVICE_NAME":                     clDeviceName,
		"CL_DRIVER_VERSION":                  clDriverVersion,
		"CL_DEVICE_VERSION":                  clDeviceVersion,
		"CL_DEVICE_EXTENSIONS":               clDeviceExtensions,
		"CL_DEVICE_DOUBLE_FP_CONFIG":         clDeviceDoubleFPConfig,
		"CL_CONTEXT_PLATFORM":                clContextPlatform,
		"CL_QUEUE_PROPERTIES":                clQueueProperties,
		"CL_QUEUE_PROFILING_ENABLE":          clQueueProfilingEnable,
		"CL_MEM_READ_WRITE":                  clMemReadWrite,
		"CL_MEM_ALLOC_HOST_PTR":              clMemAllocHostPtr,
		"CL_PROGRAM_BINARY_SIZES":            clProgramBinarySizes,
		"CL_PROGRAM_BINARIES":                clProgramBinaries,
		"CL_PROGRAM_BUILD_LOG":               clProgramBuildLog,
		"CL_KERNEL_WORK_GROUP_SIZE":          clKernelWorkGroupSize,
		"CL_PROFILING_COMMAND_END":           clProfilingCommandEnd,
	}
	for name, v := range mirrored {
		h, ok := defines[name]
		if !ok {
			t.Errorf("%s: not found in the header", name)
		} else if h != v {
			t.Errorf("%s = %#x here, %#x in the header", name, v, h)
		}
	}
	// Every error name mirrored, against the header.
	for code, name := range errorNames {
		if code == codeNotLoaded {
			continue
		}
		if h, ok := defines[name]; !ok {
			t.Errorf("%s: not found in the header", name)
		} else if h != int64(code) {
			t.Errorf("%s = %d here, %d in the header", name, code, h)
		}
	}
	t.Logf("%d constants and %d error codes checked against %d header defines", len(mirrored), len(errorNames)-1, len(defines))
}
