package dynlib

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
	spec := Spec{EnvVar: "NDCONV_TEST_LIB", Sonames: []string{"liba.so.1", "liba.so"}, Dirs: []string{"/d1", "/d2"}}
	got := spec.Candidates(envOf(nil))
	want := []string{"liba.so.1", "liba.so", "/d1/liba.so.1", "/d1/liba.so", "/d2/liba.so.1", "/d2/liba.so"}
	if !slices.Equal(got, want) {
		t.Errorf("Candidates = %v, want %v", got, want)
	}
	// An explicit path is the only candidate: never second-guessed.
	if got := spec.Candidates(envOf(map[string]string{"NDCONV_TEST_LIB": "/opt/x/liba.so"})); !slices.Equal(got, []string{"/opt/x/liba.so"}) {
		t.Errorf("with the override: %v", got)
	}
	// A soname that is a full path (a macOS framework) is not joined to
	// the directories.
	abs := Spec{EnvVar: "NDCONV_TEST_LIB", Sonames: []string{"/System/Library/Frameworks/OpenCL.framework/OpenCL"}, Dirs: []string{"/d1"}}
	if got := abs.Candidates(envOf(nil)); !slices.Equal(got, abs.Sonames) {
		t.Errorf("an absolute soname: %v", got)
	}
}

