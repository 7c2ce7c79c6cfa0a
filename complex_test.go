package ndconv_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/ref"
	"github.com/ndconv/ndconv/nd"
)

// TestComplexAgainstReference runs random complex problems (complex data,
// complex weights, both, complex cvals, banks, every border and mode)
// through every exact method and checks both parts against the reference.
func TestComplexAgainstReference(t *testing.T) {
	for _, c := range enginetest.RandomComplex(1, 160) {
		t.Run(c.Name, func(t *testing.T) {
			re, im := c.WantComplex()
			checkExactMethods(t, c, re, im)
		})
	}
}

// checkExactMethods runs c through auto, direct and separable (where the
// kernels are rank-1) on the CPU and checks both parts of each result.
func checkExactMethods(t *testing.T, c enginetest.Case, re, im ref.Result) {
	t.Helper()
	for _, method := range []ndconv.Method{ndconv.Auto, ndconv.Direct, ndconv.Separable} {
		got, err := runSpec(c.Spec, c.Input, method)
		var ae *nd.ArgumentError
		if method == ndconv.Separable && errors.As(err, &ae) {
			continue // not rank-1
		}
		if err != nil {
			t.Fatalf("%v: %v", method, err)
		}
		if msg := c.CheckComplex(got, re, im); msg != "" {
			t.Errorf("%v: %s", method, msg)
		}
	}
}

