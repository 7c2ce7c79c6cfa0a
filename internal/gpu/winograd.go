package gpu

import (
	"os"
	"runtime"
	"strconv"

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
	guarded
	variant *winograd.Variant
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
	absSum := p.WeightAbsSum()
	carries := func(src nd.Array) bool {
		nonFinite, maxAbs := fftconv.ScanInput(p, src, runtime.GOMAXPROCS(0))
		return nonFinite == 0 && !v.Overflows(absSum, maxAbs)
	}
	mayNeed := func(d nd.DType) bool { return !d.IsInteger() || v.Overflows(absSum, integerMax(d)) }
	return &WinogradEngine{guarded{Engine: e, carries: carries, mayNeed: mayNeed, opened: reopen}, v}, nil
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

func integerMax(d nd.DType) float64 {
	lo, hi := d.Range()
	return max(-lo, hi)
}
