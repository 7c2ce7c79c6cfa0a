package plan

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Roofline is what a device sustains, measured: the line `ndconv bench`
// holds every workload's time against. Rates are in GB/s and GFLOP/s.
type Roofline struct {
	Device    string  // the device as bench prints it: its model (and, for the CPU, the cores used)
	CopyGBps  float64 // bytes read + bytes written per second
	FMAGFlops float64 // 2 FLOPs per multiply-add
	CopyMs    float64
	FMAMs     float64
	// Pinned host↔device transfer rates, where the backend measures them
	// (a CUDA GPU): each way, and both at once counting the bytes of both.
	PCIeHtoDGBps, PCIeDtoHGBps, PCIeGBps float64
}

// RooflineMeasurer is a backend that can measure a device's roofline
// (MeasureRoofline): each backend times its own copy and multiply-add
// loops (the CPU engine's widest FMA loop, kernels/roofline.cl on a GPU).
type RooflineMeasurer interface {
	MeasureRoofline(dev Device, workers int) (Roofline, error)
}

// MeasureRoofline measures dev's roofline through its backend; workers are
// the CPU's goroutines. auto is not a device: resolve it first.
func MeasureRoofline(dev Device, workers int) (Roofline, error) {
	b, _ := dev.Backend()
	m, ok := b.(RooflineMeasurer)
	if !ok {
		return Roofline{}, fmt.Errorf("--device %v: bench runs on %s", dev, rooflineKinds())
	}
	return m.MeasureRoofline(dev, workers)
}

// rooflineKinds lists the backends that measure a roofline, as "cpu, cuda
// and opencl".
func rooflineKinds() string {
	var names []string
	for _, b := range backends {
		if _, ok := b.(RooflineMeasurer); ok {
			names = append(names, b.Name())
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// parallelChunks splits [0, n) into workers contiguous chunks, one per
// goroutine (the CPU roofline's copy and FMA loops).
func parallelChunks(workers, n int, f func(lo, hi int)) {
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Go(func() { f(lo, hi) })
	}
	wg.Wait()
}

// medianMs runs f once to warm up, then repeats times, and returns the
// median wall time in milliseconds.
func medianMs(repeats int, f func()) float64 {
	f()
	ms := make([]float64, max(repeats, 1))
	for i := range ms {
		start := time.Now()
		f()
		ms[i] = float64(time.Since(start).Nanoseconds()) / 1e6
	}
	slices.Sort(ms)
	return ms[len(ms)/2]
}
