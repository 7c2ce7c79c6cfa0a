package ndconv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/plan"
)

// Device is an open compute device — the CPU, a CUDA GPU or an OpenCL
// device — whose memory holds arrays between calls, so that work chains
// on it with no transfers: Upload once, execute plans made by NewPlan as
// often as wanted on DeviceArrays, Download the result.
//
// Close frees every array the device allocated and closes every plan it
// made; using any of them, or the device, afterwards is ErrClosed. A
// Device, its arrays and its plans are safe for concurrent use (a plan's
// executions take turns, see Plan). A nil or zero Device (not made by
// OpenDevice) is an error to use, not a panic; its Close does nothing.
type Device struct {
	mem *plan.Memory

	mu     sync.Mutex
	closed bool
	arrays map[*DeviceArray]struct{}
	plans  map[*Plan]struct{}
}

// OpenDevice opens a device by name: "cpu", "cuda", "cuda:N", "opencl"
// (the first OpenCL GPU, else opencl:0:0), "opencl:P:D", or "auto" (a GPU
// where one is usable, else the CPU). A GPU that is not usable here is a
// *plan.UnavailableError saying why.
func OpenDevice(name string) (*Device, error) {
	dev, err := plan.ParseDevice(name)
	if err != nil {
		return nil, err
	}
	mem, err := plan.OpenMemory(dev)
	if err != nil {
		return nil, err
	}
	return &Device{mem: mem, arrays: map[*DeviceArray]struct{}{}, plans: map[*Plan]struct{}{}}, nil
}

// Name is the device's name as OpenDevice takes it: cpu, cuda:N or
// opencl:P:D ("" for a nil or zero Device).
func (d *Device) Name() string {
	if d == nil || d.mem == nil {
		return ""
	}
	return d.mem.Device.String()
}

// errNoDevice is the error of a nil or zero Device's methods, and of a
// nil or zero DeviceArray's.
var errNoDevice = &nd.ArgumentError{Arg: "device", Msg: "a nil or zero Device or DeviceArray (make one with OpenDevice, Alloc or Upload)"}

// errDeviceClosed is ErrClosed for a device, an array or a plan of a
// closed device.
var errDeviceClosed = &closedError{"the device is closed"}

// errArrayFreed is ErrClosed for a freed device array.
var errArrayFreed = &closedError{"the device array is freed"}

// closedError is an error that is ErrClosed (errors.Is) and says what was
// closed.
type closedError struct{ msg string }

func (e *closedError) Error() string        { return "ndconv: " + e.msg }
func (e *closedError) Is(target error) bool { return target == ErrClosed }

// Close frees the device's arrays, closes its plans and releases the
// device. Closing twice does nothing.
func (d *Device) Close() error {
	if d == nil || d.mem == nil {
		return nil
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	plans, arrays := d.plans, d.arrays
	d.plans, d.arrays = nil, nil
	d.mu.Unlock()
	var errs []error
	for p := range plans {
		errs = append(errs, p.Close())
	}
	for a := range arrays {
		errs = append(errs, a.free())
	}
	errs = append(errs, d.mem.Close())
	return errors.Join(errs...)
}

// add registers a new array or plan with the open device; on a closed
// device it releases it and reports ErrClosed.
func (d *Device) add(a *DeviceArray, p *Plan) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		if a != nil {
			a.free()
		}
		if p != nil {
			p.Close()
		}
		return errDeviceClosed
	}
	if a != nil {
		d.arrays[a] = struct{}{}
	}
	if p != nil {
		d.plans[p] = struct{}{}
	}
	return nil
}

// open reports ErrClosed once the device is closed (errNoDevice for a nil
// or zero one).
func (d *Device) open() error {
	if d == nil || d.mem == nil {
		return errNoDevice
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errDeviceClosed
	}
	return nil
}

// DeviceArray is an array in a device's memory. Its methods are safe for
// concurrent use, but a plan executing on it must not overlap a transfer
// into it.
type DeviceArray struct {
	dev *Device

	mu    sync.Mutex
	arr   *plan.DeviceArray // nil once freed
	shape []int
	dtype DType
	// ext is the caller's memory a Wrap array lies over (n 0 otherwise).
	ext struct{ ptr, n uintptr }
}

// Alloc allocates an array of the given element type and shape on the
// device; its contents are undefined until written (by Write, or as a
// plan's output).
func (d *Device) Alloc(dtype DType, shape ...int) (*DeviceArray, error) {
	if err := d.open(); err != nil {
		return nil, err
	}
	arr, err := d.mem.Alloc(dtype, shape...)
	if err != nil {
		return nil, err
	}
	return d.track(arr)
}

// Upload copies a host array to a new array on the device.
func (d *Device) Upload(src Array) (*DeviceArray, error) {
	if err := src.Check(); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	if err := d.open(); err != nil {
		return nil, err
	}
	arr, err := d.mem.Upload(src)
	if err != nil {
		return nil, err
	}
	return d.track(arr)
}

