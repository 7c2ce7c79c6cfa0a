package cuda

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ndconv/ndconv/internal/gpucache"
	"github.com/ndconv/ndconv/internal/gputest"
)

// The tests in this file need a GPU: they skip, saying why, where
// Available fails (so `go test ./cuda` passes on any machine), and share
// one open device.

var shared gputest.Shared[*Device]

func testDevice(t testing.TB) *Device {
	t.Helper()
	return shared.Get(t, "CUDA", Available, func() (*Device, error) { return Open(0) })
}

// testCacheDir points the module cache at a fresh directory for one test.
func testCacheDir(t testing.TB) string {
	root := t.TempDir()
	t.Setenv("NDCONV_CACHE_DIR", root)
	dir, _ := CacheDir()
	return dir
}

// vaddSource computes c = a + scale*b + OFFSET, OFFSET a define. With the
// small integers and halves the tests use, every result is exact in
// float32, fused or not.
const vaddSource = `
extern "C" __global__ void vadd(const float* a, const float* b, float* c, float scale, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + scale * b[i] + OFFSET;
}
`

func vaddReference(a, b []float32, scale, offset float32) []float32 {
	c := make([]float32, len(a))
	for i := range a {
		c[i] = a[i] + scale*b[i] + offset
	}
	return c
}

