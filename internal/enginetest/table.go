package enginetest

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ndconv/ndconv/nd"
)

// Table returns the fixed case table: every border × mode × correlate/
// convolve × origin extreme in 1-D to 3-D, every dtype pair, kernels larger
// than the input, axes of length 1, banks, axes and channels, separable
// kernels (also with a nonzero cval), 4-D and 5-D, NaN and Inf, saturation,
// empty inputs and inputs wide enough to span several tiles. It is
// deterministic: the same call returns the same cases.
func Table() []Case {
	rng := rand.New(rand.NewPCG(1, 2))
	var cases []Case
	add := adder(&cases, "")

	borders := []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant}
	modes := []nd.Mode{nd.Same, nd.Valid, nd.Full}
	geometries := []struct{ in, k []int }{
		{[]int{13}, []int{4}},
		{[]int{12}, []int{5}},
		{[]int{9, 11}, []int{3, 4}},
		{[]int{5, 6, 7}, []int{3, 2, 3}},
	}
	for _, g := range geometries {
		for _, b := range borders {
			for _, m := range modes {
				for _, conv := range []bool{false, true} {
					for _, o := range originChoices(g.k, m) {
						s := nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, true, g.k...)},
							Border: b, CVal: 2.5, Mode: m, Convolve: conv, Origin: o}
						add(fmt.Sprintf("%v/k%v/%v/%v/conv=%v/origin%v", g.in, g.k, b, m, conv, o),
							s, RandomArray(rng, nd.Float32, g.in...))
					}
				}
			}
		}
	}

	for _, in := range nd.DTypes {
		for _, out := range nd.DTypes {
			if !dtypePairTested(in, out) {
				continue
			}
			s := nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, 3, 3)}, Out: out, Border: nd.Mirror}
			add(fmt.Sprintf("dtype/%v->%v", in, out), s, RandomArray(rng, in, 7, 8))
		}
		// Sum-to-one weights of 1/9 give exact halves in float64 and test
		// rounding half to even on integer outputs.
		box := nd.Kernel{Shape: []int{3, 3}, Weights: []float64{1, 1, 1, 1, 1, 1, 1, 1, 1}}
		for i := range box.Weights {
			box.Weights[i] = 0.5
		}
		add(fmt.Sprintf("halves/%v", in), nd.Spec{Kernels: []nd.Kernel{box}}, RandomArray(rng, in, 6, 7))
		// Exact for integers of up to 32 bits (their sums of halves fit
		// the accumulator); 64-bit ones beyond 2⁵³ round in float64.
		cases[len(cases)-1].Exact = in.IsInteger() && in.Size() <= 4
	}

	for _, b := range borders {
		for _, m := range []nd.Mode{nd.Same, nd.Full} {
			for _, g := range []struct{ in, k []int }{
				{[]int{3}, []int{7}}, {[]int{1}, []int{5}}, {[]int{2}, []int{9}},
				{[]int{2, 3}, []int{5, 6}}, {[]int{1, 4}, []int{3, 3}}, {[]int{4, 1, 3}, []int{3, 4, 2}},
			} {
				s := nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, g.k...)}, Border: b, CVal: -7, Mode: m}
				add(fmt.Sprintf("large-kernel/%v/k%v/%v/%v", g.in, g.k, b, m), s, RandomArray(rng, nd.Float64, g.in...))
			}
		}
	}

	for _, k := range []int{2, 3, 5} {
		for _, m := range modes {
			bank := func(shape ...int) []nd.Kernel {
				var ks []nd.Kernel
				for range k {
					ks = append(ks, RandomKernel(rng, true, shape...))
				}
				return ks
			}
			add(fmt.Sprintf("bank%d/2d/%v", k, m), nd.Spec{Kernels: bank(3, 5), Mode: m, Border: nd.Wrap}, RandomArray(rng, nd.Uint8, 10, 12))
			add(fmt.Sprintf("bank%d/3d/%v", k, m), nd.Spec{Kernels: bank(3, 3, 3), Mode: m, Out: nd.Float32}, RandomArray(rng, nd.Uint8, 6, 7, 8))
		}
	}

	add("axes/default-per-channel", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, 3, 3)}}, RandomArray(rng, nd.Uint8, 8, 9, 3))
	add("axes/1,0", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, 3, 5)}, Axes: []int{1, 0}, Origin: []int{1, -2}}, RandomArray(rng, nd.Float32, 8, 9))
	add("axes/2,0", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, 2, 3)}, Axes: []int{2, 0}, Mode: nd.Full, Border: nd.Constant, CVal: 1}, RandomArray(rng, nd.Int16, 5, 6, 7))
	add("axes/-1", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, 4)}, Axes: []int{-1}, Border: nd.Nearest}, RandomArray(rng, nd.Float32, 6, 9))
	add("axes/1-of-2d", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, 5)}, Axes: []int{1}, Mode: nd.Valid}, RandomArray(rng, nd.Uint16, 6, 9))
	add("axes/0-of-3d-bank", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, 3), RandomKernel(rng, false, 3)}, Axes: []int{0}}, RandomArray(rng, nd.Float64, 5, 4, 3))
	add("axes/rgba-4channels", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, 5, 5)}, Border: nd.Reflect}, RandomArray(rng, nd.Float32, 9, 10, 4))

	for _, b := range borders {
		for _, m := range modes {
			add(fmt.Sprintf("factors/2d/%v/%v", b, m), nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 5, 4)}, Border: b, CVal: 3, Mode: m, Origin: []int{-2, 1}}, RandomArray(rng, nd.Float32, 11, 9))
			add(fmt.Sprintf("factors/3d/%v/%v/conv", b, m), nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 3, 4, 5)}, Border: b, CVal: -2, Mode: m, Convolve: true}, RandomArray(rng, nd.Uint8, 6, 7, 8))
		}
		rank1 := nd.Kernel{Shape: []int{3, 5}, Weights: outer([]float64{1, 2, 1}, []float64{1, 4, 6, 4, 1})}
		add(fmt.Sprintf("rank1-dense/%v", b), nd.Spec{Kernels: []nd.Kernel{rank1}, Border: b, CVal: 3}, RandomArray(rng, nd.Uint8, 9, 10))
	}
	add("factors/bank", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 3, 3), RandomFactors(rng, 3, 3)}, Border: nd.Constant, CVal: 1}, RandomArray(rng, nd.Float32, 8, 8))
	add("factors/with-zero-taps", nd.Spec{Kernels: []nd.Kernel{{Factors: [][]float64{{1, 0, -1}, {1, 2, 1}}}}}, RandomArray(rng, nd.Int16, 8, 8))
	add("factors/scalar-axis", nd.Spec{Kernels: []nd.Kernel{{Factors: [][]float64{{2}, {1, 2, 1}}}}, Border: nd.Constant, CVal: 5}, RandomArray(rng, nd.Float32, 5, 8))
	add("factors/1d-on-channels", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 3, 3)}, Mode: nd.Full}, RandomArray(rng, nd.Uint8, 6, 5, 3))

	add("4d", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, true, 3, 2, 3, 2)}, Border: nd.Mirror}, RandomArray(rng, nd.Float32, 4, 5, 4, 6))
	add("4d/valid", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, true, 2, 2, 3, 2)}, Mode: nd.Valid, Convolve: true}, RandomArray(rng, nd.Int32, 4, 5, 4, 6))
	add("5d", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, true, 2, 3, 2, 3, 2)}, Border: nd.Wrap}, RandomArray(rng, nd.Float64, 3, 4, 5, 4, 3))
	add("5d/full-constant", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, true, 2, 2, 2, 2, 2)}, Border: nd.Constant, CVal: 4, Mode: nd.Full}, RandomArray(rng, nd.Uint8, 3, 3, 4, 3, 3))
	add("5d/factors", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 2, 3, 2, 3, 2)}, Border: nd.Reflect}, RandomArray(rng, nd.Float32, 3, 4, 5, 4, 3))

	special := RandomArray(rng, nd.Float32, 9, 9)
	sd := special.Data.([]float32)
	sd[10], sd[40], sd[70] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
	add("nan-inf/dense", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, 3, 3)}}, special)
	add("nan-inf/zero-taps", nd.Spec{Kernels: []nd.Kernel{{Shape: []int{3, 3}, Weights: []float64{0, 1, 0, 1, -4, 1, 0, 1, 0}}}, Out: nd.Float64}, special)
	add("nan-inf/to-uint8", nd.Spec{Kernels: []nd.Kernel{{Shape: []int{3}, Weights: []float64{0, 1, 0}}}, Out: nd.Uint8}, special)

	huge := RandomArray(rng, nd.Float64, 6, 6)
	for i, hd := 0, huge.Data.([]float64); i < len(hd); i++ {
		hd[i] *= 1e8
	}
	for _, out := range []nd.DType{nd.Uint8, nd.Uint16, nd.Int16, nd.Int32, nd.Float32} {
		add(fmt.Sprintf("saturate/->%v", out), nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, 2, 2)}, Out: out}, huge)
	}
	add("saturate/float32-overflow", nd.Spec{Kernels: []nd.Kernel{{Shape: []int{2}, Weights: []float64{1e300, 1e300}}}, Out: nd.Float32}, RandomArray(rng, nd.Float64, 7))

	add("empty/same", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, 3, 3)}}, RandomArray(rng, nd.Float32, 0, 5))
	add("single-value", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, 3, 3)}, Border: nd.Mirror}, RandomArray(rng, nd.Uint8, 1, 1))
	add("zero-kernel", nd.Spec{Kernels: []nd.Kernel{{Shape: []int{2, 2}, Weights: make([]float64, 4)}}, Border: nd.Constant, CVal: 9}, RandomArray(rng, nd.Float32, 4, 4))
	add("tiny-weights-dropped", nd.Spec{Kernels: []nd.Kernel{{Shape: []int{3}, Weights: []float64{1e-17, 1, -1e-20}}}}, special)
	add("wide/1d-5000", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, 11)}, Border: nd.Wrap}, RandomArray(rng, nd.Float32, 5000))
	add("wide/2d-3x4500", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, true, 3, 12)}, Border: nd.Reflect, Mode: nd.Full}, RandomArray(rng, nd.Uint16, 3, 4500))
	add("wide/2d-3x4500-factors", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 3, 12)}, Border: nd.Constant, CVal: 2}, RandomArray(rng, nd.Uint16, 3, 4500))
	add("tall/200x40", nd.Spec{Kernels: []nd.Kernel{RandomKernel(rng, false, 7, 7)}, Border: nd.Mirror}, RandomArray(rng, nd.Float32, 200, 40))
	return cases
}

