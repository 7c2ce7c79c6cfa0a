package enginetest

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ndconv/ndconv/internal/ref"
	"github.com/ndconv/ndconv/nd"
)

// Case is one request with its input.
type Case struct {
	Name  string
	Spec  nd.Spec
	Input nd.Array
	// Exact marks a case whose every sum is exact in any order (integer
	// inputs, power-of-two weights): it is compared with zero tolerance,
	// which makes rounding half to even observable.
	Exact bool
}

// Want computes the reference result of c.
func (c Case) Want() ref.Result { return ref.Correlate(c.Spec, c.Input.Float64s()) }

// WantComplex computes the reference result of a case with a complex
// output: its real and imaginary parts.
func (c Case) WantComplex() (re, im ref.Result) {
	xr, xi := c.Input.Parts()
	var imag []float64
	if xi.Data != nil {
		imag = xi.Float64s()
	}
	return ref.CorrelateComplex(c.Spec, xr.Float64s(), imag)
}

// CheckComplex is Check for a complex output, part by part: each part is
// held to Check's tolerance for its own magnitude (the parts' real
// correlations and their sum add at most one more rounding each, which
// Check's allowance covers).
func (c Case) CheckComplex(got nd.Array, re, im ref.Result) string {
	p, err := c.Spec.Normalize()
	if err != nil {
		return err.Error()
	}
	if got.DType() != p.Out {
		return fmt.Sprintf("dtype %v, want %v", got.DType(), p.Out)
	}
	gr, gi := got.Parts()
	if msg := c.check(gr, re, p.Out.Part(), p.Wide); msg != "" {
		return "real part: " + msg
	}
	if msg := c.check(gi, im, p.Out.Part(), p.Wide); msg != "" {
		return "imaginary part: " + msg
	}
	return ""
}

// Check compares an engine's output for c with the reference want and
// returns a description of the first mismatch, or "" when they agree.
//
// Tolerance: any summation order of values whose absolute sum is m differs
// from the exact sum by at most about taps·eps·m, eps being the
// accumulator's unit roundoff (float32 unless wide); a float32 output adds
// its own rounding. Integer outputs must equal the reference rounded half to
// even and saturated, from either end of that interval.
func (c Case) Check(got nd.Array, want ref.Result) string {
	p, err := c.Spec.Normalize()
	if err != nil {
		return err.Error()
	}
	return c.check(got, want, p.Out, p.Wide)
}

func (c Case) check(got nd.Array, want ref.Result, out nd.DType, wide bool) string {
	eps := 0x1p-24
	if wide {
		eps = 0x1p-53
	}
	rel := eps * float64(4*Taps(c.Spec)+16)
	if c.Exact {
		rel = 0
	}
	return compare(got, want, out, func(i int) float64 { return rel * want.Magnitude[i] })
}

// CheckBound is Check for a method that differs from the exact sum by
// rounding of its own (FFT convolution): every output within bound of the
// reference, plus a float32 output's rounding; integer outputs anywhere
// between the reference ± bound rounded and saturated.
func (c Case) CheckBound(got nd.Array, want ref.Result, bound float64) string {
	p, err := c.Spec.Normalize()
	if err != nil {
		return err.Error()
	}
	return compare(got, want, p.Out, func(int) float64 { return bound })
}

// MaxAbs is the largest magnitude of c's extended input: its values and,
// with the constant border, cval.
func (c Case) MaxAbs() float64 {
	m := 0.0
	if c.Spec.Border == nd.Constant {
		m = math.Abs(c.Spec.CVal)
	}
	for _, v := range c.Input.Float64s() {
		m = max(m, math.Abs(v))
	}
	return m
}

func compare(got nd.Array, want ref.Result, out nd.DType, tolerance func(i int) float64) string {
	if got.DType() != out {
		return fmt.Sprintf("dtype %v, want %v", got.DType(), out)
	}
	if fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
		return fmt.Sprintf("shape %v, want %v", got.Shape, want.Shape)
	}
	values := got.Float64s()
	for i, g := range values {
		w, m := want.Values[i], want.Magnitude[i]
		tol := tolerance(i)
		switch out {
		case nd.Float32:
			tol += 0x1p-24 * math.Abs(w)
		case nd.Float16:
			// The output's own rounding, and its subnormal spacing.
			tol += 0x1p-11*math.Abs(w) + 0x1p-25
		}
		if !agrees(g, w, tol, out) {
			return fmt.Sprintf("element %d (of %d): got %v, want %v (±%.3g, |w·x| sum %v)", i, len(values), g, w, tol, m)
		}
	}
	return ""
}

