package gpu

import (
	"fmt"
	"math"
	"os"
	"runtime"

	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// GemmEngine executes one problem by the gemm method (kernels/gemm.cl):
// an implicit GEMM on the tensor cores, float32-accurate by splitting
// weights (and inputs TF32 does not hold) into TF32 high and low parts,
// or, for 8-bit inputs, weights scaled per kernel into FP16 high and low
// parts on the FP16 tensor ops.
// Results differ from the direct method by rounding, within
// kernels.GemmErrorBound. gemm.cl multiplies every weight, zero ones
// too, so an input holding NaN or Inf (or values whose products could
// overflow float32) runs the direct method, whose bits those outputs
// must carry, as the FFT engine does.
type GemmEngine struct {
	guarded
}

// GemmWhy says why the gemm method cannot run p on a device of backend
// (nil: it can): it is CUDA's (inline PTX mma.sync), and the problem must
// be one kernels.GemmWhy takes.
func GemmWhy(backend string, p *nd.Problem) error {
	if backend != "cuda" {
		return fmt.Errorf("gemm runs on CUDA's tensor cores (mma.sync through NVRTC); %s has no such path", backend)
	}
	return kernels.GemmWhy(p)
}

// NewGemm prepares p for the gemm method on dev, which the engine holds;
// reopen opens the device again for the direct method's fallback.
func NewGemm(dev Device, reopen func() (Device, error), p *nd.Problem, opt Options) (*GemmEngine, error) {
	if err := GemmWhy(dev.Backend(), p); err != nil {
		dev.Close()
		return nil, &nd.UnsupportedError{What: "problem for the gemm method", Value: err.Error()}
	}
	e, err := newEngine(dev, p, opt, gemm{})
	if err != nil {
		return nil, err
	}
	absSum := p.WeightAbsSum()
	carries := func(src nd.Array) bool {
		if src.DType().IsInteger() {
			return true // integers are finite and far from overflow
		}
		nonFinite, maxAbs := fftconv.ScanInput(p, src, runtime.GOMAXPROCS(0))
		return nonFinite == 0 && maxAbs*absSum <= gemmOverflow && !math.IsInf(maxAbs, 0)
	}
	mayNeed := func(d nd.DType) bool { return !d.IsInteger() }
	return &GemmEngine{guarded{Engine: e, carries: carries, mayNeed: mayNeed, opened: reopen}}, nil
}

// gemmShape is the decomposition NDCONV_GEMM_SHAPE ("MX,RY,NTW,WN,WY[,STAGES[,MINBLOCKS[,REORDER[,TF32]]]]")
// asks for: the bench's and the tests' way to compare decompositions
// (kernels.Tuning has no field for it yet); zero otherwise. TF32 1
// keeps 8-bit inputs on the 3xTF32 path (the A/B against FP16).
func gemmShape() kernels.GemmShape {
	var s kernels.GemmShape
	if v := os.Getenv("NDCONV_GEMM_SHAPE"); v != "" {
		var reorder, tf32 int
		fmt.Sscanf(v, "%d,%d,%d,%d,%d,%d,%d,%d,%d", &s.MX, &s.RY, &s.NTW, &s.WarpsN, &s.WarpsY, &s.Stages, &s.MinBlocks, &reorder, &tf32)
		s.Reorder, s.TF32 = reorder == 1, tf32 == 1
	}
	return s
}

// gemm is the gemm kernel family: one launch.
type gemm struct{}

func (e *Engine) gemmOptions() kernels.GemmOptions {
	lim := e.plan.Limits()
	return kernels.GemmOptions{MaxGroupsYZ: lim.MaxGroupsYZ, MaxLocalBytes: lim.MaxLocalBytes, Shape: gemmShape()}
}

func (gemm) prepare(e *Engine, p *nd.Problem, in, out Buffer, _ [2]Buffer) (*prepared, error) {
	pr := &prepared{}
	l, err := kernels.NewGemm(p, e.gemmOptions())
	if err != nil || l == nil {
		return pr, err
	}
	return pr, e.prepareLaunch(pr, l, in, out)
}

func (gemm) describe(e *Engine, p *nd.Problem) string {
	if l, err := kernels.NewGemm(p, e.gemmOptions()); err == nil && l != nil {
		return l.Describe()
	}
	return ""
}

func (gemm) temps(*Engine, *nd.Problem) (n, bytes int) { return 0, 0 }

func (gemm) launches(e *Engine, p *nd.Problem) ([]*kernels.Launch, error) {
	l, err := kernels.NewGemm(p, e.gemmOptions())
	if err != nil || l == nil {
		return nil, err
	}
	return []*kernels.Launch{l}, nil
}

// gemmOverflow bounds absSum·maxAbs where the split products stay finite:
// a TF32 high part may round up past a float32 value's magnitude, and
// the partial sums must not overflow where the direct method's do not.
const gemmOverflow = 0x1p120
