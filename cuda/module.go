package cuda

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ndconv/ndconv/internal/dynlib"
	"github.com/ndconv/ndconv/internal/gpu"
)

// loadModule loads a CUBIN image as a CUmodule, owned by the module cache.
func (d *Device) loadModule(image []byte) (uintptr, error) {
	if len(image) == 0 {
		return 0, &Error{Backend: "cuda", Call: "cuModuleLoadData", Code: codeInvalidImage, Name: "CUDA_ERROR_INVALID_IMAGE", Message: "empty module image"}
	}
	// The driver reads an image with no length: a NUL at the end keeps a
	// damaged or textual one (read as PTX) from being read past its end.
	if image[len(image)-1] != 0 {
		image = append(image[:len(image):len(image)], 0)
	}
	return gpu.DoValue(d.do, func() (m uintptr, err error) {
		err = drv.cuModuleLoadData.Call(uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&image[0])))
		return m, err
	})
}

// function looks up the extern "C" kernel name in module.
func (d *Device) function(module uintptr, name string) (*Function, error) {
	cname := dynlib.CString(name)
	h, err := gpu.DoValue(d.do, func() (f uintptr, err error) {
		err = drv.cuModuleGetFunction.Call(uintptr(unsafe.Pointer(&f)), module, uintptr(unsafe.Pointer(&cname[0])))
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("%w (kernel %q)", err, name)
	}
	return &Function{dev: d, handle: h, name: name}, nil
}

// Function is a kernel in a loaded module (CUfunction; gpu.Kernel).
type Function struct {
	dev    *Device
	handle uintptr
	name   string
}

func (f *Function) Name() string { return f.name }

// MaxGroupSize is the most threads a block of f may have, given its
// registers; 0 where the driver cannot say.
func (f *Function) MaxGroupSize() int {
	n, err := gpu.DoValue(f.dev.do, func() (int32, error) { return out[int32](&drv.cuFuncGetAttribute, 0, f.handle) })
	if err != nil {
		return 0
	}
	return int(n)
}

// maxKernelParams bounds a launch's argument count.
const maxKernelParams = 32

// paramBlock is cuLaunchKernel's kernelParams: ptrs[i] points at slot i,
// which holds argument i in its first (little-endian) bytes. One Go
// object, pinned for the call: a void** of pointers into itself.
type paramBlock struct {
	ptrs  [maxKernelParams]unsafe.Pointer
	slots [maxKernelParams]uint64
	// blob holds the gpu.ByValue arguments back to back (kernel parameters
	// total at most 32,764 bytes).
	blob [32 << 10]byte
}

var paramBlocks = sync.Pool{New: func() any { return new(paramBlock) }}

// marshal stores args into the block: *Buffer, sized integers, float32,
// float64 and gpu.ByValue. A Go int is refused: its size is not C's int's.
func (pb *paramBlock) marshal(args []any) error {
	if len(args) > maxKernelParams {
		return &UnsupportedError{Backend: "cuda", What: "kernel argument count", Value: fmt.Sprint(len(args)), Reason: fmt.Sprintf("at most %d", maxKernelParams)}
	}
	blob := 0
	for i, a := range args {
		var v uint64
		switch x := a.(type) {
		case gpu.ByValue:
			if blob+len(x) > len(pb.blob) {
				return &UnsupportedError{Backend: "cuda", What: "kernel argument size", Value: fmt.Sprintf("%d bytes by value", blob+len(x)), Reason: fmt.Sprintf("at most %d", len(pb.blob))}
			}
			copy(pb.blob[blob:], x)
			pb.ptrs[i] = unsafe.Pointer(&pb.blob[blob])
			blob += (len(x) + 15) &^ 15
			continue
		case *Buffer:
			if x == nil {
				return &UnsupportedError{Backend: "cuda", What: "kernel argument", Value: fmt.Sprintf("%d (nil *Buffer)", i)}
			}
			v = uint64(x.ptr)
		case int8, uint8, int16, uint16, int32, uint32, int64, uint64, float32, float64:
			var b [8]byte // the value's bits, the upper bytes zero
			binary.Encode(b[:], binary.LittleEndian, x)
			v = binary.LittleEndian.Uint64(b[:])
		default:
			return &UnsupportedError{Backend: "cuda", What: "kernel argument type", Value: fmt.Sprintf("%T (argument %d)", a, i),
				Reason: "use *Buffer, a sized integer (int32, uint32, int64, …), float32 or float64"}
		}
		pb.slots[i] = v
		pb.ptrs[i] = unsafe.Pointer(&pb.slots[i])
	}
	return nil
}

// debugLaunches (NDCONV_CUDA_SYNC=1, read at first launch) makes every
// Launch wait for its kernel and report its errors against its name.
var debugLaunches = sync.OnceValue(func() bool { return os.Getenv("NDCONV_CUDA_SYNC") == "1" })

// Launch queues kernel k over groups × local threads with args (marshal's).
// Faults inside the kernel surface at the next synchronisation.
func (s *Stream) Launch(k gpu.Kernel, groups, local [3]int, args ...any) error {
	f := k.(*Function)
	var grid, block [3]uint32
	for i := range 3 {
		grid[i], block[i] = uint32(groups[i]), uint32(local[i])
	}
	pb := paramBlocks.Get().(*paramBlock)
	defer paramBlocks.Put(pb)
	if err := pb.marshal(args); err != nil {
		return err
	}
	var pinner runtime.Pinner
	pinner.Pin(pb)
	defer pinner.Unpin()
	err := s.dev.do(func() error {
		// No dynamic shared memory, no extra options.
		err := drv.cuLaunchKernel.Call(f.handle, uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
			uintptr(block[0]), uintptr(block[1]), uintptr(block[2]), 0, s.h, uintptr(unsafe.Pointer(&pb.ptrs[0])), 0)
		if err != nil {
			return err
		}
		if debugLaunches() {
			return drv.cuCtxSynchronize.Call()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w (kernel %s, grid %v, block %v, shared 0 B)", err, f.name, grid, block)
	}
	return nil
}