// dtypePairTested keeps the dtype table to every pair of the original six
// types and, for the others, the pairs that exercise them: the type
// itself, and to and from uint8, float32 and float64 (each pair is a GPU
// specialisation to compile).
func dtypePairTested(in, out nd.DType) bool {
	original := func(d nd.DType) bool { return d <= nd.Float64 }
	core := func(d nd.DType) bool { return d == nd.Uint8 || d == nd.Float32 || d == nd.Float64 }
	return in == out || (original(in) && original(out)) || core(in) || core(out)
}

// OnGPU returns the cases the GPU kernels take: all but those with float16
// data or output (kernels.CheckDTypes), which run on the CPU.
func OnGPU(cases []Case) []Case {
	var out []Case
	for _, c := range cases {
		if c.Spec.In != nd.Float16 && c.Spec.Out != nd.Float16 {
			out = append(out, c)
		}
	}
	return out
}

// originChoices returns origins to try: 0 and, in same mode, both extremes.
func originChoices(k []int, m nd.Mode) [][]int {
	zero := make([]int, len(k))
	if m != nd.Same {
		return [][]int{zero}
	}
	lo, hi := make([]int, len(k)), make([]int, len(k))
	for i, n := range k {
		lo[i], hi[i] = -(n / 2), (n-1)/2
	}
	return [][]int{zero, lo, hi}
}