func vaddFunction(t testing.TB, d *Device, defines ...string) *Function {
	t.Helper()
	m, err := d.Module(vaddSource, "vadd.cu", append([]string{"OFFSET=0.5f"}, defines...))
	if err != nil {
		t.Fatal(err)
	}
	f, err := m.Function("vadd")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func testInputs(n, seed int) (a, b []float32) {
	a, b = make([]float32, n), make([]float32, n)
	for i := range a {
		a[i] = float32((i*7+seed)%1000 - 500)
		b[i] = float32((i*13+seed*3)%200-100) / 2
	}
	return a, b
}

func grid1D(n, block int) [3]uint32 { return [3]uint32{uint32((n + block - 1) / block), 1, 1} }

// runVadd uploads a and b, launches vadd on s and returns c. It returns
// its errors rather than failing t, to be usable from any goroutine.
func runVadd(d *Device, f *Function, a, b []float32, scale float32, s *Stream) ([]float32, error) {
	n := len(a)
	bufs := make([]*Buffer, 3)
	for i := range bufs {
		var err error
		if bufs[i], err = d.Pool().Get(4 * n); err != nil {
			return nil, err
		}
		defer bufs[i].Free()
	}
	c := make([]float32, n)
	err := errors.Join(
		bufs[0].CopyFromHostAsync(0, Bytes(a), s),
		bufs[1].CopyFromHostAsync(0, Bytes(b), s),
		f.Launch(grid1D(n, 256), [3]uint32{256, 1, 1}, 0, s, bufs[0], bufs[1], bufs[2].Ptr(), scale, int32(n)),
		bufs[2].CopyToHostAsync(Bytes(c), 0, s))
	if err == nil && s != nil {
		err = s.Synchronize()
	}
	return c, err
}

// checkVadd runs vadd and compares it with vaddReference.
func checkVadd(d *Device, f *Function, a, b []float32, scale float32, s *Stream) error {
	got, err := runVadd(d, f, a, b, scale, s)
	if err != nil {
		return err
	}
	want := vaddReference(a, b, scale, 0.5)
	if i := firstMismatch(got, want); i >= 0 {
		return fmt.Errorf("n=%d scale=%v: c[%d] = %v, want %v", len(a), scale, i, got[i], want[i])
	}
	return nil
}

func firstMismatch(got, want []float32) int {
	for i := range want {
		if got[i] != want[i] {
			return i
		}
	}
	return -1
}

func TestGPUDevices(t *testing.T) {
	d := testDevice(t)
	infos, err := Devices()
	if err != nil || len(infos) == 0 {
		t.Fatalf("Devices() = %v, %v", infos, err)
	}
	for _, info := range infos {
		t.Logf("%+v", info)
	}
	info, err := d.Info()
	if err != nil {
		t.Fatal(err)
	}
	if info.SMs <= 0 || info.WarpSize != 32 || info.MaxThreadsPerBlock < 1024 || !info.ComputeCapability.Supported() ||
		info.TotalMemory <= 0 || info.FreeMemory <= 0 || info.FreeMemory > info.TotalMemory ||
		info.MaxSharedPerBlockOptin < info.MaxSharedPerBlock || info.MaxBlockDim[0] < 1024 || info.MaxGridDim[0] < 1<<30 {
		t.Errorf("implausible info %+v", info)
	}
	if info.DriverVersion.Major < 12 || info.NVRTCVersion.Major < 12 {
		t.Errorf("driver %v, NVRTC %v", info.DriverVersion, info.NVRTCVersion)
	}
	t.Logf("driver library %s, NVRTC %s", driver.path, nvrtcState.path)
}

func TestGPUVectorAdd(t *testing.T) {
	d := testDevice(t)
	testCacheDir(t)
	f := vaddFunction(t, d)
	for _, n := range []int{1, 255, 256, 1000, 1 << 20} {
		a, b := testInputs(n, n)
		must(t, checkVadd(d, f, a, b, 2, nil))
	}
	attrs, err := f.Attributes()
	if err != nil {
		t.Fatal(err)
	}
	cc := d.ComputeCapability()
	if attrs.MaxThreadsPerBlock < 256 || attrs.Registers <= 0 || attrs.BinaryVersion != 10*cc.Major+cc.Minor {
		t.Errorf("attributes %+v for %v", attrs, cc)
	}
	t.Logf("vadd: %+v", attrs)
}

// TestGPUPinnedAsync runs upload, kernel and download on one stream from
// pinned memory, timed by events.
func TestGPUPinnedAsync(t *testing.T) {
	d := testDevice(t)
	testCacheDir(t)
	f := vaddFunction(t, d)
	const n = 1 << 22
	hosts := make([]*HostBuffer, 3)
	for i := range hosts {
		var err error
		if hosts[i], err = d.AllocHost(4 * n); err != nil {
			t.Fatal(err)
		}
		defer hosts[i].Free()
	}
	a, b, c := HostView[float32](hosts[0]), HostView[float32](hosts[1]), HostView[float32](hosts[2])
	if len(a) != n {
		t.Fatalf("HostView has %d elements, want %d", len(a), n)
	}
	ra, rb := testInputs(n, 5)
	copy(a, ra)
	copy(b, rb)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start, _ := d.NewEvent()
	end, _ := d.NewEvent()
	defer start.Close()
	defer end.Close()

	devs := make([]*Buffer, 3)
	for i := range devs {
		if devs[i], err = d.Alloc(4 * n); err != nil {
			t.Fatal(err)
		}
		defer devs[i].Free()
	}
	if err := start.Record(s); err != nil {
		t.Fatal(err)
	}
	must(t, devs[0].CopyFromHostAsync(0, hosts[0].Bytes(), s))
	must(t, devs[1].CopyFromHostAsync(0, hosts[1].Bytes(), s))
	must(t, f.Launch(grid1D(n, 512), [3]uint32{512, 1, 1}, 0, s, devs[0], devs[1], devs[2], float32(-1), int32(n)))
	must(t, devs[2].CopyToHostAsync(hosts[2].Bytes(), 0, s))
	must(t, end.Record(s))
	must(t, end.Synchronize())
	ms, err := end.MillisecondsSince(start)
	if err != nil || ms <= 0 {
		t.Errorf("elapsed %v ms, %v", ms, err)
	}
	if i := firstMismatch(c, vaddReference(ra, rb, -1, 0.5)); i >= 0 {
		t.Fatalf("c[%d] = %v", i, c[i])
	}
	gb := float64(3*4*n) / 1e9
	t.Logf("48 MiB through pinned memory + kernel: %.3f ms (%.1f GB/s)", ms, gb/(float64(ms)/1e3))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestGPUMemsetAndDeviceCopy(t *testing.T) {
	d := testDevice(t)
	src, err := d.Alloc(1000)
	must(t, err)
	defer src.Free()
	dst, err := d.Alloc(1000)
	must(t, err)
	defer dst.Free()
	must(t, src.Memset(0, 1000, 0x11))
	must(t, src.Memset(100, 50, 0xab))
	must(t, dst.Memset(0, 1000, 0))
	must(t, dst.CopyFrom(500, src, 90, 70)) // 10 × 0x11, 50 × 0xab, 10 × 0x11
	s, _ := d.NewStream()
	defer s.Close()
	must(t, dst.MemsetAsync(0, 5, 0xee, s))
	must(t, dst.CopyFromAsync(900, src, 120, 10, s))
	must(t, s.Synchronize())
	got := make([]byte, 1000)
	must(t, dst.CopyToHost(got, 0))
	want := make([]byte, 1000)
	copy(want, bytes.Repeat([]byte{0xee}, 5))
	copy(want[500:], bytes.Repeat([]byte{0x11}, 10))
	copy(want[510:], bytes.Repeat([]byte{0xab}, 50))
	copy(want[560:], bytes.Repeat([]byte{0x11}, 10))
	copy(want[900:], bytes.Repeat([]byte{0xab}, 10))
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("byte %d = %#x, want %#x", i, got[i], want[i])
		}
	}
	part := make([]byte, 20)
	must(t, dst.CopyToHost(part, 555))
	if !bytes.Equal(part, want[555:575]) {
		t.Errorf("partial download %x", part)
	}
	var re *RangeError
	if err := dst.CopyToHost(make([]byte, 10), 995); !errors.As(err, &re) {
		t.Errorf("reading past the end: %v", err)
	}
}

