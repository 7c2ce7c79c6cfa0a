package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/nd"
)

// runFFTCase runs c by FFT and checks it against the reference within the
// method's error bound; where the input holds NaN or Inf, the result must
// equal the direct method's bit for bit. It reports whether the case ran.
func runFFTCase(t *testing.T, c enginetest.Case, opt Options) bool {
	t.Helper()
	p, err := c.Spec.Normalize()
	if err != nil {
		t.Fatalf("normalize: %v", err)
	}
	if FFTSupported(p) != nil {
		return false
	}
	e, err := NewFFT(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	dst, _ := nd.New(p.Out, p.FullShape()...)
	if err := e.Execute(context.Background(), dst, c.Input); err != nil {
		t.Fatal(err)
	}
	maxAbs, finite := c.MaxAbs(), true
	if math.IsInf(maxAbs, 0) || math.IsNaN(maxAbs) || hasNaN(c.Input) {
		// Outputs whose window holds NaN or Inf must have the direct
		// method's bits; the others are bounded by the finite values.
		finite, maxAbs = false, finiteMaxAbs(c)
		want, _ := nd.New(p.Out, p.FullShape()...)
		if err := NewDirect(p, opt).Execute(context.Background(), want, c.Input); err != nil {
			t.Fatal(err)
		}
		ref, size := c.Want(), p.Out.Size()
		got, direct := dst.Bytes(), want.Bytes()
		for i, v := range ref.Values {
			if (math.IsNaN(v) || math.IsInf(v, 0)) && !slices.Equal(got[i*size:(i+1)*size], direct[i*size:(i+1)*size]) {
				t.Fatalf("element %d: the FFT gives %v, the direct method %v (reference %v)", i, dst.Float64s()[i], want.Float64s()[i], v)
			}
		}
	}
	if finite || !math.IsInf(maxAbs, 0) {
		bound, err := FFTBound(p, opt, maxAbs)
		if err != nil {
			t.Fatal(err)
		}
		if msg := c.CheckBound(dst, c.Want(), bound); msg != "" {
			t.Errorf("fft: %s", msg)
		}
	}
	return true
}

// finiteMaxAbs is MaxAbs over the finite values only (Inf where cval is
// infinite).
func finiteMaxAbs(c enginetest.Case) float64 {
	m := 0.0
	if c.Spec.Border == nd.Constant {
		m = math.Abs(c.Spec.CVal)
	}
	for _, v := range c.Input.Float64s() {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			m = max(m, math.Abs(v))
		}
	}
	return m
}

func hasNaN(a nd.Array) bool {
	return slices.ContainsFunc(a.Float64s(), math.IsNaN)
}

func TestFFTTable(t *testing.T) {
	ran := 0
	for _, c := range enginetest.Table() {
		t.Run(c.Name, func(t *testing.T) {
			if runFFTCase(t, c, Options{Workers: 2}) {
				ran++
			}
		})
	}
	if ran < 200 {
		t.Errorf("only %d cases ran by FFT", ran)
	}
}

func TestFFTRandom(t *testing.T) {
	for _, c := range enginetest.Random(5, 200) {
		t.Run(c.Name, func(t *testing.T) { runFFTCase(t, c, Options{Workers: 1 + len(c.Name)%3}) })
	}
}

// TestFFTLarge covers what the table's small inputs do not reach: long
// axes of large prime length (padded to fast lengths), kernels larger than
// a block of the default decomposition, channels and banks on a large
// image, and the 1-D block groups.
func TestFFTLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	cases := []enginetest.Case{
		{Name: "1d-1009-k31", Spec: nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 31)}, Border: nd.Mirror}, Input: enginetest.RandomArray(rng, nd.Float32, 1009)},
		{Name: "1d-20011-k257-full", Spec: nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 257)}, Mode: nd.Full, Border: nd.Wrap}, Input: enginetest.RandomArray(rng, nd.Float32, 20011)},
		{Name: "2d-1009x37-k15x9-valid", Spec: nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, true, 15, 9)}, Mode: nd.Valid, Convolve: true}, Input: enginetest.RandomArray(rng, nd.Uint8, 1009, 37)},
		{Name: "2d-rgb-bank", Spec: nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 11, 13), enginetest.RandomKernel(rng, false, 11, 13)}, Origin: []int{-5, 6}, Border: nd.Constant, CVal: 40}, Input: enginetest.RandomArray(rng, nd.Uint8, 97, 131, 3)},
		{Name: "3d-axes-2,0", Spec: nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 5, 4)}, Axes: []int{2, 0}, Border: nd.Nearest, Out: nd.Int16}, Input: enginetest.RandomArray(rng, nd.Int16, 23, 5, 41)},
	}
	// Outputs far beyond the integer types' ranges saturate, as in the
	// direct method.
	big := enginetest.RandomArray(rng, nd.Float32, 40, 50)
	for i, v := range big.Data.([]float32) {
		big.Data.([]float32)[i] = v * 1e4
	}
	for _, out := range []nd.DType{nd.Uint8, nd.Uint16, nd.Int16} {
		cases = append(cases, enginetest.Case{Name: "saturate-" + out.String(), Spec: nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 9, 9)}, Out: out}, Input: big})
	}
	// Kernels larger than the input, on every border: the table's such
	// cases are float64, which the FFT does not run.
	for _, b := range []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant} {
		for _, m := range []nd.Mode{nd.Same, nd.Full} {
			for _, g := range []struct{ in, k []int }{{[]int{3}, []int{7}}, {[]int{1}, []int{5}}, {[]int{2, 3}, []int{5, 6}}, {[]int{1, 4}, []int{3, 3}}, {[]int{4, 1, 3}, []int{3, 4, 2}}} {
				cases = append(cases, enginetest.Case{Name: fmt.Sprintf("large-kernel/%v/k%v/%v/%v", g.in, g.k, b, m),
					Spec:  nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, g.k...)}, Border: b, CVal: -7, Mode: m},
					Input: enginetest.RandomArray(rng, nd.Float32, g.in...)})
			}
		}
	}
	for _, c := range cases {
		c.Spec.Shape, c.Spec.In = c.Input.Shape, c.Input.DType()
		t.Run(c.Name, func(t *testing.T) {
			if !runFFTCase(t, c, Options{}) {
				t.Fatal("FFT does not support the case")
			}
		})
	}
}