func outer(a, b []float64) []float64 {
	var w []float64
	for _, x := range a {
		for _, y := range b {
			w = append(w, x*y)
		}
	}
	return w
}

// Random returns n random cases from seed: random rank 1–4, shapes, kernel
// shapes (sometimes larger than the input), dtypes, borders, modes, origins,
// axes and banks.
func Random(seed uint64, n int) []Case {
	rng := rand.New(rand.NewPCG(seed, 7))
	var cases []Case
	for len(cases) < n {
		rank := 1 + rng.IntN(4)
		shape := make([]int, rank)
		for i := range shape {
			shape[i] = 1 + rng.IntN([]int{40, 14, 8, 5}[rank-1])
		}
		krank := 1 + rng.IntN(rank)
		kshape := make([]int, krank)
		for i := range kshape {
			kshape[i] = 1 + rng.IntN(6)
		}
		axes := rng.Perm(rank)[:krank]
		bank := 1
		if rng.IntN(4) == 0 {
			bank = 2 + rng.IntN(3)
		}
		var ks []nd.Kernel
		for range bank {
			if rng.IntN(3) == 0 {
				ks = append(ks, RandomFactors(rng, kshape...))
			} else {
				ks = append(ks, RandomKernel(rng, rng.IntN(2) == 0, kshape...))
			}
		}
		s := nd.Spec{
			Kernels:  ks,
			Axes:     axes,
			Border:   nd.Border(rng.IntN(5)),
			CVal:     rng.Float64()*10 - 5,
			Mode:     nd.Mode(rng.IntN(3)),
			Convolve: rng.IntN(2) == 0,
			Out:      nd.DTypes[rng.IntN(len(nd.DTypes))],
		}
		origin := make([]int, krank)
		for i, k := range kshape {
			origin[i] = rng.IntN(k) - k/2
		}
		s.Origin = origin
		in := RandomArray(rng, nd.DTypes[rng.IntN(len(nd.DTypes))], shape...)
		s.Shape, s.In = in.Shape, in.DType()
		if _, err := s.Normalize(); err != nil {
			continue // e.g. valid mode with a kernel larger than the input
		}
		cases = append(cases, Case{Name: fmt.Sprintf("random%d/%v%v/k%v", len(cases), in.DType(), shape, kshape), Spec: s, Input: in})
	}
	return cases
}

