package cuda

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// EngineOptions configure a CUDA engine.
type EngineOptions struct {
	// Device is the ordinal (cuda:N).
	Device int
	// MemoryBudget bounds the device memory an execution's input, output
	// and temporaries take: a problem that does not fit runs in chunks,
	// three in flight, each within a third of it. 0 means 70% of the
	// device's free memory.
	MemoryBudget int64
	Progress     nd.Progress
	// Tuning fixes the kernels' work decomposition (the tuner's choice,
	// or a tuning cache's); zero lets kernels choose.
	Tuning kernels.Tuning
	// PieceBytes bounds the chunks a pipelined execution cuts a problem
	// that fits into (input, output and temporaries); 0 lets
	// chunk.Pieces choose.
	PieceBytes int64
	// Timeline, when set, receives each execution's copies and kernels,
	// chunk by chunk, timed by CUDA events.
	Timeline *chunk.Timeline
	// Staging copies every execution's data through the pipeline's
	// pinned staging, never registering the caller's arrays for direct
	// copies (cuMemHostRegister; see Execute): to compare the two paths,
	// or to leave the caller's memory pageable.
	Staging bool
}

// maxStaticShared is the static shared memory a tile may declare: CUDA
// allows 48 KiB without opting in.
const maxStaticShared = 48 << 10

// maxParamTapBytes is how many bytes of weights a launch passes among its
// kernel parameters (CUDA 12.1 and later take 32,764 bytes of parameters
// on every supported GPU); larger banks read theirs from a buffer.
const maxParamTapBytes = 30 << 10

// Engine executes one normalised problem with one method's kernel family:
// data in host memory through a pipeline of streams (copied through
// pinned staging buffers, or straight from and to arrays it has
// registered), or device arrays directly. It keeps its compiled kernels, their
// parameters on the device and its staging memory between executions; one
// execution runs at a time.
type Engine struct {
	dev    *Device
	p      *nd.Problem
	opt    EngineOptions
	method method

	registerMin   int // the smallest array Execute registers, in bytes
	directCopyMin int // the shortest input run copied straight from registered memory

	mu     sync.Mutex
	stream *Stream         // the kernels' stream
	pieces []chunk.Chunk   // the split Execute pipelines, once computed
	pipe   *pipeline       // kept between executions
	onDev  *devicePrepared // ExecuteDevice's launches for its last arrays
}

// devicePrepared is ExecuteDevice's launches, prepared for one pair of
// device arrays.
type devicePrepared struct {
	in, out DevicePtr
	pr      *prepared
}

// A method turns a problem into launches on the engine's stream.
type method interface {
	// prepare compiles the launches that compute p from in into out and
	// puts their parameters (and any temporaries) on the device. It
	// returns what it prepared even on error, for the caller to free.
	// Temporaries are temps' where given (large enough: see temps),
	// else from the device's pool, freed with the launches.
	prepare(e *Engine, p *nd.Problem, in, out DevicePtr, temps [2]*Buffer) (*prepared, error)
	// temps is how many temporaries the launches for p use, and the bytes
	// of each.
	temps(e *Engine, p *nd.Problem) (n, bytes int)
	// describe names the implementations its launches use for p.
	describe(e *Engine, p *nd.Problem) string
	// modules lists the kernel modules (Family and Defines) its launches
	// for p compile; it uses only e's options, not its device.
	modules(e *Engine, p *nd.Problem) ([]*kernels.Launch, error)
}

// Implementation names the kernel implementations the engine launches
// (family and work decomposition), for reports such as the bench's.
func (e *Engine) Implementation() string { return e.method.describe(e, e.p) }

// prepared is a problem's launches, compiled and with their parameters on
// the device, so that running them again costs only the launches.
type prepared struct {
	launches []func() error
	frees    []func()
}

// run queues the launches on the engine's stream.
func (pr *prepared) run() error {
	for _, launch := range pr.launches {
		if err := launch(); err != nil {
			return err
		}
	}
	return nil
}

// free returns what the launches hold; call it once the stream is done
// with them.
func (pr *prepared) free() {
	for _, f := range pr.frees {
		f()
	}
	pr.frees = nil
}

// NewDirect prepares p for the direct kernel family (kernels/direct.cl).
// Kernels are compiled when first used.
func NewDirect(p *nd.Problem, opt EngineOptions) (*Engine, error) {
	return newEngine(p, opt, direct{})
}