// TestFFTBudget forces budgets so small that the problem splits into many
// blocks: the results stay within the bound, the decomposition within
// the budget.
func TestFFTBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []enginetest.Case{
		{Name: "1d", Spec: nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 63)}, Border: nd.Reflect}, Input: enginetest.RandomArray(rng, nd.Float32, 30000)},
		{Name: "1d-bank-channels", Spec: nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 33), enginetest.RandomKernel(rng, true, 33), enginetest.RandomKernel(rng, false, 33)}, Border: nd.Mirror, Out: nd.Int16}, Input: enginetest.RandomArray(rng, nd.Int16, 9000, 2)},
		{Name: "2d-bank", Spec: nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 9, 7), enginetest.RandomKernel(rng, false, 9, 7)}, Border: nd.Wrap, Mode: nd.Full}, Input: enginetest.RandomArray(rng, nd.Float32, 150, 170)},
		{Name: "3d", Spec: nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 5, 5, 5)}, Border: nd.Mirror}, Input: enginetest.RandomArray(rng, nd.Uint8, 40, 30, 35)},
	}
	for _, c := range cases {
		c.Spec.Shape, c.Spec.In = c.Input.Shape, c.Input.DType()
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		whole, err := fftconv.New(p, fftconv.Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		budget := int64(64 << 10)
		t.Logf("%s: default %d blocks of %v in %d KiB", c.Name, whole.TotalBlocks(), whole.Length, whole.Memory(2, len(p.Kernels))>>10)
		g, err := fftconv.New(p, fftconv.Options{Workers: 2, Budget: budget})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		t.Logf("%s: %d blocks of %v, %d at once in %d KiB", c.Name, g.TotalBlocks(), g.Length, g.Concurrency(len(p.Kernels)), g.Memory(g.Concurrency(len(p.Kernels)), len(p.Kernels))>>10)
		if m := g.Memory(g.Concurrency(len(p.Kernels)), len(p.Kernels)); m > budget || g.TotalBlocks() < max(8, 2*whole.TotalBlocks()) {
			t.Errorf("%s: %d blocks in %d bytes, budget %d", c.Name, g.TotalBlocks(), m, budget)
		}
		t.Run(c.Name, func(t *testing.T) { runFFTCase(t, c, Options{Workers: 2, FFTBudget: budget}) })
	}
	p, _ := (&nd.Spec{Shape: []int{1000, 1000}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 101, 101)}}).Normalize()
	if _, err := NewFFT(p, Options{FFTBudget: 1 << 10}); err == nil {
		t.Error("a 1 KiB budget for 101×101 blocks was accepted")
	}
}

// TestFFTNonFinite: NaN and Inf reach exactly the outputs the direct
// method gives them, on a problem that the FFT would otherwise run.
func TestFFTNonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	in := enginetest.RandomArray(rng, nd.Float32, 64, 80)
	d := in.Data.([]float32)
	// Inside, on an edge and in a corner, so that borders reflect them.
	d[100], d[2000], d[4000], d[0], d[80*63+79] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN())
	for _, b := range []nd.Border{nd.Reflect, nd.Wrap, nd.Constant} {
		for _, out := range []nd.DType{nd.Float32, nd.Uint8} {
			c := enginetest.Case{Spec: nd.Spec{Shape: in.Shape, In: nd.Float32, Out: out, Border: b, Mode: nd.Full,
				Kernels: []nd.Kernel{enginetest.RandomKernel(rng, true, 9, 7), enginetest.RandomKernel(rng, true, 9, 7)}}, Input: in}
			if !runFFTCase(t, c, Options{FFTBudget: 256 << 10}) {
				t.Fatal("not run")
			}
		}
	}
	long := enginetest.RandomArray(rng, nd.Float32, 20000)
	long.Data.([]float32)[777] = float32(math.NaN())
	long.Data.([]float32)[19999] = float32(math.Inf(-1))
	c := enginetest.Case{Spec: nd.Spec{Shape: long.Shape, In: nd.Float32, Border: nd.Mirror, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, true, 65)}}, Input: long}
	runFFTCase(t, c, Options{})
	inf := enginetest.Case{Spec: nd.Spec{Shape: []int{50}, In: nd.Float32, Border: nd.Constant, CVal: math.Inf(1), Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 7)}}, Input: enginetest.RandomArray(rng, nd.Float32, 50)}
	runFFTCase(t, inf, Options{})
}

