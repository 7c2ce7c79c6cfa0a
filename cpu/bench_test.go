package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ndconv/ndconv/internal/cputime"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/ref"
	"github.com/ndconv/ndconv/nd"
)

// benchmarkProblem runs one method on a 2-D float32 image with a k×k kernel.
func benchmarkProblem(b *testing.B, size, k int, separable bool, method func(*nd.Problem, Options) (Executable, error)) {
	benchmarkShape(b, nd.Float32, []int{size, size}, k, separable, method)
}

// benchmarkShape runs one method on an image of the given shape and dtype
// with a k×k kernel over its first two axes (the rest are channels).
func benchmarkShape(b *testing.B, dt nd.DType, shape []int, k int, separable bool, method func(*nd.Problem, Options) (Executable, error)) {
	kshape := []int{k, k}
	for range shape[2:] {
		kshape = append(kshape, 1)
	}
	benchmarkKernel(b, dt, shape, kshape, separable, method)
}

// benchmarkKernel runs one method on an image of the given shape and dtype
// with a random kernel of shape kshape.
func benchmarkKernel(b *testing.B, dt nd.DType, shape, kshape []int, separable bool, method func(*nd.Problem, Options) (Executable, error)) {
	rng := rand.New(rand.NewPCG(1, 1))
	kernel := enginetest.RandomKernel(rng, false, kshape...)
	if separable {
		kernel = enginetest.RandomFactors(rng, kshape...)
	}
	src := enginetest.RandomArray(rng, dt, shape...)
	spec := nd.Spec{Shape: src.Shape, In: dt, Kernels: []nd.Kernel{kernel}}
	p, err := spec.Normalize()
	if err != nil {
		b.Fatal(err)
	}
	dst, _ := nd.New(p.Out, shape...)
	e, err := method(p, Options{})
	if err != nil {
		b.Fatal(err)
	}
	n := product(shape)
	b.SetBytes(int64(n * (src.DType().Size() + dst.DType().Size())))
	timeExecute(b, e, dst, src, n*product(kshape))
}

// timeExecute times e on src into dst after one untimed run (the output's
// pages and the scratch memory), and reports, besides ns/op, the process's
// CPU time per operation, all workers together (the figure to compare on a
// shared machine, where wall time moves with other loads), and taps, the
// multiply-adds of one execution, per second.
func timeExecute(b *testing.B, e Executable, dst, src nd.Array, taps int) {
	if err := e.Execute(b.Context(), dst, src); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu := cputime.Process()
	for b.Loop() {
		if err := e.Execute(b.Context(), dst, src); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(taps)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gtaps/s")
}

// reportCPU reports the process CPU time per operation since start (all
// workers together; about twice the wall time of an idle 2-core machine),
// where it is measured.
func reportCPU(b *testing.B, start time.Duration) {
	if end := cputime.Process(); end > 0 {
		b.ReportMetric((end-start).Seconds()*1e3/float64(b.N), "cpu-ms/op")
	}
}

func newDirectMethod(p *nd.Problem, o Options) (Executable, error) { return NewDirect(p, o), nil }

func BenchmarkDirect(b *testing.B) {
	for _, k := range []int{3, 5, 7, 15, 31} {
		b.Run(fmt.Sprintf("2048x2048/k%d", k), func(b *testing.B) { benchmarkProblem(b, 2048, k, false, newDirectMethod) })
	}
	// The CPU table's 1-D anchor with its longest kernel, at 1/8 of its
	// length.
	b.Run("1d-4194304/k1023", func(b *testing.B) {
		benchmarkKernel(b, nd.Float32, []int{1 << 22}, []int{1023}, false, newDirectMethod)
	})
}

func BenchmarkSeparable(b *testing.B) {
	for _, k := range []int{7, 15, 31} {
		b.Run(fmt.Sprintf("2048x2048/k%d", k), func(b *testing.B) { benchmarkProblem(b, 2048, k, true, NewSeparable) })
	}
	// The CPU table's small separable cases: its 2-D anchors and S003.
	for _, k := range []int{7, 15, 31} {
		b.Run(fmt.Sprintf("1024x1024/k%d", k), func(b *testing.B) { benchmarkProblem(b, 1024, k, true, NewSeparable) })
	}
	b.Run("240x320/k31", func(b *testing.B) { benchmarkShape(b, nd.Float32, []int{240, 320}, 31, true, NewSeparable) })
	b.Run("240x320x4/k31", func(b *testing.B) { benchmarkShape(b, nd.Float32, []int{240, 320, 4}, 31, true, NewSeparable) })
	b.Run("u8-240x320/k31", func(b *testing.B) { benchmarkShape(b, nd.Uint8, []int{240, 320}, 31, true, NewSeparable) })
}

// BenchmarkChannels: RGBA float32 (the channels fold into the rows) and
// uint8 images, as in the CPU table.
func BenchmarkChannels(b *testing.B) {
	b.Run("rgba512x512x4/k5", func(b *testing.B) { benchmarkShape(b, nd.Float32, []int{512, 512, 4}, 5, false, newDirectMethod) })
	b.Run("rgba512x512x4/separable-k5", func(b *testing.B) { benchmarkShape(b, nd.Float32, []int{512, 512, 4}, 5, true, NewSeparable) })
	b.Run("u8-2048x2048/k3", func(b *testing.B) { benchmarkShape(b, nd.Uint8, []int{2048, 2048}, 3, false, newDirectMethod) })
	b.Run("u8-2048x2048/k7", func(b *testing.B) { benchmarkShape(b, nd.Uint8, []int{2048, 2048}, 7, false, newDirectMethod) })
}

// BenchmarkNaive is the reference loop on a small image, for scale: the
// engine's speed-up is the ratio of the Gtaps/s figures.
func BenchmarkNaive(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	src := enginetest.RandomArray(rng, nd.Float32, 256, 256)
	spec := nd.Spec{Shape: src.Shape, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 7, 7)}}
	x := src.Float64s()
	for b.Loop() {
		ref.Correlate(spec, x)
	}
	b.ReportMetric(float64(256*256*49)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gtaps/s")
}

