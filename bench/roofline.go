package bench

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
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
	Note      string  `json:"note,omitempty"`
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
// of cpuCopyBytes split among them, and independent multiply-add chains on
// each. The multiply-adds are scalar Go, as ndconv's CPU engine is today:
// the figure is what pure Go issues, not the vector units' peak.
func MeasureCPU(workers, repeats int) Roofline {
	workers = max(workers, 1)
	r := Roofline{Kind: "roofline", Device: CPUName(workers),
		Note: "fma_gflops from scalar Go multiply-add chains (ndconv's CPU engine is scalar Go); the vector units' peak is higher"}
	src, dst := make([]byte, cpuCopyBytes), make([]byte, cpuCopyBytes)
	for i := range src {
		src[i] = byte(i)
	}
	r.CopyMs = medianMs(repeats, func() {
		parallelChunks(workers, len(src), func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
	})
	r.CopyGBps = 2 * cpuCopyBytes / (r.CopyMs / 1e3) / 1e9

	const iterations, chains = 1 << 24, 8
	sums := make([]float32, workers)
	r.FMAMs = medianMs(repeats, func() {
		parallelChunks(workers, workers, func(lo, _ int) { sums[lo] = fmaChains(iterations) })
	})
	r.FMAGFlops = 2 * chains * iterations * float64(workers) / (r.FMAMs / 1e3) / 1e9
	return r
}

// fmaChains runs 8 independent multiply-add chains (enough to keep the
// floating-point units busy despite their latency).
func fmaChains(iterations int) float32 {
	const m, c = 0.9999, 0.0001
	a0, a1, a2, a3, a4, a5, a6, a7 := float32(0), float32(1), float32(2), float32(3), float32(4), float32(5), float32(6), float32(7)
	for range iterations {
		a0 = a0*m + c
		a1 = a1*m + c
		a2 = a2*m + c
		a3 = a3*m + c
		a4 = a4*m + c
		a5 = a5*m + c
		a6 = a6*m + c
		a7 = a7*m + c
	}
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
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

// CPUModel is the processor's model name from /proc/cpuinfo, or the
// architecture where there is none.
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if key, value, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return runtime.GOARCH
}
