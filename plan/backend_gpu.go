package plan

import (
	"context"
	"errors"

	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/nd"
)

// gpuBinding is a GPU API's package as the planner uses it: how to open
// one of its devices for the engine (internal/gpu, written once for every
// API) and how to plan for one without opening it. The backends of the
// GPU APIs (backend_cuda.go, backend_opencl.go) add their device strings
// and listings.
type gpuBinding struct {
	name    string
	open    func(Device) (gpu.Device, error)
	planner func(Device) (gpu.Planner, error)
	// fftWhy says why the FFT method cannot run a problem (nil: it can).
	fftWhy func(*nd.Problem) error
	// fftPending counts the FFT's kernels as one to build when warming up.
	fftPending bool
}

// gpuOptions are the engine's options of a plan's.
func gpuOptions(opt Options) gpu.Options {
	return gpu.Options{Progress: opt.Progress, Tuning: opt.Tuning, Timeline: opt.Timeline, PieceBytes: opt.PieceBytes, MemoryBudget: opt.DeviceMemory}
}

// implementations are the binding's direct, separable and FFT methods.
func (b gpuBinding) implementations() []Implementation {
	newEngine := func(make func(gpu.Device, *nd.Problem, gpu.Options) (*gpu.Engine, error)) func(*nd.Problem, Options) (Runner, error) {
		return func(p *nd.Problem, opt Options) (Runner, error) {
			dev, err := b.open(opt.Device)
			if err != nil {
				return nil, err
			}
			return make(dev, p, gpuOptions(opt))
		}
	}
	pending := func(m gpu.Method) func(*nd.Problem, Options) (int, error) {
		return func(p *nd.Problem, opt Options) (int, error) {
			pl, err := b.planner(opt.Device)
			if err != nil {
				return 0, err
			}
			return gpu.Pending(pl, m, p, gpuOptions(opt))
		}
	}
	newFFT := func(p *nd.Problem, opt Options) (Runner, error) {
		dev, err := b.open(opt.Device)
		if err != nil {
			return nil, err
		}
		return gpu.NewFFT(dev, func() (gpu.Device, error) { return b.open(opt.Device) }, p, gpuOptions(opt))
	}
	var fftPending func(*nd.Problem, Options) (int, error)
	if b.fftPending {
		fftPending = pending(gpu.FFT)
	}
	return append(withPending(methods(b.name, newEngine(gpu.NewDirect), newEngine(gpu.NewSeparable)), pending(gpu.Direct), pending(gpu.Separable)),
		fftOn(b.name, b.fftWhy, newFFT, fftPending))
}

// openMemory opens the device's memory: arrays are gpu.Arrays, moved on
// the memory's own queue.
func (b gpuBinding) openMemory(d Device) (DeviceMemory, error) {
	dev, err := b.open(d)
	if err != nil {
		return nil, err
	}
	q, err := dev.NewQueue()
	if err != nil {
		dev.Close()
		return nil, err
	}
	return gpuMemory{dev, q}, nil
}

// gpuMemory is a GPU's memory.
type gpuMemory struct {
	dev   gpu.Device
	queue gpu.Queue
}

// gpuArray is a gpu.Array as a Buffer.
type gpuArray struct {
	a     *gpu.Array
	queue gpu.Queue
}

// deviceRunner is what the GPU engines offer for data already on the
// device.
type deviceRunner interface {
	ExecuteDevice(ctx context.Context, dst, src *gpu.Array) error
}

func (m gpuMemory) Alloc(dt nd.DType, shape []int) (Buffer, error) {
	a, err := gpu.NewArray(m.dev, dt, shape...)
	if err != nil {
		return nil, err
	}
	return gpuArray{a, m.queue}, nil
}

func (gpuMemory) Execute(ctx context.Context, run Runner, dst, src Buffer) (bool, error) {
	r, ok := run.(deviceRunner)
	d, ok1 := dst.(gpuArray)
	s, ok2 := src.(gpuArray)
	if !ok || !ok1 || !ok2 {
		return false, nil
	}
	return true, r.ExecuteDevice(ctx, d.a, s.a)
}

func (m gpuMemory) Close() error { return errors.Join(m.queue.Close(), m.dev.Close()) }

func (b gpuArray) Write(p []byte) error { return b.a.Write(b.queue, p) }
func (b gpuArray) Read(p []byte) error  { return b.a.Read(b.queue, p) }
func (b gpuArray) Free() error          { return b.a.Free() }
