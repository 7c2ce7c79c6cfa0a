package ndconv_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/opencl"
	"github.com/ndconv/ndconv/plan"
)

var ctx = context.Background()

func randomFloats(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.Float64()*2 - 1
	}
	return x
}

func closeTo(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func mustArray(t *testing.T) func(ndconv.Array, error) ndconv.Array {
	return func(a ndconv.Array, err error) ndconv.Array {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
}

// TestLinearity: filtering a·x + b·y equals a·filter(x) + b·filter(y) for
// every border that is linear (constant only with cval 0).
func TestLinearity(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 20 {
		shape := []int{3 + rng.IntN(10), 3 + rng.IntN(10)}
		n := shape[0] * shape[1]
		x, y := randomFloats(rng, n), randomFloats(rng, n)
		a, b := rng.Float64()*4-2, rng.Float64()*4-2
		mix := make([]float64, n)
		for i := range mix {
			mix[i] = a*x[i] + b*y[i]
		}
		k := enginetest.RandomKernel(rng, trial%2 == 0, 1+rng.IntN(5), 1+rng.IntN(5))
		opt := ndconv.Options{Border: ndconv.Border(trial % 5), Mode: ndconv.Mode(trial % 3)}
		fx, _, err := ndconv.CorrelateSlice(ctx, x, shape, opt, k)
		if err != nil {
			if opt.Mode == ndconv.Valid {
				continue
			}
			t.Fatal(err)
		}
		fy, _, _ := ndconv.CorrelateSlice(ctx, y, shape, opt, k)
		fm, _, _ := ndconv.CorrelateSlice(ctx, mix, shape, opt, k)
		sum := make([]float64, len(fx))
		for i := range sum {
			sum[i] = a*fx[i] + b*fy[i]
		}
		closeTo(t, "linearity", fm, sum, 1e-12)
	}
}

// TestConvolveIsFlippedCorrelate checks DESIGN §1's relation from the
// outside: convolve(w, o) = correlate(flip(w), −o − (k even)).
func TestConvolveIsFlippedCorrelate(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := range 40 {
		k := []int{1 + rng.IntN(6), 1 + rng.IntN(6)}
		w := enginetest.RandomKernel(rng, false, k...)
		flipped := ndconv.NewKernel(k, slices.Clone(w.Weights))
		slices.Reverse(flipped.Weights)
		o := []int{rng.IntN(k[0]) - k[0]/2, rng.IntN(k[1]) - k[1]/2}
		o2 := []int{-o[0] - (1 - k[0]%2), -o[1] - (1 - k[1]%2)}
		x := randomFloats(rng, 8*9)
		border := ndconv.Border(trial % 5)
		conv, _, err := ndconv.ConvolveSlice(ctx, x, []int{8, 9}, ndconv.Options{Border: border, CVal: 1.5, Origin: o}, w)
		if err != nil {
			t.Fatal(err)
		}
		corr, _, err := ndconv.CorrelateSlice(ctx, x, []int{8, 9}, ndconv.Options{Border: border, CVal: 1.5, Origin: o2}, flipped)
		if err != nil {
			t.Fatal(err)
		}
		closeTo(t, "convolve vs flipped correlate", conv, corr, 1e-12)
	}
}

// TestSeparableEqualsFull: explicit factors and their dense outer product
// agree within float32 tolerance, whichever method runs, including the
// constant border with cval ≠ 0.
func TestSeparableEqualsFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for trial := range 30 {
		shape := []int{4 + rng.IntN(8), 4 + rng.IntN(8), 1 + rng.IntN(4)}
		x := make([]float32, shape[0]*shape[1]*shape[2])
		for i := range x {
			x[i] = float32(rng.Float64()*100 - 50)
		}
		sep := enginetest.RandomFactors(rng, 1+rng.IntN(7), 1+rng.IntN(7), 1+rng.IntN(3))
		dense := ndconv.NewKernel(sep.Shape, sep.Dense())
		opt := ndconv.Options{Border: ndconv.Border(trial % 5), CVal: 3.25, Mode: ndconv.Mode(trial % 3), Method: ndconv.Separable}
		a, _, err := ndconv.CorrelateSlice(ctx, x, shape, opt, sep)
		if err != nil {
			if opt.Mode == ndconv.Valid {
				continue
			}
			t.Fatal(err)
		}
		opt.Method = ndconv.Direct
		b, _, err := ndconv.CorrelateSlice(ctx, x, shape, opt, dense)
		if err != nil {
			t.Fatal(err)
		}
		closeTo(t, "separable vs direct", f64(a), f64(b), 2e-5*float64(len(dense.Weights)))
	}
}

func f64(s []float32) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}

