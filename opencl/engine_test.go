package opencl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/internal/kerneltest"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// allCases reports whether the engine tests run every case, every build
// optimised: only with NDCONV_OPENCL_ALL=1, since building a
// specialisation takes about a second on PoCL and on NVIDIA's OpenCL alike
// (688 of them in the table and the random cases), and the program cache
// makes later runs fast.
func allCases() bool { return os.Getenv("NDCONV_OPENCL_ALL") == "1" }

// engineCases is the CPU engine's case table and seeded random cases.
// Where allCases is false it keeps the table's special groups (NaN and Inf,
// saturation, rounding, axes and channels, 4-D and 5-D, wide, tall and
// degenerate inputs), every third dtype pair and bank (every input and
// output type, both accumulators), every sixteenth of the rest, and 16
// random cases: about 100 specialisations, about 75 s optimised and 30 s
// unoptimised with cold caches on 2 cores (PoCL compiles one at a time),
// a few seconds once PoCL's cache holds them.
func engineCases(t *testing.T) []enginetest.Case {
	table, random := enginetest.OnGPU(enginetest.Table()), enginetest.OnGPU(enginetest.Random(6, 300))
	if allCases() {
		return append(table, random...)
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

// decompositionCases are the cases the tests of work decompositions
// (rolling, window, sepring, sep3) run: engineCases, of which every other
// one where allCases is false — those tests check how work is spread, which
// the table's dtypes and borders exercise the same way every few cases,
// and each case costs PoCL a program build per decomposition (cold caches
// in CI: the package ran past go test's 10 minutes).
func decompositionCases(t *testing.T) []enginetest.Case {
	return everyNth(engineCases(t), 2)
}

// everyNth is cases 0, n, 2n, … of cases, or all of them with
// NDCONV_OPENCL_ALL=1: a sample whose program builds PoCL can afford.
func everyNth(cases []enginetest.Case, n int) []enginetest.Case {
	if allCases() {
		return cases
	}
	var some []enginetest.Case
	for i, c := range cases {
		if i%n == 0 {
			some = append(some, c)
		}
	}
	return some
}

func specialCase(group string) bool {
	switch group {
	case "halves", "saturate", "nan-inf", "axes", "4d", "5d", "wide", "tall", "empty", "single-value", "zero-kernel", "tiny-weights-dropped":
		return true
	}
	return false
}

// runCases runs cases on two goroutines, so that one case's transfers and
// kernel overlap another's build (PoCL builds one program at a time), and
// reports each mismatch with the reference and each bit that differs from
// the CPU engine's same method ("direct" or "separable").
func runCases(t *testing.T, cases []enginetest.Case, method string, newFn func(*nd.Problem, EngineOptions) (*Engine, error)) {
	var failed atomic.Int64
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(cases) || failed.Load() > 20 {
					return
				}
				c := cases[i]
				got, err := runCase(c, newFn)
				if err != nil {
					t.Errorf("%s: %v", c.Name, err)
					failed.Add(1)
				} else if msg := c.Check(got, c.Want()); msg != "" {
					t.Errorf("%s: %s", c.Name, msg)
					failed.Add(1)
				} else if msg := gputest.SameBitsAsCPU(c, method, got); msg != "" {
					t.Errorf("%s: %s", c.Name, msg)
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 20 {
		t.Fatal("too many failures")
	}
}

// runCase executes one case on the device from host memory, with the
// engine newFn makes. It may run on any goroutine.
func runCase(c enginetest.Case, newFn func(*nd.Problem, EngineOptions) (*Engine, error)) (nd.Array, error) {
	return gputest.Run(c, func(p *nd.Problem) (*Engine, error) { return newFn(p, testOptions()) })
}

// TestEngineTable runs the case table and random cases on the device and
// compares with the float64 reference, as the CPU and CUDA engines' tests
// do. Its programs build optimised, as the product's do (on PoCL the
// package's other tests build theirs unoptimised unless
// NDCONV_OPENCL_ALL=1).
func TestEngineTable(t *testing.T) {
	dev := testDevice(t)
	optimisedBuilds(t, dev)
	cases := engineCases(t)
	runCases(t, cases, "direct", NewDirect)
	t.Logf("%d cases on %s; program cache %+v", len(cases), dev.Info().Name, dev.CacheStats())
}

// separableCases are the cases of engineCases whose kernels all have
// factors (given, or found rank-1), for the separable family.
func separableCases(t *testing.T) []enginetest.Case {
	var cases []enginetest.Case
	for _, c := range enginetest.OnGPU(append(enginetest.Table(), enginetest.Random(6, 300)...)) {
		p, err := c.Spec.Normalize()
		if err == nil && p.Separable() {
			cases = append(cases, c)
		}
	}
	return everyNth(cases, 6)
}

// TestEngineSeparable runs the separable family on every separable case
// (a sixth of them unless NDCONV_OPENCL_ALL=1) against the reference.
func TestEngineSeparable(t *testing.T) {
	testDevice(t)
	cases := separableCases(t)
	// Small problems fuse their passes in strips too (sepfused.cl, sep3.cl;
	// TestEngineSepTile runs septile.cl's tiles).
	runCases(t, cases, "separable", func(p *nd.Problem, opt EngineOptions) (*Engine, error) {
		opt.Tuning.FuseSmall = true
		return NewSeparable(p, opt)
	})
	t.Logf("%d separable cases", len(cases))
	p, err := (&nd.Spec{Shape: []int{4, 4}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rand.New(rand.NewPCG(1, 1)), false, 3, 3)}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSeparable(p, testOptions()); err == nil {
		t.Error("a dense kernel was accepted by the separable family")
	}
}

// concurrentCases are cases engineCases also runs, so that their programs
// are built once (both tests build optimised).
func concurrentCases(t *testing.T) []enginetest.Case {
	return engineCases(t)[:48]
}

// TestEngineConcurrent runs cases from 8 goroutines at once: each with
// engines of its own, and all through one shared engine.
func TestEngineConcurrent(t *testing.T) {
	optimisedBuilds(t, testDevice(t))
	cases := concurrentCases(t)
	run := func(c enginetest.Case) (nd.Array, error) { return runCase(c, NewDirect) }
	for _, f := range gputest.Spread(cases, 8, run) {
		t.Error(f)
	}

	// One engine, eight goroutines, different inputs.
	rng := rand.New(rand.NewPCG(7, 8))
	spec := nd.Spec{Shape: []int{33, 47}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, true, 5, 3)}, Border: nd.Wrap}
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewDirect(p, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	inputs := make([]nd.Array, 8)
	for i := range inputs {
		inputs[i] = enginetest.RandomArray(rng, nd.Float32, 33, 47)
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(inputs))
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := enginetest.Case{Name: fmt.Sprintf("shared engine/%d", g), Spec: spec, Input: inputs[g]}
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
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestEngineChecks: wrong arrays are argument errors, a cancelled context
// stops an execution, the engine stays usable after both, device buffers
// work, and Close is final.
func TestEngineChecks(t *testing.T) {
	dev := testDevice(t)
	rng := rand.New(rand.NewPCG(3, 3))
	spec := nd.Spec{Shape: []int{6, 5}, In: nd.Uint8, Kernels: []nd.Kernel{{Shape: []int{3}, Weights: []float64{1, 2, 1}}}}
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewDirect(p, testOptions())
	if err != nil {
		t.Fatal(err)
	}
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
	if e.KernelTime() <= 0 {
		t.Errorf("kernel time %v", e.KernelTime())
	}

	// The same on device buffers.
	q := testQueue(t, dev)
	src, _ := dev.AllocCopy(x.Bytes())
	defer src.Free()
	dst, _ := dev.Alloc(30)
	defer dst.Free()
	if err := e.ExecuteBuffers(context.Background(), dst, src); err != nil {
		t.Fatal(err)
	}
	got, _ := nd.New(nd.Uint8, 6, 5)
	if err := dst.Read(q, got.Bytes(), 0); err != nil {
		t.Fatal(err)
	}
	if msg := c.Check(got, c.Want()); msg != "" {
		t.Error("device buffers:", msg)
	}
	small, _ := dev.Alloc(29)
	defer small.Free()
	if err := e.ExecuteBuffers(context.Background(), small, src); !errors.As(err, &ae) {
		t.Errorf("a short output buffer: %v", err)
	}

	if err := e.Close(); err != nil {
		t.Error(err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := e.Execute(context.Background(), good, x); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// TestEngineEmpty: an empty output launches nothing.
func TestEngineEmpty(t *testing.T) {
	testDevice(t)
	spec := nd.Spec{Shape: []int{0, 5}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3}, Weights: []float64{1, 2, 1}}}}
	c := enginetest.Case{Name: "empty", Spec: spec, Input: enginetest.RandomArray(rand.New(rand.NewPCG(1, 1)), nd.Float32, 0, 5)}
	got, err := runCase(c, NewDirect)
	if err != nil {
		t.Fatal(err)
	}
	if msg := c.Check(got, c.Want()); msg != "" {
		t.Error(msg)
	}
}

// TestPrepareRefuses: what a device cannot run is refused before anything
// is built, with a message naming the device and the limit.
func TestPrepareRefuses(t *testing.T) {
	d := &Device{info: Info{Platform: 1, Device: 0, Name: "tiny-gpu", FP64: false, MaxWorkGroupSize: 128,
		MaxWorkItemSizes: [3]int{128, 128, 64}, LocalMemory: 16 << 10, MaxConstantBuffer: 64 << 10}}
	base := kernels.Launch{Family: "direct", Name: "correlate_direct", Local: [3]int{32, 4, 1}, Groups: [3]int{1, 1, 1}, Taps: []float64{1}, Outer: []int32{0}}
	var ue *UnsupportedError
	for name, tc := range map[string]struct {
		change func(*kernels.Launch)
		want   string
	}{
		"fp64":           {func(l *kernels.Launch) { l.Wide = true }, "cl_khr_fp64"},
		"group size":     {func(l *kernels.Launch) { l.Local = [3]int{32, 8, 1} }, "at most 128 work-items"},
		"group shape":    {func(l *kernels.Launch) { l.Local = [3]int{1, 1, 100} }, "per dimension"},
		"local memory":   {func(l *kernels.Launch) { l.LocalBytes = 20 << 10 }, "16384 bytes"},
		"constant taps":  {func(l *kernels.Launch) { l.Taps = make([]float64, 20000) }, "__constant"},
		"no work-groups": {func(l *kernels.Launch) { l.Groups = [3]int{0, 1, 1} }, "work size"},
	} {
		l := base
		tc.change(&l)
		_, err := d.Prepare(&l)
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an *UnsupportedError saying %q", name, err, tc.want)
		}
	}
	if err := fp64Error(d.info); !strings.Contains(err.Error(), "opencl:1:0 (tiny-gpu)") {
		t.Errorf("the fp64 error does not name the device: %v", err)
	}
}

// TestEngineTiming times the direct kernel on the timing workloads
// (gputest.TimingWorkloads), data resident on the device, from the queue's
// profiling counters; it runs only when NDCONV_TIMING=1 (a measurement,
// not a test) and logs the median of 21 runs.
func TestEngineTiming(t *testing.T) {
	problems := gputest.TimingProblems(t)
	dev := testDevice(t)
	for w, p := range problems {
		e, err := NewDirect(p, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		n, _ := nd.NumElements(w.Shape)
		src, err := dev.Alloc(n * w.In.Size())
		if err != nil {
			t.Fatal(err)
		}
		dst, err := dev.Alloc(n * w.Bank * w.Out.Size())
		if err != nil {
			t.Fatal(err)
		}
		var ms []float64
		for i := range 22 {
			if err := e.ExecuteBuffers(context.Background(), dst, src); err != nil {
				t.Fatal(err)
			}
			if i > 0 { // the first builds and warms up
				ms = append(ms, float64(e.KernelTime().Nanoseconds())/1e6)
			}
		}
		t.Logf("TIMING %s %s", dev.Info().Name, w.Summary(ms))
		src.Free()
		dst.Free()
		e.Close()
	}
}

// TestEngineRolling runs the volumes among the decomposition cases, and a
// quarter of the images, through correlate_rolling and rows.cl in chunks of 1, 2 and 3 planes or rows
// (each chunk's first ones feed outputs of the chunk before, which it must
// drop) and checks them against the reference and the CPU engine's bits.
func TestEngineRolling(t *testing.T) {
	testDevice(t)
	gputest.CheckTunings(t, decompositionCases(t), kerneltest.RollingChecks, "direct", runDirectTuned)
}

// TestEngineWindow runs the decomposition cases through tiled.cl's sliding window
// (re-staged and rolling) and checks them against the reference and the
// CPU engine's bits.
func TestEngineWindow(t *testing.T) {
	testDevice(t)
	gputest.CheckTunings(t, decompositionCases(t), kerneltest.WindowChecks, "direct", runDirectTuned)
}

// TestEngineBankGroups runs tiled.cl's bank groups on enginetest.Banks,
// one group size per case in turn (every size with NDCONV_OPENCL_ALL=1,
// which adds the table's banks), and checks them against the reference
// and the CPU engine's bits.
func TestEngineBankGroups(t *testing.T) {
	testDevice(t)
	cases := enginetest.OnGPU(enginetest.Banks())
	if allCases() {
		cases = append(engineCases(t), cases...)
	}
	gputest.CheckTunings(t, cases, inTurn(kerneltest.BankGroupChecks), "direct", runDirectTuned)
}

// TestEngineSepRing runs sepring.cl in narrow strips of few rounds on
// every decomposition case whose separable passes fuse.
func TestEngineSepRing(t *testing.T) {
	testDevice(t)
	gputest.CheckTunings(t, decompositionCases(t), kerneltest.SepRingChecks, "separable", runSeparableTuned)
}

// runDirectTuned runs a case with the direct method in a tuning.
func runDirectTuned(c enginetest.Case, tuning kernels.Tuning) (nd.Array, error) {
	opt := testOptions()
	opt.Tuning = tuning
	return gputest.Run(c, func(p *nd.Problem) (*Engine, error) { return NewDirect(p, opt) })
}

// runSeparableTuned runs a case with the separable method in a tuning.
func runSeparableTuned(c enginetest.Case, tuning kernels.Tuning) (nd.Array, error) {
	opt := testOptions()
	opt.Tuning = tuning
	return gputest.Run(c, func(p *nd.Problem) (*Engine, error) { return NewSeparable(p, opt) })
}

// inTurn is checks giving each problem one of its decompositions, in
// turn (a specialisation takes PoCL seconds to build), or all of them
// with NDCONV_OPENCL_ALL=1.
func inTurn(checks func(*nd.Problem) ([]kernels.Tuning, bool)) func(*nd.Problem) ([]kernels.Tuning, bool) {
	if allCases() {
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

// TestEngineSep3 runs sep3.cl — the three passes of a 3-D separable
// correlation in one kernel — in small tiles and short segments on the
// 3-D separable set and every case of the table whose passes it runs:
// each case in one of kerneltest.Sep3Checks' decompositions, in turn (a
// specialisation takes PoCL seconds to build), or in all of them with
// NDCONV_OPENCL_ALL=1.
func TestEngineSep3(t *testing.T) {
	testDevice(t)
	// Every check fuses small problems too (gputest.FuseSmall): the zero
	// tuning among them is sep3.cl's own decomposition, on the small
	// volumes too.
	// Every other case of the 3-D set: its builds dominated the package's
	// time with cold caches.
	set := everyNth(enginetest.OnGPU(enginetest.Separable3D()), 2)
	cases := append(set, decompositionCases(t)...)
	gputest.CheckTunings(t, cases, inTurn(gputest.FuseSmall(kerneltest.Sep3Checks)), "separable", runSeparableTuned)
}

// TestEngineSepTile runs septile.cl — a separable correlation's fused X
// and Y passes in 2-D tiles staged whole — on the 2-D separable set (every
// border and mode, channels, planes, banks, float64, small integers, zero
// taps, images smaller than a tile, S003's 31 × 31 taps) in small tiles
// and in NewSeparable's own choice: each case in one of
// kerneltest.SepTileChecks' decompositions, in turn (a specialisation takes
// PoCL about a second to build); with NDCONV_OPENCL_ALL=1 in all of them,
// and on the table's cases whose passes fuse too.
func TestEngineSepTile(t *testing.T) {
	dev := testDevice(t)
	cases := enginetest.OnGPU(enginetest.Separable2D())
	gputest.CheckPlannedFamily(t, cases, separableOptions(dev.Info(), kernels.Tuning{}), "septile")
	if allCases() {
		cases = append(cases, engineCases(t)...)
	}
	gputest.CheckTunings(t, cases, inTurn(kerneltest.SepTileChecks), "separable", runSeparableTuned)
	// S003's 31 × 31 taps in NewSeparable's own tiles (the bench's), with
	// whole tiles inside the image, whatever their turn gave them above.
	var s003 []enginetest.Case
	for _, c := range cases {
		if strings.HasPrefix(c.Name, "sep2/s003/") {
			s003 = append(s003, c)
		}
	}
	untuned := func(*nd.Problem) ([]kernels.Tuning, bool) { return []kernels.Tuning{{}}, false }
	gputest.CheckTunings(t, s003, untuned, "separable", runSeparableTuned)
}
