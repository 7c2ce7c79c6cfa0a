package plan

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/fft"
	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/opencl"
)

func TestParseDevice(t *testing.T) {
	good := map[string]Device{
		"": {Kind: "auto"}, "auto": {Kind: "auto"}, "CPU": {Kind: "cpu"}, "cuda": {Kind: "cuda"},
		"cuda:3": {Kind: "cuda", Index: 3}, "opencl": {Kind: "opencl", AnyOpenCL: true}, "opencl:0:0": {Kind: "opencl"}, "opencl:1:2": {Kind: "opencl", Platform: 1, Index: 2},
	}
	for s, want := range good {
		if got, err := ParseDevice(s); err != nil || got != want {
			t.Errorf("ParseDevice(%q) = %+v, %v; want %+v", s, got, err, want)
		}
	}
	for _, s := range []string{"tpu", "cpu:0", "cuda:-1", "cuda:x", "cuda:1:2", "opencl:1", "opencl:1:2:3", "auto:1"} {
		var ue *nd.UnsupportedError
		if _, err := ParseDevice(s); !errors.As(err, &ue) {
			t.Errorf("ParseDevice(%q) = %v, want an UnsupportedError", s, err)
		}
	}
}

func TestCosts(t *testing.T) {
	spec := nd.Spec{Shape: []int{100, 100}, In: nd.Float32, Kernels: []nd.Kernel{{Factors: [][]float64{make([]float64, 9), make([]float64, 9)}}}}
	for i := range 9 {
		spec.Kernels[0].Factors[0][i], spec.Kernels[0].Factors[1][i] = 1, 1
	}
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	// 81 taps plus overhead per output, against two passes of 9 + overhead.
	if d, s := DirectCost(p), SeparableCost(p); d != 100*100*(81+directOverhead) || s != 2*100*100*(9+passOverhead) {
		t.Errorf("direct %v, separable %v", d, s)
	}
	e, err := New(p, Options{})
	if err != nil || e.Method != Separable || e.Device.Kind != "cpu" {
		t.Errorf("auto chose %+v, %v", e, err)
	}
}

// TestAutoSkipsOpenCLOnCPU: where the only OpenCL device is a CPU (PoCL,
// as in CI), auto never chooses it, however large the problem — the CPU
// engine is faster there — and a plain "opencl" still resolves to a device.
func TestAutoSkipsOpenCLOnCPU(t *testing.T) {
	if _, ok := openCLGPU(); ok {
		t.Skip("this machine has an OpenCL GPU")
	}
	weights := make([]float64, 31*31)
	for i := range weights {
		weights[i] = 1 // every tap counts in the cost
	}
	spec := nd.Spec{Shape: []int{4096, 4096}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{31, 31}, Weights: weights}}}
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := autoDevice(p, Options{}); d.Kind == "opencl" {
		t.Errorf("auto chose %v, a CPU OpenCL device", d)
	}
	if d := ResolveOpenCL(); d.Kind != "opencl" || d.AnyOpenCL {
		t.Errorf("plain opencl resolves to %+v", d)
	}
}

func dense(shape []int, n int) nd.Spec {
	w := make([]float64, n)
	for i := range w {
		w[i] = float64(i%7) - 3 // every tap nonzero… mostly
		if w[i] == 0 {
			w[i] = 0.5
		}
	}
	return nd.Spec{Shape: shape, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{int(math.Sqrt(float64(n))), int(math.Sqrt(float64(n)))}, Weights: w}}}
}

