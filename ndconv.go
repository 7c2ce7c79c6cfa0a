package ndconv

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/plan"
)

// The element types, border rules, output modes and methods, re-exported so
// that most programs need only this package.
type (
	Array    = nd.Array
	DType    = nd.DType
	Border   = nd.Border
	Mode     = nd.Mode
	Kernel   = nd.Kernel
	Method   = plan.Method
	Progress = nd.Progress
	// BankLayout is where a filter bank's kernel axis lies in the output:
	// Interleaved (trailing, the default) or Planar (leading).
	BankLayout = nd.BankLayout
)

const (
	Uint8   = nd.Uint8
	Uint16  = nd.Uint16
	Int16   = nd.Int16
	Int32   = nd.Int32
	Float32 = nd.Float32
	Float64 = nd.Float64

	Interleaved = nd.Interleaved
	Planar      = nd.Planar

	Complex64  = nd.Complex64
	Complex128 = nd.Complex128

	Reflect  = nd.Reflect
	Mirror   = nd.Mirror
	Nearest  = nd.Nearest
	Wrap     = nd.Wrap
	Constant = nd.Constant

	Same  = nd.Same
	Valid = nd.Valid
	Full  = nd.Full

	Auto      = plan.Auto
	Direct    = plan.Direct
	Separable = plan.Separable
	FFT       = plan.FFT
	Gemm      = plan.Gemm
	Winograd  = plan.Winograd
)

// ParseMethod accepts auto, direct, separable, fft, gemm and winograd, as Options.Method's
// text (the C API's "method" field, the CLI's --method).
func ParseMethod(s string) (Method, error) { return plan.ParseMethod(s) }

// Options are the parameters of a filtering call. The zero value means
// scipy.ndimage's defaults: reflect border, cval 0, origin 0, same-size
// output, the kernel spanning the input's first axes, output dtype equal to
// the input's, the best device and method.
type Options struct {
	Border Border
	CVal   float64 // the value outside the input for the Constant border
	// CValImag is the imaginary part of a complex cval (complex data only,
	// as in scipy).
	CValImag float64
	// Origin shifts the kernel per kernel axis (one value applies to all);
	// −(k/2) ≤ o ≤ (k−1)/2. It only moves the output in Same mode.
	Origin []int
	Mode   Mode
	// Axes names the input axes the kernel spans, in kernel axis order
	// (negative values count from the end). Default: the first len(kernel
	// shape) axes, so a 2-D kernel filters an H×W×C image per channel.
	Axes   []int
	DType  DType  // output element type; zero means the input's
	Device string // auto, cpu, cuda, cuda:N, opencl, opencl:P:D; "" means auto
	Method Method
	// Exact restricts Auto to the exact methods (direct, separable), whose
	// results are the same bits on every device; FFT, which differs from
	// them by rounding, then runs only when Method asks for it (an error
	// with Exact).
	Exact bool
	// Workers caps the CPU goroutines; 0 means all cores (a negative
	// count is an ArgumentError).
	Workers int
	// DeviceMemory bounds the GPU memory one execution takes (input,
	// output and temporaries, in bytes): a larger problem runs in chunks,
	// bit-identical to running whole. 0 means 70% of the device's memory;
	// a negative bound is an ArgumentError.
	DeviceMemory int64
	// BankLayout places a filter bank's kernel axis: Interleaved (the
	// zero value) appends it, shape (…, K), out[voxel*K + k]; Planar puts
	// it first, shape (K, …), out[k*N + voxel] for N voxels per kernel,
	// today's output with its last axis moved to the front (numpy's
	// moveaxis(out, -1, 0)), the same bits. It changes nothing for one
	// kernel (no bank axis). Execute, ExecuteDevice and ExecuteBlocks
	// offer both on every device and method (see each for what it
	// costs); ExecuteChunks refuses a planar bank (ArgumentError).
	// docs/bank-layout.md has the details.
	BankLayout BankLayout
	Progress   Progress // receives progress of long operations; may be nil
}

// ParseBankLayout accepts interleaved and planar, as Options.BankLayout's
// text (the C API's "bank_layout" field, the CLI's --bank-layout).
func ParseBankLayout(s string) (BankLayout, error) { return nd.ParseBankLayout(s) }

// Operation is correlation or convolution.
type Operation uint8

