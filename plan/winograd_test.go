package plan

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/winograd"
	"github.com/ndconv/ndconv/nd"
)

// TestWinogradOffered: --method winograd runs on every device for the
// kernels internal/winograd serves and says why not for the others; it is
// never taken under --exact, and auto does not choose it (no measurement
// yet) on any device.
func TestWinogradOffered(t *testing.T) {
	if m, err := ParseMethod("winograd"); err != nil || m != Winograd || m.Exact() {
		t.Fatalf("ParseMethod(winograd) = %v, %v (exact %v)", m, err, m.Exact())
	}
	bank := dense([]int{64, 64}, 3*3)
	for range 7 {
		bank.Kernels = append(bank.Kernels, bank.Kernels[0])
	}
	p, err := bank.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"cpu", "cuda", "opencl"} {
		impl, _, err := choose(p, kind, Options{Method: Winograd})
		if err != nil || impl.Method != Winograd {
			t.Errorf("winograd on %s: %v, %v", kind, impl, err)
		}
		if impl, _, err := choose(p, kind, Options{}); err != nil || impl.Method == Winograd {
			t.Errorf("auto on %s chose %v (%v)", kind, impl, err)
		}
	}
	var ae *nd.ArgumentError
	if _, err := New(p, Options{Device: Device{Kind: "cpu"}, Method: Winograd, Exact: true}); !errors.As(err, &ae) || !strings.Contains(err.Error(), "--exact") {
		t.Errorf("winograd under exact: %v", err)
	}
	seven := dense([]int{64, 64}, 7*7)
	big, _ := seven.Normalize()
	for _, kind := range []string{"cpu", "cuda", "opencl"} {
		_, _, err := choose(big, kind, Options{Method: Winograd})
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), "winograd cannot run this problem on "+kind+": winograd takes 3×3, 5×5 and 3×3×3 kernels, not 7×7") {
			t.Errorf("winograd 7×7 on %s: %v", kind, err)
		}
	}
	wide := dense([]int{64, 64}, 9)
	wide.In = nd.Float64
	q, _ := wide.Normalize()
	if _, _, err := choose(q, "cpu", Options{Method: Winograd}); err == nil || !strings.Contains(err.Error(), "float64") {
		t.Errorf("winograd on float64: %v", err)
	}
	// Empty problems are checked the same way.
	empty := dense([]int{0, 64}, 7*7)
	e, _ := empty.Normalize()
	if _, err := New(e, Options{Device: Device{Kind: "cpu"}, Method: Winograd}); err == nil || !strings.Contains(err.Error(), "7×7") {
		t.Errorf("winograd 7×7 on an empty input: %v", err)
	}
}

// TestWinogradPlanCPU: a plan of method winograd on the CPU computes the
// bank within the method's bound of internal/ref.
func TestWinogradPlanCPU(t *testing.T) {
	for _, c := range enginetest.WinogradRandom(41, 20, false) {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		x, err := New(p, Options{Device: Device{Kind: "cpu"}, Method: Winograd})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if x.Method != Winograd {
			t.Fatalf("%s: method %v", c.Name, x.Method)
		}
		got, _ := nd.New(p.Out, p.FullShape()...)
		if err := x.Execute(context.Background(), got, c.Input); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		v, _ := winograd.New(p, 0)
		if msg := c.CheckBound(got, c.Want(), v.ErrorBound(p.WeightAbsSum(), c.MaxAbs())); msg != "" {
			t.Fatalf("%s: %s", c.Name, msg)
		}
		x.Close()
	}
}
