package plan

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/opencl"
)

// openclBackend is any OpenCL device (package opencl); devices are
// opencl:P:D, and a plain "opencl" (AnyOpenCL) means the first OpenCL GPU,
// else opencl:0:0.
type openclBackend struct{}

func (openclBackend) Name() string  { return "opencl" }
func (openclBackend) Forms() string { return "opencl, opencl:P:D" }
func (openclBackend) GPU() bool     { return true }

func (b openclBackend) Device(nums []int) (Device, bool) {
	d := Device{Kind: b.Name(), AnyOpenCL: len(nums) == 0}
	if len(nums) == 2 {
		d.Platform, d.Index = nums[0], nums[1]
	}
	return d, len(nums) == 0 || len(nums) == 2
}

func (b openclBackend) Format(d Device) string {
	if d.AnyOpenCL {
		return b.Name()
	}
	return fmt.Sprintf("%s:%d:%d", b.Name(), d.Platform, d.Index)
}

func (b openclBackend) Available() error {
	err := opencl.Available()
	var u *opencl.UnavailableError
	if errors.As(err, &u) {
		return withReason(err, b.Name(), u.Reason, u.Err)
	}
	return err
}

// Resolve turns a plain "opencl" into the device it means (ResolveOpenCL).
func (b openclBackend) Resolve(d Device) Device {
	if !d.AnyOpenCL {
		return d
	}
	return ResolveOpenCL()
}

// Devices lists every OpenCL device of every platform; one without a
// compiler is not usable.
func (b openclBackend) Devices() ([]DeviceInfo, error) {
	if err := b.Available(); err != nil {
		return nil, err
	}
	infos, err := opencl.Devices()
	if err != nil {
		return nil, err
	}
	ds := make([]DeviceInfo, len(infos))
	for i, info := range infos {
		fp64 := "no fp64"
		if info.FP64 {
			fp64 = "fp64"
		}
		ds[i] = DeviceInfo{Device: Device{Kind: b.Name(), Platform: info.Platform, Index: info.Device}, Name: info.Name, Type: info.Type,
			Usable:  info.Available && info.CompilerAvailable,
			Summary: fmt.Sprintf("%s (%s), %s, %s", info.Name, info.Type, info.PlatformName, info.Version),
			Detail: fmt.Sprintf("%d compute units, %.1f GiB memory, %d KiB local memory, work-groups up to %d, %s, driver %s",
				info.ComputeUnits, float64(info.GlobalMemory)/(1<<30), info.LocalMemory>>10, info.MaxWorkGroupSize, fp64, info.DriverVersion)}
	}
	return ds, nil
}

// AutoDevice is the first OpenCL GPU: PoCL, OpenCL on the CPU, is slower
// than the CPU engine.
func (openclBackend) AutoDevice() (Device, bool) { return openCLGPU() }

func (b openclBackend) Implementations() []Implementation { return openclBinding.implementations() }

// openclBinding is package opencl for the engine.
var openclBinding = gpuBinding{
	name:    openclBackend{}.Name(),
	open:    func(d Device) (gpu.Device, error) { return opencl.OpenEngineDevice(d.Platform, d.Index) },
	planner: func(d Device) (gpu.Planner, error) { return opencl.Planner(d.Platform, d.Index) },
	fftWhy:  fftconv.Supported,
}

func (openclBackend) Identity(d Device) (string, bool) {
	infos, err := opencl.Devices()
	if err != nil {
		return "", false
	}
	for _, i := range infos {
		if i.Platform == d.Platform && i.Device == d.Index {
			return fmt.Sprintf("opencl %s %s", i.Name, i.DriverVersion), true
		}
	}
	return "", false
}

func (openclBackend) IsOpen(d Device) bool { return opencl.IsOpen(d.Platform, d.Index) }

func (openclBackend) Open(d Device) (func() error, error) {
	dev, err := opencl.Open(d.Platform, d.Index)
	if err != nil {
		return nil, err
	}
	return dev.Close, nil
}

func (openclBackend) OpenMemory(d Device) (DeviceMemory, error) { return openclBinding.openMemory(d) }

// MeasureRoofline measures an OpenCL device's roofline with the kernels of
// kernels/roofline.cl (opencl.MeasureRoofline, the same as on CUDA), the
// median of 11 runs.
func (openclBackend) MeasureRoofline(dev Device, _ int) (Roofline, error) {
	if err := opencl.Available(); err != nil {
		return Roofline{}, fmt.Errorf("device %v unavailable: %w", dev, err)
	}
	info, roof, err := opencl.MeasureRoofline(dev.Platform, dev.Index, 11)
	if err != nil {
		return Roofline{}, err
	}
	return Roofline{Device: fmt.Sprintf("%s (OpenCL %s)", info.Name, info.Spec()),
		CopyGBps: roof.CopyGBps, FMAGFlops: roof.FMAGFlops, CopyMs: roof.CopyMs, FMAMs: roof.FMAMs}, nil
}

// openCLGPU is the first OpenCL device that is a GPU, looked up once.
var openCLGPU = sync.OnceValues(func() (Device, bool) {
	if opencl.Available() != nil {
		return Device{}, false
	}
	infos, err := opencl.Devices()
	if err != nil {
		return Device{}, false
	}
	for _, info := range infos {
		if info.Type == "GPU" && info.Available {
			return Device{Kind: openclBackend{}.Name(), Platform: info.Platform, Index: info.Device}, true
		}
	}
	return Device{}, false
})

// ResolveOpenCL is the device a plain "opencl" means: the first OpenCL
// GPU, or device 0 of platform 0.
func ResolveOpenCL() Device {
	if gpu, ok := openCLGPU(); ok {
		return gpu
	}
	return Device{Kind: openclBackend{}.Name()}
}
