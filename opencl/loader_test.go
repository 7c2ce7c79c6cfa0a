package opencl

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestCandidatesOrder(t *testing.T) {
	spec := libSpec{envVar: "NDCONV_TEST_LIB", sonames: []string{"liba.so.1", "liba.so"}, dirs: []string{"/d1", "/d2"}}
	got := spec.candidates(envOf(nil))
	want := []string{"liba.so.1", "liba.so", "/d1/liba.so.1", "/d1/liba.so", "/d2/liba.so.1", "/d2/liba.so"}
	if !slices.Equal(got, want) {
		t.Errorf("candidates = %v, want %v", got, want)
	}
	// An explicit path is the only candidate: never second-guessed.
	if got := spec.candidates(envOf(map[string]string{"NDCONV_TEST_LIB": "/opt/x/liba.so"})); !slices.Equal(got, []string{"/opt/x/liba.so"}) {
		t.Errorf("with the override: %v", got)
	}
}

func TestOpenCLSpec(t *testing.T) {
	if openclLibrary.envVar != "NDCONV_LIBOPENCL" {
		t.Errorf("override variable %q", openclLibrary.envVar)
	}
	if runtime.GOOS == "linux" && !slices.Equal(openclLibrary.sonames, []string{"libOpenCL.so.1", "libOpenCL.so"}) {
		t.Errorf("sonames %v", openclLibrary.sonames)
	}
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/opt/rocm/lib"} {
		if !slices.Contains(openclLibrary.dirs, dir) {
			t.Errorf("%s is not searched", dir)
		}
	}
}

// TestOpenNotALibrary: an override naming a file that is no library is a
// clean *LibraryError naming the file and the variable.
func TestOpenNotALibrary(t *testing.T) {
	if !dynamicLoading {
		t.Skip("no run-time loading on " + runtime.GOOS)
	}
	fake := filepath.Join(t.TempDir(), "libOpenCL.so.1")
	if err := os.WriteFile(fake, []byte("this is not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lib, err := openLibrary(openclLibrary, envOf(map[string]string{"NDCONV_LIBOPENCL": fake}))
	if err == nil {
		t.Fatalf("opened %v", lib)
	}
	var le *LibraryError
	if !errors.As(err, &le) {
		t.Fatalf("error %T %v, want *LibraryError", err, err)
	}
	if !slices.Equal(le.Tried, []string{fake}) {
		t.Errorf("tried %v, want only %s", le.Tried, fake)
	}
	for _, want := range []string{fake, "NDCONV_LIBOPENCL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	// As loadLibrary would report it.
	u := &UnavailableError{Reason: "no OpenCL library", Err: err}
	if !strings.HasPrefix(u.Error(), "opencl: unavailable: no OpenCL library: cannot load "+fake) {
		t.Errorf("unavailable error reads %q", u)
	}
}

func TestOpenMissing(t *testing.T) {
	if !dynamicLoading {
		t.Skip("no run-time loading on " + runtime.GOOS)
	}
	dir := t.TempDir()
	spec := libSpec{envVar: "NDCONV_TEST_LIB", sonames: []string{"libndconv-no-such-lib.so.9"}, dirs: []string{dir}}
	_, err := openLibrary(spec, envOf(nil))
	var le *LibraryError
	if !errors.As(err, &le) {
		t.Fatalf("error %T %v, want *LibraryError", err, err)
	}
	if !slices.Contains(le.Tried, filepath.Join(dir, "libndconv-no-such-lib.so.9")) || le.Tried[0] != "libndconv-no-such-lib.so.9" {
		t.Errorf("tried %v", le.Tried)
	}
}

// TestBindAndCall runs the whole binding path — dlopen by soname, dlsym,
// a C call through ccall — on the C library, which every Linux test
// machine has, and checks that a missing symbol is named and an unbound
// entry point fails cleanly.
func TestBindAndCall(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs glibc")
	}
	lib, err := openLibrary(libSpec{envVar: "NDCONV_TEST_LIB", sonames: []string{"libc.so.6"}}, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	var strlen, memset uintptr
	if err := lib.bind([]symbol{{"strlen", &strlen}, {"memset", &memset}}); err != nil {
		t.Fatal(err)
	}
	s := cString("ndconv")
	if n := ccall(strlen, uintptr(unsafe.Pointer(&s[0]))); n != 6 {
		t.Errorf("strlen = %d, want 6", n)
	}
	buf := make([]byte, 8)
	ccall(memset, uintptr(unsafe.Pointer(&buf[2])), 0x5a, 3)
	if want := []byte{0, 0, 0x5a, 0x5a, 0x5a, 0, 0, 0}; !slices.Equal(buf, want) {
		t.Errorf("memset wrote %v, want %v", buf, want)
	}

	var missing uintptr
	err = lib.bind([]symbol{{"strlen", &strlen}, {"ndconv_no_such_symbol", &missing}})
	var le *LibraryError
	if !errors.As(err, &le) || le.Symbol != "ndconv_no_such_symbol" || !strings.Contains(err.Error(), "missing symbol ndconv_no_such_symbol") {
		t.Errorf("missing symbol: %v", err)
	}
	var optional, present uintptr
	lib.bindOptional([]symbol{{"ndconv_no_such_symbol", &optional}, {"strlen", &present}})
	if optional != 0 || present != strlen {
		t.Errorf("bindOptional: %x %x", optional, present)
	}

	// An unbound entry point returns a code that reads as "not loaded",
	// whichever wrapper calls it.
	err = check("clFinish", ccall(0))
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

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		s            string
		major, minor int
		ok           bool
	}{
		{"OpenCL 3.0 PoCL HSTR: pthread-x86_64", 3, 0, true},
		{"OpenCL 1.2 CUDA", 1, 2, true},
		{"OpenCL C 1.2 PoCL", 1, 2, true},
		{"OpenCL 2.1 AMD-APP (3614.0)", 2, 1, true},
		{"garbage", 0, 0, false},
	} {
		ma, mi, ok := parseVersion(tc.s)
		if ma != tc.major || mi != tc.minor || ok != tc.ok {
			t.Errorf("parseVersion(%q) = %d, %d, %v", tc.s, ma, mi, ok)
		}
	}
	if !(Info{Version: "OpenCL 3.0 x"}).VersionAtLeast(2, 0) || (Info{Version: "OpenCL 1.2 x"}).VersionAtLeast(2, 0) {
		t.Error("VersionAtLeast")
	}
	if got := (Info{Platform: 1, Device: 2}).Spec(); got != "opencl:1:2" {
		t.Errorf("Spec = %q", got)
	}
}

// TestSymbolsResolve: where the ICD loader loads, every OpenCL 1.2 entry
// point ndconv uses is bound, and the table names no symbol twice.
func TestSymbolsResolve(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range append(requiredSymbols(), optionalSymbols()...) {
		if seen[s.name] {
			t.Errorf("%s bound twice", s.name)
		}
		seen[s.name] = true
	}
	if err := loadLibrary(); err != nil {
		t.Skipf("no OpenCL library: %v", err)
	}
	for _, s := range requiredSymbols() {
		if *s.addr == 0 {
			t.Errorf("%s is not bound", s.name)
		}
	}
	t.Logf("%d entry points bound from %s (clCreateCommandQueueWithProperties: %v)", len(requiredSymbols()), LibraryPath(), cl.clCreateCommandQueueWithProperties != 0)
}
