package winograd_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/winograd"
	"github.com/ndconv/ndconv/nd"
)

// run executes c by the Winograd CPU engine with tile m.
func run(t *testing.T, c enginetest.Case, m int) (nd.Array, *winograd.CPU) {
	t.Helper()
	p, err := c.Spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	e, err := winograd.NewCPU(p, winograd.Options{Tile: m, Workers: 2, Direct: cpu.NewDirect(p, cpu.Options{Workers: 1})})
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	got, err := nd.New(p.Out, p.FullShape()...)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Execute(context.Background(), got, c.Input); err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	return got, e
}

// TestWinogradCPURandom: the CPU engine against internal/ref on random
// problems of every semantic it serves (enginetest.WinogradRandom: a few
// hundred by default, NDCONV_WINOGRAD_CASES for more, NDCONV_WINOGRAD_SEED
// for another seed), every tile of each kernel size, each output within
// Variant.ErrorBound (integer outputs the reference ± the bound, rounded
// and saturated). It logs the worst error measured against the bound per
// variant.
func TestWinogradCPURandom(t *testing.T) {
	seed := enginetest.WinogradSeed(29)
	cases := enginetest.WinogradRandom(seed, enginetest.WinogradCount(300), false)
	worst := map[string]float64{}
	runs := 0
	for _, c := range cases {
		p, _ := c.Spec.Normalize()
		want := c.Want()
		maxAbs := c.MaxAbs()
		kax := 0
		for _, k := range p.KShape {
			if k > 1 {
				kax++
			}
		}
		r := c.Spec.Kernels[0].Shape[0]
		for _, m := range winograd.Tiles(r, kax) {
			got, e := run(t, c, m)
			v := e.Variant()
			bound := v.ErrorBound(p.WeightAbsSum(), maxAbs)
			if msg := c.CheckBound(got, want, bound); msg != "" {
				t.Fatalf("seed %d %s %s: %s (bound %.3g)", seed, c.Name, v.Name(), msg, bound)
			}
			runs++
			if p.Out == nd.Float32 && bound > 0 {
				for i, g := range got.Float64s() {
					worst[v.Name()] = max(worst[v.Name()], math.Abs(g-want.Values[i])/bound)
				}
			}
		}
	}
	for name, w := range worst {
		t.Logf("%s: worst error %.3g of the bound", name, w)
	}
	t.Logf("seed %d: %d cases, %d runs", seed, len(cases), runs)
}

// TestWinogradCPUBankError: a 256² float32 bank of 8 per variant, the
// error measured against the bound and against a float32 direct sum's
// (taps·u·Σ|w|·max|x|), logged: the figures docs/perf/winograd.md states.
func TestWinogradCPUBankError(t *testing.T) {
	for _, k := range [][]int{{3, 3}, {5, 5}, {3, 3, 3}} {
		c := enginetest.WinogradRandom(7, 1, false)[0]
		shape := []int{96, 96}
		if len(k) == 3 {
			shape = []int{24, 24, 24}
		}
		rng := newRand(uint64(len(k)*10 + k[0]))
		c.Input = enginetest.RandomArray(rng, nd.Float32, shape...)
		c.Spec = nd.Spec{Shape: shape, In: nd.Float32, Out: nd.Float32, Mode: nd.Same}
		for range 8 {
			c.Spec.Kernels = append(c.Spec.Kernels, enginetest.RandomKernel(rng, false, k...))
		}
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		want := c.Want()
		taps := len(c.Spec.Kernels[0].Weights)
		for _, m := range winograd.Tiles(k[0], len(k)) {
			got, e := run(t, c, m)
			v := e.Variant()
			bound := v.ErrorBound(p.WeightAbsSum(), c.MaxAbs())
			direct := float64(taps) * 0x1p-24 * p.WeightAbsSum() * c.MaxAbs()
			worst := 0.0
			for i, g := range got.Float64s() {
				worst = max(worst, math.Abs(g-want.Values[i]))
			}
			if worst > bound {
				t.Errorf("%s: error %.3g over the bound %.3g", v.Name(), worst, bound)
			}
			t.Logf("%s: error %.3g = %.3g of the bound %.3g, %.3g of a float32 direct sum's bound", v.Name(), worst, worst/bound, bound, worst/direct)
		}
	}
}

