package plan

import (
	"context"
	"errors"
	"slices"
	"sync"

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
	// gemm offers the gemm method (CUDA's tensor cores).
	gemm bool
}

// gpuOptions are the engine's options of a plan's.
func gpuOptions(opt Options) gpu.Options {
	return gpu.Options{Progress: opt.Progress, Tuning: opt.Tuning, Timeline: opt.Timeline, PieceBytes: opt.PieceBytes, MemoryBudget: opt.DeviceMemory}
}

// implementations are the binding's direct, separable, FFT and Winograd
// methods, and gemm where the binding has tensor-core kernels (CUDA).
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
	impls := append(withPending(methods(b.name, newEngine(gpu.NewDirect), newEngine(gpu.NewSeparable)), pending(gpu.Direct), pending(gpu.Separable)),
		fftOn(b.name, b.fftWhy, newFFT, fftPending))
	if b.gemm {
		newGemm := func(p *nd.Problem, opt Options) (Runner, error) {
			dev, err := b.open(opt.Device)
			if err != nil {
				return nil, err
			}
			return gpu.NewGemm(dev, func() (gpu.Device, error) { return b.open(opt.Device) }, p, gpuOptions(opt))
		}
		why := func(p *nd.Problem) error { return gpu.GemmWhy(b.name, p) }
		impls = append(impls, gemmOn(b.name, why, newGemm, pending(gpu.Gemm)))
	}
	newWinograd := func(p *nd.Problem, opt Options) (Runner, error) {
		dev, err := b.open(opt.Device)
		if err != nil {
			return nil, err
		}
		return gpu.NewWinograd(dev, func() (gpu.Device, error) { return b.open(opt.Device) }, p, gpuOptions(opt))
	}
	return append(impls, winogradOn(b.name, gpu.WinogradWhy, newWinograd, pending(gpu.Winograd)))
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
	return gpuMemory{dev, q, &wrapCache{}}, nil
}

// gpuMemory is a GPU's memory.
type gpuMemory struct {
	dev     gpu.Device
	queue   gpu.Queue
	wrapped *wrapCache
}

// externalDevice is a gpu.Device that can wrap the caller's device memory
// and order work after the caller's streams (cuda's).
type externalDevice interface {
	WrapExternal(ptr uintptr, n int) (gpu.Buffer, error)
	CallerQueue(h uintptr) gpu.Queue
}

// wrapCache keeps the last buffers wrapped over the caller's memory by
// address and length, so that a caller passing the same arrays again gets
// the same gpu.Buffers and the engine its launches prepared for them
// (Engine.ExecuteDevice keeps them per pair of buffers). A wrapped buffer
// is an address and owns nothing: keeping or dropping one costs nothing.
type wrapCache struct {
	mu   sync.Mutex
	bufs map[wrapKey]gpu.Buffer
}

type wrapKey struct {
	ptr uintptr
	n   int
}

// maxWrapped bounds the cache; past it, it starts afresh.
const maxWrapped = 64

// wrap returns a buffer over the caller's n bytes at ptr: a cached one, or
// a new one the device checked (its memory, its context, its length).
func (m gpuMemory) wrap(ptr uintptr, n int) (gpu.Buffer, error) {
	ext, ok := m.dev.(externalDevice)
	if !ok {
		return nil, &nd.UnsupportedError{What: "device arrays of the caller's memory", Value: m.dev.Backend(), Supported: "cuda"}
	}
	k := wrapKey{ptr, n}
	m.wrapped.mu.Lock()
	b, ok := m.wrapped.bufs[k]
	m.wrapped.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := ext.WrapExternal(ptr, n)
	if err != nil {
		return nil, err
	}
	m.wrapped.mu.Lock()
	if m.wrapped.bufs == nil || len(m.wrapped.bufs) >= maxWrapped {
		m.wrapped.bufs = map[wrapKey]gpu.Buffer{}
	}
	m.wrapped.bufs[k] = b
	m.wrapped.mu.Unlock()
	return b, nil
}

// Wrap makes an array of dt and shape over the caller's memory at ptr
// (WrappingMemory).
func (m gpuMemory) Wrap(dt nd.DType, shape []int, ptr uintptr, nbytes int) (Buffer, error) {
	buf, err := m.wrap(ptr, nbytes)
	if err != nil {
		return nil, err
	}
	return gpuArray{&gpu.Array{Shape: slices.Clone(shape), DType: dt, Buf: buf}, m.queue}, nil
}

// gpuArray is a gpu.Array as a Buffer.
type gpuArray struct {
	a     *gpu.Array
	queue gpu.Queue
}

// deviceRunner is what the GPU engines offer for data already on the
// device: in the host's order, or in a caller's queue's
// (gpu.Engine.ExecuteDeviceAfter; the guarded engines wait for that
// queue on the host instead).
type deviceRunner interface {
	ExecuteDevice(ctx context.Context, dst, src *gpu.Array) error
	ExecuteDeviceAfter(ctx context.Context, dst, src *gpu.Array, caller gpu.Queue) error
}

func (m gpuMemory) Alloc(dt nd.DType, shape []int) (Buffer, error) {
	a, err := gpu.NewArray(m.dev, dt, shape...)
	if err != nil {
		return nil, err
	}
	return gpuArray{a, m.queue}, nil
}

func (m gpuMemory) Execute(ctx context.Context, run Runner, dst, src Buffer) (bool, error) {
	r, ok := run.(deviceRunner)
	d, ok1 := dst.(gpuArray)
	s, ok2 := src.(gpuArray)
	if !ok || !ok1 || !ok2 {
		return false, nil
	}
	if h, ok := streamOf(ctx); ok {
		// The caller's stream may still be writing the input (or using
		// the output): the work goes after what it has queued, and what
		// it queues next goes after the work, as a CUDA library call on
		// that stream would.
		ext, ok := m.dev.(externalDevice)
		if !ok {
			return true, &nd.UnsupportedError{What: "ordering after a caller's stream", Value: m.dev.Backend(), Supported: "cuda"}
		}
		return true, r.ExecuteDeviceAfter(ctx, d.a, s.a, ext.CallerQueue(h))
	}
	return true, r.ExecuteDevice(ctx, d.a, s.a)
}

// ToPlanar moves the bank on the device (gpu.ToPlanar, kernels/layout.cl)
// in the memory's queue.
func (m gpuMemory) ToPlanar(dst, src Buffer, bank int) error {
	d, ok1 := dst.(gpuArray)
	s, ok2 := src.(gpuArray)
	if !ok1 || !ok2 {
		return &nd.ArgumentError{Arg: "array", Msg: "not this device's"}
	}
	n := int64(d.a.DType.Size())
	if n == 0 {
		return &nd.UnsupportedError{What: "dtype of a planar bank on a device", Value: d.a.DType.String()}
	}
	values, err := nd.NumElements(d.a.Shape)
	if err != nil {
		return err
	}
	return gpu.ToPlanar(m.dev, m.queue, d.a.Buf, s.a.Buf, int64(values/bank), bank, int(n))
}

func (m gpuMemory) Close() error { return errors.Join(m.queue.Close(), m.dev.Close()) }

func (b gpuArray) Write(p []byte) error { return b.a.Write(b.queue, p) }
func (b gpuArray) Read(p []byte) error  { return b.a.Read(b.queue, p) }
func (b gpuArray) Free() error          { return b.a.Free() }
