package ndconv_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/opencl"
)

// moveBankAxis is numpy's moveaxis(out, -1, 0) of an interleaved bank
// output, written out as the definition (not nd.ToPlanar): the planar
// output Options.BankLayout Planar must give, bit for bit.
func moveBankAxis(inter ndconv.Array) ndconv.Array {
	k := inter.Shape[len(inter.Shape)-1]
	out, _ := nd.New(inter.DType(), nd.PlanarShape(inter.Shape)...)
	size := inter.DType().Size()
	src, dst := inter.Bytes(), out.Bytes()
	n := len(src) / size / max(k, 1)
	for v := range n {
		for i := range k {
			copy(dst[(i*n+v)*size:][:size], src[(v*k+i)*size:][:size])
		}
	}
	return out
}

// samePlanar fails unless got is want (interleaved) with its bank axis
// moved to the front: the same shape, dtype and bytes.
func samePlanar(t *testing.T, what string, got, inter ndconv.Array) {
	t.Helper()
	want := moveBankAxis(inter)
	if got.DType() != want.DType() || !slices.Equal(got.Shape, want.Shape) {
		t.Fatalf("%s: planar %v %v, want %v %v", what, got.DType(), got.Shape, want.DType(), want.Shape)
	}
	if !slices.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("%s: planar output is not the interleaved one with its bank axis moved first", what)
	}
}

// planarCase is a bank problem on the CPU: its shape, kernel shape and
// axes (nil: the first), dtypes and mode.
type planarCase struct {
	name    string
	shape   []int
	kshape  []int
	in, out nd.DType
	mode    ndconv.Mode
}

// bankKernels are bank random kernels of shape kshape for method m: 1-D
// factors for the separable method, dense weights otherwise.
func bankKernels(rng *rand.Rand, m ndconv.Method, bank int, kshape []int) []ndconv.Kernel {
	kernels := make([]ndconv.Kernel, bank)
	for i := range kernels {
		if m == ndconv.Separable {
			kernels[i] = enginetest.RandomFactors(rng, kshape...)
		} else {
			kernels[i] = enginetest.RandomKernel(rng, false, kshape...)
		}
	}
	return kernels
}

