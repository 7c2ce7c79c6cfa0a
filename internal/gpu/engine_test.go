package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/internal/kerneltest"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// The engine's tests run once on every available device (gputest.Targets:
// cuda:0, the OpenCL test device), each as a subtest named after it, and
// skip, saying why, where there is none. On OpenCL they run a sample of
// the cases (gputest.Target.Sample): each specialisation takes about a
// second to build there; NDCONV_OPENCL_ALL=1 runs them all.

// newEngine is gpu.NewDirect, gpu.NewSeparable: what the tests make
// engines with.
type newEngine func(gpu.Device, *nd.Problem, gpu.Options) (*gpu.Engine, error)

// methodOf is the method name and constructor for p: separable where its
// kernels are.
func methodOf(p *nd.Problem) (string, newEngine) {
	if p.Separable() {
		return "separable", gpu.NewSeparable
	}
	return "direct", gpu.NewDirect
}

// engineOn makes an engine for p on the target.
func engineOn(tg *Target, make newEngine, p *nd.Problem, opt gpu.Options) (*gpu.Engine, error) {
	dev, err := tg.Open()
	if err != nil {
		return nil, err
	}
	return make(dev, p, opt)
}

// runOn executes one case on the target from host memory.
func runOn(tg *Target, c enginetest.Case, opt gpu.Options, make newEngine) (nd.Array, error) {
	return gputest.Run(c, func(p *nd.Problem) (*gpu.Engine, error) { return engineOn(tg, make, p, opt) })
}

// engineCases is the CPU engine's case table and seeded random cases: all
// of them on CUDA (every seventh under -short, for compute-sanitizer);
// where the target samples, the table's special groups (NaN and Inf,
// saturation, rounding, axes and channels, 4-D and 5-D, wide, tall and
// degenerate inputs), every third dtype pair and bank, every sixteenth of
// the rest, and 16 random cases: about 100 specialisations.
func engineCases(t *testing.T, tg *Target) []enginetest.Case {
	table, random := enginetest.OnGPU(enginetest.Table()), enginetest.OnGPU(enginetest.Random(6, 300))
	if !tg.Sample {
		return tg.EveryNth(append(table, random...), 1)
	}
	var cases []enginetest.Case
	groups := map[string]int{}
	for i, c := range table {
		group := strings.SplitN(c.Name, "/", 2)[0]
		n := groups[group]
		groups[group]++
		switch {
		case specialCase(group),
			(group == "dtype" || strings.HasPrefix(group, "bank")) && n%3 == 0,
			i%16 == 0:
			cases = append(cases, c)
		}
	}
	t.Logf("%d of %d table cases and 16 of %d random ones (NDCONV_OPENCL_ALL=1 runs all)", len(cases), len(table), len(random))
	return append(cases, random[:16]...)
}

func specialCase(group string) bool {
	switch group {
	case "halves", "saturate", "nan-inf", "axes", "4d", "5d", "wide", "tall", "empty", "single-value", "zero-kernel", "tiny-weights-dropped":
		return true
	}
	return false
}

// decompositionCases are the cases the tests of work decompositions
// (rolling, window, sepring, sep3) run: engineCases, every other one where
// the target samples — those tests check how work is spread, which the
// table's dtypes and borders exercise the same way every few cases.
func decompositionCases(t *testing.T, tg *Target) []enginetest.Case {
	cases := engineCases(t, tg)
	if !tg.Sample {
		return cases
	}
	return tg.EveryNth(cases, 2)
}

// runCases runs cases gputest.Workers at a time, so that NVRTC builds on
// as many cores and one case's transfers and kernel overlap another's
// build (PoCL builds one program at a time), and reports each mismatch with the reference and each bit that differs from
// the CPU engine's same method.
func runCases(t *testing.T, tg *Target, cases []enginetest.Case, method string, opt gpu.Options, make newEngine) {
	failures := gputest.Each(len(cases), gputest.Workers(), func(i int) string {
		c := cases[i]
		got, err := runOn(tg, c, opt, make)
		if err != nil {
			return fmt.Sprintf("%s: %v", c.Name, err)
		}
		if msg := c.Check(got, c.Want()); msg != "" {
			return c.Name + ": " + msg
		}
		if msg := gputest.SameBitsAsCPU(c, method, got); msg != "" {
			return c.Name + ": " + msg
		}
		return ""
	})
	for _, f := range failures {
		t.Error(f)
	}
	if len(failures) >= gputest.MaxFailures {
		t.Fatal("too many failures")
	}
}

