package cuda

import (
	"context"
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
	// MemoryBudget bounds the device memory one execution's input and
	// output may take; 0 means most of the device's free memory. Larger
	// problems run in slabs along the slowest axis.
	MemoryBudget int64
	Progress     nd.Progress
	// Tuning fixes the kernels' work decomposition (the tuner's choice,
	// or a tuning cache's); zero lets kernels choose.
	Tuning kernels.Tuning
}

// maxStaticShared is the static shared memory a tile may declare: CUDA
// allows 48 KiB without opting in.
const maxStaticShared = 48 << 10

// maxParamTapBytes is how many bytes of weights a launch passes among its
// kernel parameters (CUDA 12.1 and later take 32,764 bytes of parameters
// on every supported GPU); larger banks read theirs from a buffer.
const maxParamTapBytes = 30 << 10

// Engine executes one normalised problem with one method's kernel family:
// data in host memory through pinned staging buffers on a stream, or device
// arrays directly. It keeps its compiled kernels and staging memory between
// executions; one execution runs at a time.
type Engine struct {
	dev    *Device
	p      *nd.Problem
	opt    EngineOptions
	method method

	mu     sync.Mutex
	stream *Stream
	staged *HostBuffer // pinned, input and output staging
}

// A method turns a problem into launches on the engine's stream.
type method interface {
	// prepare compiles the launches that compute p from in into out and
	// puts their parameters (and any temporaries) on the device. It
	// returns what it prepared even on error, for the caller to free.
	prepare(e *Engine, p *nd.Problem, in, out DevicePtr) (*prepared, error)
	// tempBytesPerRow is the temporary device memory per row along axis 0
	// of a slab's input, for the memory budget.
	tempBytesPerRow(p *nd.Problem) int64
	// describe names the implementations its launches use for p.
	describe(e *Engine, p *nd.Problem) string
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
	return &Engine{dev: dev, p: p, opt: opt, method: m}, nil
}

// Close releases the staging memory and the device.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.staged != nil {
		e.staged.Free()
		e.staged = nil
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
		e.stream.Close()
		e.stream = nil
	}
	return e.dev.Close()
}

// Execute correlates host arrays: the input is staged through pinned
// memory onto the device, slab by slab when the problem is larger than the
// memory budget, and the output comes back the same way.
func (e *Engine) Execute(ctx context.Context, dst, src nd.Array) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.ensureStream(); err != nil {
		return err
	}
	slabs, err := e.slabs()
	if err != nil {
		return err
	}
	inSize, outSize := e.p.In.Size(), e.p.Out.Size()
	srcBytes, dstBytes := src.Bytes(), dst.Bytes()
	for i, s := range slabs {
		if err := ctx.Err(); err != nil {
			return err
		}
		inBytes, outBytes := s.inElems*inSize, s.outElems*outSize
		if err := e.stage(max(inBytes, outBytes)); err != nil {
			return err
		}
		in, err := e.dev.Pool().Get(max(inBytes, 1))
		if err != nil {
			return err
		}
		out, err := e.dev.Pool().Get(max(outBytes, 1))
		if err != nil {
			in.Free()
			return err
		}
		err = e.runSlab(s, in, out, srcBytes, dstBytes[s.outOffset*outSize:][:outBytes])
		in.Free()
		out.Free()
		if err != nil {
			return err
		}
		if e.opt.Progress != nil {
			e.opt.Progress.Report(int64(i+1), int64(len(slabs)))
		}
	}
	return nil
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

// stagingBytes bounds the pinned staging buffer: data moves through it in
// pieces, so that pinning (slow to allocate) stays small however large the
// arrays.
var stagingBytes = 32 << 20 // a variable so that tests can force many pieces

