package gpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// Options configure an engine.
type Options struct {
	// MemoryBudget bounds the device memory an execution's input, output
	// and temporaries take (chunks, three in flight, each within a third
	// of it); 0 lets the device choose (Device.MemoryBudget).
	MemoryBudget int64
	Progress     nd.Progress
	// Tuning fixes the kernels' work decomposition; zero lets kernels
	// choose.
	Tuning kernels.Tuning
	// PieceBytes bounds the chunks a pipelined execution cuts a problem
	// that fits into (input, output and temporaries); 0 lets
	// chunk.Pieces choose.
	PieceBytes int64
	// Timeline, when set, receives each execution's copies and kernels,
	// timed by the device's events.
	Timeline *chunk.Timeline
	// Staging copies every execution's data through the pipeline's
	// pinned staging, never registering the caller's arrays (hostreg.go):
	// to compare the two paths, or to leave the caller's memory pageable.
	Staging bool
}

// ErrClosed is returned by an engine used after Close.
var ErrClosed = errors.New("gpu: engine closed")

// Engine executes one normalised problem with one method on one device,
// from host memory through a pipeline of queues or on device arrays. It
// keeps its built kernels, their parameters on the device and its staging
// between executions; one execution runs at a time, and Close waits for
// it.
type Engine struct {
	dev    Device
	plan   Planner // dev, or a device not opened (Pending)
	p      *nd.Problem
	opt    Options
	method method

	registerMin   int // the smallest array Execute registers, in bytes
	directCopyMin int // the shortest input run copied straight from registered memory

	mu     sync.Mutex
	closed bool
	queue  Queue             // the kernels' queue
	pieces []chunk.Chunk     // Execute's split, once computed
	pipe   *pipeline         // Execute's, kept between executions
	onDev  []*devicePrepared // ExecuteDevice's launches for its last arrays, newest first
	// queued says that ExecuteDeviceAfter left work on the queue that
	// nothing has waited for yet; every other entry waits for it first.
	queued bool
	// ready and done order ExecuteDeviceAfter's work after the caller's
	// queue and the caller's later work after it; made when first needed.
	ready, done Event
}

// keptPairs is how many pairs of device arrays ExecuteDevice keeps
// launches prepared for: CuPy's and PyTorch's pools hand out outputs
// that alternate between a few. Methods with temporaries keep one pair,
// so that their memory is held once.
const keptPairs = 4

type devicePrepared struct {
	in, out Buffer
	pr      *prepared
}

// NewDirect prepares p for the direct method (kernels.NewDirect) on dev,
// which the engine holds until Close. Kernels are built when first used.
func NewDirect(dev Device, p *nd.Problem, opt Options) (*Engine, error) {
	return newEngine(dev, p, opt, direct)
}

// NewSeparable prepares p for the separable kernel family: one pass per
// kernel axis through temporaries, in the CPU engine's order, so the two
// give the same bits. Every kernel of p must have factors.
func NewSeparable(dev Device, p *nd.Problem, opt Options) (*Engine, error) {
	if !p.Separable() {
		dev.Close()
		return nil, fmt.Errorf("%s: separable method: a kernel is not separable", dev.Backend())
	}
	return newEngine(dev, p, opt, separable)
}

// newEngine makes an engine of method m on dev, which it takes over:
// closed here on failure.
func newEngine(dev Device, p *nd.Problem, opt Options, m method) (*Engine, error) {
	if err := dev.Check(p); err != nil {
		dev.Close()
		return nil, err
	}
	return &Engine{dev: dev, plan: dev, p: p, opt: opt, method: m, registerMin: hostRegMinBytes, directCopyMin: minDirectCopy}, nil
}

// Device is the device the engine runs on.
func (e *Engine) Device() Device { return e.dev }

// Implementation names the kernel implementations the engine launches
// (family and work decomposition), for reports such as the bench's.
func (e *Engine) Implementation() string { return e.method.describe(e, e.p) }

// Close waits for an execution in progress and releases what the engine
// holds (registered host memory that no other engine uses among it) and
// the device. Closing twice does nothing.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	if e.queue != nil {
		errs = append(errs, e.queue.Finish())
	}
	errs = append(errs, e.pipe.close())
	e.pipe = nil
	if r, ok := e.dev.(Registrar); ok {
		errs = append(errs, r.HostRegs().close(e))
	}
	for _, d := range e.onDev {
		d.pr.free()
	}
	e.onDev = nil
	errs = closeAll(errs, Event.Close, e.ready, e.done)
	if c, ok := e.method.(interface{ close() }); ok {
		c.close() // methods that keep device state (FFT's plans and buffers)
	}
	if e.queue != nil {
		errs = append(errs, e.queue.Close())
		e.queue = nil
	}
	errs = append(errs, e.dev.Close())
	return errors.Join(errs...)
}

