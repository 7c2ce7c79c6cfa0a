package opencl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// EngineOptions configure an OpenCL engine.
type EngineOptions struct {
	// Platform and Device select opencl:P:D.
	Platform, Device int
	// MemoryBudget bounds the device memory an execution's input, output
	// and temporaries take: a problem that does not fit runs in chunks,
	// three in flight, each within a third of it. 0 means 70% of the
	// device's memory, or three of its largest buffers if less.
	MemoryBudget int64
	Progress     nd.Progress
	// Tuning fixes the kernels' work decomposition (the tuner's choice,
	// or a tuning cache's); zero lets kernels choose.
	Tuning kernels.Tuning
	// PieceBytes bounds the chunks a pipelined execution cuts a problem
	// that fits into (input, output and temporaries); 0 lets
	// chunk.Pieces choose.
	PieceBytes int64
	// Timeline, when set, receives each pipelined execution's copies and
	// kernels from the queues' profiling counters.
	Timeline *chunk.Timeline
}

// maxLocalBytes caps the local memory a direct tile may declare: what
// every GPU offers a work-group, whatever more a device reports (PoCL
// reports 1 MiB of emulated local memory).
const maxLocalBytes = 48 << 10

// maxGroupsYZ bounds a launch's y and z group counts for kernels.NewDirect:
// OpenCL has no limit of its own below size_t.
const maxGroupsYZ = 1 << 30

// Engine executes one normalised problem with one kernel family on one
// device: the input uploaded into device memory, the family's launches run
// in order on the engine's queue, the output read back. It keeps its built
// kernels and device memory between executions. Any goroutine may call
// Execute; one execution runs at a time.
type Engine struct {
	dev    *Device
	p      *nd.Problem
	opt    EngineOptions
	family string
	plan   func() ([]kernels.Step, int, error) // the steps, and the bytes of each of the two temporaries

	mu         sync.Mutex
	queue      *Queue
	steps      []preparedStep
	temps      [2]*Buffer
	in, out    *Buffer
	kernelTime time.Duration
	closed     bool
	pieces     []chunk.Chunk // the split Execute pipelines, once computed
	pipe       *pipeline     // kept between pipelined executions
}

// preparedStep is a kernels.Step with its launch prepared.
type preparedStep struct {
	launch   *Prepared
	from, to kernels.Role
}

// NewDirect prepares p for the direct kernel family (kernels/direct.cl) on
// opencl:opt.Platform:opt.Device. A problem that accumulates in float64 on
// a device without fp64 is refused here (*UnsupportedError). Kernels are
// built when first used.
func NewDirect(p *nd.Problem, opt EngineOptions) (*Engine, error) {
	e, err := newEngine(p, opt, "direct")
	if err != nil {
		return nil, err
	}
	info := e.dev.Info()
	e.plan = func() ([]kernels.Step, int, error) {
		l, err := kernels.NewDirect(p, directOptions(info, opt.Tuning))
		if err != nil || l == nil {
			return nil, 0, err
		}
		return []kernels.Step{{Launch: l, From: kernels.Input, To: kernels.Output}}, 0, nil
	}
	return e, nil
}

// directOptions are the limits kernels.NewDirect plans within on a device,
// with the engine's tuning.
func directOptions(info Info, t kernels.Tuning) kernels.DirectOptions {
	return kernels.DirectOptions{MaxLocalBytes: int(min(info.LocalMemory, maxLocalBytes)), MaxGroupsYZ: maxGroupsYZ, Tiled: t.Tiled, Rows: t.Rows}
}

// NewSeparable prepares p for the separable kernel family
// (kernels/separable.cl): one pass per kernel axis through temporaries in
// device memory, in the CPU engine's order. Every kernel of p must have
// factors.
func NewSeparable(p *nd.Problem, opt EngineOptions) (*Engine, error) {
	if !p.Separable() {
		return nil, errors.New("opencl: separable method: a kernel is not separable")
	}
	e, err := newEngine(p, opt, "separable")
	if err != nil {
		return nil, err
	}
	info := e.dev.Info()
	e.plan = func() ([]kernels.Step, int, error) {
		s, err := kernels.NewSeparable(p, separableOptions(info, opt.Tuning))
		if err != nil || s == nil {
			return nil, 0, err
		}
		return s.Steps, s.TempElems * kernels.AccBytes(p), nil
	}
	return e, nil
}

