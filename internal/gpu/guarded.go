package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/internal/winograd"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// guarded is an engine of a fast method (FFT, gemm, Winograd), whose
// results differ from the direct method's by rounding. The method mixes
// every input of its reach into every output, zero weights too, so an
// input it cannot carry — NaN, Inf, or values that could overflow float32
// — runs the direct method, whose bits those outputs must carry, on the
// device opened again (reopen) the first time it is needed.
type guarded struct {
	*Engine
	// carries reports whether the method carries the host input src.
	carries func(src nd.Array) bool
	// mayNeed reports whether a device input of dtype d must be read back
	// and scanned: whether some value of d can fail carries.
	mayNeed func(d nd.DType) bool

	mu     sync.Mutex
	direct *Engine // the fallback, made when first needed
	opened func() (Device, error)
}

// init makes g an engine of method m on dev, closing dev on failure.
func (g *guarded) init(dev Device, reopen func() (Device, error), p *nd.Problem, opt Options, m method, carries func(nd.Array) bool, mayNeed func(nd.DType) bool) error {
	e, err := newEngine(dev, p, opt, m)
	g.Engine, g.carries, g.mayNeed, g.opened = e, carries, mayNeed, reopen
	return err
}

// scanFits is a carries: src (and cval) hold no NaN or Inf and fits
// src's largest magnitude.
func scanFits(p *nd.Problem, fits func(maxAbs float64) bool) func(nd.Array) bool {
	return func(src nd.Array) bool {
		nonFinite, maxAbs := fftconv.ScanInput(p, src, runtime.GOMAXPROCS(0))
		return nonFinite == 0 && fits(maxAbs)
	}
}

// FFTEngine executes one problem by FFT convolution (fft.go), within
// fftconv.Geometry.ErrorBound of the direct method.
type FFTEngine struct{ guarded }

// NewFFT prepares p for FFT convolution on dev, which the engine holds.
// Kernels, plans and spectra are made when first used.
func NewFFT(dev Device, reopen func() (Device, error), p *nd.Problem, opt Options) (*FFTEngine, error) {
	err := fftconv.Supported(p)
	var g *fftconv.Geometry
	if err == nil {
		g, err = kernels.FFTGeometry(p, chooseLayout(dev, p) != portableLayout, opt.Tuning.FFTLengths())
	}
	if err != nil {
		dev.Close()
		return nil, fmt.Errorf("%s: FFT method: %w", dev.Backend(), err)
	}
	absSum := p.WeightAbsSum()
	carries := scanFits(p, func(maxAbs float64) bool { return !g.Overflows(absSum, maxAbs) })
	// Every dtype is scanned: integers may overflow too, and cval may be
	// infinite.
	mayNeed := func(nd.DType) bool { return true }
	e := &FFTEngine{}
	if err := e.init(dev, reopen, p, opt, fftMethod{}, carries, mayNeed); err != nil {
		return nil, err
	}
	return e, nil
}

// GemmEngine executes one problem by the gemm method (kernels/gemm.cl):
// an implicit GEMM on the tensor cores, float32-accurate by splitting
// weights (and inputs TF32 does not hold) into TF32 high and low parts,
// or for 8-bit inputs into per-kernel scaled FP16 ones; within
// kernels.GemmErrorBound of the direct method.
type GemmEngine struct{ guarded }

// GemmWhy says why the gemm method cannot run p on a device of backend
// (nil: it can): it needs CUDA and a problem kernels.GemmWhy takes.
func GemmWhy(backend string, p *nd.Problem) error {
	if backend != "cuda" {
		return fmt.Errorf("gemm runs on CUDA's tensor cores (mma.sync through NVRTC); %s has no such path", backend)
	}
	return kernels.GemmWhy(p)
}

// NewGemm prepares p for the gemm method on dev, which the engine holds.
func NewGemm(dev Device, reopen func() (Device, error), p *nd.Problem, opt Options) (*GemmEngine, error) {
	if err := GemmWhy(dev.Backend(), p); err != nil {
		dev.Close()
		return nil, &nd.UnsupportedError{What: "problem for the gemm method", Value: err.Error()}
	}
	absSum := p.WeightAbsSum()
	scan := scanFits(p, func(maxAbs float64) bool { return maxAbs*absSum <= gemmOverflow && !math.IsInf(maxAbs, 0) })
	carries := func(src nd.Array) bool {
		return src.DType().IsInteger() || scan(src) // integers are finite and far from overflow
	}
	mayNeed := func(d nd.DType) bool { return !d.IsInteger() }
	e := &GemmEngine{}
	if err := e.init(dev, reopen, p, opt, gemm, carries, mayNeed); err != nil {
		return nil, err
	}
	return e, nil
}

// gemmOverflow bounds absSum·maxAbs where the split products stay finite:
// a TF32 high part may round up past a float32 value's magnitude, and the
// partial sums must not overflow where the direct method's do not.
const gemmOverflow = 0x1p120

// gemm is the gemm kernel family. NDCONV_GEMM_SHAPE
// ("MX,RY,NTW,WN,WY[,STAGES[,MINBLOCKS[,REORDER[,TF32]]]]"; TF32 1 keeps
// 8-bit inputs on the 3xTF32 path) sets its decomposition, for the bench
// and tests: kernels.Tuning has no field for it.
var gemm = oneLaunch(func(e *Engine, p *nd.Problem) (*kernels.Launch, error) {
	var s kernels.GemmShape
	if v := os.Getenv("NDCONV_GEMM_SHAPE"); v != "" {
		var reorder, tf32 int
		fmt.Sscanf(v, "%d,%d,%d,%d,%d,%d,%d,%d,%d", &s.MX, &s.RY, &s.NTW, &s.WarpsN, &s.WarpsY, &s.Stages, &s.MinBlocks, &reorder, &tf32)
		s.Reorder, s.TF32 = reorder == 1, tf32 == 1
	}
	lim := e.plan.Limits()
	return kernels.NewGemm(p, kernels.GemmOptions{MaxGroupsYZ: lim.MaxGroupsYZ, MaxLocalBytes: lim.MaxLocalBytes, Shape: s})
})