const (
	Correlation Operation = iota // scipy.ndimage.correlate, OpenCV filter2D
	Convolution                  // scipy.ndimage.convolve
)

func (op Operation) String() string {
	if op == Convolution {
		return "convolve"
	}
	return "correlate"
}

// NewKernel returns a dense kernel of the given shape with weights in C
// order.
func NewKernel(shape []int, weights []float64) Kernel {
	return Kernel{Shape: slices.Clone(shape), Weights: slices.Clone(weights)}
}

// ComplexKernel returns a dense kernel of complex weights in C order.
// Complex data or weights give a complex output (complex64, or complex128
// for data that needs float64 accumulation, as scipy.ndimage does).
// Correlation conjugates complex weights, as scipy.ndimage.correlate (and
// numpy.correlate) do; convolution does not.
func ComplexKernel(shape []int, weights []complex128) Kernel {
	k := Kernel{Shape: slices.Clone(shape), Weights: make([]float64, len(weights)), Imag: make([]float64, len(weights))}
	for i, w := range weights {
		k.Weights[i], k.Imag[i] = real(w), imag(w)
	}
	return k
}

// SeparableKernel returns the kernel that is the outer product of one 1-D
// factor per axis; it runs as one pass per axis.
func SeparableKernel(factors ...[]float64) Kernel {
	k := Kernel{Factors: make([][]float64, len(factors))}
	for i, f := range factors {
		k.Factors[i] = slices.Clone(f)
		k.Shape = append(k.Shape, len(f))
	}
	return k
}

// Plan is a filtering operation prepared for inputs of one shape and dtype:
// validation, normalisation, the choice of method and device and all
// scratch memory are done once by NewPlan.
//
// A Plan is safe for concurrent use, and its executions take turns:
// Execute, ExecuteDevice and Compile calls on one plan run one at a time
// (a call waiting for its turn still returns when its context ends), since
// they share the plan's scratch memory and each already uses every core or
// the whole device; goroutines that want to compute at the same time
// create a plan each. ExecuteChunks prepares its own scratch per call and
// does not wait. Close waits for the call running; calls after it are
// ErrClosed.
//
// Inputs with an axis of length 0 give an empty output (scipy's result):
// same mode keeps the input's shape, valid mode keeps a length-0 axis the
// kernel does not span (a kernel axis longer than the input's, 0 included,
// is an error), and full mode keeps a length-0 axis at 0 — no window
// touches it — and widens the others to n+k−1. Such a plan computes
// nothing on any device. A 0-D input (no axis) is an error.
//
// A nil or zero Plan (not made by NewPlan) never panics: its methods that
// return an error report one, the others zero values, and its Close does
// nothing.
type Plan struct {
	problem *nd.Problem
	exec    *plan.Executable
	inType  DType
	opt     plan.Options
	dev     *Device // the device that made the plan (Device.NewPlan), else nil
	held    heldDevices
	// planar makes a bank output in the planar layout from the engines'
	// interleaved one (Options.BankLayout); nil otherwise.
	planar *planarBank
}

// NewPlan prepares op with the given kernels (several make a filter bank)
// for inputs of the given shape and dtype.
func NewPlan(op Operation, shape []int, dtype DType, opt Options, kernels ...Kernel) (*Plan, error) {
	spec := nd.Spec{
		Shape: shape, In: dtype, Out: opt.DType, Kernels: kernels,
		Axes: opt.Axes, Origin: opt.Origin, Border: opt.Border, CVal: opt.CVal,
		CValImag: opt.CValImag, Mode: opt.Mode, Convolve: op == Convolution,
	}
	p, err := spec.Normalize()
	if err != nil {
		return nil, err
	}
	dev, err := plan.ParseDevice(opt.Device)
	if err != nil {
		return nil, err
	}
	popt := plan.Options{Device: dev, Method: opt.Method, Exact: opt.Exact, Workers: opt.Workers, Progress: opt.Progress,
		DeviceMemory: opt.DeviceMemory}
	exec, planar, err := planBank(p, popt, opt.BankLayout, opt.Workers)
	if err != nil {
		return nil, err
	}
	return &Plan{problem: p, exec: exec, inType: dtype, opt: popt, planar: planar}, nil
}

// errNoPlan is the error of a nil or zero Plan's methods.
var errNoPlan = &nd.ArgumentError{Arg: "plan", Msg: "a nil or zero Plan (make one with NewPlan)"}