// TestFFTSameBitsAnyWorkers: the decomposition, and so every rounding,
// depends on the problem and the budget only: 1, 2 and 3 workers give the
// same bits.
func TestFFTSameBitsAnyWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	in := enginetest.RandomArray(rng, nd.Float32, 300, 200)
	spec := nd.Spec{Shape: in.Shape, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 17, 13)}}
	p, _ := spec.Normalize()
	var first []byte
	for _, workers := range []int{1, 2, 3} {
		for _, budget := range []int64{0, 1 << 20} {
			e, err := NewFFT(p, Options{Workers: workers, FFTBudget: budget})
			if err != nil {
				t.Fatal(err)
			}
			dst, _ := nd.New(nd.Float32, p.FullShape()...)
			if err := e.Execute(context.Background(), dst, in); err != nil {
				t.Fatal(err)
			}
			if budget == 0 {
				if first == nil {
					first = slices.Clone(dst.Bytes())
				} else if !slices.Equal(first, dst.Bytes()) {
					t.Errorf("%d workers give other bits than 1", workers)
				}
			}
		}
	}
}

// TestFFTKernelGroups: a bank of 8 or more kernels into float32 stores
// each block's values for 8 kernels at once (scatterGroup); the output is
// the kernel-by-kernel scatter's bit for bit — banks with a remainder, 1-D
// groups of several blocks, channels, NaN patched by direct sums, an
// integer output (which keeps the kernel-by-kernel scatter) — and within
// the FFT's bound of the reference.
func TestFFTKernelGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 8))
	bank := func(n int, shape ...int) []nd.Kernel {
		ks := make([]nd.Kernel, n)
		for i := range ks {
			ks[i] = enginetest.RandomKernel(rng, false, shape...)
		}
		return ks
	}
	withNaN := enginetest.RandomArray(rng, nd.Float32, 61, 47)
	withNaN.Data.([]float32)[700] = float32(math.NaN())
	cases := []enginetest.Case{
		{Name: "2d-bank8", Spec: nd.Spec{Kernels: bank(8, 9, 11), Border: nd.Reflect}, Input: enginetest.RandomArray(rng, nd.Float32, 83, 97)},
		{Name: "2d-bank11-valid", Spec: nd.Spec{Kernels: bank(11, 7, 5), Mode: nd.Valid}, Input: enginetest.RandomArray(rng, nd.Float32, 70, 64)},
		{Name: "1d-bank16", Spec: nd.Spec{Kernels: bank(16, 33), Border: nd.Wrap}, Input: enginetest.RandomArray(rng, nd.Float32, 5000)},
		{Name: "rgb-bank8", Spec: nd.Spec{Kernels: bank(8, 5, 7), Border: nd.Mirror, Out: nd.Float32}, Input: enginetest.RandomArray(rng, nd.Uint8, 40, 45, 3)},
		{Name: "2d-bank8-nan", Spec: nd.Spec{Kernels: bank(8, 5, 5), Border: nd.Nearest}, Input: withNaN},
		{Name: "2d-bank9-int16", Spec: nd.Spec{Kernels: bank(9, 5, 5), Out: nd.Int16}, Input: enginetest.RandomArray(rng, nd.Int16, 50, 52)},
	}
	grouped := 0
	for _, c := range cases {
		c.Spec.Shape, c.Spec.In = c.Input.Shape, c.Input.DType()
		t.Run(c.Name, func(t *testing.T) {
			if !runFFTCase(t, c, Options{Workers: 2}) {
				t.Fatal("FFT does not support the case")
			}
			p, err := c.Spec.Normalize()
			if err != nil {
				t.Fatal(err)
			}
			run := func(group int) nd.Array {
				e, err := NewFFT(p, Options{Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				f := e.(*fftConv)
				if group == 0 {
					if f.kernelGroup > 1 {
						grouped++
					}
				} else {
					f.kernelGroup = group
				}
				dst, _ := nd.New(p.Out, p.FullShape()...)
				if err := e.Execute(context.Background(), dst, c.Input); err != nil {
					t.Fatal(err)
				}
				return dst
			}
			if got, want := run(0), run(1); !slices.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("kernel groups of 8 differ from kernel by kernel")
			}
		})
	}
	if grouped < 5 {
		t.Errorf("%d cases ran in kernel groups, want 5", grouped)
	}
}
