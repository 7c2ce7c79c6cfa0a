package gpu

import (
	"errors"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/ndconv/ndconv/internal/dynlib"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

type device struct{ name string }

func TestRegistry(t *testing.T) {
	var r Registry[int, *device]
	made, released := 0, 0
	create := func() (*device, error) { made++; return &device{"d"}, nil }
	release := func() error { released++; return nil }

	d1, err := r.Open(0, create)
	if err != nil {
		t.Fatal(err)
	}
	if d2, _ := r.Open(0, create); d2 != d1 || made != 1 {
		t.Errorf("a second Open made another device (%d made)", made)
	}
	if d3, _ := r.Open(1, create); d3 == d1 || made != 2 {
		t.Error("another key shares the device")
	}
	if err := r.Close(0, d1, release); err != nil || released != 0 {
		t.Errorf("first of two Closes released: %v, %d", err, released)
	}
	if err := r.Close(0, d1, release); err != nil || released != 1 {
		t.Errorf("last Close did not release: %v, %d", err, released)
	}
	if err := r.Close(0, d1, release); err != nil || released != 1 {
		t.Errorf("a Close too many released: %v, %d", err, released)
	}
	// Reopened: a new device, which a stale Close of the old one leaves
	// alone.
	d4, _ := r.Open(0, create)
	if d4 == d1 || made != 3 {
		t.Error("reopening returned the released device")
	}
	if err := r.Close(0, d1, release); err != nil || released != 1 {
		t.Errorf("a stale Close released the new device: %v, %d", err, released)
	}
	boom := errors.New("boom")
	if err := r.Close(0, d4, func() error { return boom }); err != boom {
		t.Errorf("release's error lost: %v", err)
	}
}

func TestRegistryCreateFails(t *testing.T) {
	var r Registry[[2]int, *device]
	boom := errors.New("no such device")
	if d, err := r.Open([2]int{0, 1}, func() (*device, error) { return nil, boom }); err != boom || d != nil {
		t.Errorf("Open = %v, %v", d, err)
	}
	// Not remembered: the next Open tries again.
	if d, err := r.Open([2]int{0, 1}, func() (*device, error) { return &device{"late"}, nil }); err != nil || d.name != "late" {
		t.Errorf("Open after a failure = %v, %v", d, err)
	}
}

// TestRegistryConcurrent: Opens racing on one key make one device, and as
// many Closes release it once.
func TestRegistryConcurrent(t *testing.T) {
	var r Registry[int, *device]
	var mu sync.Mutex
	made, released := 0, 0
	const n = 16
	devs := make([]*device, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			devs[i], _ = r.Open(7, func() (*device, error) { mu.Lock(); made++; mu.Unlock(); return &device{}, nil })
		}()
	}
	wg.Wait()
	if made != 1 {
		t.Fatalf("%d devices made", made)
	}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Close(7, devs[i], func() error { mu.Lock(); released++; mu.Unlock(); return nil })
		}()
	}
	wg.Wait()
	if released != 1 {
		t.Errorf("released %d times", released)
	}
}

func TestTapsBytes(t *testing.T) {
	huge := math.MaxFloat64
	taps := []float64{1, 0.1, -2.5, huge}
	narrow := TapsBytes(&kernels.Launch{Taps: taps})
	want32 := []float32{1, 0.1, -2.5, float32(huge)}
	if !slices.Equal(narrow, nd.AsBytes(want32)) || len(narrow) != 16 {
		t.Errorf("float32 taps: % x", narrow)
	}
	wide := TapsBytes(&kernels.Launch{Taps: taps, Wide: true})
	if !slices.Equal(wide, nd.AsBytes(taps)) || len(wide) != 32 {
		t.Errorf("float64 taps: % x", wide)
	}
	if b := TapsBytes(&kernels.Launch{}); len(b) != 0 {
		t.Errorf("no taps: % x", b)
	}
}