// RandomComplex returns n random cases of complex filtering from seed:
// complex data with real or complex kernels, real data of several types
// with complex kernels, complex cvals with complex data, every border and
// mode, origins, axes, banks and the output types scipy gives or one asked
// for.
func RandomComplex(seed uint64, n int) []Case {
	rng := rand.New(rand.NewPCG(seed, 11))
	inputs := []nd.DType{nd.Complex64, nd.Complex128, nd.Complex64, nd.Complex128, nd.Float32, nd.Float64, nd.Int16, nd.Uint8, nd.Int32}
	var cases []Case
	for len(cases) < n {
		rank := 1 + rng.IntN(3)
		shape := make([]int, rank)
		for i := range shape {
			shape[i] = 1 + rng.IntN([]int{30, 12, 6}[rank-1])
		}
		krank := 1 + rng.IntN(rank)
		kshape := make([]int, krank)
		for i := range kshape {
			kshape[i] = 1 + rng.IntN(5)
		}
		in := RandomArray(rng, inputs[rng.IntN(len(inputs))], shape...)
		bank := 1
		if rng.IntN(4) == 0 {
			bank = 2 + rng.IntN(2)
		}
		var ks []nd.Kernel
		for range bank {
			k := RandomKernel(rng, rng.IntN(2) == 0, kshape...)
			if !in.DType().IsComplex() || rng.IntN(3) > 0 {
				k.Imag = RandomKernel(rng, rng.IntN(2) == 0, kshape...).Weights
			}
			ks = append(ks, k)
		}
		if rng.IntN(5) == 0 {
			ks[0] = RandomFactors(rng, kshape...) // a real separable kernel
			if !in.DType().IsComplex() {
				ks[0] = nd.Kernel{Shape: ks[0].Shape, Weights: ks[0].Dense(), Imag: ks[0].Dense()}
			}
		}
		s := nd.Spec{
			Shape: in.Shape, In: in.DType(), Kernels: ks,
			Axes:     rng.Perm(rank)[:krank],
			Border:   nd.Border(rng.IntN(5)),
			CVal:     rng.Float64()*10 - 5,
			Mode:     nd.Mode(rng.IntN(3)),
			Convolve: rng.IntN(2) == 0,
		}
		if in.DType().IsComplex() {
			s.CValImag = rng.Float64()*10 - 5
		}
		if rng.IntN(4) == 0 {
			s.Out = nd.ComplexDTypes[rng.IntN(2)]
		}
		s.Origin = make([]int, krank)
		for i, k := range kshape {
			s.Origin[i] = rng.IntN(k) - k/2
		}
		if _, err := s.Normalize(); err != nil {
			continue // e.g. valid mode with a kernel larger than the input
		}
		cases = append(cases, Case{Name: fmt.Sprintf("complex%d/%v%v/k%v", len(cases), in.DType(), shape, kshape), Spec: s, Input: in})
	}
	return cases
}

