package plan

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

// Backend is a device family as the planner sees it: the planner asks it,
// never switches on its name. Each backend is one file of this package
// (backend_cpu.go, backend_cuda.go, backend_opencl.go: adapters over the
// engine packages, which cannot import the planner) and one line in
// backends.go, which registers it.
type Backend interface {
	// Name is the backend's Device.Kind and the first word of its device
	// strings: "cpu", "cuda", "opencl".
	Name() string
	// Forms lists its device strings for messages ("cuda, cuda:N").
	Forms() string
	// Device is the device a string's numbers name (cuda:N's N,
	// opencl:P:D's P and D; none for the plain name), false where the
	// backend takes no such form.
	Device(nums []int) (Device, bool)
	// Format writes a device as its string (Device.String).
	Format(Device) string
	// GPU reports whether the backend runs on an accelerator: its problems
	// are bounded by the GPU kernels' dtypes (float16 runs as a float32
	// twin), its kernels read the tuning cache, and auto weighs its start
	// and copies against the CPU.
	GPU() bool
	// Available is nil where the backend can run on this machine, else why
	// not: an error whose Reason says it (UnavailableReason).
	Available() error
	// Resolve is the one device a request means (a plain "opencl": the
	// first OpenCL GPU, else opencl:0:0); the request itself where it
	// names one.
	Resolve(Device) Device
	// Devices lists the backend's devices on this machine (an error where
	// the backend is unavailable).
	Devices() ([]DeviceInfo, error)
	// AutoDevice is the device auto would run on, false where the backend
	// offers auto none.
	AutoDevice() (Device, bool)
	// Implementations are the methods it runs, as the planner weighs them.
	Implementations() []Implementation
	// Identity names a device's model and driver for the tuning cache,
	// asked without a context; false where it cannot be identified.
	Identity(Device) (string, bool)
	// IsOpen reports whether the device is open in this process (held by
	// a plan, a Memory or a Prewarm).
	IsOpen(Device) bool
	// Open opens the device and returns the hold to let go of (Prewarm);
	// a nil close where there is nothing to hold.
	Open(Device) (close func() error, err error)
	// OpenMemory opens the device's memory (Memory).
	OpenMemory(Device) (DeviceMemory, error)
}

// DeviceInfo is one device a backend lists: enough to name it and to say
// whether ndconv can run on it (the backends' packages give the rest).
type DeviceInfo struct {
	Device Device
	Name   string // the model, as the driver names it
	Type   string // "CPU", "GPU", or the driver's word (OpenCL's "accelerator", …)
	Usable bool   // false: listed but too old, or without a compiler
	// Summary is the device in a line (its model, with what ndconv needs
	// to know first: its type, compute capability, or why it is not
	// usable); Detail its limits, memory and versions in another.
	Summary, Detail string
}

// BackendListing is one backend's devices, or why it has none.
type BackendListing struct {
	Name    string
	Err     error // why the backend cannot run here (an Available error) or list its devices; nil where it can
	Devices []DeviceInfo
}

// Listing lists every registered backend, in registration order, with its
// devices or why it has none: what `ndconv devices` prints.
func Listing() []BackendListing {
	var all []BackendListing
	for _, b := range backends {
		l := BackendListing{Name: b.Name()}
		if err := b.Available(); err != nil {
			l.Err = err
		} else {
			l.Devices, l.Err = b.Devices()
		}
		all = append(all, l)
	}
	return all
}

// ListDevices lists every registered backend's devices, in registration
// order; a backend that is unavailable lists none.
func ListDevices() []DeviceInfo {
	var all []DeviceInfo
	for _, b := range backends {
		if ds, err := b.Devices(); err == nil {
			all = append(all, ds...)
		}
	}
	return all
}

// DeviceMemory is a backend's part of an open Memory.
type DeviceMemory interface {
	// Alloc allocates an array of the type and shape, contents undefined.
	Alloc(dt nd.DType, shape []int) (Buffer, error)
	// Execute runs a prepared runner on arrays of this memory, false where
	// the runner cannot take them (it then has not run).
	Execute(ctx context.Context, run Runner, dst, src Buffer) (bool, error)
	// ToPlanar moves src, a bank's output of bank kernels as the engines
	// write it (interleaved, kernel fastest), into dst in the planar
	// layout (nd.ToPlanar), on this memory's device, and waits.
	ToPlanar(dst, src Buffer, bank int) error
	Close() error
}

// Buffer is an array's storage in a DeviceMemory; its byte slices are the
// whole array.
type Buffer interface {
	Write(b []byte) error
	Read(b []byte) error
	Free() error
}

// RateMeasurer is a backend that can measure a device's GPURates
// (MeasureGPURates).
type RateMeasurer interface {
	MeasureRates(ctx context.Context, dev Device) (GPURates, error)
}

// backends are the registered backends, in registration order: auto
// prefers the first GPU backend offering a device, and device-string
// messages list them in this order.
var backends []Backend

// Register adds a backend (backends.go registers this build's). Call it
// from an init function: plans read the registry without a lock. A second
// backend of a name panics: it is a programming error.
func Register(b Backend) {
	if _, ok := Lookup(b.Name()); ok {
		panic("plan: backend " + b.Name() + " registered twice")
	}
	backends = append(backends, b)
}

// Lookup is the backend of a name (a Device.Kind).
func Lookup(name string) (Backend, bool) {
	for _, b := range backends {
		if b.Name() == name {
			return b, true
		}
	}
	return nil, false
}

// Backends lists the registered backends, in registration order.
func Backends() []Backend { return append([]Backend(nil), backends...) }

