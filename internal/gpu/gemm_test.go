package gpu_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/internal/ref"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// gemmOn makes a gemm engine for p on the target.
func gemmOn(tg *Target, p *nd.Problem) (*gpu.GemmEngine, error) {
	dev, err := tg.Open()
	if err != nil {
		return nil, err
	}
	return gpu.NewGemm(dev, tg.Open, p, gpu.Options{})
}

// gemmError is the largest |got − want| of a float output over the
// bound, and the largest over absSum·maxAbs; 0, 0 for other outputs.
func gemmError(c enginetest.Case, p *nd.Problem, want ref.Result, got nd.Array) (ofBound, relative float64) {
	if p.Out.IsInteger() {
		return 0, 0
	}
	absSum := p.WeightAbsSum()
	scale := absSum * c.MaxAbs()
	bound := kernels.GemmErrorBound(p, absSum, c.MaxAbs())
	for i, v := range got.Float64s() {
		d := math.Abs(v - want.Values[i])
		if scale > 0 {
			relative = max(relative, d/scale)
		}
		if bound > 0 {
			ofBound = max(ofBound, d/bound)
		}
	}
	return ofBound, relative
}

// checkGemm checks a gemm output: within kernels.GemmErrorBound of the
// reference where the input is finite, the direct method's bits where it
// is not (the engine runs the direct method then).
func checkGemm(c enginetest.Case, got nd.Array) string {
	p, err := c.Spec.Normalize()
	if err != nil {
		return err.Error()
	}
	if nonFinite, _ := fftconv.ScanInput(p, c.Input, 1); nonFinite > 0 {
		return gputest.SameBitsAsCPU(c, "direct", got)
	}
	return c.CheckBound(got, c.Want(), kernels.GemmErrorBound(p, p.WeightAbsSum(), c.MaxAbs()))
}

// gemmCases are the engines' table and random cases that the gemm method
// takes (kernels.GemmWhy): every border, mode, origin, axis layout and
// the dtypes of float32 accumulation.
func gemmCases() []enginetest.Case {
	var cases []enginetest.Case
	for _, c := range enginetest.OnGPU(append(enginetest.Table(), enginetest.Random(29, 120)...)) {
		p, err := c.Spec.Normalize()
		if err != nil || kernels.GemmWhy(p) != nil || p.Complex() {
			continue
		}
		cases = append(cases, c)
	}
	return cases
}

// TestGemmTable runs the gemm method on the table's and random cases it
// takes, against the reference within its bound; on OpenCL NewGemm
// refuses with the reason.
func TestGemmTable(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		if tg.Backend != "cuda" {
			p, _ := (&nd.Spec{Shape: []int{8, 8}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3, 3}, Weights: make([]float64, 9)}}}).Normalize()
			if _, err := gemmOn(tg, p); err == nil || !strings.Contains(err.Error(), "CUDA") {
				t.Errorf("gemm on %s: %v", tg.Name, err)
			}
			return
		}
		cases := gemmCases()
		if tg.Short {
			cases = tg.EveryNth(cases, 7)
		}
		failures := gputest.SpreadCheck(cases, gputest.Workers(), func(c enginetest.Case) (nd.Array, error) {
			return gputest.Run(c, func(p *nd.Problem) (*gpu.GemmEngine, error) { return gemmOn(tg, p) })
		}, checkGemm)
		for _, f := range failures {
			t.Error(f)
		}
		t.Logf("%d cases", len(cases))
	})
}

