package cuda

import (
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/nd"
)

// DevicePtr is an address in device memory (CUdeviceptr).
type DevicePtr uintptr

// Buffer is device memory (gpu.Buffer).
type Buffer struct {
	dev      *Device
	ptr      DevicePtr
	size     int  // bytes asked for
	class    int  // bytes allocated where it came from the pool (Scratch), else 0
	external bool // the caller's memory (WrapExternal): never freed here
	freed    atomic.Bool
}

// Alloc allocates n bytes of device memory (cuMemAlloc, 256-byte aligned);
// out of memory, it hands the pool's idle blocks back and tries once more.
func (d *Device) Alloc(n int) (gpu.Buffer, error) {
	return gpu.Value[gpu.Buffer](d.alloc("Alloc", n, false))
}

// Scratch allocates from the device's pool (gpu.FreeList), which keeps at
// most a quarter of the device's memory idle.
func (d *Device) Scratch(n int) (gpu.Buffer, error) {
	return gpu.Value[gpu.Buffer](d.alloc("Scratch", n, true))
}

func (d *Device) alloc(op string, n int, pooled bool) (*Buffer, error) {
	if n <= 0 {
		return nil, &RangeError{Backend: "cuda", Op: op, Length: n}
	}
	b := &Buffer{dev: d, size: n}
	var err error
	if pooled {
		b.ptr, b.class, err = d.pool.Get(n, d.allocRaw)
	} else {
		b.ptr, err = d.allocRaw(n)
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// allocRaw is cuMemAlloc, retried once out of memory (gpu.FreeList.Alloc).
func (d *Device) allocRaw(n int) (DevicePtr, error) {
	return gpu.DoValue(d.do, func() (DevicePtr, error) {
		alloc := func() (DevicePtr, error) { return out[DevicePtr](&drv.cuMemAlloc, uintptr(n)) }
		return d.pool.Alloc(alloc, isOutOfMemory, cuMemFree)
	})
}

// WrapExternal makes a Buffer over n bytes of device memory the caller
// owns at ptr (CuPy's, PyTorch's), which the engine reads and writes in
// place; its Free does nothing. The memory must be this device's, in its
// primary context (the CUDA runtime's), or managed memory; anything else
// is refused with an *nd.ArgumentError saying why. The caller keeps the
// memory allocated while the buffer is in use.
func (d *Device) WrapExternal(ptr uintptr, n int) (gpu.Buffer, error) {
	if n <= 0 {
		return nil, &RangeError{Backend: "cuda", Op: "WrapExternal", Length: n}
	}
	if ptr == 0 {
		return nil, &nd.ArgumentError{Arg: "device pointer", Msg: "NULL"}
	}
	if uint64(ptr)+uint64(n) < uint64(ptr) {
		return nil, &nd.ArgumentError{Arg: "device pointer", Msg: fmt.Sprintf("%#x with %d bytes wraps around the address space", ptr, n)}
	}
	if err := d.do(func() error { return d.checkPointer(DevicePtr(ptr), n) }); err != nil {
		return nil, err
	}
	return &Buffer{dev: d, ptr: DevicePtr(ptr), size: n, external: true}, nil
}

// CUpointer_attribute values (cuda.h) that checkPointer reads, each into
// 8 zeroed bytes, and CUmemorytype values.
const (
	pointerContext       = 1  // CU_POINTER_ATTRIBUTE_CONTEXT: CUcontext
	pointerMemoryType    = 2  // CU_POINTER_ATTRIBUTE_MEMORY_TYPE: unsigned int (CUmemorytype)
	pointerIsManaged     = 8  // CU_POINTER_ATTRIBUTE_IS_MANAGED: unsigned int (bool)
	pointerDeviceOrdinal = 9  // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: int
	pointerRangeStart    = 11 // CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: CUdeviceptr
	pointerRangeSize     = 12 // CU_POINTER_ATTRIBUTE_RANGE_SIZE: size_t

	memoryTypeHost    = 1
	memoryTypeDevice  = 2
	memoryTypeUnified = 4
)

// checkPointer says why size bytes at ptr are not device memory this
// context may use (nil if they are), inside do.
func (d *Device) checkPointer(ptr DevicePtr, size int) error {
	attr := func(a int) (uint64, error) { return out[uint64](&drv.cuPointerGetAttribute, uintptr(a), uintptr(ptr)) }
	bad := func(format string, a ...any) error {
		return &nd.ArgumentError{Arg: "device pointer", Msg: fmt.Sprintf("%#x: ", uintptr(ptr)) + fmt.Sprintf(format, a...)}
	}
	kind, err := attr(pointerMemoryType)
	if err != nil {
		// CUDA_ERROR_INVALID_VALUE: an address no CUDA context knows,
		// ordinary host memory (numpy's) among them.
		return bad("not CUDA device memory (%v)", err)
	}
	switch uint32(kind) {
	case memoryTypeDevice, memoryTypeUnified:
	case memoryTypeHost:
		return bad("page-locked host memory, not device memory")
	default:
		return bad("CUDA memory of type %d, not linear device memory", uint32(kind))
	}
	if managed, _ := attr(pointerIsManaged); uint32(managed) == 0 {
		ord, err := attr(pointerDeviceOrdinal)
		if err != nil {
			return bad("no device ordinal (%v)", err)
		}
		if int(int32(ord)) != d.index {
			return &nd.ArgumentError{Arg: "device pointer", Msg: fmt.Sprintf("%#x is memory of cuda:%d, not of cuda:%d where the plan runs (use device='cuda:%d')", uintptr(ptr), int32(ord), d.index, int32(ord))}
		}
	}
	// Memory from cuMemMap (PyTorch's expandable segments, stream-ordered
	// pools) reports no context; any other must be the primary context.
	if ctx, err := attr(pointerContext); err == nil && ctx != 0 && uintptr(ctx) != d.ctx {
		return bad("memory of another CUDA context than the device's primary one (ndconv runs in the primary context, as the CUDA runtime does)")
	}
	start, err1 := attr(pointerRangeStart)
	n, err2 := attr(pointerRangeSize)
	if err1 == nil && err2 == nil && n > 0 && uint64(ptr)+uint64(size) > start+n {
		return bad("%d bytes run past the allocation's end (%d bytes from %#x)", size, n, start)
	}
	return nil
}

// Size is the buffer's length in bytes, as asked for.
func (b *Buffer) Size() int { return b.size }

// Free releases the buffer, to the pool if it came from it. Freeing twice,
// after the device's last Close, or the caller's memory does nothing.
func (b *Buffer) Free() error {
	if b.external || b.freed.Swap(true) {
		return nil
	}
	if b.class > 0 && b.dev.pool.Put(b.ptr, b.class) {
		return nil
	}
	return b.dev.free(func() error { return cuMemFree(b.ptr) })
}

// HostBuffer is page-locked ("pinned") host memory (gpu.HostBuffer) from
// cuMemHostAlloc, which Free returns to the device's free list, or frees.
// Freeing twice, or after the device's last Close, does nothing.
type HostBuffer = gpu.Pooled[unsafe.Pointer]

// AllocHost allocates n bytes of pinned host memory, usable with every
// context (CU_MEMHOSTALLOC_PORTABLE), through the device's free list.
func (d *Device) AllocHost(n int) (gpu.HostBuffer, error) {
	if n <= 0 {
		return nil, &RangeError{Backend: "cuda", Op: "AllocHost", Length: n}
	}
	alloc := func(class int) (unsafe.Pointer, error) {
		return gpu.DoValue(d.do, func() (unsafe.Pointer, error) {
			// Out of pinned memory: the idle staging goes back first.
			anyFailure := func(error) bool { return true }
			alloc := func() (unsafe.Pointer, error) {
				return out[unsafe.Pointer](&drv.cuMemHostAlloc, uintptr(class), 1) // CU_MEMHOSTALLOC_PORTABLE
			}
			return d.hostFree.Alloc(alloc, anyFailure, cuMemFreeHost)
		})
	}
	mem := func(p unsafe.Pointer, n int) []byte { return unsafe.Slice((*byte)(p), n) }
	release := func(p unsafe.Pointer) error { return d.free(func() error { return cuMemFreeHost(p) }) }
	return gpu.Value[gpu.HostBuffer](gpu.GetPooled(d.hostFree, n, alloc, mem, release))
}

// Stream is a queue of device work (CUstream; gpu.Queue). Copies from and
// to pinned memory overlap other work; with ordinary Go memory the driver
// is done with the slice when the call returns.
type Stream struct {
	dev    *Device
	h      uintptr
	caller bool // the caller's (CallerQueue): never destroyed here
}

// NewQueue creates a blocking stream (flags 0), ordered against the legacy
// default stream as cudaStreamCreate's are.
func (d *Device) NewQueue() (gpu.Queue, error) {
	h, err := gpu.DoValue(d.do, func() (uintptr, error) { return out[uintptr](&drv.cuStreamCreate, 0) })
	if err != nil {
		return nil, err
	}
	return &Stream{dev: d, h: h}, nil
}

// CallerQueue is the caller's stream h in this device's primary context (0
// or 1: the legacy default stream, 2: the per-thread default stream, else
// a CUstream), for Engine.ExecuteDeviceAfter. Closing it does nothing.
func (d *Device) CallerQueue(h uintptr) gpu.Queue { return &Stream{dev: d, h: h, caller: true} }

// queue checks that n bytes at off lie inside b and, unless n is 0,
// queues call with their device address.
func (s *Stream) queue(op string, b gpu.Buffer, off, n int, call func(at uintptr) error) error {
	buf := b.(*Buffer)
	if err := gpu.CheckRange("cuda", op, buf, off, n); err != nil || n == 0 {
		return err
	}
	return s.dev.do(func() error { return call(uintptr(buf.ptr) + uintptr(off)) })
}

func (s *Stream) Write(dst gpu.Buffer, off int, src []byte) error {
	return s.queue("Write", dst, off, len(src), func(at uintptr) error {
		return drv.cuMemcpyHtoDAsync.Call(at, uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)), s.h)
	})
}

