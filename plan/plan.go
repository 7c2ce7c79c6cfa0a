package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// Method is a way of computing the result. The zero value, Auto, lets the
// cost model choose.
type Method uint8

const (
	Auto Method = iota
	Direct
	Separable
	FFT
	// Gemm is an implicit GEMM on CUDA's tensor cores, float32-accurate
	// by splitting into TF32 parts (gpu.GemmEngine): fast family.
	Gemm
	// Winograd runs 3×3, 5×5 and 3×3×3 kernels (banks above all) in
	// Winograd tiles F(m^d, r^d) (internal/winograd): fast family, on
	// every device.
	Winograd
)

var methodNames = [...]string{"auto", "direct", "separable", "fft", "gemm", "winograd"}

func (m Method) String() string { return nd.EnumName(methodNames[:], m, "Method") }

// Exact reports whether m belongs to the exact family (direct and
// separable: the same bits on every device); FFT, gemm and winograd
// differ by rounding.
func (m Method) Exact() bool { return m == Direct || m == Separable }

// ParseMethod accepts auto, direct, separable, fft, gemm and winograd.
func ParseMethod(s string) (Method, error) { return nd.ParseEnum[Method](methodNames[:], s, "method") }

// Device names a backend and, for GPUs, which device of it.
type Device struct {
	Kind     string // "auto" or a registered Backend's Name: "cpu", "cuda", "opencl"
	Index    int    // cuda:N; opencl:P:D has Platform P and Index D
	Platform int
	// AnyOpenCL marks a plain "opencl": the first OpenCL GPU, or device
	// 0 of platform 0 where there is none.
	AnyOpenCL bool
}

// UnavailableError reports a backend that cannot run here, and why.
type UnavailableError struct {
	Device Device
	Reason string
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("device %v unavailable: %s", e.Device, e.Reason)
}

// Options direct the choice.
type Options struct {
	Device   Device
	Method   Method
	Workers  int // CPU goroutines; 0 means all cores
	Progress nd.Progress
	// Exact restricts Auto to the exact family (direct, separable).
	Exact bool
	// Tuning fixes the GPU kernels' work decomposition; zero takes the
	// tuning cache's entry for the problem, else the kernels' own choice.
	Tuning kernels.Tuning
	// TuningCache is the cache to read (nil: the default, DefaultTuningPath);
	// NoTuningCache reads none (the tuner's baseline).
	TuningCache   *TuningCache
	NoTuningCache bool
	// Timeline, when set, receives a GPU engine's copies and kernels of
	// each execution from host memory, chunk by chunk; PieceBytes forces
	// the size of the pieces its pipeline cuts a problem into (0: chosen
	// by chunk.Pieces).
	Timeline   *chunk.Timeline
	PieceBytes int64
	// DeviceMemory bounds the GPU memory an execution takes (the engines'
	// MemoryBudget); 0 lets the engines choose.
	DeviceMemory int64
	// Planar asks for a bank's output in the planar layout (nd.Planar):
	// where the engine chosen writes it itself — the CPU's direct, FFT and
	// unchunked separable methods (writesPlanar) — Executable.Planar is
	// true and Execute writes dst planar; elsewhere the output is
	// interleaved, as always, and the caller moves it (package ndconv's
	// planarBank).
	Planar bool
}

// Runner executes a prepared problem; each backend's methods return one.
type Runner interface {
	Execute(ctx context.Context, dst, src nd.Array) error
}

// Implementation is one method on one backend, as the planner sees it:
// whether it can run a problem, what it would cost, and how to prepare it.
// The GPU backends and faster CPU kernels join as further implementations.
type Implementation struct {
	Device   string // the Device.Kind it runs on
	Method   Method
	Supports func(*nd.Problem) bool
	// Why, where set, says why Supports refuses a problem.
	Why     func(*nd.Problem) error
	Cost    func(*nd.Problem) float64 // in multiply-adds, comparable across implementations
	Prepare func(*nd.Problem, Options) (Runner, error)
	// Pending, where a GPU backend can tell, counts the kernel modules
	// Prepare's runner would still compile (in neither the process nor
	// the disk cache), without opening the device.
	Pending func(*nd.Problem, Options) (int, error)
}