// TestErrors: each failure class reads as the backends' own types did,
// after the backend's name, and unwraps to its cause.
func TestErrors(t *testing.T) {
	inner := errors.New("cuda: cannot load libcuda.so.1: not found")
	lib := &dynlib.Error{Library: "libOpenCL.so.1", Tried: []string{"libOpenCL.so.1", "libOpenCL.so"}, Err: errors.New("not found")}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&UnavailableError{Backend: "cuda", Reason: "no CUDA device"}, "cuda: unavailable: no CUDA device"},
		{&UnavailableError{Backend: "cuda", Reason: "no CUDA driver library", Err: inner}, "cuda: unavailable: no CUDA driver library: cannot load libcuda.so.1: not found"},
		{&UnavailableError{Backend: "opencl", Reason: "no OpenCL library", Err: inner}, "opencl: unavailable: no OpenCL library: cuda: cannot load libcuda.so.1: not found"},
		{LibraryErrorOf("opencl", lib), "opencl: cannot load libOpenCL.so.1 (tried libOpenCL.so.1, libOpenCL.so): not found"},
		{&LibraryError{Backend: "cuda", Library: "/x/libcuda.so.1", Symbol: "cuMemAlloc_v2", Err: errors.New("undefined symbol")}, "cuda: /x/libcuda.so.1: missing symbol cuMemAlloc_v2: undefined symbol"},
		{&UnsupportedError{Backend: "cuda", What: "compute capability", Value: "5.2", Reason: "at least 6.0"}, "cuda: unsupported compute capability 5.2: at least 6.0"},
		{&UnsupportedError{Backend: "opencl", What: "device"}, "opencl: unsupported device"},
		{&RangeError{Backend: "opencl", Op: "Write", Offset: 8, Length: 16, Size: 20}, "opencl: Write: 16 bytes at offset 8 do not fit a 20-byte buffer"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
	if !errors.Is(&UnavailableError{Backend: "cuda", Err: inner}, inner) {
		t.Error("UnavailableError does not unwrap to its cause")
	}
	var le *LibraryError
	if err := LibraryErrorOf("cuda", lib); !errors.As(err, &le) || le.Backend != "cuda" || !slices.Equal(le.Tried, lib.Tried) || !errors.Is(err, lib.Err) {
		t.Errorf("LibraryErrorOf(*dynlib.Error) = %#v", err)
	}
	if LibraryErrorOf("cuda", nil) != nil || LibraryErrorOf("cuda", inner) != inner {
		t.Error("LibraryErrorOf changed an error that is no *dynlib.Error")
	}
}

func TestRegistryLookup(t *testing.T) {
	var r Registry[int, *device]
	if _, ok := r.Lookup(3); ok {
		t.Fatal("an empty registry has a device")
	}
	d, _ := r.Open(3, func() (*device, error) { return &device{"d"}, nil })
	if got, ok := r.Lookup(3); !ok || got != d {
		t.Errorf("Lookup = %v, %v", got, ok)
	}
	r.Close(3, d, func() error { return nil }) // Lookup took no reference
	if _, ok := r.Lookup(3); ok {
		t.Error("Lookup kept the device open")
	}
}

// TestLife: operations run while open and are refused after End, and End
// waits for the operation in flight before it releases.
func TestLife(t *testing.T) {
	var l Life
	closed := errors.New("closed")
	ran := 0
	if err := l.Do(closed, func() error { ran++; return nil }); err != nil || ran != 1 {
		t.Fatalf("Do on an open Life = %v, ran %d", err, ran)
	}
	inside, finish := make(chan struct{}), make(chan struct{})
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	go l.Do(closed, func() error { close(inside); <-finish; note("op"); return nil })
	<-inside
	ended := make(chan error)
	go func() { ended <- l.End(func() error { note("release"); return closed }) }()
	close(finish)
	if err := <-ended; err != closed {
		t.Errorf("End lost release's error: %v", err)
	}
	if !slices.Equal(order, []string{"op", "release"}) {
		t.Errorf("order %v: End did not wait for the operation in flight", order)
	}
	if err := l.Do(closed, func() error { ran++; return nil }); err != closed || ran != 1 {
		t.Errorf("Do after End = %v, ran %d", err, ran)
	}
}

func TestDefineOptions(t *testing.T) {
	in := []string{"TILE=16", "-lineinfo", "KW=5", "BORDER"}
	want := []string{"-DBORDER", "-DKW=5", "-DTILE=16", "-lineinfo"}
	if got := DefineOptions(in); !slices.Equal(got, want) {
		t.Errorf("DefineOptions = %q, want %q", got, want)
	}
	if in[0] != "TILE=16" {
		t.Error("DefineOptions changed its argument")
	}
	if got := DefineOptions(nil); len(got) != 0 {
		t.Errorf("no defines: %q", got)
	}
}

func TestLaunchArgs(t *testing.T) {
	in, out, taps, outer := "in", "out", []byte{1}, "outer"
	l := &kernels.Launch{Scalars: []int64{7, 9}, CVal: 0.1}
	got := LaunchArgs(l, in, out, taps, outer)
	if len(got) != 7 || got[0] != in || got[1] != out || got[3] != outer || got[4] != int64(7) || got[5] != int64(9) || got[6] != float32(0.1) {
		t.Errorf("float32 launch: %v", got)
	}
	l.Wide = true
	if got := LaunchArgs(l, in, out, taps, outer); got[6] != 0.1 {
		t.Errorf("float64 launch: cval %T %v", got[6], got[6])
	}
}