func TestGPUPoolReuse(t *testing.T) {
	d := testDevice(t)
	p := d.Pool()
	must(t, p.Trim())
	before := p.Stats()
	b1, err := p.Get(1000)
	must(t, err)
	ptr := b1.Ptr()
	must(t, b1.Free())
	must(t, b1.Free())    // twice: nothing
	b2, err := p.Get(900) // the same 1024-byte class
	must(t, err)
	if b2.Ptr() != ptr || b2.Size() != 900 {
		t.Errorf("pool did not reuse the block: %#x vs %#x", b2.Ptr(), ptr)
	}
	b3, err := p.Get(900) // the block is taken: a new one
	must(t, err)
	if b3.Ptr() == ptr {
		t.Error("pool handed one block out twice")
	}
	must(t, b3.Memset(0, 900, 1)) // usable
	b2.Free()
	b3.Free()
	s := p.Stats()
	if s.Hits-before.Hits != 1 || s.Misses-before.Misses != 2 || s.IdleBytes != 2048 {
		t.Errorf("stats %+v (before %+v)", s, before)
	}
	must(t, p.Trim())
	if s := p.Stats(); s.IdleBytes != 0 {
		t.Errorf("after Trim: %+v", s)
	}
}

// TestGPUHostFreeList: the engines' staging (pooledHost) goes back to the
// device's free list and is handed out again for its size class, never
// twice at once, and copies through it work.
func TestGPUHostFreeList(t *testing.T) {
	d := testDevice(t)
	h1, err := d.pooledHost(3000)
	must(t, err)
	p := h1.p
	if len(h1.Bytes()) != 3000 {
		t.Fatalf("Bytes has %d bytes, want 3000", len(h1.Bytes()))
	}
	must(t, h1.Free())
	must(t, h1.Free())            // twice: nothing
	h2, err := d.pooledHost(2900) // the same 3072-byte class
	must(t, err)
	h3, err := d.pooledHost(2900)
	must(t, err)
	if h2.p != p || h3.p == p {
		t.Errorf("free list: %p, %p; want the freed %p once", h2.p, h3.p, p)
	}
	buf, err := d.Alloc(2900)
	must(t, err)
	defer buf.Free()
	for i := range h2.Bytes() {
		h2.Bytes()[i] = byte(i * 7)
	}
	must(t, buf.CopyFromHost(0, h2.Bytes()))
	must(t, buf.CopyToHost(h3.Bytes(), 0))
	if !bytes.Equal(h2.Bytes(), h3.Bytes()) {
		t.Error("a copy through pooled staging changed the bytes")
	}
	h2.Free()
	h3.Free()
	if s := d.hostFree.Stats(); s.IdleBytes < 2*3072 {
		t.Errorf("stats %+v: both buffers should be idle", s)
	}
}

