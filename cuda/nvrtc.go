package cuda

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/ndconv/ndconv/internal/dynlib"
	"github.com/ndconv/ndconv/internal/gpu"
)

// nv holds NVRTC's entry points, each the C function in its comment.
var nv struct {
	nvrtcVersion           entry // nvrtcResult nvrtcVersion(int *major, int *minor)
	nvrtcGetErrorString    entry // const char *nvrtcGetErrorString(nvrtcResult result)
	nvrtcCreateProgram     entry // nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name, int numHeaders, const char * const *headers, const char * const *includeNames)
	nvrtcDestroyProgram    entry // nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog)
	nvrtcCompileProgram    entry // nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char * const *options)
	nvrtcGetProgramLogSize entry // nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t *logSizeRet)
	nvrtcGetProgramLog     entry // nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char *log)
	nvrtcGetCUBINSize      entry // nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t *cubinSizeRet)
	nvrtcGetCUBIN          entry // nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char *cubin)
}

// nvrtcLib prefers CUDA 13's NVRTC, then 12's.
var nvrtcLib = gpu.Library{
	Backend:   "cuda",
	Spec:      cudaSpec("NDCONV_LIBNVRTC", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"),
	Entries:   &nv,
	NoLibrary: "no NVRTC library",
	NoSymbol:  "NVRTC library lacks an entry point (older than CUDA 11.1?)",
	Result:    resultOf(describeNVRTC),
	Unbound:   codeNotInitialized,
	Init:      initNVRTC,
}

var nvrtcVer Version

func initNVRTC(path string) error {
	var major, minor int32
	if err := nv.nvrtcVersion.Call(uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor))); err != nil {
		return initFailed("nvrtcVersion", err)
	}
	nvrtcVer = Version{int(major), int(minor)}
	preloadNVRTCBuiltins(path)
	return nil
}

// preloadNVRTCBuiltins loads libnvrtc-builtins from NVRTC's directory:
// NVRTC opens it by soname, which fails where NVRTC was found by full
// path. Best effort: a failure shows up in the first compile's error.
func preloadNVRTCBuiltins(nvrtcPath string) {
	if !filepath.IsAbs(nvrtcPath) {
		return
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(nvrtcPath), "libnvrtc-builtins.so.*"))
	slices.Sort(matches)
	for i := len(matches) - 1; i >= 0; i-- { // the longest, most specific version
		if _, err := dynlib.OpenPath(matches[i]); err == nil {
			return
		}
	}
}

// nvrtcVersion is the loaded NVRTC's version.
func nvrtcVersion() (Version, error) {
	if err := nvrtcLib.Load(); err != nil {
		return Version{}, err
	}
	return nvrtcVer, nil
}

// describeNVRTC names an nvrtcResult (nvrtcGetErrorString, else nvrtc.h).
func describeNVRTC(code int) (string, string) {
	if e := &nv.nvrtcGetErrorString; e.Bound() {
		if p := e.Raw(uintptr(code)); p != 0 {
			return goString(*(**byte)(unsafe.Pointer(&p))), ""
		}
	}
	return codeName(nvrtcResultNames, "NVRTC_ERROR_", code), ""
}

// compile compiles CUDA C++ source with NVRTC and returns the CUBIN.
// options must name a real architecture (sm_XY, as compileOptions does):
// a virtual one yields no CUBIN and is refused. name is the program's name
// in NVRTC's log. A failed compilation is a *CompileError.
func compile(source, name string, options []string) ([]byte, error) {
	if err := nvrtcLib.Load(); err != nil {
		return nil, err
	}
	src, cname := dynlib.CString(source), dynlib.CString(name)
	var prog uintptr
	if err := nv.nvrtcCreateProgram.Call(uintptr(unsafe.Pointer(&prog)),
		uintptr(unsafe.Pointer(&src[0])), uintptr(unsafe.Pointer(&cname[0])), 0, 0, 0); err != nil {
		return nil, err
	}
	defer func() { nv.nvrtcDestroyProgram.Call(uintptr(unsafe.Pointer(&prog))) }()

	// options is a Go array of pointers to Go memory passed to C: each
	// string is pinned for the call.
	var pinner runtime.Pinner
	defer pinner.Unpin()
	cOpts := make([]*byte, len(options)+1)
	for i, o := range options {
		b := dynlib.CString(o)
		pinner.Pin(&b[0])
		cOpts[i] = &b[0]
	}
	if err := nv.nvrtcCompileProgram.Call(prog, uintptr(len(options)), uintptr(unsafe.Pointer(&cOpts[0]))); err != nil {
		e := err.(*Error)
		if e.Code == nvrtcCodeCompilation || e.Code == nvrtcCodeInvalidOption { // the log says which
			return nil, &CompileError{Backend: "cuda", Program: name, Options: slices.Clone(options), Log: programLog(prog), Code: e.Name, Err: e}
		}
		return nil, err
	}

	var n uintptr
	if err := nv.nvrtcGetCUBINSize.Call(prog, uintptr(unsafe.Pointer(&n))); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, &UnsupportedError{Backend: "cuda", What: "compile options", Value: strings.Join(options, " "), Reason: "NVRTC produced no CUBIN (a virtual compute_XY architecture?)"}
	}
	cubin := make([]byte, n)
	if err := nv.nvrtcGetCUBIN.Call(prog, uintptr(unsafe.Pointer(&cubin[0]))); err != nil {
		return nil, err
	}
	return cubin, nil
}

// programLog returns NVRTC's log for prog, or "" if it cannot be had.
func programLog(prog uintptr) string {
	var n uintptr
	if nv.nvrtcGetProgramLogSize.Call(prog, uintptr(unsafe.Pointer(&n))) != nil || n <= 1 {
		return ""
	}
	buf := make([]byte, n)
	if nv.nvrtcGetProgramLog.Call(prog, uintptr(unsafe.Pointer(&buf[0]))) != nil {
		return ""
	}
	return strings.TrimRight(string(buf), "\x00")
}