// TestPlanarEqualsInterleaved: for every method the CPU offers (direct,
// separable, FFT), 1-D, 2-D, 3-D and H×W×3 inputs (a 2-D kernel per
// channel), float32→float32, uint8→uint8 and float32→int16, banks of 2, 5
// and 17, the planar output is the interleaved one with its bank axis
// moved first, bit for bit, through NewPlan/Execute (twice, the plan
// reused, into a new and into a given output), Plan.Shape and the
// one-shot Correlate and Convolve.
func TestPlanarEqualsInterleaved(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 3))
	types := [][2]nd.DType{{nd.Float32, nd.Float32}, {nd.Uint8, nd.Uint8}, {nd.Float32, nd.Int16}}
	var cases []planarCase
	for _, ty := range types {
		cases = append(cases,
			planarCase{"1-D", []int{97}, []int{7}, ty[0], ty[1], ndconv.Same},
			planarCase{"2-D", []int{33, 41}, []int{5, 5}, ty[0], ty[1], ndconv.Same},
			planarCase{"2-D full", []int{19, 12}, []int{3, 4}, ty[0], ty[1], ndconv.Full},
			planarCase{"3-D", []int{9, 10, 11}, []int{3, 3, 3}, ty[0], ty[1], ndconv.Same},
			planarCase{"H×W×3", []int{20, 23, 3}, []int{5, 5}, ty[0], ty[1], ndconv.Valid})
	}
	ran := map[ndconv.Method]int{}
	for _, c := range cases {
		src := enginetest.RandomArray(rng, c.in, c.shape...)
		for _, bank := range []int{2, 5, 17} {
			for _, m := range []ndconv.Method{ndconv.Direct, ndconv.Separable, ndconv.FFT} {
				kernels := bankKernels(rng, m, bank, c.kshape)
				what := fmt.Sprintf("%s %v→%v %v bank %d %v", c.name, c.in, c.out, c.shape, bank, m)
				opt := ndconv.Options{Device: "cpu", Method: m, DType: c.out, Mode: c.mode}
				ip, err := ndconv.NewPlan(ndconv.Correlation, c.shape, c.in, opt, kernels...)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				inter := mustArray(t)(ip.Execute(ctx, ndconv.Array{}, src))
				ip.Close()
				opt.BankLayout = ndconv.Planar
				pp, err := ndconv.NewPlan(ndconv.Correlation, c.shape, c.in, opt, kernels...)
				if err != nil {
					t.Fatalf("%s planar: %v", what, err)
				}
				if want := nd.PlanarShape(inter.Shape); !slices.Equal(pp.Shape(), want) {
					t.Fatalf("%s: planar Shape() %v, want %v", what, pp.Shape(), want)
				}
				got := mustArray(t)(pp.Execute(ctx, ndconv.Array{}, src))
				samePlanar(t, what, got, inter)
				// The plan again, into the output of the first call
				// (scribbled over first) and into a fresh one.
				clear(got.Bytes())
				again := mustArray(t)(pp.Execute(ctx, got, src))
				samePlanar(t, what+", again into the first output", again, inter)
				samePlanar(t, what+", a third time", mustArray(t)(pp.Execute(ctx, ndconv.Array{}, src)), inter)
				pp.Close()
				ran[m]++
				if bank == 5 && m == ndconv.Direct {
					one := mustArray(t)(ndconv.Correlate(ctx, src, opt, kernels...))
					samePlanar(t, what+", Correlate", one, inter)
					opt.BankLayout = ndconv.Interleaved
					conv := mustArray(t)(ndconv.Convolve(ctx, src, opt, kernels...))
					opt.BankLayout = ndconv.Planar
					samePlanar(t, what+", Convolve", mustArray(t)(ndconv.Convolve(ctx, src, opt, kernels...)), conv)
				}
			}
		}
	}
	for _, m := range []ndconv.Method{ndconv.Direct, ndconv.Separable, ndconv.FFT} {
		if ran[m] != len(cases)*3 {
			t.Errorf("%v ran %d cases of %d", m, ran[m], len(cases)*3)
		}
	}
}

// TestPlanarOneKernel: one kernel has no bank axis, so the planar layout
// changes nothing, and the paths that refuse a planar bank take it.
func TestPlanarOneKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 4))
	src := enginetest.RandomArray(rng, nd.Float32, 30, 20)
	k := enginetest.RandomKernel(rng, false, 3, 3)
	want := mustArray(t)(ndconv.Correlate(ctx, src, ndconv.Options{Device: "cpu"}, k))
	p, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, nd.Float32, ndconv.Options{Device: "cpu", BankLayout: ndconv.Planar}, k)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got := mustArray(t)(p.Execute(ctx, ndconv.Array{}, src))
	if !slices.Equal(got.Shape, want.Shape) || !slices.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("one kernel, planar: %v, want the interleaved %v, the same bits", got.Shape, want.Shape)
	}
	if err := p.ExecuteChunks(ctx, src, 1<<10, func(int, ndconv.Array) error { return nil }); err != nil {
		t.Errorf("one kernel, planar, ExecuteChunks: %v", err)
	}
}