// TestAutoFFT: auto takes FFT where its estimate is clearly below the
// exact methods' (large dense kernels), never for small kernels or
// separable ones it does not beat, never under Exact; --method fft on a
// float64 problem says why it cannot run.
func TestAutoFFT(t *testing.T) {
	// The SIMD direct method beats the FFT up to about 25×25 here; the
	// pure-Go loops (noasm) cross far lower.
	mid := Direct
	if !fft.Vectorised() {
		mid = FFT
	}
	for _, tc := range []struct {
		spec  nd.Spec
		exact bool
		want  Method
	}{
		{dense([]int{2048, 2048}, 31*31), false, FFT},
		{dense([]int{2048, 2048}, 31*31), true, Direct},
		{dense([]int{512, 512}, 3*3), false, Direct},
		{dense([]int{2048, 2048}, 15*15), false, mid},
		{dense([]int{2048, 2048}, 47*47), false, FFT},
	} {
		p, err := tc.spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(p, Options{Device: Device{Kind: "cpu"}, Exact: tc.exact})
		if err != nil || e.Method != tc.want {
			t.Errorf("%v k%v exact=%v: chose %v (%v), want %v; costs direct %.3g fft %.3g", tc.spec.Shape, tc.spec.Kernels[0].Shape, tc.exact, e.Method, err, tc.want, DirectCost(p), FFTCost(p))
		}
	}
	f := []float64{1, 2, 3, 2, 1, 4, 1, 2, 3, 2, 1}
	sep := nd.Spec{Shape: []int{2048, 2048}, In: nd.Float32, Kernels: []nd.Kernel{{Factors: [][]float64{f, f}}}}
	p, _ := sep.Normalize()
	if e, err := New(p, Options{Device: Device{Kind: "cpu"}}); err != nil || e.Method != Separable {
		t.Errorf("separable 11×11: chose %v, %v", e.Method, err)
	}
	small := dense([]int{64, 64}, 9)
	p, _ = small.Normalize()
	var ae *nd.ArgumentError
	if _, err := New(p, Options{Device: Device{Kind: "cpu"}, Method: FFT, Exact: true}); !errors.As(err, &ae) {
		t.Errorf("fft under exact: %v", err)
	}
	if e, err := New(p, Options{Device: Device{Kind: "cpu"}, Method: FFT}); err != nil || e.Method != FFT {
		t.Errorf("forced fft: %v, %v", e, err)
	}
	wide := dense([]int{64, 64}, 9)
	wide.In = nd.Float64
	p, _ = wide.Normalize()
	if _, err := New(p, Options{Device: Device{Kind: "cpu"}, Method: FFT}); err == nil || !strings.Contains(err.Error(), "float64") {
		t.Errorf("fft on float64: %v", err)
	}
}

// TestFFTOnEveryDevice: each backend offers FFT with the shared cost, so
// that auto weighs it the same way everywhere; forced on OpenCL (PoCL in
// CI) it prepares the OpenCL FFT engine, and Exact refuses it.
func TestFFTOnEveryDevice(t *testing.T) {
	for _, kind := range []string{"cpu", "cuda", "opencl"} {
		i := slices.IndexFunc(Implementations(), func(impl Implementation) bool { return impl.Device == kind && impl.Method == FFT })
		if i < 0 {
			t.Errorf("no FFT on %s", kind)
			continue
		}
		spec := dense([]int{2048, 2048}, 31*31)
		p, _ := spec.Normalize()
		if impl := Implementations()[i]; impl.Cost(p) != FFTCost(p) || impl.Why == nil {
			t.Errorf("FFT on %s: cost %v, want FFTCost %v; Why %v", kind, impl.Cost(p), FFTCost(p), impl.Why != nil)
		}
	}
	if opencl.Available() != nil {
		t.Skip("no OpenCL device")
	}
	small := dense([]int{64, 64}, 9)
	p, _ := small.Normalize()
	dev := Device{Kind: "opencl", AnyOpenCL: true}
	e, err := New(p, Options{Device: dev, Method: FFT, NoTuningCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, ok := e.Runner().(*gpu.FFTEngine); !ok || e.Method != FFT {
		t.Errorf("forced fft on opencl: %v, %T", e.Method, e.Runner())
	}
	if _, err := New(p, Options{Device: dev, Method: FFT, Exact: true}); err == nil {
		t.Error("fft under exact on opencl was accepted")
	}
}

// TestPlanarNative: a planar bank is written by the CPU's direct, FFT and
// (running whole) separable engines themselves (Executable.Planar); one
// kernel (no bank axis) leaves nothing to write planar.
func TestPlanarNative(t *testing.T) {
	bank := func(n int) *nd.Problem {
		spec := nd.Spec{Shape: []int{40, 30}, In: nd.Float32}
		for range n {
			spec.Kernels = append(spec.Kernels, nd.Kernel{Shape: []int{3, 3}, Weights: []float64{1, 2, 1, 2, 4, 2, 1, 2, 1}})
		}
		p, err := spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	cpu, _ := ParseDevice("cpu")
	for _, c := range []struct {
		kernels int
		method  Method
		want    bool
	}{{3, Direct, true}, {3, FFT, true}, {3, Separable, true}, {1, Direct, false}} {
		e, err := New(bank(c.kernels), Options{Device: cpu, Method: c.method, Planar: true})
		if err != nil {
			t.Fatal(err)
		}
		if e.Planar != c.want {
			t.Errorf("%d kernels by %v: Executable.Planar %v, want %v", c.kernels, c.method, e.Planar, c.want)
		}
	}
}