// adder returns add, which appends to cases the case named prefix + name
// of spec (its shape and dtype the input's) on input in.
func adder(cases *[]Case, prefix string) func(name string, s nd.Spec, in nd.Array) {
	return func(name string, s nd.Spec, in nd.Array) {
		s.Shape, s.In = in.Shape, in.DType()
		*cases = append(*cases, Case{Name: prefix + name, Spec: s, Input: in})
	}
}

// Separable3D returns cases whose kernels are separable along three
// adjacent axes (the GPU's one-launch 3-D separable kernel): every border in
// same, valid and full modes with origins and convolution, banks, channels
// after the kernel axes, an outer axis before them, every accumulator and
// small and large integer types, zero taps, volumes smaller than the
// kernel along Z, and volumes long enough along Z for several segments.
// Shapes are odd, so that tiles are partial.
func Separable3D() []Case {
	rng := rand.New(rand.NewPCG(3, 3))
	var cases []Case
	add := adder(&cases, "sep3/")
	borders := []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant}
	for i, b := range borders {
		for _, m := range []nd.Mode{nd.Same, nd.Valid, nd.Full} {
			s := nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 3, 4, 5)}, Border: b, CVal: 2.5, Mode: m, Convolve: i%2 == 1}
			if m == nd.Same {
				s.Origin = []int{-1, 1, (i % 3) - 1}
			}
			add(fmt.Sprintf("%v/%v", b, m), s, RandomArray(rng, nd.Float32, 7, 9, 11))
		}
	}
	bank := []nd.Kernel{RandomFactors(rng, 3, 3, 3), RandomFactors(rng, 3, 3, 3)}
	add("bank2/uint8->float32", nd.Spec{Kernels: bank, Border: nd.Constant, CVal: 4, Out: nd.Float32}, RandomArray(rng, nd.Uint8, 6, 7, 8))
	add("channels", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 3, 3, 3)}, Border: nd.Reflect}, RandomArray(rng, nd.Float32, 5, 6, 7, 3))
	add("channels/constant", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 2, 3, 4)}, Border: nd.Constant, CVal: -1, Out: nd.Float64}, RandomArray(rng, nd.Uint16, 5, 6, 5, 2))
	add("outer-axis", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 3, 2, 3)}, Axes: []int{1, 2, 3}, Border: nd.Wrap}, RandomArray(rng, nd.Float32, 3, 5, 6, 7))
	add("uint8", nd.Spec{Kernels: []nd.Kernel{{Shape: []int{3, 3, 3}, Factors: [][]float64{{1, 2, 1}, {1, 2, 1}, {1, 2, 1}}}}, Border: nd.Reflect}, RandomArray(rng, nd.Uint8, 6, 9, 10))
	add("uint16->int16", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 3, 5, 3)}, Border: nd.Mirror, Out: nd.Int16}, RandomArray(rng, nd.Uint16, 5, 8, 9))
	add("float64", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 5, 3, 4)}, Border: nd.Constant, CVal: 1.5}, RandomArray(rng, nd.Float64, 8, 7, 9))
	add("float64/mirror", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 4, 4, 4)}, Border: nd.Mirror, Mode: nd.Valid}, RandomArray(rng, nd.Float64, 6, 7, 9))
	add("zero-taps", nd.Spec{Kernels: []nd.Kernel{{Shape: []int{3, 3, 3}, Factors: [][]float64{{1, 0, -1}, {0.5, 0, 0.25}, {1, 2, 0}}}}, Border: nd.Constant, CVal: 3}, RandomArray(rng, nd.Float32, 6, 7, 8))
	for _, b := range []nd.Border{nd.Reflect, nd.Wrap, nd.Constant} {
		add(fmt.Sprintf("kz-over-z/%v", b), nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 5, 3, 3)}, Border: b, CVal: -2}, RandomArray(rng, nd.Float32, 2, 6, 7))
	}
	add("long-z/reflect", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 7, 7, 7)}, Border: nd.Reflect}, RandomArray(rng, nd.Float32, 23, 13, 37))
	add("long-z/constant", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 4, 5, 3)}, Border: nd.Constant, CVal: 1, Mode: nd.Full}, RandomArray(rng, nd.Uint8, 19, 11, 21))
	return cases
}