// TestPlanarInPlace: an output sharing memory with the input (views of
// one buffer, the output before, over or after the input) gives the
// out-of-place planar result, as an interleaved output does.
func TestPlanarInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 5))
	const h, w, bank = 24, 20, 3
	n := h * w
	kernels := []ndconv.Kernel{enginetest.RandomKernel(rng, false, 5, 5), enginetest.RandomKernel(rng, false, 5, 5), enginetest.RandomKernel(rng, false, 5, 5)}
	input := enginetest.RandomArray(rng, nd.Float32, h, w).Data.([]float32)
	for _, m := range []ndconv.Method{ndconv.Direct, ndconv.FFT} {
		p, err := ndconv.NewPlan(ndconv.Correlation, []int{h, w}, ndconv.Float32, ndconv.Options{Device: "cpu", Method: m, BankLayout: ndconv.Planar}, kernels...)
		if err != nil {
			t.Fatal(err)
		}
		want := mustArray(t)(p.Execute(ctx, ndconv.Array{}, ndconv.Array{Shape: []int{h, w}, Data: slices.Clone(input)})).Data.([]float32)
		for _, at := range []int{0, 1, n, bank*n - n, bank * n} {
			buf := make([]float32, bank*n+n)
			copy(buf[at:], input)
			src := ndconv.Array{Shape: []int{h, w}, Data: buf[at : at+n]}
			dst := ndconv.Array{Shape: []int{bank, h, w}, Data: buf[:bank*n]}
			got := mustArray(t)(p.Execute(ctx, dst, src)).Data.([]float32)
			if !slices.Equal(got, want) {
				t.Errorf("%v, input at element %d of the planar output: differs from out of place", m, at)
			}
		}
		p.Close()
	}
}

// TestPlanarEmpty: zero-length axes give empty planar outputs of the
// planar shape, on every method.
func TestPlanarEmpty(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 6))
	for _, shape := range [][]int{{0, 7}, {5, 0}, {0, 0, 3}} {
		for _, m := range []ndconv.Method{ndconv.Auto, ndconv.Direct, ndconv.FFT} {
			kernels := []ndconv.Kernel{enginetest.RandomKernel(rng, false, 3, 3), enginetest.RandomKernel(rng, false, 3, 3)}
			src, err := nd.New(nd.Float32, shape...)
			if err != nil {
				t.Fatal(err)
			}
			out, err := ndconv.Correlate(ctx, src, ndconv.Options{Device: "cpu", Method: m, BankLayout: ndconv.Planar}, kernels...)
			if err != nil {
				t.Fatalf("%v %v: %v", shape, m, err)
			}
			if want := append([]int{2}, shape...); !slices.Equal(out.Shape, want) || out.Len() != 0 {
				t.Errorf("%v %v: planar %v with %d elements, want %v empty", shape, m, out.Shape, out.Len(), want)
			}
		}
	}
}

