package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"unsafe"

	"github.com/ndconv/ndconv/internal/gpu"
)

// Version is a CUDA driver or NVRTC version.
type Version struct{ Major, Minor int }

func (v Version) String() string { return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) }

// driverVersionOf splits cuDriverGetVersion's 1000*major + 10*minor.
func driverVersionOf(v int) Version { return Version{v / 1000, v % 1000 / 10} }

// ComputeCapability is a GPU's architecture generation: 9.0 for the H100.
type ComputeCapability struct{ Major, Minor int }

func (c ComputeCapability) String() string { return Version(c).String() }

// Arch is the name NVRTC's --gpu-architecture takes for a CUBIN: "sm_90".
func (c ComputeCapability) Arch() string {
	return "sm_" + strconv.Itoa(c.Major) + strconv.Itoa(c.Minor)
}

// MinComputeCapability is the oldest architecture Open accepts (Pascal).
// CUDA 13's NVRTC targets newer ones only: older GPUs need an NVRTC 12
// (NDCONV_LIBNVRTC).
var MinComputeCapability = ComputeCapability{6, 0}

// Supported reports whether c is MinComputeCapability or newer.
func (c ComputeCapability) Supported() bool {
	return c.Major > MinComputeCapability.Major || c.Major == MinComputeCapability.Major && c.Minor >= MinComputeCapability.Minor
}

// Info describes one GPU. Memory sizes are in bytes.
type Info struct {
	Index                  int // the ordinal Open takes
	Name                   string
	ComputeCapability      ComputeCapability
	SMs                    int // multiprocessors
	TotalMemory            int64
	FreeMemory             int64 // at the time of the query; 0 where no context was made
	DriverVersion          Version
	NVRTCVersion           Version // zero where NVRTC is missing
	MaxSharedPerBlock      int     // without opting in
	MaxSharedPerBlockOptin int     // with a kernel's opt-in
}

// queryDevice reads everything about ordinal that needs no context.
func queryDevice(ordinal int) (Info, int32, error) {
	dev, err := out[int32](&drv.cuDeviceGet, uintptr(ordinal))
	if err != nil {
		return Info{}, 0, err
	}
	info := Info{Index: ordinal, DriverVersion: driverVersionOf(driverVersion)}
	var name [256]byte
	if err := drv.cuDeviceGetName.Call(uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)-1), uintptr(dev)); err != nil {
		return Info{}, 0, err
	}
	info.Name = goString(&name[0])
	total, err := out[uintptr](&drv.cuDeviceTotalMem, uintptr(dev))
	if err != nil {
		return Info{}, 0, err
	}
	info.TotalMemory = int64(total)
	for attr, dst := range map[int]*int{ // CUdevice_attribute values (cuda.h)
		75: &info.ComputeCapability.Major, // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
		76: &info.ComputeCapability.Minor,
		16: &info.SMs,                    // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
		8:  &info.MaxSharedPerBlock,      // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK
		97: &info.MaxSharedPerBlockOptin, // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
	} {
		v, err := out[int32](&drv.cuDeviceGetAttribute, uintptr(attr), uintptr(dev))
		if err != nil {
			return Info{}, 0, err
		}
		*dst = int(v)
	}
	info.NVRTCVersion, _ = nvrtcVersion()
	return info, dev, nil
}

// Available reports whether the CUDA backend can run here: nil, or an
// *UnavailableError saying why not. It never panics; later calls are free.
func Available() error { return availability() }

var availability = sync.OnceValue(func() error {
	infos, err := Describe()
	if err != nil {
		return err
	}
	if len(infos) == 0 {
		return &UnavailableError{Backend: "cuda", Reason: "no CUDA device"}
	}
	var found []string
	usable := false
	for _, info := range infos {
		usable = usable || info.ComputeCapability.Supported()
		found = append(found, info.Name+" ("+info.ComputeCapability.String()+")")
	}
	if !usable {
		return &UnavailableError{Backend: "cuda", Reason: fmt.Sprintf("no device of compute capability %v or newer (found %v)", MinComputeCapability, found)}
	}
	return nvrtcLib.Load()
})