// ready reports errNoPlan for a nil or zero plan.
func (p *Plan) ready() error {
	if p == nil || p.exec == nil || p.problem == nil {
		return errNoPlan
	}
	return nil
}

// checkContext refuses a nil context.Context, Go's rule: pass
// context.Background() or context.TODO().
func checkContext(ctx context.Context) error {
	if ctx == nil {
		return &nd.ArgumentError{Arg: "context", Msg: "nil context (pass context.Background())"}
	}
	return nil
}

// Shape is the output's shape, including the bank axis when there are
// several kernels, trailing or (Options.BankLayout Planar) leading (nil
// for a nil or zero plan).
func (p *Plan) Shape() []int {
	if p.ready() != nil {
		return nil
	}
	if p.planar != nil {
		return nd.PlanarShape(p.problem.FullShape())
	}
	return p.problem.FullShape()
}

// isShape reports whether shape is the output's shape (Shape), without
// the copy Shape makes: a reused plan's Execute allocates nothing.
func (p *Plan) isShape(shape []int) bool {
	out := p.problem.OutShape
	if p.planar != nil {
		return nd.IsPlanarShape(shape, out, len(p.problem.Kernels))
	}
	if p.problem.Bank {
		return len(shape) == len(out)+1 && slices.Equal(shape[:len(out)], out) && shape[len(out)] == len(p.problem.Kernels)
	}
	return slices.Equal(shape, out)
}

// DType is the output's element type.
func (p *Plan) DType() DType {
	if p.ready() != nil {
		return nd.Unspecified
	}
	return p.problem.Out
}

// Method reports the method the plan runs (direct for an empty input
// under Auto: there is nothing to compute).
func (p *Plan) Method() Method {
	if p.ready() != nil {
		return Auto
	}
	return p.exec.Method
}

// Device reports the device the plan runs on (the CPU for an empty input
// under auto).
func (p *Plan) Device() string {
	if p.ready() != nil {
		return ""
	}
	return p.exec.Device.String()
}

// DeviceChoice says, on one line, why auto chose the plan's device: the
// CPU's and the GPU's estimates of the whole call ("auto: cpu 42 ms est.
// vs cuda:0 410 ms est. (context 350, compile 0, copies 40, kernel 2)"),
// or why there was no comparison. It is empty where the options named
// the device.
func (p *Plan) DeviceChoice() string {
	if p.ready() != nil || p.exec.Choice == (plan.Choice{}) {
		return ""
	}
	return p.exec.Choice.String()
}

// Compile compiles now the GPU kernels the plan's first Execute would
// compile (CUDA's NVRTC, 0.2–0.3 s per kernel not in the on-disk cache),
// so that a caller that knows the shape and dtype before the data (from a
// file's header) overlaps them with reading the data. On the CPU it does
// nothing.
func (p *Plan) Compile() error {
	if err := p.ready(); err != nil {
		return err
	}
	return p.exec.Compile()
}

// Prewarm begins opening the device named as Options.Device names it, in
// the background, and returns at once: a GPU's driver loaded and context
// created while the caller does other work (reads its input), so that
// plans made after find it ready, and auto counts only what remains of
// its start. "cpu" starts nothing; "auto" opens the GPU auto would use,
// if one is usable. Failures are not reported here: a plan that needs the
// device reports its own. Close the result once the plans are made; it
// lets go without waiting.
func Prewarm(device string) (*Warm, error) {
	dev, err := plan.ParseDevice(device)
	if err != nil {
		return nil, err
	}
	return &Warm{plan.Prewarm(dev)}, nil
}

// Close releases what the plan holds on its device (a GPU engine's memory,
// streams and device); executing the plan afterwards is an error
// (ErrClosed). It waits for an execution running on another goroutine to
// finish. Closing twice, or closing a nil or zero Plan, does nothing. A
// plan on the CPU holds only memory, which the garbage collector takes
// back either way.
func (p *Plan) Close() error {
	if p.ready() != nil {
		return nil
	}
	if p.dev != nil {
		p.dev.forget(p)
	}
	return errors.Join(p.exec.Close(), p.held.close())
}

// ErrClosed is the error of executing a plan after its Close.
var ErrClosed = plan.ErrClosed