// Separable2D returns cases whose kernels are separable along two adjacent
// axes (the GPU's fused X and Y passes, in tiles or strips): every border
// in same, valid and full modes with origins and convolution, interleaved
// channels (RGB, RGBA) after the kernel axes, planes before them, banks,
// every accumulator and small integer types, zero taps, images smaller
// than the kernel, kernels longer than small tiles, and S003's 31 × 31
// taps on images large enough for whole default tiles inside them. Shapes
// are odd, so that tiles are partial.
func Separable2D() []Case {
	rng := rand.New(rand.NewPCG(2, 2))
	var cases []Case
	add := adder(&cases, "sep2/")
	borders := []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant}
	for i, b := range borders {
		for _, m := range []nd.Mode{nd.Same, nd.Valid, nd.Full} {
			s := nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 4, 5)}, Border: b, CVal: 2.5, Mode: m, Convolve: i%2 == 1}
			if m == nd.Same {
				s.Origin = []int{(i % 3) - 1, 1 - (i % 3)}
			}
			add(fmt.Sprintf("%v/%v", b, m), s, RandomArray(rng, nd.Float32, 13, 37))
		}
	}
	add("rgba/uint8", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 5, 5)}, Border: nd.Constant, CVal: 7}, RandomArray(rng, nd.Uint8, 11, 19, 4))
	add("rgb/uint16->float32", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 3, 4)}, Border: nd.Reflect, Out: nd.Float32}, RandomArray(rng, nd.Uint16, 9, 17, 3))
	add("rgba/float64/mirror", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 3, 3)}, Border: nd.Mirror, Mode: nd.Full}, RandomArray(rng, nd.Float64, 7, 9, 4))
	add("float64/constant", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 5, 3)}, Border: nd.Constant, CVal: 1.5}, RandomArray(rng, nd.Float64, 12, 21))
	bank := []nd.Kernel{RandomFactors(rng, 3, 3), RandomFactors(rng, 3, 3)}
	add("bank2/uint8->float32", nd.Spec{Kernels: bank, Border: nd.Constant, CVal: 4, Out: nd.Float32}, RandomArray(rng, nd.Uint8, 10, 23))
	add("zero-taps", nd.Spec{Kernels: []nd.Kernel{{Shape: []int{3, 4}, Factors: [][]float64{{1, 0, -1}, {0.5, 0, 0.25, 0}}}}, Border: nd.Constant, CVal: 3}, RandomArray(rng, nd.Float32, 10, 15))
	add("uint8->int16", nd.Spec{Kernels: []nd.Kernel{{Shape: []int{3, 3}, Factors: [][]float64{{-1, 0, 1}, {1, 2, 1}}}}, Border: nd.Nearest, Out: nd.Int16}, RandomArray(rng, nd.Uint8, 9, 14))
	for _, b := range []nd.Border{nd.Reflect, nd.Constant} {
		add(fmt.Sprintf("kernel-over-image/%v", b), nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 5, 7)}, Border: b, CVal: -2}, RandomArray(rng, nd.Float32, 3, 5))
	}
	add("planes/wrap", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 3, 2)}, Axes: []int{1, 2}, Border: nd.Wrap}, RandomArray(rng, nd.Float32, 3, 9, 14))
	add("long/nearest", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 15, 15)}, Border: nd.Nearest}, RandomArray(rng, nd.Float32, 20, 45))
	add("s003/rgba/uint8/constant", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 31, 31)}, Border: nd.Constant, CVal: 9}, RandomArray(rng, nd.Uint8, 97, 70, 4))
	add("s003/float32/constant", nd.Spec{Kernels: []nd.Kernel{RandomFactors(rng, 31, 31)}, Border: nd.Constant}, RandomArray(rng, nd.Float32, 61, 90))
	return cases
}