// TestPlanarRefused: the paths that do not offer a planar bank refuse it
// with an ArgumentError naming the layout and the path: ExecuteChunks
// (row streaming; a bank, and filters of several terms), ExecuteBlocks
// (a bank plan, and a filter plan's); an unknown layout is an
// UnsupportedError; none writes an output.
func TestPlanarRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 7))
	src := enginetest.RandomArray(rng, nd.Float32, 16, 12)
	kernels := []ndconv.Kernel{enginetest.RandomKernel(rng, false, 3, 3), enginetest.RandomKernel(rng, false, 3, 3)}
	opt := ndconv.Options{Device: "cpu", BankLayout: ndconv.Planar}
	p, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, nd.Float32, opt, kernels...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	called := false
	sinkFn := func(int, ndconv.Array) error { called = true; return nil }
	out, _ := nd.New(nd.Float32, p.Shape()...)
	fp, err := ndconv.NewFilterPlan(ndconv.Correlation, src.Shape, nd.Float32, opt,
		ndconv.KernelFilter("a", kernels[0]), ndconv.KernelFilter("b", kernels[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer fp.Close()
	gm, err := ndconv.NewFilterPlan(ndconv.Correlation, src.Shape, nd.Float32, opt, gradientFilters(t, 2)...)
	if err != nil {
		t.Fatal(err)
	}
	defer gm.Close()
	calls := []struct {
		path string
		call func() error
	}{
		{"ExecuteChunks", func() error { return p.ExecuteChunks(ctx, src, 1<<20, sinkFn) }},
		{"ExecuteChunks", func() error { return fp.ExecuteChunks(ctx, src, 1<<20, sinkFn) }},
		{"ExecuteChunks", func() error { return gm.ExecuteChunks(ctx, src, 1<<20, sinkFn) }},
	}
	for i, c := range calls {
		var ae *nd.ArgumentError
		err := c.call()
		if !errors.As(err, &ae) || ae.Arg != "bank layout" || !strings.Contains(err.Error(), "planar") || !strings.Contains(err.Error(), c.path) {
			t.Errorf("call %d (%s) with a planar bank: %v, want an ArgumentError naming the layout and %s", i, c.path, err, c.path)
		}
	}
	if called || slices.ContainsFunc(out.Data.([]float32), func(v float32) bool { return v != 0 }) {
		t.Errorf("a refused call wrote output")
	}
	var ue *nd.UnsupportedError
	if _, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, nd.Float32, ndconv.Options{BankLayout: 7}, kernels...); !errors.As(err, &ue) {
		t.Errorf("BankLayout(7): %v, want an UnsupportedError", err)
	}
	if _, err := ndconv.NewFilterPlan(ndconv.Correlation, src.Shape, nd.Float32, ndconv.Options{BankLayout: 7}, gradientFilters(t, 2)...); !errors.As(err, &ue) {
		t.Errorf("filters, BankLayout(7): %v, want an UnsupportedError", err)
	}
}

// gradientFilters are n filters of several terms (gradient magnitudes
// of gaussians of different sigmas), which a FilterPlan runs term by term.
func gradientFilters(t *testing.T, n int) []filters.Filter {
	t.Helper()
	var named []filters.Named
	for i := range n {
		f, err := filters.Parse(fmt.Sprintf("gradient-magnitude:sigma=%d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		named = append(named, f)
	}
	fs, err := ndconv.BuildFilters(2, nil, named...)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestPlanarFilters: a FilterPlan's planar output is its interleaved one
// with the filter axis moved first — single-term filters as one bank, and
// filters of several terms, combined plane by plane.
func TestPlanarFilters(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 8))
	src := enginetest.RandomArray(rng, nd.Float32, 28, 31)
	for name, fs := range map[string][]filters.Filter{
		"bank":  {ndconv.KernelFilter("a", enginetest.RandomKernel(rng, false, 3, 3)), ndconv.KernelFilter("b", enginetest.RandomKernel(rng, false, 3, 3)), ndconv.KernelFilter("c", enginetest.RandomKernel(rng, false, 3, 3))},
		"terms": gradientFilters(t, 3),
	} {
		for _, dt := range []nd.DType{nd.Float32, nd.Uint16} {
			opt := ndconv.Options{Device: "cpu", DType: dt}
			inter := mustArray(t)(ndconv.ApplyFilters(ctx, ndconv.Correlation, src, opt, fs...))
			opt.BankLayout = ndconv.Planar
			got := mustArray(t)(ndconv.ApplyFilters(ctx, ndconv.Correlation, src, opt, fs...))
			samePlanar(t, name+" "+dt.String(), got, inter)
		}
	}
}

// TestPlanarGPUHost: on every GPU backend here, a planar bank from host
// arrays (the GPU engine writes interleaved, the plan transposes) is the
// CPU's interleaved output with its bank axis moved first, bit for bit,
// for the exact methods (direct, separable), and the device's own
// interleaved output moved for the FFT (its bank groups store that
// layout); it skips without a GPU.
func TestPlanarGPUHost(t *testing.T) {
	devices := gpuDevices(t)
	rng := rand.New(rand.NewPCG(38, 9))
	for _, dev := range devices {
		// Two banks a case (each specialisation is a kernel build, ~0.7 s
		// on PoCL), 2, 5 and 17 each twice.
		banks := [][]int{{2, 17}, {5, 17}, {2, 5}}
		for ci, c := range []planarCase{
			{"2-D", []int{67, 45}, []int{5, 5}, nd.Float32, nd.Float32, ndconv.Same},
			{"3-D", []int{12, 10, 9}, []int{3, 3, 3}, nd.Float32, nd.Int16, ndconv.Same},
			{"H×W×3 uint8", []int{21, 18, 3}, []int{5, 5}, nd.Uint8, nd.Uint8, ndconv.Same},
		} {
			src := enginetest.RandomArray(rng, c.in, c.shape...)
			for _, bank := range banks[ci] {
				for _, m := range []ndconv.Method{ndconv.Direct, ndconv.Separable, ndconv.FFT} {
					kernels := bankKernels(rng, m, bank, c.kshape)
					what := fmt.Sprintf("%s %s %v→%v bank %d %v", dev, c.name, c.in, c.out, bank, m)
					// The exact methods' interleaved output is the CPU's
					// bits; the FFT's, the device's own (its bank groups
					// and transforms, not the CPU's).
					ref := "cpu"
					if m == ndconv.FFT {
						ref = dev
					}
					opt := ndconv.Options{Device: ref, Method: m, DType: c.out, Mode: c.mode}
					inter := mustArray(t)(ndconv.Correlate(ctx, src, opt, kernels...))
					opt.Device, opt.BankLayout = dev, ndconv.Planar
					p, err := ndconv.NewPlan(ndconv.Correlation, c.shape, c.in, opt, kernels...)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					samePlanar(t, what, mustArray(t)(p.Execute(ctx, ndconv.Array{}, src)), inter)
					samePlanar(t, what+", again", mustArray(t)(p.Execute(ctx, ndconv.Array{}, src)), inter)
					p.Close()
				}
			}
		}
	}
}

// TestPlanarConcurrent: goroutines sharing one transposing plan (the FFT
// method) each get the planar output: the engine takes turns, the
// transpose does not, and each call has a scratch output of its own.
func TestPlanarConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 10))
	src := enginetest.RandomArray(rng, nd.Float32, 40, 30)
	kernels := bankKernels(rng, ndconv.FFT, 3, []int{9, 9})
	opt := ndconv.Options{Device: "cpu", Method: ndconv.FFT}
	inter := mustArray(t)(ndconv.Correlate(ctx, src, opt, kernels...))
	opt.BankLayout = ndconv.Planar
	p, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, nd.Float32, opt, kernels...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	samePlanar(t, "the first call", mustArray(t)(p.Execute(ctx, ndconv.Array{}, src)), inter) // the plan keeps its scratch
	outs := make([]ndconv.Array, 6)
	errs := make([]error, len(outs))
	done := make(chan int)
	for i := range outs {
		go func() {
			outs[i], errs[i] = p.Execute(ctx, ndconv.Array{}, src)
			done <- i
		}()
	}
	for range outs {
		i := <-done
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		samePlanar(t, fmt.Sprintf("call %d", i), outs[i], inter)
	}
}

