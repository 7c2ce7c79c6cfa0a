package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// TestDirectPlanar: the direct engine with Options.Planar writes each
// bank kernel's output as a plane, dst[k*N + voxel], the same bits as its
// interleaved output dst[voxel*K + k] moved — for every bank size of
// bankSizes (the group loops: whole groups of simd.BankSets, parts, rows
// at once), 1-D, 2-D, 3-D and channel inputs, float32, float64 and uint8
// outputs, dense and sparse kernels, every border and mode, on one worker
// and on all. One kernel ignores Planar.
func TestDirectPlanar(t *testing.T) {
	outs := [][2]nd.DType{{nd.Float32, nd.Float32}, {nd.Float64, nd.Float64}, {nd.Uint8, nd.Uint8}, {nd.Float32, nd.Int16}}
	checkPlanar(t, rand.New(rand.NewPCG(38, 1)), outs, false, denseKernel, func(p *nd.Problem, opt Options) (Executable, error) {
		return NewDirect(p, opt), nil
	})
}

// TestSeparablePlanar: the separable engine with Options.Planar, running
// whole, writes its last pass into each kernel's plane — the same bits
// as its interleaved output moved, over TestDirectPlanar's cases with
// kernels of 1-D factors; in chunks it refuses a planar bank (the plan
// then transposes: SeparablePlanar is false).
func TestSeparablePlanar(t *testing.T) {
	outs := [][2]nd.DType{{nd.Float32, nd.Float32}, {nd.Float64, nd.Float64}, {nd.Uint8, nd.Uint8}, {nd.Float32, nd.Int16}}
	factors := func(rng *rand.Rand, _ bool, shape ...int) nd.Kernel { return enginetest.RandomFactors(rng, shape...) }
	checkPlanar(t, rand.New(rand.NewPCG(38, 3)), outs, false, factors, NewSeparable)

	p, err := (&nd.Spec{Shape: []int{40, 30}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomFactors(rand.New(rand.NewPCG(1, 1)), 3, 3), enginetest.RandomFactors(rand.New(rand.NewPCG(1, 2)), 3, 3)}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	defer func(limit int64) { separableScratchLimit = limit }(separableScratchLimit)
	separableScratchLimit = 1 << 10
	if SeparablePlanar(p) {
		t.Error("SeparablePlanar true for a problem in chunks")
	}
	if _, err := NewSeparable(p, Options{Planar: true}); err == nil {
		t.Error("a planar bank in chunks was accepted")
	}
	if _, err := NewSeparable(p, Options{}); err != nil {
		t.Errorf("interleaved in chunks: %v", err)
	}
}

// denseKernel is enginetest.RandomKernel: dense weights, some zero.
func denseKernel(rng *rand.Rand, zeros bool, shape ...int) nd.Kernel {
	return enginetest.RandomKernel(rng, zeros, shape...)
}

// TestFFTPlanar: the FFT engine with Options.Planar stores each kernel's
// inverse transforms into its plane — the same bits as its interleaved
// output moved (where 8 or more float32 kernels go through the grouped
// transpose, scatterGroup), NaN patches (the direct sums of the outputs
// that reach them) included; the same cases as TestDirectPlanar's but
// for the types the FFT takes.
func TestFFTPlanar(t *testing.T) {
	outs := [][2]nd.DType{{nd.Float32, nd.Float32}, {nd.Uint8, nd.Uint8}, {nd.Float32, nd.Int16}}
	checkPlanar(t, rand.New(rand.NewPCG(38, 2)), outs, true, denseKernel, NewFFT)
}

// checkPlanar runs newEngine's executables on random banks of kernel's
// kernels, planar and interleaved, and compares the planar output with the interleaved one
// moved (nd.ToPlanar), byte for byte; with nan, every other float32 input
// holds a NaN.
func checkPlanar(t *testing.T, rng *rand.Rand, outs [][2]nd.DType, nan bool, kernel func(*rand.Rand, bool, ...int) nd.Kernel, newEngine func(*nd.Problem, Options) (Executable, error)) {
	t.Helper()
	shapes := [][]int{{37}, {9, 21}, {16, 24}, {3, 5, 13}, {6, 7, 3}}
	kshapes := [][]int{{5}, {3, 3}, {2, 5}, {3, 2, 3}, {3, 3}}
	for _, bank := range append([]int{1}, bankSizes[1:]...) {
		for i, shape := range shapes {
			ty := outs[(bank+i)%len(outs)]
			spec := nd.Spec{Shape: shape, In: ty[0], Out: ty[1], Border: nd.Border(rng.IntN(5)), CVal: 2,
				Mode: nd.Mode(rng.IntN(3)), Convolve: rng.IntN(2) == 0}
			for range bank {
				spec.Kernels = append(spec.Kernels, kernel(rng, rng.IntN(2) == 0, kshapes[i]...))
			}
			p, err := spec.Normalize()
			if err != nil {
				t.Fatalf("bank %d %v: %v", bank, shape, err)
			}
			src := enginetest.RandomArray(rng, ty[0], shape...)
			if f, ok := src.Data.([]float32); ok && nan && (bank+i)%2 == 0 {
				f[rng.IntN(len(f))] = float32(math.NaN())
			}
			for _, workers := range []int{1, 0} {
				what := fmt.Sprintf("bank %d, %v→%v %v, kernel %v, %v %v, workers %d", bank, ty[0], ty[1], shape, kshapes[i], spec.Border, spec.Mode, workers)
				run := func(planar bool) nd.Array {
					out, _ := nd.New(p.Out, p.FullShape()...)
					e, err := newEngine(p, Options{Workers: workers, Planar: planar})
					if err == nil {
						err = e.Execute(context.Background(), out, src)
					}
					if err != nil {
						t.Fatalf("%s, planar %v: %v", what, planar, err)
					}
					return out
				}
				got := run(true)
				want, _ := nd.New(p.Out, p.FullShape()...)
				if err := nd.ToPlanar(want, run(false), bank, 1); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Bytes(), want.Bytes()) {
					t.Fatalf("%s: the planar output is not the interleaved one moved", what)
				}
			}
		}
	}
}
