package opencl

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

func TestOpenCLSpec(t *testing.T) {
	if openclLibrary.EnvVar != "NDCONV_LIBOPENCL" {
		t.Errorf("override variable %q", openclLibrary.EnvVar)
	}
	if runtime.GOOS == "linux" && !slices.Equal(openclLibrary.Sonames, []string{"libOpenCL.so.1", "libOpenCL.so"}) {
		t.Errorf("sonames %v", openclLibrary.Sonames)
	}
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/opt/rocm/lib"} {
		if !slices.Contains(openclLibrary.Dirs, dir) {
			t.Errorf("%s is not searched", dir)
		}
	}
}

// TestLibraryErrors: dynlib's failures reach callers as *LibraryError,
// reading as opencl's, and an unbound entry point's result reads as not
// loaded. (The search, dlopen and binding are tested in internal/dynlib,
// the calls in internal/gpu.)
func TestLibraryErrors(t *testing.T) {
	if !dynlib.Supported {
		t.Skip("no run-time loading on " + runtime.GOOS)
	}
	fake := filepath.Join(t.TempDir(), "libOpenCL.so.1")
	if err := os.WriteFile(fake, []byte("this is not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NDCONV_LIBOPENCL", fake)
	_, err := dynlib.Open(openclLibrary, os.Getenv)
	var le *LibraryError
	if !errors.As(libraryError(err), &le) || !slices.Equal(le.Tried, []string{fake}) ||
		!strings.HasPrefix(le.Error(), "opencl: cannot load "+fake+" (from NDCONV_LIBOPENCL): ") {
		t.Errorf("a file that is no library: %v", libraryError(err))
	}
	// As loadLibrary would report it.
	u := &UnavailableError{Backend: "opencl", Reason: "no OpenCL library", Err: libraryError(err)}
	if !strings.HasPrefix(u.Error(), "opencl: unavailable: no OpenCL library: cannot load "+fake) {
		t.Errorf("unavailable error reads %q", u)
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
	if !errors.As(err, &le) || le.Symbol != "ndconv_no_such_symbol" || !strings.HasPrefix(err.Error(), "opencl: libc.so.6: missing symbol ndconv_no_such_symbol: ") {
		t.Errorf("missing symbol: %v", err)
	}
	// An unbound entry point returns a code that reads as "not loaded",
	// whichever wrapper calls it.
	fresh := &gpu.Library{Entries: new(entryPoints), Result: openclLib.Result, Unbound: openclLib.Unbound}
	fresh.Symbols()
	unbound := &fresh.Entries.(*entryPoints).clFinish
	err = unbound.Call(0)
	var e *Error
	if !errors.As(err, &e) || e.Code != codeNotLoaded || e.Name != codeNotLoadedName {
		t.Errorf("unbound call: %v", err)
	}
}

func TestGoString(t *testing.T) {
	if got := goString([]byte("PoCL\x00junk")); got != "PoCL" {
		t.Errorf("goString = %q", got)
	}
	if got := goString([]byte("no terminator")); got != "no terminator" {
		t.Errorf("goString = %q", got)
	}
	if goString(nil) != "" {
		t.Error("goString(nil) not empty")
	}
}

func TestModern(t *testing.T) {
	for s, want := range map[string]bool{
		"OpenCL 3.0 PoCL HSTR: pthread-x86_64": true,
		"OpenCL 2.1 AMD-APP (3614.0)":          true,
		"OpenCL 1.2 CUDA":                      false,
		"garbage":                              false,
	} {
		if modern(s) != want {
			t.Errorf("modern(%q) = %v", s, !want)
		}
	}
	if got := (Info{Platform: 1, Device: 2}).Spec(); got != "opencl:1:2" {
		t.Errorf("Spec = %q", got)
	}
}

// TestSymbolsResolve: where the ICD loader loads, every OpenCL 1.2 entry
// point ndconv uses is bound, and the table names no symbol twice.
func TestSymbolsResolve(t *testing.T) {
	required, optional := (&gpu.Library{Entries: new(entryPoints)}).Symbols()
	seen := map[string]bool{}
	for _, s := range append(required, optional...) {
		if seen[s.Name] {
			t.Errorf("%s bound twice", s.Name)
		}
		seen[s.Name] = true
	}
	if err := loadLibrary(); err != nil {
		t.Skipf("no OpenCL library: %v", err)
	}
	live := reflect.ValueOf(&cl).Elem()
	for _, s := range required {
		if !(*gpu.Entry)(live.FieldByName(s.Name).Addr().UnsafePointer()).Bound() {
			t.Errorf("%s is not bound", s.Name)
		}
	}
	if len(optional) != 1 || optional[0].Name != "clCreateCommandQueueWithProperties" {
		t.Errorf("optional symbols %v", optional)
	}
	t.Logf("%d entry points bound (clCreateCommandQueueWithProperties: %v)", len(required), cl.clCreateCommandQueueWithProperties.Bound())
}

// libraryError presents an error of dynlib.Open or Library.Bind as
// gpu.Library.Load does, as this package's *LibraryError.
func libraryError(err error) error { return gpu.LibraryErrorOf("opencl", err) }