// TestPlanarDeviceArrays: a planar bank on device arrays (Device.NewPlan,
// ExecuteDevice) is the same device's interleaved output moved, bit for
// bit — written natively by the CPU's direct and FFT methods, moved on
// the device by kernels/layout.cl for every other engine — into a given
// output and a new one, twice (the plan keeps its interleaved array);
// on the CPU and every GPU backend here.
func TestPlanarDeviceArrays(t *testing.T) {
	devices := []string{"cpu"}
	if opencl.Available() == nil {
		devices = append(devices, "opencl")
	}
	if cuda.Available() == nil {
		devices = append(devices, "cuda")
	}
	t.Logf("devices %v", devices)
	rng := rand.New(rand.NewPCG(38, 11))
	for _, name := range devices {
		dev, err := ndconv.OpenDevice(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []planarCase{
			{"2-D", []int{37, 29}, []int{3, 5}, nd.Float32, nd.Float32, ndconv.Same},
			{"H×W×3 uint8", []int{21, 18, 3}, []int{3, 3}, nd.Uint8, nd.Uint8, ndconv.Same},
			{"3-D to int16", []int{9, 10, 11}, []int{3, 3, 3}, nd.Float32, nd.Int16, ndconv.Same},
		} {
			src := enginetest.RandomArray(rng, c.in, c.shape...)
			din, err := dev.Upload(src)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []ndconv.Method{ndconv.Direct, ndconv.Separable, ndconv.FFT} {
				kernels := bankKernels(rng, m, 5, c.kshape)
				what := fmt.Sprintf("%s %s %v", name, c.name, m)
				run := func(layout ndconv.BankLayout, given bool) ndconv.Array {
					t.Helper()
					opt := ndconv.Options{Method: m, DType: c.out, Mode: c.mode, BankLayout: layout}
					p, err := dev.NewPlan(ndconv.Correlation, c.shape, c.in, opt, kernels...)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					defer p.Close()
					var dst *ndconv.DeviceArray
					if given {
						if dst, err = dev.Alloc(c.out, p.Shape()...); err != nil {
							t.Fatal(err)
						}
					}
					var out *ndconv.DeviceArray
					for range 2 {
						if out, err = p.ExecuteDevice(ctx, dst, din); err != nil {
							t.Fatalf("%s, %v: %v", what, layout, err)
						}
					}
					a, err := out.Download()
					if err != nil {
						t.Fatal(err)
					}
					return a
				}
				inter := run(ndconv.Interleaved, true)
				samePlanar(t, what+", a given output", run(ndconv.Planar, true), inter)
				samePlanar(t, what+", a new output", run(ndconv.Planar, false), inter)
			}
		}
		dev.Close()
	}
}

// TestPlanarBlocks: ExecuteBlocks gives a planar bank's sink (K, …box…)
// boxes, which put together are Execute's planar output bit for bit —
// for Plan and FilterPlan, images with and without channels, banks of 2
// and 5, every border, blocks of several shapes (edge blocks included) —
// and a sink handed a box that is not the bank's is an ArgumentError.
func TestPlanarBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 1))
	for _, c := range []struct {
		shape []int
		axes  []int // the kernels' axes; nil: every axis
		bank  int
		block []int
	}{
		{[]int{17, 23}, nil, 2, []int{5, 7}},
		{[]int{17, 23}, nil, 5, []int{16, 8}},
		{[]int{12, 9, 3}, []int{0, 1}, 2, []int{4, 4, 3}}, // three channels
		{[]int{9, 10, 11}, nil, 5, []int{3, 4, 5}},
	} {
		for _, border := range []ndconv.Border{ndconv.Constant, ndconv.Reflect, ndconv.Wrap} {
			src := enginetest.RandomArray(rng, nd.Float32, c.shape...)
			rank := len(c.shape)
			if c.axes != nil {
				rank = len(c.axes)
			}
			var ks []ndconv.Kernel
			var fs []filters.Filter
			for k := range c.bank {
				kern := enginetest.RandomKernel(rng, false, square(3, rank)...)
				ks = append(ks, kern)
				fs = append(fs, ndconv.KernelFilter(fmt.Sprint("k", k), kern))
			}
			opt := ndconv.Options{Device: "cpu", Border: border, Axes: c.axes, BankLayout: ndconv.Planar}
			p, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, nd.Float32, opt, ks...)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			fp, err := ndconv.NewFilterPlan(ndconv.Correlation, src.Shape, nd.Float32, opt, fs...)
			if err != nil {
				t.Fatal(err)
			}
			defer fp.Close()
			want := mustArray(t)(p.Execute(ctx, ndconv.Array{}, src))
			if inter := moveBankAxis(mustArray(t)(interleaved(t, src, opt, ks).Execute(ctx, ndconv.Array{}, src))); gputest.SameBits(want, inter) != "" {
				t.Fatalf("%v: Execute's planar output is not the interleaved one's bank axis moved first", c.shape)
			}
			name := fmt.Sprintf("%v bank %d %v blocks %v", c.shape, c.bank, border, c.block)
			for _, run := range []func(ndconv.BlockSink) error{
				func(s ndconv.BlockSink) error {
					return p.ExecuteBlocks(ctx, ndconv.ArraySource{Array: src}, s, ndconv.BlockOptions{Shape: c.block})
				},
				func(s ndconv.BlockSink) error {
					return fp.ExecuteBlocks(ctx, ndconv.ArraySource{Array: src}, s, ndconv.BlockOptions{Shape: c.block})
				},
			} {
				got, _ := nd.New(nd.Float32, p.Shape()...)
				if err := run(ndconv.ArraySink{Array: got}); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if d := gputest.SameBits(got, want); d != "" {
					t.Errorf("%s: the blocks differ from Execute's planar output: %s", name, d)
				}
			}
		}
	}
	// A sink's region must be a box of the interleaved output with its
	// bank last; anything else is refused, not written.
	var ae *nd.ArgumentError
	if err := ndconv.PlanarSinkForTest(2).WriteRegion([]int{0, 0}, must(nd.New(nd.Float32, 3, 3))); !errors.As(err, &ae) {
		t.Errorf("a box without the bank's 2 kernels last: %v, want an ArgumentError", err)
	}
}