// TestEngineTable runs the case table and random cases with the direct
// method and compares with the float64 reference, as the CPU engine's own
// test does, and with the CPU engine's bits, since both add the same
// products in the same order. Its programs build optimised, as the
// product's do.
func TestEngineTable(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		tg.Optimised(t)
		cases := engineCases(t, tg)
		runCases(t, tg, cases, "direct", gpu.Options{}, gpu.NewDirect)
		t.Logf("%d cases on %s", len(cases), tg.Name)
	})
}

// TestEngineSeparable runs the separable family on the separable cases (a
// sixth of them where the target samples) against the reference and the
// CPU engine's bits, small problems fused in strips too (sepfused.cl,
// sep3.cl; TestEngineSepTile runs septile.cl's tiles).
func TestEngineSeparable(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		var cases []enginetest.Case
		for _, c := range enginetest.OnGPU(append(enginetest.Table(), enginetest.Random(6, 300)...)) {
			if p, err := c.Spec.Normalize(); err == nil && p.Separable() {
				cases = append(cases, c)
			}
		}
		if tg.Sample {
			cases = tg.EveryNth(cases, 6)
		}
		runCases(t, tg, cases, "separable", gpu.Options{Tuning: kernels.Tuning{FuseSmall: true}}, gpu.NewSeparable)
		t.Logf("%d separable cases", len(cases))
		p, err := (&nd.Spec{Shape: []int{4, 4}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rand.New(rand.NewPCG(1, 1)), false, 3, 3)}}).Normalize()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := engineOn(tg, gpu.NewSeparable, p, gpu.Options{}); err == nil {
			t.Error("a dense kernel was accepted by the separable family")
		}
	})
}

// TestEngineSlabs forces a memory budget of a few rows so that problems run
// in chunks through the pipeline, with halos gathered by every border
// rule, and checks them against the reference and the CPU engine's bits;
// a 1-D signal and planes split within rows too.
func TestEngineSlabs(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		rng := rand.New(rand.NewPCG(3, 4))
		n := 0
		type slabCase struct {
			c      enginetest.Case
			budget int64
		}
		var cases []slabCase
		for _, border := range []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant} {
			for _, mode := range []nd.Mode{nd.Same, nd.Valid, nd.Full} {
				for _, shape := range [][]int{{37}, {23, 9}, {11, 6, 5}, {9, 7, 3}} {
					kshape := []int{5, 3, 3}[:min(len(shape), 3)]
					if len(shape) == 3 && shape[2] == 3 {
						kshape = []int{5, 3} // channels last
					}
					if len(shape) == 1 {
						kshape = []int{9}
					}
					bank := 1 + n%3
					// Every other problem runs separably, through temporaries.
					separable := n%2 == 1
					var ks []nd.Kernel
					for range bank {
						if separable {
							ks = append(ks, enginetest.RandomFactors(rng, kshape...))
						} else {
							ks = append(ks, enginetest.RandomKernel(rng, true, kshape...))
						}
					}
					spec := nd.Spec{Shape: shape, In: nd.Uint16, Out: nd.Float32, Kernels: ks, Border: border, CVal: 7.5, Mode: mode,
						Origin: []int{(n % 3) - 1}}
					c := enginetest.Case{Name: fmt.Sprintf("%v/%v/%v/bank%d", border, mode, shape, bank), Spec: spec,
						Input: enginetest.RandomArray(rng, nd.Uint16, shape...)}
					n++
					if _, err := spec.Normalize(); err != nil {
						continue // valid mode on an axis shorter than the kernel
					}
					rowBytes := int64(2 + 4*bank)
					if separable {
						rowBytes += 2 * 4 * 2 // two temporaries, up to twice a row in full mode
					}
					for _, d := range shape[1:] {
						rowBytes *= int64(d)
					}
					cases = append(cases, slabCase{c, rowBytes*3 + int64(kshape[0])*rowBytes})
				}
			}
		}
		// Planes split within rows.
		spec := nd.Spec{Shape: []int{5, 40}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 3, 5)}, Border: nd.Reflect}
		cases = append(cases, slabCase{enginetest.Case{Name: "plane-in-rows/reflect", Spec: spec, Input: enginetest.RandomArray(rng, nd.Float32, 5, 40)}, 4*3*20 + 4*16})
		spec = nd.Spec{Shape: []int{4, 30}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomFactors(rng, 3, 6)}, Border: nd.Constant, CVal: -2, Mode: nd.Full}
		cases = append(cases, slabCase{enginetest.Case{Name: "plane-in-rows/constant/full/separable", Spec: spec, Input: enginetest.RandomArray(rng, nd.Float32, 4, 30)}, 4*3*12 + 4*8 + 2*4*3*12})
		if tg.Sample {
			var some []slabCase
			for i, sc := range cases {
				if i%4 == 0 || i >= len(cases)-2 {
					some = append(some, sc)
				}
			}
			cases = some
		}
		for _, sc := range cases {
			c := sc.c
			p, _ := c.Spec.Normalize()
			method, make := methodOf(p)
			got, err := runOn(tg, c, gpu.Options{MemoryBudget: sc.budget}, make)
			if err != nil {
				t.Errorf("%s: %v", c.Name, err)
				continue
			}
			if msg := c.Check(got, c.Want()); msg != "" {
				t.Errorf("%s: %s", c.Name, msg)
			}
			if msg := gputest.SameBitsAsCPU(c, method, got); msg != "" {
				t.Errorf("%s: %s", c.Name, msg)
			}
		}
		// A budget below one row and its halo is an error, not a crash.
		c := enginetest.Case{Name: "tiny", Spec: nd.Spec{Shape: []int{8, 8}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 3, 3)}},
			Input: enginetest.RandomArray(rng, nd.Float32, 8, 8)}
		if _, err := runOn(tg, c, gpu.Options{MemoryBudget: 16}, gpu.NewDirect); err == nil {
			t.Error("a 16-byte budget ran")
		}
	})
}

