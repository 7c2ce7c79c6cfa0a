package opencl

import (
	"errors"
	"fmt"

	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// Prepared is one kernels.Launch made ready on a device: its family's
// source built with its defines (through the program cache), its kernel
// found, its taps and outer arguments uploaded, its work sizes checked
// against the device. Enqueue runs it on any input and output buffers, as
// often as wanted, from any goroutine; every kernel family takes the same
// arguments (in, out, taps, outer, the scalars as longs, cval as ACC_T).
type Prepared struct {
	Launch *kernels.Launch
	kernel *Kernel
	taps   *Buffer
	outer  *Buffer
	global [3]int
}

// Prepare builds l for d. It refuses, with an *UnsupportedError, a launch
// the device cannot run: float64 accumulation without cl_khr_fp64, a
// work-group larger than the kernel or device allows, more local or
// constant memory than the device has.
func (d *Device) Prepare(l *kernels.Launch) (*Prepared, error) {
	info := d.info
	if l.Wide && !info.FP64 {
		return nil, fp64Error(info)
	}
	group := l.Local[0] * l.Local[1] * l.Local[2]
	for i := range 3 {
		if l.Local[i] > info.MaxWorkItemSizes[i] && info.MaxWorkItemSizes[i] > 0 {
			return nil, &UnsupportedError{Backend: "opencl", What: "work-group shape", Value: fmt.Sprint(l.Local),
				Reason: fmt.Sprintf("%s allows at most %v work-items per dimension", info.Name, info.MaxWorkItemSizes)}
		}
	}
	if group > info.MaxWorkGroupSize {
		return nil, &UnsupportedError{Backend: "opencl", What: "work-group size", Value: fmt.Sprint(group),
			Reason: fmt.Sprintf("%s allows at most %d work-items per group", info.Name, info.MaxWorkGroupSize)}
	}
	if int64(l.LocalBytes) > info.LocalMemory {
		return nil, &UnsupportedError{Backend: "opencl", What: "local memory", Value: fmt.Sprintf("%d bytes", l.LocalBytes),
			Reason: fmt.Sprintf("%s has %d bytes per work-group", info.Name, info.LocalMemory)}
	}
	tapBytes := gpu.TapsBytes(l)
	outerBytes := int32Bytes(l.Outer)
	if c := int64(len(tapBytes) + len(outerBytes)); info.MaxConstantBuffer > 0 && c > info.MaxConstantBuffer {
		return nil, &UnsupportedError{Backend: "opencl", What: "kernel size", Value: fmt.Sprintf("%d taps (%d bytes of constant arguments)", len(l.Taps), c),
			Reason: fmt.Sprintf("%s allows %d bytes of __constant arguments", info.Name, info.MaxConstantBuffer)}
	}
	for i := range 3 {
		if l.Groups[i] <= 0 || l.Local[i] <= 0 {
			return nil, &UnsupportedError{Backend: "opencl", What: "work size", Value: fmt.Sprintf("groups %v, local %v", l.Groups, l.Local)}
		}
	}

	src, err := kernels.Source(l.Family)
	if err != nil {
		return nil, err
	}
	prog, err := d.Program(src, l.Family, l.Defines)
	if err != nil {
		return nil, err
	}
	k, err := prog.Kernel(l.Name)
	if err != nil {
		return nil, err
	}
	if group > k.MaxWorkGroupSize() {
		return nil, &UnsupportedError{Backend: "opencl", What: "work-group size", Value: fmt.Sprint(group),
			Reason: fmt.Sprintf("kernel %s allows at most %d work-items per group on %s", l.Name, k.MaxWorkGroupSize(), info.Name)}
	}
	taps, err := d.AllocCopy(tapBytes)
	if err != nil {
		return nil, err
	}
	outer, err := d.AllocCopy(outerBytes)
	if err != nil {
		taps.Free()
		return nil, err
	}
	p := &Prepared{Launch: l, kernel: k, taps: taps, outer: outer}
	for i := range 3 {
		p.global[i] = l.Groups[i] * l.Local[i]
	}
	return p, nil
}

// Enqueue queues the launch on q reading in and writing out, and returns
// the kernel's event for the caller to wait on, time and release.
func (p *Prepared) Enqueue(q *Queue, in, out *Buffer) (*Event, error) {
	return p.EnqueueAfter(q, nil, in, out)
}

// EnqueueAfter is Enqueue for a launch that starts once the events of
// wait are complete.
func (p *Prepared) EnqueueAfter(q *Queue, wait []*Event, in, out *Buffer) (*Event, error) {
	args := gpu.LaunchArgs(p.Launch, in, out, p.taps, p.outer)
	return p.kernel.EnqueueAfter(q, wait, p.global, p.Launch.Local, args...)
}

// Release frees the launch's argument buffers; the program stays in the
// device's cache. Launches already queued still complete.
func (p *Prepared) Release() error {
	if p == nil {
		return nil
	}
	return errors.Join(p.taps.Free(), p.outer.Free())
}

func int32Bytes(v []int32) []byte {
	if len(v) == 0 {
		return make([]byte, 4) // an argument buffer is never empty
	}
	return nd.AsBytes(v)
}

func fp64Error(info Info) error {
	return &UnsupportedError{Backend: "opencl", What: "float64 arithmetic", Value: "on " + info.Spec() + " (" + info.Name + ")",
		Reason: "the device lacks cl_khr_fp64, and this problem accumulates in float64 (float64 or int32 data, or a float64 output); use another device or float32 data"}
}
