package plan

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/ndconv/ndconv/nd"
)

// The rates' measurements (`ndconv tune` stores them; cost.go uses them):
// a few seconds in all, on standard problems of float32 data and a dense
// 7×7 kernel — the size where both devices run their direct method.

// standardProblem is the n×n float32 image with a dense 7×7 kernel.
func standardProblem(n int) (*nd.Problem, error) {
	w := make([]float64, 49)
	for i := range w {
		w[i] = float64(i%5) + 1
	}
	return (&nd.Spec{Shape: []int{n, n}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{7, 7}, Weights: w}}}).Normalize()
}

// medianSeconds runs f once to warm up, then repeats times, and returns
// the median duration.
func medianSeconds(repeats int, f func() error) (float64, error) {
	if err := f(); err != nil {
		return 0, err
	}
	ts := make([]float64, max(repeats, 1))
	for i := range ts {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		ts[i] = time.Since(start).Seconds()
	}
	slices.Sort(ts)
	return ts[len(ts)/2], nil
}

// MeasureCPURates times the CPU engine's direct method on 2048² float32
// 7×7 with workers goroutines (0: every core).
func MeasureCPURates(ctx context.Context, workers int) (CPURates, error) {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	p, err := standardProblem(2048)
	if err != nil {
		return CPURates{}, err
	}
	e, err := New(p, Options{Device: hostDevice(), Method: Direct, Workers: workers})
	if err != nil {
		return CPURates{}, err
	}
	defer e.Close()
	src, dst, err := problemArrays(p)
	if err != nil {
		return CPURates{}, err
	}
	s, err := medianSeconds(7, func() error { return e.Execute(ctx, dst, src) })
	if err != nil {
		return CPURates{}, err
	}
	return CPURates{MaddsPerSecond: DirectCost(p) / s, Cores: workers, TouchBytesPerSecond: measureTouch()}, nil
}

// measureTouch times the first write of fresh host memory: 64 MiB, a byte
// in every 4 KiB page (the faults cost, not the bytes), the median of 3.
func measureTouch() float64 {
	const size, page = 64 << 20, 4 << 10
	var ts []float64
	for range 3 {
		start := time.Now()
		b := make([]byte, size)
		for i := 0; i < len(b); i += page {
			b[i] = 1
		}
		ts = append(ts, time.Since(start).Seconds())
		runtime.KeepAlive(b)
	}
	slices.Sort(ts)
	return size / ts[1]
}

// problemArrays are a float32 input for p, not all zero, and its output.
func problemArrays(p *nd.Problem) (src, dst nd.Array, err error) {
	x := make([]float32, product(p.InShape))
	for i := range x {
		x[i] = float32(i % 251)
	}
	if src, err = nd.FromSlice(x, p.InShape...); err != nil {
		return
	}
	dst, err = nd.New(p.Out, p.FullShape()...)
	return
}

// MeasureGPURates measures a GPU whose backend can (a RateMeasurer: CUDA
// today, cudaBackend.MeasureRates). Other GPUs keep the defaults (an error
// says so).
func MeasureGPURates(ctx context.Context, dev Device) (GPURates, error) {
	b, _ := dev.Backend()
	m, ok := b.(RateMeasurer)
	if !ok {
		return GPURates{}, fmt.Errorf("plan: measuring %v: only CUDA GPUs are measured; OpenCL keeps the defaults", dev)
	}
	return m.MeasureRates(ctx, dev)
}
