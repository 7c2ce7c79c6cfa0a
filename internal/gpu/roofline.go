package gpu

import "slices"

// Roofline is what a device sustains, measured: a device-to-device copy's
// bandwidth (bytes read plus written) and the FP32 FMA throughput.
type Roofline struct {
	CopyGBps  float64
	FMAGFlops float64
	CopyMs    float64 // median time of one copy
	FMAMs     float64 // median time of one FMA run
}

// MeasureRoofline times kernels/roofline.cl's copy_floats over copyBytes
// (far more than the caches hold) and fma_chains over enough work-items to
// fill the device's units several times: the median of repeats runs.
func MeasureRoofline(dev Device, units int, copyBytes int64, repeats int) (Roofline, error) {
	var r Roofline
	copyK, err := dev.Kernel("roofline", nil, "copy_floats")
	if err != nil {
		return r, err
	}
	fmaK, err := dev.Kernel("roofline", nil, "fma_chains")
	if err != nil {
		return r, err
	}
	q, err := dev.NewQueue()
	if err != nil {
		return r, err
	}
	defer q.Close()
	median := func(work func() error) (float64, error) { return MedianOnQueue(dev, q, repeats, work) }

	size := copyBytes &^ 4095
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
	local := [3]int{256, 1, 1}
	groups := [3]int{int(min(n/256+1, int64(units)*32)), 1, 1}
	if r.CopyMs, err = median(func() error { return q.Launch(copyK, groups, local, in, out, n) }); err != nil {
		return r, err
	}
	r.CopyGBps = 2 * float64(size) / (r.CopyMs / 1e3) / 1e9

	const iterations, chains = 4096, 8
	fmaGroups := [3]int{units * 16, 1, 1}
	threads := int64(units) * 16 * 256
	sums, err := dev.Alloc(int(threads) * 4)
	if err != nil {
		return r, err
	}
	defer sums.Free()
	if r.FMAMs, err = median(func() error { return q.Launch(fmaK, fmaGroups, local, sums, int32(iterations)) }); err != nil {
		return r, err
	}
	r.FMAGFlops = 2 * chains * iterations * float64(threads) / (r.FMAMs / 1e3) / 1e9
	return r, nil
}

// MedianOnQueue is TimeOnQueue's median.
func MedianOnQueue(dev Device, q Queue, repeats int, work func() error) (float64, error) {
	ms, err := TimeOnQueue(dev, q, max(repeats, 1), work)
	if err != nil {
		return 0, err
	}
	slices.Sort(ms)
	return ms[len(ms)/2], nil
}

// TimeOnQueue runs work once to warm up, then repeats times between two
// events on q, and returns each run's milliseconds.
func TimeOnQueue(dev Device, q Queue, repeats int, work func() error) ([]float64, error) {
	evs, closeEvents, err := NewEvents(dev, 2)
	if err != nil {
		return nil, err
	}
	defer closeEvents()
	start, end := evs[0], evs[1]
	if err := work(); err != nil {
		return nil, err
	}
	if err := q.Finish(); err != nil {
		return nil, err
	}
	ms := make([]float64, 0, repeats)
	for range repeats {
		if err := q.Record(start); err != nil {
			return nil, err
		}
		if err := work(); err != nil {
			return nil, err
		}
		if err := q.Record(end); err != nil {
			return nil, err
		}
		if err := end.Synchronize(); err != nil {
			return nil, err
		}
		d, err := end.Since(start)
		if err != nil {
			return nil, err
		}
		ms = append(ms, float64(d)/1e6)
	}
	return ms, nil
}

// NewEvents makes n events on dev, and a function that closes them.
func NewEvents(dev Device, n int) ([]Event, func(), error) {
	evs := make([]Event, 0, n)
	closeAll := func() {
		for _, ev := range slices.Backward(evs) {
			ev.Close()
		}
	}
	for range n {
		ev, err := dev.NewEvent()
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		evs = append(evs, ev)
	}
	return evs, closeAll, nil
}