// Backend is the device's backend, false for auto and an unknown kind.
func (d Device) Backend() (Backend, bool) { return Lookup(d.Kind) }

// GPU reports whether the device is a GPU backend's.
func (d Device) GPU() bool {
	b, ok := d.Backend()
	return ok && b.GPU()
}

// MeasuresRates reports whether the device's backend can measure its
// GPURates (MeasureGPURates; CUDA today).
func (d Device) MeasuresRates() bool {
	b, _ := d.Backend()
	_, ok := b.(RateMeasurer)
	return ok
}

// IsAuto reports whether the device leaves the choice to auto ("" or
// "auto").
func (d Device) IsAuto() bool { return d.Kind == "" || d.Kind == autoKind }

const autoKind = "auto"

func (d Device) String() string {
	if b, ok := d.Backend(); ok {
		return b.Format(d)
	}
	return d.Kind
}

// ParseDevice accepts auto and every registered backend's forms (cpu,
// cuda, cuda:N, opencl and opencl:P:D); the empty string means auto. It is
// the one parser of device strings: the CLI, bench, the C API and the
// root all call it.
func ParseDevice(s string) (Device, error) {
	forms := []string{autoKind}
	for _, b := range backends {
		forms = append(forms, b.Forms())
	}
	bad := &nd.UnsupportedError{What: "device", Value: s, Supported: strings.Join(forms, ", ")}
	parts := strings.Split(strings.ToLower(strings.TrimSpace(s)), ":")
	nums := make([]int, len(parts)-1)
	for i, p := range parts[1:] {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return Device{}, bad
		}
		nums[i] = n
	}
	if parts[0] == "" || parts[0] == autoKind {
		if len(nums) > 0 {
			return Device{}, bad
		}
		return Device{Kind: autoKind}, nil
	}
	if b, ok := Lookup(parts[0]); ok {
		if d, ok := b.Device(nums); ok {
			return d, nil
		}
	}
	return Device{}, bad
}

// ready checks that b can run here and resolves dev, b's device, to the
// device it means; a failure is an *UnavailableError.
func ready(b Backend, dev Device) (Device, error) {
	if err := b.Available(); err != nil {
		return dev, unavailable(dev, err)
	}
	return b.Resolve(dev), nil
}

// Resolve is the one device a request means: a plain "opencl" the first
// OpenCL GPU, else opencl:0:0 (its backend's Resolve); auto and a device
// named exactly are themselves.
func (d Device) Resolve() Device {
	if b, ok := d.Backend(); ok {
		return b.Resolve(d)
	}
	return d
}

// unavailable is the UnavailableError of dev, whose backend's Available
// returned err.
func unavailable(dev Device, err error) *UnavailableError {
	return &UnavailableError{Device: dev, Reason: UnavailableReason(err)}
}

// UnavailableReason is a backend's explanation of why it cannot run,
// without the package prefix its error begins with (an UnavailableError
// names the device instead): the reason a backend's Available gives
// (reasonError), else the whole message.
func UnavailableReason(err error) string {
	var r *reasonError
	if errors.As(err, &r) {
		return r.reason
	}
	return err.Error()
}

// reasonError is a backend's error from Available with its reason read
// from the backend's typed error (backend_cuda.go, backend_opencl.go); it
// reads and unwraps as that error.
type reasonError struct {
	reason string
	err    error
}

func (e *reasonError) Error() string { return e.err.Error() }
func (e *reasonError) Unwrap() error { return e.err }

// withReason gives err, a backend's unavailability, its reason: the
// backend's own, then the error under it without the backend's prefix (as
// the backend's message writes it, gpu.UnavailableMessage).
func withReason(err error, backend, reason string, under error) error {
	if under != nil {
		reason += ": " + strings.TrimPrefix(under.Error(), backend+": ")
	}
	return &reasonError{reason: reason, err: err}
}

// ParseDevices parses a list of devices, comma-separated: each a device
// string ParseDevice takes, or KIND:all for every usable device of a
// backend (cuda:all, opencl:all), in the backend's order. Duplicates are
// kept: a device named twice takes twice the work.
func ParseDevices(s string) ([]Device, error) {
	var devs []Device
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, &nd.UnsupportedError{What: "device list", Value: s, Supported: "devices separated by commas, none empty"}
		}
		if kind, ok := strings.CutSuffix(strings.ToLower(part), ":all"); ok {
			b, found := Lookup(kind)
			if !found {
				return nil, &nd.UnsupportedError{What: "device", Value: part, Supported: "cuda:all, opencl:all and the forms of ParseDevice"}
			}
			usable, err := usableDevices(b)
			if err != nil {
				return nil, unavailable(Device{Kind: kind}, err)
			}
			n := len(devs)
			devs = append(devs, usable...)
			if len(devs) == n {
				return nil, &UnavailableError{Device: Device{Kind: kind}, Reason: "no usable " + kind + " device"}
			}
			continue
		}
		d, err := ParseDevice(part)
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// usableDevices lists b's usable devices: through its UsableDevices where
// it has one (a cheaper listing than Devices, which may open each device
// for its live figures), else from Devices.
func usableDevices(b Backend) ([]Device, error) {
	if u, ok := b.(interface{ UsableDevices() ([]Device, error) }); ok {
		return u.UsableDevices()
	}
	ds, err := b.Devices()
	if err != nil {
		return nil, err
	}
	var usable []Device
	for _, d := range ds {
		if d.Usable {
			usable = append(usable, d.Device)
		}
	}
	return usable, nil
}
