package opencl

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// FFTEngine executes one problem by FFT convolution on one device:
// kernels.NewFFTConv's blocks, gathered, transformed by fft.cl, multiplied
// and scattered by fftconv.cl, batch by batch on the engine's queue. Its
// results differ from the direct method by rounding, within
// fftconv.Geometry.ErrorBound; an input holding NaN or Inf, or values so
// large that a float32 transform could overflow (or an infinite cval),
// runs the direct method instead, whose bits those outputs must carry.
// Host arrays larger than the memory budget leaves for them run in
// chunks (package chunk), as the other engines' do. Any goroutine may
// call Execute; one execution runs at a time.
type FFTEngine struct {
	dev    *Device
	p      *nd.Problem
	opt    EngineOptions
	plan   *kernels.FFTConv
	absSum float64
	// dataBudget bounds the input and output on the device; larger
	// problems run in chunks.
	dataBudget int64

	mu         sync.Mutex
	direct     *Engine // the fallback, made when first needed
	queue      *Queue
	ready      bool
	conv       map[string]*Kernel // fftconv.cl's kernels by name
	pass       *Kernel
	local      []*Kernel // per transform: fft_local, or nil
	geo        *Buffer
	roots      map[int]*Buffer // twiddle tables by length
	spectra    []*Buffer       // each kernel's spectrum
	blocks     *Buffer         // a batch of blocks, then their spectra
	product    *Buffer         // a spectrum product, then its inverse
	scratch    *Buffer         // fft_pass's other buffer
	in, out    *Buffer
	events     []*Event
	kernelTime time.Duration
	closed     bool
}

// fftIndex64 makes NewFFT's kernels compute every index in 64 bits, and
// fftMaxBatch caps its blocks per batch: the tests' way to run those
// variants on small problems.
var (
	fftIndex64  = false
	fftMaxBatch = 0
)

// NewFFT prepares p for FFT convolution on opencl:opt.Platform:opt.Device.
// Kernels are built, spectra made and buffers allocated when first used.
func NewFFT(p *nd.Problem, opt EngineOptions) (*FFTEngine, error) {
	if err := fftconv.Supported(p); err != nil {
		return nil, fmt.Errorf("opencl: FFT method: %w", err)
	}
	dev, err := Open(opt.Platform, opt.Device)
	if err != nil {
		return nil, err
	}
	info := dev.Info()
	// A quarter of the budget (at most fftconv.DefaultBudget) for the
	// blocks; the rest for the input and output, chunk by chunk where
	// they do not fit.
	budget := memoryBudget(info, opt.MemoryBudget, 1)
	work := min(budget/4, fftconv.DefaultBudget)
	plan, err := kernels.NewFFTConv(p, kernels.FFTConvOptions{
		Budget:        work,
		MaxLocalBytes: int(min(info.LocalMemory, maxLocalBytes)),
		Index64:       fftIndex64,
		MaxBatch:      fftMaxBatch,
		Lengths:       opt.Tuning.FFT.Slice(),
	})
	if err != nil {
		dev.Close()
		return nil, fmt.Errorf("opencl: FFT method: %w", err)
	}
	return &FFTEngine{dev: dev, p: p, opt: opt, plan: plan, absSum: fftconv.AbsSum(p), dataBudget: budget - work}, nil
}

// fftBytes are the bytes of p's input and output (with the bank).
func fftBytes(p *nd.Problem) (in, out int64) {
	inElems, _ := nd.ShapeElements(p.InShape)
	outElems, _ := nd.ShapeElements(p.FullShape())
	return int64(inElems * p.In.Size()), int64(outElems * p.Out.Size())
}

// memoryBudget is the device memory an execution may take: the options'
// budget, else the smaller of 70% of the device's memory and what its
// largest allocation allows for that many buffers.
func memoryBudget(info Info, budget, buffers int64) int64 {
	if budget > 0 {
		return budget
	}
	budget = info.GlobalMemory / 10 * 7
	if info.MaxAlloc > 0 {
		budget = min(budget, info.MaxAlloc*buffers)
	}
	return budget
}

