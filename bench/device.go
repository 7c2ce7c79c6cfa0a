package bench

import "github.com/ndconv/ndconv"

// DefaultDevice is the device bench runs on when none is named: the first
// CUDA GPU where CUDA is available, else the CPU.
func DefaultDevice() ndconv.DeviceName {
	if d, err := ndconv.ParseDevice("cuda"); err == nil && d.Available() == nil {
		return d
	}
	d, _ := ndconv.ParseDevice("cpu")
	return d
}

// MeasureRoofline measures the device the workloads run on
// (ndconv.MeasureRoofline): its copy bandwidth and FMA peak (and, on a
// CUDA GPU, the pinned transfer rates), what every result's pct_roofline
// is held against.
func MeasureRoofline(dev ndconv.DeviceName, workers int) (Roofline, error) {
	r, err := ndconv.MeasureRoofline(dev, workers)
	if err != nil {
		return Roofline{}, err
	}
	return Roofline{Kind: "roofline", Device: r.Device, CopyGBps: r.CopyGBps, FMAGFlops: r.FMAGFlops,
		CopyMs: r.CopyMs, FMAMs: r.FMAMs, PCIeHtoDGBps: r.PCIeHtoDGBps, PCIeDtoHGBps: r.PCIeDtoHGBps, PCIeGBps: r.PCIeGBps}, nil
}
