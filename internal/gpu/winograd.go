package gpu

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/internal/winograd"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// WinogradEngine executes one problem by the Winograd method
// (kernels/winograd.cl; internal/winograd has the math and the CPU
// engine it is tested against). Results differ from the direct method by
// rounding, within winograd.Variant.ErrorBound. A tile mixes all its
// inputs into every output, so an input holding NaN or Inf (or values
// whose transforms could overflow float32) runs the direct method, whose
// bits those outputs must carry, as the FFT and gemm engines do.
type WinogradEngine struct {
	*Engine
	variant *winograd.Variant
	absSum  float64

	mu     sync.Mutex
	direct *Engine // the fallback, made when first needed
	opened func() (Device, error)
}

// WinogradWhy says why the Winograd method cannot run p on a GPU (nil: it
// can): kernels.WinogradWhy.
func WinogradWhy(p *nd.Problem) error { return kernels.WinogradWhy(p) }

// NewWinograd prepares p for the Winograd method on dev, which the engine
// holds; reopen opens the device again for the direct method's fallback.
// The tile is NDCONV_WINOGRAD_TILE's where set (winograd.TileFromEnv),
// else the kernel size's default.
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
	e, err := newEngine(dev, p, opt, winogradMethod{tile: v.M})
	if err != nil {
		return nil, err
	}
	return &WinogradEngine{Engine: e, variant: v, absSum: winograd.AbsSum(p), opened: reopen}, nil
}

// Variant is the tile the engine runs.
func (e *WinogradEngine) Variant() *winograd.Variant { return e.variant }

// winogradMethod is the Winograd kernel family: one launch per chunk.
type winogradMethod struct{ tile int }

// winogradStage is the output staging NDCONV_WINOGRAD_STAGE asks for
// (filters at a time; negative: direct stores), the bench's A/B of
// docs/perf/winograd.md's step 4; 0 (unset) the default.
func winogradStage() int {
	v, _ := strconv.Atoi(os.Getenv("NDCONV_WINOGRAD_STAGE"))
	return v
}

func (m winogradMethod) options(e *Engine) kernels.WinogradOptions {
	return kernels.WinogradOptions{Tile: m.tile, Stage: winogradStage(), MaxLocalBytes: e.plan.Limits().MaxLocalBytes}
}

func (m winogradMethod) prepare(e *Engine, p *nd.Problem, in, out Buffer, _ [2]Buffer) (*prepared, error) {
	pr := &prepared{}
	l, err := kernels.NewWinograd(p, m.options(e))
	if err != nil || l == nil {
		return pr, err
	}
	return pr, e.prepareLaunch(pr, l, in, out)
}

func (m winogradMethod) describe(e *Engine, p *nd.Problem) string {
	if l, err := kernels.NewWinograd(p, m.options(e)); err == nil && l != nil {
		return l.Describe()
	}
	return ""
}

func (winogradMethod) temps(*Engine, *nd.Problem) (n, bytes int) { return 0, 0 }

func (m winogradMethod) launches(e *Engine, p *nd.Problem) ([]*kernels.Launch, error) {
	l, err := kernels.NewWinograd(p, m.options(e))
	if err != nil || l == nil {
		return nil, err
	}
	return []*kernels.Launch{l}, nil
}

// Close releases the engine and the direct fallback's.
func (e *WinogradEngine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	if e.direct != nil {
		errs = append(errs, e.direct.Close())
	}
	return errors.Join(append(errs, e.Engine.Close())...)
}

// needsDirect reports whether src must run by the direct method.
func (e *WinogradEngine) needsDirect(src nd.Array) bool {
	nonFinite, maxAbs := fftconv.ScanInput(e.p, src, runtime.GOMAXPROCS(0))
	return nonFinite > 0 || e.variant.Overflows(e.absSum, maxAbs)
}

func (e *WinogradEngine) directEngine() (*Engine, error) {
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

// UsedDirect reports whether the engine has run the direct method for an
// input the tiles cannot carry.
func (e *WinogradEngine) UsedDirect() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.direct != nil
}

// Execute correlates host arrays by the Winograd method or, for inputs it
// cannot carry, the direct method.
func (e *WinogradEngine) Execute(ctx context.Context, dst, src nd.Array) error {
	if err := checkArrays(e.p, dst, src); err != nil {
		return err
	}
	if e.needsDirect(src) {
		d, err := e.directEngine()
		if err != nil {
			return err
		}
		return d.Execute(ctx, dst, src)
	}
	return e.Engine.Execute(ctx, dst, src)
}

// deviceNeedsDirect checks the arrays and, for float data, reads src back
// to look for NaN, Inf and overflow.
func (e *WinogradEngine) deviceNeedsDirect(dst, src *Array) (bool, error) {
	if err := e.checkDeviceArrays(dst, src); err != nil {
		return false, err
	}
	if src.DType.IsInteger() && !e.variant.Overflows(e.absSum, integerMax(src.DType)) {
		return false, nil
	}
	host, err := nd.New(src.DType, src.Shape...)
	if err != nil {
		return false, err
	}
	err = e.begin(context.Background(), false)
	if err == nil {
		err = src.Read(e.queue, host.Bytes())
	}
	e.Engine.mu.Unlock()
	if err != nil {
		return false, err
	}
	return e.needsDirect(host), nil
}

func integerMax(d nd.DType) float64 {
	lo, hi := d.Range()
	return max(-lo, hi)
}

// ExecuteDevice correlates device arrays; float input is read back once
// to look for NaN, Inf and overflow.
func (e *WinogradEngine) ExecuteDevice(ctx context.Context, dst, src *Array) error {
	direct, err := e.deviceNeedsDirect(dst, src)
	if err != nil {
		return err
	}
	if direct {
		d, err := e.directEngine()
		if err != nil {
			return err
		}
		return d.ExecuteDevice(ctx, dst, src)
	}
	return e.Engine.ExecuteDevice(ctx, dst, src)
}

// TimeDevice times the method on device arrays (the input's scan comes
// before, untimed).
func (e *WinogradEngine) TimeDevice(dst, src *Array, repeats int) ([]float64, error) {
	direct, err := e.deviceNeedsDirect(dst, src)
	if err != nil {
		return nil, err
	}
	if direct {
		d, err := e.directEngine()
		if err != nil {
			return nil, err
		}
		return d.TimeDevice(dst, src, repeats)
	}
	return e.Engine.TimeDevice(dst, src, repeats)
}