// Device is the engine's device.
func (e *FFTEngine) Device() *Device { return e.dev }

// Implementation names what the engine runs, for reports.
func (e *FFTEngine) Implementation() string {
	if e.plan == nil {
		return "fft"
	}
	return fmt.Sprintf("fft.cl blocks of %v, %d per batch", e.plan.Geometry.Length, e.plan.Batch)
}

// KernelTime is how long the kernels of the last execution ran on the
// device, from the queue's profiling counters.
func (e *FFTEngine) KernelTime() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.direct != nil && e.kernelTime == 0 {
		return e.direct.KernelTime()
	}
	return e.kernelTime
}

// Close releases the engine's device memory, queue and device (and the
// direct fallback's). It waits for an execution in progress.
func (e *FFTEngine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	if e.direct != nil {
		errs = append(errs, e.direct.Close())
	}
	errs = append(errs, e.queue.Close(), e.releaseBuffers())
	for _, b := range []*Buffer{e.in, e.out} {
		errs = append(errs, b.Free())
	}
	errs = append(errs, e.dev.Close())
	return errors.Join(errs...)
}

// releaseBuffers frees what prepare made (all of it, or what a failed
// prepare left); e.mu is held.
func (e *FFTEngine) releaseBuffers() error {
	var errs []error
	bufs := append([]*Buffer{e.geo, e.blocks, e.product, e.scratch}, e.spectra...)
	for _, b := range e.roots {
		bufs = append(bufs, b)
	}
	for _, b := range bufs {
		errs = append(errs, b.Free())
	}
	e.geo, e.blocks, e.product, e.scratch, e.spectra, e.roots = nil, nil, nil, nil, nil, nil
	return errors.Join(errs...)
}

