package cpu

import (
	"context"
	"fmt"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestEmptyAxes prepares and executes problems with an axis of length 0
// (the kernel's axes, the rows, the planes, channels) with one kernel and
// banks, on every CPU method: each has no output values and must say so
// without a panic (the tilings divide by those lengths).
func TestEmptyAxes(t *testing.T) {
	ran := 0
	for _, c := range []struct{ shape, k []int }{
		{[]int{0}, []int{2}}, {[]int{0, 5}, []int{3, 3}}, {[]int{5, 0}, []int{3, 3}}, {[]int{4, 5, 0}, []int{3, 3}},
		{[]int{0, 4, 5}, []int{3, 3, 3}}, {[]int{4, 0, 5}, []int{3, 3, 3}}, {[]int{4, 5, 0}, []int{3, 3, 3}},
		{[]int{3, 0}, []int{3}}, {[]int{0, 3, 40}, []int{3}}, {[]int{3, 40, 0}, []int{3}},
	} {
		for _, bank := range []int{1, 3, 16} {
			spec := nd.Spec{Shape: c.shape, In: nd.Float32, Out: nd.Float32}
			n := product(c.k)
			for b := range bank {
				w := make([]float64, n)
				for i := range w {
					w[i] = float64(1 + b) // rank 1, so separable runs too
				}
				spec.Kernels = append(spec.Kernels, nd.Kernel{Shape: c.k, Weights: w})
			}
			p, err := spec.Normalize()
			if err != nil {
				t.Fatalf("%v, kernel %v: %v", c.shape, c.k, err)
			}
			for _, m := range []struct {
				name string
				new  func(*nd.Problem, Options) (Executable, error)
			}{{"direct", newDirectMethod}, {"separable", NewSeparable}, {"fft", NewFFT}} {
				name := fmt.Sprintf("%v, kernel %v, bank %d, %s", c.shape, c.k, bank, m.name)
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s: panic: %v", name, r)
						}
					}()
					e, err := m.new(p, Options{Workers: 2})
					if err != nil {
						t.Errorf("%s: %v", name, err)
						return
					}
					in, _ := nd.New(nd.Float32, c.shape...)
					dst, _ := nd.New(p.Out, p.FullShape()...)
					if err := e.Execute(context.Background(), dst, in); err != nil {
						t.Errorf("%s: %v", name, err)
					}
					ran++
				}()
			}
		}
	}
	t.Logf("%d executions", ran)
}