// Wrap makes an array of the given type and shape over device memory the
// caller allocated and owns — nbytes at ptr, C order, such as a CuPy
// array's or a PyTorch tensor's (their __cuda_array_interface__ or DLPack
// data pointer) — with no copy. Plans run on it in place; its Free (and
// the device's Close) forgets it without freeing the memory, which the
// caller keeps allocated while the array is in use. Only CUDA devices
// wrap memory: the pointer must be of this device, in its primary context
// (the CUDA runtime's, which CuPy and PyTorch use); host memory, another
// device's memory and a length that is not the array's are
// *nd.ArgumentErrors. Pass the caller's stream to ExecuteDevice with
// WithStream.
func (d *Device) Wrap(dtype DType, ptr uintptr, nbytes int, shape ...int) (*DeviceArray, error) {
	if err := d.open(); err != nil {
		return nil, err
	}
	if nbytes < 0 {
		return nil, &nd.ArgumentError{Arg: "device array", Msg: fmt.Sprintf("%d bytes is negative", nbytes)}
	}
	arr, err := d.mem.Wrap(dtype, shape, ptr, nbytes)
	if err != nil {
		return nil, err
	}
	a, err := d.track(arr)
	if err == nil {
		a.ext.ptr, a.ext.n = ptr, uintptr(nbytes)
	}
	return a, err
}

// WithStream returns a context that makes ExecuteDevice on a CUDA device
// run in the order of the caller's stream h (0 or 1: the legacy default
// stream; 2: the per-thread default stream; else a CUstream or
// cudaStream_t of the device's primary context), as a CUDA library call
// on that stream does: its work starts after the work the caller queued
// on h so far, the work the caller queues on h afterwards starts after
// it, and ExecuteDevice may return before the result is written (the
// exact methods do; FFT, gemm and Winograd wait). Synchronise h before
// reading the result on the host or on another stream; a failure of the
// work itself shows there. Other devices ignore it.
func WithStream(ctx context.Context, h uintptr) context.Context { return plan.WithStream(ctx, h) }

// overlaps says whether two arrays over the caller's memory share a byte.
func (a *DeviceArray) overlaps(b *DeviceArray) bool {
	if a.ext.n == 0 || b.ext.n == 0 {
		return false
	}
	return a.ext.ptr < b.ext.ptr+b.ext.n && b.ext.ptr < a.ext.ptr+a.ext.n
}

func (d *Device) track(arr *plan.DeviceArray) (*DeviceArray, error) {
	a := &DeviceArray{dev: d, arr: arr, shape: slices.Clone(arr.Shape), dtype: arr.DType}
	if err := d.add(a, nil); err != nil {
		return nil, err
	}
	return a, nil
}

// Shape is the array's shape.
func (a *DeviceArray) Shape() []int {
	if a == nil {
		return nil
	}
	return slices.Clone(a.shape)
}

// DType is the array's element type.
func (a *DeviceArray) DType() DType {
	if a == nil {
		return nd.Unspecified
	}
	return a.dtype
}

// Device is the device the array lives on.
func (a *DeviceArray) Device() *Device {
	if a == nil {
		return nil
	}
	return a.dev
}

// Download copies the array into a new host array.
func (a *DeviceArray) Download() (Array, error) {
	if _, err := a.get(); err != nil {
		return Array{}, err
	}
	h, err := nd.New(a.dtype, a.shape...)
	if err != nil {
		return Array{}, err
	}
	if err := a.Read(h); err != nil {
		return Array{}, err
	}
	return h, nil
}

// Read copies the array into dst, a host array of its type and shape.
func (a *DeviceArray) Read(dst Array) error {
	arr, err := a.get()
	if err != nil {
		return err
	}
	return arr.Read(dst)
}

// Write copies src, a host array of the array's type and shape, into the
// array.
func (a *DeviceArray) Write(src Array) error {
	arr, err := a.get()
	if err != nil {
		return err
	}
	return arr.Write(src)
}

// get returns the array's memory while it and its device are open. Freeing
// an array while it is in use is the caller's mistake, not guarded here:
// the device's own Close waits for nothing either.
func (a *DeviceArray) get() (*plan.DeviceArray, error) {
	if a == nil || a.dev == nil {
		return nil, errNoDevice
	}
	if err := a.dev.open(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.arr == nil {
		return nil, errArrayFreed
	}
	return a.arr, nil
}

// Free releases the array's memory; using it afterwards is ErrClosed.
// Freeing twice, or freeing a nil or zero array, does nothing.
func (a *DeviceArray) Free() error {
	if a == nil || a.dev == nil {
		return nil
	}
	a.dev.mu.Lock()
	delete(a.dev.arrays, a)
	a.dev.mu.Unlock()
	return a.free()
}

func (a *DeviceArray) free() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.arr == nil {
		return nil
	}
	err := a.arr.Free()
	a.arr = nil
	return err
}