// TestWinogradWhy: the method refuses, with the reason, what it does not
// serve.
func TestWinogradWhy(t *testing.T) {
	for _, c := range []struct {
		spec nd.Spec
		why  string
	}{
		{nd.Spec{Shape: []int{9, 9}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{7, 7}, Weights: make([]float64, 49)}}}, "not 7×7"},
		{nd.Spec{Shape: []int{9, 9}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3, 5}, Weights: make([]float64, 15)}}}, "not 3×5"},
		{nd.Spec{Shape: []int{9, 9}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3}, Weights: make([]float64, 3)}}}, "not 3"},
		{nd.Spec{Shape: []int{9, 9, 9}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{5, 5, 5}, Weights: make([]float64, 125)}}}, "not 5×5×5"},
		{nd.Spec{Shape: []int{9, 9}, In: nd.Float64, Kernels: []nd.Kernel{{Shape: []int{3, 3}, Weights: make([]float64, 9)}}}, "float64"},
		{nd.Spec{Shape: []int{9, 9}, In: nd.Int32, Out: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3, 3}, Weights: make([]float64, 9)}}}, "float64"},
		{nd.Spec{Shape: []int{9, 9}, In: nd.Float32, Border: nd.Constant, CVal: math.Inf(1), Kernels: []nd.Kernel{{Shape: []int{3, 3}, Weights: make([]float64, 9)}}}, "finite cval"},
	} {
		p, err := c.spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		err = winograd.Why(p)
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%v: %v, want %q", c.spec.Kernels[0].Shape, err, c.why)
		}
		if _, err := winograd.NewCPU(p, winograd.Options{}); err == nil {
			t.Errorf("NewCPU took %v", c.spec.Kernels[0].Shape)
		}
	}
	// A 3×3 kernel over axes 0 and 2 of a volume (1 tap on axis 1) is served.
	p, _ := (&nd.Spec{Shape: []int{5, 4, 5}, In: nd.Float32, Axes: []int{0, 2}, Kernels: []nd.Kernel{{Shape: []int{3, 3}, Weights: make([]float64, 9)}}}).Normalize()
	if err := winograd.Why(p); err != nil {
		t.Error(err)
	}
	if _, err := winograd.New(p, 3); err == nil {
		t.Error("tile 3 for a 3×3 kernel taken")
	}
}

// TestWinogradNonFinite: NaN and Inf inputs run the direct method, whose
// bits the outputs carry (the tiles would spread them to neighbours).
func TestWinogradNonFinite(t *testing.T) {
	c := enginetest.WinogradRandom(3, 1, false)[0]
	c.Spec = nd.Spec{Shape: []int{12, 12}, In: nd.Float32, Out: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(newRand(5), true, 3, 3)}}
	c.Input = enginetest.RandomArray(newRand(6), nd.Float32, 12, 12)
	x := c.Input.Data.([]float32)
	x[40], x[77] = float32(math.NaN()), float32(math.Inf(-1))
	got, e := run(t, c, 0)
	if !e.UsedDirect() {
		t.Fatal("NaN input did not run the direct method")
	}
	p, _ := c.Spec.Normalize()
	want, _ := nd.New(nd.Float32, 12, 12)
	if err := cpu.NewDirect(p, cpu.Options{}).Execute(context.Background(), want, c.Input); err != nil {
		t.Fatal(err)
	}
	g, w := got.Data.([]float32), want.Data.([]float32)
	for i := range g {
		if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
			t.Fatalf("element %d: %v, direct %v", i, g[i], w[i])
		}
	}
}