// upload makes a device array holding a.
func upload(t *testing.T, dev gpu.Device, q gpu.Queue, a nd.Array) *gpu.Array {
	t.Helper()
	d, err := gpu.NewArray(dev, a.DType(), a.Shape...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Free() })
	if err := d.Write(q, a.Bytes()); err != nil {
		t.Fatal(err)
	}
	return d
}

// download reads a device array.
func download(t *testing.T, q gpu.Queue, a *gpu.Array) nd.Array {
	t.Helper()
	h, err := nd.New(a.DType, a.Shape...)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Read(q, h.Bytes()); err != nil {
		t.Fatal(err)
	}
	return h
}

// testQueue is a queue on the target's shared device, closed with t.
func testQueue(t *testing.T, tg *Target) gpu.Queue {
	t.Helper()
	q, err := tg.Device().NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// TestEngineDeviceArrays chains work on device arrays and compares with
// the host path; arrays of the wrong shape are refused.
func TestEngineDeviceArrays(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		dev, q := tg.Device(), testQueue(t, tg)
		rng := rand.New(rand.NewPCG(5, 6))
		x := enginetest.RandomArray(rng, nd.Float32, 64, 48, 3)
		spec := nd.Spec{Shape: x.Shape, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 5, 5), enginetest.RandomKernel(rng, false, 5, 5)}, Border: nd.Mirror}
		e, p := directEngine(t, tg, spec)
		defer e.Close()
		src := upload(t, dev, q, x)
		dst, err := gpu.NewArray(dev, p.Out, p.FullShape()...)
		if err != nil {
			t.Fatal(err)
		}
		defer dst.Free()
		for range 3 {
			if err := e.ExecuteDevice(context.Background(), dst, src); err != nil {
				t.Fatal(err)
			}
		}
		c := enginetest.Case{Name: "device arrays", Spec: spec, Input: x}
		if msg := c.Check(download(t, q, dst), c.Want()); msg != "" {
			t.Error(msg)
		}
		if err := e.ExecuteDevice(context.Background(), src, dst); err == nil {
			t.Error("swapped device arrays were accepted")
		}
		ms, err := e.TimeDevice(dst, src, 3)
		if err != nil || len(ms) != 3 || ms[0] <= 0 {
			t.Errorf("TimeDevice: %v, %v", ms, err)
		}
	})
}