// TestComplexFFT: the FFT method on complex problems stays within the sum
// of its real parts' bounds of the exact method.
func TestComplexFFT(t *testing.T) {
	n := 0
	for _, c := range enginetest.RandomComplex(2, 60) {
		exact, err := runSpec(c.Spec, c.Input, ndconv.Direct)
		if err != nil {
			t.Fatal(err)
		}
		got, err := runSpec(c.Spec, c.Input, ndconv.FFT)
		if err != nil {
			continue // a problem the FFT method does not take
		}
		n++
		p, _ := c.Spec.Normalize()
		parts := p.RealParts()
		bound := 0.0
		for _, part := range []*nd.Problem{parts.Re, parts.Im} {
			if part != nil {
				b, err := cpu.FFTBound(part, cpu.Options{}, c.MaxAbs()+math.Abs(c.Spec.CValImag)+maxAbsComplex(c.Input))
				if err != nil {
					t.Fatal(err)
				}
				bound += b
			}
		}
		er, ei := exact.Parts()
		gr, gi := got.Parts()
		for i, e := range append(er.Float64s(), ei.Float64s()...) {
			g := append(gr.Float64s(), gi.Float64s()...)[i]
			if tol := bound + 0x1p-23*math.Abs(e); math.Abs(g-e) > tol {
				t.Fatalf("%s: element %d: fft %v, direct %v (bound %g)", c.Name, i, g, e, tol)
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d complex problems ran with fft", n)
	}
}

func maxAbsComplex(a nd.Array) float64 {
	m := 0.0
	for _, p := range func() []nd.Array { re, im := a.Parts(); return []nd.Array{re, im} }() {
		if p.Data != nil {
			for _, v := range p.Float64s() {
				m = max(m, math.Abs(v))
			}
		}
	}
	return m
}

func runSpec(s nd.Spec, in nd.Array, method ndconv.Method) (ndconv.Array, error) {
	op := ndconv.Correlation
	if s.Convolve {
		op = ndconv.Convolution
	}
	opt := ndconv.Options{Border: s.Border, CVal: s.CVal, CValImag: s.CValImag, Origin: s.Origin, Mode: s.Mode,
		Axes: s.Axes, DType: s.Out, Device: "cpu", Method: method}
	p, err := ndconv.NewPlan(op, in.Shape, in.DType(), opt, s.Kernels...)
	if err != nil {
		return ndconv.Array{}, err
	}
	defer p.Close()
	return p.Execute(ctx, ndconv.Array{}, in)
}

// TestComplexSameBitsAsRealParts: a complex result is, bit for bit, the
// real correlations of its parts (each with the engines' exact
// accumulation) combined by one float32 subtraction or addition, for the
// direct and the separable method.
func TestComplexSameBitsAsRealParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	x := enginetest.RandomArray(rng, nd.Complex64, 23, 17)
	xr, xi := x.Parts()
	wr, wi := randomFloats(rng, 5), randomFloats(rng, 3)
	realW := ndconv.SeparableKernel(wr, wi)
	imagW := ndconv.SeparableKernel(randomFloats(rng, 5), randomFloats(rng, 3))
	dense := func(k ndconv.Kernel) []float64 { return k.Dense() }
	kernel := ndconv.Kernel{Shape: []int{5, 3}, Weights: dense(realW), Imag: dense(imagW)}
	for _, method := range []ndconv.Method{ndconv.Direct, ndconv.Separable} {
		opt := ndconv.Options{Border: ndconv.Constant, CVal: 1.5, CValImag: -2, Device: "cpu", Method: method}
		got := mustArray(t)(ndconv.Convolve(ctx, x, opt, kernel))
		part := func(src ndconv.Array, k ndconv.Kernel, cval float64) []float32 {
			o := opt
			o.CVal, o.CValImag = cval, 0
			a := mustArray(t)(ndconv.Convolve(ctx, src, o, ndconv.NewKernel(k.Shape, k.Dense())))
			return a.Data.([]float32)
		}
		rr, ii := part(xr, realW, 1.5), part(xi, imagW, -2)
		ri, ir := part(xr, imagW, 1.5), part(xi, realW, -2)
		for i, v := range got.Data.([]complex64) {
			if want := complex(rr[i]-ii[i], ri[i]+ir[i]); math.Float32bits(real(v)) != math.Float32bits(real(want)) ||
				math.Float32bits(imag(v)) != math.Float32bits(imag(want)) {
				t.Fatalf("%v: element %d = %v, the real parts give %v", method, i, v, want)
			}
		}
	}
}

// TestComplexConjugation pins scipy 1.10's semantics (checked against
// scipy.ndimage itself): correlate conjugates complex weights, as
// numpy.correlate does; convolve does not.
func TestComplexConjugation(t *testing.T) {
	x := ndconv.Array{Shape: []int{5}, Data: []float64{1, 2, 3, 4, 5}}
	k := ndconv.ComplexKernel([]int{3}, []complex128{1i, 0, 0})
	opt := ndconv.Options{Border: ndconv.Constant}
	corr := mustArray(t)(ndconv.Correlate(ctx, x, opt, k))
	conv := mustArray(t)(ndconv.Convolve(ctx, x, opt, k))
	for i, want := range []complex128{0, -1i, -2i, -3i, -4i} {
		if got := corr.Data.([]complex128)[i]; got != want {
			t.Errorf("correlate[%d] = %v, scipy gives %v", i, got, want)
		}
	}
	for i, want := range []complex128{2i, 3i, 4i, 5i, 0} {
		if got := conv.Data.([]complex128)[i]; got != want {
			t.Errorf("convolve[%d] = %v, scipy gives %v", i, got, want)
		}
	}
}

// TestComplexDTypes: the output types scipy gives complex filtering, a
// complex output asked for, and the errors for a real one.
func TestComplexDTypes(t *testing.T) {
	complexK := ndconv.ComplexKernel([]int{3}, []complex128{1, 1i, 2})
	realK := ndconv.NewKernel([]int{3}, []float64{1, 2, 3})
	for _, c := range []struct {
		in, out, want ndconv.DType
		k             ndconv.Kernel
	}{
		{nd.Uint8, 0, nd.Complex64, complexK},
		{nd.Int16, 0, nd.Complex64, complexK},
		{nd.Float16, 0, nd.Complex64, complexK},
		{nd.Float32, 0, nd.Complex64, complexK},
		{nd.Int32, 0, nd.Complex128, complexK},
		{nd.Uint64, 0, nd.Complex128, complexK},
		{nd.Float64, 0, nd.Complex128, complexK},
		{nd.Complex64, 0, nd.Complex64, realK},
		{nd.Complex128, 0, nd.Complex128, realK},
		{nd.Complex128, nd.Complex64, nd.Complex64, complexK},
		{nd.Float32, nd.Complex128, nd.Complex128, complexK},
	} {
		p, err := ndconv.NewPlan(ndconv.Correlation, []int{4}, c.in, ndconv.Options{DType: c.out}, c.k)
		if err != nil {
			t.Errorf("%v → %v: %v", c.in, c.out, err)
			continue
		}
		if p.DType() != c.want {
			t.Errorf("%v → %v: output %v, want %v", c.in, c.out, p.DType(), c.want)
		}
		in := mustArray(t)(nd.New(c.in, 4))
		got := mustArray(t)(p.Execute(ctx, ndconv.Array{}, in))
		if got.DType() != c.want {
			t.Errorf("%v: executed to %v", c.in, got.DType())
		}
	}
	for _, c := range []struct {
		name string
		in   ndconv.DType
		opt  ndconv.Options
		k    ndconv.Kernel
	}{
		{"integer output", nd.Complex64, ndconv.Options{DType: nd.Int16}, realK},
		{"float output", nd.Float32, ndconv.Options{DType: nd.Float32}, complexK},
		{"complex cval, real data", nd.Float32, ndconv.Options{CValImag: 1}, complexK},
		{"NaN cval", nd.Complex64, ndconv.Options{CValImag: math.NaN()}, realK},
		{"imaginary parts and factors", nd.Complex64, ndconv.Options{}, ndconv.Kernel{Factors: [][]float64{{1, 2}}, Imag: []float64{1, 2}}},
		{"imaginary parts' count", nd.Complex64, ndconv.Options{}, ndconv.Kernel{Shape: []int{2}, Weights: []float64{1, 2}, Imag: []float64{1}}},
		{"infinite imaginary part", nd.Complex64, ndconv.Options{}, ndconv.Kernel{Shape: []int{1}, Weights: []float64{1}, Imag: []float64{math.Inf(1)}}},
	} {
		_, err := ndconv.NewPlan(ndconv.Correlation, []int{4}, c.in, c.opt, c.k)
		var ae *nd.ArgumentError
		if !errors.As(err, &ae) {
			t.Errorf("%s: %v, want an ArgumentError", c.name, err)
		}
	}
	_, err := ndconv.NewPlan(ndconv.Correlation, []int{4}, nd.Float32, ndconv.Options{DType: nd.Complex64}, realK)
	var ue *nd.UnsupportedError
	if !errors.As(err, &ue) {
		t.Errorf("a complex output of real data and weights (scipy refuses it): %v", err)
	}
	if _, _, err := ndconv.CorrelateSlice(ctx, []float32{1, 2, 3}, []int{3}, ndconv.Options{}, complexK); err == nil {
		t.Error("CorrelateSlice returned a complex result as []float32")
	}
	got, _, err := ndconv.CorrelateSlice(ctx, []complex64{1, 2i, 3}, []int{3}, ndconv.Options{Border: ndconv.Constant}, realK)
	if err != nil || got[1] != 10+4i {
		t.Errorf("CorrelateSlice of complex64: %v, %v", got, err)
	}
}

// TestScipyComplexFixtures runs the complex scipy fixtures
// (scripts/scipy_complex_fixtures.py: complex data, complex weights, both,
// complex cvals, every border, correlate and convolve) through the
// reference and every exact method.
func TestScipyComplexFixtures(t *testing.T) {
	raw, err := os.ReadFile("testdata/scipy-complex/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Cases []struct {
			Name, Func, Border, Input, Kernel, Expected string
			CVal                                        [2]float64
			Origin                                      []int
		}
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Cases) < 50 {
		t.Fatalf("only %d complex fixture cases", len(m.Cases))
	}
	read := func(t *testing.T, name string) nd.Array {
		a, err := imageio.ReadNPYFile(filepath.Join("testdata/scipy-complex", name))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, fc := range m.Cases {
		t.Run(fc.Name, func(t *testing.T) {
			in, w, expected := read(t, fc.Input), read(t, fc.Kernel), read(t, fc.Expected)
			wr, wi := w.Parts()
			k := ndconv.Kernel{Shape: w.Shape, Weights: wr.Float64s()}
			if wi.Data != nil {
				k.Imag = wi.Float64s()
			}
			spec := nd.Spec{Shape: in.Shape, In: in.DType(), Kernels: []nd.Kernel{k}, Origin: fc.Origin,
				CVal: fc.CVal[0], CValImag: fc.CVal[1], Convolve: fc.Func == "convolve"}
			if spec.Border, err = nd.ParseBorder(fc.Border); err != nil {
				t.Fatal(err)
			}
			c := enginetest.Case{Spec: spec, Input: in}
			oracleRe, oracleIm := c.WantComplex()
			er, ei := expected.Parts()
			wantRe := ref.Result{Shape: expected.Shape, Values: er.Float64s(), Magnitude: oracleRe.Magnitude}
			wantIm := ref.Result{Shape: expected.Shape, Values: ei.Float64s(), Magnitude: oracleIm.Magnitude}
			for i := range wantRe.Values {
				if !sameValue(oracleRe.Values[i], wantRe.Values[i], 1e-12*oracleRe.Magnitude[i]) ||
					!sameValue(oracleIm.Values[i], wantIm.Values[i], 1e-12*oracleIm.Magnitude[i]) {
					t.Fatalf("reference disagrees with scipy at %d: %v%+vi vs %v%+vi", i,
						oracleRe.Values[i], oracleIm.Values[i], wantRe.Values[i], wantIm.Values[i])
				}
			}
			checkExactMethods(t, c, wantRe, wantIm)
		})
	}
}

// TestComplexOnEveryDevice: complex problems reach the GPU backends as
// their real parts, through the plan layer, and give the CPU's bits there
// (OpenCL runs on PoCL in CI; CUDA where there is one).
func TestComplexOnEveryDevice(t *testing.T) {
	devices := gpuDevices(t)
	rng := rand.New(rand.NewPCG(5, 5))
	rank1 := ndconv.Kernel{Shape: []int{3, 5}, Weights: ndconv.SeparableKernel(randomFloats(rng, 3), randomFloats(rng, 5)).Dense(),
		Imag: ndconv.SeparableKernel(randomFloats(rng, 3), randomFloats(rng, 5)).Dense()}
	for _, c := range []struct {
		in     nd.DType
		method ndconv.Method
		k      ndconv.Kernel
	}{
		{nd.Complex64, ndconv.Direct, ndconv.ComplexKernel([]int{2, 3}, []complex128{1 + 1i, -2, 0.5i, 3 - 1i, 0, 1})},
		{nd.Complex64, ndconv.Separable, rank1},
		{nd.Complex128, ndconv.Direct, ndconv.NewKernel([]int{3, 3}, randomFloats(rng, 9))},
	} {
		x := enginetest.RandomArray(rng, c.in, 19, 23)
		opt := ndconv.Options{Border: ndconv.Constant, CVal: 2, Device: "cpu", Method: c.method}
		if c.in.IsComplex() {
			opt.CValImag = -1
		}
		want := mustArray(t)(ndconv.Correlate(ctx, x, opt, c.k))
		for _, dev := range devices {
			opt.Device = dev
			got := mustArray(t)(ndconv.Correlate(ctx, x, opt, c.k))
			if got.DType() != want.DType() || !slices.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%v %v on %s: not the CPU's bits", c.in, c.method, dev)
			}
		}
	}
}