// WinogradEngine executes one problem by the Winograd method
// (kernels/winograd.cl; the math is internal/winograd's), within
// winograd.Variant.ErrorBound of the direct method.
type WinogradEngine struct {
	guarded
	variant *winograd.Variant
}

// WinogradWhy says why the Winograd method cannot run p (nil: it can).
func WinogradWhy(p *nd.Problem) error { return kernels.WinogradWhy(p) }

// NewWinograd prepares p for the Winograd method on dev, which the engine
// holds, with winograd.TileFromEnv's tile.
func NewWinograd(dev Device, reopen func() (Device, error), p *nd.Problem, opt Options) (*WinogradEngine, error) {
	if err := WinogradWhy(p); err != nil {
		dev.Close()
		return nil, &nd.UnsupportedError{What: "problem for the winograd method", Value: err.Error()}
	}
	v, err := winograd.New(p, winograd.TileFromEnv())
	if err != nil {
		dev.Close()
		return nil, err
	}
	absSum := p.WeightAbsSum()
	carries := scanFits(p, func(maxAbs float64) bool { return !v.Overflows(absSum, maxAbs) })
	mayNeed := func(d nd.DType) bool {
		lo, hi := d.Range()
		return !d.IsInteger() || v.Overflows(absSum, max(-lo, hi))
	}
	e := &WinogradEngine{variant: v}
	if err := e.init(dev, reopen, p, opt, winogradTile(v.M), carries, mayNeed); err != nil {
		return nil, err
	}
	return e, nil
}

// Variant is the tile the engine runs.
func (e *WinogradEngine) Variant() *winograd.Variant { return e.variant }

// winogradTile is the Winograd kernel family for a tile, its output
// staging NDCONV_WINOGRAD_STAGE's (filters at a time; negative: direct
// stores; 0 or unset: the default), for the bench.
func winogradTile(tile int) kernelMethod {
	return oneLaunch(func(e *Engine, p *nd.Problem) (*kernels.Launch, error) {
		stage, _ := strconv.Atoi(os.Getenv("NDCONV_WINOGRAD_STAGE"))
		return kernels.NewWinograd(p, kernels.WinogradOptions{Tile: tile, Stage: stage, MaxLocalBytes: e.plan.Limits().MaxLocalBytes})
	})
}

// Close releases the engine and the direct fallback's.
func (e *guarded) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	if e.direct != nil {
		errs = append(errs, e.direct.Close())
	}
	return errors.Join(append(errs, e.Engine.Close())...)
}

// UsedDirect reports whether the engine has run the direct method for an
// input its method cannot carry.
func (e *guarded) UsedDirect() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.direct != nil
}

// runner is e's engine, or with fallback the direct one (made on first use).
func (e *guarded) runner(fallback bool) (*Engine, error) {
	if !fallback {
		return e.Engine, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.direct == nil {
		dev, err := e.opened()
		if err != nil {
			return nil, err
		}
		d, err := NewDirect(dev, e.p, e.opt)
		if err != nil {
			return nil, err
		}
		e.direct = d
	}
	return e.direct, nil
}

// Execute correlates host arrays by the engine's method or, for inputs
// it cannot carry, the direct method.
func (e *guarded) Execute(ctx context.Context, dst, src nd.Array) error {
	if err := checkArrays(e.p, dst, src); err != nil {
		return err
	}
	r, err := e.runner(!e.carries(src))
	if err != nil {
		return err
	}
	return r.Execute(ctx, dst, src)
}

// deviceRunner checks the arrays and returns the engine that runs them,
// reading src back to scan it where its dtype may need it.
func (e *guarded) deviceRunner(dst, src *Array) (*Engine, error) {
	if err := e.checkDeviceArrays(dst, src); err != nil {
		return nil, err
	}
	if !e.mayNeed(src.DType) {
		return e.Engine, nil
	}
	host, err := nd.New(src.DType, src.Shape...)
	if err != nil {
		return nil, err
	}
	err = e.begin(context.Background(), false)
	if err == nil {
		err = src.Read(e.queue, host.Bytes())
	}
	e.Engine.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return e.runner(!e.carries(host))
}

// ExecuteDevice correlates device arrays by the engine's method or the
// direct method (deviceRunner).
func (e *guarded) ExecuteDevice(ctx context.Context, dst, src *Array) error {
	r, err := e.deviceRunner(dst, src)
	if err != nil {
		return err
	}
	return r.ExecuteDevice(ctx, dst, src)
}

// TimeDevice times the method on device arrays, the input's scan untimed.
func (e *guarded) TimeDevice(dst, src *Array, repeats int) ([]float64, error) {
	r, err := e.deviceRunner(dst, src)
	if err != nil {
		return nil, err
	}
	return r.TimeDevice(dst, src, repeats)
}

// ExecuteDeviceAfter waits for the caller's queue and runs ExecuteDevice:
// the input's scan reads it back anyway, so the call cannot return early.
func (e *guarded) ExecuteDeviceAfter(ctx context.Context, dst, src *Array, caller Queue) error {
	if err := caller.Finish(); err != nil {
		return fmt.Errorf("the caller's queue: %w", err)
	}
	return e.ExecuteDevice(ctx, dst, src)
}
