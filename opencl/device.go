package opencl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gpucache"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// Info describes one OpenCL device of one platform. Sizes are in bytes.
type Info struct {
	Platform        int // P of opencl:P:D: the platform's index in clGetPlatformIDs' order
	Device          int // D: the device's index within its platform
	PlatformName    string
	PlatformVersion string // "OpenCL 3.0 PoCL 3.1+debian …"
	Name            string
	Type            string // "GPU", "CPU", "accelerator", "custom"
	Version         string // CL_DEVICE_VERSION: "OpenCL 3.0 …"
	DriverVersion   string

	ComputeUnits      int
	MaxWorkGroupSize  int
	MaxWorkItemSizes  [3]int
	LocalMemory       int64
	GlobalMemory      int64
	MaxAlloc          int64 // the largest single buffer
	MaxConstantBuffer int64 // the largest __constant argument
	FP64              bool  // cl_khr_fp64, or a nonzero CL_DEVICE_DOUBLE_FP_CONFIG
	Available         bool
	CompilerAvailable bool
}

// PoCL reports whether the device is PoCL's (the Portable Computing
// Language, OpenCL on the CPU).
func (i Info) PoCL() bool { return strings.Contains(i.PlatformVersion, "PoCL") }

// Spec is the device's name in --device syntax: "opencl:P:D".
func (i Info) Spec() string { return fmt.Sprintf("opencl:%d:%d", i.Platform, i.Device) }

// modern reports whether a CL_DEVICE_VERSION is 2.0 or newer.
func modern(version string) bool {
	major, _, _ := strings.Cut(strings.TrimPrefix(version, "OpenCL "), ".")
	m, err := strconv.Atoi(major)
	return err == nil && m >= 2
}

type platformDevices struct {
	id      uintptr
	devices []uintptr
}

// enumerate lists every platform and its devices in the ICD loader's
// order, which P and D index, once: NVIDIA's driver crashed (SIGSEGV in
// clGetDeviceInfo) when one goroutine listed the devices while another
// queried a handle from an earlier listing.
var enumerate = sync.OnceValues(func() ([]platformDevices, error) {
	if err := loadLibrary(); err != nil {
		return nil, err
	}
	ids, err := clGetPlatformIDs()
	if err != nil {
		return nil, err
	}
	out := make([]platformDevices, len(ids))
	for i, id := range ids {
		devs, err := clGetDeviceIDs(id)
		if err != nil {
			return nil, fmt.Errorf("platform %d: %w", i, err)
		}
		out[i] = platformDevices{id: id, devices: devs}
	}
	return out, nil
})

// queryInfo reads what ndconv uses about one device.
func queryInfo(p, d int, platform, device uintptr) (Info, error) {
	info := Info{Platform: p, Device: d}
	var errs []error
	text := func(b []byte, err error) string {
		errs = append(errs, err)
		return strings.TrimSpace(goString(b))
	}
	num := func(param int) uint64 { // a cl_uint, cl_ulong, size_t or cl_bool, as wide as the call says
		var v [8]byte
		b, err := clGetDeviceInfo(device, param)
		errs = append(errs, err)
		copy(v[:], b)
		return binary.LittleEndian.Uint64(v[:])
	}
	info.PlatformName = text(clGetPlatformInfo(platform, clPlatformName))
	info.PlatformVersion = text(clGetPlatformInfo(platform, clPlatformVersion))
	info.Name = text(clGetDeviceInfo(device, clDeviceName))
	info.Version = text(clGetDeviceInfo(device, clDeviceVersion))
	info.DriverVersion = text(clGetDeviceInfo(device, clDriverVersion))
	extensions := strings.Fields(text(clGetDeviceInfo(device, clDeviceExtensions)))

	info.Type = deviceTypeName(num(clDeviceType))
	info.ComputeUnits = int(num(clDeviceMaxComputeUnits))
	info.MaxWorkGroupSize = int(num(clDeviceMaxWorkGroupSize))
	info.LocalMemory = int64(num(clDeviceLocalMemSize))
	info.GlobalMemory = int64(num(clDeviceGlobalMemSize))
	info.MaxAlloc = int64(num(clDeviceMaxMemAllocSize))
	info.MaxConstantBuffer = int64(num(clDeviceMaxConstantBufferSize))
	info.Available = num(clDeviceAvailable) != 0
	info.CompilerAvailable = num(clDeviceCompilerAvailable) != 0
	sizes, err := clGetDeviceInfo(device, clDeviceMaxWorkItemSizes)
	for i := 0; i < 3 && 8*(i+1) <= len(sizes); i++ { // size_t[], at least 3 of them
		info.MaxWorkItemSizes[i] = int(binary.LittleEndian.Uint64(sizes[8*i:]))
	}
	errs = append(errs, err)
	// OpenCL 3.0 devices may report fp64 through CL_DEVICE_DOUBLE_FP_CONFIG
	// alone (which 1.x devices without it may refuse).
	fp64, _ := clGetDeviceInfo(device, clDeviceDoubleFPConfig)
	info.FP64 = slices.Contains(extensions, "cl_khr_fp64") || slices.ContainsFunc(fp64, func(b byte) bool { return b != 0 })
	if err := errors.Join(errs...); err != nil {
		return Info{}, fmt.Errorf("opencl:%d:%d: %w", p, d, err)
	}
	return info, nil
}

