package cuda

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/nd"
)

// DevicePtr is an address in device memory (CUdeviceptr), what a kernel
// argument of pointer type receives.
type DevicePtr uintptr

// Add returns p advanced by n bytes.
func (p DevicePtr) Add(n int) DevicePtr { return p + DevicePtr(n) }

// Buffer is an allocation in device memory. It is freed by Free; a Buffer
// from a Pool goes back to the pool.
type Buffer struct {
	dev      *Device
	ptr      DevicePtr
	size     int // bytes asked for
	capacity int // bytes allocated: a size class for pooled buffers
	pool     *Pool
	external bool       // the caller's memory (WrapPointer): never freed here
	mu       sync.Mutex // guards freed
	freed    bool
}

// Alloc allocates size bytes of device memory (cuMemAlloc, at least 256-byte
// aligned). A request the device cannot meet is an *Error with Code
// CodeOutOfMemory, after the device's Pool has been trimmed and the
// allocation tried once more.
func (d *Device) Alloc(size int) (*Buffer, error) {
	if size <= 0 {
		return nil, &RangeError{Backend: "cuda", Op: "Alloc", Length: size}
	}
	p, err := doValue(d, func() (DevicePtr, error) { return d.allocRaw(size) })
	if err != nil {
		return nil, err
	}
	return &Buffer{dev: d, ptr: p, size: size, capacity: size}, nil
}

// allocRaw is cuMemAlloc that, on running out of memory, hands the pool's
// idle blocks back to the driver and tries once more. It runs inside do.
func (d *Device) allocRaw(size int) (DevicePtr, error) {
	return d.pool.list.Alloc(func() (DevicePtr, error) { return cuMemAlloc(size) }, IsOutOfMemory, cuMemFree)
}

