package gputest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// FFTTableCases are the case table's problems the FFT takes: every group but
// the shape sweeps whole (every fourth of the dtype ones, every sixth of
// the factor ones), every tenth of the shape sweeps (borders, modes,
// origins); with all, every one. About 85 cases, some 55 programs: with
// cold caches about 50 s on PoCL optimised, under 30 s unoptimised.
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
	// The engine ran the decomposition fft.cl's transforms take or a
	// library's: the bound is the larger of the two, and where only one
	// would overflow, the direct method's bits pass too.
	absSum := p.WeightAbsSum()
	nonFinite, maxAbs := fftconv.ScanInput(p, c.Input, 1)
	bound, overflows := 0.0, 0
	for _, library := range []bool{false, true} {
		g, err := kernels.FFTGeometry(p, library, nil)
		if err != nil {
			return err.Error()
		}
		if g.Overflows(absSum, maxAbs) {
			overflows++
		}
		bound = max(bound, g.ErrorBound(absSum, c.MaxAbs()))
	}
	if nonFinite > 0 || overflows == 2 {
		return SameBitsAsCPU(c, "direct", got)
	}
	if overflows == 1 && SameBitsAsCPU(c, "direct", got) == "" {
		return ""
	}
	return c.CheckBound(got, c.Want(), bound)
}

// FFTRowCases stress the gather and scatter (fftconv.cl's rows): several
// blocks along the transformed axes (every one but 3-D's last), the last
// partial, under every
// border, origin and mode; batch axes before and after the transformed
// ones; a bank into uint8 outputs; 1-D and 3-D. Run in small batches of
// an odd count of blocks, they also end in a partial batch.
func FFTRowCases() []enginetest.Case {
	rng := rand.New(rand.NewPCG(31, 32))
	k := func(zeros bool, shape ...int) []nd.Kernel {
		return []nd.Kernel{enginetest.RandomKernel(rng, zeros, shape...)}
	}
	// Each mode's image cut into several blocks along both axes.
	image := enginetest.RandomArray(rng, nd.Float32, 181, 223)
	wide := enginetest.RandomArray(rng, nd.Float32, 250, 300)
	modes := []nd.Mode{nd.Same, nd.Full, nd.Valid, nd.Same, nd.Full}
	origins := [][]int{{-4, 3}, {2, -1}, {0, 0}, {4, -3}, {-1, 2}}
	var cases []enginetest.Case
	for i, b := range []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant} {
		in := image
		if modes[i] == nd.Full {
			in = wide
		}
		cases = append(cases, enginetest.Case{Name: "rows-2d-" + b.String() + "-" + modes[i].String(),
			Spec: nd.Spec{Kernels: k(i%2 == 0, 9, 7), Border: b, CVal: -2.5, Mode: modes[i], Origin: origins[i]}, Input: in})
	}
	cases = append(cases,
		enginetest.Case{Name: "rows-4d-batch-axes", Spec: nd.Spec{Kernels: k(false, 5, 3), Axes: []int{1, 2}, Border: nd.Constant, CVal: 3, Origin: []int{2, -1}, Mode: nd.Full},
			Input: enginetest.RandomArray(rng, nd.Float32, 2, 161, 345, 3)},
		enginetest.Case{Name: "rows-1d-channels-bank-uint8", Spec: nd.Spec{Kernels: append(k(false, 63), enginetest.RandomKernel(rng, true, 63)), Axes: []int{0}, Border: nd.Mirror, Origin: []int{-20}, Out: nd.Uint8},
			Input: enginetest.RandomArray(rng, nd.Uint8, 5000, 2)},
		enginetest.Case{Name: "rows-3d-valid", Spec: nd.Spec{Kernels: k(false, 5, 5, 5), Border: nd.Wrap, Mode: nd.Valid, Out: nd.Int16},
			Input: enginetest.RandomArray(rng, nd.Int16, 70, 90, 80)},
	)
	for i := range cases {
		cases[i].Spec.Shape, cases[i].Spec.In = cases[i].Input.Shape, cases[i].Input.DType()
	}
	return cases
}

// FFTRowBatch is how to run an FFTRowCase: transform lengths forced to
// the smallest powers of two of at least twice each kernel axis's extent
// (whatever a cost model would pick, so that every axis is cut into
// several blocks on every machine), and the blocks per batch, the smallest
// odd count (from 3) that leaves the last batch partial. It fails where
// the case does not cut at least two transformed axes (1-D: its one) into
// several blocks, or has too few blocks for two batches.
func FFTRowBatch(c enginetest.Case) (int, kernels.Tuning, error) {
	var tuning kernels.Tuning
	p, err := c.Spec.Normalize()
	if err != nil {
		return 0, tuning, err
	}
	i := 0
	var shape kernels.FFTShape
	for _, k := range p.KShape {
		if k > 1 && i < len(shape.Lengths) {
			l := 1
			for l < 2*k {
				l *= 2
			}
			shape.Lengths[i] = l
			i++
		}
	}
	tuning.Shape = shape
	g, err := fftconv.New(p, fftconv.Options{Workers: 1, Lengths: shape.Slice()})
	if err != nil {
		return 0, tuning, err
	}
	several := 0
	for _, n := range g.Blocks {
		several += min(1, n-1)
	}
	batch := 3
	for g.TotalBlocks()%batch == 0 {
		batch += 2
	}
	if several < min(2, len(g.Blocks)) || g.TotalBlocks() < batch {
		return 0, tuning, fmt.Errorf("%s: blocks %v in batches of %d: not every edge nor a partial batch", c.Name, g.Blocks, batch)
	}
	return batch, tuning, nil
}

// FFTRowFailures runs every FFTRowCase through run in batches of
// FFTRowBatch blocks of its transform lengths (a tuning to run with) and
// checks it (CheckFFT): the failures, each
// "<case>: <error or mismatch>".
func FFTRowFailures(run func(c enginetest.Case, batch int, tuning kernels.Tuning) (nd.Array, error)) []string {
	var failures []string
	for _, c := range FFTRowCases() {
		batch, tuning, err := FFTRowBatch(c)
		if err != nil {
			failures = append(failures, err.Error())
			continue
		}
		got, err := run(c, batch, tuning)
		if err == nil {
			if msg := CheckFFT(c, got); msg != "" {
				err = fmt.Errorf("batches of %d: %s", batch, msg)
			}
		}
		if err != nil {
			failures = append(failures, c.Name+": "+err.Error())
		}
	}
	return failures
}
