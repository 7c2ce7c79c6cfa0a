package plan

import (
	"errors"
	"testing"

	"github.com/ndconv/ndconv/nd"
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
	if d := autoDevice(p); d.Kind == "opencl" {
		t.Errorf("auto chose %v, a CPU OpenCL device", d)
	}
	if d := ResolveOpenCL(); d.Kind != "opencl" || d.AnyOpenCL {
		t.Errorf("plain opencl resolves to %+v", d)
	}
}
