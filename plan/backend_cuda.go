package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ndconv/ndconv/cuda"
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
		ds[i] = DeviceInfo{Device: Device{Kind: b.Name(), Index: info.Index}, Name: info.Name, Type: "GPU", Usable: info.ComputeCapability.Supported()}
	}
	return ds, nil
}

// AutoDevice is the first CUDA device, where CUDA is available.
func (b cudaBackend) AutoDevice() (Device, bool) {
	return Device{Kind: b.Name()}, cuda.Available() == nil
}

func (b cudaBackend) Implementations() []Implementation {
	return append(withPending(methods(b.Name(),
		func(p *nd.Problem, opt Options) (Runner, error) { return cuda.NewDirect(p, cudaOptions(opt)) },
		func(p *nd.Problem, opt Options) (Runner, error) { return cuda.NewSeparable(p, cudaOptions(opt)) }),
		func(p *nd.Problem, opt Options) (int, error) { return cuda.DirectPending(p, cudaOptions(opt)) },
		func(p *nd.Problem, opt Options) (int, error) { return cuda.SeparablePending(p, cudaOptions(opt)) }),
		fftOn(b.Name(), cuda.FFTSupported, func(p *nd.Problem, opt Options) (Runner, error) { return cuda.NewFFT(p, cudaOptions(opt)) },
			func(p *nd.Problem, opt Options) (int, error) { return cuda.FFTPending(p, cudaOptions(opt)) }))
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

func (cudaBackend) OpenMemory(d Device) (DeviceMemory, error) {
	dev, err := cuda.Open(d.Index)
	if err != nil {
		return nil, err
	}
	return cudaMemory{dev}, nil
}

func cudaOptions(opt Options) cuda.EngineOptions {
	return cuda.EngineOptions{Device: opt.Device.Index, Progress: opt.Progress, Tuning: opt.Tuning, Timeline: opt.Timeline, PieceBytes: opt.PieceBytes,
		MemoryBudget: opt.DeviceMemory}
}

// cudaMemory is a CUDA device's memory: arrays are cuda.Arrays.
type cudaMemory struct{ dev *cuda.Device }

// cudaBuffer is a cuda.Array as a Buffer.
type cudaBuffer struct{ a *cuda.Array }

// cudaRunner is what the CUDA engines offer for data already on the device.
type cudaRunner interface {
	ExecuteDevice(ctx context.Context, dst, src *cuda.Array) error
}

func (m cudaMemory) Alloc(dt nd.DType, shape []int) (Buffer, error) {
	a, err := cuda.NewArray(m.dev, dt, shape...)
	if err != nil {
		return nil, err
	}
	return cudaBuffer{a}, nil
}

func (cudaMemory) Execute(ctx context.Context, run Runner, dst, src Buffer) (bool, error) {
	r, ok := run.(cudaRunner)
	d, ok1 := dst.(cudaBuffer)
	s, ok2 := src.(cudaBuffer)
	if !ok || !ok1 || !ok2 {
		return false, nil
	}
	return true, r.ExecuteDevice(ctx, d.a, s.a)
}

func (m cudaMemory) Close() error { return m.dev.Close() }

func (b cudaBuffer) Write(p []byte) error { return b.a.Buf.CopyFromHost(0, p) }
func (b cudaBuffer) Read(p []byte) error  { return b.a.Buf.CopyToHost(p, 0) }
func (b cudaBuffer) Free() error          { return b.a.Free() }

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
	opt := cudaOptions(Options{Device: dev})
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

	e, err := cuda.NewDirect(p, opt)
	if err != nil {
		return r, err
	}
	defer e.Close()
	src, _, err := problemArrays(p)
	if err != nil {
		return r, err
	}
	dsrc, err := cuda.NewArray(d, p.In, p.InShape...)
	if err != nil {
		return r, err
	}
	defer dsrc.Free()
	ddst, err := cuda.NewArray(d, p.Out, p.FullShape()...)
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
	te, err := cuda.NewDirect(tiny, opt)
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
	cold, err := cuda.NewDirect(p, opt)
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