// deviceTypeName names CL_DEVICE_TYPE's bits from CL_DEVICE_TYPE_CPU on.
func deviceTypeName(t uint64) string {
	var names []string
	for i, name := range []string{"CPU", "GPU", "accelerator", "custom"} {
		if t&(clDeviceTypeCPU<<i) != 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "unknown"
	}
	return strings.Join(names, "+")
}

// Available reports whether the OpenCL backend can run here: nil, or an
// *UnavailableError saying why not. It never panics; later calls are free.
func Available() error { return availability() }

var availability = sync.OnceValue(func() error {
	plats, err := enumerate()
	if err != nil {
		var u *UnavailableError
		if errors.As(err, &u) {
			return err
		}
		return &UnavailableError{Backend: "opencl", Reason: "cannot list platforms and devices", Err: err}
	}
	if len(plats) == 0 {
		return &UnavailableError{Backend: "opencl", Reason: "no OpenCL platform (the ICD loader found no vendor driver; see /etc/OpenCL/vendors or OCL_ICD_VENDORS)"}
	}
	found := 0
	for p, pl := range plats {
		for d, dev := range pl.devices {
			found++
			if info, err := queryInfo(p, d, pl.id, dev); err == nil && info.Available && info.CompilerAvailable {
				return nil
			}
		}
	}
	if found == 0 {
		return &UnavailableError{Backend: "opencl", Reason: fmt.Sprintf("no OpenCL device on %d platform(s)", len(plats))}
	}
	return &UnavailableError{Backend: "opencl", Reason: fmt.Sprintf("none of %d OpenCL device(s) is available with a compiler", found)}
})

// Devices describes every device of every platform, in the order
// opencl:P:D indexes them.
func Devices() ([]Info, error) {
	plats, err := enumerate()
	if err != nil {
		return nil, err
	}
	var infos []Info
	for p, pl := range plats {
		for d, dev := range pl.devices {
			info, err := queryInfo(p, d, pl.id, dev)
			if err != nil {
				return nil, err
			}
			infos = append(infos, info)
		}
	}
	return infos, nil
}

// planner is a device described, not opened, for planning (gpu.Planner).
type planner struct{ info Info }

// Planner is opencl:platform:device as the engine plans for it, unopened.
func Planner(platform, device int) (gpu.Planner, error) {
	info, _, _, err := describe(platform, device)
	if err != nil {
		return nil, err
	}
	return planner{info}, nil
}

func (p planner) Info() Info { return p.info }

func (planner) Backend() string { return "opencl" }

// maxLocalBytes caps the local memory a tile may declare: what every GPU
// offers a work-group (PoCL reports 1 MiB of emulated local memory).
const maxLocalBytes = 48 << 10

// Limits: no group-count limit below size_t; weights go in buffers.
func (p planner) Limits() gpu.Limits {
	return gpu.Limits{MaxLocalBytes: int(min(p.info.LocalMemory, maxLocalBytes)), MaxGroupsYZ: 1 << 30, FFTBudget: fftconv.DefaultBudget}
}

// MemoryBudget is 70% of the device's memory, at most buffers times its
// largest allocation.
func (p planner) MemoryBudget(buffers int) (int64, error) {
	budget := p.info.GlobalMemory / 10 * 7
	if p.info.MaxAlloc > 0 {
		budget = min(budget, p.info.MaxAlloc*int64(buffers))
	}
	return budget, nil
}