// Execute filters src into dst and returns dst. When dst has no Data, a new
// array is allocated; otherwise it must have the plan's output Shape and
// DType. dst may share memory with src (dst may be src, where the shapes
// and dtypes allow, or both views of one buffer): the result is then
// computed from a copy of src, as scipy.ndimage does. A planar bank
// (Options.BankLayout) is written planar by the CPU's direct, FFT and
// separable methods (not the separable in chunks); every other device and
// method computes it interleaved into memory the plan keeps (as large as
// the output), transposed into dst (nd.ToPlanar): the same bits as the
// interleaved output, moved.
func (p *Plan) Execute(ctx context.Context, dst, src Array) (Array, error) {
	if err := p.ready(); err != nil {
		return Array{}, err
	}
	if err := checkContext(ctx); err != nil {
		return Array{}, err
	}
	if err := src.Check(); err != nil {
		return Array{}, fmt.Errorf("input: %w", err)
	}
	if src.DType() != p.inType || !slices.Equal(src.Shape, p.problem.InShape) {
		return Array{}, &nd.ArgumentError{Arg: "input", Msg: fmt.Sprintf("%v %v does not match the plan's %v %v", src.DType(), src.Shape, p.inType, p.problem.InShape)}
	}
	if dst.Data == nil {
		var err error
		if dst, err = nd.New(p.problem.Out, p.Shape()...); err != nil {
			return Array{}, err
		}
	} else if err := dst.Check(); err != nil {
		return Array{}, fmt.Errorf("output: %w", err)
	} else if dst.DType() != p.problem.Out || !p.isShape(dst.Shape) {
		return Array{}, &nd.ArgumentError{Arg: "output", Msg: fmt.Sprintf("%v %v does not match the plan's %v %v", dst.DType(), dst.Shape, p.problem.Out, p.Shape())}
	}
	if p.planar.transposes() {
		return dst, p.planar.execute(ctx, p.exec, dst, src)
	}
	if nd.Overlap(dst, src) {
		// The engines read inputs around each output they write, so an
		// output written over its input would feed outputs in as inputs.
		// Copying the input, rather than computing into a temporary output
		// and copying that, keeps the engines writing dst directly and
		// moves the smaller array in the usual cases: an output is as
		// large as its input in same mode and larger in full mode or with
		// a bank.
		copied, err := nd.New(src.DType(), src.Shape...)
		if err != nil {
			return Array{}, fmt.Errorf("copying the input, which shares memory with the output: %w", err)
		}
		copy(copied.Bytes(), src.Bytes())
		src = copied
	}
	if err := p.exec.Execute(ctx, dst, src); err != nil {
		return Array{}, err
	}
	return dst, nil
}

// planarBank is a bank output in the planar layout (Options.BankLayout).
// The CPU's direct, FFT and separable methods write it themselves
// (plan.Options.Planar, reported by Executable.Planar: native); for every
// other device and method it is
// the one step that makes it: the engine writes the interleaved layout
// into a scratch output, and nd.ToPlanar moves it into the caller's.
// Plan.Execute and BenchPlan.Execute run through it.
type planarBank struct {
	problem *nd.Problem
	workers int
	native  bool // the engine writes planar: nothing to transpose
	// inter is the scratch output between calls (nil while a call uses
	// it): two calls at once, which take turns in the engine but not in
	// the transpose, each have one, the second a fresh one.
	inter atomic.Pointer[nd.Array]
}

// planBank makes p's executable with popt and, for a planar bank, the
// step that makes it (nil where p's output is as the engines write it:
// the interleaved layout, or one kernel, no bank axis), asking the
// engine to write it planar itself (plan.Options.Planar) and noting
// whether it does (Executable.Planar). popt is not changed.
func planBank(p *nd.Problem, popt plan.Options, layout BankLayout, workers int) (*plan.Executable, *planarBank, error) {
	if err := checkBankLayout(layout); err != nil {
		return nil, nil, err
	}
	var planar *planarBank
	if p.Bank && layout == Planar {
		if workers == 0 {
			workers = runtime.GOMAXPROCS(0)
		}
		planar = &planarBank{problem: p, workers: workers}
		popt.Planar = true
	}
	exec, err := plan.New(p, popt)
	if err != nil {
		return nil, nil, err
	}
	if planar != nil {
		planar.native = exec.Planar
	}
	return exec, planar, nil
}

