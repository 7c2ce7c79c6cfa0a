package ndconv

import (
	"context"
	"fmt"
	"slices"

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
)

const (
	Uint8   = nd.Uint8
	Uint16  = nd.Uint16
	Int16   = nd.Int16
	Int32   = nd.Int32
	Float32 = nd.Float32
	Float64 = nd.Float64

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
)

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
	// Workers caps the CPU goroutines; 0 means all cores.
	Workers int
	// DeviceMemory bounds the GPU memory one execution takes (input,
	// output and temporaries, in bytes): a larger problem runs in chunks,
	// bit-identical to running whole. 0 means 70% of the device's memory.
	DeviceMemory int64
	Progress     Progress // receives progress of long operations; may be nil
}

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
// scratch memory are done once by NewPlan. A Plan is not safe for concurrent
// use; create one per goroutine.
type Plan struct {
	problem *nd.Problem
	exec    *plan.Executable
	inType  DType
	opt     plan.Options
	dev     *Device // the device that made the plan (Device.NewPlan), else nil
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
	exec, err := plan.New(p, popt)
	if err != nil {
		return nil, err
	}
	return &Plan{problem: p, exec: exec, inType: dtype, opt: popt}, nil
}

// Shape is the output's shape, including the trailing bank axis when there
// are several kernels.
func (p *Plan) Shape() []int { return p.problem.FullShape() }

// DType is the output's element type.
func (p *Plan) DType() DType { return p.problem.Out }

// Method reports the method the plan runs.
func (p *Plan) Method() Method { return p.exec.Method }

// Device reports the device the plan runs on.
func (p *Plan) Device() string { return p.exec.Device.String() }

// DeviceChoice says, on one line, why auto chose the plan's device: the
// CPU's and the GPU's estimates of the whole call ("auto: cpu 42 ms est.
// vs cuda:0 410 ms est. (context 350, compile 0, copies 40, kernel 2)"),
// or why there was no comparison. It is empty where the options named
// the device.
func (p *Plan) DeviceChoice() string {
	if p.exec.Choice == (plan.Choice{}) {
		return ""
	}
	return p.exec.Choice.String()
}

// Compile compiles now the GPU kernels the plan's first Execute would
// compile (CUDA's NVRTC, 0.2–0.3 s per kernel not in the on-disk cache),
// so that a caller that knows the shape and dtype before the data (from a
// file's header) overlaps them with reading the data. On the CPU it does
// nothing.
func (p *Plan) Compile() error { return p.exec.Compile() }

// Prewarm begins opening the device named as Options.Device names it, in
// the background, and returns at once: a GPU's driver loaded and context
// created while the caller does other work (reads its input), so that
// plans made after find it ready, and auto counts only what remains of
// its start. "cpu" starts nothing; "auto" opens the GPU auto would use,
// if one is usable. Failures are not reported here: a plan that needs the
// device reports its own. Close the result once the plans are made; it
// lets go without waiting.
func Prewarm(device string) (*plan.Warm, error) {
	dev, err := plan.ParseDevice(device)
	if err != nil {
		return nil, err
	}
	return plan.Prewarm(dev), nil
}

// Close releases what the plan holds on its device (a GPU engine's memory,
// streams and device); executing the plan afterwards is an error
// (ErrClosed). Closing twice does nothing. A plan on the CPU holds only
// memory, which the garbage collector takes back either way.
func (p *Plan) Close() error {
	if p.dev != nil {
		p.dev.forget(p)
	}
	return p.exec.Close()
}

// ErrClosed is the error of executing a plan after its Close.
var ErrClosed = plan.ErrClosed

// Execute filters src into dst and returns dst. When dst has no Data, a new
// array is allocated; otherwise it must have the plan's output Shape and
// DType and must not overlap src.
func (p *Plan) Execute(ctx context.Context, dst, src Array) (Array, error) {
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
	} else if dst.DType() != p.problem.Out || !slices.Equal(dst.Shape, p.Shape()) {
		return Array{}, &nd.ArgumentError{Arg: "output", Msg: fmt.Sprintf("%v %v does not match the plan's %v %v", dst.DType(), dst.Shape, p.problem.Out, p.Shape())}
	}
	if err := p.exec.Execute(ctx, dst, src); err != nil {
		return Array{}, err
	}
	return dst, nil
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