// Missing counts the launches whose programs are neither built on the
// device (where it is open) nor in the program store.
func (p planner) Missing(launches []*kernels.Launch) (int, error) {
	var built *programCache // nil: no device open, nothing in memory
	if d, ok := registry.Lookup([2]int{p.info.Platform, p.info.Device}); ok {
		built = &d.programs
	}
	keys := make([]gpucache.Key, 0, len(launches))
	for _, l := range launches {
		src, err := kernels.Source(l.Family)
		if err != nil {
			return 0, err
		}
		options, err := buildOptions(l.Defines, p.info)
		if err != nil {
			return 0, err
		}
		keys = append(keys, programKeyOf(src, options, p.info))
	}
	return built.Missing(programStore, keys), nil
}

// Device is one OpenCL device with a context of its own (gpu.Device). Its
// methods may be called from any goroutine: OpenCL is thread-safe but for
// a kernel's arguments, which Kernel serialises.
type Device struct {
	planner
	id    uintptr // cl_device_id
	ctx   uintptr // cl_context
	hostQ uintptr // the queue that maps and unmaps staging

	life gpu.Life // shared by every operation (do), exclusive for the last Close

	programs programCache
	staging  *gpu.FreeList[*mapping] // the engines' idle staging
	pinned   pinnedRanges            // the mappings' memory

	withoutBinaries, unoptimised atomic.Bool // TestBuilds'
}

var _ gpu.Device = (*Device)(nil)

// registry holds the one Device per (platform, device).
var registry gpu.Registry[[2]int, *Device]

// Open returns the Device opencl:platform:device, creating its context on
// first use; later Opens return the same *Device. Each Open is balanced by
// one Close.
func Open(platform, device int) (*Device, error) {
	if err := loadLibrary(); err != nil {
		return nil, err
	}
	return registry.Open([2]int{platform, device}, func() (*Device, error) { return openDevice(platform, device) })
}

// OpenEngineDevice is Open as the engine's device.
func OpenEngineDevice(platform, device int) (gpu.Device, error) {
	return gpu.Value[gpu.Device](Open(platform, device))
}

// IsOpen reports whether opencl:platform:device is open in this process.
func IsOpen(platform, device int) bool {
	_, ok := registry.Lookup([2]int{platform, device})
	return ok
}

// describe finds opencl:platform:device and reads its Info.
func describe(platform, device int) (info Info, platformID, deviceID uintptr, err error) {
	plats, err := enumerate()
	if err != nil {
		return info, 0, 0, err
	}
	if platform < 0 || platform >= len(plats) {
		return info, 0, 0, fmt.Errorf("opencl: no platform %d (this machine has %d)", platform, len(plats))
	}
	pl := plats[platform]
	if device < 0 || device >= len(pl.devices) {
		return info, 0, 0, fmt.Errorf("opencl: platform %d has no device %d (it has %d)", platform, device, len(pl.devices))
	}
	info, err = queryInfo(platform, device, pl.id, pl.devices[device])
	return info, pl.id, pl.devices[device], err
}

// openDevice makes the Device opencl:platform:device (Open's first).
func openDevice(platform, device int) (*Device, error) {
	info, platformID, deviceID, err := describe(platform, device)
	if err != nil {
		return nil, err
	}
	if !info.Available || !info.CompilerAvailable {
		return nil, &UnsupportedError{Backend: "opencl", What: "device", Value: info.Spec() + " (" + info.Name + ")", Reason: "not available, or without an OpenCL C compiler"}
	}
	d := &Device{planner: planner{info}, id: deviceID, staging: gpu.NewFreeList[*mapping](gpu.HostFreeLimit)}
	if d.ctx, err = clCreateContext(platformID, d.id); err != nil {
		return nil, err
	}
	if d.hostQ, err = d.createQueue(); err != nil {
		cl.clReleaseContext.Call(d.ctx)
		return nil, err
	}
	return d, nil
}

func (d *Device) createQueue() (uintptr, error) {
	return clCreateQueue(d.ctx, d.id, modern(d.info.Version))
}

// Close balances one Open. The last Close releases the staging, the cached
// programs and the context; every later call on d returns ErrClosed.
// Closing more often than opening does nothing.
func (d *Device) Close() error {
	return registry.Close([2]int{d.info.Platform, d.info.Device}, d, func() error {
		return d.life.End(func() error { // once the operations in flight are done
			var errs []error
			for _, m := range d.staging.Drain() {
				errs = append(errs, clEnqueueUnmapMemObject(d.hostQ, m.buf.h, m.p), cl.clReleaseMemObject.Call(m.buf.h))
			}
			errs = append(errs, cl.clFinish.Call(d.hostQ), cl.clReleaseCommandQueue.Call(d.hostQ))
			for _, p := range d.programs.Drain() {
				errs = append(errs, p.release())
			}
			return errors.Join(append(errs, cl.clReleaseContext.Call(d.ctx))...)
		})
	})
}