// Implementations lists every implementation the planner chooses among:
// every registered backend's, in registration order.
func Implementations() []Implementation {
	var impls []Implementation
	for _, b := range backends {
		impls = append(impls, b.Implementations()...)
	}
	return impls
}

// fftOn is a device's FFT implementation: every device shares
// internal/fftconv's decomposition and its cost; why may add the
// backend's own limits (cuFFT's) to fftconv.Supported.
func fftOn(device string, why func(*nd.Problem) error, prepare func(*nd.Problem, Options) (Runner, error), pending func(*nd.Problem, Options) (int, error)) Implementation {
	return Implementation{Device: device, Method: FFT, Supports: func(p *nd.Problem) bool { return why(p) == nil }, Why: why, Cost: FFTCost, Prepare: prepare, Pending: pending}
}

// gemmOn is CUDA's gemm implementation: why says why the tensor-core
// kernel cannot run a problem; auto does not choose it (choose).
func gemmOn(device string, why func(*nd.Problem) error, prepare func(*nd.Problem, Options) (Runner, error), pending func(*nd.Problem, Options) (int, error)) Implementation {
	return Implementation{Device: device, Method: Gemm, Supports: func(p *nd.Problem) bool { return why(p) == nil }, Why: why, Cost: DirectCost, Prepare: prepare, Pending: pending}
}

// winogradOn is a device's Winograd implementation: why says why its
// tiles cannot run a problem; auto does not choose it (choose).
func winogradOn(device string, why func(*nd.Problem) error, prepare func(*nd.Problem, Options) (Runner, error), pending func(*nd.Problem, Options) (int, error)) Implementation {
	return Implementation{Device: device, Method: Winograd, Supports: func(p *nd.Problem) bool { return why(p) == nil }, Why: why, Cost: DirectCost, Prepare: prepare, Pending: pending}
}

// fastMargin is how much cheaper than the best exact method a method of
// the fast family (FFT) must be estimated before auto takes it: results
// then differ by rounding, which only a clear gain pays for.
const fastMargin = 1.5

// calibratedFastMargin replaces fastMargin on a GPU whose FFT scale
// `ndconv tune` has measured on at least calibratedFFTWorkloads problems.
// fastMargin covers the model's error as well as the gain it asks for,
// and a calibrated scale errs little: on the H200 (session 39) the scale
// fitted over 16 workloads was within 3% of S001's own at 24–25 taps
// wide, where the FFT ran 1.33–1.47× faster than the direct method, and
// under fastMargin the tuned plans ran direct (docs/perf/fft.md, "A tuned
// scale and auto's margin").
const (
	calibratedFastMargin   = 1.2
	calibratedFFTWorkloads = 3
)

// fftMargin is the margin auto asks of the FFT on a device with rates r.
func fftMargin(r GPURates) float64 {
	if r.FFTScaleN >= calibratedFFTWorkloads {
		return calibratedFastMargin
	}
	return fastMargin
}

// FFTCost estimates FFT convolution's work in DirectCost's units: the
// blocks' transforms, products and stores as internal/fftconv decomposes
// the problem on this machine's cores (+Inf where it cannot run).
func FFTCost(p *nd.Problem) float64 {
	if p.Empty() {
		return 0 // nothing to transform (fftconv's blocks need a length)
	}
	g, err := fftconv.New(p, fftconv.Options{Workers: runtime.NumCPU()})
	if err != nil {
		return math.Inf(1)
	}
	return g.Cost(len(p.Kernels))
}