func (s *Stream) Read(dst []byte, src gpu.Buffer, off int) error {
	return s.queue("Read", src, off, len(dst), func(at uintptr) error {
		return drv.cuMemcpyDtoHAsync.Call(uintptr(unsafe.Pointer(&dst[0])), at, uintptr(len(dst)), s.h)
	})
}

func (s *Stream) Copy(dst gpu.Buffer, dstOff int, src gpu.Buffer, srcOff, n int) error {
	b := src.(*Buffer)
	if err := gpu.CheckRange("cuda", "Copy", b, srcOff, n); err != nil {
		return err
	}
	return s.queue("Copy", dst, dstOff, n, func(at uintptr) error {
		return drv.cuMemcpyDtoDAsync.Call(at, uintptr(b.ptr)+uintptr(srcOff), uintptr(n), s.h)
	})
}

func (s *Stream) Fill(dst gpu.Buffer, off, n int, value byte) error {
	return s.queue("Fill", dst, off, n, func(at uintptr) error {
		return drv.cuMemsetD8Async.Call(at, uintptr(value), uintptr(n), s.h)
	})
}

func (s *Stream) Record(ev gpu.Event) error {
	return s.dev.do(func() error { return drv.cuEventRecord.Call(ev.(*Event).h, s.h) })
}