// closeAll appends to errs what release returns for each x that is not
// nil.
func closeAll[T any](errs []error, release func(T) error, xs ...T) []error {
	for _, x := range xs {
		if any(x) != nil {
			errs = append(errs, release(x))
		}
	}
	return errs
}

// begin takes the engine for an execution under ctx (enter), waits for
// ExecuteDeviceAfter's work, and where pieces cuts the problem into
// Execute's pieces; the caller unlocks e.mu whatever begin returns.
func (e *Engine) begin(ctx context.Context, pieces bool) error {
	if err := e.enter(ctx); err != nil {
		return err
	}
	if e.queued {
		// It shares the launches and may share temporaries.
		e.queued = false
		if err := e.queue.Finish(); err != nil {
			return fmt.Errorf("earlier work queued on the device: %w", err)
		}
	}
	if pieces && e.pieces == nil {
		chunks, err := e.chunks()
		if err != nil {
			return err
		}
		e.pieces = chunks
	}
	return nil
}

// enter locks the engine (the caller unlocks it, also on error) and
// makes its queue.
func (e *Engine) enter(ctx context.Context) error {
	e.mu.Lock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.closed {
		return ErrClosed
	}
	if e.queue == nil {
		q, err := e.dev.NewQueue()
		if err != nil {
			return err
		}
		e.queue = q
	}
	return nil
}

// Execute correlates host arrays through the pipeline (executePipelined):
// in chunks when the problem is large or beyond the memory budget, each
// chunk's transfers overlapping other chunks' kernels. On a device that
// registers host memory (Registrar), arrays Execute sees again are copied
// straight to and from the device (hostreg.go).
func (e *Engine) Execute(ctx context.Context, dst, src nd.Array) error {
	if err := checkArrays(e.p, dst, src); err != nil {
		return err
	}
	err := e.begin(ctx, true)
	defer e.mu.Unlock()
	if err != nil {
		return err
	}
	if e.pipe == nil {
		pl, err := e.newPipeline(e.pieces)
		if err != nil {
			return err
		}
		e.pipe = pl
	}
	return e.executePipelined(ctx, dst, src)
}

// checkArrays checks host arrays against p.
func checkArrays(p *nd.Problem, dst, src nd.Array) error {
	return checkKinds(p, "array", dst.DType(), dst.Shape, src.DType(), src.Shape)
}

// checkKinds checks an execution's input and output dtypes and shapes
// (what: host or device arrays) against p's.
func checkKinds(p *nd.Problem, what string, dstDT nd.DType, dstShape []int, srcDT nd.DType, srcShape []int) error {
	if srcDT != p.In || !slices.Equal(srcShape, p.InShape) {
		return &nd.ArgumentError{Arg: "input", Msg: fmt.Sprintf("%s %v %v, the plan takes %v %v", what, srcDT, srcShape, p.In, p.InShape)}
	}
	if dstDT != p.Out || !slices.Equal(dstShape, p.FullShape()) {
		return &nd.ArgumentError{Arg: "output", Msg: fmt.Sprintf("%s %v %v, the plan gives %v %v", what, dstDT, dstShape, p.Out, p.FullShape())}
	}
	return nil
}

// budget is the memory budget executions run within: the options', else
// the device's for pipelineDepth buffers.
func (e *Engine) budget() (int64, error) {
	if e.opt.MemoryBudget > 0 {
		return e.opt.MemoryBudget, nil
	}
	return e.plan.MemoryBudget(pipelineDepth)
}

// chunks splits the problem into the pieces Execute pipelines
// (chunk.Pieces), each slot's within a third of the memory budget.
func (e *Engine) chunks() ([]chunk.Chunk, error) {
	budget, err := e.budget()
	if err != nil {
		return nil, err
	}
	if _, ok := e.method.(fftMethod); ok {
		budget -= fftWork(e.plan.Limits(), budget) // the FFT's blocks and spectra
	}
	chunks, err := chunk.Pieces(e.p, budget, pipelineDepth, e.opt.PieceBytes, func(q *nd.Problem) int64 {
		n, bytes := e.method.temps(e, q)
		return int64(n) * int64(bytes)
	})
	if err != nil {
		return nil, &OutOfMemoryError{Backend: e.plan.Backend(), Msg: err.Error()}
	}
	return chunks, nil
}

// Array is an array in device memory, so that operations chain on the GPU
// with no transfers.
type Array struct {
	Shape []int
	DType nd.DType
	Buf   Buffer
}

// NewArray allocates an uninitialised device array.
func NewArray(dev Device, dt nd.DType, shape ...int) (*Array, error) {
	n, err := nd.NumElements(shape)
	if err != nil {
		return nil, err
	}
	buf, err := dev.Alloc(max(n*dt.Size(), 1))
	if err != nil {
		return nil, err
	}
	return &Array{Shape: slices.Clone(shape), DType: dt, Buf: buf}, nil
}

