package cuda

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
	spec := libSpec{envVar: "NDCONV_TEST_LIB", sonames: []string{"liba.so.2", "liba.so"}, dirs: []string{"/d1", "/d2"}}
	got := spec.candidates(envOf(nil))
	want := []string{"liba.so.2", "liba.so", "/d1/liba.so.2", "/d1/liba.so", "/d2/liba.so.2", "/d2/liba.so"}
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Errorf("candidates = %v, want it to begin %v", got, want)
	}
	for _, p := range got[len(want):] { // versioned CUDA installs, if this machine has any
		if !strings.HasPrefix(p, "/usr/local/cuda-") {
			t.Errorf("unexpected candidate %q", p)
		}
	}
	// An explicit path is the only candidate: never second-guessed.
	if got := spec.candidates(envOf(map[string]string{"NDCONV_TEST_LIB": "/opt/x/liba.so"})); !slices.Equal(got, []string{"/opt/x/liba.so"}) {
		t.Errorf("with the override: %v", got)
	}
}

func TestDriverAndNVRTCSpecs(t *testing.T) {
	if driverLibrary.envVar != "NDCONV_LIBCUDA" || driverLibrary.sonames[0] != "libcuda.so.1" {
		t.Errorf("driver spec %+v", driverLibrary)
	}
	if nvrtcLibrary.envVar != "NDCONV_LIBNVRTC" || !slices.Equal(nvrtcLibrary.sonames[:2], []string{"libnvrtc.so.13", "libnvrtc.so.12"}) {
		t.Errorf("nvrtc spec %+v", nvrtcLibrary)
	}
	for _, dir := range []string{"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/lib/x86_64-linux-gnu", "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib"} {
		if !slices.Contains(cudaLibraryDirs, dir) {
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
	fake := filepath.Join(t.TempDir(), "libcuda.so.1")
	if err := os.WriteFile(fake, []byte("this is not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := libSpec{envVar: "NDCONV_LIBCUDA", sonames: []string{"libcuda.so.1"}, dirs: cudaLibraryDirs}
	lib, err := openLibrary(spec, envOf(map[string]string{"NDCONV_LIBCUDA": fake}))
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
	for _, want := range []string{fake, "NDCONV_LIBCUDA"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
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
// machine has, and checks that a missing symbol is named.
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
	if ccall(0) != CodeNotInitialized {
		t.Error("ccall of an unbound entry point does not fail cleanly")
	}
}

func TestGoString(t *testing.T) {
	b := cString("sm_90")
	if got := goString(&b[0]); got != "sm_90" {
		t.Errorf("goString = %q", got)
	}
	if goString(nil) != "" {
		t.Error("goString(nil) not empty")
	}
}