// NewSeparable prepares p for the separable kernel family
// (kernels/separable.cl): one pass per kernel axis through temporaries in
// device memory, in the CPU engine's order, so the two give the same bits.
// Every kernel of p must have factors.
func NewSeparable(p *nd.Problem, opt EngineOptions) (*Engine, error) {
	if !p.Separable() {
		return nil, fmt.Errorf("cuda: separable method: a kernel is not separable")
	}
	return newEngine(p, opt, separable{})
}

func newEngine(p *nd.Problem, opt EngineOptions, m method) (*Engine, error) {
	dev, err := Open(opt.Device)
	if err != nil {
		return nil, err
	}
	return &Engine{dev: dev, p: p, opt: opt, method: m,
		registerMin: hostRegMinBytes, directCopyMin: minDirectCopy}, nil
}

// Close releases the pipeline, the prepared launches, the host memory
// registered for it that no other engine uses, and the device.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	if e.stream != nil {
		errs = append(errs, e.stream.Synchronize())
	}
	errs = append(errs, e.pipe.close())
	e.pipe = nil
	errs = append(errs, e.dev.hostRegs.close(e))
	if e.onDev != nil {
		e.onDev.pr.free()
		e.onDev = nil
	}
	if c, ok := e.method.(interface{ close() }); ok {
		// Methods that keep device state (FFT's plans and buffers)
		// release it once the stream is done with it.
		if e.stream != nil {
			e.stream.Synchronize()
		}
		c.close()
	}
	if e.stream != nil {
		errs = append(errs, e.stream.Close())
		e.stream = nil
	}
	errs = append(errs, e.dev.Close())
	return errors.Join(errs...)
}