// TestCandidatesGlobs: the globs' matches come after Dirs, newest first.
func TestCandidatesGlobs(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"cuda-12.4", "cuda-13.0", "cuda-11.8"} {
		if err := os.MkdirAll(filepath.Join(root, v, "lib64"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	spec := Spec{EnvVar: "NDCONV_TEST_LIB", Sonames: []string{"liba.so"}, Dirs: []string{"/d1"},
		Globs: []string{filepath.Join(root, "cuda-*", "lib64"), filepath.Join(root, "none-*")}}
	want := []string{"liba.so", "/d1/liba.so",
		filepath.Join(root, "cuda-13.0/lib64/liba.so"), filepath.Join(root, "cuda-12.4/lib64/liba.so"), filepath.Join(root, "cuda-11.8/lib64/liba.so")}
	if got := spec.Candidates(envOf(nil)); !slices.Equal(got, want) {
		t.Errorf("Candidates = %v, want %v", got, want)
	}
}

// TestOpenNotALibrary: an override naming a file that is no library is a
// clean *Error naming the file and the variable.
func TestOpenNotALibrary(t *testing.T) {
	if !Supported {
		t.Skip("no run-time loading on " + runtime.GOOS)
	}
	fake := filepath.Join(t.TempDir(), "liba.so.1")
	if err := os.WriteFile(fake, []byte("this is not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := Spec{EnvVar: "NDCONV_TEST_LIB", Sonames: []string{"liba.so.1"}, Dirs: []string{"/usr/lib"}}
	lib, err := Open(spec, envOf(map[string]string{"NDCONV_TEST_LIB": fake}))
	if err == nil {
		t.Fatalf("opened %v", lib)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v, want *Error", err, err)
	}
	if !slices.Equal(e.Tried, []string{fake}) {
		t.Errorf("tried %v, want only %s", e.Tried, fake)
	}
	if want := "cannot load " + fake + " (from NDCONV_TEST_LIB): "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q does not begin %q", err, want)
	}
}

func TestOpenMissing(t *testing.T) {
	if !Supported {
		t.Skip("no run-time loading on " + runtime.GOOS)
	}
	dir := t.TempDir()
	spec := Spec{EnvVar: "NDCONV_TEST_LIB", Sonames: []string{"libndconv-no-such-lib.so.9"}, Dirs: []string{dir}}
	_, err := Open(spec, envOf(nil))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v, want *Error", err, err)
	}
	if !slices.Equal(e.Tried, []string{"libndconv-no-such-lib.so.9", filepath.Join(dir, "libndconv-no-such-lib.so.9")}) {
		t.Errorf("tried %v", e.Tried)
	}
	if e.Library != "libndconv-no-such-lib.so.9" || e.Err == nil {
		t.Errorf("error %+v", e)
	}
}

// TestBindAndCall runs the whole binding path — dlopen by soname, dlsym,
// a C call through Call — on the C library, which every Linux test
// machine has, and checks that a missing symbol is named, that an optional
// one is left 0, and that an unbound entry point is not called.
func TestBindAndCall(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs glibc")
	}
	lib, err := Open(Spec{EnvVar: "NDCONV_TEST_LIB", Sonames: []string{"libc.so.6"}}, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if lib.Path != "libc.so.6" {
		t.Errorf("opened %q", lib.Path)
	}
	var strlen, memset uintptr
	if err := lib.Bind([]Symbol{{"strlen", &strlen}, {"memset", &memset}}); err != nil {
		t.Fatal(err)
	}
	s := []byte("ndconv\x00")
	if n := Call(strlen, 99, uintptr(unsafe.Pointer(&s[0]))); n != 6 {
		t.Errorf("strlen = %d, want 6", n)
	}
	buf := make([]byte, 8)
	Call(memset, 99, uintptr(unsafe.Pointer(&buf[2])), 0x5a, 3)
	if want := []byte{0, 0, 0x5a, 0x5a, 0x5a, 0, 0, 0}; !slices.Equal(buf, want) {
		t.Errorf("memset wrote %v, want %v", buf, want)
	}

	var missing uintptr
	err = lib.Bind([]Symbol{{"strlen", &strlen}, {"ndconv_no_such_symbol", &missing}})
	var e *Error
	if !errors.As(err, &e) || e.Symbol != "ndconv_no_such_symbol" || !strings.HasPrefix(err.Error(), "libc.so.6: missing symbol ndconv_no_such_symbol: ") {
		t.Errorf("missing symbol: %v", err)
	}
	var optional, present uintptr
	lib.BindOptional([]Symbol{{"ndconv_no_such_symbol", &optional}, {"strlen", &present}})
	if optional != 0 || present != strlen {
		t.Errorf("BindOptional: %x %x", optional, present)
	}
	if Call(0, 99) != 99 {
		t.Error("Call of an unbound entry point does not return the unbound result")
	}
}

func TestOpenPath(t *testing.T) {
	if !Supported {
		t.Skip("no run-time loading on " + runtime.GOOS)
	}
	fake := filepath.Join(t.TempDir(), "libndconv-builtins.so.1")
	if err := os.WriteFile(fake, []byte("this is not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenPath(fake)
	var e *Error
	if !errors.As(err, &e) || e.Library != fake || !slices.Equal(e.Tried, []string{fake}) {
		t.Errorf("OpenPath of a non-library: %v", err)
	}
	if runtime.GOOS == "linux" {
		if lib, err := OpenPath("libc.so.6"); err != nil || lib.Path != "libc.so.6" {
			t.Errorf("OpenPath(libc.so.6) = %v, %v", lib, err)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	noSuch := errors.New("libcuda.so.1: cannot open shared object file: No such file or directory")
	for _, tc := range []struct {
		e    *Error
		want string
	}{
		{&Error{Library: "libcuda.so.1", Err: noSuch}, "cannot load libcuda.so.1: " + noSuch.Error()},
		{&Error{Library: "libcuda.so.1", Tried: []string{"libcuda.so.1"}, Err: noSuch}, "cannot load libcuda.so.1: " + noSuch.Error()},
		{&Error{Library: "libcuda.so.1", Tried: []string{"libcuda.so.1", "/usr/local/cuda/lib64/libcuda.so.1"}, Err: noSuch},
			"cannot load libcuda.so.1 (tried libcuda.so.1, /usr/local/cuda/lib64/libcuda.so.1): " + noSuch.Error()},
		{&Error{Library: "liba", Tried: []string{"a", "b", "c", "d", "e"}}, "cannot load liba (tried a, b and 3 more paths)"},
		{&Error{Library: "/x/libcuda.so.1", Symbol: "cuMemAlloc_v2", Err: errors.New("undefined symbol")}, "/x/libcuda.so.1: missing symbol cuMemAlloc_v2: undefined symbol"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
	if !errors.Is(&Error{Library: "x", Err: noSuch}, noSuch) {
		t.Error("Error does not unwrap")
	}
}
