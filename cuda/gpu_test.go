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
	"unsafe"

	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gpucache"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/nd"
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
	dir, _ := moduleStore.Dir()
	return dir
}

// testStream is a new stream, closed when t ends.
func testStream(t testing.TB, d *Device) *Stream {
	t.Helper()
	q, err := d.NewQueue()
	must(t, err)
	t.Cleanup(func() { q.Close() })
	return q.(*Stream)
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
	m, err := d.module(vaddSource, "vadd.cu", append([]string{"OFFSET=0.5f"}, defines...))
	must(t, err)
	f, err := d.function(m, "vadd")
	must(t, err)
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

func grid1D(n, block int) [3]int { return [3]int{(n + block - 1) / block, 1, 1} }

// runVadd uploads a and b, launches vadd on s and returns c. It returns
// its errors rather than failing t, to be usable from any goroutine.
func runVadd(d *Device, f *Function, a, b []float32, scale float32, s *Stream) ([]float32, error) {
	n := len(a)
	bufs := make([]gpu.Buffer, 3)
	for i := range bufs {
		var err error
		if bufs[i], err = d.Scratch(4 * n); err != nil {
			return nil, err
		}
		defer bufs[i].Free()
	}
	c := make([]float32, n)
	err := errors.Join(
		s.Write(bufs[0], 0, nd.AsBytes(a)),
		s.Write(bufs[1], 0, nd.AsBytes(b)),
		s.Launch(f, grid1D(n, 256), [3]int{256, 1, 1}, bufs[0], bufs[1], bufs[2], scale, int32(n)),
		s.Read(nd.AsBytes(c), bufs[2], 0))
	if err == nil {
		err = s.Finish()
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

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
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
	if info.SMs <= 0 || !info.ComputeCapability.Supported() || info.TotalMemory <= 0 || info.FreeMemory <= 0 ||
		info.FreeMemory > info.TotalMemory || info.MaxSharedPerBlock < 48<<10 || info.MaxSharedPerBlockOptin < info.MaxSharedPerBlock {
		t.Errorf("implausible info %+v", info)
	}
	if info.DriverVersion.Major < 12 || info.NVRTCVersion.Major < 12 {
		t.Errorf("driver %v, NVRTC %v", info.DriverVersion, info.NVRTCVersion)
	}
	t.Logf("driver library %s, NVRTC %s", driverLib.Path(), nvrtcLib.Path())
}

func TestGPUVectorAdd(t *testing.T) {
	d := testDevice(t)
	testCacheDir(t)
	f := vaddFunction(t, d)
	s := testStream(t, d)
	for _, n := range []int{1, 255, 256, 1000, 1 << 20} {
		a, b := testInputs(n, n)
		must(t, checkVadd(d, f, a, b, 2, s))
	}
	if n := f.MaxGroupSize(); n < 256 || n > 1024 {
		t.Errorf("vadd: MaxGroupSize %d", n)
	}
}

// TestGPUPinnedAsync runs upload, kernel and download on one stream from
// pinned memory, timed by events.
func TestGPUPinnedAsync(t *testing.T) {
	d := testDevice(t)
	testCacheDir(t)
	f := vaddFunction(t, d)
	const n = 1 << 22
	var views [3][]float32
	devs := make([]gpu.Buffer, 3)
	for i := range views {
		h, err := d.AllocHost(4 * n)
		must(t, err)
		defer h.Free()
		if len(h.Bytes()) != 4*n {
			t.Fatalf("Bytes has %d bytes, want %d", len(h.Bytes()), 4*n)
		}
		views[i] = unsafe.Slice((*float32)(unsafe.Pointer(&h.Bytes()[0])), n) // pinned memory is page-aligned
		devs[i], err = d.Alloc(4 * n)
		must(t, err)
		defer devs[i].Free()
	}
	a, b, c := views[0], views[1], views[2]
	ra, rb := testInputs(n, 5)
	copy(a, ra)
	copy(b, rb)
	s := testStream(t, d)
	start, err := d.NewEvent()
	must(t, err)
	defer start.Close()
	end, err := d.NewEvent()
	must(t, err)
	defer end.Close()

	must(t, s.Record(start))
	must(t, s.Write(devs[0], 0, nd.AsBytes(a)))
	must(t, s.Write(devs[1], 0, nd.AsBytes(b)))
	must(t, s.Launch(f, grid1D(n, 512), [3]int{512, 1, 1}, devs[0], devs[1], devs[2], float32(-1), int32(n)))
	must(t, s.Read(nd.AsBytes(c), devs[2], 0))
	must(t, s.Record(end))
	must(t, end.Synchronize())
	took, err := end.Since(start)
	if err != nil || took <= 0 {
		t.Errorf("elapsed %v, %v", took, err)
	}
	if i := firstMismatch(c, vaddReference(ra, rb, -1, 0.5)); i >= 0 {
		t.Fatalf("c[%d] = %v", i, c[i])
	}
	t.Logf("48 MiB through pinned memory + kernel: %v (%.1f GB/s)", took, float64(3*4*n)/1e9/took.Seconds())
}

func TestGPUFillAndCopy(t *testing.T) {
	d := testDevice(t)
	s := testStream(t, d)
	src, err := d.Alloc(1000)
	must(t, err)
	defer src.Free()
	dst, err := d.Alloc(1000)
	must(t, err)
	defer dst.Free()
	must(t, s.Fill(src, 0, 1000, 0x11))
	must(t, s.Fill(src, 100, 50, 0xab))
	must(t, s.Fill(dst, 0, 1000, 0))
	must(t, s.Copy(dst, 500, src, 90, 70)) // 10 × 0x11, 50 × 0xab, 10 × 0x11
	must(t, s.Fill(dst, 0, 5, 0xee))
	must(t, s.Copy(dst, 900, src, 120, 10))
	got := make([]byte, 1000)
	must(t, s.Read(got, dst, 0))
	part := make([]byte, 20)
	must(t, s.Read(part, dst, 555))
	must(t, s.Finish())
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
	if !bytes.Equal(part, want[555:575]) {
		t.Errorf("partial download %x", part)
	}
	var re *RangeError
	if err := s.Read(make([]byte, 10), dst, 995); !errors.As(err, &re) {
		t.Errorf("reading past the end: %v", err)
	}
}

// trimPool frees the pool's idle blocks, for a test that counts them.
func trimPool(t testing.TB, d *Device) {
	must(t, d.do(func() error {
		var errs []error
		for _, p := range d.pool.Drain() {
			errs = append(errs, cuMemFree(p))
		}
		return errors.Join(errs...)
	}))
}

func TestGPUPoolReuse(t *testing.T) {
	d := testDevice(t)
	trimPool(t, d)
	before := d.pool.Stats()
	b1, err := d.Scratch(1000)
	must(t, err)
	ptr := b1.(*Buffer).ptr
	must(t, b1.Free())
	must(t, b1.Free())        // twice: nothing
	b2, err := d.Scratch(900) // the same 1024-byte class
	must(t, err)
	if b2.(*Buffer).ptr != ptr || b2.Size() != 900 {
		t.Errorf("pool did not reuse the block: %#x vs %#x", b2.(*Buffer).ptr, ptr)
	}
	b3, err := d.Scratch(900) // the block is taken: a new one
	must(t, err)
	if b3.(*Buffer).ptr == ptr {
		t.Error("pool handed one block out twice")
	}
	s := testStream(t, d)
	must(t, s.Fill(b3, 0, 900, 1)) // usable
	must(t, s.Finish())
	b2.Free()
	b3.Free()
	st := d.pool.Stats()
	if st.Hits-before.Hits != 1 || st.Misses-before.Misses != 2 || st.IdleBytes != 2048 {
		t.Errorf("stats %+v (before %+v)", st, before)
	}
	trimPool(t, d)
	if st := d.pool.Stats(); st.IdleBytes != 0 {
		t.Errorf("after trimming: %+v", st)
	}
}

// TestGPUHostFreeList: the engines' staging (AllocHost) goes back to the
// device's free list and is handed out again for its size class, never
// twice at once, and copies through it work.
func TestGPUHostFreeList(t *testing.T) {
	d := testDevice(t)
	h1, err := d.AllocHost(3000)
	must(t, err)
	p := &h1.Bytes()[0]
	if len(h1.Bytes()) != 3000 {
		t.Fatalf("Bytes has %d bytes, want 3000", len(h1.Bytes()))
	}
	must(t, h1.Free())
	must(t, h1.Free())           // twice: nothing
	h2, err := d.AllocHost(2900) // the same 3072-byte class
	must(t, err)
	h3, err := d.AllocHost(2900)
	must(t, err)
	if &h2.Bytes()[0] != p || &h3.Bytes()[0] == p {
		t.Errorf("free list: %p, %p; want the freed %p once", &h2.Bytes()[0], &h3.Bytes()[0], p)
	}
	buf, err := d.Alloc(2900)
	must(t, err)
	defer buf.Free()
	for i := range h2.Bytes() {
		h2.Bytes()[i] = byte(i * 7)
	}
	s := testStream(t, d)
	must(t, s.Write(buf, 0, h2.Bytes()))
	must(t, s.Read(h3.Bytes(), buf, 0))
	must(t, s.Finish())
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
// each with its own data and scale, half on their own stream and half on
// one they share.
func TestGPUConcurrentLaunches(t *testing.T) {
	d := testDevice(t)
	testCacheDir(t)
	f := vaddFunction(t, d)
	common := testStream(t, d)
	gputest.Together(8, func(g int) {
		s := common
		if g%2 == 1 {
			q, err := d.NewQueue()
			if err != nil {
				t.Error(err)
				return
			}
			defer q.Close()
			s = q.(*Stream)
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
	_, err := d.module(src, "broken.cu", []string{"KW=5", "TILE=16"})
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("error %T %v, want *CompileError", err, err)
	}
	if !strings.Contains(ce.Log, "undefined_thing") || !slices.Contains(ce.Options, "-DKW=5") || !slices.Contains(ce.Options, "-DTILE=16") ||
		!slices.Contains(ce.Options, "--gpu-architecture="+d.info.ComputeCapability.Arch()) || ce.Program != "broken.cu" {
		t.Errorf("compile error lacks detail: %+v", ce)
	}
	if !strings.Contains(err.Error(), "-DKW=5") || !strings.Contains(err.Error(), "undefined_thing") {
		t.Errorf("message: %v", err)
	}
	t.Logf("%v", err)
	if s := d.modules.Stats(); s.Builds == 0 {
		t.Error("the failed compile was not counted")
	}
}

// TestGPUBadLaunch: an invalid configuration is an *Error naming
// CUDA_ERROR_INVALID_VALUE, and the context goes on working.
func TestGPUBadLaunch(t *testing.T) {
	d := testDevice(t)
	testCacheDir(t)
	f := vaddFunction(t, d)
	s := testStream(t, d)
	buf, err := d.Alloc(4 * 4096)
	must(t, err)
	defer buf.Free()
	err = s.Launch(f, [3]int{1, 1, 1}, [3]int{2048, 1, 1}, buf, buf, buf, float32(1), int32(4096))
	var e *Error
	if !errors.As(err, &e) || e.Code != codeInvalidValue || e.Name != "CUDA_ERROR_INVALID_VALUE" || e.Call != "cuLaunchKernel" {
		t.Fatalf("launch with 2048 threads: %v", err)
	}
	t.Logf("%v", err)
	if err := s.Launch(f, [3]int{1, 1, 1}, [3]int{32, 1, 1}, buf, buf, 7); err == nil {
		t.Error("a Go int argument was accepted")
	}
	must(t, s.Finish())
	a, b := testInputs(5000, 9)
	if err := checkVadd(d, f, a, b, 3, s); err != nil {
		t.Errorf("after the bad launch: %v", err)
	}
}

func TestGPUHugeAllocation(t *testing.T) {
	d := testDevice(t)
	const pib = 1 << 50
	if b, err := d.Alloc(pib); err == nil {
		b.Free()
		t.Fatal("allocated a PiB")
	} else if !isOutOfMemory(err) {
		t.Errorf("1 PiB: %v, want out of memory", err)
	} else {
		t.Logf("%v", err)
	}
	if _, err := d.Scratch(pib); err == nil {
		t.Error("the pool allocated a PiB")
	}
	if _, err := d.AllocHost(pib); err == nil {
		t.Error("pinned a PiB")
	}
	b, err := d.Alloc(1 << 20)
	must(t, err)
	must(t, b.Free())
}

// TestGPUWrapExternal: device memory of this device is wrapped in place
// (and not freed by the wrapper), host memory and a range past the
// allocation are refused with an *nd.ArgumentError.
func TestGPUWrapExternal(t *testing.T) {
	d := testDevice(t)
	own, err := d.Alloc(4096)
	must(t, err)
	defer own.Free()
	ptr := uintptr(own.(*Buffer).ptr)
	w, err := d.WrapExternal(ptr+1024, 1024)
	must(t, err)
	s := testStream(t, d)
	must(t, s.Fill(own, 0, 4096, 0))
	must(t, s.Fill(w, 0, 1024, 7))
	must(t, w.Free()) // the caller's: stays
	got := make([]byte, 4096)
	must(t, s.Read(got, own, 0))
	must(t, s.Finish())
	if got[1023] != 0 || got[1024] != 7 || got[2047] != 7 || got[2048] != 0 {
		t.Errorf("writing through the wrapper: %v", got[1020:1030])
	}
	host := make([]byte, 64)
	var ae *nd.ArgumentError
	for name, c := range map[string]struct {
		ptr uintptr
		n   int
	}{"host memory": {uintptr(unsafe.Pointer(&host[0])), 64}, "past the end": {ptr + 1024, 1 << 30}, "NULL": {0, 16}} {
		if _, err := d.WrapExternal(c.ptr, c.n); !errors.As(err, &ae) {
			t.Errorf("%s: %v, want an *nd.ArgumentError", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	runtime.KeepAlive(host)
}

// dropModules forgets d's loaded modules, as a new process would not have
// them, so that the next module call goes to the disk cache.
func dropModules(t *testing.T, d *Device) {
	mods := d.modules.Drain()
	must(t, d.do(func() error {
		for _, m := range mods {
			if err := drv.cuModuleUnload.Call(m); err != nil {
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
	s := testStream(t, d)
	step := func(name string, wantDelta gpucache.Stats) {
		t.Helper()
		before := d.modules.Stats()
		start := time.Now()
		f := vaddFunction(t, d, nonce)
		took := time.Since(start)
		after := d.modules.Stats()
		delta := gpucache.Stats{MemoryHits: after.MemoryHits - before.MemoryHits, DiskHits: after.DiskHits - before.DiskHits, Builds: after.Builds - before.Builds,
			DiskWrites: after.DiskWrites - before.DiskWrites, Rejected: after.Rejected - before.Rejected, DiskErrors: after.DiskErrors - before.DiskErrors}
		if delta != wantDelta {
			t.Errorf("%s: stats changed by %+v, want %+v", name, delta, wantDelta)
		}
		if err := checkVadd(d, f, a, b, 2, s); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		t.Logf("%s: %v", name, took)
	}
	step("cold", gpucache.Stats{Builds: 1, DiskWrites: 1})
	step("warm", gpucache.Stats{MemoryHits: 1})
	dropModules(t, d)
	step("disk", gpucache.Stats{DiskHits: 1})

	files, _ := os.ReadDir(dir)
	if len(files) != 1 {
		t.Fatalf("cache directory holds %d files, want 1", len(files))
	}
	path := filepath.Join(dir, files[0].Name())
	data, _ := os.ReadFile(path)
	data[len(data)/2] ^= 0x40
	must(t, os.WriteFile(path, data, 0o644))
	dropModules(t, d)
	step("damaged file", gpucache.Stats{Builds: 1, DiskWrites: 1, Rejected: 1})

	// A checksum that holds over an image the driver refuses. (Not one
	// that claims to be ELF: the driver trusts an ELF header's offsets.)
	var key gpucache.Key
	raw, err := hex.DecodeString(strings.TrimSuffix(files[0].Name(), moduleStore.Suffix))
	must(t, err)
	copy(key[:], raw)
	must(t, os.WriteFile(path, moduleStore.Encode(key, []byte("no module at all")), 0o644))
	dropModules(t, d)
	step("refused file", gpucache.Stats{Builds: 1, DiskWrites: 1, Rejected: 1})
	step("warm again", gpucache.Stats{MemoryHits: 1})

	must(t, moduleStore.Clear())
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("clearing the store left %d files", len(files))
	}
}

func TestGPUModuleCompilesOnce(t *testing.T) {
	d := testDevice(t)
	testCacheDir(t)
	defines := []string{"OFFSET=0.5f", fmt.Sprintf("NONCE=%d", time.Now().UnixNano())}
	before := d.modules.Stats()
	mods := make([]uintptr, 8)
	gputest.Together(len(mods), func(i int) {
		m, err := d.module(vaddSource, "vadd.cu", defines)
		if err != nil {
			t.Error(err)
		}
		mods[i] = m
	})
	if got := d.modules.Stats().Builds - before.Builds; got != 1 {
		t.Errorf("%d compilations for 8 concurrent calls", got)
	}
	for _, m := range mods {
		if m != mods[0] {
			t.Fatal("concurrent callers got different modules")
		}
	}
}

// TestGPUModuleLoad: a CUBIN loads and its kernel runs; a missing kernel
// is an error naming it; an image that is no module is refused.
func TestGPUModuleLoad(t *testing.T) {
	d := testDevice(t)
	src := `extern "C" __global__ void bump(int* counter, int by) { counter[threadIdx.x] += by; }`
	image, err := compile(src, "bump.cu", compileOptions(d.info.ComputeCapability.Arch(), nil))
	must(t, err)
	m, err := d.loadModule(image)
	must(t, err)
	defer d.do(func() error { return drv.cuModuleUnload.Call(m) })
	f, err := d.function(m, "bump")
	must(t, err)
	counter, err := d.Alloc(16)
	must(t, err)
	defer counter.Free()
	s := testStream(t, d)
	must(t, s.Write(counter, 0, nd.AsBytes([]int32{1, 2, 3, 4})))
	must(t, s.Launch(f, [3]int{1, 1, 1}, [3]int{4, 1, 1}, counter, int32(10)))
	got := make([]int32, 4)
	must(t, s.Read(nd.AsBytes(got), counter, 0))
	must(t, s.Finish())
	if !slices.Equal(got, []int32{11, 12, 13, 14}) {
		t.Errorf("counter = %v", got)
	}
	if _, err := d.function(m, "no_such_kernel"); err == nil || !strings.Contains(err.Error(), "no_such_kernel") {
		t.Errorf("missing kernel: %v", err)
	}
	if _, err := d.loadModule([]byte("not a module")); err == nil {
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
	n, _ := out[int32](&drv.cuDeviceGetCount)
	if _, err := Open(int(n)); err == nil {
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
	s := testStream(b, d)
	buf, err := d.Alloc(1024)
	must(b, err)
	defer buf.Free()
	b.ResetTimer()
	for range b.N {
		if err := s.Launch(f, [3]int{1, 1, 1}, [3]int{32, 1, 1}, buf, buf, buf, float32(1), int32(32)); err != nil {
			b.Fatal(err)
		}
	}
	must(b, s.Finish())
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