// Execute correlates host arrays: src must have the problem's input dtype
// and shape, dst its output's (with the bank axis).
func (e *FFTEngine) Execute(ctx context.Context, dst, src nd.Array) error {
	if err := checkArrays(e.p, dst, src); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.needsDirect(src) {
		d, err := e.directEngine()
		if err != nil {
			return err
		}
		return d.Execute(ctx, dst, src)
	}
	chunks, err := chunk.Split(e.p, chunk.Budget{Bytes: e.dataBudget})
	if err != nil {
		return err
	}
	if len(chunks) > 1 {
		opt := e.opt
		opt.Progress = nil
		return runChunks(ctx, chunks, dst, src, e.opt.Progress, func(p *nd.Problem) (*FFTEngine, error) { return NewFFT(p, opt) })
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	if e.plan == nil { // an empty output
		return nil
	}
	if err := e.prepare(); err != nil {
		return err
	}
	return hostRoundTrip(e.dev, e.queue, &e.in, &e.out, dst, src, e.opt.Progress, func(in, out *Buffer) error { return e.run(ctx, in, out) })
}

// ExecuteBuffers correlates data already on the device: src holds the
// problem's input, dst receives the output. The input is read back once
// to look for NaN, Inf and overflow (the kernel time excludes it).
func (e *FFTEngine) ExecuteBuffers(ctx context.Context, dst, src *Buffer) error {
	if err := checkBuffers(e.p, dst, src); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	host, err := nd.New(e.p.In, e.p.InShape...)
	if err != nil {
		return err
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	err = e.ensureQueue()
	if err == nil {
		err = src.Read(e.queue, host.Bytes(), 0)
	}
	e.mu.Unlock()
	if err != nil {
		return err
	}
	if e.needsDirect(host) {
		d, err := e.directEngine()
		if err != nil {
			return err
		}
		return d.ExecuteBuffers(ctx, dst, src)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.plan == nil {
		return nil
	}
	if err := e.prepare(); err != nil {
		return err
	}
	return e.run(ctx, src, dst)
}

// needsDirect reports whether src must run by the direct method: NaN or
// Inf in it, or magnitudes a float32 transform could overflow with.
func (e *FFTEngine) needsDirect(src nd.Array) bool {
	if e.plan == nil {
		return false
	}
	nonFinite, maxAbs := fftconv.ScanInput(e.p, src, runtime.GOMAXPROCS(0))
	return nonFinite > 0 || e.plan.Geometry.Overflows(e.absSum, maxAbs)
}

// directEngine is the direct method's engine for the same problem and
// device, made on first use.
func (e *FFTEngine) directEngine() (*Engine, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if e.direct == nil {
		d, err := NewDirect(e.p, e.opt)
		if err != nil {
			return nil, err
		}
		e.direct = d
	}
	e.kernelTime = 0
	return e.direct, nil
}

func (e *FFTEngine) ensureQueue() error {
	if e.queue != nil {
		return nil
	}
	q, err := e.dev.NewQueue()
	if err != nil {
		return err
	}
	e.queue = q
	return nil
}

// prepare builds the kernels, allocates the batch buffers and makes the
// kernels' spectra on first use; e.mu is held.
func (e *FFTEngine) prepare() error {
	if err := e.ensureQueue(); err != nil {
		return err
	}
	if e.ready {
		return nil
	}
	if err := e.releaseBuffers(); err != nil { // a failed earlier try's
		return err
	}
	f := e.plan
	convSrc, err := kernels.Source("fftconv")
	if err != nil {
		return err
	}
	prog, err := e.dev.Program(convSrc, "fftconv", f.Defines)
	if err != nil {
		return err
	}
	e.conv = map[string]*Kernel{}
	for _, name := range []string{"fftconv_gather", "fftconv_kernel_spectrum", "fftconv_multiply", "fftconv_scatter"} {
		if e.conv[name], err = prog.Kernel(name); err != nil {
			return err
		}
	}
	fftSrc, err := kernels.Source("fft")
	if err != nil {
		return err
	}
	passes, err := e.dev.Program(fftSrc, "fft", nil)
	if err != nil {
		return err
	}
	if e.pass, err = passes.Kernel("fft_pass"); err != nil {
		return err
	}
	e.local = make([]*Kernel, len(f.Transforms))
	e.roots = map[int]*Buffer{}
	for i, t := range f.Transforms {
		if t.Local {
			prog, err := e.dev.Program(fftSrc, "fft", t.LocalDefines)
			if err != nil {
				return err
			}
			if e.local[i], err = prog.Kernel("fft_local"); err != nil {
				return err
			}
		}
		if e.roots[t.Length] == nil {
			if e.roots[t.Length], err = e.dev.AllocCopy(nd.AsBytes(kernels.FFTRoots(t.Length))); err != nil {
				return err
			}
		}
	}
	if e.geo, err = e.dev.AllocCopy(nd.AsBytes(f.Geo)); err != nil {
		return err
	}
	batchBytes := f.Slots(f.Batch) * f.BlockValues * 8
	if e.blocks, err = e.dev.Alloc(batchBytes); err != nil {
		return err
	}
	if e.product, err = e.dev.Alloc(batchBytes); err != nil {
		return err
	}
	if f.Scratch() {
		if e.scratch, err = e.dev.Alloc(batchBytes); err != nil {
			return err
		}
	}
	// Each kernel's spectrum: its block through the forward transform,
	// conjugated and scaled.
	for k := range f.Kernels {
		spec, err := e.dev.AllocCopy(nd.AsBytes(f.KernelSlot(k)))
		if err != nil {
			return err
		}
		e.spectra = append(e.spectra, spec)
		if err := e.transform(spec, 1, 0); err != nil {
			return err
		}
		n := int64(f.SpectrumValues)
		if err := e.grid(e.conv["fftconv_kernel_spectrum"], n, spec, n, 1/float32(f.BlockValues)); err != nil {
			return err
		}
	}
	err = e.finish()
	e.kernelTime = 0
	if err != nil {
		return err
	}
	e.ready = true
	return nil
}

// grid queues a grid-stride kernel over total items.
func (e *FFTEngine) grid(k *Kernel, total int64, args ...any) error {
	groups := kernels.GridGroups(total)
	ev, err := k.Enqueue(e.queue, [3]int{groups * kernels.GridLocal, 1, 1}, [3]int{kernels.GridLocal, 1, 1}, args...)
	if err != nil {
		return err
	}
	e.events = append(e.events, ev)
	return nil
}

// rows queues fftconv.cl's gather or scatter over grid.
func (e *FFTEngine) rows(k *Kernel, grid kernels.FFTGrid, args ...any) error {
	var global [3]int
	for i, n := range grid.Groups {
		global[i] = n * grid.Local[i]
	}
	ev, err := k.Enqueue(e.queue, global, grid.Local, args...)
	if err != nil {
		return err
	}
	e.events = append(e.events, ev)
	return nil
}

// transform runs the forward (inverse 0) or inverse (1) transform of
// slots complex blocks in data, in place: kernels.FFTConv.TransformSteps.
func (e *FFTEngine) transform(data *Buffer, slots int, inverse int32) error {
	f := e.plan
	for _, st := range f.TransformSteps(slots) {
		t := f.Transforms[st.Transform]
		roots := e.roots[t.Length]
		switch {
		case st.CopyBack:
			if err := e.scratch.CopyTo(e.queue, data, 0, 0, st.Bytes); err != nil {
				return err
			}
		case st.Local:
			k := e.local[st.Transform]
			size := min(st.LocalSize, k.MaxWorkGroupSize())
			ev, err := k.Enqueue(e.queue, [3]int{st.Groups * size, 1, 1}, [3]int{size, 1, 1}, data, roots, int64(t.Length), st.Lines, int64(t.Stride), inverse)
			if err != nil {
				return err
			}
			e.events = append(e.events, ev)
		default:
			from, to := data, e.scratch
			if st.FromScratch {
				from, to = to, from
			}
			if err := e.grid(e.pass, st.Items, from, to, roots, int64(t.Length), int64(st.Pass.P), int64(st.Pass.Radix), int64(t.Stride), st.Lines, inverse); err != nil {
				return err
			}
		}
	}
	return nil
}

// run queues every batch from in to out and waits for them; e.mu is held.
func (e *FFTEngine) run(ctx context.Context, in, out *Buffer) error {
	f := e.plan
	bank := int64(len(f.Kernels))
	var err error
	for b := range f.Batches {
		if err = ctx.Err(); err != nil {
			break
		}
		first, count := f.BatchBlocks(b)
		n, slots := int64(count), f.Slots(count)
		if err = e.rows(e.conv["fftconv_gather"], f.GatherGrid(count), in, e.blocks, e.geo, int64(first), n, f.CVal); err != nil {
			break
		}
		if err = e.transform(e.blocks, slots, 0); err != nil {
			break
		}
		for k, spec := range e.spectra {
			per := int64(f.SpectrumValues)
			if err = e.grid(e.conv["fftconv_multiply"], int64(slots)*per, e.blocks, spec, e.product, per, int64(slots)); err != nil {
				break
			}
			if err = e.transform(e.product, slots, 1); err != nil {
				break
			}
			if err = e.rows(e.conv["fftconv_scatter"], f.ScatterGrid(count), e.product, out, e.geo, int64(first), n, int64(k), bank); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
		// Batches reuse the buffers: the queue is in order, but releasing
		// events as we go keeps their number bounded.
		if err = e.queue.Flush(); err != nil {
			break
		}
	}
	// Whatever failed, the queue must be idle before its buffers are reused.
	if ferr := e.finish(); err == nil {
		err = ferr
	}
	return err
}

// finish waits for the queue, sums the kernels' profiled times into
// kernelTime and releases their events.
func (e *FFTEngine) finish() error {
	err := e.queue.Finish()
	e.kernelTime = 0
	for _, ev := range e.events {
		if err == nil {
			if d, derr := ev.Duration(); derr == nil {
				e.kernelTime += d
			}
		}
		ev.Release()
	}
	e.events = e.events[:0]
	return err
}