// Execute correlates host arrays through the pipeline (executePipelined):
// in chunks when the problem is large or beyond the memory budget, each
// chunk's transfers overlapping other chunks' kernels. An array of 1 MiB
// or more that Execute sees a second time (the same Go object, or a view
// of one already registered) is page-locked (cuMemHostRegister) and
// copied straight to and from the device from then on; the engine keeps
// it alive and locked until Close, unless other arrays push it out
// (hostreg.go). Memory outside the Go heap always goes through staging.
func (e *Engine) Execute(ctx context.Context, dst, src nd.Array) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.ensureStream(); err != nil {
		return err
	}
	if e.pieces == nil {
		chunks, err := e.chunks()
		if err != nil {
			return err
		}
		e.pieces = chunks
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

// ensureStream creates the engine's stream on first use; e.mu is held.
func (e *Engine) ensureStream() error {
	if e.stream != nil {
		return nil
	}
	s, err := e.dev.NewStream()
	e.stream = s
	return err
}

// direct is the direct kernel family: one launch.
type direct struct{}

// separableOptions are the limits kernels.NewSeparable plans a CUDA launch
// within, with the engine's tuning.
func (e *Engine) separableOptions() kernels.SeparableOptions { return separableOptions(e.opt.Tuning) }

func separableOptions(t kernels.Tuning) kernels.SeparableOptions {
	return kernels.SeparableOptions{MaxLocalBytes: maxStaticShared, MaxParamBytes: maxParamTapBytes, Fused: t.Fused, Sep3: t.Sep3, SepTile: t.SepTile, FuseSmall: t.FuseSmall}
}

// directOptions are the limits kernels.NewDirect plans a CUDA launch
// within, with the engine's tuning.
func (e *Engine) directOptions() kernels.DirectOptions { return directOptions(e.opt.Tuning) }

func directOptions(t kernels.Tuning) kernels.DirectOptions {
	return kernels.DirectOptions{MaxLocalBytes: maxStaticShared, MaxGroupsYZ: 65535, MaxParamBytes: maxParamTapBytes, Tiled: t.Tiled, Rows: t.Rows}
}

func (direct) prepare(e *Engine, p *nd.Problem, in, out DevicePtr, _ [2]*Buffer) (*prepared, error) {
	pr := &prepared{}
	l, err := kernels.NewDirect(p, e.directOptions())
	if err != nil || l == nil {
		return pr, err
	}
	return pr, e.prepareLaunch(pr, l, in, out)
}

func (direct) describe(e *Engine, p *nd.Problem) string {
	if l, err := kernels.NewDirect(p, e.directOptions()); err == nil && l != nil {
		return l.Describe()
	}
	return ""
}

func (direct) temps(*Engine, *nd.Problem) (n, bytes int) { return 0, 0 }

func (direct) modules(e *Engine, p *nd.Problem) ([]*kernels.Launch, error) {
	l, err := kernels.NewDirect(p, e.directOptions())
	if err != nil || l == nil {
		return nil, err
	}
	return []*kernels.Launch{l}, nil
}

// separable is the separable kernel family: a pass per kernel axis and
// bank kernel, through up to two temporaries from the pool.
type separable struct{}

func (separable) prepare(e *Engine, p *nd.Problem, in, out DevicePtr, temps [2]*Buffer) (*prepared, error) {
	pr := &prepared{}
	s, err := kernels.NewSeparable(p, e.separableOptions())
	if err != nil || s == nil {
		return pr, err
	}
	buffers := map[kernels.Role]DevicePtr{kernels.Input: in, kernels.Output: out}
	for i := range s.Temps {
		if t := temps[i]; t != nil {
			buffers[kernels.Temp0+kernels.Role(i)] = t.Ptr()
			continue
		}
		t, err := e.dev.Pool().Get(max(s.TempElems*kernels.AccBytes(p), 1))
		if err != nil {
			return pr, err
		}
		pr.frees = append(pr.frees, func() { t.Free() })
		buffers[kernels.Temp0+kernels.Role(i)] = t.Ptr()
	}
	for _, step := range s.Steps {
		if err := e.prepareLaunch(pr, step.Launch, buffers[step.From], buffers[step.To]); err != nil {
			return pr, err
		}
	}
	return pr, nil
}

func (separable) describe(e *Engine, p *nd.Problem) string {
	if s, err := kernels.NewSeparable(p, e.separableOptions()); err == nil && s != nil {
		return kernels.Describe(s.Steps)
	}
	return ""
}

func (separable) temps(e *Engine, p *nd.Problem) (n, bytes int) {
	s, err := kernels.NewSeparable(p, e.separableOptions())
	if err != nil || s == nil {
		return 0, 0
	}
	return s.Temps, s.TempElems * kernels.AccBytes(p)
}

func (separable) modules(e *Engine, p *nd.Problem) ([]*kernels.Launch, error) {
	s, err := kernels.NewSeparable(p, e.separableOptions())
	if err != nil || s == nil {
		return nil, err
	}
	var ls []*kernels.Launch
	for _, step := range s.Steps {
		ls = append(ls, step.Launch)
	}
	return ls, nil
}

// prepareLaunch compiles one specialised kernel, uploads its taps and
// outer-axis table, and adds its launch (reading in, writing out) to pr:
// every family's kernels take the same arguments.
func (e *Engine) prepareLaunch(pr *prepared, l *kernels.Launch, in, out DevicePtr) error {
	src, err := kernels.Source(l.Family)
	if err != nil {
		return err
	}
	mod, err := e.dev.Module(src, l.Family+".cu", l.Defines)
	if err != nil {
		return err
	}
	fn, err := mod.Function(l.Name)
	if err != nil {
		return err
	}
	var tapsArg any
	if l.TapsInParams {
		tapsArg = ByValue(gpu.TapsBytes(l))
	} else {
		taps, err := e.upload(gpu.TapsBytes(l))
		if err != nil {
			return err
		}
		pr.frees = append(pr.frees, func() { taps.Free() })
		tapsArg = taps
	}
	outer, err := e.upload(Bytes(l.Outer))
	if err != nil {
		return err
	}
	pr.frees = append(pr.frees, func() { outer.Free() })
	args := gpu.LaunchArgs(l, in, out, tapsArg, outer)
	grid := [3]uint32{uint32(l.Groups[0]), uint32(l.Groups[1]), uint32(l.Groups[2])}
	block := [3]uint32{uint32(l.Local[0]), uint32(l.Local[1]), uint32(l.Local[2])}
	pr.launches = append(pr.launches, func() error { return fn.Launch(grid, block, 0, e.stream, args...) })
	return nil
}

// upload copies small host data into a pool buffer, ordered on the stream.
func (e *Engine) upload(b []byte) (*Buffer, error) {
	buf, err := e.dev.Pool().Get(max(len(b), 1))
	if err != nil {
		return nil, err
	}
	if len(b) > 0 {
		if err := buf.CopyFromHostAsync(0, b, e.stream); err != nil {
			buf.Free()
			return nil, err
		}
	}
	return buf, nil
}

// chunks splits the problem into the pieces Execute pipelines
// (chunk.Pieces): each of the pipeline's slots (a chunk's input, output and
// temporaries) within a third of the memory budget — the options'
// MemoryBudget, else 70% of the device's free memory — and large problems
// in pieces whose transfers overlap.
func (e *Engine) chunks() ([]chunk.Chunk, error) {
	budget := e.opt.MemoryBudget
	if budget <= 0 {
		info, err := e.dev.Info()
		if err != nil {
			return nil, err
		}
		budget = info.FreeMemory / 10 * 7
	}
	return e.chunksWithin(budget)
}

// chunksWithin splits the problem as chunks does for a memory budget.
func (e *Engine) chunksWithin(budget int64) ([]chunk.Chunk, error) {
	chunks, err := chunk.Pieces(e.p, budget, pipelineDepth, e.opt.PieceBytes, func(q *nd.Problem) int64 {
		n, bytes := e.method.temps(e, q)
		return int64(n) * int64(bytes)
	})
	if err != nil {
		return nil, &Error{Call: "chunks", Name: "CUDA_ERROR_OUT_OF_MEMORY", Message: err.Error()}
	}
	return chunks, nil
}

// Array is an array in device memory, so that operations chain on the GPU
// with no transfers: Upload once, ExecuteDevice as often as wanted,
// Download the result.
type Array struct {
	Shape []int
	DType nd.DType
	Buf   *Buffer
}

// NewArray allocates an uninitialised device array.
func NewArray(dev *Device, dt nd.DType, shape ...int) (*Array, error) {
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

// Upload copies a host array to the device.
func Upload(dev *Device, a nd.Array) (*Array, error) {
	if err := a.Check(); err != nil {
		return nil, err
	}
	d, err := NewArray(dev, a.DType(), a.Shape...)
	if err != nil {
		return nil, err
	}
	if b := a.Bytes(); len(b) > 0 {
		if err := d.Buf.CopyFromHost(0, b); err != nil {
			d.Free()
			return nil, err
		}
	}
	return d, nil
}

// Download copies a device array to a new host array.
func (a *Array) Download() (nd.Array, error) {
	h, err := nd.New(a.DType, a.Shape...)
	if err != nil {
		return nd.Array{}, err
	}
	if b := h.Bytes(); len(b) > 0 {
		if err := a.Buf.CopyToHost(b, 0); err != nil {
			return nd.Array{}, err
		}
	}
	return h, nil
}

// Free releases the device memory.
func (a *Array) Free() error { return a.Buf.Free() }

// ExecuteDevice correlates device arrays: src must have the problem's input
// shape and dtype, dst its output's. Nothing moves between host and
// device: the launches are prepared (compiled, parameters uploaded) once
// for a pair of arrays and kept while the engine runs on that pair. It
// returns when the kernels are done.
func (e *Engine) ExecuteDevice(ctx context.Context, dst, src *Array) error {
	if err := e.checkArrays(dst, src); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.ensureStream(); err != nil {
		return err
	}
	in, out := src.Buf.Ptr(), dst.Buf.Ptr()
	if e.onDev == nil || e.onDev.in != in || e.onDev.out != out {
		if e.onDev != nil {
			e.onDev.pr.free() // the stream is idle: every execution waits for it
			e.onDev = nil
		}
		pr, err := e.method.prepare(e, e.p, in, out, [2]*Buffer{})
		if err != nil {
			e.stream.Synchronize()
			pr.free()
			return err
		}
		e.onDev = &devicePrepared{in: in, out: out, pr: pr}
	}
	err := e.onDev.pr.run()
	if serr := e.stream.Synchronize(); err == nil {
		err = serr
	}
	return err
}

// TimeDevice times the problem on device arrays as the bench needs it:
// the launches prepared once (compiled, parameters uploaded), run once to
// warm up and then repeats times between CUDA events on the engine's
// stream. It returns each run's milliseconds.
func (e *Engine) TimeDevice(dst, src *Array, repeats int) ([]float64, error) {
	if err := e.checkArrays(dst, src); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.ensureStream(); err != nil {
		return nil, err
	}
	pr, err := e.method.prepare(e, e.p, src.Buf.Ptr(), dst.Buf.Ptr(), [2]*Buffer{})
	var ms []float64
	if err == nil {
		ms, err = TimeOnStream(e.dev, e.stream, repeats, pr.run)
	}
	if serr := e.stream.Synchronize(); err == nil {
		err = serr
	}
	pr.free()
	return ms, err
}

// checkArrays checks device arrays against the problem.
func (e *Engine) checkArrays(dst, src *Array) error {
	p := e.p
	if src.DType != p.In || !slices.Equal(src.Shape, p.InShape) {
		return &nd.ArgumentError{Arg: "input", Msg: fmt.Sprintf("device array %v %v, the plan takes %v %v", src.DType, src.Shape, p.In, p.InShape)}
	}
	if dst.DType != p.Out || !slices.Equal(dst.Shape, p.FullShape()) {
		return &nd.ArgumentError{Arg: "output", Msg: fmt.Sprintf("device array %v %v, the plan gives %v %v", dst.DType, dst.Shape, p.Out, p.FullShape())}
	}
	return nil
}

// Device is the device the engine runs on.
func (e *Engine) Device() *Device { return e.dev }
