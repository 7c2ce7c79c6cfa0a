package cuda

import (
	"fmt"
	"time"

	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gpucache"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// A Device is the engine's gpu.Device, with cuMemHostRegister
// (gpu.Registrar) and cuFFT (gpu.FFTLibrary).
var (
	_ gpu.Device     = (*Device)(nil)
	_ gpu.Registrar  = (*Device)(nil)
	_ gpu.FFTLibrary = (*Device)(nil)
)

// limits are every CUDA device's bounds on launches: 48 KiB of static
// shared memory without opting in; 30 KiB of weights among the parameters'
// 32,764 bytes (CUDA 12.1 and later); FFT batch buffers of at most 1 GiB,
// beyond which batches gain nothing.
var limits = gpu.Limits{MaxLocalBytes: 48 << 10, MaxGroupsYZ: 65535, MaxParamBytes: 30 << 10, FFTBudget: 1 << 30, DefaultGroupItems: 1024}

// OpenEngineDevice is Open as the engine's device.
func OpenEngineDevice(index int) (gpu.Device, error) {
	d, err := Open(index)
	return gpu.Value[gpu.Device](d, err)
}

func (*Device) Check(*nd.Problem) error   { return nil }
func (d *Device) HostRegs() *gpu.HostRegs { return d.hostRegs }

// MemoryBudget is 70% of the device's free memory.
func (d *Device) MemoryBudget(int) (int64, error) {
	info, err := d.Info()
	return info.FreeMemory / 10 * 7, err
}

// Kernel compiles the family's source with NVRTC through the module cache.
func (d *Device) Kernel(family string, defines []string, name string) (gpu.Kernel, error) {
	src, err := kernels.Source(family)
	if err != nil {
		return nil, err
	}
	mod, err := d.module(src, family+".cu", defines)
	if err != nil {
		return nil, err
	}
	return gpu.Value[gpu.Kernel](d.function(mod, name))
}

// CheckLaunch accepts every launch: the driver refuses a bad one itself.
func (*Device) CheckLaunch(*kernels.Launch, gpu.Kernel) error { return nil }

// LockPages page-locks n bytes of the caller's host memory at addr for
// this context's copies (gpu.PageLocker; flags 0: not portable, not
// mapped); the caller keeps it alive and mapped until UnlockPages.
func (d *Device) LockPages(addr uintptr, n int) error {
	return d.do(func() error { return drv.cuMemHostRegister.Call(addr, uintptr(n), 0) })
}

// UnlockPages unlocks what LockPages locked.
func (d *Device) UnlockPages(addr uintptr) error {
	return d.do(func() error { return drv.cuMemHostUnregister.Call(addr) })
}

// Planner is cuda:index as the engine plans for it, unopened (Pending).
func Planner(index int) (gpu.Planner, error) {
	info, err := StaticInfo(index)
	if err != nil {
		return nil, err
	}
	return staticDevice{index, info}, nil
}

// staticDevice is a device as planning sees it (gpu.Planner), open or not.
type staticDevice struct {
	index int
	info  Info
}

func (staticDevice) Backend() string    { return "cuda" }
func (staticDevice) Limits() gpu.Limits { return limits }

func (s staticDevice) MemoryBudget(int) (int64, error) { return s.info.TotalMemory / 10 * 7, nil }

// Missing counts the launches whose modules are neither loaded on the
// device (where it is open) nor in the module store.
func (s staticDevice) Missing(launches []*kernels.Launch) (int, error) {
	var loaded *moduleCache // nil: no device open, nothing in memory
	if d, ok := registry.Lookup(s.index); ok {
		loaded = &d.modules
	}
	keys := make([]gpucache.Key, len(launches))
	for i, l := range launches {
		src, err := kernels.Source(l.Family)
		if err != nil {
			return 0, err
		}
		if keys[i], _, err = moduleKey(s.info, src, l.Defines); err != nil {
			return 0, err
		}
	}
	return loaded.Missing(moduleStore, keys), nil
}

// CompileSeconds times an uncached NVRTC compile of p's direct kernel.
func CompileSeconds(d *Device, p *nd.Problem, opt gpu.Options) (float64, error) {
	l, err := kernels.NewDirect(p, kernels.DirectOptions{MaxLocalBytes: limits.MaxLocalBytes, MaxGroupsYZ: limits.MaxGroupsYZ, MaxParamBytes: limits.MaxParamBytes, Shape: opt.Tuning.Shape})
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