// TestEngineConcurrent runs cases from 8 goroutines at once: each with
// engines of its own, and all through one shared engine.
func TestEngineConcurrent(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		tg.Optimised(t)
		cases := enginetest.OnGPU(enginetest.Random(9, 64))
		if tg.Sample {
			cases = engineCases(t, tg)[:48] // built by TestEngineTable already
		}
		run := func(c enginetest.Case) (nd.Array, error) { return runOn(tg, c, gpu.Options{}, gpu.NewDirect) }
		for _, f := range gputest.Spread(cases, 8, run) {
			t.Error(f)
		}

		// One engine, eight goroutines, different inputs.
		rng := rand.New(rand.NewPCG(7, 8))
		spec := nd.Spec{Shape: []int{33, 47}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, true, 5, 3)}, Border: nd.Wrap}
		e, p := directEngine(t, tg, spec)
		defer e.Close()
		var wg sync.WaitGroup
		errs := make(chan string, 8)
		for g := range 8 {
			input := enginetest.RandomArray(rng, nd.Float32, 33, 47)
			wg.Go(func() {
				c := enginetest.Case{Name: fmt.Sprintf("shared engine/%d", g), Spec: spec, Input: input}
				want := c.Want()
				for range 5 {
					dst, _ := nd.New(p.Out, p.FullShape()...)
					if err := e.Execute(context.Background(), dst, c.Input); err != nil {
						errs <- c.Name + ": " + err.Error()
						return
					}
					if msg := c.Check(dst, want); msg != "" {
						errs <- c.Name + ": " + msg
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	})
}

// TestEngineChecks: wrong arrays are argument errors, a cancelled context
// stops an execution, the engine stays usable after both, device arrays
// of the wrong shape are refused, and Close is final.
func TestEngineChecks(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		dev, q := tg.Device(), testQueue(t, tg)
		rng := rand.New(rand.NewPCG(3, 3))
		spec := nd.Spec{Shape: []int{6, 5}, In: nd.Uint8, Kernels: []nd.Kernel{{Shape: []int{3}, Weights: []float64{1, 2, 1}}}}
		e, _ := directEngine(t, tg, spec)
		x := enginetest.RandomArray(rng, nd.Uint8, 6, 5)
		good, _ := nd.New(nd.Uint8, 6, 5)
		var ae *nd.ArgumentError
		for name, args := range map[string][2]nd.Array{
			"input shape":  {good, enginetest.RandomArray(rng, nd.Uint8, 5, 6)},
			"input dtype":  {good, enginetest.RandomArray(rng, nd.Float32, 6, 5)},
			"output shape": {enginetest.RandomArray(rng, nd.Uint8, 6, 6), x},
			"output dtype": {enginetest.RandomArray(rng, nd.Int16, 6, 5), x},
		} {
			if err := e.Execute(context.Background(), args[0], args[1]); !errors.As(err, &ae) {
				t.Errorf("%s: %v", name, err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := e.Execute(ctx, good, x); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v", err)
		}
		c := enginetest.Case{Name: "after errors", Spec: spec, Input: x}
		if err := e.Execute(context.Background(), good, x); err != nil {
			t.Fatal(err)
		} else if msg := c.Check(good, c.Want()); msg != "" {
			t.Error(msg)
		}

		// The same on device arrays.
		src := upload(t, dev, q, x)
		dst, _ := gpu.NewArray(dev, nd.Uint8, 6, 5)
		defer dst.Free()
		if err := e.ExecuteDevice(context.Background(), dst, src); err != nil {
			t.Fatal(err)
		}
		if msg := c.Check(download(t, q, dst), c.Want()); msg != "" {
			t.Error("device arrays:", msg)
		}
		wrong, _ := gpu.NewArray(dev, nd.Uint8, 5, 6)
		defer wrong.Free()
		if err := e.ExecuteDevice(context.Background(), wrong, src); !errors.As(err, &ae) {
			t.Errorf("a 5×6 output for a 6×5 plan: %v", err)
		}
		if err := e.ExecuteDevice(context.Background(), dst, src); err != nil {
			t.Errorf("after a refused call: %v", err)
		}
		if !slices.Equal(src.Shape, []int{6, 5}) {
			t.Error("shape changed")
		}

		if err := e.Close(); err != nil {
			t.Error(err)
		}
		if err := e.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if err := e.Execute(context.Background(), good, x); !errors.Is(err, gpu.ErrClosed) {
			t.Errorf("after Close: %v", err)
		}
	})
}

// TestEngineEmpty: an empty output launches nothing.
func TestEngineEmpty(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		spec := nd.Spec{Shape: []int{0, 5}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3}, Weights: []float64{1, 2, 1}}}}
		c := enginetest.Case{Name: "empty", Spec: spec, Input: enginetest.RandomArray(rand.New(rand.NewPCG(1, 1)), nd.Float32, 0, 5)}
		got, err := runOn(tg, c, gpu.Options{}, gpu.NewDirect)
		if err != nil {
			t.Fatal(err)
		}
		if msg := c.Check(got, c.Want()); msg != "" {
			t.Error(msg)
		}
	})
}

// TestEngineTiming times the direct kernel on the timing workloads
// (gputest.TimingWorkloads: an 8192×8192 float32 image with a 7×7 kernel,
// …), data resident on the device, between the device's events; it runs
// only when NDCONV_TIMING=1 (a measurement, not a test) and logs the
// median of 21 runs.
func TestEngineTiming(t *testing.T) {
	problems := gputest.TimingProblems(t)
	ForEach(t, func(t *testing.T, tg *Target) {
		dev := tg.Device()
		for w, p := range problems {
			e, err := engineOn(tg, gpu.NewDirect, p, gpu.Options{})
			if err != nil {
				t.Fatal(err)
			}
			src, err := gpu.NewArray(dev, w.In, w.Shape...)
			if err != nil {
				t.Fatal(err)
			}
			dst, err := gpu.NewArray(dev, w.Out, p.FullShape()...)
			if err != nil {
				t.Fatal(err)
			}
			ms, err := e.TimeDevice(dst, src, 21)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("TIMING %s %s", tg.Name, w.Summary(p, ms))
			src.Free()
			dst.Free()
			e.Close()
		}
	})
}

