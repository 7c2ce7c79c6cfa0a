package plan

import (
	"context"
	"fmt"
	"slices"

	"github.com/ndconv/ndconv/nd"
)

// Memory is an open device's memory: arrays live there between calls, and
// executables prepared for that device run on them with no transfers. The
// CPU's memory is host memory. A Memory holds its GPU open (its backend's
// OpenMemory: cuda.Open, opencl.Open, both counted) until Close, so that its arrays outlive the
// plans that run on them.
type Memory struct {
	Device Device // resolved: cpu, cuda:N or opencl:P:D
	impl   DeviceMemory
}

// OpenMemory opens dev's memory. auto means the GPU auto would prefer for a
// large problem (CUDA, else an OpenCL GPU), else the CPU; a plain opencl
// the first OpenCL GPU, else opencl:0:0.
func OpenMemory(dev Device) (*Memory, error) {
	if dev.IsAuto() {
		dev = hostDevice()
		if gpu, ok := usableGPU(); ok {
			dev = gpu
		}
	}
	b, ok := dev.Backend()
	if !ok {
		return nil, &UnavailableError{Device: dev, Reason: "this build has no " + dev.Kind + " backend"}
	}
	dev, err := ready(b, dev)
	if err != nil {
		return nil, err
	}
	impl, err := b.OpenMemory(dev)
	if err != nil {
		return nil, err
	}
	return &Memory{Device: dev, impl: impl}, nil
}

// Close releases the device (its last holder releases its context: arrays
// still allocated on it go with it).
func (m *Memory) Close() error {
	if m.impl == nil {
		return nil // a zero Memory holds nothing
	}
	return m.impl.Close()
}

// DeviceArray is an array in a Memory: host memory for the CPU, a
// cuda.Array or an OpenCL buffer on a GPU (its backend's Buffer).
type DeviceArray struct {
	Shape []int
	DType nd.DType
	mem   *Memory
	buf   Buffer
}

// Alloc allocates an array of the given type and shape in m; its contents
// are undefined (zero on the CPU).
func (m *Memory) Alloc(dt nd.DType, shape ...int) (*DeviceArray, error) {
	if _, err := nd.NumElements(shape); err != nil {
		return nil, err
	}
	buf, err := m.impl.Alloc(dt, shape)
	if err != nil {
		return nil, err
	}
	return &DeviceArray{Shape: slices.Clone(shape), DType: dt, mem: m, buf: buf}, nil
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

// WrappingMemory is a DeviceMemory that can make arrays over memory the
// caller allocated (cuda's).
type WrappingMemory interface {
	Wrap(dt nd.DType, shape []int, ptr uintptr, nbytes int) (Buffer, error)
}

// Wrap makes an array of dt and shape over nbytes of device memory at ptr
// that the caller allocated and keeps (a CuPy or PyTorch array's), with no
// copy: its Free does nothing. nbytes must be the array's size; the
// device checks that the memory is its own (a CUDA pointer of this
// device, in its primary context). Devices other than CUDA GPUs refuse
// with an *nd.UnsupportedError.
func (m *Memory) Wrap(dt nd.DType, shape []int, ptr uintptr, nbytes int) (*DeviceArray, error) {
	if !dt.Valid() {
		return nil, &nd.UnsupportedError{What: "dtype", Value: dt.String()}
	}
	n, err := nd.NumElements(shape)
	if err != nil {
		return nil, err
	}
	if nbytes != n*dt.Size() {
		return nil, &nd.ArgumentError{Arg: "device array", Msg: fmt.Sprintf("%v %v needs %d bytes, the memory has %d", dt, shape, n*dt.Size(), nbytes)}
	}
	w, ok := m.impl.(WrappingMemory)
	if !ok {
		return nil, &nd.UnsupportedError{What: "device arrays of the caller's memory", Value: m.Device.String(), Supported: "cuda:N"}
	}
	a := &DeviceArray{Shape: slices.Clone(shape), DType: dt, mem: m}
	if n == 0 {
		return a, nil // an empty array needs no memory (buf nil: nothing to free or move)
	}
	buf, err := w.Wrap(dt, shape, ptr, nbytes)
	if err != nil {
		return nil, err
	}
	a.buf = buf
	return a, nil
}

// streamKey is the context key of WithStream.
type streamKey struct{}

// WithStream returns a context that makes ExecuteDevice on a CUDA device
// run in the order of the caller's stream h (0 or 1: the legacy default
// stream, 2: the per-thread one, else a CUstream of the device's primary
// context): after the work queued on h so far, and before the work queued
// on h afterwards; it may return before the result is written
// (gpu.Engine.ExecuteDeviceAfter). Other devices ignore it.
func WithStream(ctx context.Context, h uintptr) context.Context {
	return context.WithValue(ctx, streamKey{}, h)
}

// streamOf is the stream WithStream put in ctx.
func streamOf(ctx context.Context) (uintptr, bool) {
	h, ok := ctx.Value(streamKey{}).(uintptr)
	return h, ok
}

// Memory is the memory the array lives in.
func (a *DeviceArray) Memory() *Memory { return a.mem }

// Write copies src, of the array's type and shape, into the array.
func (a *DeviceArray) Write(src nd.Array) error {
	if err := a.match("source", src); err != nil {
		return err
	}
	b := src.Bytes()
	if len(b) == 0 || a.buf == nil { // a zero DeviceArray holds nothing
		return nil
	}
	return a.buf.Write(b)
}

// Read copies the array into dst, of its type and shape.
func (a *DeviceArray) Read(dst nd.Array) error {
	if err := a.match("destination", dst); err != nil {
		return err
	}
	b := dst.Bytes()
	if len(b) == 0 || a.buf == nil {
		return nil
	}
	return a.buf.Read(b)
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
	if a.buf == nil {
		return nil // a zero DeviceArray
	}
	return a.buf.Free()
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
	if _, ok := e.run.(emptyRunner); ok {
		return nil // an empty problem: nothing to compute on any device
	}
	out := dst.buf
	if e.movesPlanar {
		if _, ok := streamOf(ctx); ok {
			// The move runs in the memory's queue once the engine's work
			// is done, not in the caller's stream's order.
			return &nd.UnsupportedError{What: "a planar bank on a caller's stream", Value: e.Device.String(), Supported: "the host's order (no stream in the context)"}
		}
		if e.interMem != dst.mem {
			if e.inter != nil {
				e.inter.Free()
			}
			buf, err := dst.mem.impl.Alloc(e.Problem.Out, e.Problem.FullShape())
			if err != nil {
				e.inter, e.interMem = nil, nil
				return err
			}
			e.inter, e.interMem = buf, dst.mem
		}
		out = e.inter
	}
	ok, err := dst.mem.impl.Execute(ctx, e.run, out, src.buf)
	if !ok {
		return &nd.UnsupportedError{What: "method on device arrays", Value: e.Method.String() + " on " + e.Device.String()}
	}
	if err != nil || !e.movesPlanar {
		return err
	}
	return dst.mem.impl.ToPlanar(dst.buf, e.inter, len(e.Problem.Kernels))
}