// TestGPUConcurrentLaunches: 8 goroutines × 20 iterations on one device,
// each with its own data and scale, half on their own stream.
func TestGPUConcurrentLaunches(t *testing.T) {
	d := testDevice(t)
	testCacheDir(t)
	f := vaddFunction(t, d)
	gputest.Together(8, func(g int) {
		var s *Stream
		if g%2 == 1 {
			var err error
			if s, err = d.NewStream(); err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
		}
		for it := 0; it < 20; it++ {
			n := 1000 + 977*g + 31*it
			a, b := testInputs(n, g*100+it)
			if err := checkVadd(d, f, a, b, float32(g-3), s); err != nil {
				t.Errorf("goroutine %d iteration %d: %v", g, it, err)
				return
			}
			runtime.Gosched()
		}
	})
}

func TestGPUCompileError(t *testing.T) {
	d := testDevice(t)
	testCacheDir(t)
	src := "extern \"C\" __global__ void broken(float* x) { x[0] = undefined_thing + KW; }\n"
	_, err := d.Module(src, "broken.cu", []string{"KW=5", "TILE=16"})
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("error %T %v, want *CompileError", err, err)
	}
	if !strings.Contains(ce.Log, "undefined_thing") || !slices.Contains(ce.Options, "-DKW=5") || !slices.Contains(ce.Options, "-DTILE=16") ||
		!slices.Contains(ce.Options, "--gpu-architecture="+d.ComputeCapability().Arch()) || ce.Program != "broken.cu" {
		t.Errorf("compile error lacks detail: %+v", ce)
	}
	if !strings.Contains(err.Error(), "-DKW=5") || !strings.Contains(err.Error(), "undefined_thing") {
		t.Errorf("message: %v", err)
	}
	t.Logf("%v", err)
	if s := d.CacheStats(); s.Compiles == 0 {
		t.Error("the failed compile was not counted")
	}
}