// TestBankTiming times every decomposition of the direct method the tuner
// may choose — bank.cl's and tiled.cl's among them — beside the untuned
// choice, on output-bound banks (issue 29's and the timing set's), on
// device arrays: one line per decomposition, median of 11 runs.
// NDCONV_BANK_TIMING picks workloads by index. A measurement
// (NDCONV_TIMING=1), not a test; skipped on PoCL.
func TestBankTiming(t *testing.T) {
	gputest.RequireTiming(t)
	f32 := func(bank int, kernel []int, shape ...int) gputest.Workload {
		return gputest.Workload{In: nd.Float32, Out: nd.Float32, Shape: shape, Kernel: kernel, Bank: bank}
	}
	k3, k5, k333 := []int{3, 3}, []int{5, 5}, []int{3, 3, 3}
	workloads := []gputest.Workload{
		f32(64, k3, 2048, 2048), f32(32, k5, 2048, 2048), f32(16, k333, 256, 256, 256),
		f32(2, k3, 2048, 2048), f32(4, k3, 2048, 2048), f32(8, k3, 2048, 2048), f32(16, k3, 2048, 2048),
		f32(8, k5, 2048, 2048), f32(8, k3, 4096, 4096), f32(16, k3, 512, 512), f32(4, k333, 256, 256, 256),
		{In: nd.Uint8, Out: nd.Float32, Shape: []int{2048, 2048}, Kernel: k3, Bank: 16},
		{In: nd.Float32, Out: nd.Float32, Shape: []int{1024, 1024, 3}, Kernel: []int{3, 3, 1}, Bank: 8},
	}
	timeDirect(t, "BANKTIME", 1, pickWorkloads("NDCONV_BANK_TIMING", workloads), func(p *nd.Problem) []kernels.Tuning {
		return append([]kernels.Tuning{{}}, kernels.TuningCandidates(p, false)...)
	})
}

// TestLocalWeightsTiming times tiled.cl's decompositions with a bank's
// weights in local memory beside the untuned choice and the constant-bank
// bank groups the tuner chose before them (S000's 2×2 outputs in groups of
// 8), on compute-bound banks: S000's 256³ uint8 volume with banks of 8, 16
// and 32 7³ kernels (valid), a 2048² image with a bank of 8 7×7 kernels,
// and 256³ float32 volumes with banks of 8 and 16 5³ kernels. One line per
// decomposition, median of 11 runs on device arrays. NDCONV_LW_TIMING
// picks workloads by index and NDCONV_LW_SHAPE one decomposition by its
// description (for a profiler). A measurement (NDCONV_TIMING=1); skipped
// on PoCL.
func TestLocalWeightsTiming(t *testing.T) {
	gputest.RequireTiming(t)
	s000 := func(bank int) gputest.Workload {
		return gputest.Workload{In: nd.Uint8, Out: nd.Float32, Shape: []int{256, 256, 256}, Kernel: []int{7, 7, 7}, Bank: bank, Mode: nd.Valid}
	}
	workloads := []gputest.Workload{s000(8), s000(16), s000(32),
		{In: nd.Float32, Out: nd.Float32, Shape: []int{2048, 2048}, Kernel: []int{7, 7}, Bank: 8},
		{In: nd.Float32, Out: nd.Float32, Shape: []int{256, 256, 256}, Kernel: []int{5, 5, 5}, Bank: 8},
		{In: nd.Float32, Out: nd.Float32, Shape: []int{256, 256, 256}, Kernel: []int{5, 5, 5}, Bank: 16}}
	only := os.Getenv("NDCONV_LW_SHAPE")
	timeDirect(t, "LWTIME", 3, pickWorkloads("NDCONV_LW_TIMING", workloads), func(p *nd.Problem) []kernels.Tuning {
		tunings := []kernels.Tuning{{}}
		if len(p.Kernels) >= 16 {
			tunings = append(tunings, kernels.Tuning{Shape: kernels.TiledShape{TX: 32, TY: 4, RX: 2, RY: 2, BankGroup: 8, ZChunk: -1}})
		}
		for _, c := range kernels.TuningCandidates(p, false) {
			if s, ok := c.Shape.(kernels.TiledShape); ok && s.LocalWeights {
				tunings = append(tunings, c)
			}
		}
		if only != "" {
			tunings = slices.DeleteFunc(tunings, func(c kernels.Tuning) bool {
				s, ok := c.Shape.(kernels.TiledShape)
				return !ok || s.String() != only
			})
		}
		return tunings
	})
}

