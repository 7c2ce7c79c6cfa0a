package cuda

import (
	"errors"
	"fmt"
	"github.com/ndconv/ndconv/internal/gpu"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// Module is device code loaded into a device's context (CUmodule).
type Module struct {
	dev    *Device
	handle uintptr
	cached bool // owned by the device's module cache: Unload leaves it loaded

	mu        sync.Mutex
	functions map[string]*Function
	unloaded  bool
}

// LoadModule loads a CUBIN (or PTX, or fatbin) image. Modules from
// Device.Module are cached and shared; LoadModule's are the caller's to
// Unload.
func (d *Device) LoadModule(image []byte) (*Module, error) {
	h, err := doValue(d, func() (uintptr, error) { return cuModuleLoadData(image) })
	if err != nil {
		return nil, err
	}
	return &Module{dev: d, handle: h}, nil
}

// Function looks up the kernel called name (its extern "C" name). Lookups
// are remembered, so calling Function before every launch costs a map read.
func (m *Module) Function(name string) (*Function, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.unloaded {
		return nil, errModuleUnloaded
	}
	if f := m.functions[name]; f != nil {
		return f, nil
	}
	h, err := doValue(m.dev, func() (uintptr, error) { return cuModuleGetFunction(m.handle, name) })
	if err != nil {
		return nil, fmt.Errorf("%w (kernel %q)", err, name)
	}
	f := &Function{module: m, handle: h, name: name}
	if m.functions == nil {
		m.functions = map[string]*Function{}
	}
	m.functions[name] = f
	return f, nil
}

var errModuleUnloaded = errors.New("cuda: module is unloaded")

// Global returns the address and size in bytes of the module's __device__
// or __constant__ variable called name.
func (m *Module) Global(name string) (DevicePtr, int, error) {
	var p DevicePtr
	var n int
	err := m.dev.do(func() (err error) {
		p, n, err = cuModuleGetGlobal(m.handle, name)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("%w (global %q)", err, name)
	}
	return p, n, nil
}

// Unload unloads the module; its Functions must not be launched after.
// A module owned by the device's cache (from Device.Module) stays loaded
// until the device's last Close, so Unload on it does nothing.
func (m *Module) Unload() error {
	if m.cached {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.unloaded {
		return nil
	}
	m.unloaded = true
	return m.dev.do(func() error { return cuModuleUnload(m.handle) })
}

// Function is a kernel in a loaded module (CUfunction).
type Function struct {
	module *Module
	handle uintptr
	name   string
}

// Name is the kernel's name.
func (f *Function) Name() string { return f.name }

// FunctionAttributes are what the compiler and driver say of a kernel.
type FunctionAttributes struct {
	MaxThreadsPerBlock    int // the most a launch may use, given its registers
	Registers             int // per thread
	StaticSharedBytes     int // __shared__ arrays; dynamic shared memory comes on top
	ConstBytes            int
	LocalBytes            int // per thread: spills and local arrays
	MaxDynamicSharedBytes int // the current limit, raised by SetMaxDynamicSharedMemory
	PTXVersion            int // 10*major + minor
	BinaryVersion         int // the SASS architecture, 10*major + minor
}

// CUfunction_attribute values (cuda.h).
const (
	funcAttrMaxThreadsPerBlock    = 0
	funcAttrSharedSizeBytes       = 1
	funcAttrConstSizeBytes        = 2
	funcAttrLocalSizeBytes        = 3
	funcAttrNumRegs               = 4
	funcAttrPTXVersion            = 5
	funcAttrBinaryVersion         = 6
	funcAttrMaxDynamicSharedBytes = 8
)

// Attributes queries the kernel's attributes.
func (f *Function) Attributes() (FunctionAttributes, error) {
	var a FunctionAttributes
	fields := []struct {
		attr int
		dst  *int
	}{
		{funcAttrMaxThreadsPerBlock, &a.MaxThreadsPerBlock},
		{funcAttrNumRegs, &a.Registers},
		{funcAttrSharedSizeBytes, &a.StaticSharedBytes},
		{funcAttrConstSizeBytes, &a.ConstBytes},
		{funcAttrLocalSizeBytes, &a.LocalBytes},
		{funcAttrMaxDynamicSharedBytes, &a.MaxDynamicSharedBytes},
		{funcAttrPTXVersion, &a.PTXVersion},
		{funcAttrBinaryVersion, &a.BinaryVersion},
	}
	err := f.module.dev.do(func() error {
		for _, fl := range fields {
			v, err := cuFuncGetAttribute(fl.attr, f.handle)
			if err != nil {
				return err
			}
			*fl.dst = v
		}
		return nil
	})
	return a, err
}

// SetMaxDynamicSharedMemory allows launches of f with up to bytes of
// dynamic shared memory: above 48 KiB a kernel must opt in, up to
// Info.MaxSharedPerBlockOptin less its static shared memory.
func (f *Function) SetMaxDynamicSharedMemory(bytes int) error {
	return f.module.dev.do(func() error {
		return cuFuncSetAttribute(f.handle, funcAttrMaxDynamicSharedBytes, bytes)
	})
}

// maxKernelParams bounds a launch's argument count; CUDA allows more, no
// ndconv kernel comes near it.
const maxKernelParams = 32

// paramBlock is cuLaunchKernel's kernelParams: ptrs[i] points at slot i,
// which holds argument i in its first bytes (little-endian, so a 4-byte
// argument is the slot's low half). One Go object, pinned for the call:
// the driver reads it as a void** of pointers into itself.
type paramBlock struct {
	ptrs  [maxKernelParams]unsafe.Pointer
	slots [maxKernelParams]uint64
	// blob holds the arguments passed as ByValue bytes, back to back.
	blob [maxByValueBytes]byte
}

// ByValue is a kernel argument passed by value as these bytes: a C struct
// parameter (the weights of a kernel that reads them from its parameters,
// in the constant bank). Kernel parameters total at most 32,764 bytes.
type ByValue = gpu.ByValue

// maxByValueBytes bounds the ByValue arguments of one launch.
const maxByValueBytes = 32 << 10

var paramBlocks = sync.Pool{New: func() any { return new(paramBlock) }}

// marshal stores args into the block's slots. Pointers are given as
// DevicePtr, *Buffer or uintptr; numbers as int8 … uint64, float32 or
// float64, matching the kernel's C parameter type in size; structs as
// ByValue bytes. A Go int is
// refused: its size (8 bytes) is not C's int (4).
func (pb *paramBlock) marshal(args []any) error {
	if len(args) > maxKernelParams {
		return &UnsupportedError{Backend: "cuda", What: "kernel argument count", Value: fmt.Sprint(len(args)), Reason: fmt.Sprintf("at most %d", maxKernelParams)}
	}
	blob := 0
	for i, a := range args {
		var v uint64
		switch x := a.(type) {
		case ByValue:
			if blob+len(x) > len(pb.blob) {
				return &UnsupportedError{Backend: "cuda", What: "kernel argument size", Value: fmt.Sprintf("%d bytes by value", blob+len(x)), Reason: fmt.Sprintf("at most %d", len(pb.blob))}
			}
			copy(pb.blob[blob:], x)
			pb.ptrs[i] = unsafe.Pointer(&pb.blob[blob])
			blob += (len(x) + 15) &^ 15
			continue
		case DevicePtr:
			v = uint64(x)
		case *Buffer:
			if x == nil {
				return &UnsupportedError{Backend: "cuda", What: "kernel argument", Value: fmt.Sprintf("%d (nil *Buffer)", i)}
			}
			v = uint64(x.ptr)
		case uintptr:
			v = uint64(x)
		case int32:
			v = uint64(uint32(x))
		case uint32:
			v = uint64(x)
		case int64:
			v = uint64(x)
		case uint64:
			v = x
		case float32:
			v = uint64(*(*uint32)(unsafe.Pointer(&x)))
		case float64:
			v = *(*uint64)(unsafe.Pointer(&x))
		case int16:
			v = uint64(uint16(x))
		case uint16:
			v = uint64(x)
		case int8:
			v = uint64(uint8(x))
		case uint8:
			v = uint64(x)
		default:
			return &UnsupportedError{Backend: "cuda", What: "kernel argument type", Value: fmt.Sprintf("%T (argument %d)", a, i),
				Reason: "use DevicePtr, *Buffer, uintptr, a sized integer (int32, uint32, int64, …), float32 or float64"}
		}
		pb.slots[i] = v
		pb.ptrs[i] = unsafe.Pointer(&pb.slots[i])
	}
	return nil
}

// debugLaunches makes every Launch wait for its kernel and report the
// kernel's own errors (an illegal address, say) against its name: set
// NDCONV_CUDA_SYNC=1 while debugging kernels. Read once, at first launch.
var debugLaunches = sync.OnceValue(func() bool { return os.Getenv("NDCONV_CUDA_SYNC") == "1" })

// Launch queues f on stream s (nil: the default stream) over grid × block
// threads, with sharedBytes of dynamic shared memory, passing args by
// value (see paramBlock.marshal for the types taken). An invalid
// configuration (too many threads per block, too much shared memory) is
// reported here as an *Error; faults inside the kernel surface at the next
// synchronisation.
func (f *Function) Launch(grid, block [3]uint32, sharedBytes uint32, s *Stream, args ...any) error {
	pb := paramBlocks.Get().(*paramBlock)
	defer paramBlocks.Put(pb)
	if err := pb.marshal(args); err != nil {
		return err
	}
	var pinner runtime.Pinner
	pinner.Pin(pb)
	defer pinner.Unpin()
	err := f.module.dev.do(func() error {
		if err := cuLaunchKernel(f.handle, grid, block, sharedBytes, s.handle(), unsafe.Pointer(&pb.ptrs[0])); err != nil {
			return err
		}
		if debugLaunches() {
			return cuCtxSynchronize()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w (kernel %s, grid %v, block %v, shared %d B)", err, f.name, grid, block, sharedBytes)
	}
	return nil
}