// separableOptions are the limits kernels.NewSeparable plans within on a
// device, with the engine's tuning.
func separableOptions(info Info, t kernels.Tuning) kernels.SeparableOptions {
	return kernels.SeparableOptions{MaxLocalBytes: int(min(info.LocalMemory, maxLocalBytes)), Fused: t.Fused, Sep3: t.Sep3, SepTile: t.SepTile, FuseSmall: t.FuseSmall}
}

func newEngine(p *nd.Problem, opt EngineOptions, family string) (*Engine, error) {
	dev, err := Open(opt.Platform, opt.Device)
	if err != nil {
		return nil, err
	}
	if p.Wide && !dev.Info().FP64 {
		err := fp64Error(dev.Info())
		dev.Close()
		return nil, err
	}
	return &Engine{dev: dev, p: p, opt: opt, family: family}, nil
}

// Device is the engine's device.
func (e *Engine) Device() *Device { return e.dev }

// Implementation names the kernel implementations the engine launches
// (family and work decomposition), for reports such as the bench's.
func (e *Engine) Implementation() string {
	steps, _, err := e.plan()
	if err != nil {
		return ""
	}
	return kernels.Describe(steps)
}

// Close releases the engine's device memory, queue and device. It waits
// for an execution in progress.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	errs = append(errs, e.pipe.close(), e.queue.Close())
	for _, s := range e.steps {
		errs = append(errs, s.launch.Release())
	}
	e.steps = nil
	for _, b := range append(e.temps[:], e.in, e.out) {
		errs = append(errs, b.Free())
	}
	errs = append(errs, e.dev.Close())
	return errors.Join(errs...)
}

// Execute correlates host arrays: src must have the problem's input dtype
// and shape, dst its output's (with the bank axis). The input is uploaded,
// the family's kernels run, and the output read back into dst; a problem
// larger than the memory budget runs chunk by chunk.
func (e *Engine) Execute(ctx context.Context, dst, src nd.Array) error {
	if err := checkArrays(e.p, dst, src); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	if e.pieces == nil {
		var err error
		if e.pieces, err = e.chunks(); err != nil {
			return err
		}
	}
	if len(e.pieces) > 1 {
		return e.executePipelined(ctx, dst, src)
	}
	if err := e.prepare(); err != nil {
		return err
	}
	if len(e.steps) == 0 { // an empty output: nothing to compute
		return nil
	}
	return hostRoundTrip(e.dev, e.queue, &e.in, &e.out, dst, src, e.opt.Progress, func(in, out *Buffer) error { return e.run(ctx, in, out) })
}

// hostRoundTrip is how an engine runs on host arrays: src uploaded into
// *in, run from *in to *out on q, *out read back into dst, progress
// reported. The buffers grow as needed and stay for the next call.
func hostRoundTrip(dev *Device, q *Queue, in, out **Buffer, dst, src nd.Array, progress nd.Progress, run func(in, out *Buffer) error) error {
	inBytes, outBytes := src.Bytes(), dst.Bytes()
	var err error
	if *in, err = ensureBuffer(dev, *in, len(inBytes)); err != nil {
		return err
	}
	if *out, err = ensureBuffer(dev, *out, len(outBytes)); err != nil {
		return err
	}
	if err := (*in).Write(q, 0, inBytes); err != nil {
		return err
	}
	if err := run(*in, *out); err != nil {
		return err
	}
	if err := (*out).Read(q, outBytes, 0); err != nil {
		return err
	}
	if progress != nil {
		progress.Report(1, 1)
	}
	return nil
}

// checkArrays checks that src and dst have p's input and output dtypes
// and shapes (the output's with the bank axis).
func checkArrays(p *nd.Problem, dst, src nd.Array) error {
	if src.DType() != p.In || !slices.Equal(src.Shape, p.InShape) {
		return &nd.ArgumentError{Arg: "input", Msg: fmt.Sprintf("array %v %v, the plan takes %v %v", src.DType(), src.Shape, p.In, p.InShape)}
	}
	if dst.DType() != p.Out || !slices.Equal(dst.Shape, p.FullShape()) {
		return &nd.ArgumentError{Arg: "output", Msg: fmt.Sprintf("array %v %v, the plan gives %v %v", dst.DType(), dst.Shape, p.Out, p.FullShape())}
	}
	return nil
}

// checkBuffers checks that src and dst hold p's input and output.
func checkBuffers(p *nd.Problem, dst, src *Buffer) error {
	inElems, _ := nd.ShapeElements(p.InShape)
	outElems, _ := nd.ShapeElements(p.FullShape())
	if src.Size() < inElems*p.In.Size() {
		return &nd.ArgumentError{Arg: "input", Msg: fmt.Sprintf("a %d-byte buffer, the plan reads %d", src.Size(), inElems*p.In.Size())}
	}
	if dst.Size() < outElems*p.Out.Size() {
		return &nd.ArgumentError{Arg: "output", Msg: fmt.Sprintf("a %d-byte buffer, the plan writes %d", dst.Size(), outElems*p.Out.Size())}
	}
	return nil
}