// BenchmarkComplex times a 1024² 7×7 correlation on the CPU: real float32
// data and weights, complex64 data with real weights (two real problems),
// and complex64 data with complex weights (two banks of two).
func BenchmarkComplex(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 9))
	real7 := ndconv.NewKernel([]int{7, 7}, randomFloats(rng, 49))
	complex7 := ndconv.Kernel{Shape: []int{7, 7}, Weights: randomFloats(rng, 49), Imag: randomFloats(rng, 49)}
	for _, c := range []struct {
		name string
		in   nd.DType
		k    ndconv.Kernel
	}{
		{"float32", nd.Float32, real7},
		{"complex64-data", nd.Complex64, real7},
		{"complex64-both", nd.Complex64, complex7},
	} {
		b.Run(c.name, func(b *testing.B) {
			x := enginetest.RandomArray(rng, c.in, 1024, 1024)
			p, err := ndconv.NewPlan(ndconv.Correlation, x.Shape, c.in, ndconv.Options{Device: "cpu", Method: ndconv.Direct}, c.k)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			out, err := nd.New(p.DType(), p.Shape()...)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := p.Execute(ctx, out, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type recordedProgress struct {
	mu      sync.Mutex
	reports [][2]int64
}

func (r *recordedProgress) Report(done, total int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, [2]int64{done, total})
}

// TestComplexProgress: the two real parts of a complex problem report as
// halves of one job, ending at the whole.
func TestComplexProgress(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	x := enginetest.RandomArray(rng, nd.Complex64, 64, 64)
	var p recordedProgress
	k := ndconv.ComplexKernel([]int{3}, []complex128{1, 2i, 3})
	mustArray(t)(ndconv.Correlate(ctx, x, ndconv.Options{Device: "cpu", Progress: &p}, k))
	firstHalf, secondHalf, end := false, false, false
	for _, r := range p.reports {
		if r[0] > r[1] || r[1] != p.reports[0][1] {
			t.Fatalf("report %v of %v", r, p.reports)
		}
		firstHalf = firstHalf || 2*r[0] <= r[1]
		secondHalf = secondHalf || 2*r[0] > r[1]
		end = end || r[0] == r[1]
	}
	if !firstHalf || !secondHalf || !end {
		t.Errorf("reports %v: not two halves ending at the whole", p.reports)
	}
}

// TestComplexChunkedEqualsWhole: a complex plan run chunk by chunk gives
// Execute's bits, for complex and real data with complex weights and a
// complex bank, every border.
func TestComplexChunkedEqualsWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	borders := []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant}
	for i, in := range []nd.DType{nd.Complex64, nd.Complex128, nd.Int16, nd.Complex64, nd.Float32} {
		shape := []int{23, 9}
		var kernels []ndconv.Kernel
		for range 1 + i%2 {
			k := enginetest.RandomKernel(rng, true, 3, 4)
			k.Imag = enginetest.RandomKernel(rng, true, 3, 4).Weights
			kernels = append(kernels, k)
		}
		opt := ndconv.Options{Border: borders[i], CVal: 1.5, Mode: nd.Mode(i % 3), Device: "cpu"}
		if in.IsComplex() {
			opt.CValImag = -0.5
		}
		src := enginetest.RandomArray(rng, in, shape...)
		p, err := ndconv.NewPlan(ndconv.Correlation, shape, in, opt, kernels...)
		if err != nil {
			t.Fatal(err)
		}
		want := mustArray(t)(p.Execute(ctx, ndconv.Array{}, src))
		got := mustArray(t)(nd.New(p.DType(), p.Shape()...))
		chunks := 0
		err = p.ExecuteChunks(ctx, src, 400, func(off int, out ndconv.Array) error {
			copy(got.Bytes()[off*p.DType().Size():], out.Bytes())
			chunks++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if chunks < 2 || !slices.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%v %v: %d chunks differ from Execute", in, opt.Border, chunks)
		}
	}
}
