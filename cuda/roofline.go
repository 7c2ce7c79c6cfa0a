package cuda

import (
	"errors"
	"github.com/ndconv/ndconv/internal/gpu"
)

// Roofline is what a device sustains, measured (gpu.MeasureRoofline).
type Roofline = gpu.Roofline

// MeasureRoofline times the roofline kernels (kernels/roofline.cl) on the
// device with CUDA events over 1 GiB, or a quarter of what is free.
func MeasureRoofline(dev *Device, repeats int) (Roofline, error) {
	info, err := dev.Info()
	if err != nil {
		return Roofline{}, err
	}
	return gpu.MeasureRoofline(engineDevice{dev}, info.SMs, min(int64(1)<<30, info.FreeMemory/4), repeats)
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
	ms, err := gpu.MedianOnQueue(engineDevice{dev}, streams[0], repeats, func() error { return htod(streams[0]) })
	if err != nil {
		return t, err
	}
	t.HtoDGBps = gbps(size, ms)
	if ms, err = gpu.MedianOnQueue(engineDevice{dev}, streams[0], repeats, func() error { return dtoh(streams[0]) }); err != nil {
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
	if ms, err = gpu.MedianOnQueue(engineDevice{dev}, streams[0], repeats, both); err != nil {
		return t, err
	}
	t.BothGBps = gbps(2*size, ms)
	return t, nil
}
