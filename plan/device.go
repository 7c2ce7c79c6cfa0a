package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/opencl"
)

// Memory is an open device's memory: arrays live there between calls, and
// executables prepared for that device run on them with no transfers. The
// CPU's memory is host memory. A Memory holds its GPU open (cuda.Open,
// opencl.Open, both counted) until Close, so that its arrays outlive the
// plans that run on them.
type Memory struct {
	Device Device // resolved: cpu, cuda:N or opencl:P:D
	cuda   *cuda.Device
	cl     *opencl.Device
	queue  *opencl.Queue // the OpenCL transfers' queue
}

// OpenMemory opens dev's memory. auto means the GPU auto would prefer for a
// large problem (CUDA, else an OpenCL GPU), else the CPU; a plain opencl
// the first OpenCL GPU, else opencl:0:0.
func OpenMemory(dev Device) (*Memory, error) {
	if dev.Kind == "" || dev.Kind == "auto" {
		dev = Device{Kind: "cpu"}
		if gpu, ok := usableGPU(); ok {
			dev = gpu
		}
	}
	m := &Memory{Device: dev}
	var err error
	switch dev.Kind {
	case "cpu":
	case "cuda":
		if err := cuda.Available(); err != nil {
			return nil, &UnavailableError{Device: dev, Reason: unavailableReason(err)}
		}
		m.cuda, err = cuda.Open(dev.Index)
	case "opencl":
		if err := opencl.Available(); err != nil {
			return nil, &UnavailableError{Device: dev, Reason: unavailableReason(err)}
		}
		if dev.AnyOpenCL {
			dev = ResolveOpenCL()
			m.Device = dev
		}
		if m.cl, err = opencl.Open(dev.Platform, dev.Index); err == nil {
			if m.queue, err = m.cl.NewQueue(); err != nil {
				m.cl.Close()
			}
		}
	default:
		return nil, &UnavailableError{Device: dev, Reason: "this build has no " + dev.Kind + " backend"}
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Close releases the device (its last holder releases its context: arrays
// still allocated on it go with it).
func (m *Memory) Close() error {
	switch {
	case m.cuda != nil:
		return m.cuda.Close()
	case m.cl != nil:
		return errors.Join(m.queue.Close(), m.cl.Close())
	}
	return nil
}

// DeviceArray is an array in a Memory: host memory for the CPU, a
// cuda.Array or an OpenCL buffer on a GPU.
type DeviceArray struct {
	Shape []int
	DType nd.DType
	mem   *Memory
	host  nd.Array
	cuda  *cuda.Array
	cl    *opencl.Buffer
}

// Alloc allocates an array of the given type and shape in m; its contents
// are undefined (zero on the CPU).
func (m *Memory) Alloc(dt nd.DType, shape ...int) (*DeviceArray, error) {
	n, err := nd.NumElements(shape)
	if err != nil {
		return nil, err
	}
	a := &DeviceArray{Shape: slices.Clone(shape), DType: dt, mem: m}
	switch {
	case m.cuda != nil:
		a.cuda, err = cuda.NewArray(m.cuda, dt, shape...)
	case m.cl != nil:
		a.cl, err = m.cl.Alloc(max(n*dt.Size(), 1))
	default:
		a.host, err = nd.New(dt, shape...)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Upload copies a host array into a new array in m.
func (m *Memory) Upload(src nd.Array) (*DeviceArray, error) {
	a, err := m.Alloc(src.DType(), src.Shape...)
	if err != nil {
		return nil, err
	}
	if err := a.Write(src); err != nil {
		a.Free()
		return nil, err
	}
	return a, nil
}

// Memory is the memory the array lives in.
func (a *DeviceArray) Memory() *Memory { return a.mem }

// Write copies src, of the array's type and shape, into the array.
func (a *DeviceArray) Write(src nd.Array) error {
	if err := a.match("source", src); err != nil {
		return err
	}
	b := src.Bytes()
	switch {
	case len(b) == 0:
		return nil
	case a.cuda != nil:
		return a.cuda.Buf.CopyFromHost(0, b)
	case a.cl != nil:
		return a.cl.Write(a.mem.queue, 0, b)
	}
	copy(a.host.Bytes(), b)
	return nil
}

// Read copies the array into dst, of its type and shape.
func (a *DeviceArray) Read(dst nd.Array) error {
	if err := a.match("destination", dst); err != nil {
		return err
	}
	b := dst.Bytes()
	switch {
	case len(b) == 0:
		return nil
	case a.cuda != nil:
		return a.cuda.Buf.CopyToHost(b, 0)
	case a.cl != nil:
		return a.cl.Read(a.mem.queue, b, 0)
	}
	copy(b, a.host.Bytes())
	return nil
}

// match checks a host array against the device array's type and shape.
func (a *DeviceArray) match(arg string, h nd.Array) error {
	if err := h.Check(); err != nil {
		return fmt.Errorf("%s: %w", arg, err)
	}
	if h.DType() != a.DType || !slices.Equal(h.Shape, a.Shape) {
		return &nd.ArgumentError{Arg: arg, Msg: fmt.Sprintf("%v %v does not match the device array's %v %v", h.DType(), h.Shape, a.DType, a.Shape)}
	}
	return nil
}

// Free releases the array's memory. Freeing twice does nothing.
func (a *DeviceArray) Free() error {
	var err error
	switch {
	case a.cuda != nil:
		err = a.cuda.Free()
	case a.cl != nil:
		err = a.cl.Free()
	}
	a.host = nd.Array{}
	return err
}

// deviceRunner is what a GPU engine offers for data already on its device.
type cudaRunner interface {
	ExecuteDevice(ctx context.Context, dst, src *cuda.Array) error
}

type openclRunner interface {
	ExecuteBuffers(ctx context.Context, dst, src *opencl.Buffer) error
}

// ExecuteDevice computes dst from src, both arrays in the memory of the
// executable's device (the caller checks their types and shapes): nothing
// moves between host and device.
func (e *Executable) ExecuteDevice(ctx context.Context, dst, src *DeviceArray) error {
	if err := e.acquire(ctx); err != nil {
		return err
	}
	defer e.release()
	if e.closed.Load() {
		return ErrClosed
	}
	if src == nil || dst == nil || src.mem == nil || dst.mem == nil {
		return &nd.ArgumentError{Arg: "array", Msg: "a nil or zero DeviceArray (make one with Memory.Alloc or Upload)"}
	}
	if src.mem.Device != e.Device || dst.mem.Device != e.Device {
		return &nd.ArgumentError{Arg: "array", Msg: fmt.Sprintf("arrays on %v and %v, the plan runs on %v", src.mem.Device, dst.mem.Device, e.Device)}
	}
	switch r := e.run.(type) {
	case emptyRunner:
		return nil // an empty problem: nothing to compute on any device
	case cudaRunner:
		if src.cuda != nil && dst.cuda != nil {
			return r.ExecuteDevice(ctx, dst.cuda, src.cuda)
		}
	case openclRunner:
		if src.cl != nil && dst.cl != nil {
			return r.ExecuteBuffers(ctx, dst.cl, src.cl)
		}
	default:
		if e.Device.Kind == "cpu" {
			return e.run.Execute(ctx, dst.host, src.host)
		}
	}
	return &nd.UnsupportedError{What: "method on device arrays", Value: e.Method.String() + " on " + e.Device.String()}
}