func agrees(got, want, tol float64, out nd.DType) bool {
	if out.IsInteger() {
		lo, hi := nd.Round(want-tol, out), nd.Round(want+tol, out)
		if math.IsNaN(want) {
			lo, hi = 0, 0
		}
		return got >= lo && got <= hi
	}
	switch {
	case math.IsNaN(want):
		return math.IsNaN(got)
	case math.IsInf(want, 0):
		return got == want
	case out == nd.Float32 && math.Abs(want) > math.MaxFloat32, out == nd.Float16 && math.Abs(want) > 65504:
		return math.IsInf(got, 0) || math.Abs(got-want) <= tol
	}
	return math.Abs(got-want) <= tol
}

// Taps is the number of kernel elements of spec, the summation length the
// tolerance scales with.
func Taps(spec nd.Spec) int {
	n := 1
	k := spec.Kernels[0]
	if k.Factors != nil {
		for _, f := range k.Factors {
			n *= len(f)
		}
		return n
	}
	for _, s := range k.Shape {
		n *= s
	}
	return n
}

// RandomArray returns an array of dtype dt and the given shape, filled with
// values spread over most of the type's range (floats in [−100, 100]).
func RandomArray(rng *rand.Rand, dt nd.DType, shape ...int) nd.Array {
	a, err := nd.New(dt, shape...)
	if err != nil {
		panic(err) // shapes here come from the test table
	}
	switch d := a.Data.(type) {
	case []uint8:
		for i := range d {
			d[i] = uint8(rng.IntN(256))
		}
	case []int8:
		for i := range d {
			d[i] = int8(rng.IntN(256) - 128)
		}
	case []uint16:
		for i := range d {
			d[i] = uint16(rng.IntN(65536))
		}
	case []uint32:
		for i := range d {
			d[i] = rng.Uint32()
		}
	case []int64:
		// Magnitudes up to 2⁶² (far beyond 2⁵³, where float64 rounds them).
		for i := range d {
			d[i] = rng.Int64N(1<<62) - 1<<61 + rng.Int64N(1<<62) - 1<<61
		}
	case []uint64:
		for i := range d {
			d[i] = rng.Uint64()
		}
	case []nd.Half:
		for i := range d {
			d[i] = nd.HalfOf(rng.Float64()*200 - 100)
		}
	case []int16:
		for i := range d {
			d[i] = int16(rng.IntN(65536) - 32768)
		}
	case []int32:
		for i := range d {
			d[i] = int32(rng.Int64N(1<<32) - 1<<31)
		}
	case []float32:
		for i := range d {
			d[i] = float32(rng.Float64()*200 - 100)
		}
	case []float64:
		for i := range d {
			d[i] = rng.Float64()*200 - 100
		}
	case []complex64:
		for i := range d {
			d[i] = complex(float32(rng.Float64()*200-100), float32(rng.Float64()*200-100))
		}
	case []complex128:
		for i := range d {
			d[i] = complex(rng.Float64()*200-100, rng.Float64()*200-100)
		}
	}
	return a
}

// RandomKernel returns a dense kernel of the given shape with weights in
// [−1, 1]; with zeros true about a quarter of them are zero.
func RandomKernel(rng *rand.Rand, zeros bool, shape ...int) nd.Kernel {
	n := 1
	for _, s := range shape {
		n *= s
	}
	w := make([]float64, n)
	for i := range w {
		w[i] = rng.Float64()*2 - 1
		if zeros && rng.IntN(4) == 0 {
			w[i] = 0
		}
	}
	return nd.Kernel{Shape: append([]int(nil), shape...), Weights: w}
}

// RandomFactors returns a separable kernel of random 1-D factors.
func RandomFactors(rng *rand.Rand, shape ...int) nd.Kernel {
	f := make([][]float64, len(shape))
	for i, s := range shape {
		f[i] = make([]float64, s)
		for j := range f[i] {
			f[i][j] = rng.Float64()*2 - 1
		}
	}
	return nd.Kernel{Shape: append([]int(nil), shape...), Factors: f}
}
