package cuda

import (
	"fmt"
	"time"

	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gpucache"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// The engine (internal/gpu) is written once for every GPU API; this file
// is how a CUDA device serves it: gpu.Device over the driver calls, with
// cuMemHostRegister (gpu.Registrar) and cuFFT (gpu.FFTLibrary) as the
// capabilities only CUDA has.

// maxStaticShared is the static shared memory a tile may declare: CUDA
// allows 48 KiB without opting in.
const maxStaticShared = 48 << 10

// maxParamTapBytes is how many bytes of weights a launch passes among its
// kernel parameters (CUDA 12.1 and later take 32,764 bytes of parameters
// on every supported GPU); larger banks read theirs from a buffer.
const maxParamTapBytes = 30 << 10

// limits are every CUDA device's bounds on launches (the FFT's batch
// buffers at most 1 GiB: beyond it, batches gain nothing measurable).
var limits = gpu.Limits{MaxLocalBytes: maxStaticShared, MaxGroupsYZ: 65535, MaxParamBytes: maxParamTapBytes, FFTBudget: 1 << 30, DefaultGroupItems: 1024}

// OpenEngineDevice opens cuda:index as the engine's device; its Close
// balances the Open.
func OpenEngineDevice(index int) (gpu.Device, error) {
	d, err := Open(index)
	return gpu.Value[gpu.Device](engineDevice{d}, err)
}

// engineDevice is a Device as gpu.Device.
type engineDevice struct{ *Device }

var (
	_ gpu.Device     = engineDevice{}
	_ gpu.Registrar  = engineDevice{}
	_ gpu.FFTLibrary = engineDevice{}
	_ gpu.Queue      = (*Stream)(nil)
)

func (engineDevice) Backend() string           { return "cuda" }
func (engineDevice) Limits() gpu.Limits        { return limits }
func (engineDevice) Check(*nd.Problem) error   { return nil }
func (d engineDevice) HostRegs() *gpu.HostRegs { return d.hostRegs }

// MemoryBudget is 70% of the device's free memory.
func (d engineDevice) MemoryBudget(int) (int64, error) {
	info, err := d.Info()
	return info.FreeMemory / 10 * 7, err
}

func (d engineDevice) Alloc(n int) (gpu.Buffer, error) {
	return gpu.Value[gpu.Buffer](d.Device.Alloc(n))
}

// Scratch comes from the device's pool: cuMemAlloc synchronises the
// device, and launches' parameters and temporaries come and go often.
func (d engineDevice) Scratch(n int) (gpu.Buffer, error) {
	return gpu.Value[gpu.Buffer](d.Pool().Get(n))
}

func (d engineDevice) AllocHost(n int) (gpu.HostBuffer, error) {
	return gpu.Value[gpu.HostBuffer](d.pooledHost(n))
}

// WrapExternal is WrapPointer for the engine: a gpu.Buffer over the
// caller's device memory, which the engine reads and writes in place
// (what plan wraps __cuda_array_interface__ and DLPack arrays with).
func (d engineDevice) WrapExternal(ptr uintptr, n int) (gpu.Buffer, error) {
	return gpu.Value[gpu.Buffer](d.WrapPointer(DevicePtr(ptr), n))
}

// CallerQueue is the caller's stream h as a queue the engine orders its
// work against (Engine.ExecuteDeviceAfter).
func (d engineDevice) CallerQueue(h uintptr) gpu.Queue { return d.CallerStream(h) }

func (d engineDevice) NewQueue() (gpu.Queue, error) { return gpu.Value[gpu.Queue](d.NewStream()) }

func (d engineDevice) NewEvent() (gpu.Event, error) { return gpu.Value[gpu.Event](d.Device.NewEvent()) }

// Kernel compiles the family's source with NVRTC through the module
// cache.
func (d engineDevice) Kernel(family string, defines []string, name string) (gpu.Kernel, error) {
	src, err := kernels.Source(family)
	if err != nil {
		return nil, err
	}
	mod, err := d.Module(src, family+".cu", defines)
	if err != nil {
		return nil, err
	}
	f, err := mod.Function(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// CheckLaunch accepts every launch: the driver refuses a bad one at
// launch, with its reason.
func (engineDevice) CheckLaunch(*kernels.Launch, gpu.Kernel) error { return nil }

func (d engineDevice) Missing(launches []*kernels.Launch) (int, error) {
	return missing(d.index, d.info, launches)
}

func (d engineDevice) FFTAvailable() error { return loadCUFFT() }

func (d engineDevice) FFTPlan(lengths []int, batch int, kind gpu.FFTKind, q gpu.Queue) (gpu.FFTPlan, error) {
	p, err := d.newFFTPlan(lengths, batch, kind, q.(*Stream))
	if err != nil {
		return nil, err
	}
	return p, nil
}

// LockPages page-locks host memory for direct copies (gpu.PageLocker).
func (d *Device) LockPages(addr uintptr, n int) error {
	return d.do(func() error { return cuMemHostRegister(addr, n) })
}

// UnlockPages unlocks what LockPages locked.
func (d *Device) UnlockPages(addr uintptr) error {
	return d.do(func() error { return cuMemHostUnregister(addr) })
}

// Planner is cuda:index as the engine plans for it, without opening it:
// what Pending asks.
func Planner(index int) (gpu.Planner, error) {
	info, err := StaticInfo(index)
	if err != nil {
		return nil, err
	}
	return staticDevice{index, info}, nil
}

// staticDevice is a device not opened: its limits, total memory and cache.
type staticDevice struct {
	index int
	info  Info
}

func (staticDevice) Backend() string    { return "cuda" }
func (staticDevice) Limits() gpu.Limits { return limits }

func (s staticDevice) MemoryBudget(int) (int64, error) { return s.info.TotalMemory / 10 * 7, nil }

func (s staticDevice) Missing(launches []*kernels.Launch) (int, error) {
	return missing(s.index, s.info, launches)
}

// missing counts the launches whose modules are neither loaded on
// cuda:index (where it is open) nor in the module store.
func missing(index int, info Info, launches []*kernels.Launch) (int, error) {
	nvrtcVer, err := nvrtcVersion()
	if err != nil {
		return 0, err
	}
	var loaded *moduleCache // nil: no device open, nothing in memory
	if d, ok := registry.Lookup(index); ok {
		loaded = &d.modules
	}
	arch := info.ComputeCapability.Arch()
	keys := make([]gpucache.Key, 0, len(launches))
	for _, l := range launches {
		src, err := kernels.Source(l.Family)
		if err != nil {
			return 0, err
		}
		keys = append(keys, moduleKeyOf(src, compileOptions(arch, l.Defines), arch, nvrtcVer, driver.version))
	}
	return loaded.Missing(moduleStore, keys), nil
}

// The gpu.Queue methods of a Stream.

// Launch queues kernel k (a *Function) over groups × local threads.
func (s *Stream) Launch(k gpu.Kernel, groups, local [3]int, args ...any) error {
	var grid, block [3]uint32
	for i := range 3 {
		grid[i], block[i] = uint32(groups[i]), uint32(local[i])
	}
	return k.(*Function).Launch(grid, block, 0, s, args...)
}

func (s *Stream) Write(dst gpu.Buffer, off int, src []byte) error {
	return dst.(*Buffer).CopyFromHostAsync(off, src, s)
}

func (s *Stream) Read(dst []byte, src gpu.Buffer, off int) error {
	return src.(*Buffer).CopyToHostAsync(dst, off, s)
}

func (s *Stream) Copy(dst gpu.Buffer, dstOff int, src gpu.Buffer, srcOff, n int) error {
	return dst.(*Buffer).CopyFromAsync(dstOff, src.(*Buffer), srcOff, n, s)
}

func (s *Stream) Fill(dst gpu.Buffer, off, n int, value byte) error {
	return dst.(*Buffer).MemsetAsync(off, n, value, s)
}

func (s *Stream) Record(ev gpu.Event) error { return ev.(*Event).Record(s) }
func (s *Stream) Wait(ev gpu.Event) error   { return s.WaitEvent(ev.(*Event)) }
func (s *Stream) Flush() error              { return nil } // CUDA submits as it queues
func (s *Stream) Finish() error             { return s.Synchronize() }

// Since is the GPU time from start's completion to e's (gpu.Event).
func (e *Event) Since(start gpu.Event) (time.Duration, error) {
	ms, err := e.MillisecondsSince(start.(*Event))
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}

// MaxGroupSize is the most threads a block of f may have, given its
// registers (gpu.Kernel).
func (f *Function) MaxGroupSize() int {
	a, err := f.Attributes()
	if err != nil {
		return 0
	}
	return a.MaxThreadsPerBlock
}

// Exec queues the transform from in to out on the plan's stream
// (gpu.FFTPlan).
func (p *fftPlan) Exec(in, out gpu.Buffer) error {
	return p.exec(in.(*Buffer).Ptr(), out.(*Buffer).Ptr())
}

// Destroy releases the plan and its work area (gpu.FFTPlan).
func (p *fftPlan) Destroy() error { return p.destroy() }

// CompileSeconds times one NVRTC compilation of p's direct kernel, with no
// cache: what the first use of a new kernel costs.
func CompileSeconds(d *Device, p *nd.Problem, opt gpu.Options) (float64, error) {
	t := opt.Tuning
	l, err := kernels.NewDirect(p, kernels.DirectOptions{MaxLocalBytes: limits.MaxLocalBytes, MaxGroupsYZ: limits.MaxGroupsYZ, MaxParamBytes: limits.MaxParamBytes, Shape: t.Shape})
	if err != nil || l == nil {
		return 0, fmt.Errorf("cuda: no direct kernel to compile: %v", err)
	}
	src, err := kernels.Source(l.Family)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	_, err = compile(src, l.Family+".cu", compileOptions(d.info.ComputeCapability.Arch(), l.Defines))
	return time.Since(start).Seconds(), err
}
