package bench

import (
	"fmt"

	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/opencl"
	"github.com/ndconv/ndconv/plan"
)

// DefaultDevice is the device bench runs on when none is named: the first
// CUDA GPU where CUDA is available, else the CPU.
func DefaultDevice() plan.Device {
	if b, ok := plan.Lookup("cuda"); ok && b.Available() == nil {
		return plan.Device{Kind: "cuda"}
	}
	return plan.Device{Kind: "cpu"}
}

// MeasureRoofline measures the device the workloads run on: its copy
// bandwidth and FMA peak (and, on a CUDA GPU, the pinned transfer rates),
// what every result's pct_roofline is held against.
func MeasureRoofline(dev plan.Device, workers int) (Roofline, error) {
	switch dev.Kind {
	case "cpu":
		return MeasureCPU(workers, 5), nil
	case "opencl":
		if err := opencl.Available(); err != nil {
			return Roofline{}, fmt.Errorf("device %v unavailable: %w", dev, err)
		}
		return MeasureOpenCL(dev.Platform, dev.Index, 11)
	case "cuda":
		return measureCUDA(dev)
	}
	return Roofline{}, fmt.Errorf("--device %v: bench runs on cpu, cuda and opencl", dev)
}

// measureCUDA measures a CUDA GPU's roofline and pinned transfer rates.
func measureCUDA(dev plan.Device) (Roofline, error) {
	if err := cuda.Available(); err != nil {
		return Roofline{}, fmt.Errorf("device %v unavailable: %w", dev, err)
	}
	d, err := cuda.Open(dev.Index)
	if err != nil {
		return Roofline{}, err
	}
	defer d.Close()
	info, err := d.Info()
	if err != nil {
		return Roofline{}, err
	}
	r, err := cuda.MeasureRoofline(d, 11)
	if err != nil {
		return Roofline{}, err
	}
	tr, err := cuda.MeasureTransfers(d, 64<<20, 11)
	if err != nil {
		return Roofline{}, err
	}
	return Roofline{Kind: "roofline", Device: info.Name, CopyGBps: r.CopyGBps, FMAGFlops: r.FMAGFlops,
		CopyMs: r.CopyMs, FMAMs: r.FMAMs, PCIeHtoDGBps: tr.HtoDGBps, PCIeDtoHGBps: tr.DtoHGBps, PCIeGBps: tr.BothGBps}, nil
}