// Banks returns cases with banks large enough to split into groups of
// kernels (tiled.cl's bank groups): 8 and 12 kernels with zero taps among
// dense ones, uint8 volumes into float32 (S000's form) in every mode and
// border, an image of RGB channels and a float64 image. Shapes are odd, so
// that tiles are partial.
func Banks() []Case {
	rng := rand.New(rand.NewPCG(4, 4))
	var cases []Case
	add := adder(&cases, "banks/")
	bank := func(n int, shape ...int) []nd.Kernel {
		ks := make([]nd.Kernel, n)
		for i := range ks {
			ks[i] = RandomKernel(rng, i%3 == 1, shape...)
		}
		return ks
	}
	borders := []nd.Border{nd.Constant, nd.Reflect, nd.Wrap}
	for i, m := range []nd.Mode{nd.Same, nd.Valid, nd.Full} {
		add(fmt.Sprintf("bank8/3d/uint8->float32/%v/%v", borders[i], m),
			nd.Spec{Kernels: bank(8, 3, 3, 3), Mode: m, Border: borders[i], CVal: 5, Out: nd.Float32}, RandomArray(rng, nd.Uint8, 7, 9, 11))
	}
	add("bank12/2d/float32/mirror", nd.Spec{Kernels: bank(12, 3, 4), Border: nd.Mirror}, RandomArray(rng, nd.Float32, 13, 37))
	add("bank8/rgb/uint16->float32/nearest", nd.Spec{Kernels: bank(8, 3, 3), Border: nd.Nearest, Out: nd.Float32}, RandomArray(rng, nd.Uint16, 9, 17, 3))
	add("bank4/2d/float64/constant", nd.Spec{Kernels: bank(4, 5, 3), Border: nd.Constant, CVal: -1.5, Mode: nd.Valid}, RandomArray(rng, nd.Float64, 12, 21))
	// Valid outputs several tiles wide and tall (S000's shape in small):
	// the last tiles move back inside the input, overlapping the ones
	// before them.
	add("bank8/3d/uint8->float32/valid-tiles", nd.Spec{Kernels: bank(8, 3, 3, 3), Mode: nd.Valid, Out: nd.Float32}, RandomArray(rng, nd.Uint8, 6, 23, 37))
	add("bank4/2d/float32/valid-tiles", nd.Spec{Kernels: bank(4, 3, 5), Mode: nd.Valid, Border: nd.Wrap}, RandomArray(rng, nd.Float32, 21, 45))
	// Rows a multiple of 4 long, staged by 4-vectors: a moved-back last
	// tile starts between two (198 outputs a row: at 70 with tiles of 128,
	// 134 with tiles of 64), read from the vector before it.
	add("bank4/2d/uint8->float32/valid-tiles-vectors", nd.Spec{Kernels: bank(4, 5, 7), Mode: nd.Valid, Out: nd.Float32}, RandomArray(rng, nd.Uint8, 14, 204))
	add("bank1/2d/float32/valid-tiles-vectors", nd.Spec{Kernels: bank(1, 3, 7), Mode: nd.Valid}, RandomArray(rng, nd.Float32, 11, 204))
	// S000's kernels in small: a bank of 8 7³ kernels, valid, on a volume
	// whose 134 outputs a row take a moved-back tile of 128 — the GPU's
	// untuned decomposition with the weights in local memory.
	add("bank8/3d/uint8->float32/valid-7x7x7", nd.Spec{Kernels: bank(8, 7, 7, 7), Mode: nd.Valid, Out: nd.Float32}, RandomArray(rng, nd.Uint8, 8, 10, 140))

	// Taps zero in every kernel (the corners), nonzero in every kernel
	// (the centre) and zero in some (the rest), over NaN and ±Inf: a bank
	// kernel may leave the first out, add the second unconditionally and
	// must test the third as it runs.
	mixed := make([]nd.Kernel, 6)
	for k := range mixed {
		w := make([]float64, 9)
		for i := range w {
			switch {
			case i == 0 || i == 8:
			case i == 4:
				w[i] = float64(k + 1)
			case (i+k)%3 != 0:
				w[i] = rng.Float64()*2 - 1
			}
		}
		mixed[k] = nd.Kernel{Shape: []int{3, 3}, Weights: w}
	}
	special := RandomArray(rng, nd.Float32, 11, 13)
	sd := special.Data.([]float32)
	sd[0], sd[50], sd[142] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
	add("bank6/2d/float32/zero-taps-nan-inf", nd.Spec{Kernels: mixed, Border: nd.Reflect}, special)
	return cases
}