// methods are a device's direct and separable implementations. Every
// device gets the same support tests and costs, so a problem runs the same
// method wherever it runs: with every engine adding the same products in
// the same order, the device never changes the result.
func methods(device string, direct, separable func(*nd.Problem, Options) (Runner, error)) []Implementation {
	return []Implementation{
		{Device: device, Method: Direct, Supports: func(*nd.Problem) bool { return true }, Cost: DirectCost, Prepare: direct},
		{Device: device, Method: Separable, Supports: (*nd.Problem).Separable, Cost: SeparableCost, Prepare: separable},
	}
}

// withPending gives a device's direct and separable implementations (from
// methods) their Pending.
func withPending(impls []Implementation, direct, separable func(*nd.Problem, Options) (int, error)) []Implementation {
	impls[0].Pending, impls[1].Pending = direct, separable
	return impls
}

// Executable is a problem bound to a device and a method, with the memory it
// needs allocated. It is safe for concurrent use: its calls (Execute,
// ExecuteDevice, Compile) run one at a time, and Close waits for the one
// running.
type Executable struct {
	Problem *nd.Problem
	Device  Device
	Method  Method
	// Tuning is the GPU kernels' work decomposition the plan fixed (from
	// the options or the tuning cache); zero where the kernels chose.
	Tuning kernels.Tuning
	// Choice is why auto chose Device (the estimates it compared); zero
	// where the options named the device.
	Choice Choice
	// Planar: Execute writes a bank's output in the planar layout
	// (Options.Planar, where the engine offers it).
	Planar bool
	// movesPlanar: Options.Planar asked for a bank the engine writes
	// interleaved; ExecuteDevice computes it into inter (an array of the
	// interleaved shape it keeps, on interMem) and moves it into the
	// caller's array on the device (DeviceMemory.ToPlanar).
	movesPlanar bool
	inter       Buffer
	interMem    *Memory
	run         Runner
	// turn is held by the call running (acquire): a runner keeps its
	// scratch memory (the CPU engines' tiles and FFT blocks, a GPU
	// engine's buffers and streams, the complex and float16 runners'
	// parts) from one call to the next, so two calls at once would write
	// each other's. One call already uses every core, or the device, so
	// taking turns costs little; per-call scratch would cost every call
	// its allocations. A channel, not a mutex, so that a call waiting for
	// its turn still honours its context.
	turn     chan struct{}
	turnOnce sync.Once
	closed   atomic.Bool
}