// ExecuteBuffers correlates data already on the device: src holds the
// problem's input (its dtype, C order), dst receives the output. Nothing
// moves between host and device; it returns when the kernels are done.
func (e *Engine) ExecuteBuffers(ctx context.Context, dst, src *Buffer) error {
	if err := checkBuffers(e.p, dst, src); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	if err := e.prepare(); err != nil {
		return err
	}
	return e.run(ctx, src, dst)
}

// KernelTime is how long the kernels of the last execution ran on the
// device, from the queue's profiling counters.
func (e *Engine) KernelTime() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.kernelTime
}

// prepare creates the queue and prepares the steps on first use; e.mu is
// held.
func (e *Engine) prepare() error {
	if e.queue == nil {
		q, err := e.dev.NewQueue()
		if err != nil {
			return err
		}
		e.queue = q
	}
	if e.steps != nil {
		return nil
	}
	prepared, tempBytes, err := e.prepareSteps()
	if err != nil {
		return err
	}
	if err := allocTemps(e.dev, &e.temps, prepared, tempBytes); err != nil {
		releaseSteps(prepared)
		return err
	}
	e.steps = prepared
	return nil
}

// prepareSteps prepares the family's launches for the engine's problem,
// and returns them with the bytes each temporary they use needs.
func (e *Engine) prepareSteps() ([]preparedStep, int, error) {
	steps, tempBytes, err := e.plan()
	if err != nil {
		return nil, 0, err
	}
	prepared := make([]preparedStep, 0, len(steps))
	for _, s := range steps {
		l, err := e.dev.Prepare(s.Launch)
		if err != nil {
			releaseSteps(prepared)
			return nil, 0, err
		}
		prepared = append(prepared, preparedStep{launch: l, from: s.From, to: s.To})
	}
	return prepared, tempBytes, nil
}

func releaseSteps(steps []preparedStep) error {
	var errs []error
	for _, s := range steps {
		errs = append(errs, s.launch.Release())
	}
	return errors.Join(errs...)
}

// allocTemps makes each temporary the steps use n bytes or more.
func allocTemps(d *Device, temps *[2]*Buffer, steps []preparedStep, n int) error {
	for _, s := range steps {
		for _, r := range []kernels.Role{s.from, s.to} {
			if r < kernels.Temp0 {
				continue
			}
			i := int(r - kernels.Temp0)
			var err error
			if temps[i], err = ensureBuffer(d, temps[i], n); err != nil {
				return err
			}
		}
	}
	return nil
}

// enqueueSteps queues steps on q from in to out through temps, the first
// after the events of wait, and returns their events.
func enqueueSteps(ctx context.Context, q *Queue, steps []preparedStep, in, out *Buffer, temps [2]*Buffer, wait []*Event) ([]*Event, error) {
	buffers := map[kernels.Role]*Buffer{kernels.Input: in, kernels.Output: out, kernels.Temp0: temps[0], kernels.Temp1: temps[1]}
	var events []*Event
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return events, err
		}
		ev, err := s.launch.EnqueueAfter(q, wait, buffers[s.from], buffers[s.to])
		if err != nil {
			return events, err
		}
		events = append(events, ev)
		wait = nil // the queue is in order
	}
	return events, nil
}

func releaseEvents(events []*Event) {
	for _, ev := range events {
		ev.Release()
	}
}

// run queues the steps from in to out and waits for them; e.mu is held.
func (e *Engine) run(ctx context.Context, in, out *Buffer) error {
	events, err := enqueueSteps(ctx, e.queue, e.steps, in, out, e.temps, nil)
	defer releaseEvents(events)
	// Whatever failed, the queue must be idle before its buffers are reused.
	if ferr := e.queue.Finish(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	e.kernelTime = 0
	for _, ev := range events {
		if d, err := ev.Duration(); err == nil {
			e.kernelTime += d
		}
	}
	return nil
}

// ensureBuffer returns b if it holds n bytes or more, else a new buffer
// (b freed).
func ensureBuffer(d *Device, b *Buffer, n int) (*Buffer, error) {
	n = max(n, 1)
	if b != nil && b.Size() >= n {
		return b, nil
	}
	b.Free()
	return d.Alloc(n)
}