func newFFTMethod(p *nd.Problem, o Options) (Executable, error) { return NewFFT(p, o) }

func BenchmarkFFT(b *testing.B) {
	for _, k := range []int{15, 31} {
		b.Run(fmt.Sprintf("2048x2048/k%d", k), func(b *testing.B) { benchmarkProblem(b, 2048, k, false, newFFTMethod) })
	}
}

// BenchmarkFFT1D is issue 14's 1-D workload: 2²⁴ float32 samples, 1023
// taps.
func BenchmarkFFT1D(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	src := enginetest.RandomArray(rng, nd.Float32, 1<<24)
	spec := nd.Spec{Shape: src.Shape, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 1023)}}
	p, err := spec.Normalize()
	if err != nil {
		b.Fatal(err)
	}
	dst, _ := nd.New(nd.Float32, 1<<24)
	e, err := NewFFT(p, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(8 << 24)
	if err := e.Execute(b.Context(), dst, src); err != nil { // untimed: pages, scratch
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu := cputime.Process()
	for b.Loop() {
		if err := e.Execute(b.Context(), dst, src); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkBank is the seed-000 workload at the CPU table's scale: a 128³
// uint8 volume, a bank of 7³ kernels, valid region, float32 output
// interleaved by kernel. Gtaps/s counts every kernel's taps.
func BenchmarkBank(b *testing.B) {
	for _, bank := range []int{1, 2, 4, 8, 16, 32} {
		b.Run(fmt.Sprintf("u8-128x128x128/k7x7x7/bank%d", bank), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			src := enginetest.RandomArray(rng, nd.Uint8, 128, 128, 128)
			spec := nd.Spec{Shape: src.Shape, In: nd.Uint8, Out: nd.Float32, Mode: nd.Valid}
			for range bank {
				spec.Kernels = append(spec.Kernels, enginetest.RandomKernel(rng, false, 7, 7, 7))
			}
			p, err := spec.Normalize()
			if err != nil {
				b.Fatal(err)
			}
			dst, _ := nd.New(p.Out, p.FullShape()...)
			timeExecute(b, NewDirect(p, Options{}), dst, src, product(p.OutShape)*bank*343)
		})
	}
}

// BenchmarkSerialCrossover times small direct problems on the calling
// goroutine and on the pool, to place serialWork (docs/perf/cpu-engine.md).
func BenchmarkSerialCrossover(b *testing.B) {
	for _, k := range []int{3, 7} {
		for _, n := range []int{16, 64, 128, 192, 256, 384} {
			for _, mode := range []string{"serial", "pool"} {
				b.Run(fmt.Sprintf("k%d/%dx%d/%s", k, n, n, mode), func(b *testing.B) {
					defer func(w int) { serialWork = w }(serialWork)
					serialWork = 0
					if mode == "serial" {
						serialWork = 1 << 40
					}
					benchmarkProblem(b, n, k, false, newDirectMethod)
				})
			}
		}
	}
}