// pickWorkloads is workloads, or those whose indices the environment
// variable env lists (comma-separated).
func pickWorkloads(env string, workloads []gputest.Workload) []gputest.Workload {
	only := os.Getenv(env)
	if only == "" {
		return workloads
	}
	var some []gputest.Workload
	for _, f := range strings.Split(only, ",") {
		if i, err := strconv.Atoi(f); err == nil && i >= 0 && i < len(workloads) {
			some = append(some, workloads[i])
		}
	}
	return some
}

// timeDirect times the direct method on device arrays for each workload
// (its kernels drawn from seed) in each decomposition tunings gives for
// its problem: one line per decomposition, tagged, median of 11 runs.
// A decomposition the device cannot launch (too many registers for its
// work-group) is logged and skipped, as the tuner skips it. Skipped on
// PoCL.
func timeDirect(t *testing.T, tag string, seed uint64, workloads []gputest.Workload, tunings func(*nd.Problem) []kernels.Tuning) {
	ForEach(t, func(t *testing.T, tg *Target) {
		if tg.PoCL {
			t.Skip("timing on PoCL means nothing")
		}
		rng := rand.New(rand.NewPCG(seed, seed))
		for _, w := range workloads {
			p, err := w.Problem(rng)
			if err != nil {
				t.Fatal(err)
			}
			src, err := gpu.NewArray(tg.Device(), w.In, w.Shape...)
			if err != nil {
				t.Fatal(err)
			}
			dst, err := gpu.NewArray(tg.Device(), w.Out, p.FullShape()...)
			if err != nil {
				t.Fatal(err)
			}
			for _, tuning := range tunings(p) {
				e, err := engineOn(tg, gpu.NewDirect, p, gpu.Options{Tuning: tuning})
				if err != nil {
					t.Logf("%v %v bank %d, %v: %v", w.Shape, w.Kernel, w.Bank, tuning, err)
					continue
				}
				ms, err := e.TimeDevice(dst, src, 11)
				impl := e.Implementation()
				e.Close()
				if err != nil {
					t.Logf("%v %v bank %d, %v: %v", w.Shape, w.Kernel, w.Bank, tuning, err)
					continue
				}
				t.Logf("%s %v %v bank %d | %s | %s", tag, w.Shape, w.Kernel, w.Bank, impl, w.Summary(p, ms))
			}
			src.Free()
			dst.Free()
		}
	})
}

// TestBankZerosTiming times the untuned direct method on 2048² banks of 64
// 3×3 kernels whose zeros bank.cl treats three ways: none (every tap one
// fma), zero in every kernel at the corners (left out at compile time) and
// a quarter of the weights zero at random (each tap tests the lane's
// weight). A measurement (NDCONV_TIMING=1); skipped on PoCL.
func TestBankZerosTiming(t *testing.T) {
	gputest.RequireTiming(t)
	ForEach(t, func(t *testing.T, tg *Target) {
		if tg.PoCL {
			t.Skip("timing on PoCL means nothing")
		}
		rng := rand.New(rand.NewPCG(2, 2))
		src, err := gpu.NewArray(tg.Device(), nd.Float32, 2048, 2048)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Free()
		dst, err := gpu.NewArray(tg.Device(), nd.Float32, 2048, 2048, 64)
		if err != nil {
			t.Fatal(err)
		}
		defer dst.Free()
		for _, zeros := range []string{"none", "corners", "random"} {
			ks := make([]nd.Kernel, 64)
			for i := range ks {
				ks[i] = enginetest.RandomKernel(rng, zeros == "random", 3, 3)
				if zeros == "corners" {
					ks[i].Weights[0], ks[i].Weights[2], ks[i].Weights[6], ks[i].Weights[8] = 0, 0, 0, 0
				}
			}
			spec := nd.Spec{Shape: []int{2048, 2048}, In: nd.Float32, Kernels: ks}
			e, _ := directEngine(t, tg, spec)
			ms, err := e.TimeDevice(dst, src, 11)
			impl := e.Implementation()
			e.Close()
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(ms)
			t.Logf("BANKZEROS %s | %s | median %.3f ms (min %.3f)", zeros, impl, ms[len(ms)/2], ms[0])
		}
	})
}

