package bench

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ndconv/ndconv/cpu"
)

// Roofline is the line `ndconv bench` prints once per device: what the
// device sustains, measured in the same run as the workloads.
type Roofline struct {
	Kind      string  `json:"kind"` // "roofline"
	Device    string  `json:"device"`
	CopyGBps  float64 `json:"copy_gbps"`  // bytes read + bytes written per second, in GB/s
	FMAGFlops float64 `json:"fma_gflops"` // 2 FLOPs per multiply-add
	CopyMs    float64 `json:"copy_ms"`
	FMAMs     float64 `json:"fma_ms"`
	// Pinned host↔device transfer rates (GPUs): each way, and both at
	// once counting the bytes of both.
	PCIeHtoDGBps float64 `json:"pcie_htod_gbps,omitempty"`
	PCIeDtoHGBps float64 `json:"pcie_dtoh_gbps,omitempty"`
	PCIeGBps     float64 `json:"pcie_gbps,omitempty"`
	Note         string  `json:"note,omitempty"`
}

// Floor is the least time, in seconds, a workload can take on a device
// with roofline r: its bytes moved once at the copy bandwidth, or its
// multiply-adds at the FMA peak, whichever is longer.
func (r Roofline) Floor(bytes, madds int64) float64 {
	return max(float64(bytes)/(r.CopyGBps*1e9), 2*float64(madds)/(r.FMAGFlops*1e9))
}

// Percent is 100 × floor ÷ measured time: how close a time of ms
// milliseconds comes to the roofline.
func (r Roofline) Percent(bytes, madds int64, ms float64) float64 {
	if ms <= 0 || r.CopyGBps <= 0 || r.FMAGFlops <= 0 {
		return 0
	}
	return 100 * r.Floor(bytes, madds) / (ms / 1e3)
}

// cpuCopyBytes is the size of each buffer of the CPU copy measurement,
// far beyond any cache.
const cpuCopyBytes = 256 << 20

// MeasureCPU measures the CPU's roofline with workers goroutines: a copy
// of cpuCopyBytes split among them (Go's copy, which moves vectors), and
// on each the CPU engine's widest multiply-add loop (cpu.FMAPeak: AVX-512
// or AVX2 fused multiply-adds in independent chains), so the figure is the
// vector units' peak that SIMD code such as OpenCV's also faces.
func MeasureCPU(workers, repeats int) Roofline {
	workers = max(workers, 1)
	r := Roofline{Kind: "roofline", Device: CPUName(workers)}
	src, dst := make([]byte, cpuCopyBytes), make([]byte, cpuCopyBytes)
	for i := range src {
		src[i] = byte(i)
	}
	r.CopyMs = medianMs(repeats, func() {
		parallelChunks(workers, len(src), func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
	})
	r.CopyGBps = 2 * cpuCopyBytes / (r.CopyMs / 1e3) / 1e9

	const rounds = 1 << 22
	madds := make([]int64, workers)
	r.FMAMs = medianMs(repeats, func() {
		parallelChunks(workers, workers, func(lo, _ int) { madds[lo] = cpu.FMAPeak(rounds) })
	})
	var total int64
	for _, m := range madds {
		total += m
	}
	r.FMAGFlops = 2 * float64(total) / (r.FMAMs / 1e3) / 1e9
	return r
}

// parallelChunks splits [0, n) into workers contiguous chunks, one per
// goroutine.
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

// CPUName is the processor's model name and the cores used.
func CPUName(workers int) string { return fmt.Sprintf("%s (%d cores)", CPUModel(), workers) }

// CPUModel is the processor's model name (cpu.Model).
func CPUModel() string { return cpu.Model() }
