package cuda

import (
	"errors"
	"slices"

	"github.com/ndconv/ndconv/internal/gpu"
)

// MeasureRoofline measures the device's gpu.Roofline over 1 GiB, or a
// quarter of what is free.
func MeasureRoofline(dev *Device, repeats int) (gpu.Roofline, error) {
	info, err := dev.Info()
	if err != nil {
		return gpu.Roofline{}, err
	}
	return gpu.MeasureRoofline(dev, info.SMs, min(int64(1)<<30, info.FreeMemory/4), repeats)
}

// Transfers is what the link between host and device sustains from and to
// pinned memory, in GB/s: each direction alone, and both at once.
type Transfers struct {
	HtoDGBps, DtoHGBps, BothGBps float64
}

// MeasureTransfers times copies of size bytes between pinned host memory
// and the device, the median of repeats runs.
func MeasureTransfers(dev *Device, size, repeats int) (Transfers, error) {
	var t Transfers
	var frees []func() error
	defer func() {
		for _, free := range slices.Backward(frees) {
			free()
		}
	}()
	var hosts [2][]byte
	var bufs [2]gpu.Buffer
	var qs [2]gpu.Queue
	var events [2]gpu.Event
	for i := range 2 {
		h, err := dev.AllocHost(size)
		if err != nil {
			return t, err
		}
		frees = append(frees, h.Free)
		hosts[i] = h.Bytes()
		if bufs[i], err = dev.Alloc(size); err != nil {
			return t, err
		}
		frees = append(frees, bufs[i].Free)
		if qs[i], err = dev.NewQueue(); err != nil {
			return t, err
		}
		frees = append(frees, qs[i].Close)
		if events[i], err = dev.NewEvent(); err != nil {
			return t, err
		}
		frees = append(frees, events[i].Close)
	}
	htod := func(q gpu.Queue) error { return q.Write(bufs[0], 0, hosts[0]) }
	dtoh := func(q gpu.Queue) error { return q.Read(hosts[1], bufs[1], 0) }
	gbps := func(bytes int, ms float64) float64 { return float64(bytes) / (ms / 1e3) / 1e9 }
	ms, err := gpu.MedianOnQueue(dev, qs[0], repeats, func() error { return htod(qs[0]) })
	if err != nil {
		return t, err
	}
	t.HtoDGBps = gbps(size, ms)
	if ms, err = gpu.MedianOnQueue(dev, qs[0], repeats, func() error { return dtoh(qs[0]) }); err != nil {
		return t, err
	}
	t.DtoHGBps = gbps(size, ms)
	// Both: the second stream forks from and joins the first, so the
	// events on the first bound both copies.
	fork, join := events[0], events[1]
	both := func() error {
		return errors.Join(qs[0].Record(fork), qs[1].Wait(fork),
			htod(qs[0]), dtoh(qs[1]),
			qs[1].Record(join), qs[0].Wait(join))
	}
	if ms, err = gpu.MedianOnQueue(dev, qs[0], repeats, both); err != nil {
		return t, err
	}
	t.BothGBps = gbps(2*size, ms)
	return t, nil
}
