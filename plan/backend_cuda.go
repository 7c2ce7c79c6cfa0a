package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/nd"
)

// cudaBackend is NVIDIA's GPUs through the CUDA driver (package cuda);
// devices are cuda:N.
type cudaBackend struct{}

func (cudaBackend) Name() string  { return "cuda" }
func (cudaBackend) Forms() string { return "cuda, cuda:N" }
func (cudaBackend) GPU() bool     { return true }

func (b cudaBackend) Device(nums []int) (Device, bool) {
	d := Device{Kind: b.Name()}
	if len(nums) == 1 {
		d.Index = nums[0]
	}
	return d, len(nums) <= 1
}

func (b cudaBackend) Format(d Device) string { return b.Name() + ":" + strconv.Itoa(d.Index) }

func (b cudaBackend) Available() error {
	err := cuda.Available()
	var u *cuda.UnavailableError
	if errors.As(err, &u) {
		return withReason(err, b.Name(), u.Reason, u.Err)
	}
	return err
}

func (cudaBackend) Resolve(d Device) Device { return d }

// Devices lists the CUDA devices; one older than ndconv's minimum compute
// capability is not usable.
func (b cudaBackend) Devices() ([]DeviceInfo, error) {
	if err := b.Available(); err != nil {
		return nil, err
	}
	infos, err := cuda.Devices()
	if err != nil {
		return nil, err
	}
	ds := make([]DeviceInfo, len(infos))
	for i, info := range infos {
		d := DeviceInfo{Device: Device{Kind: b.Name(), Index: info.Index}, Name: info.Name, Type: "GPU", Usable: info.ComputeCapability.Supported()}
		d.Summary = fmt.Sprintf("%s, compute capability %v", info.Name, info.ComputeCapability)
		if !d.Usable {
			d.Summary += fmt.Sprintf(" (too old: ndconv needs compute capability %v or newer)", cuda.MinComputeCapability)
		}
		d.Detail = fmt.Sprintf("%d SMs, %.1f GiB memory (%.1f GiB free), %d KiB shared per block (%d opt-in), driver %v, NVRTC %v",
			info.SMs, float64(info.TotalMemory)/(1<<30), float64(info.FreeMemory)/(1<<30), info.MaxSharedPerBlock>>10, info.MaxSharedPerBlockOptin>>10, info.DriverVersion, info.NVRTCVersion)
		ds[i] = d
	}
	return ds, nil
}

// UsableDevices lists the devices ndconv can use from their static
// attributes, opening none (cuda.Describe): what a device list needs.
func (b cudaBackend) UsableDevices() ([]Device, error) {
	if err := b.Available(); err != nil {
		return nil, err
	}
	infos, err := cuda.Describe()
	if err != nil {
		return nil, err
	}
	var ds []Device
	for _, info := range infos {
		if info.ComputeCapability.Supported() {
			ds = append(ds, Device{Kind: b.Name(), Index: info.Index})
		}
	}
	return ds, nil
}

// AutoDevice is the first CUDA device, where CUDA is available.
func (b cudaBackend) AutoDevice() (Device, bool) {
	return Device{Kind: b.Name()}, cuda.Available() == nil
}

func (b cudaBackend) Implementations() []Implementation { return cudaBinding.implementations() }

// cudaBinding is package cuda for the engine.
var cudaBinding = gpuBinding{
	name:       cudaBackend{}.Name(),
	open:       func(d Device) (gpu.Device, error) { return cuda.OpenEngineDevice(d.Index) },
	planner:    func(d Device) (gpu.Planner, error) { return cuda.Planner(d.Index) },
	fftWhy:     cudaFFTWhy,
	fftPending: true,
	gemm:       true,
}

// cudaFFTWhy says why the FFT method cannot run p on CUDA: the float32
// FFT must take the problem and cuFFT must load.
func cudaFFTWhy(p *nd.Problem) error {
	if err := fftconv.Supported(p); err != nil {
		return err
	}
	if err := cuda.CUFFTAvailable(); err != nil {
		return fmt.Errorf("FFT unavailable because %w", err)
	}
	return nil
}

func (cudaBackend) Identity(d Device) (string, bool) {
	i, err := cuda.StaticInfo(d.Index)
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("cuda %s %s driver %s", i.Name, i.ComputeCapability.Arch(), i.DriverVersion), true
}

func (cudaBackend) IsOpen(d Device) bool { return cuda.IsOpen(d.Index) }

func (cudaBackend) Open(d Device) (func() error, error) {
	if err := cuda.Available(); err != nil {
		return nil, err
	}
	dev, err := cuda.Open(d.Index)
	if err != nil {
		return nil, err
	}
	return dev.Close, nil
}

func (cudaBackend) OpenMemory(d Device) (DeviceMemory, error) { return cudaBinding.openMemory(d) }

