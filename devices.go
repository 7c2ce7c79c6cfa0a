package ndconv

import (
	"strings"

	"github.com/ndconv/ndconv/plan"
)

// BackendInfo is one backend of this build (cpu, cuda, opencl) as
// Devices lists it: its devices, or why it has none here.
type BackendInfo struct {
	Name string
	// Unavailable says why the backend cannot run on this machine ("" where
	// it can): no driver library, no device, no compiler, ….
	Unavailable string
	Devices     []DeviceInfo
}

// DeviceInfo is one device a backend offers.
type DeviceInfo struct {
	// Device is its device string, as OpenDevice and Options.Device take
	// it: "cpu", "cuda:0", "opencl:1:0".
	Device string
	Model  string // as the driver names it
	Type   string // "CPU", "GPU", or the driver's word
	// Usable is false for a device listed but not usable: too old, or
	// without a compiler.
	Usable bool
	// Summary is the device in a line (its model and what matters first);
	// Detail its limits, memory and versions in another.
	Summary, Detail string
}

// Devices lists every backend of this build and its devices on this
// machine, in the order auto prefers them; what `ndconv devices` prints.
// Listing opens no device (CUDA's free memory is queried through a
// context the driver makes and releases).
func Devices() []BackendInfo {
	var all []BackendInfo
	for _, l := range plan.Listing() {
		b := BackendInfo{Name: l.Name}
		if l.Err != nil {
			msg := strings.TrimPrefix(l.Err.Error(), l.Name+": ")
			if !strings.HasPrefix(msg, "unavailable") {
				msg = "unavailable: " + msg
			}
			b.Unavailable = msg
		}
		for _, d := range l.Devices {
			b.Devices = append(b.Devices, DeviceInfo{Device: d.Device.String(), Model: d.Name, Type: d.Type, Usable: d.Usable, Summary: d.Summary, Detail: d.Detail})
		}
		all = append(all, b)
	}
	return all
}
