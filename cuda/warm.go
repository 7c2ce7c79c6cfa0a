package cuda

import (
	"fmt"
	"time"

	"github.com/ndconv/ndconv/internal/gpucache"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// What a planner asks before it chooses a device: what a device is,
// whether it is open already, and which kernels an engine would still have
// to compile — all without creating a context.

// StaticInfo describes device index as far as the driver tells without a
// context (FreeMemory is 0): cheap, where Devices opens every device.
func StaticInfo(index int) (Info, error) {
	if err := loadDriver(); err != nil {
		return Info{}, err
	}
	info, _, err := queryDevice(index)
	return info, err
}

// IsOpen reports whether device index is open in this process (its
// context made), without opening it.
func IsOpen(index int) bool {
	_, ok := registry.Lookup(index)
	return ok
}

// DirectPending counts the modules an engine from NewDirect(p, opt) would
// compile with NVRTC: those neither loaded on the open device nor in the
// disk cache (CacheDir). It needs the driver and NVRTC (Available), no
// context.
func DirectPending(p *nd.Problem, opt EngineOptions) (int, error) {
	l, err := kernels.NewDirect(p, directOptions(opt.Tuning))
	if err != nil || l == nil {
		return 0, err
	}
	return pending(opt.Device, []*kernels.Launch{l})
}

// SeparablePending is DirectPending for NewSeparable.
func SeparablePending(p *nd.Problem, opt EngineOptions) (int, error) {
	s, err := kernels.NewSeparable(p, separableOptions(opt.Tuning))
	if err != nil || s == nil {
		return 0, err
	}
	var ls []*kernels.Launch
	for _, step := range s.Steps {
		ls = append(ls, step.Launch)
	}
	return pending(opt.Device, ls)
}

// FFTPending is DirectPending for NewFFT: its gather, multiply and scatter
// module (cuFFT's plans are made, not compiled).
func FFTPending(p *nd.Problem, opt EngineOptions) (int, error) {
	f, err := kernels.NewFFTConv(p, kernels.FFTConvOptions{RealBlocks: true, Budget: fftBudget})
	if err != nil || f == nil {
		return 0, err
	}
	return pending(opt.Device, []*kernels.Launch{{Family: "fftconv", Defines: f.Defines}})
}

// pending counts the distinct modules of launches that device index has
// neither loaded nor on disk.
func pending(index int, launches []*kernels.Launch) (int, error) {
	info, err := StaticInfo(index)
	if err != nil {
		return 0, err
	}
	nvrtcVer, err := nvrtcVersion()
	if err != nil {
		return 0, err
	}
	var loaded *moduleCache
	if d, ok := registry.Lookup(index); ok {
		loaded = &d.modules
	}
	arch := info.ComputeCapability.Arch()
	seen := map[gpucache.Key]bool{}
	n := 0
	for _, l := range launches {
		src, err := kernels.Source(l.Family)
		if err != nil {
			return 0, err
		}
		key := moduleKeyOf(src, compileOptions(arch, l.Defines), arch, nvrtcVer, driver.version)
		if seen[key] {
			continue
		}
		seen[key] = true
		if loaded != nil && loaded.Has(moduleStore, key) || loaded == nil && moduleStore.Has(key) {
			continue
		}
		n++
	}
	return n, nil
}

// CompileSeconds times one NVRTC compilation of the direct kernel for p
// on d, bypassing both caches: what a module missing from them costs, as
// the tuner records it.
func CompileSeconds(d *Device, p *nd.Problem, opt EngineOptions) (float64, error) {
	l, err := kernels.NewDirect(p, directOptions(opt.Tuning))
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
