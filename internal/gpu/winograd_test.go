package gpu_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/internal/winograd"
	"github.com/ndconv/ndconv/nd"
)

// winogradOn makes a Winograd engine for p on the target.
func winogradOn(tg *Target, p *nd.Problem) (*gpu.WinogradEngine, error) {
	dev, err := tg.Open()
	if err != nil {
		return nil, err
	}
	return gpu.NewWinograd(dev, tg.Open, p, gpu.Options{})
}

// winogradCPU is the CPU engine's output for c (the method's reference),
// with tile m.
func winogradCPU(c enginetest.Case, m int) (nd.Array, error) {
	p, err := c.Spec.Normalize()
	if err != nil {
		return nd.Array{}, err
	}
	e, err := winograd.NewCPU(p, winograd.Options{Tile: m, Direct: cpu.NewDirect(p, cpu.Options{})})
	if err != nil {
		return nd.Array{}, err
	}
	dst, err := nd.New(p.Out, p.FullShape()...)
	if err != nil {
		return nd.Array{}, err
	}
	return dst, e.Execute(context.Background(), dst, c.Input)
}

// winogradWorst keeps the largest error measured against the bound per
// variant.
type winogradWorst struct {
	mu sync.Mutex
	m  map[string]float64
}

// check compares a GPU output of c with tile m with internal/ref within
// the variant's bound, and with the CPU engine's output within twice the
// bound (both are within it of the exact result).
func (w *winogradWorst) check(c enginetest.Case, m int, got nd.Array) string {
	p, err := c.Spec.Normalize()
	if err != nil {
		return err.Error()
	}
	v, err := winograd.New(p, m)
	if err != nil {
		return err.Error()
	}
	bound := v.ErrorBound(p.WeightAbsSum(), c.MaxAbs())
	want := c.Want()
	if msg := c.CheckBound(got, want, bound); msg != "" {
		return v.Name() + ": " + msg
	}
	ref, err := winogradCPU(c, m)
	if err != nil {
		return err.Error()
	}
	g, r := got.Float64s(), ref.Float64s()
	worst := 0.0
	for i := range g {
		d := math.Abs(g[i] - r[i])
		if p.Out.IsInteger() {
			d = max(0, d-1) // each rounds its own value: one unit apart at most
		}
		if !(d <= 2*bound) {
			return v.Name() + ": element " + strconv.Itoa(i) + ": GPU " + strconv.FormatFloat(g[i], 'g', -1, 64) + ", CPU engine " + strconv.FormatFloat(r[i], 'g', -1, 64)
		}
		if p.Out == nd.Float32 && bound > 0 {
			worst = max(worst, math.Abs(g[i]-want.Values[i])/bound)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]float64{}
	}
	w.m[v.Name()] = max(w.m[v.Name()], worst)
	return ""
}

// TestWinogradRandom runs the Winograd method on random problems of every
// semantic it serves (enginetest.WinogradRandom, GPU dtypes: 200 cases on
// CUDA, a sample of 8 on OpenCL, whose every specialisation is a build;
// NDCONV_WINOGRAD_CASES for more), each against internal/ref within the
// variant's bound and against the CPU engine; it logs the worst error
// measured against the bound per variant.
func TestWinogradRandom(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		n := 200
		if tg.Sample || tg.Short {
			n = 8
		}
		seed := enginetest.WinogradSeed(31)
		cases := enginetest.WinogradRandom(seed, enginetest.WinogradCount(n), true)
		var w winogradWorst
		failures := gputest.SpreadCheck(cases, gputest.Workers(), func(c enginetest.Case) (nd.Array, error) {
			return gputest.Run(c, func(p *nd.Problem) (*gpu.WinogradEngine, error) { return winogradOn(tg, p) })
		}, func(c enginetest.Case, got nd.Array) string { return w.check(c, 0, got) })
		for _, f := range failures {
			t.Errorf("seed %d: %s", seed, f)
		}
		for name, v := range w.m {
			t.Logf("%s: worst error %.3g of the bound", name, v)
		}
		t.Logf("seed %d: %d cases", seed, len(cases))
	})
}

// TestWinogradTiles runs the tiles that are not their kernel size's
// default (F(2×2,3×3), F(4×4,5×5)), chosen by NDCONV_WINOGRAD_TILE, on a
// few random problems each.
func TestWinogradTiles(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		var w winogradWorst
		for _, c := range []struct {
			k    []int
			tile int
		}{{[]int{3, 3}, 2}, {[]int{5, 5}, 4}} {
			var cases []enginetest.Case
			for _, rc := range enginetest.WinogradRandom(43, 60, true) {
				if len(rc.Spec.Kernels[0].Shape) == len(c.k) && rc.Spec.Kernels[0].Shape[0] == c.k[0] {
					cases = append(cases, rc)
				}
			}
			some := 6
			if tg.Sample || tg.Short {
				some = 3 // each a build of its own on PoCL
			}
			cases = cases[:min(len(cases), some)]
			t.Setenv("NDCONV_WINOGRAD_TILE", strconv.Itoa(c.tile))
			for _, rc := range cases {
				got, err := gputest.Run(rc, func(p *nd.Problem) (*gpu.WinogradEngine, error) { return winogradOn(tg, p) })
				if err != nil {
					t.Fatalf("%s: %v", rc.Name, err)
				}
				if msg := w.check(rc, c.tile, got); msg != "" {
					t.Errorf("%s: %s", rc.Name, msg)
				}
			}
		}
		for name, v := range w.m {
			t.Logf("%s: worst error %.3g of the bound", name, v)
		}
	})
}

