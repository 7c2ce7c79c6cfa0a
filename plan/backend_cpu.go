package plan

import (
	"context"
	"fmt"
	"runtime"

	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/internal/winograd"
	"github.com/ndconv/ndconv/nd"
)

// cpuBackend is the CPU engine (package cpu): always available, its
// memory host memory.
type cpuBackend struct{}

func (cpuBackend) Name() string     { return "cpu" }
func (cpuBackend) Forms() string    { return "cpu" }
func (cpuBackend) GPU() bool        { return false }
func (cpuBackend) Available() error { return nil }

func (b cpuBackend) Device(nums []int) (Device, bool) {
	return Device{Kind: b.Name()}, len(nums) == 0
}

func (cpuBackend) Format(d Device) string { return d.Kind }

func (cpuBackend) Resolve(d Device) Device { return d }

// Devices is the one CPU: its cores and the engine's loops.
func (b cpuBackend) Devices() ([]DeviceInfo, error) {
	name := fmt.Sprintf("%d cores, %s loops", runtime.NumCPU(), cpu.ISA())
	return []DeviceInfo{{Device: Device{Kind: b.Name()}, Name: name, Type: "CPU", Usable: true, Summary: cpu.Model(),
		Detail: fmt.Sprintf("%d cores (GOMAXPROCS %d), %s/%s, SIMD: %s", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, cpu.Features())}}, nil
}

// AutoDevice is none: auto falls back to the CPU of itself.
func (cpuBackend) AutoDevice() (Device, bool) { return Device{}, false }

func (b cpuBackend) Implementations() []Implementation {
	return append(methods(b.Name(),
		func(p *nd.Problem, opt Options) (Runner, error) { return cpu.NewDirect(p, cpuOptions(opt)), nil },
		func(p *nd.Problem, opt Options) (Runner, error) { return cpu.NewSeparable(p, cpuOptions(opt)) }),
		fftOn(b.Name(), fftconv.Supported, func(p *nd.Problem, opt Options) (Runner, error) { return cpu.NewFFT(p, cpuOptions(opt)) }, nil),
		winogradOn(b.Name(), winograd.Why, newCPUWinograd, nil))
}

// newCPUWinograd is the CPU's Winograd engine (internal/winograd), with
// the direct engine for inputs its tiles cannot carry; the tile is
// NDCONV_WINOGRAD_TILE's where set.
func newCPUWinograd(p *nd.Problem, opt Options) (Runner, error) {
	return winograd.NewCPU(p, winograd.Options{Workers: opt.Workers, Tile: winograd.TileFromEnv(), Direct: cpu.NewDirect(p, cpuOptions(opt))})
}

// Identity is none: the CPU has no tuning entries.
func (cpuBackend) Identity(Device) (string, bool) { return "", false }

func (cpuBackend) IsOpen(Device) bool { return false }

func (cpuBackend) Open(Device) (func() error, error) { return nil, nil }

func (cpuBackend) OpenMemory(Device) (DeviceMemory, error) { return hostMemory{}, nil }

// cpuCopyBytes is the size of each buffer of the CPU roofline's copy,
// far beyond any cache.
const cpuCopyBytes = 256 << 20

// MeasureRoofline measures the CPU with workers goroutines, the median of
// 5 runs: a copy of cpuCopyBytes split among them (Go's copy, which moves
// vectors), and on each the engine's widest multiply-add loop (cpu.FMAPeak:
// AVX-512 or AVX2 fused multiply-adds in independent chains), so the
// figure is the vector units' peak that SIMD code such as OpenCV's also
// faces.
func (cpuBackend) MeasureRoofline(_ Device, workers int) (Roofline, error) {
	const repeats = 5
	workers = max(workers, 1)
	r := Roofline{Device: CPUName(workers)}
	src, dst := make([]byte, cpuCopyBytes), make([]byte, cpuCopyBytes)
	for i := range src {
		src[i] = byte(i)
	}
	r.CopyMs = medianMs(repeats, func() {
		parallelChunks(workers, len(src), func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
	})
	r.CopyGBps = 2 * cpuCopyBytes / (r.CopyMs / 1e3) / 1e9

	const rounds = 1 << 22
	madds := make([]int64, workers)
	r.FMAMs = medianMs(repeats, func() {
		parallelChunks(workers, workers, func(lo, _ int) { madds[lo] = cpu.FMAPeak(rounds) })
	})
	var total int64
	for _, m := range madds {
		total += m
	}
	r.FMAGFlops = 2 * float64(total) / (r.FMAMs / 1e3) / 1e9
	return r, nil
}

// CPUName is the processor's model name (cpu.Model) and the cores used.
func CPUName(workers int) string { return fmt.Sprintf("%s (%d cores)", cpu.Model(), workers) }

// cpuScratchBytes is the host memory the CPU engine's method m takes for
// p besides the output, written fresh (auto's CPU estimate).
func cpuScratchBytes(p *nd.Problem, m Method) float64 {
	if m == Separable {
		return float64(cpu.SeparableScratchBytes(p))
	}
	return 0
}

// cpuOptions are the CPU engines' options. Planar is set only where New
// found the method writes the bank planar (writesPlanar), so it passes
// through unchanged.
func cpuOptions(opt Options) cpu.Options {
	return cpu.Options{Workers: opt.Workers, Progress: opt.Progress, Planar: opt.Planar}
}

// writesPlanar reports whether the CPU's engine of method m writes p's
// bank planar itself (cpu.Options.Planar): the direct and FFT methods
// always, the separable method where it runs whole (cpu.SeparablePlanar).
func writesPlanar(p *nd.Problem, m Method) bool {
	return m == Direct || m == FFT || m == Separable && cpu.SeparablePlanar(p)
}

// hostMemory is the CPU's memory: arrays in host memory.
type hostMemory struct{}

// hostBuffer is an array in host memory.
type hostBuffer struct{ a nd.Array }

func (hostMemory) Alloc(dt nd.DType, shape []int) (Buffer, error) {
	a, err := nd.New(dt, shape...)
	if err != nil {
		return nil, err
	}
	return &hostBuffer{a}, nil
}

// Execute runs any runner: every runner takes host arrays.
func (hostMemory) Execute(ctx context.Context, run Runner, dst, src Buffer) (bool, error) {
	d, ok1 := dst.(*hostBuffer)
	s, ok2 := src.(*hostBuffer)
	if !ok1 || !ok2 {
		return false, nil
	}
	return true, run.Execute(ctx, d.a, s.a)
}

func (hostMemory) ToPlanar(dst, src Buffer, bank int) error {
	d, ok1 := dst.(*hostBuffer)
	s, ok2 := src.(*hostBuffer)
	if !ok1 || !ok2 {
		return &nd.ArgumentError{Arg: "array", Msg: "not the CPU's"}
	}
	return nd.ToPlanar(d.a, s.a, bank, 0)
}

func (hostMemory) Close() error { return nil }

func (h *hostBuffer) Write(b []byte) error { copy(h.a.Bytes(), b); return nil }
func (h *hostBuffer) Read(b []byte) error  { copy(b, h.a.Bytes()); return nil }
func (h *hostBuffer) Free() error          { h.a = nd.Array{}; return nil }
