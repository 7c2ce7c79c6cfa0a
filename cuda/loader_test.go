package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/dynlib"
	"github.com/ndconv/ndconv/internal/gpu"
)

func TestDriverAndNVRTCSpecs(t *testing.T) {
	if spec := driverLib.Spec; spec.EnvVar != "NDCONV_LIBCUDA" || spec.Sonames[0] != "libcuda.so.1" {
		t.Errorf("driver spec %+v", spec)
	}
	if spec := nvrtcLib.Spec; spec.EnvVar != "NDCONV_LIBNVRTC" || !slices.Equal(spec.Sonames[:2], []string{"libnvrtc.so.13", "libnvrtc.so.12"}) {
		t.Errorf("nvrtc spec %+v", spec)
	}
	if spec := cufftLib.Spec; spec.EnvVar != "NDCONV_LIBCUFFT" || !slices.Equal(spec.Sonames[:2], []string{"libcufft.so.12", "libcufft.so.11"}) {
		t.Errorf("cuFFT spec %+v", spec)
	}
	for _, spec := range []dynlib.Spec{driverLib.Spec, nvrtcLib.Spec, cufftLib.Spec} {
		if !slices.Equal(spec.Globs, []string{"/usr/local/cuda-*/lib64"}) {
			t.Errorf("%s: versioned installations are not searched: %v", spec.EnvVar, spec.Globs)
		}
	}
	for _, dir := range []string{"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/lib/x86_64-linux-gnu", "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib"} {
		if !slices.Contains(cudaLibraryDirs, dir) {
			t.Errorf("%s is not searched", dir)
		}
	}
}

// TestLibraryErrors: dynlib's failures reach callers as *LibraryError,
// reading as cuda's. (The search, dlopen and binding are tested in
// internal/dynlib, the calls in internal/gpu.)
func TestLibraryErrors(t *testing.T) {
	if !dynlib.Supported {
		t.Skip("no run-time loading on " + runtime.GOOS)
	}
	fake := filepath.Join(t.TempDir(), "libcuda.so.1")
	if err := os.WriteFile(fake, []byte("this is not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NDCONV_LIBCUDA", fake)
	_, err := dynlib.Open(driverLib.Spec, os.Getenv)
	var le *LibraryError
	if !errors.As(libraryError(err), &le) || !slices.Equal(le.Tried, []string{fake}) ||
		!strings.HasPrefix(le.Error(), "cuda: cannot load "+fake+" (from NDCONV_LIBCUDA): ") {
		t.Errorf("a file that is no library: %v", libraryError(err))
	}
	if libraryError(nil) != nil {
		t.Error("libraryError(nil) is not nil")
	}
	if runtime.GOOS != "linux" {
		return // the rest needs glibc
	}
	lib, err := dynlib.Open(dynlib.Spec{EnvVar: "NDCONV_TEST_LIB", Sonames: []string{"libc.so.6"}}, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	var strlen, missing uintptr
	err = libraryError(lib.Bind([]dynlib.Symbol{{"strlen", &strlen}, {"ndconv_no_such_symbol", &missing}}))
	if !errors.As(err, &le) || le.Symbol != "ndconv_no_such_symbol" || !strings.HasPrefix(err.Error(), "cuda: libc.so.6: missing symbol ndconv_no_such_symbol: ") {
		t.Errorf("missing symbol: %v", err)
	}
}

func TestGoString(t *testing.T) {
	b := dynlib.CString("sm_90")
	if got := goString(&b[0]); got != "sm_90" {
		t.Errorf("goString = %q", got)
	}
	if goString(nil) != "" {
		t.Error("goString(nil) not empty")
	}
}

// libraryError presents an error of dynlib.Open or Library.Bind as
// gpu.Library.Load does, as this package's *LibraryError.
func libraryError(err error) error { return gpu.LibraryErrorOf("cuda", err) }

// TestSymbols: every entry point of the three tables is bound by the
// name of its field, or by its sym tag's versioned name (the C prototype
// in its comment names the same symbol), each once, to its own field, and
// its errors name the C function as the API documents it. (Fresh tables
// of the same types: the package's own may be in use.)
func TestSymbols(t *testing.T) {
	names, addrs := map[string]bool{}, map[*uintptr]bool{}
	for _, lib := range []*gpu.Library{&driverLib, &nvrtcLib, &cufftLib} {
		fresh := &gpu.Library{Entries: reflect.New(reflect.TypeOf(lib.Entries).Elem()).Interface(), Result: lib.Result, Unbound: lib.Unbound}
		required, optional := fresh.Symbols()
		if len(optional) != 0 {
			t.Errorf("optional symbols %v", optional)
		}
		for _, s := range required {
			if names[s.Name] || addrs[s.Addr] {
				t.Errorf("%s bound twice", s.Name)
			}
			names[s.Name], addrs[s.Addr] = true, true
		}
		if lib == &driverLib {
			// Unbound (its library did not load), an entry point fails
			// cleanly, named as the API documents it.
			memAlloc := (*entry)(reflect.ValueOf(fresh.Entries).Elem().FieldByName("cuMemAlloc").Addr().UnsafePointer())
			var e *Error
			if err := memAlloc.Call(0); !errors.As(err, &e) || e.Code != codeNotInitialized || e.Call != "cuMemAlloc" || memAlloc.Bound() {
				t.Errorf("an unbound cuMemAlloc: %v", err)
			}
		}
	}
	for _, want := range []string{"cuInit", "cuMemAlloc_v2", "cuMemFree_v2", "cuStreamDestroy_v2", "cuLaunchKernel", "nvrtcGetCUBIN", "cufftExecC2C"} {
		if !names[want] {
			t.Errorf("%s is not bound", want)
		}
	}
	for _, plain := range []string{"cuMemAlloc", "cuDeviceTotalMem", "cuMemHostRegister", "cuEventDestroy"} {
		if names[plain] {
			t.Errorf("%s is bound by its legacy name", plain)
		}
	}
}