// TestWinogradNonFinite: NaN and Inf inputs run the direct method, whose
// bits the outputs carry.
func TestWinogradNonFinite(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		c := enginetest.WinogradRandom(5, 1, true)[0]
		c.Spec = nd.Spec{Shape: []int{16, 12}, In: nd.Float32, Out: nd.Float32, Border: nd.Mirror,
			Kernels: []nd.Kernel{enginetest.RandomKernel(newWinogradRand(1), true, 3, 3), enginetest.RandomKernel(newWinogradRand(2), false, 3, 3)}}
		c.Input = enginetest.RandomArray(newWinogradRand(3), nd.Float32, 16, 12)
		x := c.Input.Data.([]float32)
		x[30], x[101] = float32(math.NaN()), float32(math.Inf(1))
		p, _ := c.Spec.Normalize()
		e, err := winogradOn(tg, p)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		got, _ := nd.New(p.Out, p.FullShape()...)
		if err := e.Execute(context.Background(), got, c.Input); err != nil {
			t.Fatal(err)
		}
		if !e.UsedDirect() {
			t.Error("NaN input did not run the direct method")
		}
		if msg := gputest.SameBitsAsCPU(c, "direct", got); msg != "" {
			t.Error(msg)
		}
	})
}

func newWinogradRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 3)) }

// TestWinogradStores runs both ways winograd.cl stores its outputs —
// directly (NDCONV_WINOGRAD_STAGE=-1) and staged three filters at a time
// (banks in partial groups) — on a few random problems of banks.
func TestWinogradStores(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		var cases []enginetest.Case
		for _, c := range enginetest.WinogradRandom(47, 40, true) {
			if len(c.Spec.Kernels) > 1 && len(cases) < 3 {
				cases = append(cases, c)
			}
		}
		var w winogradWorst
		for _, stage := range []string{"-1", "3"} {
			t.Setenv("NDCONV_WINOGRAD_STAGE", stage)
			for _, c := range cases {
				got, err := gputest.Run(c, func(p *nd.Problem) (*gpu.WinogradEngine, error) { return winogradOn(tg, p) })
				if err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				if msg := w.check(c, 0, got); msg != "" {
					t.Errorf("stage %s %s: %s", stage, c.Name, msg)
				}
			}
		}
	})
}

// TestWinogradChunked: under a device-memory budget below the data's
// bytes the engine runs the problem in halo'd pieces, each a problem of
// its own whose tiles start at its first output: every output stays
// within the bound of the exact result (not the same bits as the whole
// run: a tile's rounding depends on where the tile starts).
func TestWinogradChunked(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		rng := newWinogradRand(9)
		for _, s := range []nd.Spec{
			{Shape: []int{61, 37}, In: nd.Float32, Border: nd.Reflect, Origin: []int{1, -1},
				Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 3, 3), enginetest.RandomKernel(rng, true, 3, 3), enginetest.RandomKernel(rng, false, 3, 3)}},
			{Shape: []int{19, 14, 13}, In: nd.Uint8, Out: nd.Float32, Border: nd.Constant, CVal: 7, Mode: nd.Full,
				Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 3, 3, 3), enginetest.RandomKernel(rng, false, 3, 3, 3)}},
		} {
			in := enginetest.RandomArray(rng, s.In, s.Shape...)
			c := enginetest.Case{Name: fmt.Sprint(s.Shape), Spec: s, Input: in}
			p, err := s.Normalize()
			if err != nil {
				t.Fatal(err)
			}
			out, _ := nd.New(p.Out, p.FullShape()...)
			dev, err := tg.Open()
			if err != nil {
				t.Fatal(err)
			}
			e, err := gpu.NewWinograd(dev, tg.Open, p, gpu.Options{MemoryBudget: int64(len(in.Bytes())+len(out.Bytes())) / 3})
			if err != nil {
				t.Fatal(err)
			}
			if n, err := gpu.Pieces(e.Engine); err != nil || n < 2 {
				t.Errorf("%s: %d pieces (%v) under a third of the data's bytes", c.Name, n, err)
			}
			if err := e.Execute(context.Background(), out, in); err != nil {
				t.Fatal(err)
			}
			e.Close()
			var w winogradWorst
			if msg := w.check(c, 0, out); msg != "" {
				t.Errorf("%s: %s", c.Name, msg)
			}
		}
	})
}
