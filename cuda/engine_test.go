package cuda

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/internal/kerneltest"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// engineCases is the CPU engine's whole case table and seeded random cases;
// -short (for compute-sanitizer) keeps every seventh.
func engineCases(t *testing.T) []enginetest.Case {
	cases := enginetest.OnGPU(append(enginetest.Table(), enginetest.Random(6, 300)...))
	if testing.Short() {
		var some []enginetest.Case
		for i := 0; i < len(cases); i += 7 {
			some = append(some, cases[i])
		}
		cases = some
	}
	return cases
}

// runCase executes one case on the GPU from host memory with the direct
// method.
func runCase(c enginetest.Case, opt EngineOptions) (nd.Array, error) {
	return runCaseWith(c, opt, NewDirect)
}

// runCaseWith executes one case on the GPU from host memory with the
// engine newEngine makes.
func runCaseWith(c enginetest.Case, opt EngineOptions, newEngine func(*nd.Problem, EngineOptions) (*Engine, error)) (nd.Array, error) {
	return gputest.Run(c, func(p *nd.Problem) (*Engine, error) { return newEngine(p, opt) })
}

// TestEngineTable runs every case of the CPU engine's table and the random
// cases on the GPU, with the direct method and, where the kernels are
// separable, the separable one, and compares with the float64 reference as
// the CPU engine's own test does — and with the CPU engine's same method bit
// for bit, since both add the same products in the same order.
func TestEngineTable(t *testing.T) {
	testDevice(t)
	cases := engineCases(t)
	failed, runs := 0, 0
	fail := func(format string, args ...any) {
		t.Errorf(format, args...)
		if failed++; failed > 20 {
			t.Fatal("too many failures")
		}
	}
	for _, c := range cases {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		type pair struct {
			name string
			gpu  func(*nd.Problem, EngineOptions) (*Engine, error)
		}
		methods := []pair{{"direct", NewDirect}}
		if p.Separable() {
			methods = append(methods, pair{"separable", NewSeparable})
		}
		for _, m := range methods {
			runs++
			// Small problems fuse their passes in strips too (sepfused.cl,
			// sep3.cl; TestEngineSepTile runs septile.cl's tiles).
			got, err := runCaseWith(c, EngineOptions{Tuning: kernels.Tuning{FuseSmall: true}}, m.gpu)
			if err != nil {
				fail("%s, %s: %v", c.Name, m.name, err)
				continue
			}
			if msg := c.Check(got, c.Want()); msg != "" {
				fail("%s, %s: %s", c.Name, m.name, msg)
				continue
			}
			if msg := gputest.SameBitsAsCPU(c, m.name, got); msg != "" {
				fail("%s: %s", c.Name, msg)
			}
		}
	}
	t.Logf("%d cases, %d runs on the GPU, each equal to the CPU engine's bits", len(cases), runs)
}

// TestEngineSlabs forces a memory budget of a few rows so that problems run
// in chunks along axis 0 through the pipeline, with halos gathered by every
// border rule, and checks them against the reference and the CPU engine's
// bits.
func TestEngineSlabs(t *testing.T) {
	testDevice(t)
	rng := rand.New(rand.NewPCG(3, 4))
	n := 0
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
				var kernels []nd.Kernel
				for range bank {
					if separable {
						kernels = append(kernels, enginetest.RandomFactors(rng, kshape...))
					} else {
						kernels = append(kernels, enginetest.RandomKernel(rng, true, kshape...))
					}
				}
				spec := nd.Spec{Shape: shape, In: nd.Uint16, Out: nd.Float32, Kernels: kernels, Border: border, CVal: 7.5, Mode: mode,
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
				method, newEngine := "direct", NewDirect
				if separable {
					method, newEngine = "separable", NewSeparable
					c.Name += "/separable"
				}
				got, err := runCaseWith(c, EngineOptions{MemoryBudget: rowBytes*3 + int64(kshape[0])*rowBytes}, newEngine)
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
		}
	}
	// A budget below one row and its halo is an error, not a crash.
	c := enginetest.Case{Name: "tiny", Spec: nd.Spec{Shape: []int{8, 8}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 3, 3)}},
		Input: enginetest.RandomArray(rng, nd.Float32, 8, 8)}
	if _, err := runCase(c, EngineOptions{MemoryBudget: 16}); err == nil {
		t.Error("a 16-byte budget ran")
	}
}

