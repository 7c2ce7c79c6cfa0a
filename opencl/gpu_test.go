package opencl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gpucache"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/nd"
)

// The tests in this file and engine_test.go need an OpenCL device: they
// skip, saying why, where Available fails (so `go test ./opencl` passes on
// any machine), and share one open device, opencl:P:D from
// NDCONV_OPENCL_DEVICE ("P:D", default 0:0). Holding it open keeps its
// programs built for every test.
//
// Where the shared device is PoCL's, it builds as Device.TestBuilds says
// (a GPU builds as the product does): no binaries for the disk cache
// (PoCL's own, $POCL_CACHE_DIR or ~/.cache/pocl, still makes later runs
// fast) and, unless NDCONV_OPENCL_ALL=1, unoptimised. The tests of the
// disk cache build as the product does (asProduct).

var shared gputest.Shared[*Device]

func testDevice(t testing.TB) *Device {
	t.Helper()
	return shared.Get(t, "OpenCL", Available, func() (*Device, error) {
		d, err := Open(testDeviceIndex(t))
		if err == nil && strings.Contains(d.Info().PlatformVersion, "PoCL") {
			d.TestBuilds(true, os.Getenv("NDCONV_OPENCL_ALL") != "1")
		}
		return d, err
	})
}

// asProduct makes d build as the product does until t ends: optimised,
// writing binaries to a fresh disk cache (NDCONV_CACHE_DIR).
func asProduct(t *testing.T, d *Device) {
	t.Setenv("NDCONV_CACHE_DIR", t.TempDir())
	without, unoptimised := d.TestBuilds(false, false)
	t.Cleanup(func() { d.TestBuilds(without, unoptimised) })
}

// testDeviceIndex reads NDCONV_OPENCL_DEVICE.
func testDeviceIndex(t testing.TB) (platform, device int) {
	s := os.Getenv("NDCONV_OPENCL_DEVICE")
	if s == "" {
		return 0, 0
	}
	if _, err := fmt.Sscanf(s, "%d:%d", &platform, &device); err != nil {
		t.Fatalf("NDCONV_OPENCL_DEVICE=%q: want P:D", s)
	}
	return platform, device
}

// vaddSource computes c = a + scale*b + OFFSET, OFFSET a define. With the
// small integers and halves the tests use, every result is exact.
const vaddSource = `
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, const float scale, const int n) {
	const int i = get_global_id(0);
	if (i < n) {
		c[i] = a[i] + scale * b[i] + OFFSET;
	}
}
`

func testInputs(n, seed int) (a, b []float32) {
	a, b = make([]float32, n), make([]float32, n)
	for i := range a {
		a[i] = float32((i*7+seed)%1000 - 500)
		b[i] = float32((i*13+seed*3)%200-100) / 2
	}
	return a, b
}

// runVadd uploads a and b, runs vadd from prog on q and returns c.
func runVadd(d *Device, q *Queue, prog *Program, a, b []float32, scale float32) ([]float32, error) {
	k, err := prog.kernel("vadd")
	if err != nil {
		return nil, err
	}
	n := len(a)
	bufs := make([]gpu.Buffer, 3)
	for i := range bufs {
		if bufs[i], err = d.Alloc(4 * n); err != nil {
			return nil, err
		}
		defer bufs[i].Free()
	}
	if err := errors.Join(q.Write(bufs[0], 0, nd.AsBytes(a)), q.Write(bufs[1], 0, nd.AsBytes(b))); err != nil {
		return nil, err
	}
	if err := q.Launch(k, [3]int{(n + 63) / 64, 1, 1}, [3]int{64, 1, 1}, bufs[0], bufs[1], bufs[2], scale, int32(n)); err != nil {
		return nil, err
	}
	c := make([]float32, n)
	return c, q.Read(nd.AsBytes(c), bufs[2], 0)
}