// TestGPUBadLaunch: an invalid configuration is an *Error naming
// CUDA_ERROR_INVALID_VALUE, and the context goes on working.
func TestGPUBadLaunch(t *testing.T) {
	d := testDevice(t)
	testCacheDir(t)
	f := vaddFunction(t, d)
	buf, err := d.Alloc(4 * 4096)
	must(t, err)
	defer buf.Free()
	err = f.Launch([3]uint32{1, 1, 1}, [3]uint32{2048, 1, 1}, 0, nil, buf, buf, buf, float32(1), int32(4096))
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidValue || e.Name != "CUDA_ERROR_INVALID_VALUE" || e.Call != "cuLaunchKernel" {
		t.Fatalf("launch with 2048 threads: %v", err)
	}
	t.Logf("%v", err)
	if err := f.Launch([3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, nil, buf, buf, 7); err == nil {
		t.Error("a Go int argument was accepted")
	}
	must(t, d.Synchronize())
	a, b := testInputs(5000, 9)
	if err := checkVadd(d, f, a, b, 3, nil); err != nil {
		t.Errorf("after the bad launch: %v", err)
	}
}

func TestGPUHugeAllocation(t *testing.T) {
	d := testDevice(t)
	const pib = 1 << 50
	if b, err := d.Alloc(pib); err == nil {
		b.Free()
		t.Fatal("allocated a PiB")
	} else if !IsOutOfMemory(err) {
		t.Errorf("1 PiB: %v, want out of memory", err)
	} else {
		t.Logf("%v", err)
	}
	if _, err := d.Pool().Get(pib); err == nil {
		t.Error("the pool allocated a PiB")
	}
	if _, err := d.AllocHost(pib); err == nil {
		t.Error("pinned a PiB")
	}
	b, err := d.Alloc(1 << 20)
	must(t, err)
	must(t, b.Free())
}

// dropModules forgets d's loaded modules, as a new process would not have
// them, so that the next Module call goes to the disk cache.
func dropModules(t *testing.T, d *Device) {
	mods := d.modules.Drain()
	must(t, d.do(func() error {
		for _, m := range mods {
			if err := cuModuleUnload(m.handle); err != nil {
				return err
			}
		}
		return nil
	}))
}

// TestGPUModuleCache: cold (compile), warm (no compile), from disk, a
// damaged file, a file the driver refuses: each time a working kernel.
func TestGPUModuleCache(t *testing.T) {
	d := testDevice(t)
	dir := testCacheDir(t)
	nonce := fmt.Sprintf("NONCE=%d", time.Now().UnixNano())
	a, b := testInputs(3000, 1)
	step := func(name string, wantDelta CacheStats) {
		t.Helper()
		before := d.CacheStats()
		start := time.Now()
		f := vaddFunction(t, d, nonce)
		took := time.Since(start)
		after := d.CacheStats()
		delta := CacheStats{after.MemoryHits - before.MemoryHits, after.DiskHits - before.DiskHits, after.Compiles - before.Compiles,
			after.DiskWrites - before.DiskWrites, after.Rejected - before.Rejected, after.DiskErrors - before.DiskErrors}
		if delta != wantDelta {
			t.Errorf("%s: stats changed by %+v, want %+v", name, delta, wantDelta)
		}
		if err := checkVadd(d, f, a, b, 2, nil); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		t.Logf("%s: %v", name, took)
	}
	step("cold", CacheStats{Compiles: 1, DiskWrites: 1})
	step("warm", CacheStats{MemoryHits: 1})
	dropModules(t, d)
	step("disk", CacheStats{DiskHits: 1})

	files, _ := os.ReadDir(dir)
	if len(files) != 1 {
		t.Fatalf("cache directory holds %d files, want 1", len(files))
	}
	path := filepath.Join(dir, files[0].Name())
	data, _ := os.ReadFile(path)
	data[len(data)/2] ^= 0x40
	must(t, os.WriteFile(path, data, 0o644))
	dropModules(t, d)
	step("damaged file", CacheStats{Compiles: 1, DiskWrites: 1, Rejected: 1})

	// A checksum that holds over an image the driver refuses. (Not one
	// that claims to be ELF: the driver trusts an ELF header's offsets.)
	var key gpucache.Key
	raw, err := hex.DecodeString(strings.TrimSuffix(files[0].Name(), moduleStore.Suffix))
	must(t, err)
	copy(key[:], raw)
	must(t, os.WriteFile(path, moduleStore.Encode(key, []byte("no module at all")), 0o644))
	dropModules(t, d)
	step("refused file", CacheStats{Compiles: 1, DiskWrites: 1, Rejected: 1})
	step("warm again", CacheStats{MemoryHits: 1})

	m, err := d.Module(vaddSource, "vadd.cu", []string{"OFFSET=0.5f", nonce})
	must(t, err)
	must(t, m.Unload()) // cache-owned: stays loaded
	step("after Unload", CacheStats{MemoryHits: 1})

	must(t, ClearCache())
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("ClearCache left %d files", len(files))
	}
}

func TestGPUModuleCompilesOnce(t *testing.T) {
	d := testDevice(t)
	testCacheDir(t)
	defines := []string{"OFFSET=0.5f", fmt.Sprintf("NONCE=%d", time.Now().UnixNano())}
	before := d.CacheStats()
	mods := make([]*Module, 8)
	gputest.Together(len(mods), func(i int) {
		m, err := d.Module(vaddSource, "vadd.cu", defines)
		if err != nil {
			t.Error(err)
		}
		mods[i] = m
	})
	if got := d.CacheStats().Compiles - before.Compiles; got != 1 {
		t.Errorf("%d compilations for 8 concurrent calls", got)
	}
	for _, m := range mods {
		if m != mods[0] {
			t.Fatal("concurrent callers got different modules")
		}
	}
}