// TestEngineDeviceArrays chains work on device arrays and compares with
// the host path.
func TestEngineDeviceArrays(t *testing.T) {
	dev := testDevice(t)
	rng := rand.New(rand.NewPCG(5, 6))
	x := enginetest.RandomArray(rng, nd.Float32, 64, 48, 3)
	spec := nd.Spec{Shape: x.Shape, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 5, 5), enginetest.RandomKernel(rng, false, 5, 5)}, Border: nd.Mirror}
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewDirect(p, EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src, err := Upload(dev, x)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Free()
	dst, err := NewArray(dev, p.Out, p.FullShape()...)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Free()
	for range 3 {
		if err := e.ExecuteDevice(context.Background(), dst, src); err != nil {
			t.Fatal(err)
		}
	}
	got, err := dst.Download()
	if err != nil {
		t.Fatal(err)
	}
	c := enginetest.Case{Name: "device arrays", Spec: spec, Input: x}
	if msg := c.Check(got, c.Want()); msg != "" {
		t.Error(msg)
	}
	if err := e.ExecuteDevice(context.Background(), src, dst); err == nil {
		t.Error("swapped device arrays were accepted")
	}
}

// TestEngineConcurrent runs cases from 8 goroutines on one device at once.
func TestEngineConcurrent(t *testing.T) {
	testDevice(t)
	cases := enginetest.OnGPU(enginetest.Random(9, 64))
	run := func(c enginetest.Case) (nd.Array, error) { return runCase(c, EngineOptions{}) }
	for _, f := range gputest.Spread(cases, 8, run) {
		t.Error(f)
	}
}

