package plan

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/ndconv/ndconv/cuda"
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
	e, err := New(p, Options{Device: Device{Kind: "cpu"}, Method: Direct, Workers: workers})
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

// MeasureGPURates measures a CUDA GPU: the driver's and the context's
// start (cold only where this is the process's first use of CUDA: call it
// first), one NVRTC compilation, the pinned transfers, the device's copy
// rate, the direct kernel's rate on 4096² float32 7×7, an execution's
// fixed cost (a 64² one) and the end-to-end rate of a cold call from host
// memory. Other
// GPUs keep the defaults (an error says so).
func MeasureGPURates(ctx context.Context, dev Device) (GPURates, error) {
	var r GPURates
	if dev.Kind != "cuda" {
		return r, fmt.Errorf("plan: measuring %v: only CUDA GPUs are measured; OpenCL keeps the defaults", dev)
	}
	wasOpen := cuda.IsOpen(dev.Index)
	start := time.Now()
	if err := cuda.Available(); err != nil {
		return r, &UnavailableError{Device: dev, Reason: unavailableReason(err)}
	}
	r.DriverSeconds = time.Since(start).Seconds()
	start = time.Now()
	d, err := cuda.Open(dev.Index)
	if err != nil {
		return r, err
	}
	defer d.Close()
	if !wasOpen {
		r.ContextSeconds = time.Since(start).Seconds()
	}
	p, err := standardProblem(4096)
	if err != nil {
		return r, err
	}
	opt := cudaOptions(Options{Device: dev})
	if r.CompileSeconds, err = cuda.CompileSeconds(d, p, opt); err != nil {
		return r, err
	}
	t, err := cuda.MeasureTransfers(d, 64<<20, 5)
	if err != nil {
		return r, err
	}
	r.HtoDBytesPerSecond, r.DtoHBytesPerSecond = t.HtoDGBps*1e9, t.DtoHGBps*1e9
	roof, err := cuda.MeasureRoofline(d, 5)
	if err != nil {
		return r, err
	}
	r.DeviceBytesPerSecond = roof.CopyGBps * 1e9

	e, err := cuda.NewDirect(p, opt)
	if err != nil {
		return r, err
	}
	defer e.Close()
	src, _, err := problemArrays(p)
	if err != nil {
		return r, err
	}
	dsrc, err := cuda.NewArray(d, p.In, p.InShape...)
	if err != nil {
		return r, err
	}
	defer dsrc.Free()
	ddst, err := cuda.NewArray(d, p.Out, p.FullShape()...)
	if err != nil {
		return r, err
	}
	defer ddst.Free()
	ms, err := e.TimeDevice(ddst, dsrc, 9)
	if err != nil {
		return r, err
	}
	slices.Sort(ms)
	kernel := ms[len(ms)/2] / 1e3
	r.KernelMaddsPerSecond = DirectCost(p) / kernel

	// A fresh engine's first execution of a tiny problem (its module
	// compiled first): streams, staging, launches, synchronisation.
	tiny, err := standardProblem(64)
	if err != nil {
		return r, err
	}
	te, err := cuda.NewDirect(tiny, opt)
	if err != nil {
		return r, err
	}
	defer te.Close()
	tsrc, tdst, err := problemArrays(tiny)
	if err != nil {
		return r, err
	}
	if err := te.Compile(); err != nil { // its module is not what is timed
		return r, err
	}
	start = time.Now()
	if err := te.Execute(ctx, tdst, tsrc); err != nil {
		return r, err
	}
	r.CallSeconds = time.Since(start).Seconds()

	// A cold call, as a one-shot CLI makes: a fresh engine (its module
	// loaded) staging into fresh host memory.
	cold, err := cuda.NewDirect(p, opt)
	if err != nil {
		return r, err
	}
	defer cold.Close()
	fresh, err := nd.New(p.Out, p.FullShape()...)
	if err != nil {
		return r, err
	}
	if err := cold.Compile(); err != nil {
		return r, err
	}
	start = time.Now()
	if err := cold.Execute(ctx, fresh, src); err != nil {
		return r, err
	}
	host := time.Since(start).Seconds()
	in, out := problemBytes(p)
	r.StagedBytesPerSecond = (in + out) / max(host-kernel-r.CallSeconds, 1e-6)
	return r, nil
}