// NewPlan prepares op as ndconv.NewPlan does, to run on this device
// (opt.Device is ignored): ExecuteDevice then runs it on the device's
// arrays, Execute still on host arrays. The device closes it when it
// closes.
func (d *Device) NewPlan(op Operation, shape []int, dtype DType, opt Options, kernels ...Kernel) (*Plan, error) {
	if err := d.open(); err != nil {
		return nil, err
	}
	opt.Device = d.Name()
	p, err := NewPlan(op, shape, dtype, opt, kernels...)
	if err != nil {
		return nil, err
	}
	p.dev = d
	if err := d.add(nil, p); err != nil {
		return nil, err
	}
	return p, nil
}

// ExecuteDevice filters src into dst, both arrays on the device the plan
// was made for (Device.NewPlan), and returns dst: nothing moves between
// host and device. When dst is nil, a new array is allocated on the
// device; otherwise it must have the plan's output Shape and DType, and it
// may be src (where the shapes and dtypes allow): the result is computed
// into a new array whose memory then replaces src's. It returns when the
// result is in dst. A planar bank (Options.BankLayout) is written planar
// by the CPU's direct and FFT methods; the other engines write it
// interleaved into an array the plan keeps on the device, from which
// kernels/layout.cl moves it into dst (not on a caller's stream:
// WithStream refuses it).
func (p *Plan) ExecuteDevice(ctx context.Context, dst, src *DeviceArray) (*DeviceArray, error) {
	if err := p.ready(); err != nil {
		return nil, err
	}
	if err := checkContext(ctx); err != nil {
		return nil, err
	}
	if p.dev == nil {
		return nil, &nd.ArgumentError{Arg: "plan", Msg: "ExecuteDevice needs a plan made by Device.NewPlan"}
	}
	if src == nil || src.dev == nil {
		return nil, &nd.ArgumentError{Arg: "input", Msg: "no device array"}
	}
	if dst != nil && dst.dev == nil {
		return nil, &nd.ArgumentError{Arg: "output", Msg: "a zero DeviceArray (pass nil for a new one)"}
	}
	if src.dev != p.dev || dst != nil && dst.dev != p.dev {
		return nil, &nd.ArgumentError{Arg: "array", Msg: "a device array of another Device than the plan's"}
	}
	if src.dtype != p.inType || !slices.Equal(src.shape, p.problem.InShape) {
		return nil, &nd.ArgumentError{Arg: "input", Msg: fmt.Sprintf("%v %v does not match the plan's %v %v", src.dtype, src.shape, p.inType, p.problem.InShape)}
	}
	if dst != nil && (dst.dtype != p.problem.Out || !slices.Equal(dst.shape, p.Shape())) {
		return nil, &nd.ArgumentError{Arg: "output", Msg: fmt.Sprintf("%v %v does not match the plan's %v %v", dst.dtype, dst.shape, p.problem.Out, p.Shape())}
	}
	if dst != nil && (dst.ext.n != 0 || src.ext.n != 0) && (dst == src || dst.overlaps(src)) {
		// The engines read inputs around each output they write, and the
		// caller's memory cannot be swapped for fresh memory as an
		// in-place call's is: the caller gives another output.
		return nil, &nd.ArgumentError{Arg: "output", Msg: "shares memory with the input, which is the caller's (Wrap): give an output that does not overlap it"}
	}
	if dst == nil || dst == src {
		fresh, err := p.dev.Alloc(p.problem.Out, p.Shape()...)
		if err != nil {
			return nil, err
		}
		out, err := p.ExecuteDevice(ctx, fresh, src)
		if err != nil || dst == nil {
			if err != nil {
				fresh.Free()
			}
			return out, err
		}
		// In place: the engines read inputs around each output they
		// write, so the result went to fresh memory, which now becomes
		// src's (no copy, on any device); fresh takes src's old memory
		// away with it.
		err = swapMemory(src, fresh)
		return src, errors.Join(err, fresh.Free())
	}
	in, err := src.get()
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	out, err := dst.get()
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	if err := p.exec.ExecuteDevice(ctx, out, in); err != nil {
		if errors.Is(err, ErrClosed) && p.dev.open() != nil {
			return nil, errDeviceClosed
		}
		return nil, err
	}
	return dst, nil
}

// swapMemory exchanges the memory of two arrays of one type and shape,
// unless one was freed meanwhile.
func swapMemory(a, b *DeviceArray) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if a.arr == nil || b.arr == nil {
		return errArrayFreed
	}
	a.arr, b.arr = b.arr, a.arr
	return nil
}

// forget drops a plan the caller closes from the device's list.
func (d *Device) forget(p *Plan) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.plans, p)
}