// TestEngineInputChecks checks ExecuteDevice's shape checks and that a plan
// is reusable after an error.
func TestEngineInputChecks(t *testing.T) {
	dev := testDevice(t)
	p, err := (&nd.Spec{Shape: []int{4, 5}, In: nd.Uint8, Kernels: []nd.Kernel{{Shape: []int{3}, Weights: []float64{1, 2, 1}}}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewDirect(p, EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	wrong, _ := NewArray(dev, nd.Uint8, 5, 4)
	defer wrong.Free()
	right, _ := NewArray(dev, nd.Uint8, 4, 5)
	defer right.Free()
	if err := e.ExecuteDevice(context.Background(), right, wrong); err == nil {
		t.Error("a 5×4 input was accepted for a 4×5 plan")
	}
	out, _ := NewArray(dev, nd.Uint8, 4, 5)
	defer out.Free()
	if err := e.ExecuteDevice(context.Background(), out, right); err != nil {
		t.Error(err)
	}
	if !slices.Equal(right.Shape, []int{4, 5}) {
		t.Error("shape changed")
	}
}

// TestEngineTiming times the direct kernel on the timing workloads
// (gputest.TimingWorkloads: an 8192×8192 float32 image with a 7×7 kernel,
// …), data resident on the device, with CUDA events; it runs only when
// NDCONV_TIMING=1 (a measurement, not a test) and logs the median.
func TestEngineTiming(t *testing.T) {
	problems := gputest.TimingProblems(t)
	dev := testDevice(t)
	for w, p := range problems {
		e, err := NewDirect(p, EngineOptions{})
		if err != nil {
			t.Fatal(err)
		}
		src, err := NewArray(dev, w.In, w.Shape...)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := NewArray(dev, w.Out, p.FullShape()...)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.ExecuteDevice(context.Background(), dst, src); err != nil { // compile, warm up
			t.Fatal(err)
		}
		start, _ := dev.NewEvent()
		stop, _ := dev.NewEvent()
		var ms []float64
		for range 21 {
			start.Record(e.stream)
			pr, err := e.method.prepare(e, p, src.Buf.Ptr(), dst.Buf.Ptr(), [2]*Buffer{})
			if err == nil {
				err = pr.run()
			}
			if err != nil {
				t.Fatal(err)
			}
			stop.Record(e.stream)
			stop.Synchronize()
			pr.free()
			m, _ := stop.MillisecondsSince(start)
			ms = append(ms, float64(m))
		}
		t.Logf("TIMING %s", w.Summary(ms))
		start.Close()
		stop.Close()
		src.Free()
		dst.Free()
		e.Close()
	}
}

// TestEngineRolling runs the table's volumes, and a quarter of its images,
// through correlate_rolling in chunks of 1, 2 and 3 planes or rows (each
// chunk's first ones feed outputs of the chunk before, which it must drop)
// and checks them against the reference and the CPU engine's bits.
func TestEngineRolling(t *testing.T) {
	testDevice(t)
	gputest.CheckTunings(t, engineCases(t), kerneltest.RollingChecks, "direct", func(c enginetest.Case, tuning kernels.Tuning) (nd.Array, error) {
		return runCase(c, EngineOptions{Tuning: tuning})
	})
}

// TestEngineWindow runs the cases through tiled.cl's sliding window
// (re-staged and rolling) and checks them against the reference and the
// CPU engine's bits.
func TestEngineWindow(t *testing.T) {
	testDevice(t)
	gputest.CheckTunings(t, engineCases(t), kerneltest.WindowChecks, "direct", func(c enginetest.Case, tuning kernels.Tuning) (nd.Array, error) {
		return runCase(c, EngineOptions{Tuning: tuning})
	})
}

// TestEngineBankGroups runs tiled.cl's bank groups (every group size
// dividing the bank) on the cases with banks and enginetest.Banks, and
// checks them against the reference and the CPU engine's bits.
func TestEngineBankGroups(t *testing.T) {
	testDevice(t)
	cases := append(engineCases(t), enginetest.OnGPU(enginetest.Banks())...)
	gputest.CheckTunings(t, cases, kerneltest.BankGroupChecks, "direct", func(c enginetest.Case, tuning kernels.Tuning) (nd.Array, error) {
		return runCase(c, EngineOptions{Tuning: tuning})
	})
}

// TestEngineSepRing runs sepring.cl in narrow strips of few rounds on
// every case whose separable passes fuse.
func TestEngineSepRing(t *testing.T) {
	testDevice(t)
	gputest.CheckTunings(t, engineCases(t), kerneltest.SepRingChecks, "separable", func(c enginetest.Case, tuning kernels.Tuning) (nd.Array, error) {
		return runCaseWith(c, EngineOptions{Tuning: tuning}, NewSeparable)
	})
}

// TestEngineSep3 runs sep3.cl — the three passes of a 3-D separable
// correlation in one kernel — in small tiles and short segments on the
// 3-D separable set and every case of the table whose passes it runs.
func TestEngineSep3(t *testing.T) {
	testDevice(t)
	// Every check fuses small problems too (gputest.FuseSmall): the zero
	// tuning among them is sep3.cl's own decomposition, on the small
	// volumes too.
	cases := append(enginetest.OnGPU(enginetest.Separable3D()), engineCases(t)...)
	gputest.CheckTunings(t, cases, gputest.FuseSmall(kerneltest.Sep3Checks), "separable", func(c enginetest.Case, tuning kernels.Tuning) (nd.Array, error) {
		return runCaseWith(c, EngineOptions{Tuning: tuning}, NewSeparable)
	})
}

// TestEngineSepTile runs septile.cl — a separable correlation's fused X
// and Y passes in 2-D tiles staged whole — in small tiles and in
// NewSeparable's own choice on the 2-D separable set (every border and
// mode, channels, planes, banks, float64, small integers, zero taps,
// images smaller than a tile, S003's 31 × 31 taps) and every case of the
// table whose passes fuse.
func TestEngineSepTile(t *testing.T) {
	testDevice(t)
	gputest.CheckPlannedFamily(t, enginetest.OnGPU(enginetest.Separable2D()), separableOptions(kernels.Tuning{}), "septile")
	cases := append(enginetest.OnGPU(enginetest.Separable2D()), engineCases(t)...)
	gputest.CheckTunings(t, cases, kerneltest.SepTileChecks, "separable", func(c enginetest.Case, tuning kernels.Tuning) (nd.Array, error) {
		return runCaseWith(c, EngineOptions{Tuning: tuning}, NewSeparable)
	})
}
