package ndconv_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv"
)

// smallPlan prepares a float32 3×3 correlation of an n×n image on the CPU
// through the root API, with src and dst ready for Execute.
func smallPlan(tb testing.TB, n int) (*ndconv.Plan, ndconv.Array, ndconv.Array) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(3, 3))
	w := make([]float64, 9)
	for i := range w {
		w[i] = rng.Float64() - 0.5
	}
	data := make([]float32, n*n)
	for i := range data {
		data[i] = rng.Float32()
	}
	p, err := ndconv.NewPlan(ndconv.Correlation, []int{n, n}, ndconv.Float32, ndconv.Options{Device: "cpu"}, ndconv.NewKernel([]int{3, 3}, w))
	if err != nil {
		tb.Fatal(err)
	}
	src := ndconv.Array{Shape: []int{n, n}, Data: data}
	dst := ndconv.Array{Shape: []int{n, n}, Data: make([]float32, n*n)}
	return p, src, dst
}

// BenchmarkSmallCall is the per-call cost of a reused plan on small
// images (issue 33: under 5 µs on 16×16 through the Go API).
func BenchmarkSmallCall(b *testing.B) {
	for _, n := range []int{16, 64} {
		b.Run(fmt.Sprintf("%dx%d", n, n), func(b *testing.B) {
			p, src, dst := smallPlan(b, n)
			defer p.Close()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Execute(ctx, dst, src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPlanExecuteAllocatesNothing: a reused CPU plan's Execute on a small
// image allocates nothing (issue 33).
func TestPlanExecuteAllocatesNothing(t *testing.T) {
	for _, n := range []int{16, 64} {
		p, src, dst := smallPlan(t, n)
		ctx := context.Background()
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := p.Execute(ctx, dst, src); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%d×%d: %v allocations per Execute, want 0", n, n, allocs)
		}
		p.Close()
	}
}