// WrapPointer makes a Buffer over size bytes of device memory the caller
// allocated and owns at ptr (CuPy's, PyTorch's: what
// __cuda_array_interface__ or a DLPack tensor points at), without copying
// it; its Free does nothing. The memory must be this device's, in its
// primary context (the one the CUDA runtime, and so CuPy and PyTorch,
// use), or managed memory: host memory, memory on another device or in
// another context, and a range running past its allocation are refused
// with an *nd.ArgumentError saying which. The caller keeps the memory
// allocated while the buffer is in use.
func (d *Device) WrapPointer(ptr DevicePtr, size int) (*Buffer, error) {
	if size <= 0 {
		return nil, &RangeError{Backend: "cuda", Op: "WrapPointer", Length: size}
	}
	if ptr == 0 {
		return nil, &nd.ArgumentError{Arg: "device pointer", Msg: "NULL"}
	}
	if uint64(ptr)+uint64(size) < uint64(ptr) {
		return nil, &nd.ArgumentError{Arg: "device pointer", Msg: fmt.Sprintf("%#x with %d bytes wraps around the address space", uintptr(ptr), size)}
	}
	var why error
	err := d.do(func() error {
		why = d.checkPointer(ptr, size)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if why != nil {
		return nil, why
	}
	return &Buffer{dev: d, ptr: ptr, size: size, capacity: size, external: true}, nil
}

// checkPointer says why size bytes at ptr are not device memory this
// context may use (nil if they are). It runs inside do.
func (d *Device) checkPointer(ptr DevicePtr, size int) error {
	bad := func(format string, a ...any) error {
		return &nd.ArgumentError{Arg: "device pointer", Msg: fmt.Sprintf("%#x: ", uintptr(ptr)) + fmt.Sprintf(format, a...)}
	}
	kind, err := cuPointerGetAttribute(pointerMemoryType, ptr)
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
	if managed, _ := cuPointerGetAttribute(pointerIsManaged, ptr); uint32(managed) == 0 {
		ord, err := cuPointerGetAttribute(pointerDeviceOrdinal, ptr)
		if err != nil {
			return bad("no device ordinal (%v)", err)
		}
		if int(int32(ord)) != d.index {
			return &nd.ArgumentError{Arg: "device pointer", Msg: fmt.Sprintf("%#x is memory of cuda:%d, not of cuda:%d where the plan runs (use device='cuda:%d')", uintptr(ptr), int32(ord), d.index, int32(ord))}
		}
	}
	// Memory from cuMemMap (PyTorch's expandable segments, stream-ordered
	// pools) reports no context; any other must be the primary context.
	if ctx, err := cuPointerGetAttribute(pointerContext, ptr); err == nil && ctx != 0 && uintptr(ctx) != d.ctx {
		return bad("memory of another CUDA context than the device's primary one (ndconv runs in the primary context, as the CUDA runtime does)")
	}
	start, err1 := cuPointerGetAttribute(pointerRangeStart, ptr)
	n, err2 := cuPointerGetAttribute(pointerRangeSize, ptr)
	if err1 == nil && err2 == nil && n > 0 && uint64(ptr)+uint64(size) > start+n {
		return bad("%d bytes run past the allocation's end (%d bytes from %#x)", size, n, start)
	}
	return nil
}

// Ptr is the buffer's device address.
func (b *Buffer) Ptr() DevicePtr { return b.ptr }

// Size is the buffer's length in bytes, as asked for.
func (b *Buffer) Size() int { return b.size }

// Device is the device the buffer lives on.
func (b *Buffer) Device() *Device { return b.dev }

// Free releases the buffer, to its pool if it came from one. Freeing twice,
// or after the device's last Close, does nothing, and so does freeing a
// buffer over the caller's memory (WrapPointer).
func (b *Buffer) Free() error {
	if b.external {
		return nil // the caller's: it stays usable as long as the caller keeps it
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.freed {
		return nil
	}
	b.freed = true
	if b.pool != nil {
		return b.pool.put(b.ptr, b.capacity)
	}
	err := b.dev.do(func() error { return cuMemFree(b.ptr) })
	if errors.Is(err, ErrClosed) {
		return nil // released with the context
	}
	return err
}

// span checks that n bytes at off lie inside b.
func (b *Buffer) span(op string, off, n int) error {
	if off < 0 || n < 0 || off > b.size || n > b.size-off {
		return &RangeError{Backend: "cuda", Op: op, Offset: off, Length: n, Size: b.size}
	}
	return nil
}

// CopyFromHost copies src to the buffer at byte offset off, and returns
// when the copy is done.
func (b *Buffer) CopyFromHost(off int, src []byte) error {
	return b.copyFromHost("CopyFromHost", off, src, nil, false)
}

// CopyFromHostAsync queues a copy of src to the buffer at off on stream s
// (nil: the default stream). The copy overlaps other work only when src is
// pinned (HostBuffer memory, or memory the engine has registered: see
// hostreg.go), which must then stay untouched and alive until the stream
// is synchronized; from ordinary Go memory the driver copies src out
// before returning.
func (b *Buffer) CopyFromHostAsync(off int, src []byte, s *Stream) error {
	return b.copyFromHost("CopyFromHostAsync", off, src, s, true)
}

func (b *Buffer) copyFromHost(op string, off int, src []byte, s *Stream, async bool) error {
	if err := b.span(op, off, len(src)); err != nil || len(src) == 0 {
		return err
	}
	return b.dev.do(func() error {
		if async {
			return cuMemcpyHtoDAsync(b.ptr.Add(off), &src[0], len(src), s.handle())
		}
		return cuMemcpyHtoD(b.ptr.Add(off), &src[0], len(src))
	})
}

// CopyToHost copies len(dst) bytes from the buffer at off into dst.
func (b *Buffer) CopyToHost(dst []byte, off int) error {
	return b.copyToHost("CopyToHost", dst, off, nil, false)
}

// CopyToHostAsync queues a copy of len(dst) bytes at off into dst on
// stream s. Into pinned or registered memory it returns at once and dst
// is valid (and must stay alive) until the stream is synchronized; into
// other Go memory it returns when done.
func (b *Buffer) CopyToHostAsync(dst []byte, off int, s *Stream) error {
	return b.copyToHost("CopyToHostAsync", dst, off, s, true)
}

func (b *Buffer) copyToHost(op string, dst []byte, off int, s *Stream, async bool) error {
	if err := b.span(op, off, len(dst)); err != nil || len(dst) == 0 {
		return err
	}
	return b.dev.do(func() error {
		if async {
			return cuMemcpyDtoHAsync(&dst[0], b.ptr.Add(off), len(dst), s.handle())
		}
		return cuMemcpyDtoH(&dst[0], b.ptr.Add(off), len(dst))
	})
}

// CopyFrom copies n bytes from src at srcOff to b at off, on the device.
func (b *Buffer) CopyFrom(off int, src *Buffer, srcOff, n int) error {
	return b.copyFrom("CopyFrom", off, src, srcOff, n, nil, false)
}

// CopyFromAsync queues CopyFrom on stream s.
func (b *Buffer) CopyFromAsync(off int, src *Buffer, srcOff, n int, s *Stream) error {
	return b.copyFrom("CopyFromAsync", off, src, srcOff, n, s, true)
}

func (b *Buffer) copyFrom(op string, off int, src *Buffer, srcOff, n int, s *Stream, async bool) error {
	if err := b.span(op, off, n); err != nil {
		return err
	}
	if err := src.span(op, srcOff, n); err != nil || n == 0 {
		return err
	}
	return b.dev.do(func() error {
		if async {
			return cuMemcpyDtoDAsync(b.ptr.Add(off), src.ptr.Add(srcOff), n, s.handle())
		}
		return cuMemcpyDtoD(b.ptr.Add(off), src.ptr.Add(srcOff), n)
	})
}

// Memset sets n bytes at off to value.
func (b *Buffer) Memset(off, n int, value byte) error {
	return b.memset("Memset", off, n, value, nil, false)
}

// MemsetAsync queues Memset on stream s.
func (b *Buffer) MemsetAsync(off, n int, value byte, s *Stream) error {
	return b.memset("MemsetAsync", off, n, value, s, true)
}

func (b *Buffer) memset(op string, off, n int, value byte, s *Stream, async bool) error {
	if err := b.span(op, off, n); err != nil || n == 0 {
		return err
	}
	return b.dev.do(func() error {
		if async {
			return cuMemsetD8Async(b.ptr.Add(off), value, n, s.handle())
		}
		return cuMemsetD8(b.ptr.Add(off), value, n)
	})
}

// HostBuffer is page-locked ("pinned") host memory: the only host memory
// the GPU copies to and from while other work runs.
type HostBuffer struct {
	dev      *Device
	mu       sync.Mutex
	p        unsafe.Pointer // C memory from cuMemHostAlloc; nil once freed
	size     int
	capacity int  // bytes allocated: a size class where pooled
	pooled   bool // Free returns it to the device's hostFree
}

// AllocHost allocates size bytes of pinned host memory, usable with every
// device (CU_MEMHOSTALLOC_PORTABLE).
func (d *Device) AllocHost(size int) (*HostBuffer, error) {
	if size <= 0 {
		return nil, &RangeError{Backend: "cuda", Op: "AllocHost", Length: size}
	}
	p, err := doValue(d, func() (unsafe.Pointer, error) { return cuMemHostAlloc(size) })
	if err != nil {
		return nil, err
	}
	return &HostBuffer{dev: d, p: p, size: size, capacity: size}, nil
}

// pooledHost is AllocHost through the device's free list of pinned
// memory, which the engines' staging comes from: an engine made per block
// geometry or per call would otherwise lock and unlock pages each time
// (gpu.FreeList says why that stalls every device of the host).
func (d *Device) pooledHost(size int) (*HostBuffer, error) {
	if size <= 0 {
		return nil, &RangeError{Backend: "cuda", Op: "AllocHost", Length: size}
	}
	p, class, err := d.hostFree.Get(size, func(class int) (unsafe.Pointer, error) {
		return doValue(d, func() (unsafe.Pointer, error) {
			// Out of pinned memory: the idle staging goes back first.
			anyFailure := func(error) bool { return true }
			return d.hostFree.Alloc(func() (unsafe.Pointer, error) { return cuMemHostAlloc(class) }, anyFailure, cuMemFreeHost)
		})
	})
	if err != nil {
		return nil, err
	}
	return &HostBuffer{dev: d, p: p, size: size, capacity: class, pooled: true}, nil
}

// Bytes is the buffer's memory; nil after Free. The slice must not be used
// once the buffer is freed.
func (h *HostBuffer) Bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(h.p), h.size)
}

// Size is the buffer's length in bytes.
func (h *HostBuffer) Size() int { return h.size }

// Free releases the memory (to the device's free list where it came from
// one). Freeing twice, a nil buffer, or after the device's last Close,
// does nothing.
func (h *HostBuffer) Free() error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.p == nil {
		return nil
	}
	p := h.p
	h.p = nil
	if h.pooled && h.dev.hostFree.Put(p, h.capacity) {
		return nil
	}
	err := h.dev.do(func() error { return cuMemFreeHost(p) })
	if errors.Is(err, ErrClosed) {
		return nil // released with the context
	}
	return err
}