func (s *Stream) Wait(ev gpu.Event) error {
	return s.dev.do(func() error { return drv.cuStreamWaitEvent.Call(s.h, ev.(*Event).h, 0) })
}

func (s *Stream) Flush() error { return nil } // CUDA submits as it queues

func (s *Stream) Finish() error {
	return s.dev.do(func() error { return drv.cuStreamSynchronize.Call(s.h) })
}

// Close destroys the stream once its work is done; a caller's stays.
func (s *Stream) Close() error {
	if s.caller {
		return nil
	}
	return gpu.Release(&s.h, s.dev.do, &drv.cuStreamDestroy)
}

// Event marks a point in a stream (CUevent; gpu.Event).
type Event struct {
	dev *Device
	h   uintptr
}

// NewEvent creates an event that records time.
func (d *Device) NewEvent() (gpu.Event, error) {
	h, err := gpu.DoValue(d.do, func() (uintptr, error) { return out[uintptr](&drv.cuEventCreate, 0) })
	if err != nil {
		return nil, err
	}
	return &Event{dev: d, h: h}, nil
}

// Synchronize waits for the work before the event's last Record.
func (e *Event) Synchronize() error {
	return e.dev.do(func() error { return drv.cuEventSynchronize.Call(e.h) })
}

// Since is the GPU time from start to e (about 0.5 µs resolution).
func (e *Event) Since(start gpu.Event) (time.Duration, error) {
	ms, err := gpu.DoValue(e.dev.do, func() (float32, error) { return out[float32](&drv.cuEventElapsedTime, start.(*Event).h, e.h) })
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}

// Close destroys the event.
func (e *Event) Close() error { return gpu.Release(&e.h, e.dev.do, &drv.cuEventDestroy) }