// directEngine is an engine of the direct method for spec on the target
// (untuned), the test failing where either cannot be made.
func directEngine(t *testing.T, tg *Target, spec nd.Spec) (*gpu.Engine, *nd.Problem) {
	t.Helper()
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	e, err := engineOn(tg, gpu.NewDirect, p, gpu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e, p
}

// runTuned runs a case with an engine in a tuning.
func runTuned(tg *Target, make newEngine) func(c enginetest.Case, tuning kernels.Tuning) (nd.Array, error) {
	return func(c enginetest.Case, tuning kernels.Tuning) (nd.Array, error) {
		return runOn(tg, c, gpu.Options{Tuning: tuning}, make)
	}
}

// inTurn is checks giving each problem one of its decompositions, in
// turn, where the target samples (a specialisation takes PoCL seconds to
// build), else all of them.
func inTurn(tg *Target, checks func(*nd.Problem) ([]kernels.Tuning, bool)) func(*nd.Problem) ([]kernels.Tuning, bool) {
	if !tg.Sample {
		return checks
	}
	turn := 0
	return func(p *nd.Problem) ([]kernels.Tuning, bool) {
		all, image := checks(p)
		if len(all) == 0 {
			return nil, image
		}
		turn++
		return all[turn%len(all):][:1], image
	}
}

// TestEngineRolling runs the volumes, and a quarter of the images,
// through correlate_rolling and rows.cl in chunks of 1, 2 and 3 planes or
// rows (each chunk's first ones feed outputs of the chunk before, which it
// must drop) and checks them against the reference and the CPU engine's
// bits.
func TestEngineRolling(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		gputest.CheckTunings(t, decompositionCases(t, tg), kerneltest.RollingChecks, "direct", runTuned(tg, gpu.NewDirect))
	})
}

// TestEngineWindow runs the cases through tiled.cl's sliding window
// (re-staged and rolling).
func TestEngineWindow(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		gputest.CheckTunings(t, decompositionCases(t, tg), kerneltest.WindowChecks, "direct", runTuned(tg, gpu.NewDirect))
	})
}

// TestEngineBankGroups runs tiled.cl's bank groups (every group size
// dividing the bank; one in turn where the target samples) on
// enginetest.Banks and the table's banks.
func TestEngineBankGroups(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		gputest.CheckTunings(t, bankCases(t, tg), inTurn(tg, kerneltest.BankGroupChecks), "direct", runTuned(tg, gpu.NewDirect))
	})
}

// TestEngineLocalWeights runs tiled.cl with a bank's weights in local
// memory (whole banks and groups of a multiple of 4 kernels; one
// decomposition in turn where the target samples) on enginetest.Banks and
// the table's banks.
func TestEngineLocalWeights(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		gputest.CheckTunings(t, bankCases(t, tg), inTurn(tg, kerneltest.LocalWeightsChecks), "direct", runTuned(tg, gpu.NewDirect))
	})
}

// TestEngineBank runs bank.cl (kernel lanes of one and two kernels, small
// tiles; one decomposition in turn where the target samples) on
// enginetest.Banks and the table's banks.
func TestEngineBank(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		gputest.CheckTunings(t, bankCases(t, tg), inTurn(tg, kerneltest.BankChecks), "direct", runTuned(tg, gpu.NewDirect))
	})
}

// bankCases are enginetest.Banks and, where the target does not sample,
// every case of the table.
func bankCases(t *testing.T, tg *Target) []enginetest.Case {
	cases := enginetest.OnGPU(enginetest.Banks())
	if !tg.Sample {
		cases = append(engineCases(t, tg), cases...)
	}
	return cases
}

// TestEngineSepRing runs sepring.cl in narrow strips of few rounds on
// every case whose separable passes fuse.
func TestEngineSepRing(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		gputest.CheckTunings(t, decompositionCases(t, tg), kerneltest.SepRingChecks, "separable", runTuned(tg, gpu.NewSeparable))
	})
}

// TestEngineSep3 runs sep3.cl — the three passes of a 3-D separable
// correlation in one kernel — in small tiles and short segments on the
// 3-D separable set and every case of the table whose passes it runs.
// Every check fuses small problems too (gputest.FuseSmall): the zero
// tuning among them is sep3.cl's own decomposition.
func TestEngineSep3(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		set := enginetest.OnGPU(enginetest.Separable3D())
		if tg.Sample {
			set = tg.EveryNth(set, 2)
		}
		cases := append(set, decompositionCases(t, tg)...)
		gputest.CheckTunings(t, cases, inTurn(tg, gputest.FuseSmall(kerneltest.Sep3Checks)), "separable", runTuned(tg, gpu.NewSeparable))
	})
}