// Describe is Devices without FreeMemory, opening no device, so that a
// device list does not make each context twice (docs/cuda.md).
func Describe() ([]Info, error) {
	if err := driverLib.Load(); err != nil {
		return nil, err
	}
	n, err := out[int32](&drv.cuDeviceGetCount)
	if err != nil {
		return nil, &UnavailableError{Backend: "cuda", Reason: "cannot count devices", Err: err}
	}
	infos := make([]Info, 0, n)
	for i := range int(n) {
		info, _, err := queryDevice(i)
		if err != nil {
			return nil, &UnavailableError{Backend: "cuda", Reason: fmt.Sprintf("cannot query device %d", i), Err: err}
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// Devices describes every CUDA device, also those too old for Open (their
// FreeMemory 0), opening each usable one to read its free memory.
func Devices() ([]Info, error) {
	infos, err := Describe()
	if err != nil {
		return nil, err
	}
	for i, info := range infos {
		if info.ComputeCapability.Supported() {
			if d, err := Open(info.Index); err == nil {
				if live, err := d.Info(); err == nil {
					infos[i] = live
				}
				d.Close()
			}
		}
	}
	return infos, nil
}

// StaticInfo describes device index without a context (FreeMemory 0).
func StaticInfo(index int) (Info, error) {
	if err := driverLib.Load(); err != nil {
		return Info{}, err
	}
	info, _, err := queryDevice(index)
	return info, err
}

// IsOpen reports whether device index is open in this process.
func IsOpen(index int) bool {
	_, ok := registry.Lookup(index)
	return ok
}

// Device is one GPU with its primary context retained (gpu.Device). Its
// methods may be called from any goroutine: each runs on a locked OS
// thread with the context current (do).
type Device struct {
	staticDevice         // the static part, fixed at Open
	dev          int32   // CUdevice
	ctx          uintptr // CUcontext, the retained primary context

	life gpu.Life // shared by every operation (do), exclusive for the last Close

	pool     *gpu.FreeList[DevicePtr]      // idle temporaries (Scratch)
	hostFree *gpu.FreeList[unsafe.Pointer] // idle pinned staging (AllocHost)
	modules  moduleCache
	hostRegs *gpu.HostRegs // registered host memory, shared by the engines
}

// registry holds the one Device per ordinal.
var registry gpu.Registry[int, *Device]

// Open returns the Device with ordinal index, retaining its primary
// context on first use; later Opens return the same *Device. Each Open is
// balanced by one Close. Devices older than MinComputeCapability are
// refused with an *UnsupportedError.
func Open(index int) (*Device, error) {
	if err := driverLib.Load(); err != nil {
		return nil, err
	}
	return registry.Open(index, func() (*Device, error) { return openDevice(index) })
}

// openDevice makes the Device with ordinal index (Open's first).
func openDevice(index int) (*Device, error) {
	n, err := out[int32](&drv.cuDeviceGetCount)
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= int(n) {
		return nil, fmt.Errorf("cuda: no device %d (this machine has %d)", index, n)
	}
	info, dev, err := queryDevice(index)
	if err != nil {
		return nil, err
	}
	if !info.ComputeCapability.Supported() {
		return nil, &UnsupportedError{Backend: "cuda", What: "compute capability", Value: info.ComputeCapability.String(),
			Reason: fmt.Sprintf("device %d (%s) is older than the %v ndconv needs", index, info.Name, MinComputeCapability)}
	}
	ctx, err := out[uintptr](&drv.cuDevicePrimaryCtxRetain, uintptr(dev))
	if err != nil {
		return nil, err
	}
	d := &Device{staticDevice: staticDevice{index, info}, dev: dev, ctx: ctx}
	d.pool = gpu.NewFreeList[DevicePtr](info.TotalMemory / 4)
	d.hostFree = gpu.NewFreeList[unsafe.Pointer](gpu.HostFreeLimit)
	d.hostRegs = gpu.NewHostRegs(d)
	return d, nil
}

// Close balances one Open. The last Close unloads the modules, frees the
// pools, unregisters host memory and releases the primary context (and
// with it every buffer); later calls on d return ErrClosed.
func (d *Device) Close() error { return registry.Close(d.index, d, d.release) }

// release is the last Close's.
func (d *Device) release() error {
	registered := d.hostRegs.Drain() // before life: registering holds the cache's lock inside do
	return d.life.End(func() error { // once the operations in flight are done
		err := onContext(d.ctx, func() error {
			var errs []error
			for _, m := range d.modules.Drain() {
				errs = append(errs, drv.cuModuleUnload.Call(m))
			}
			for _, p := range d.pool.Drain() {
				errs = append(errs, cuMemFree(p))
			}
			for _, p := range d.hostFree.Drain() {
				errs = append(errs, cuMemFreeHost(p))
			}
			for _, addr := range registered {
				errs = append(errs, drv.cuMemHostUnregister.Call(addr))
			}
			return errors.Join(errs...)
		})
		return errors.Join(err, drv.cuDevicePrimaryCtxRelease.Call(uintptr(d.dev)))
	})
}

// do runs fn with d's context current (onContext): every operation on d
// reaches the driver through it. It must not be nested (gpu.Life.Do).
func (d *Device) do(fn func() error) error {
	return d.life.Do(ErrClosed, func() error { return onContext(d.ctx, fn) })
}

// onContext runs fn on a locked OS thread with ctx current: a context is
// current per OS thread, and a goroutine may change threads.
func onContext(ctx uintptr, fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := drv.cuCtxSetCurrent.Call(ctx); err != nil {
		return err
	}
	return fn()
}

// free is do for a call that frees memory: nothing after the last Close,
// the memory having gone with the context.
func (d *Device) free(fn func() error) error {
	if err := d.do(fn); !errors.Is(err, ErrClosed) {
		return err
	}
	return nil
}

// Info describes the device, with its free memory as of now.
func (d *Device) Info() (Info, error) {
	info := d.info
	err := d.do(func() error {
		var free, total uintptr
		err := drv.cuMemGetInfo.Call(uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total)))
		info.FreeMemory = int64(free)
		return err
	})
	return info, err
}