// TestBankEqualsSeparateCalls: out[..., i] of a bank is, to the bit, the
// output of kernel i alone.
func TestBankEqualsSeparateCalls(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	in := enginetest.RandomArray(rng, nd.Uint8, 12, 13, 5)
	var bank []ndconv.Kernel
	for range 4 {
		bank = append(bank, enginetest.RandomKernel(rng, true, 3, 4, 2))
	}
	opt := ndconv.Options{Border: ndconv.Mirror, DType: ndconv.Float32}
	all := mustArray(t)(ndconv.Correlate(ctx, in, opt, bank...))
	if !slices.Equal(all.Shape, []int{12, 13, 5, 4}) {
		t.Fatalf("bank shape %v", all.Shape)
	}
	allData := all.Data.([]float32)
	for i, k := range bank {
		one := mustArray(t)(ndconv.Correlate(ctx, in, opt, k)).Data.([]float32)
		for v := range one {
			if one[v] != allData[v*4+i] {
				t.Fatalf("kernel %d, voxel %d: alone %v, in the bank %v", i, v, one[v], allData[v*4+i])
			}
		}
	}
}

// TestPlanReuse: a plan runs repeatedly into the same output without
// allocating its temporaries again.
func TestPlanReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	in := enginetest.RandomArray(rng, nd.Uint16, 300, 200)
	for _, method := range []ndconv.Method{ndconv.Direct, ndconv.Separable} {
		p, err := ndconv.NewPlan(ndconv.Correlation, in.Shape, in.DType(), ndconv.Options{Method: method, DType: ndconv.Float32},
			ndconv.SeparableKernel([]float64{1, 2, 3, 2, 1}, []float64{1, -1, 2}))
		if err != nil {
			t.Fatal(err)
		}
		if p.Method() != method {
			t.Fatalf("plan runs %v, want %v", p.Method(), method)
		}
		out := mustArray(t)(p.Execute(ctx, ndconv.Array{}, in))
		first := slices.Clone(out.Data.([]float32))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 5 {
			if _, err := p.Execute(ctx, out, in); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		// Goroutines cost a little; a temporary as large as the image would
		// cost 240 KB per call.
		if grown := after.TotalAlloc - before.TotalAlloc; grown > 5*16<<10 {
			t.Errorf("%v: 5 executions allocated %d bytes", method, grown)
		}
		if !slices.Equal(first, out.Data.([]float32)) {
			t.Errorf("%v: a second execution changed the result", method)
		}
	}
}

