package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestGemmOffered: the gemm method is CUDA's alone — asked for on the CPU
// or OpenCL, the planner says why it is not offered; on CUDA it is
// offered for the problems kernels.GemmWhy takes (with the reason for the
// others), never under --exact, and auto does not choose it.
func TestGemmOffered(t *testing.T) {
	if m, err := ParseMethod("gemm"); err != nil || m != Gemm || m.Exact() {
		t.Fatalf("ParseMethod(gemm) = %v, %v (exact %v)", m, err, m.Exact())
	}
	bank := dense([]int{256, 256}, 7*7)
	for range 31 {
		bank.Kernels = append(bank.Kernels, bank.Kernels[0])
	}
	p, err := bank.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"cpu", "opencl"} {
		_, _, err := choose(p, kind, Options{Method: Gemm})
		if err == nil || !strings.Contains(err.Error(), "CUDA's tensor cores") {
			t.Errorf("gemm on %s: %v", kind, err)
		}
	}
	var ae *nd.ArgumentError
	if _, err := New(p, Options{Device: Device{Kind: "cpu"}, Method: Gemm}); !errors.As(err, &ae) || !strings.Contains(err.Error(), "not on cpu") {
		t.Errorf("New gemm on cpu: %v", err)
	}
	if _, err := New(p, Options{Device: Device{Kind: "cpu"}, Method: Gemm, Exact: true}); !errors.As(err, &ae) || !strings.Contains(err.Error(), "--exact") {
		t.Errorf("gemm under exact: %v", err)
	}
	impl, _, err := choose(p, "cuda", Options{Method: Gemm})
	if err != nil || impl.Method != Gemm {
		t.Errorf("gemm on cuda: %v, %v", impl, err)
	}
	if impl, _, err := choose(p, "cuda", Options{}); err != nil || impl.Method == Gemm {
		t.Errorf("auto on cuda chose %v (%v)", impl.Method, err)
	}
	wide := dense([]int{64, 64}, 9)
	wide.In = nd.Float64
	q, _ := wide.Normalize()
	if _, _, err := choose(q, "cuda", Options{Method: Gemm}); err == nil || !strings.Contains(err.Error(), "float64") {
		t.Errorf("gemm on float64: %v", err)
	}
	// --device auto --method gemm: the CUDA GPU where there is one, else
	// the CPU's refusal.
	defer func(f func() (Device, bool)) { usableGPU = f }(usableGPU)
	usableGPU = func() (Device, bool) { return Device{Kind: "cuda"}, true }
	if dev, c := autoDevice(p, Options{Method: Gemm}); dev.Kind != "cuda" || !strings.Contains(c.Reason, "gemm") {
		t.Errorf("auto device for gemm with a CUDA GPU: %v (%s)", dev, c.Reason)
	}
	usableGPU = func() (Device, bool) { return Device{}, false }
	if _, err := New(p, Options{Method: Gemm}); err == nil || !strings.Contains(err.Error(), "CUDA's tensor cores") {
		t.Errorf("auto device for gemm without a GPU: %v", err)
	}
}
