package bench

import (
	"fmt"

	"github.com/ndconv/ndconv/opencl"
)

// MeasureOpenCL measures an OpenCL device's roofline with the kernels of
// kernels/roofline.cl (the same as on CUDA, gpu.MeasureRoofline).
func MeasureOpenCL(platform, device, repeats int) (Roofline, error) {
	info, roof, err := opencl.MeasureRoofline(platform, device, repeats)
	if err != nil {
		return Roofline{}, err
	}
	return Roofline{Kind: "roofline", Device: fmt.Sprintf("%s (OpenCL %s)", info.Name, info.Spec()),
		CopyGBps: roof.CopyGBps, FMAGFlops: roof.FMAGFlops, CopyMs: roof.CopyMs, FMAMs: roof.FMAMs}, nil
}