// Write copies host bytes (the array's, C order) into it on q and waits.
func (a *Array) Write(q Queue, b []byte) error {
	if err := q.Write(a.Buf, 0, b); err != nil {
		return err
	}
	return q.Finish()
}

// Read copies it into host bytes on q and waits.
func (a *Array) Read(q Queue, b []byte) error {
	if err := q.Read(b, a.Buf, 0); err != nil {
		return err
	}
	return q.Finish()
}

// Free releases the device memory.
func (a *Array) Free() error { return a.Buf.Free() }

// ExecuteDevice correlates device arrays, with no transfers: the
// launches are prepared (built, parameters uploaded) once for a pair of
// arrays and kept for a few pairs (keptPairs). It returns when the
// kernels are done.
func (e *Engine) ExecuteDevice(ctx context.Context, dst, src *Array) error {
	if err := e.checkDeviceArrays(dst, src); err != nil {
		return err
	}
	err := e.begin(ctx, false)
	defer e.mu.Unlock()
	if err != nil {
		return err
	}
	err = e.runOn(src.Buf, dst.Buf)
	if ferr := e.queue.Finish(); err == nil {
		err = ferr
	}
	return err
}

// ExecuteDeviceAfter correlates device arrays as ExecuteDevice does, but
// in the caller's queue's order instead of the host's: the work runs
// after what caller has queued so far, work caller queues afterwards runs
// after it, and it returns once the work is queued, not done — the way a
// CUDA library call on the caller's stream behaves. A failure of the
// work itself is reported by the caller's next wait on its queue (and
// by the engine's next entry). The arrays must stay allocated until then.
func (e *Engine) ExecuteDeviceAfter(ctx context.Context, dst, src *Array, caller Queue) error {
	if err := e.checkDeviceArrays(dst, src); err != nil {
		return err
	}
	err := e.enter(ctx)
	defer e.mu.Unlock()
	if err != nil {
		return err
	}
	if e.ready == nil {
		evs, _, err := NewEvents(e.dev, 2)
		if err != nil {
			return err
		}
		e.ready, e.done = evs[0], evs[1]
	}
	if err := caller.Record(e.ready); err != nil {
		return fmt.Errorf("the caller's queue: %w", err)
	}
	if err := e.queue.Wait(e.ready); err != nil {
		return err
	}
	err = e.runOn(src.Buf, dst.Buf)
	e.queued = true
	if err != nil {
		return err
	}
	if err := e.queue.Record(e.done); err != nil {
		return err
	}
	if err := caller.Wait(e.done); err != nil {
		return fmt.Errorf("the caller's queue: %w", err)
	}
	return nil
}

// runOn queues the launches from in to out, prepared if the engine keeps
// none for the pair. The engine is locked.
func (e *Engine) runOn(in, out Buffer) error {
	for i, d := range e.onDev {
		if d.in == in && d.out == out {
			copy(e.onDev[1:i+1], e.onDev[:i]) // newest first
			e.onDev[0] = d
			return d.pr.run()
		}
	}
	keep := keptPairs
	if n, _ := e.method.temps(e, e.p); n > 0 {
		keep = 1
	}
	if len(e.onDev) >= keep {
		// The oldest pair's parameters and temporaries go back: the
		// queue must be done with them first.
		if err := e.queue.Finish(); err != nil {
			return err
		}
		e.queued = false
		for _, d := range e.onDev[keep-1:] {
			d.pr.free()
		}
		e.onDev = e.onDev[:keep-1]
	}
	pr, err := e.method.prepare(e, e.p, in, out, [2]Buffer{})
	if err != nil {
		e.queue.Finish()
		pr.free()
		return err
	}
	e.onDev = append([]*devicePrepared{{in: in, out: out, pr: pr}}, e.onDev...)
	return pr.run()
}

// TimeDevice times the problem on device arrays for the bench: the
// launches prepared once, then TimeOnQueue's runs. It returns each run's
// milliseconds.
func (e *Engine) TimeDevice(dst, src *Array, repeats int) ([]float64, error) {
	if err := e.checkDeviceArrays(dst, src); err != nil {
		return nil, err
	}
	err := e.begin(context.Background(), false)
	defer e.mu.Unlock()
	if err != nil {
		return nil, err
	}
	pr, err := e.method.prepare(e, e.p, src.Buf, dst.Buf, [2]Buffer{})
	var ms []float64
	if err == nil {
		ms, err = TimeOnQueue(e.dev, e.queue, repeats, pr.run)
	}
	if ferr := e.queue.Finish(); err == nil {
		err = ferr
	}
	pr.free()
	return ms, err
}

// checkDeviceArrays checks device arrays against the problem.
func (e *Engine) checkDeviceArrays(dst, src *Array) error {
	return checkKinds(e.p, "device array", dst.DType, dst.Shape, src.DType, src.Shape)
}
