package ndconv

import "github.com/ndconv/ndconv/plan"

// DeviceName is a device string parsed: auto, cpu, cuda:N, opencl:P:D or a
// plain opencl, as Options.Device and OpenDevice take them. The zero
// DeviceName is auto. Tools that choose a device before planning (the
// CLI, bench, the tuner) ask it what it names; comparing two with == tells
// whether they name the same device.
type DeviceName struct{ d plan.Device }

// name is d as a DeviceName: auto ("" or "auto") is the zero DeviceName, so that
// == compares names.
func name(d plan.Device) DeviceName {
	if d.IsAuto() {
		return DeviceName{}
	}
	return DeviceName{d}
}

// dev is the device the planner takes: auto its parsed "auto".
func (n DeviceName) dev() plan.Device {
	if n.IsAuto() {
		return plan.Device{Kind: "auto"}
	}
	return n.d
}

// ParseDevice parses a device string as Options.Device takes it ("" or
// auto, cpu, cuda, cuda:N, opencl, opencl:P:D); an unknown one is an
// *nd.UnsupportedError listing the forms. It is the one parser of device
// strings the library, the CLI and the C API share.
func ParseDevice(s string) (DeviceName, error) {
	d, err := plan.ParseDevice(s)
	return name(d), err
}

// ParseDevices parses a comma-separated list of devices, as
// BlockOptions.Devices takes it: each a device string ParseDevice takes,
// or KIND:all for every usable device of a backend (cuda:all, opencl:all).
// Duplicates are kept.
func ParseDevices(s string) ([]DeviceName, error) {
	ds, err := plan.ParseDevices(s)
	if err != nil {
		return nil, err
	}
	names := make([]DeviceName, len(ds))
	for i, d := range ds {
		names[i] = name(d)
	}
	return names, nil
}

// String is the device string: cpu, cuda:N, opencl:P:D, opencl (the
// first OpenCL GPU, unresolved) or auto.
func (n DeviceName) String() string {
	if n.IsAuto() {
		return "auto"
	}
	return n.d.String()
}

// Backend is the name of the device's backend ("cpu", "cuda", "opencl"),
// or "auto".
func (n DeviceName) Backend() string {
	if n.IsAuto() {
		return "auto"
	}
	return n.d.Kind
}

// IsAuto reports whether the device is left to auto's choice.
func (n DeviceName) IsAuto() bool { return n.d.IsAuto() }

// GPU reports whether the device is a GPU's (a CUDA or OpenCL device).
func (n DeviceName) GPU() bool { return n.d.GPU() }

// Resolve is the one device the name means: a plain opencl becomes the
// first OpenCL GPU (else opencl:0:0); other names are themselves (auto
// stays auto: the planner resolves it per problem).
func (n DeviceName) Resolve() DeviceName { return name(n.d.Resolve()) }

// Available is nil where the device's backend can run on this machine
// (its driver library loads and offers a device), else why not; auto is
// always available (the CPU is).
func (n DeviceName) Available() error {
	b, ok := n.d.Backend()
	if !ok {
		return nil
	}
	return b.Available()
}

// MeasuresRates reports whether MeasureGPURates can measure the device
// (its backend measures its rates: CUDA GPUs today).
func (n DeviceName) MeasuresRates() bool { return n.d.MeasuresRates() }

// AutoPrewarmMinBytes is the smallest input file for which a caller should
// Prewarm auto's GPU: below it auto keeps the problem on the CPU for any
// kernel the CPU's FFT does not take more cheaply, and a start begun in
// vain costs the driver's time and memory.
const AutoPrewarmMinBytes = plan.AutoPrewarmMinBytes
