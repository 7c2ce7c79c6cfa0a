package cuda

import (
	"errors"
	"github.com/ndconv/ndconv/internal/gpu"
	"slices"

	"github.com/ndconv/ndconv/kernels"
)

// Roofline is what a device sustains, measured: the bandwidth of a
// device-to-device copy (bytes read plus bytes written per second) and the
// FP32 FMA throughput.
type Roofline struct {
	CopyGBps  float64
	FMAGFlops float64
	CopyMs    float64 // median time of one copy
	FMAMs     float64 // median time of one FMA run
}

// MeasureRoofline times the roofline kernels (kernels/roofline.cl) on the
// device with CUDA events, the median of repeats runs after a warm-up.
func MeasureRoofline(dev *Device, repeats int) (Roofline, error) {
	var r Roofline
	info, err := dev.Info()
	if err != nil {
		return r, err
	}
	src, err := kernels.Source("roofline")
	if err != nil {
		return r, err
	}
	mod, err := dev.Module(src, "roofline.cu", nil)
	if err != nil {
		return r, err
	}
	copyFn, err := mod.Function("copy_floats")
	if err != nil {
		return r, err
	}
	fmaFn, err := mod.Function("fma_chains")
	if err != nil {
		return r, err
	}
	stream, err := dev.NewStream()
	if err != nil {
		return r, err
	}
	defer stream.Close()

	// A copy far larger than the L2 cache: 1 GiB, or a quarter of what is
	// free.
	size := min(int64(1)<<30, info.FreeMemory/4) &^ 15
	in, err := dev.Alloc(int(size))
	if err != nil {
		return r, err
	}
	defer in.Free()
	out, err := dev.Alloc(int(size))
	if err != nil {
		return r, err
	}
	defer out.Free()
	n := size / 16
	block := [3]uint32{256, 1, 1}
	groups := uint32(min(n/256+1, int64(info.SMs)*32))
	r.CopyMs, err = timeLaunches(dev, stream, repeats, func() error {
		return copyFn.Launch([3]uint32{groups, 1, 1}, block, 0, stream, in, out, n)
	})
	if err != nil {
		return r, err
	}
	r.CopyGBps = 2 * float64(size) / (r.CopyMs / 1e3) / 1e9

	// Enough work-items to fill every SM several times over.
	const iterations, chains = 4096, 8
	fmaGroups := uint32(info.SMs * 16)
	threads := int64(fmaGroups) * 256
	sums, err := dev.Alloc(int(threads) * 4)
	if err != nil {
		return r, err
	}
	defer sums.Free()
	r.FMAMs, err = timeLaunches(dev, stream, repeats, func() error {
		return fmaFn.Launch([3]uint32{fmaGroups, 1, 1}, block, 0, stream, sums, int32(iterations))
	})
	if err != nil {
		return r, err
	}
	r.FMAGFlops = 2 * chains * iterations * float64(threads) / (r.FMAMs / 1e3) / 1e9
	return r, nil
}

// timeLaunches runs launch once to warm up, then repeats times between
// CUDA events, and returns the median milliseconds.
func timeLaunches(dev *Device, stream *Stream, repeats int, launch func() error) (float64, error) {
	ms, err := gpu.TimeOnQueue(engineDevice{dev}, stream, max(repeats, 1), launch)
	if err != nil {
		return 0, err
	}
	slices.Sort(ms)
	return ms[len(ms)/2], nil
}

// Transfers is what the link between host and device sustains from and to
// pinned memory, measured: each direction alone, and both at once (each
// on a stream of its own, the bytes of both counted), in GB/s.
type Transfers struct {
	HtoDGBps, DtoHGBps, BothGBps float64
}

// MeasureTransfers times copies of size bytes between pinned host memory
// and the device with CUDA events, the median of repeats runs after a
// warm-up: host to device, device to host, and both at once.
func MeasureTransfers(dev *Device, size, repeats int) (Transfers, error) {
	var t Transfers
	var hosts [2]*HostBuffer
	var bufs [2]*Buffer
	var streams [2]*Stream
	defer func() {
		for i := range 2 {
			hosts[i].Free()
			if bufs[i] != nil {
				bufs[i].Free()
			}
			streams[i].Close()
		}
	}()
	var err error
	for i := range 2 {
		if hosts[i], err = dev.AllocHost(size); err != nil {
			return t, err
		}
		if bufs[i], err = dev.Alloc(size); err != nil {
			return t, err
		}
		if streams[i], err = dev.NewStream(); err != nil {
			return t, err
		}
	}
	in, out := hosts[0].Bytes(), hosts[1].Bytes()
	htod := func(s *Stream) error { return bufs[0].CopyFromHostAsync(0, in, s) }
	dtoh := func(s *Stream) error { return bufs[1].CopyToHostAsync(out, 0, s) }
	gbps := func(bytes int, ms float64) float64 { return float64(bytes) / (ms / 1e3) / 1e9 }
	ms, err := timeLaunches(dev, streams[0], repeats, func() error { return htod(streams[0]) })
	if err != nil {
		return t, err
	}
	t.HtoDGBps = gbps(size, ms)
	if ms, err = timeLaunches(dev, streams[0], repeats, func() error { return dtoh(streams[0]) }); err != nil {
		return t, err
	}
	t.DtoHGBps = gbps(size, ms)
	// Both: the second stream starts after an event on the first and the
	// first waits for the second's end, so the events on the first bound
	// both copies.
	fork, err := dev.NewEvent()
	if err != nil {
		return t, err
	}
	defer fork.Close()
	join, err := dev.NewEvent()
	if err != nil {
		return t, err
	}
	defer join.Close()
	both := func() error {
		return errors.Join(fork.Record(streams[0]), streams[1].WaitEvent(fork),
			htod(streams[0]), dtoh(streams[1]),
			join.Record(streams[1]), streams[0].WaitEvent(join))
	}
	if ms, err = timeLaunches(dev, streams[0], repeats, both); err != nil {
		return t, err
	}
	t.BothGBps = gbps(2*size, ms)
	return t, nil
}