// MeasureRoofline measures a CUDA GPU's roofline (cuda.MeasureRoofline:
// kernels/roofline.cl timed with CUDA events) and its pinned transfer
// rates over 64 MiB (cuda.MeasureTransfers), each the median of 11 runs.
func (cudaBackend) MeasureRoofline(dev Device, _ int) (Roofline, error) {
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
	return Roofline{Device: info.Name, CopyGBps: r.CopyGBps, FMAGFlops: r.FMAGFlops,
		CopyMs: r.CopyMs, FMAMs: r.FMAMs, PCIeHtoDGBps: tr.HtoDGBps, PCIeDtoHGBps: tr.DtoHGBps, PCIeGBps: tr.BothGBps}, nil
}

// MeasureRates measures a CUDA GPU (MeasureGPURates): the driver's and the context's
// start (cold only where this is the process's first use of CUDA: call it
// first), one NVRTC compilation, the pinned transfers, the device's copy
// rate, the direct kernel's rate on 4096² float32 7×7, an execution's
// fixed cost (a 64² one) and the end-to-end rate of a cold call from host
// memory.
func (b cudaBackend) MeasureRates(ctx context.Context, dev Device) (GPURates, error) {
	var r GPURates
	wasOpen := cuda.IsOpen(dev.Index)
	start := time.Now()
	if err := b.Available(); err != nil {
		return r, unavailable(dev, err)
	}
	r.DriverSeconds = time.Since(start).Seconds()
	start = time.Now()
	d, err := cuda.Open(dev.Index)
	if err != nil {
		return r, err
	}
	defer d.Close()
	if !wasOpen {
		r.ContextSeconds = time.Since(start).Seconds()
	}
	p, err := standardProblem(4096)
	if err != nil {
		return r, err
	}
	opt := gpuOptions(Options{Device: dev})
	if r.CompileSeconds, err = cuda.CompileSeconds(d, p, opt); err != nil {
		return r, err
	}
	t, err := cuda.MeasureTransfers(d, 64<<20, 5)
	if err != nil {
		return r, err
	}
	r.HtoDBytesPerSecond, r.DtoHBytesPerSecond = t.HtoDGBps*1e9, t.DtoHGBps*1e9
	roof, err := cuda.MeasureRoofline(d, 5)
	if err != nil {
		return r, err
	}
	r.DeviceBytesPerSecond = roof.CopyGBps * 1e9

	e, err := cudaDirect(dev, p)
	if err != nil {
		return r, err
	}
	defer e.Close()
	src, _, err := problemArrays(p)
	if err != nil {
		return r, err
	}
	dsrc, err := gpu.NewArray(e.Device(), p.In, p.InShape...)
	if err != nil {
		return r, err
	}
	defer dsrc.Free()
	ddst, err := gpu.NewArray(e.Device(), p.Out, p.FullShape()...)
	if err != nil {
		return r, err
	}
	defer ddst.Free()
	ms, err := e.TimeDevice(ddst, dsrc, 9)
	if err != nil {
		return r, err
	}
	slices.Sort(ms)
	kernel := ms[len(ms)/2] / 1e3
	r.KernelMaddsPerSecond = DirectCost(p) / kernel

	// A fresh engine's first execution of a tiny problem (its module
	// compiled first): streams, staging, launches, synchronisation.
	tiny, err := standardProblem(64)
	if err != nil {
		return r, err
	}
	te, err := cudaDirect(dev, tiny)
	if err != nil {
		return r, err
	}
	defer te.Close()
	tsrc, tdst, err := problemArrays(tiny)
	if err != nil {
		return r, err
	}
	if err := te.Compile(); err != nil { // its module is not what is timed
		return r, err
	}
	start = time.Now()
	if err := te.Execute(ctx, tdst, tsrc); err != nil {
		return r, err
	}
	r.CallSeconds = time.Since(start).Seconds()

	// A cold call, as a one-shot CLI makes: a fresh engine (its module
	// loaded) staging into fresh host memory.
	cold, err := cudaDirect(dev, p)
	if err != nil {
		return r, err
	}
	defer cold.Close()
	fresh, err := nd.New(p.Out, p.FullShape()...)
	if err != nil {
		return r, err
	}
	if err := cold.Compile(); err != nil {
		return r, err
	}
	start = time.Now()
	if err := cold.Execute(ctx, fresh, src); err != nil {
		return r, err
	}
	host := time.Since(start).Seconds()
	in, out := problemBytes(p)
	r.StagedBytesPerSecond = (in + out) / max(host-kernel-r.CallSeconds, 1e-6)
	return r, nil
}

// cudaDirect is a direct engine for p on dev, with default options.
func cudaDirect(dev Device, p *nd.Problem) (*gpu.Engine, error) {
	d, err := cuda.OpenEngineDevice(dev.Index)
	if err != nil {
		return nil, err
	}
	return gpu.NewDirect(d, p, gpuOptions(Options{Device: dev}))
}
