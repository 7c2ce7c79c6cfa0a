package gputest

import (
	"math"
	"math/rand/v2"
	"strings"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/nd"
)

// FFTTableCases are the case table's problems the FFT takes: every group but
// the shape sweeps whole (every fourth of the dtype ones, every sixth of
// the factor ones), every tenth of the shape sweeps (borders, modes,
// origins); with all, every one. About 70 cases, a few dozen
// builds: under two minutes on PoCL with cold caches.
func FFTTableCases(all bool) []enginetest.Case {
	var cases []enginetest.Case
	groups := map[string]int{}
	for i, c := range enginetest.OnGPU(enginetest.Table()) {
		p, err := c.Spec.Normalize()
		if err != nil || fftconv.Supported(p) != nil {
			continue
		}
		group := strings.SplitN(c.Name, "/", 2)[0]
		n := groups[group]
		groups[group]++
		sweep := strings.HasPrefix(group, "[")
		switch {
		case all,
			sweep && i%10 == 0,
			!sweep && (group != "dtype" || n%4 == 0) && (group != "factors" || n%6 == 0):
			cases = append(cases, c)
		}
	}
	return cases
}

// FFTLargeCases cover what the table's small inputs do not: long axes of
// large prime length (blocks padded to fast lengths, transforms by
// fft_pass as well as fft_local), several blocks per axis and batch,
// channels and banks on a larger image, 3-D, integer outputs saturating,
// and NaN and Inf.
func FFTLargeCases() []enginetest.Case {
	rng := rand.New(rand.NewPCG(21, 22))
	k := func(zeros bool, shape ...int) []nd.Kernel {
		return []nd.Kernel{enginetest.RandomKernel(rng, zeros, shape...)}
	}
	cases := []enginetest.Case{
		{Name: "1d-20011-k257-full", Spec: nd.Spec{Kernels: k(false, 257), Mode: nd.Full, Border: nd.Wrap}, Input: enginetest.RandomArray(rng, nd.Float32, 20011)},
		{Name: "1d-1009-k31", Spec: nd.Spec{Kernels: k(false, 31), Border: nd.Mirror}, Input: enginetest.RandomArray(rng, nd.Float32, 1009)},
		{Name: "2d-1009x37-k15x9-valid", Spec: nd.Spec{Kernels: k(true, 15, 9), Mode: nd.Valid, Convolve: true}, Input: enginetest.RandomArray(rng, nd.Uint8, 1009, 37)},
		{Name: "2d-rgb-bank", Spec: nd.Spec{Kernels: append(k(false, 11, 13), enginetest.RandomKernel(rng, true, 11, 13)), Origin: []int{-5, 6}, Border: nd.Constant, CVal: 40}, Input: enginetest.RandomArray(rng, nd.Uint8, 97, 131, 3)},
		{Name: "2d-401x397-k31x31", Spec: nd.Spec{Kernels: k(false, 31, 31), Border: nd.Reflect, Out: nd.Float32}, Input: enginetest.RandomArray(rng, nd.Float32, 401, 397)},
		{Name: "3d-axes-2,0", Spec: nd.Spec{Kernels: k(false, 5, 4), Axes: []int{2, 0}, Border: nd.Nearest, Out: nd.Int16}, Input: enginetest.RandomArray(rng, nd.Int16, 23, 5, 41)},
		{Name: "3d-k5x6x7-mirror", Spec: nd.Spec{Kernels: k(false, 5, 6, 7), Border: nd.Mirror, Origin: []int{1, -2, 3}}, Input: enginetest.RandomArray(rng, nd.Uint16, 29, 31, 37)},
	}
	big := enginetest.RandomArray(rng, nd.Float32, 40, 50)
	for i, v := range big.Data.([]float32) {
		big.Data.([]float32)[i] = v * 1e4
	}
	for _, out := range []nd.DType{nd.Uint8, nd.Int16} {
		cases = append(cases, enginetest.Case{Name: "saturate-" + out.String(), Spec: nd.Spec{Kernels: k(false, 9, 9), Out: out}, Input: big})
	}
	nonFinite := enginetest.RandomArray(rng, nd.Float32, 64, 80)
	d := nonFinite.Data.([]float32)
	d[100], d[2000], d[0] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
	for _, b := range []nd.Border{nd.Reflect, nd.Constant} {
		cases = append(cases, enginetest.Case{Name: "nonfinite-" + b.String(), Spec: nd.Spec{Kernels: k(true, 9, 7), Border: b, Mode: nd.Full, Out: nd.Uint8}, Input: nonFinite})
	}
	cases = append(cases, enginetest.Case{Name: "infinite-cval", Spec: nd.Spec{Kernels: k(false, 7), Border: nd.Constant, CVal: math.Inf(1)}, Input: enginetest.RandomArray(rng, nd.Float32, 50)})
	for i := range cases {
		cases[i].Spec.Shape, cases[i].Spec.In = cases[i].Input.Shape, cases[i].Input.DType()
	}
	return cases
}

// FFTBatchCase is a 1-D bank over channels with many blocks: small
// budgets split it into batches (and, on CUDA, slabs).
func FFTBatchCase() enginetest.Case {
	rng := rand.New(rand.NewPCG(5, 5))
	in := enginetest.RandomArray(rng, nd.Float32, 100000, 2)
	return enginetest.Case{Name: "1d-bank-channels", Spec: nd.Spec{Shape: in.Shape, In: nd.Float32, Border: nd.Wrap, Axes: []int{0},
		Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 101), enginetest.RandomKernel(rng, false, 101)}}, Input: in}
}

// CheckFFT checks a GPU engine's FFT convolution of c: within fftconv's
// error bound of the reference where the input is finite and small enough
// to transform, and bit for bit the CPU's direct method where it is not
// (the GPU engines run the direct method for such inputs). It returns ""
// or the first mismatch.
func CheckFFT(c enginetest.Case, got nd.Array) string {
	p, err := c.Spec.Normalize()
	if err != nil {
		return err.Error()
	}
	g, err := fftconv.New(p, fftconv.Options{Workers: 1})
	if err != nil {
		return err.Error()
	}
	absSum := fftconv.AbsSum(p)
	nonFinite, maxAbs := fftconv.ScanInput(p, c.Input, 1)
	if nonFinite > 0 || g.Overflows(absSum, maxAbs) {
		return SameBitsAsCPU(c, "direct", got)
	}
	return c.CheckBound(got, c.Want(), g.ErrorBound(absSum, c.MaxAbs()))
}