func TestPlanMismatch(t *testing.T) {
	k := ndconv.NewKernel([]int{3}, []float64{1, 2, 1})
	p, err := ndconv.NewPlan(ndconv.Correlation, []int{10}, ndconv.Float32, ndconv.Options{}, k)
	if err != nil {
		t.Fatal(err)
	}
	wrongType, _ := nd.New(nd.Float64, 10)
	wrongShape, _ := nd.New(nd.Float32, 11)
	good, _ := nd.New(nd.Float32, 10)
	for name, call := range map[string]func() error{
		"input dtype":  func() error { _, err := p.Execute(ctx, ndconv.Array{}, wrongType); return err },
		"input shape":  func() error { _, err := p.Execute(ctx, ndconv.Array{}, wrongShape); return err },
		"output shape": func() error { _, err := p.Execute(ctx, wrongShape, good); return err },
		"broken array": func() error {
			_, err := p.Execute(ctx, ndconv.Array{}, ndconv.Array{Shape: []int{10}, Data: []float32{1}})
			return err
		},
		"unknown data": func() error {
			_, err := p.Execute(ctx, ndconv.Array{}, ndconv.Array{Shape: []int{1}, Data: []int64{1}})
			return err
		},
	} {
		if err := call(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestCancel(t *testing.T) {
	in, _ := nd.New(nd.Float32, 512, 512)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := ndconv.Correlate(cancelled, in, ndconv.Options{}, ndconv.NewKernel([]int{5, 5}, make([]float64, 25)))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call returned %v", err)
	}
}

func TestErrorsAreTyped(t *testing.T) {
	in, _ := nd.New(nd.Float32, 4, 4)
	k := ndconv.NewKernel([]int{3}, []float64{1, 2, 1})
	cases := map[string]struct {
		opt    ndconv.Options
		target any
	}{
		"origin":    {ndconv.Options{Origin: []int{5}}, new(*nd.ArgumentError)},
		"device":    {ndconv.Options{Device: "tpu"}, new(*nd.UnsupportedError)},
		"cuda":      {ndconv.Options{Device: "cuda:0"}, new(*plan.UnavailableError)},
		"fft":       {ndconv.Options{Method: ndconv.FFT}, nil},
		"fft-exact": {ndconv.Options{Method: ndconv.FFT, Exact: true}, new(*nd.ArgumentError)},
		"separable": {ndconv.Options{Method: ndconv.Separable}, nil},
	}
	for name, c := range cases {
		_, err := ndconv.Correlate(ctx, in, c.opt, k)
		if c.target == nil {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || !errors.As(err, c.target) {
			t.Errorf("%s: got %v (%T)", name, err, err)
		}
	}
	notRank1 := ndconv.NewKernel([]int{2, 2}, []float64{1, 0, 0, 1})
	if _, err := ndconv.Correlate(ctx, in, ndconv.Options{Method: ndconv.Separable}, notRank1); err == nil {
		t.Error("separable method accepted a rank-2 kernel")
	}
	if _, _, err := ndconv.CorrelateSlice(ctx, []uint8{1, 2, 3}, []int{3}, ndconv.Options{DType: ndconv.Float32}, k); err == nil {
		t.Error("CorrelateSlice accepted an output dtype its result cannot hold")
	}
}

// TestPlannerChoice: the cost model picks separable for a large rank-1
// kernel and direct for a small one (up to about 8×8) or a kernel that is
// not rank-1.
func TestPlannerChoice(t *testing.T) {
	g := []float64{1, 4, 6, 4, 1, 2, 3, 5, 1, 2, 7}
	for _, c := range []struct {
		k    ndconv.Kernel
		want ndconv.Method
	}{
		{ndconv.SeparableKernel(g, g), ndconv.Separable},
		{ndconv.NewKernel([]int{11, 11}, ndconv.SeparableKernel(g, g).Dense()), ndconv.Separable},
		{ndconv.SeparableKernel(g[:7], g[:7]), ndconv.Direct},
		{ndconv.SeparableKernel([]float64{1, 2, 1}, []float64{1, 2, 1}), ndconv.Direct},
		{ndconv.NewKernel([]int{2, 2}, []float64{1, 0, 0, 1}), ndconv.Direct},
	} {
		p, err := ndconv.NewPlan(ndconv.Correlation, []int{100, 100}, ndconv.Float32, ndconv.Options{}, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if p.Method() != c.want {
			t.Errorf("kernel %v: planner chose %v, want %v", c.k.Shape, p.Method(), c.want)
		}
	}
}

// TestConcurrentCalls: one-shot calls from many goroutines at once give the
// results of the same calls made one after another (run with -race).
func TestConcurrentCalls(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	k := enginetest.RandomKernel(rng, false, 5, 5)
	var inputs []ndconv.Array
	var want [][]float32
	for range 8 {
		in := enginetest.RandomArray(rng, nd.Float32, 64, 80)
		inputs = append(inputs, in)
		out := mustArray(t)(ndconv.Correlate(ctx, in, ndconv.Options{}, k))
		want = append(want, out.Data.([]float32))
	}
	errs := make(chan error, len(inputs))
	got := make([][]float32, len(inputs))
	for i, in := range inputs {
		go func() {
			out, err := ndconv.Correlate(ctx, in, ndconv.Options{}, k)
			if err == nil {
				got[i] = out.Data.([]float32)
			}
			errs <- err
		}()
	}
	for range inputs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i := range inputs {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("call %d: concurrent result differs", i)
		}
	}
}

// TestPlanClose: Close releases the plan (on an OpenCL device, where one
// is present, its engine); executing a closed plan is ErrClosed; closing
// twice does nothing; one-shot calls close their plan themselves.
func TestPlanClose(t *testing.T) {
	ctx := context.Background()
	src, err := nd.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	k := ndconv.NewKernel([]int{1, 3}, []float64{1, 2, 1})
	devices := []string{"cpu"}
	if opencl.Available() == nil {
		devices = append(devices, "opencl")
	}
	for _, dev := range devices {
		d := dev
		p, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, ndconv.Float32, ndconv.Options{Device: dev}, k)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		want, err := p.Execute(ctx, ndconv.Array{}, src)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if err := p.Close(); err != nil {
			t.Errorf("%s: Close: %v", d, err)
		}
		if err := p.Close(); err != nil {
			t.Errorf("%s: second Close: %v", d, err)
		}
		if _, err := p.Execute(ctx, ndconv.Array{}, src); !errors.Is(err, ndconv.ErrClosed) {
			t.Errorf("%s: executing a closed plan: %v", d, err)
		}
		got, err := ndconv.Correlate(ctx, src, ndconv.Options{Device: dev}, k)
		if err != nil || !slices.Equal(got.Data.([]float32), want.Data.([]float32)) {
			t.Errorf("%s: one-shot call: %v, %v against %v", d, err, got.Data, want.Data)
		}
	}
}

// TestPrewarmAndChoice: Prewarm takes the device names NewPlan takes (a
// bad one is an error, the CPU starts nothing); a plan made meanwhile runs,
// and says why auto put it where it runs — and nothing where the device
// was named.
func TestPrewarmAndChoice(t *testing.T) {
	if _, err := ndconv.Prewarm("tpu"); err == nil {
		t.Error("Prewarm(tpu) did not fail")
	}
	for _, device := range []string{"cpu", "auto"} {
		w, err := ndconv.Prewarm(device)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ndconv.NewPlan(ndconv.Correlation, []int{32, 32}, ndconv.Float32, ndconv.Options{Device: device}, ndconv.NewKernel([]int{3}, []float64{1, 2, 1}))
		if err != nil {
			t.Fatal(err)
		}
		src, _ := nd.New(nd.Float32, 32, 32)
		if _, err := p.Execute(ctx, ndconv.Array{}, src); err != nil {
			t.Error(err)
		}
		choice := p.DeviceChoice()
		if device == "cpu" && choice != "" || device == "auto" && (len(choice) < 6 || choice[:6] != "auto: ") {
			t.Errorf("%s: choice %q", device, choice)
		}
		p.Close()
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	}
}
