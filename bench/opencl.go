package bench

import (
	"fmt"
	"slices"

	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/opencl"
)

// MeasureOpenCL measures an OpenCL device's roofline with the kernels of
// kernels/roofline.cl (the same as on CUDA), timed by profiling counters.
func MeasureOpenCL(platform, device, repeats int) (Roofline, error) {
	dev, err := opencl.Open(platform, device)
	if err != nil {
		return Roofline{}, err
	}
	defer dev.Close()
	info := dev.Info()
	r := Roofline{Kind: "roofline", Device: fmt.Sprintf("%s (OpenCL %s)", info.Name, info.Spec())}
	src, err := kernels.Source("roofline")
	if err != nil {
		return r, err
	}
	prog, err := dev.Program(src, "roofline", nil)
	if err != nil {
		return r, err
	}
	copyKernel, err := prog.Kernel("copy_floats")
	if err != nil {
		return r, err
	}
	fmaKernel, err := prog.Kernel("fma_chains")
	if err != nil {
		return r, err
	}
	q, err := dev.NewQueue()
	if err != nil {
		return r, err
	}
	defer q.Close()

	size := int(min(int64(1)<<30, info.MaxAlloc, info.GlobalMemory/4)) &^ 4095
	in, err := dev.Alloc(size)
	if err != nil {
		return r, err
	}
	defer in.Free()
	out, err := dev.Alloc(size)
	if err != nil {
		return r, err
	}
	defer out.Free()
	n := int64(size / 16)
	groups := min(int(n/256)+1, info.ComputeUnits*32)
	r.CopyMs, err = profiledMedian(repeats, func() (*opencl.Event, error) {
		return copyKernel.Enqueue(q, [3]int{groups * 256, 1, 1}, [3]int{256, 1, 1}, in, out, n)
	})
	if err != nil {
		return r, err
	}
	r.CopyGBps = 2 * float64(size) / (r.CopyMs / 1e3) / 1e9

	const iterations, chains = 4096, 8
	threads := info.ComputeUnits * 16 * 256
	sums, err := dev.Alloc(threads * 4)
	if err != nil {
		return r, err
	}
	defer sums.Free()
	r.FMAMs, err = profiledMedian(repeats, func() (*opencl.Event, error) {
		return fmaKernel.Enqueue(q, [3]int{threads, 1, 1}, [3]int{256, 1, 1}, sums, int32(iterations))
	})
	if err != nil {
		return r, err
	}
	r.FMAGFlops = 2 * chains * iterations * float64(threads) / (r.FMAMs / 1e3) / 1e9
	return r, nil
}

// profiledMedian runs a kernel once to warm up, then repeats times, and
// returns the median of their profiled durations in milliseconds.
func profiledMedian(repeats int, enqueue func() (*opencl.Event, error)) (float64, error) {
	var ms []float64
	for i := range max(repeats, 1) + 1 {
		ev, err := enqueue()
		if err != nil {
			return 0, err
		}
		if err := ev.Wait(); err != nil {
			ev.Release()
			return 0, err
		}
		d, err := ev.Duration()
		ev.Release()
		if err != nil {
			return 0, err
		}
		if i > 0 {
			ms = append(ms, float64(d.Nanoseconds())/1e6)
		}
	}
	slices.Sort(ms)
	return ms[len(ms)/2], nil
}
