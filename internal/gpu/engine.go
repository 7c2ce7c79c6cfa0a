package gpu

import (
	"cmp"
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
	// MemoryBudget bounds the device memory an execution takes (three
	// chunks in flight, each within a third of it); 0: the device's
	// (Device.MemoryBudget).
	MemoryBudget int64
	Progress     nd.Progress
	// Tuning fixes the kernels' work decomposition; zero lets kernels
	// choose.
	Tuning kernels.Tuning
	// PieceBytes bounds the chunks of a problem that fits; 0 lets
	// chunk.Pieces choose.
	PieceBytes int64
	// Timeline, when set, receives each execution's copies and kernels.
	Timeline *chunk.Timeline
	// Staging copies through pinned staging and never registers the
	// caller's arrays (hostreg.go): to compare, or to leave them pageable.
	Staging bool
}

// ErrClosed is returned by an engine used after Close.
var ErrClosed = errors.New("gpu: engine closed")

// Engine executes one normalised problem with one method on one device,
// from host memory through a pipeline of queues or on device arrays. It
// keeps its kernels, parameters and staging between executions; one
// execution runs at a time.
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
	// queued: ExecuteDeviceAfter left work on the queue that nothing has
	// waited for; every other entry waits for it first.
	queued bool
	// ready and done order ExecuteDeviceAfter's work between the caller's.
	ready, done Event
}

// keptPairs is how many pairs of device arrays ExecuteDevice keeps
// launches prepared for: CuPy's and PyTorch's pools alternate outputs
// between a few. Methods with temporaries keep one pair.
const keptPairs = 4

type devicePrepared struct {
	in, out Buffer
	pr      *prepared
}

// NewDirect prepares p for the direct method (kernels.NewDirect) on dev,
// which the engine holds. Kernels are built when first used.
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

// newEngine makes an engine of method m on dev, closing dev on failure.
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
// holds and the device. Closing twice does nothing.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	errs := closeAll(nil, Queue.Finish, e.queue)
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
	errs = closeAll(errs, Queue.Close, e.queue)
	e.queue = nil
	errs = append(errs, e.dev.Close())
	return errors.Join(errs...)
}

// closeAll appends release(x) to errs for each x that is not nil.
func closeAll[T any](errs []error, release func(T) error, xs ...T) []error {
	for _, x := range xs {
		if any(x) != nil {
			errs = append(errs, release(x))
		}
	}
	return errs
}

// begin enters the engine, waits for ExecuteDeviceAfter's work and, where
// pieces, cuts the problem into Execute's; the caller unlocks e.mu
// whatever begin returns.
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

// enter locks the engine (the caller unlocks it) and makes its queue.
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

// Execute correlates host arrays through the pipeline (executePipelined),
// in chunks whose transfers overlap other chunks' kernels. On a
// Registrar, arrays seen again are copied without staging (hostreg.go).
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

func checkArrays(p *nd.Problem, dst, src nd.Array) error {
	return checkKinds(p, "array", dst.DType(), dst.Shape, src.DType(), src.Shape)
}

// checkKinds checks an execution's dtypes and shapes against p's.
func checkKinds(p *nd.Problem, what string, dstDT nd.DType, dstShape []int, srcDT nd.DType, srcShape []int) error {
	if srcDT != p.In || !slices.Equal(srcShape, p.InShape) {
		return &nd.ArgumentError{Arg: "input", Msg: fmt.Sprintf("%s %v %v, the plan takes %v %v", what, srcDT, srcShape, p.In, p.InShape)}
	}
	if dstDT != p.Out || !slices.Equal(dstShape, p.FullShape()) {
		return &nd.ArgumentError{Arg: "output", Msg: fmt.Sprintf("%s %v %v, the plan gives %v %v", what, dstDT, dstShape, p.Out, p.FullShape())}
	}
	return nil
}

// budget is the options' memory budget, else the device's.
func (e *Engine) budget() (int64, error) {
	if e.opt.MemoryBudget > 0 {
		return e.opt.MemoryBudget, nil
	}
	return e.plan.MemoryBudget(pipelineDepth)
}

// chunks splits the problem into the pieces Execute pipelines.
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

// Array is an array in device memory: operations chain with no transfers.
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

// ExecuteDevice correlates device arrays, with no transfers, and returns
// when the kernels are done. Launches are prepared once per pair of
// arrays and kept for a few pairs (keptPairs).
func (e *Engine) ExecuteDevice(ctx context.Context, dst, src *Array) error {
	if err := e.checkDeviceArrays(dst, src); err != nil {
		return err
	}
	err := e.begin(ctx, false)
	defer e.mu.Unlock()
	if err != nil {
		return err
	}
	return cmp.Or(e.runOn(src.Buf, dst.Buf), e.queue.Finish())
}

// ExecuteDeviceAfter correlates device arrays as ExecuteDevice does, but
// in the caller's queue's order, and returns once the work is queued —
// as a CUDA library call on the caller's stream does. A failure of the
// work surfaces at the caller's next wait on its queue (and the engine's
// next entry); the arrays must stay allocated until then.
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

// runOn queues the launches from in to out, preparing them where the
// engine keeps none for the pair. The engine is locked.
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
		// The oldest pair's buffers go back once the queue is done.
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

// TimeDevice times the problem on device arrays for the bench
// (TimeOnQueue) and returns each run's milliseconds.
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
	err = cmp.Or(err, e.queue.Finish())
	pr.free()
	return ms, err
}

func (e *Engine) checkDeviceArrays(dst, src *Array) error {
	return checkKinds(e.p, "device array", dst.DType, dst.Shape, src.DType, src.Shape)
}