// checkVadd runs vadd and compares it with the same sums in Go.
func checkVadd(d *Device, q *Queue, prog *Program, n, seed int, offset float32) error {
	a, b := testInputs(n, seed)
	got, err := runVadd(d, q, prog, a, b, 1.5)
	if err != nil {
		return err
	}
	for i := range a {
		if want := a[i] + 1.5*b[i] + offset; got[i] != want {
			return fmt.Errorf("c[%d] = %v, want %v", i, got[i], want)
		}
	}
	return nil
}

func testQueue(t *testing.T, d *Device) *Queue {
	t.Helper()
	q, err := d.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q.(*Queue)
}

func TestDeviceInfo(t *testing.T) {
	d := testDevice(t)
	info := d.Info()
	if info.Name == "" || info.PlatformName == "" || info.DriverVersion == "" || !strings.HasPrefix(info.Version, "OpenCL ") {
		t.Errorf("names missing: %+v", info)
	}
	if info.MaxWorkGroupSize < 1 || info.LocalMemory < 1 || info.GlobalMemory < 1 || info.ComputeUnits < 1 || info.MaxWorkItemSizes[0] < 1 {
		t.Errorf("limits missing: %+v", info)
	}
	infos, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(infos, func(i Info) bool { return i.Spec() == info.Spec() && i.Name == info.Name }) {
		t.Errorf("Devices() lacks %s: %v", info.Spec(), infos)
	}
	// Bad indices are errors, not crashes.
	for _, pd := range [][2]int{{99, 0}, {-1, 0}, {info.Platform, 999}} {
		if dev, err := Open(pd[0], pd[1]); err == nil {
			dev.Close()
			t.Errorf("Open(%d, %d) succeeded", pd[0], pd[1])
		}
	}
	// Opening again returns the same device, balanced by Close.
	again, err := Open(info.Platform, info.Device)
	if err != nil || again != d {
		t.Fatalf("Open again: %v, %v", again, err)
	}
	again.Close()
}