// acquire waits for the executable's turn, or for ctx; release gives it
// back.
func (e *Executable) acquire(ctx context.Context) error {
	if e == nil || e.run == nil {
		return errNoExecutable
	}
	if ctx == nil {
		return errNilContext
	}
	e.turnOnce.Do(func() { e.turn = make(chan struct{}, 1) })
	select {
	case e.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *Executable) release() { <-e.turn }

// errNoExecutable is the error of a nil or zero Executable's calls.
var errNoExecutable = &nd.ArgumentError{Arg: "plan", Msg: "a nil or zero Executable (make one with New)"}

// errNilContext refuses a nil context.Context (Go's rule: pass
// context.Background or context.TODO).
var errNilContext = &nd.ArgumentError{Arg: "context", Msg: "nil context (pass context.Background())"}

// Execute computes dst from src; both must match the problem (the caller,
// ndconv.Plan, checks them), and dst must not overlap src (ndconv.Plan
// copies src where it does).
func (e *Executable) Execute(ctx context.Context, dst, src nd.Array) error {
	if err := e.acquire(ctx); err != nil {
		return err
	}
	defer e.release()
	if e.closed.Load() {
		return ErrClosed
	}
	return e.run.Execute(ctx, dst, src)
}

// Closed reports whether Close has been called.
func (e *Executable) Closed() bool { return e != nil && e.closed.Load() }

// Compile compiles now the GPU kernels the first Execute would compile
// (cuda.Engine.Compile, opencl.Engine.Compile), so that a caller that
// knows the problem before its data overlaps the compilations with reading
// them. Elsewhere (the CPU, OpenCL's FFT) it does nothing.
func (e *Executable) Compile() error {
	if err := e.acquire(context.Background()); err != nil {
		return err
	}
	defer e.release()
	if e.closed.Load() {
		return ErrClosed
	}
	if c, ok := e.run.(compiler); ok {
		return c.Compile()
	}
	return nil
}

// compiler is a runner that compiles its kernels ahead (Compile).
type compiler interface{ Compile() error }

// ErrClosed is the error of executing a plan after its Close.
var ErrClosed = errors.New("plan: the plan is closed")

// Close releases what the backend holds for the problem (a GPU engine's
// device memory, streams and its reference to the device); executing it
// afterwards is ErrClosed. It waits for a call running on another
// goroutine to finish. Closing twice, or closing a nil or zero
// Executable, does nothing.
func (e *Executable) Close() error {
	if e == nil || e.run == nil {
		return nil
	}
	if err := e.acquire(context.Background()); err != nil {
		return err
	}
	defer e.release()
	if e.closed.Swap(true) {
		return nil
	}
	var err error
	if e.inter != nil {
		err = e.inter.Free()
	}
	if c, ok := e.run.(io.Closer); ok {
		err = errors.Join(err, c.Close())
	}
	return err
}

// Runner is the backend's prepared runner, for callers that need more of
// it than Execute (the bench times a GPU engine on device arrays).
func (e *Executable) Runner() Runner { return e.run }

// New chooses a device and method for p — the cheapest implementation that
// supports it, among those the options allow — and prepares it. A complex
// problem runs as its real parts (nd.RealParts) on whichever device and
// method the first part gets; a float16 one on a GPU as its float32 twin
// (newHalf).
func New(p *nd.Problem, opt Options) (*Executable, error) {
	if opt.Workers < 0 {
		return nil, &nd.ArgumentError{Arg: "workers", Msg: fmt.Sprintf("%d is negative (0 means every core)", opt.Workers)}
	}
	if opt.DeviceMemory < 0 {
		return nil, &nd.ArgumentError{Arg: "device memory", Msg: fmt.Sprintf("%d bytes is negative (0 means 70%% of the device's)", opt.DeviceMemory)}
	}
	// Only the main path's CPU engines write planar (writesPlanar); the
	// empty, complex and float16 runners and every other engine write
	// interleaved (their parts and twins too).
	planar := opt.Planar && p.Bank
	opt.Planar = false
	if p.Empty() {
		return newEmpty(p, opt)
	}
	if p.Complex() {
		return newComplex(p, opt)
	}
	dev := opt.Device
	var choice Choice
	if dev.IsAuto() {
		dev, choice = autoDevice(p, opt)
	}
	if b, ok := dev.Backend(); ok {
		d, err := ready(b, dev)
		if err != nil {
			return nil, err
		}
		dev = d
	}
	gpu := dev.GPU()
	if gpu && (p.In == nd.Float16 || p.Out == nd.Float16) {
		opt.Device = dev
		e, err := newHalf(p, opt)
		if err == nil {
			e.Choice, e.movesPlanar = choice, planar
		}
		return e, err
	}
	if gpu {
		if err := kernels.CheckDTypes(p); err != nil {
			return nil, err
		}
	}
	opt.Device = dev
	if err := checkMethod(opt); err != nil {
		return nil, err
	}
	best, _, err := choose(p, dev.Kind, opt)
	if err != nil {
		return nil, err
	}
	if opt.Tuning == (kernels.Tuning{}) && !opt.NoTuningCache && gpu {
		cache := opt.TuningCache
		if cache == nil {
			cache = defaultTuning()
		}
		opt.Tuning, _ = cache.Lookup(dev, p, best.Method)
	}
	opt.Planar = planar && !gpu && writesPlanar(p, best.Method)
	run, err := best.Prepare(p, opt)
	if err != nil {
		return nil, err
	}
	if gpu {
		markPlanned(dev)
	}
	return &Executable{Problem: p, Device: dev, Method: best.Method, Tuning: opt.Tuning, Choice: choice, Planar: opt.Planar, movesPlanar: planar && !opt.Planar, run: run}, nil
}

// checkMethod refuses a method the options cannot have: an unknown one,
// or one of the fast family under Exact.
func checkMethod(opt Options) error {
	if opt.Method > Winograd {
		return &nd.UnsupportedError{What: "method", Value: opt.Method.String()}
	}
	if opt.Exact && opt.Method != Auto && !opt.Method.Exact() {
		return &nd.ArgumentError{Arg: "method", Msg: opt.Method.String() + " differs from the exact methods by rounding; --exact allows direct and separable only"}
	}
	return nil
}

// newEmpty plans a problem with no element (an input axis of length 0,
// so an empty output in every mode): no engine is prepared and no device
// does any work, so no backend meets the zero-size arithmetic (tiles per
// axis, chunk counts, transform lengths) of a problem with nothing to
// compute, complex and float16 ones included. The options are checked as
// New checks them, so that a request fails alike whatever its data: a
// named GPU must be usable here, a named method able to run the problem
// (its support tests look at shapes and kernels, not at the data). Auto
// reports the CPU and the direct method.
func newEmpty(p *nd.Problem, opt Options) (*Executable, error) {
	dev := opt.Device
	var choice Choice
	if dev.IsAuto() {
		dev, choice = hostDevice(), Choice{Reason: "cpu (an empty array: nothing to compute)"}
	} else if b, ok := dev.Backend(); !ok {
		return nil, &UnavailableError{Device: dev, Reason: "this build has no " + dev.Kind + " backend yet"}
	} else if d, err := ready(b, dev); err != nil {
		return nil, err
	} else {
		dev = d
	}
	if dev.GPU() && !p.Complex() && p.In != nd.Float16 && p.Out != nd.Float16 {
		// Complex problems run as real parts, float16 ones as float32
		// twins (New): the GPU kernels' dtypes bound the rest.
		if err := kernels.CheckDTypes(p); err != nil {
			return nil, err
		}
	}
	if err := checkMethod(opt); err != nil {
		return nil, err
	}
	method := Direct
	if opt.Method == Gemm {
		// The CPU has no gemm: check it against the device named.
		if _, _, err := choose(p, dev.Kind, opt); err != nil {
			return nil, err
		}
		return &Executable{Problem: p, Device: dev, Method: Gemm, Choice: choice, run: emptyRunner{}}, nil
	}
	if opt.Method != Auto {
		// The CPU's implementations have every device's support tests,
		// without a GPU library loaded for them (cuFFT's).
		opt.Device = hostDevice()
		best, _, err := choose(p, opt.Device.Kind, opt)
		if err != nil {
			return nil, err
		}
		method = best.Method
	}
	return &Executable{Problem: p, Device: dev, Method: method, Choice: choice, run: emptyRunner{}}, nil
}

// emptyRunner runs a problem with no element: there is nothing to write.
type emptyRunner struct{}

func (emptyRunner) Execute(context.Context, nd.Array, nd.Array) error { return nil }

// choose is the implementation New prepares for p on the device kind, and
// its cost: the cheapest exact method the options allow, and a fast one
// only where it is clearly cheaper still. The exact family's choice
// depends on the problem alone, so it is the same on every device.
func choose(p *nd.Problem, kind string, opt Options) (*Implementation, float64, error) {
	var best, fast *Implementation
	var bestCost, fastCost float64
	var refused error // why the method asked for cannot run p
	onDevice, ofMethod := false, false
	margin := fastMargin
	impls := Implementations()
	for i := range impls {
		impl := &impls[i]
		if impl.Device != kind {
			continue
		}
		onDevice = true
		if opt.Method != Auto && impl.Method != opt.Method {
			continue
		}
		if opt.Method == Auto && (impl.Method == Gemm || impl.Method == Winograd) {
			continue // not chosen by auto yet: no cost model of the tensor cores, no measurement of the Winograd tiles
		}
		ofMethod = true
		if !impl.Supports(p) {
			if impl.Why != nil && opt.Method != Auto {
				refused = impl.Why(p)
			}
			continue
		}
		if opt.Exact && !impl.Method.Exact() {
			continue
		}
		cost := impl.Cost(p)
		if impl.Method == FFT && (Device{Kind: kind}).GPU() {
			r := ratesFor(opt).gpu(opt.Device)
			cost *= r.FFTScale // FFTCost models the CPU's FFT
			margin = fftMargin(r)
		}
		switch {
		case opt.Method == Auto && !impl.Method.Exact():
			if fast == nil || cost < fastCost {
				fast, fastCost = impl, cost
			}
		case best == nil || cost < bestCost:
			best, bestCost = impl, cost
		}
	}
	if fast != nil && (best == nil || margin*fastCost < bestCost) {
		best, bestCost = fast, fastCost
	}
	switch {
	case !onDevice:
		return nil, 0, &UnavailableError{Device: Device{Kind: kind}, Reason: "this build has no " + kind + " backend yet"}
	case !ofMethod && opt.Method == Gemm:
		return nil, 0, &nd.ArgumentError{Arg: "method", Msg: "gemm runs on CUDA's tensor cores only (mma.sync through NVRTC), not on " + kind}
	case !ofMethod:
		return nil, 0, &nd.UnsupportedError{What: "method", Value: opt.Method.String(), Supported: "on " + kind + ": " + methodsOn(kind)}
	case best == nil && opt.Method == Separable:
		return nil, 0, &nd.ArgumentError{Arg: "method", Msg: "separable needs kernels given as 1-D factors or exactly rank-1"}
	case best == nil && refused != nil:
		return nil, 0, &nd.ArgumentError{Arg: "method", Msg: opt.Method.String() + " cannot run this problem on " + kind + ": " + refused.Error()}
	case best == nil:
		return nil, 0, &nd.ArgumentError{Arg: "method", Msg: opt.Method.String() + " cannot run this problem on " + kind}
	}
	return best, bestCost, nil
}

func methodsOn(kind string) string {
	names := []string{Auto.String()}
	for _, impl := range Implementations() {
		if impl.Device == kind {
			names = append(names, impl.Method.String())
		}
	}
	return strings.Join(names, ", ")
}

// Per-output costs in units of one multiply-add: loading, converting and
// storing a value costs about as much as a few taps, and every separable
// pass streams or stages the whole intermediate once more. Measured on the
// H100 with the tiled and fused kernels (2026-11-25, 8192² float32): direct
// 7×7 0.30 ms, fused separable 0.34 ms; 15×15 1.10 against 0.56 — so a pass
// costs about 20 taps and the two methods cross near 8×8, with the direct
// method kept for every 1-D kernel. The CPU engines cross at about the
// same size.
const (
	directOverhead = 2
	passOverhead   = 20
)

// DirectCost estimates the direct method's work: every nonzero tap of every
// kernel at every output.
func DirectCost(p *nd.Problem) float64 {
	taps := 0
	for _, k := range p.Kernels {
		for _, w := range k.Dense {
			if w != 0 {
				taps++
			}
		}
	}
	return float64(product(p.OutShape)) * float64(taps+directOverhead*len(p.Kernels))
}

// SeparableCost estimates the separable method's work: a pass per kernel
// axis, each over the intermediate it produces.
func SeparableCost(p *nd.Problem) float64 {
	shape := append([]int(nil), p.InShape...)
	cost := 0.0
	for d := len(shape) - 1; d >= 0; d-- {
		if p.KShape[d] == 1 {
			continue
		}
		shape[d] = p.OutShape[d]
		cost += float64(product(shape)) * float64(p.KShape[d]+passOverhead)
	}
	return cost * float64(len(p.Kernels))
}

func product(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// autoDevice picks the GPU when one is usable and the whole call is
// estimated faster there (cost.go), the CPU otherwise, and says why.
func autoDevice(p *nd.Problem, opt Options) (Device, Choice) {
	cpuDev := hostDevice()
	if err := kernels.CheckDTypes(p); err != nil {
		return cpuDev, Choice{Reason: "cpu (the GPU kernels do not take " + p.In.String() + " to " + p.Out.String() + ")"}
	}
	if opt.Method == Gemm {
		// Only CUDA runs it: no estimate to compare.
		if gpu, ok := usableGPU(); ok && gpu.Kind == (cudaBackend{}).Name() {
			return gpu, Choice{Reason: gpu.String() + " (gemm runs on CUDA's tensor cores only)"}
		}
		return cpuDev, Choice{Reason: "cpu (no CUDA GPU for gemm)"} // New reports the error
	}
	cpuImpl, cpuCost, err := choose(p, cpuDev.Kind, opt)
	if err != nil {
		return cpuDev, Choice{Reason: "cpu"} // New reports the error
	}
	rates := ratesFor(opt)
	in, out := problemBytes(p)
	fresh := out + cpuScratchBytes(p, cpuImpl.Method)
	cpuEst := cpuEstimate(cpuImpl.Method, cpuCost, fresh, rates.cpu(), opt.Workers)
	// No GPU can beat the CPU where its copies and kernel alone, at the
	// fastest rates known, take longer: the driver is then not loaded.
	floor := math.Inf(1)
	for _, r := range rates.allGPUs() {
		floor = min(floor, gpuEstimate(Device{}, gpuWork{Cost: cpuCost, InBytes: in, OutBytes: out}, r).Seconds())
	}
	if cpuEst.Seconds() <= floor {
		return cpuDev, Choice{Reason: fmt.Sprintf("%v below any GPU's copies and kernel (%s ms)", cpuEst, msNumber(floor))}
	}
	gpu, ok := usableGPU()
	if !ok {
		return cpuDev, Choice{Reason: cpuEst.String() + ", no usable GPU"}
	}
	gpuOpt := opt
	gpuOpt.Device = gpu
	gpuImpl, gpuCost, err := choose(p, gpu.Kind, gpuOpt)
	if err != nil {
		return cpuDev, Choice{Reason: fmt.Sprintf("cpu (%v cannot run it: %v)", gpu, err)}
	}
	r := rates.gpu(gpu)
	open, warming, elapsed := warmth(gpu)
	compiles := 1 // a backend that cannot tell counts one module
	if gpuImpl.Pending != nil {
		if n, err := gpuImpl.Pending(p, gpuOpt); err == nil {
			compiles = n
		}
	}
	c := Choice{CPU: cpuEst, Compared: true, GPU: gpuEstimate(gpu, gpuWork{
		Method: gpuImpl.Method, Cost: gpuCost, InBytes: in, OutBytes: out,
		StartLeft: startLeft(r, open, warming, elapsed), FirstPlan: firstPlan(gpu), PendingCompiles: compiles,
	}, r)}
	if c.GPUFaster() {
		return gpu, c
	}
	return cpuDev, c
}

// problemBytes is the size of p's input and output in host memory.
func problemBytes(p *nd.Problem) (in, out float64) {
	return float64(product(p.InShape) * p.In.Size()), float64(product(p.FullShape()) * p.Out.Size())
}

// usableGPU is the GPU auto would run on: the first device a GPU backend
// offers, in registration order — CUDA's first device where CUDA is
// available, else the first OpenCL GPU (a variable: tests give auto a GPU
// where there is none).
var usableGPU = func() (Device, bool) {
	for _, b := range backends {
		if b.GPU() {
			if d, ok := b.AutoDevice(); ok {
				return d, true
			}
		}
	}
	return Device{}, false
}

// hostDevice is the CPU: where auto falls back, and the device whose
// implementations check a problem without a GPU library loaded.
func hostDevice() Device { return Device{Kind: cpuBackend{}.Name()} }