// runSlab moves a slab's input rows through the staging buffer to the
// device, launches, and moves the output back into dst the same way.
func (e *Engine) runSlab(s slab, in, out *Buffer, src, dst []byte) error {
	rowBytes := s.rowElems * e.p.In.Size()
	staged := e.staged.Bytes()
	fill, off := 0, 0
	flush := func() error {
		if fill == 0 {
			return nil
		}
		if err := in.CopyFromHostAsync(off, staged[:fill], e.stream); err != nil {
			return err
		}
		// The staging buffer is refilled only once the copy is done.
		if err := e.stream.Synchronize(); err != nil {
			return err
		}
		off += fill
		fill = 0
		return nil
	}
	for _, from := range s.rows {
		row := src[from*rowBytes : (from+1)*rowBytes]
		for len(row) > 0 {
			n := copy(staged[fill:], row)
			fill += n
			row = row[n:]
			if fill == len(staged) {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	pr, err := e.method.prepare(e, s.problem, in.Ptr(), out.Ptr())
	if err == nil {
		err = pr.run()
	}
	for off := 0; err == nil && off < len(dst); off += len(staged) {
		n := min(len(staged), len(dst)-off)
		if err = out.CopyToHostAsync(staged[:n], off, e.stream); err == nil {
			if err = e.stream.Synchronize(); err == nil {
				copy(dst[off:off+n], staged[:n])
			}
		}
	}
	// Whatever failed, the stream must be idle before its buffers are reused.
	if serr := e.stream.Synchronize(); err == nil {
		err = serr
	}
	pr.free()
	return err
}

// stage makes the pinned staging buffer min(n, stagingBytes) bytes or more.
func (e *Engine) stage(n int) error {
	n = max(min(n, stagingBytes), 1)
	if e.staged != nil && e.staged.Size() >= n {
		return nil
	}
	if e.staged != nil {
		e.staged.Free()
		e.staged = nil
	}
	h, err := e.dev.AllocHost(n)
	if err != nil {
		return err
	}
	e.staged = h
	return nil
}

// direct is the direct kernel family: one launch.
type direct struct{}

// separableOptions are the limits kernels.NewSeparable plans a CUDA launch
// within, with the engine's tuning.
func (e *Engine) separableOptions() kernels.SeparableOptions {
	return kernels.SeparableOptions{MaxLocalBytes: maxStaticShared, MaxParamBytes: maxParamTapBytes, Fused: e.opt.Tuning.Fused}
}

// directOptions are the limits kernels.NewDirect plans a CUDA launch
// within, with the engine's tuning.
func (e *Engine) directOptions() kernels.DirectOptions {
	return kernels.DirectOptions{MaxLocalBytes: maxStaticShared, MaxGroupsYZ: 65535, MaxParamBytes: maxParamTapBytes, Tiled: e.opt.Tuning.Tiled}
}

func (direct) prepare(e *Engine, p *nd.Problem, in, out DevicePtr) (*prepared, error) {
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

func (direct) tempBytesPerRow(*nd.Problem) int64 { return 0 }

// separable is the separable kernel family: a pass per kernel axis and
// bank kernel, through up to two temporaries from the pool.
type separable struct{}

func (separable) prepare(e *Engine, p *nd.Problem, in, out DevicePtr) (*prepared, error) {
	pr := &prepared{}
	s, err := kernels.NewSeparable(p, e.separableOptions())
	if err != nil || s == nil {
		return pr, err
	}
	buffers := map[kernels.Role]DevicePtr{kernels.Input: in, kernels.Output: out}
	for i := range s.Temps {
		t, err := e.dev.Pool().Get(max(s.TempElems*accSize(p), 1))
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

// tempBytesPerRow: each temporary holds at most a row's input or output
// elements (one kernel of the bank at a time) in the accumulator type.
func (separable) tempBytesPerRow(p *nd.Problem) int64 {
	in, out := 1, 1
	for d := 1; d < len(p.InShape); d++ {
		in *= p.InShape[d]
		out *= p.OutShape[d]
	}
	return 2 * int64(max(in, out)*accSize(p))
}

func accSize(p *nd.Problem) int {
	if p.Wide {
		return 8
	}
	return 4
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
	args := []any{in, out, tapsArg, outer}
	for _, v := range l.Scalars {
		args = append(args, v)
	}
	if l.Wide {
		args = append(args, l.CVal)
	} else {
		args = append(args, float32(l.CVal))
	}
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

// A slab is a chunk of the problem (package chunk): a run of output rows
// and the input rows it reads, as a problem of its own that needs no
// border rule where it was cut.
type slab struct {
	problem   *nd.Problem
	rows      []int // the input row (of rowElems elements) of each slab input row
	rowElems  int   // elements in one row
	inElems   int
	outElems  int // including the bank
	outOffset int // first output element (including the bank)
}

// slabs splits the problem with package chunk so that each slab's input,
// output and temporaries fit the memory budget. A problem that fits is one
// slab reading every row.
func (e *Engine) slabs() ([]slab, error) {
	p := e.p
	budget := e.opt.MemoryBudget
	if budget <= 0 {
		info, err := e.dev.Info()
		if err != nil {
			return nil, err
		}
		budget = info.FreeMemory / 10 * 7
	}
	chunks, err := chunk.Split(p, chunk.Budget{Bytes: budget, Scratch: func(q *nd.Problem) int64 {
		return e.method.tempBytesPerRow(q) * int64(max(q.InShape[0], q.OutShape[0]))
	}})
	if err != nil {
		return nil, &Error{Call: "slabs", Name: "CUDA_ERROR_OUT_OF_MEMORY", Message: err.Error()}
	}
	out := make([]slab, len(chunks))
	for i, c := range chunks {
		// The chunk's input is whole rows of RowElems elements, copied
		// one by one in order.
		s := slab{problem: c.Problem, rowElems: c.RowElems(), inElems: c.InElems, outElems: c.OutElems, outOffset: c.OutOffset}
		c.Runs(func(from, _, n int) {
			for r := from; r < from+n; r += s.rowElems {
				s.rows = append(s.rows, r/s.rowElems)
			}
		})
		out[i] = s
	}
	return out, nil
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
// shape and dtype, dst its output's. Nothing moves between host and device
// but the kernel's few parameters; it returns when the kernel is done.
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
	pr, err := e.method.prepare(e, e.p, src.Buf.Ptr(), dst.Buf.Ptr())
	if err == nil {
		err = pr.run()
	}
	if serr := e.stream.Synchronize(); err == nil {
		err = serr
	}
	pr.free()
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
	pr, err := e.method.prepare(e, e.p, src.Buf.Ptr(), dst.Buf.Ptr())
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
