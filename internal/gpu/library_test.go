package gpu

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/ndconv/ndconv/internal/dynlib"
)

// libc is a Library over glibc: strlen bound by its field's name, abs by a
// sym tag, and an optional symbol libc lacks.
type libc struct {
	strlen  Entry
	absolut Entry `sym:"abs"`
	missing Entry `optional:"never"`
}

// TestLibrary: Load binds the entry points by name or tag, leaves a missing
// optional one unbound, and runs Init once; Raw returns a result, Call
// reads it through Result naming the call, and an unbound entry point
// returns Unbound without calling anything.
func TestLibrary(t *testing.T) {
	if !dynlib.Supported || runtime.GOOS != "linux" {
		t.Skip("needs run-time loading of glibc")
	}
	var table libc
	inits := 0
	result := func(call string, r uintptr) error {
		if r == 0 {
			return nil
		}
		return errors.New(call + ": " + strconv.Itoa(int(int32(r))))
	}
	l := &Library{Backend: "test", Spec: dynlib.Spec{EnvVar: "NDCONV_TEST_LIB", Sonames: []string{"libc.so.6"}},
		Entries: &table, Result: result, Unbound: 99, Init: func(string) error { inits++; return nil }}
	for range 2 {
		if err := l.Load(); err != nil {
			t.Fatal(err)
		}
	}
	if inits != 1 || l.Path() != "libc.so.6" || !table.strlen.Bound() || !table.absolut.Bound() || table.missing.Bound() {
		t.Fatalf("Load: %d inits, path %q, bound %v %v %v", inits, l.Path(), table.strlen.Bound(), table.absolut.Bound(), table.missing.Bound())
	}
	s := dynlib.CString("ndconv")
	if n := table.strlen.Raw(uintptr(unsafe.Pointer(&s[0]))); n != 6 {
		t.Errorf("strlen = %d, want 6", n)
	}
	minus := -3
	if err := table.absolut.Call(uintptr(minus)); err == nil || err.Error() != "absolut: 3" {
		t.Errorf("abs(-3) through Call: %v", err)
	}
	if r := table.missing.Raw(); r != 99 {
		t.Errorf("an unbound entry point returned %d", r)
	}
	if err := table.missing.Call(); err == nil || err.Error() != "missing: 99" {
		t.Errorf("an unbound entry point's error: %v", err)
	}
}

// TestRelease: Release frees a handle once, with each entry point in turn
// through do, and a zero handle not at all.
func TestRelease(t *testing.T) {
	var table libc
	var calls []string
	l := &Library{Entries: &table, Unbound: 7, Result: func(call string, r uintptr) error {
		calls = append(calls, call)
		return errors.New(call)
	}}
	l.Symbols()
	dos := 0
	do := func(fn func() error) error { dos++; return fn() }
	h := uintptr(42)
	err := Release(&h, do, &table.strlen, &table.missing)
	if h != 0 || dos != 1 || len(calls) != 2 || err == nil || err.Error() != "strlen\nmissing" {
		t.Errorf("Release: handle %d, %d dos, calls %v, %v", h, dos, calls, err)
	}
	if err := Release(&h, do, &table.strlen); err != nil || dos != 1 {
		t.Errorf("second Release: %v, %d dos", err, dos)
	}
}

// TestLoadFailures: a library that does not open and one that lacks a
// symbol are *UnavailableErrors with the reason given, over the backend's
// *LibraryError, and the second leaves no entry point bound.
func TestLoadFailures(t *testing.T) {
	if !dynlib.Supported || runtime.GOOS != "linux" {
		t.Skip("needs run-time loading of glibc")
	}
	fake := filepath.Join(t.TempDir(), "libfake.so.1")
	if err := os.WriteFile(fake, []byte("not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NDCONV_TEST_LIB", fake)
	spec := dynlib.Spec{EnvVar: "NDCONV_TEST_LIB", Sonames: []string{"libc.so.6"}}
	var table libc
	l := &Library{Backend: "opencl", Spec: spec, Entries: &table, NoLibrary: "no library", NoSymbol: "no symbol"}
	err := l.Load()
	var ue *UnavailableError
	var le *LibraryError
	if !errors.As(err, &ue) || ue.Reason != "no library" || !errors.As(err, &le) || le.Backend != "opencl" ||
		!strings.HasPrefix(err.Error(), "opencl: unavailable: no library: cannot load "+fake) {
		t.Errorf("a file that is no library: %v", err)
	}
	t.Setenv("NDCONV_TEST_LIB", "")
	var lacking struct {
		strlen  Entry
		missing Entry `sym:"ndconv_no_such_symbol"`
	}
	l = &Library{Backend: "cuda", Spec: spec, Entries: &lacking, NoLibrary: "no library", NoSymbol: "no symbol"}
	err = l.Load()
	if !errors.As(err, &ue) || ue.Reason != "no symbol" || !errors.As(err, &le) || le.Symbol != "ndconv_no_such_symbol" || lacking.strlen.Bound() {
		t.Errorf("a missing symbol: %v (strlen bound: %v)", err, lacking.strlen.Bound())
	}
}