// TestGemmBank: S000's workload shrunk (a uint8 volume, a bank of 32
// random 7³ kernels, valid; float32 and uint16 data under other borders
// and modes), against the float64 reference: the largest error relative
// to Σ|w|·max|x| must be within the gemm bound, and both it and the bound
// within the a-priori bound of a float32 direct sum of the same taps
// (taps·2⁻²⁴); the direct method's measured error on the same device is
// logged beside it.
func TestGemmBank(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		if tg.Backend != "cuda" {
			t.Skip("gemm is CUDA's")
		}
		rng := rand.New(rand.NewPCG(0, 29))
		type bankCase struct {
			dt     nd.DType
			shape  []int
			border nd.Border
			mode   nd.Mode
			bank   int
		}
		for _, bc := range []bankCase{
			{nd.Uint8, []int{24, 26, 40}, nd.Constant, nd.Valid, 32},
			{nd.Uint8, []int{12, 16, 36}, nd.Reflect, nd.Same, 8},
			{nd.Float32, []int{12, 14, 40}, nd.Mirror, nd.Same, 16},
			{nd.Float32, []int{8, 10, 40}, nd.Wrap, nd.Full, 5},
			{nd.Uint16, []int{10, 12, 40}, nd.Nearest, nd.Same, 32},
		} {
			ks := make([]nd.Kernel, bc.bank)
			for i := range ks {
				ks[i] = enginetest.RandomKernel(rng, false, 7, 7, 7)
			}
			in := enginetest.RandomArray(rng, bc.dt, bc.shape...)
			c := enginetest.Case{Name: "bank", Spec: nd.Spec{Shape: bc.shape, In: bc.dt, Out: nd.Float32, Border: bc.border, Mode: bc.mode, CVal: 1.5, Kernels: ks}, Input: in}
			p, err := c.Spec.Normalize()
			if err != nil {
				t.Fatal(err)
			}
			got, err := gputest.Run(c, func(p *nd.Problem) (*gpu.GemmEngine, error) { return gemmOn(tg, p) })
			if err != nil {
				t.Fatal(err)
			}
			direct, err := gputest.Run(c, func(p *nd.Problem) (*gpu.Engine, error) {
				dev, err := tg.Open()
				if err != nil {
					return nil, err
				}
				return gpu.NewDirect(dev, p, gpu.Options{})
			})
			if err != nil {
				t.Fatal(err)
			}
			want := c.Want()
			ofBound, rel := gemmError(c, p, want, got)
			_, directRel := gemmError(c, p, want, direct)
			absSum := p.WeightAbsSum()
			bound := kernels.GemmErrorBound(p, absSum, c.MaxAbs()) / (absSum * c.MaxAbs())
			sumBound := float64(len(p.Kernels[0].Dense)) * 0x1p-24
			t.Logf("%v %v %v %v bank %d: gemm error %.3g of Σ|w|·max|x| (%.3g of its bound %.3g); direct float32 %.3g; a float32 sum's bound %.3g", bc.dt, bc.shape, bc.border, bc.mode, bc.bank, rel, ofBound, bound, directRel, sumBound)
			if msg := c.CheckBound(got, want, bound*absSum*c.MaxAbs()); msg != "" {
				t.Errorf("%v %v: %s", bc.dt, bc.shape, msg)
			}
			if rel > sumBound || bound > sumBound {
				t.Errorf("%v %v: gemm error %.3g (bound %.3g) over a float32 direct sum's bound %.3g", bc.dt, bc.shape, rel, bound, sumBound)
			}
		}
	})
}

// TestGemmNonFinite: a float input holding NaN and Inf runs the direct
// method (its bits), from host memory and on device arrays.
func TestGemmNonFinite(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		if tg.Backend != "cuda" {
			t.Skip("gemm is CUDA's")
		}
		rng := rand.New(rand.NewPCG(3, 29))
		in := enginetest.RandomArray(rng, nd.Float32, 30, 40)
		d := in.Data.([]float32)
		d[17], d[300] = float32(math.NaN()), float32(math.Inf(-1))
		c := enginetest.Case{Name: "nan", Spec: nd.Spec{Shape: in.Shape, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, true, 5, 5), enginetest.RandomKernel(rng, true, 5, 5)}}, Input: in}
		p, _ := c.Spec.Normalize()
		e, err := gemmOn(tg, p)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		dst, _ := nd.New(p.Out, p.FullShape()...)
		if err := e.Execute(context.Background(), dst, in); err != nil {
			t.Fatal(err)
		}
		if msg := gputest.SameBitsAsCPU(c, "direct", dst); msg != "" || !e.UsedDirect() {
			t.Errorf("host arrays: %s (direct used: %v)", msg, e.UsedDirect())
		}
		src, _ := gpu.NewArray(tg.Device(), in.DType(), in.Shape...)
		out, _ := gpu.NewArray(tg.Device(), p.Out, p.FullShape()...)
		defer src.Free()
		defer out.Free()
		q, err := tg.Device().NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		if err := src.Write(q, in.Bytes()); err != nil {
			t.Fatal(err)
		}
		if err := e.ExecuteDevice(context.Background(), out, src); err != nil {
			t.Fatal(err)
		}
		got, _ := nd.New(p.Out, p.FullShape()...)
		if err := out.Read(q, got.Bytes()); err != nil {
			t.Fatal(err)
		}
		if msg := gputest.SameBitsAsCPU(c, "direct", got); msg != "" {
			t.Errorf("device arrays: %s", msg)
		}
	})
}