// do runs fn while d is open (gpu.Life); it must not be nested.
func (d *Device) do(fn func() error) error { return d.life.Do(ErrClosed, fn) }

// Check refuses a problem that accumulates in float64 on a device without
// cl_khr_fp64.
func (d *Device) Check(p *nd.Problem) error { return d.fp64(p.Wide) }

func (d *Device) fp64(wide bool) error {
	if !wide || d.info.FP64 {
		return nil
	}
	return &UnsupportedError{Backend: "opencl", What: "float64 arithmetic", Value: "on " + d.info.Spec() + " (" + d.info.Name + ")",
		Reason: "the device lacks cl_khr_fp64, and this problem accumulates in float64 (float64 or int32 data, or a float64 output); use another device or float32 data"}
}

// CheckLaunch refuses a launch the device cannot run: float64 without
// cl_khr_fp64, a work-group too large, too much local or constant memory.
func (d *Device) CheckLaunch(l *kernels.Launch, k gpu.Kernel) error {
	info := d.info
	if err := d.fp64(l.Wide); err != nil {
		return err
	}
	group := l.Local[0] * l.Local[1] * l.Local[2]
	for i := range 3 {
		if l.Groups[i] <= 0 || l.Local[i] <= 0 {
			return &UnsupportedError{Backend: "opencl", What: "work size", Value: fmt.Sprintf("groups %v, local %v", l.Groups, l.Local)}
		}
		if l.Local[i] > info.MaxWorkItemSizes[i] && info.MaxWorkItemSizes[i] > 0 {
			return &UnsupportedError{Backend: "opencl", What: "work-group shape", Value: fmt.Sprint(l.Local),
				Reason: fmt.Sprintf("%s allows at most %v work-items per dimension", info.Name, info.MaxWorkItemSizes)}
		}
	}
	if group > info.MaxWorkGroupSize {
		return &UnsupportedError{Backend: "opencl", What: "work-group size", Value: fmt.Sprint(group),
			Reason: fmt.Sprintf("%s allows at most %d work-items per group", info.Name, info.MaxWorkGroupSize)}
	}
	if int64(l.LocalBytes) > info.LocalMemory {
		return &UnsupportedError{Backend: "opencl", What: "local memory", Value: fmt.Sprintf("%d bytes", l.LocalBytes),
			Reason: fmt.Sprintf("%s has %d bytes per work-group", info.Name, info.LocalMemory)}
	}
	if c := int64(len(gpu.TapsBytes(l)) + 4*max(len(l.Outer), 1)); info.MaxConstantBuffer > 0 && c > info.MaxConstantBuffer {
		return &UnsupportedError{Backend: "opencl", What: "kernel size", Value: fmt.Sprintf("%d taps (%d bytes of constant arguments)", len(l.Taps), c),
			Reason: fmt.Sprintf("%s allows %d bytes of __constant arguments", info.Name, info.MaxConstantBuffer)}
	}
	if max := k.MaxGroupSize(); group > max {
		return &UnsupportedError{Backend: "opencl", What: "work-group size", Value: fmt.Sprint(group),
			Reason: fmt.Sprintf("kernel %s allows at most %d work-items per group on %s", l.Name, max, info.Name)}
	}
	return nil
}

// TestBuilds sets how d builds programs for tests on PoCL, whose cold
// builds bound CI's time, and returns the settings it replaced.
// withoutBinaries fetches no binaries for the disk cache (PoCL compiles
// every kernel again to give one); unoptimised adds -cl-opt-disable, under
// half PoCL's time for the same bits (the kernels keep FP_CONTRACT off).
func (d *Device) TestBuilds(withoutBinaries, unoptimised bool) (wasWithout, wasUnoptimised bool) {
	return d.withoutBinaries.Swap(withoutBinaries), d.unoptimised.Swap(unoptimised)
}

// MeasureRoofline measures opencl:platform:device's gpu.Roofline over 1
// GiB, its largest buffer or a quarter of its memory, whichever is least.
func MeasureRoofline(platform, device, repeats int) (Info, gpu.Roofline, error) {
	d, err := Open(platform, device)
	if err != nil {
		return Info{}, gpu.Roofline{}, err
	}
	defer d.Close()
	size := min(int64(1)<<30, d.info.MaxAlloc, d.info.GlobalMemory/4)
	r, err := gpu.MeasureRoofline(d, d.info.ComputeUnits, size, repeats)
	return d.info, r, err
}