func TestGPUModuleLoadAndGlobals(t *testing.T) {
	d := testDevice(t)
	src := `__device__ int counter[4] = {1, 2, 3, 4};
extern "C" __global__ void bump(int by) { counter[threadIdx.x] += by; }`
	image, err := compile(src, "globals.cu", compileOptions(d.ComputeCapability().Arch(), nil))
	must(t, err)
	m, err := d.LoadModule(image)
	must(t, err)
	defer m.Unload()
	f, err := m.Function("bump")
	must(t, err)
	must(t, f.Launch([3]uint32{1, 1, 1}, [3]uint32{4, 1, 1}, 0, nil, int32(10)))
	ptr, size, err := m.Global("counter")
	must(t, err)
	if size != 16 {
		t.Errorf("counter is %d bytes", size)
	}
	got := make([]int32, 4)
	view := &Buffer{dev: d, ptr: ptr, size: size}
	must(t, view.CopyToHost(Bytes(got), 0))
	if !slices.Equal(got, []int32{11, 12, 13, 14}) {
		t.Errorf("counter = %v", got)
	}
	if _, err := m.Function("no_such_kernel"); err == nil || !strings.Contains(err.Error(), "no_such_kernel") {
		t.Errorf("missing kernel: %v", err)
	}
	if _, _, err := m.Global("no_such_global"); err == nil {
		t.Error("missing global found")
	}
	// Dynamic shared memory above 48 KiB needs the opt-in.
	info, _ := d.Info()
	if info.MaxSharedPerBlockOptin > 48<<10 {
		must(t, f.SetMaxDynamicSharedMemory(info.MaxSharedPerBlockOptin))
		attrs, err := f.Attributes()
		must(t, err)
		if attrs.MaxDynamicSharedBytes != info.MaxSharedPerBlockOptin {
			t.Errorf("max dynamic shared = %d, want %d", attrs.MaxDynamicSharedBytes, info.MaxSharedPerBlockOptin)
		}
	}
	if _, err := d.LoadModule([]byte("not a module")); err == nil {
		t.Error("loaded garbage")
	}
}

// TestGPUOpenClose: Open is one *Device per ordinal, counted; the last
// Close releases it, after which calls fail with ErrClosed and a new Open
// starts afresh. Runs last: it closes the shared device.
func TestGPUOpenClose(t *testing.T) {
	d := testDevice(t)
	again, err := Open(0)
	must(t, err)
	if again != d {
		t.Error("Open(0) twice gave two devices")
	}
	must(t, again.Close()) // one of two: still open
	if _, err := d.Info(); err != nil {
		t.Fatalf("after one of two Closes: %v", err)
	}
	if _, err := Open(-1); err == nil {
		t.Error("Open(-1) succeeded")
	}
	n, _ := cuDeviceGetCount()
	if _, err := Open(n); err == nil {
		t.Errorf("Open(%d) succeeded", n)
	}

	buf, err := d.Alloc(1 << 20)
	must(t, err)
	shared.Forget()
	must(t, d.Close())
	if _, err := d.Alloc(16); !errors.Is(err, ErrClosed) {
		t.Errorf("Alloc after Close: %v, want ErrClosed", err)
	}
	if err := buf.Free(); err != nil {
		t.Errorf("Free after Close: %v", err)
	}
	must(t, d.Close()) // more Closes than Opens: nothing

	fresh := testDevice(t)
	if fresh == d {
		t.Error("Open after the last Close returned the closed device")
	}
	b, err := fresh.Alloc(16)
	must(t, err)
	must(t, b.Free())
}

func BenchmarkLaunch(b *testing.B) {
	d := testDevice(b)
	testCacheDir(b)
	f := vaddFunction(b, d)
	buf, err := d.Alloc(1024)
	must(b, err)
	defer buf.Free()
	b.ResetTimer()
	for range b.N {
		if err := f.Launch([3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, nil, buf, buf, buf, float32(1), int32(32)); err != nil {
			b.Fatal(err)
		}
	}
	must(b, d.Synchronize())
}

// BenchmarkContextSwitch is the cost do adds to every call: lock the
// thread, make the context current.
func BenchmarkContextSwitch(b *testing.B) {
	d := testDevice(b)
	for range b.N {
		if err := d.do(func() error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
