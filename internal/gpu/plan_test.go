package gpu

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// fakePlanner is a device not opened, as the engine plans for it: what
// the tests that need no GPU plan against.
type fakePlanner struct {
	lib    bool  // with an FFT library
	budget int64 // MemoryBudget's answer
}

func (fakePlanner) Backend() string { return "fake" }
func (fakePlanner) Limits() Limits {
	return Limits{MaxLocalBytes: 48 << 10, MaxGroupsYZ: 65535, FFTBudget: 1 << 30}
}
func (f fakePlanner) MemoryBudget(int) (int64, error)        { return f.budget, nil }
func (fakePlanner) Missing(l []*kernels.Launch) (int, error) { return len(l), nil }

// libraryPlanner is a fakePlanner with an FFT library.
type libraryPlanner struct{ fakePlanner }

func (libraryPlanner) FFTAvailable() error                                 { return nil }
func (libraryPlanner) FFTPlan([]int, int, FFTKind, Queue) (FFTPlan, error) { return nil, nil }

// TestChooseLayout: without an FFT library, fft.cl's transforms; with one,
// paired blocks in its complex transforms, kernels spanning more than 3
// axes in fft.cl's, and NDCONV_CUDA_FFT_LAYOUT overriding the choice where
// the library takes the problem; the plan follows.
func TestChooseLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	one := nd.Spec{Shape: []int{5000, 3}, In: nd.Float32, Axes: []int{0}, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 63)}}
	two := nd.Spec{Shape: []int{64, 64}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 9, 9)}}
	four := nd.Spec{Shape: []int{6, 7, 8, 9}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 2, 3, 2, 3)}}
	withLib, without := libraryPlanner{fakePlanner{budget: 1 << 30}}, fakePlanner{budget: 1 << 30}
	for _, c := range []struct {
		env  string
		dev  Planner
		spec nd.Spec
		want fftLayout
	}{
		{"", withLib, one, pairedLayout}, {"", withLib, two, pairedLayout}, {"", withLib, four, portableLayout},
		{"real", withLib, one, realLayout}, {"real", withLib, two, realLayout}, {"fftcl", withLib, two, portableLayout}, {"real", withLib, four, portableLayout},
		{"", without, two, portableLayout}, {"real", without, one, portableLayout},
	} {
		t.Setenv("NDCONV_CUDA_FFT_LAYOUT", c.env)
		p, err := c.spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		e := &Engine{plan: c.dev, p: p}
		f, layout, err := e.newFFTConv(p)
		if err != nil {
			t.Fatal(err)
		}
		perSlot, transforms := 2, false
		switch c.want {
		case realLayout:
			perSlot = 1
		case portableLayout:
			transforms = true
		}
		if layout != c.want || f.PerSlot != perSlot || (len(f.Transforms) > 0) != transforms {
			t.Errorf("NDCONV_CUDA_FFT_LAYOUT=%q, %T, kernel %v: layout %d (%d blocks per slot, %d fft.cl transforms), want %d", c.env, c.dev, p.KShape, layout, f.PerSlot, len(f.Transforms), c.want)
		}
	}
}

// TestChunksGatherOnHost gathers each chunk's input into staging as the
// pipeline does (chunk.Gather), computes the chunk's problem with the CPU
// engine and checks that the chunks put together equal the whole problem
// bit for bit, under memory budgets that split along one axis and along
// several, and forced piece sizes.
func TestChunksGatherOnHost(t *testing.T) {
	split := 0
	for _, c := range append(enginetest.Table(), enginetest.Random(11, 100)...) {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := nd.New(p.Out, p.FullShape()...)
		if err := cpu.NewDirect(p, cpu.Options{Workers: 1}).Execute(context.Background(), want, c.Input); err != nil {
			t.Fatal(err)
		}
		inBytes := int64(len(c.Input.Bytes()))
		for _, opt := range []Options{
			{MemoryBudget: inBytes/3 + int64(len(want.Bytes()))/3}, {MemoryBudget: 64 * pipelineDepth}, {MemoryBudget: 256 * pipelineDepth},
			{MemoryBudget: 1 << 30, PieceBytes: max(inBytes/2, 1)},
		} {
			opt.MemoryBudget = max(opt.MemoryBudget, 1)
			e := &Engine{plan: fakePlanner{}, p: p, opt: opt, method: direct}
			chunks, err := e.chunks()
			if err != nil {
				continue // one voxel with its halo does not fit
			}
			if len(chunks) > 1 {
				split++
			}
			got, _ := nd.New(p.Out, p.FullShape()...)
			size, outSize := p.In.Size(), p.Out.Size()
			for _, ch := range chunks {
				in, _ := nd.New(p.In, ch.Problem.InShape...)
				ch.Gather(in.Bytes(), c.Input.Bytes(), size)
				out, _ := nd.New(p.Out, ch.Problem.FullShape()...)
				if err := cpu.NewDirect(ch.Problem, cpu.Options{Workers: 1}).Execute(context.Background(), out, in); err != nil {
					t.Fatal(err)
				}
				copy(got.Bytes()[ch.OutOffset*outSize:][:ch.OutElems*outSize], out.Bytes())
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s, %+v (%d chunks): differs from the whole problem", c.Name, opt, len(chunks))
			}
		}
	}
	if split < 100 {
		t.Errorf("only %d runs were split", split)
	}
}

// TestPendingPlans: Pending asks the device's cache about each chunk
// geometry's launches once (the fake counts them all missing), one for the
// FFT, none for a separable method on a dense kernel.
func TestPendingPlans(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	dense := nd.Spec{Shape: []int{40, 56}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 3, 5)}}
	sep := nd.Spec{Shape: []int{40, 56}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomFactors(rng, 3, 5)}}
	pd, _ := dense.Normalize()
	ps, _ := sep.Normalize()
	dev := fakePlanner{budget: 1 << 30}
	for _, c := range []struct {
		m    Method
		p    *nd.Problem
		want int
	}{{Direct, pd, 1}, {Separable, pd, 0}, {FFT, pd, 1}} {
		if n, err := Pending(dev, c.m, c.p, Options{}); err != nil || n != c.want {
			t.Errorf("method %d: %d pending, %v; want %d", c.m, n, err, c.want)
		}
	}
	if n, err := Pending(dev, Separable, ps, Options{}); err != nil || n < 1 {
		t.Errorf("separable: %d pending, %v", n, err)
	}
}