func square(k, rank int) []int {
	s := make([]int, rank)
	for i := range s {
		s[i] = k
	}
	return s
}

// interleaved is the interleaved plan of ks with opt otherwise, closed
// with the test.
func interleaved(t *testing.T, src ndconv.Array, opt ndconv.Options, ks []ndconv.Kernel) *ndconv.Plan {
	t.Helper()
	opt.BankLayout = ndconv.Interleaved
	p, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, nd.Float32, opt, ks...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestPlanarBlocksGPU: on every GPU backend here, ExecuteBlocks of a
// planar bank (the engine writes each block interleaved, the sink moves
// its bank axis) puts together the CPU's planar Execute bit for bit —
// the exact family's bits are the same on every device. One case (the
// CPU's TestPlanarBlocks covers the shapes, borders and edge blocks):
// each kernel build costs seconds on a cold PoCL cache. It skips without
// a GPU.
func TestPlanarBlocksGPU(t *testing.T) {
	devices := gpuDevices(t)
	rng := rand.New(rand.NewPCG(40, 1))
	for _, c := range []struct {
		shape  []int
		bank   int
		block  []int
		border ndconv.Border
	}{
		{[]int{32, 24}, 2, []int{16, 8}, ndconv.Reflect},
	} {
		src := enginetest.RandomArray(rng, nd.Float32, c.shape...)
		var ks []ndconv.Kernel
		for range c.bank {
			ks = append(ks, enginetest.RandomKernel(rng, false, square(3, len(c.shape))...))
		}
		opt := ndconv.Options{Device: "cpu", Method: ndconv.Direct, Border: c.border, BankLayout: ndconv.Planar}
		want := mustArray(t)(ndconv.Correlate(ctx, src, opt, ks...))
		for _, dev := range devices {
			opt.Device = dev
			p, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, nd.Float32, opt, ks...)
			if err != nil {
				t.Fatalf("%s: %v", dev, err)
			}
			got, _ := nd.New(nd.Float32, p.Shape()...)
			err = p.ExecuteBlocks(ctx, ndconv.ArraySource{Array: src}, ndconv.ArraySink{Array: got}, ndconv.BlockOptions{Shape: c.block})
			p.Close()
			if err != nil {
				t.Fatalf("%s %v bank %d: %v", dev, c.shape, c.bank, err)
			}
			if d := gputest.SameBits(got, want); d != "" {
				t.Errorf("%s %v bank %d %v blocks %v: not the CPU's planar output: %s", dev, c.shape, c.bank, c.border, c.block, d)
			}
		}
	}
	t.Logf("on %v", devices)
}
