package fft

import (
	"fmt"
	"math"
	"testing"
)

func BenchmarkComplex(b *testing.B) {
	for _, n := range []int{1024, 4096, 6000, 1 << 16} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			plan := NewFFT(n)
			x := make([]complex64, n)
			b.SetBytes(int64(8 * n))
			for b.Loop() {
				plan.Forward(x, x)
			}
			reportFlops(b, 5*float64(n)*math.Log2(float64(n)))
		})
	}
}

func BenchmarkRealND(b *testing.B) {
	for _, tc := range []struct {
		batch int
		shape []int
	}{{16, []int{8192}}, {1, []int{512, 512}}, {1, []int{2100, 2100}}, {1, []int{128, 128, 128}}} {
		b.Run(fmt.Sprint(tc.batch, "x", tc.shape), func(b *testing.B) {
			plan := NewRealND(tc.batch, tc.shape, 0)
			src := make([]float32, plan.Len())
			spec := make([]complex64, plan.SpectrumLen())
			b.SetBytes(int64(4 * len(src)))
			for b.Loop() {
				plan.Forward(spec, src)
			}
			reportFlops(b, 2.5*float64(len(src))*math.Log2(float64(len(src)/tc.batch)))
		})
	}
}

// reportFlops reports the conventional FFT flop rate, 5·n·log₂n per
// complex transform (2.5 for a real one).
func reportFlops(b *testing.B, flops float64) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