// checkBankLayout refuses a layout that is neither interleaved nor
// planar with an UnsupportedError.
func checkBankLayout(l BankLayout) error {
	if !l.Valid() {
		return &nd.UnsupportedError{What: "bank layout", Value: l.String(), Supported: "interleaved, planar"}
	}
	return nil
}

// transposes reports whether b makes the planar output from an
// interleaved one (execute); false for nil or a native b.
func (b *planarBank) transposes() bool { return b != nil && !b.native }

// execute runs exec on src into the scratch output and moves that into
// dst, the planar output. src may share memory with dst: it is read whole
// before dst is written.
func (b *planarBank) execute(ctx context.Context, exec *plan.Executable, dst, src Array) error {
	inter := b.inter.Swap(nil)
	if inter == nil {
		a, err := nd.New(b.problem.Out, b.problem.FullShape()...)
		if err != nil {
			return err
		}
		inter = &a
	}
	defer b.inter.Store(inter)
	if err := exec.Execute(ctx, *inter, src); err != nil {
		return err
	}
	return nd.ToPlanar(dst, *inter, len(b.problem.Kernels), b.workers)
}

// planarRefused is the error of the paths that do not offer the planar
// bank layout (yet): path names the call and the reason.
func planarRefused(path string) error {
	return &nd.ArgumentError{Arg: "bank layout", Msg: "planar is not offered by " + path + "; use Execute, or the interleaved layout"}
}

// Correlate correlates src with the kernels (several make a filter bank),
// as scipy.ndimage.correlate does. Each call prepares a plan and closes it
// (on a GPU the device is released when nothing else holds it); for
// repeated calls keep a Plan, which keeps its device and compiled kernels.
func Correlate(ctx context.Context, src Array, opt Options, kernels ...Kernel) (Array, error) {
	return run(ctx, Correlation, src, opt, kernels)
}

// Convolve convolves src with the kernels (several make a filter bank), as
// scipy.ndimage.convolve does.
func Convolve(ctx context.Context, src Array, opt Options, kernels ...Kernel) (Array, error) {
	return run(ctx, Convolution, src, opt, kernels)
}

func run(ctx context.Context, op Operation, src Array, opt Options, kernels []Kernel) (Array, error) {
	if err := checkContext(ctx); err != nil {
		return Array{}, err
	}
	if err := src.Check(); err != nil {
		return Array{}, fmt.Errorf("input: %w", err)
	}
	p, err := NewPlan(op, src.Shape, src.DType(), opt, kernels...)
	if err != nil {
		return Array{}, err
	}
	defer p.Close()
	return p.Execute(ctx, Array{}, src)
}

// CorrelateSlice correlates the C-order data of the given shape and returns
// the output's data and shape; the output has the input's element type, so
// opt.DType must be zero or T's.
func CorrelateSlice[T nd.Element](ctx context.Context, data []T, shape []int, opt Options, kernels ...Kernel) ([]T, []int, error) {
	return runSlice(ctx, Correlation, data, shape, opt, kernels)
}

// ConvolveSlice is CorrelateSlice for convolution.
func ConvolveSlice[T nd.Element](ctx context.Context, data []T, shape []int, opt Options, kernels ...Kernel) ([]T, []int, error) {
	return runSlice(ctx, Convolution, data, shape, opt, kernels)
}

func runSlice[T nd.Element](ctx context.Context, op Operation, data []T, shape []int, opt Options, kernels []Kernel) ([]T, []int, error) {
	if err := checkContext(ctx); err != nil {
		return nil, nil, err
	}
	src, err := nd.FromSlice(data, shape...)
	if err != nil {
		return nil, nil, err
	}
	if opt.DType != 0 && opt.DType != src.DType() {
		return nil, nil, &nd.ArgumentError{Arg: "dtype", Msg: fmt.Sprintf("a []%v result cannot hold %v; use Correlate or Convolve with an Array", src.DType(), opt.DType)}
	}
	p, err := NewPlan(op, src.Shape, src.DType(), opt, kernels...)
	if err != nil {
		return nil, nil, err
	}
	defer p.Close()
	if p.DType() != src.DType() {
		return nil, nil, &nd.ArgumentError{Arg: "dtype", Msg: fmt.Sprintf("a []%v result cannot hold the %v output; use Correlate or Convolve with an Array", src.DType(), p.DType())}
	}
	out, err := p.Execute(ctx, Array{}, src)
	if err != nil {
		return nil, nil, err
	}
	return out.Data.([]T), out.Shape, nil
}