func TestProgramAndKernel(t *testing.T) {
	d := testDevice(t)
	q := testQueue(t, d)
	prog, err := d.program(&d.programs, vaddSource, "vadd", []string{"OFFSET=0.5f"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 63, 64, 1000} {
		if err := checkVadd(d, q, prog, n, n, 0.5); err != nil {
			t.Errorf("n=%d: %v", n, err)
		}
	}
	k, err := prog.kernel("vadd")
	if err != nil || k.MaxGroupSize() < 64 {
		t.Fatalf("kernel: %v, %v", k, err)
	}
	if k2, _ := prog.kernel("vadd"); k2 != k {
		t.Error("a second lookup made another kernel")
	}
	var e *Error
	if _, err := prog.kernel("nonesuch"); !errors.As(err, &e) || e.Name != "CL_INVALID_KERNEL_NAME" || !strings.Contains(err.Error(), "nonesuch") {
		t.Errorf("unknown kernel: %v", err)
	}

	// Events recorded around a launch time it.
	buf, err := d.Alloc(4 * 256)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	start, _ := d.NewEvent()
	end, _ := d.NewEvent()
	defer start.Close()
	defer end.Close()
	if err := errors.Join(q.Record(start), q.Launch(k, [3]int{4, 1, 1}, [3]int{64, 1, 1}, buf, buf, buf, float32(1), int32(256)), q.Record(end)); err != nil {
		t.Fatal(err)
	}
	if err := end.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if dur, err := end.Since(start); err != nil || dur < 0 {
		t.Errorf("duration %v, %v", dur, err)
	}

	// Arguments and work sizes the kernel cannot take.
	one := [3]int{1, 1, 1}
	for _, tc := range []struct {
		name   string
		groups [3]int
		args   []any
	}{
		{"a Go int", one, []any{buf, buf, buf, float32(1), 256}},
		{"a nil buffer", one, []any{buf, (*Buffer)(nil), buf, float32(1), int32(256)}},
		{"a float64 for a float", one, []any{buf, buf, buf, float64(1), int32(256)}},
		{"no work-groups", [3]int{0, 1, 1}, []any{buf, buf, buf, float32(1), int32(256)}},
	} {
		if err := q.Launch(k, tc.groups, [3]int{64, 1, 1}, tc.args...); err == nil {
			t.Errorf("%s was accepted", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
	if err := q.Finish(); err != nil {
		t.Errorf("the queue is broken after refused launches: %v", err)
	}
}

// TestBuildFailure: a syntax error is a *BuildError carrying the
// compiler's log and the defines, and it is not cached.
func TestBuildFailure(t *testing.T) {
	d := testDevice(t)
	asProduct(t, d)
	broken := strings.Replace(vaddSource, "c[i] = a[i]", "c[i] = a[i] +* undeclared_thing", 1)
	_, err := d.program(&d.programs, broken, "vadd-broken", []string{"OFFSET=0.5f", "NDCONV_TEST=1"})
	var be *BuildError
	if !errors.As(err, &be) {
		t.Fatalf("error %T %v, want *BuildError", err, err)
	}
	var ce *Error
	if !errors.As(be, &ce) || ce.Name != "CL_BUILD_PROGRAM_FAILURE" || ce.Call != "clBuildProgram" {
		t.Errorf("result %v", be.Err)
	}
	if !strings.Contains(be.Log, "undeclared_thing") || !slices.Equal(be.Defines, []string{"OFFSET=0.5f", "NDCONV_TEST=1"}) ||
		!slices.Contains(be.Options, "-DNDCONV_TEST=1") || be.Program != "vadd-broken" || be.Device != d.Info().Name {
		t.Errorf("build error lacks its context: %+v", be)
	}
	msg := err.Error()
	for _, want := range []string{"CL_BUILD_PROGRAM_FAILURE", "vadd-broken", "NDCONV_TEST=1", "undeclared_thing"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	t.Logf("the message reads:\n%s", msg)
	dir, _ := programStore.Dir()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed build left %d cache files", len(entries))
	}
	// A bad option is a build error too.
	if _, err := d.program(&d.programs, vaddSource, "vadd", []string{"OFFSET=0.5f", "-cl-no-such-option"}); !errors.As(err, &be) {
		t.Errorf("a bad option: %T %v", err, err)
	}
}

// TestProgramCacheOnDevice walks a real program through the cache: cold
// (built, written), warm (memory), a new process (the binary loaded from
// disk, and run), a corrupted file and a file whose binary the driver
// refuses (both rebuilt and rewritten). Each program is run to check it.
func TestProgramCacheOnDevice(t *testing.T) {
	d := testDevice(t)
	q := testQueue(t, d)
	asProduct(t, d)
	dir, _ := programStore.Dir()
	defines := []string{"OFFSET=2.5f"}
	var progs []*Program
	defer func() {
		for _, p := range progs {
			p.release()
		}
	}()
	step := func(name string, c *programCache, want gpucache.Stats) {
		t.Helper()
		p, err := d.program(c, vaddSource, "vadd", defines)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Contains(progs, p) {
			progs = append(progs, p)
		}
		if got := c.Stats(); got != want {
			t.Errorf("%s: stats %+v, want %+v", name, got, want)
		}
		if err := checkVadd(d, q, p, 300, 7, 2.5); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	c := &programCache{}
	step("cold", c, gpucache.Stats{Builds: 1, DiskWrites: 1})
	step("warm", c, gpucache.Stats{MemoryHits: 1, Builds: 1, DiskWrites: 1})
	step("disk", &programCache{}, gpucache.Stats{DiskHits: 1})

	files, _ := filepath.Glob(filepath.Join(dir, "*.clbin"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	data, _ := os.ReadFile(files[0])
	corrupt := slices.Clone(data)
	corrupt[len(corrupt)/2] ^= 0x40
	os.WriteFile(files[0], corrupt, 0o644)
	step("corrupt", &programCache{}, gpucache.Stats{Builds: 1, DiskWrites: 1, Rejected: 1})
	// Rewritten whole (not byte for byte as before: PoCL's binary also
	// holds the kernels it has compiled for a work-group size since).
	if _, err := programStore.Read(dir, gpucache.Key(data[len(programStore.Magic):][:32])); err != nil {
		t.Errorf("the corrupt file was not rewritten: %v", err)
	}

	// A well-formed file around a binary the driver cannot load.
	key := gpucache.Key(data[len(programStore.Magic):][:32])
	os.WriteFile(files[0], programStore.Encode(key, []byte("not a program binary")), 0o644)
	step("refused", &programCache{}, gpucache.Stats{Builds: 1, DiskWrites: 1, Rejected: 1})

	if err := programStore.Clear(); err != nil {
		t.Fatal(err)
	}
	step("cleared", &programCache{}, gpucache.Stats{Builds: 1, DiskWrites: 1})
}

func TestBuffers(t *testing.T) {
	d := testDevice(t)
	q := testQueue(t, d)
	if _, err := d.Alloc(0); err == nil {
		t.Error("a 0-byte buffer")
	}
	a, err := d.Alloc(16)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	b, err := d.Alloc(16)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if err := errors.Join(q.Write(b, 0, []byte("0123456789abcdef")), q.Write(a, 4, []byte("wxyz")), q.Copy(a, 8, b, 10, 6)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 10)
	if err := q.Read(got, a, 4); err != nil {
		t.Fatal(err)
	}
	if string(got) != "wxyzabcdef" {
		t.Errorf("read %q", got)
	}
	if err := errors.Join(q.Fill(a, 2, 3, 'f'), q.Read(got[:4], a, 2)); err != nil || string(got[:4]) != "fffx" {
		t.Errorf("fill: read %q, %v", got[:4], err)
	}
	var re *RangeError
	for name, err := range map[string]error{
		"write past the end": q.Write(a, 10, make([]byte, 7)),
		"read past the end":  q.Read(make([]byte, 17), a, 0),
		"negative offset":    q.Read(make([]byte, 1), a, -1),
		"copy past the end":  q.Copy(a, 12, b, 0, 8),
		"fill past the end":  q.Fill(a, 12, 8, 0),
	} {
		if !errors.As(err, &re) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := q.Write(a, 16, nil); err != nil {
		t.Errorf("an empty write at the end: %v", err)
	}
	if _, err := d.Alloc(int(d.Info().MaxAlloc) + 1); err == nil {
		t.Error("a buffer above the device's largest")
	}
}

// TestGPUHostFreeList: the engines' staging (AllocHost) is a prefix of a
// mapped buffer of its size class, counted as pinned, which Free returns
// to the device's free list for the next of its class.
func TestGPUHostFreeList(t *testing.T) {
	d := testDevice(t)
	h1, err := d.AllocHost(3000)
	if err != nil {
		t.Fatal(err)
	}
	b := h1.Bytes()
	if len(b) != 3000 || !d.pinned.holds(b) {
		t.Fatalf("staging of %d bytes, pinned %v; want 3000, true", len(b), d.pinned.holds(b))
	}
	first := &b[0]
	if err := h1.Free(); err != nil {
		t.Fatal(err)
	}
	if h1.Free() != nil || h1.Bytes() != nil {
		t.Error("a second Free, or Bytes after Free, did something")
	}
	h2, _ := d.AllocHost(2900) // the same 3072-byte class
	h3, _ := d.AllocHost(2900)
	if &h2.Bytes()[0] != first || &h3.Bytes()[0] == first || len(h2.Bytes()) != 2900 {
		t.Error("the freed staging was not reused once, as 2900 bytes")
	}
	h2.Free()
	h3.Free()
}
