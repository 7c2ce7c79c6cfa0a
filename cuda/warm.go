package cuda

import (
	"fmt"
	"slices"
	"time"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/gpu"
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
// compile with NVRTC for its executions from host memory: those neither
// loaded on the open device nor in the disk cache (CacheDir). It needs the
// driver and NVRTC (Available), no context; the chunks are those of a
// device with its whole memory free.
func DirectPending(p *nd.Problem, opt EngineOptions) (int, error) {
	return pending(p, opt, direct{})
}

// SeparablePending is DirectPending for NewSeparable.
func SeparablePending(p *nd.Problem, opt EngineOptions) (int, error) {
	if !p.Separable() {
		return 0, nil
	}
	return pending(p, opt, separable{})
}

// FFTPending is DirectPending for NewFFT, roughly: one module (its
// gather, multiply and scatter kernels), whatever the caches hold — the
// FFT engine chooses its kernels' specialisation as it builds.
func FFTPending(p *nd.Problem, opt EngineOptions) (int, error) {
	return 1, nil
}

// modules lists nothing for the FFT method: its engine compiles its
// modules as it builds each block geometry (Compile leaves them to the
// first Execute).
func (m *fftMethod) modules(*Engine, *nd.Problem) ([]*kernels.Launch, error) { return nil, nil }

// pending counts the distinct modules of method m's launches for p that
// device opt.Device has neither loaded nor on disk.
func pending(p *nd.Problem, opt EngineOptions, m method) (int, error) {
	info, err := StaticInfo(opt.Device)
	if err != nil {
		return 0, err
	}
	nvrtcVer, err := nvrtcVersion()
	if err != nil {
		return 0, err
	}
	budget := opt.MemoryBudget
	if budget <= 0 {
		budget = info.TotalMemory / 10 * 7
	}
	e := &Engine{p: p, opt: opt, method: m} // no device: options only
	launches, err := e.moduleLaunches(budget)
	if err != nil {
		return 0, err
	}
	var loaded *moduleCache // nil: no device open, nothing in memory
	if d, ok := registry.Lookup(opt.Device); ok {
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

// moduleLaunches lists the launches naming the modules of every chunk
// geometry the pipeline cuts the problem into within budget.
func (e *Engine) moduleLaunches(budget int64) ([]*kernels.Launch, error) {
	chunks, err := e.chunksWithin(budget)
	if err != nil {
		return nil, err
	}
	return e.chunkModules(chunks)
}

// chunkModules lists the launches naming the modules of chunks, one set per
// chunk geometry.
func (e *Engine) chunkModules(chunks []chunk.Chunk) ([]*kernels.Launch, error) {
	var all []*kernels.Launch
	var geometries []*nd.Problem
	for _, c := range chunks {
		if slices.ContainsFunc(geometries, func(q *nd.Problem) bool { return chunk.SameGeometry(q, c.Problem) }) {
			continue
		}
		geometries = append(geometries, c.Problem)
		ls, err := e.method.modules(e, c.Problem)
		if err != nil {
			return nil, err
		}
		all = append(all, ls...)
	}
	return all, nil
}

// Compile compiles now, or loads from the disk cache, every kernel module
// the engine's executions from host memory will launch, so that the first
// Execute finds them ready: a caller that knows the problem before its
// data (an input file's header) overlaps the compilations with the read.
func (e *Engine) Compile() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pieces == nil {
		chunks, err := e.chunks()
		if err != nil {
			return err
		}
		e.pieces = chunks
	}
	launches, err := e.chunkModules(e.pieces)
	if err != nil {
		return err
	}
	return gpu.BuildAll(launches, func(src string, l *kernels.Launch) error {
		_, err := e.dev.Module(src, l.Family+".cu", l.Defines)
		return err
	})
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