// Elem is an element type a kernel reads or writes: the types of nd.Array
// data and those kernels compute in.
type Elem interface {
	~uint8 | ~int8 | ~uint16 | ~int16 | ~uint32 | ~int32 | ~uint64 | ~int64 | ~float32 | ~float64
}

// Bytes returns the memory of s as bytes (no copy), for the copy methods:
// buf.CopyFromHost(0, cuda.Bytes(data)).
func Bytes[T Elem](s []T) []byte { return nd.AsBytes(s) }

// HostView returns h's memory as a []T of h.Size()/sizeof(T) elements (no
// copy; pinned memory is page-aligned, so any T is aligned); nil after Free.
func HostView[T Elem](h *HostBuffer) []T {
	b := h.Bytes()
	var zero T
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// Stream is a queue of device work (CUstream). A nil *Stream is the
// default stream wherever a stream is taken.
type Stream struct {
	dev    *Device
	h      uintptr
	caller bool // the caller's (CallerStream): never destroyed here
}

// NewStream creates a stream. It synchronises with the default stream
// (no CU_STREAM_NON_BLOCKING), so that the synchronous copies see work
// queued on it.
func (d *Device) NewStream() (*Stream, error) {
	h, err := doValue(d, func() (uintptr, error) { return cuStreamCreate(0) })
	if err != nil {
		return nil, err
	}
	return &Stream{dev: d, h: h}, nil
}

func (s *Stream) handle() uintptr {
	if s == nil {
		return 0
	}
	return s.h
}

// Synchronize waits until all work queued on s is done and reports the
// first error from it.
func (s *Stream) Synchronize() error {
	return s.dev.do(func() error { return cuStreamSynchronize(s.h) })
}

// WaitEvent makes the work queued on s (nil: the default stream) after
// this call wait until the work before e's last Record (on any stream of
// the device) is done, without blocking the host.
func (s *Stream) WaitEvent(e *Event) error {
	return e.dev.do(func() error { return cuStreamWaitEvent(s.handle(), e.h) })
}

// CallerStream is the caller's stream with handle h in this device's
// primary context (0 or 1: the legacy default stream, 2: the calling
// thread's per-thread default stream, else a CUstream), for ordering work
// against it with events. Closing it does nothing: the caller owns it.
func (d *Device) CallerStream(h uintptr) *Stream {
	return &Stream{dev: d, h: h, caller: true}
}

// Close destroys the stream once its queued work is done; a caller's
// stream (CallerStream) stays.
func (s *Stream) Close() error {
	if s == nil || s.h == 0 || s.caller {
		return nil
	}
	h := s.h
	s.h = 0
	return s.dev.do(func() error { return cuStreamDestroy(h) })
}

// Event marks a point in a stream, for waiting on it and timing between two.
type Event struct {
	dev *Device
	h   uintptr
}

// NewEvent creates an event that records time.
func (d *Device) NewEvent() (*Event, error) {
	h, err := doValue(d, func() (uintptr, error) { return cuEventCreate(0) })
	if err != nil {
		return nil, err
	}
	return &Event{dev: d, h: h}, nil
}

// Record queues the event on stream s (nil: the default stream).
func (e *Event) Record(s *Stream) error {
	return e.dev.do(func() error { return cuEventRecord(e.h, s.handle()) })
}

// Synchronize waits until the work before the event's last Record is done.
func (e *Event) Synchronize() error {
	return e.dev.do(func() error { return cuEventSynchronize(e.h) })
}

// MillisecondsSince is the GPU time in milliseconds (about 0.5 µs
// resolution) from start's completion to e's. Both must have been recorded
// and completed (Synchronize e first).
func (e *Event) MillisecondsSince(start *Event) (float32, error) {
	return doValue(e.dev, func() (float32, error) { return cuEventElapsedTime(start.h, e.h) })
}

// Close destroys the event.
func (e *Event) Close() error {
	if e == nil || e.h == 0 {
		return nil
	}
	h := e.h
	e.h = 0
	return e.dev.do(func() error { return cuEventDestroy(h) })
}

// Pool keeps freed device buffers for reuse, so that the temporaries of
// one call serve the next without cuMemAlloc/cuMemFree (each of which may
// synchronise the device): a gpu.FreeList by size class. Idle memory is
// capped at a quarter of the device's; Trim releases it all.
type Pool struct {
	dev  *Device
	list *gpu.FreeList[DevicePtr]
}

// PoolStats counts a Pool's traffic.
type PoolStats = gpu.FreeListStats

// Pool is the device's pool of temporary buffers.
func (d *Device) Pool() *Pool { return d.pool }

// Get returns a buffer of size bytes, reused where a freed one of its size
// class is idle. Its Free returns it to the pool. Its contents are
// undefined.
func (p *Pool) Get(size int) (*Buffer, error) {
	if size <= 0 {
		return nil, &RangeError{Backend: "cuda", Op: "Pool.Get", Length: size}
	}
	ptr, class, err := p.list.Get(size, func(class int) (DevicePtr, error) {
		return doValue(p.dev, func() (DevicePtr, error) { return p.dev.allocRaw(class) })
	})
	if err != nil {
		return nil, err
	}
	return &Buffer{dev: p.dev, ptr: ptr, size: size, capacity: class, pool: p}, nil
}

// put takes a block back, or frees it when the pool holds its limit.
func (p *Pool) put(ptr DevicePtr, class int) error {
	if p.list.Put(ptr, class) {
		return nil
	}
	err := p.dev.do(func() error { return cuMemFree(ptr) })
	if errors.Is(err, ErrClosed) {
		return nil
	}
	return err
}

// Trim frees every idle block.
func (p *Pool) Trim() error {
	idle := p.list.Drain()
	if len(idle) == 0 {
		return nil
	}
	return p.dev.do(func() error {
		var errs []error
		for _, ptr := range idle {
			errs = append(errs, cuMemFree(ptr))
		}
		return errors.Join(errs...)
	})
}

// Stats returns the pool's counters.
func (p *Pool) Stats() PoolStats { return p.list.Stats() }
