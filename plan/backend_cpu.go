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

// cpuScratchBytes is the host memory the CPU engine's method m takes for
// p besides the output, written fresh (auto's CPU estimate).
func cpuScratchBytes(p *nd.Problem, m Method) float64 {
	if m == Separable {
		return float64(cpu.SeparableScratchBytes(p))
	}
	return 0
}

func cpuOptions(opt Options) cpu.Options {
	return cpu.Options{Workers: opt.Workers, Progress: opt.Progress}
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

func (hostMemory) Close() error { return nil }

func (h *hostBuffer) Write(b []byte) error { copy(h.a.Bytes(), b); return nil }
func (h *hostBuffer) Read(b []byte) error  { copy(b, h.a.Bytes()); return nil }
func (h *hostBuffer) Free() error          { h.a = nd.Array{}; return nil }