// TestEngineSepTile runs septile.cl — a separable correlation's fused X
// and Y passes in 2-D tiles staged whole — in small tiles and in
// NewSeparable's own choice on the 2-D separable set (every border and
// mode, channels, planes, banks, float64, small integers, zero taps,
// images smaller than a tile, S003's 31 × 31 taps) and, where the target
// does not sample, every case of the table whose passes fuse.
func TestEngineSepTile(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		cases := enginetest.OnGPU(enginetest.Separable2D())
		gputest.CheckPlannedFamily(t, cases, gpu.SeparableOptionsOn(tg.Device()), "septile")
		if !tg.Sample {
			cases = append(cases, engineCases(t, tg)...)
		}
		run := runTuned(tg, gpu.NewSeparable)
		gputest.CheckTunings(t, cases, inTurn(tg, kerneltest.SepTileChecks), "separable", run)
		// S003's 31 × 31 taps in NewSeparable's own tiles (the bench's).
		var s003 []enginetest.Case
		for _, c := range cases {
			if strings.HasPrefix(c.Name, "sep2/s003/") {
				s003 = append(s003, c)
			}
		}
		untuned := func(*nd.Problem) ([]kernels.Tuning, bool) { return []kernels.Tuning{{}}, false }
		gputest.CheckTunings(t, s003, untuned, "separable", run)
	})
}

// TestEngineDeviceAfter chains three engines on device arrays through a
// caller's queue alone, as CuPy and PyTorch callers do: the caller writes
// x; a direct engine makes y from x, a separable one z from y, the FFT
// engine (which waits on the host instead) w from z, each with
// ExecuteDeviceAfter, which returns before its work is done; then the
// caller reads y, z and w. Only the events order the engines' queues
// against the caller's, so a missing wait shows as a result computed from
// a half-written input. Caller queues are CUDA streams (plan orders work
// after them only on CUDA).
func TestEngineDeviceAfter(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		if tg.Backend != "cuda" {
			t.Skip("a caller's queue is a CUDA stream")
		}
		dev, caller := tg.Device(), testQueue(t, tg)
		rng := rand.New(rand.NewPCG(9, 10))
		n := 2048
		if tg.Short {
			n = 256
		}
		x := enginetest.RandomArray(rng, nd.Float32, n, n)
		direct := nd.Spec{Shape: x.Shape, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 15, 15)}, Border: nd.Reflect}
		sep := nd.Spec{Shape: x.Shape, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomFactors(rng, 31, 31)}, Border: nd.Wrap}
		fft := nd.Spec{Shape: x.Shape, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 9, 9)}, Border: nd.Mirror}
		type stage struct {
			spec   nd.Spec
			method string
			run    func(ctx context.Context, dst, src *gpu.Array, caller gpu.Queue) error
		}
		var stages []stage
		for _, s := range []struct {
			spec   nd.Spec
			method string
		}{{direct, "direct"}, {sep, "separable"}, {fft, "fft"}} {
			p, err := s.spec.Normalize()
			if err != nil {
				t.Fatal(err)
			}
			var run func(ctx context.Context, dst, src *gpu.Array, caller gpu.Queue) error
			switch s.method {
			case "direct", "separable":
				make := gpu.NewDirect
				if s.method == "separable" {
					make = gpu.NewSeparable
				}
				e, err := engineOn(tg, make, p, gpu.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				run = e.ExecuteDeviceAfter
			default:
				e, err := fftOn(tg, p, gpu.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				run = e.ExecuteDeviceAfter
			}
			stages = append(stages, stage{s.spec, s.method, run})
		}
		arrays := make([]*gpu.Array, len(stages)+1)
		for i := range arrays {
			a, err := gpu.NewArray(dev, nd.Float32, n, n)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Free()
			arrays[i] = a
		}
		for round := range 2 {
			// The caller's queue writes x (asynchronously where the
			// binding can), then the chain runs with no host wait.
			if err := caller.Write(arrays[0].Buf, 0, x.Bytes()); err != nil {
				t.Fatal(err)
			}
			for i, s := range stages {
				if err := s.run(context.Background(), arrays[i+1], arrays[i], caller); err != nil {
					t.Fatalf("round %d, %s: %v", round, s.method, err)
				}
			}
			got := make([]nd.Array, len(arrays))
			for i, a := range arrays {
				h, err := nd.New(nd.Float32, n, n)
				if err != nil {
					t.Fatal(err)
				}
				if err := caller.Read(h.Bytes(), a.Buf, 0); err != nil {
					t.Fatal(err)
				}
				got[i] = h
			}
			if err := caller.Finish(); err != nil {
				t.Fatal(err)
			}
			for i, s := range stages[:2] { // the exact methods: the CPU's bits
				c := enginetest.Case{Name: s.method, Spec: s.spec, Input: got[i]}
				if msg := gputest.SameBitsAsCPU(c, s.method, got[i+1]); msg != "" {
					t.Fatalf("round %d, %s after the caller's queue: %s", round, s.method, msg)
				}
			}
			c := enginetest.Case{Name: "fft", Spec: fft, Input: got[2]}
			if msg := gputest.CheckFFT(c, got[3]); msg != "" {
				t.Fatalf("round %d, fft after the caller's queue: %s", round, msg)
			}
			x = enginetest.RandomArray(rng, nd.Float32, n, n) // the next round's input
		}
	})
}
