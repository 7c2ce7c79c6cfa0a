package opencl

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/ndconv/ndconv/internal/gpu"
)

// Buffer is device memory (cl_mem).
type Buffer struct {
	dev  *Device
	h    uintptr
	size int
}

func (d *Device) Alloc(n int) (gpu.Buffer, error) {
	return gpu.Value[gpu.Buffer](d.alloc(clMemReadWrite, n))
}

// Scratch is Alloc: OpenCL's allocations are quick.
func (d *Device) Scratch(n int) (gpu.Buffer, error) { return d.Alloc(n) }

func (d *Device) alloc(flags uint64, n int) (*Buffer, error) {
	if n <= 0 {
		return nil, &RangeError{Backend: "opencl", Op: "Alloc", Length: n}
	}
	if int64(n) > d.info.MaxAlloc && d.info.MaxAlloc > 0 {
		return nil, &UnsupportedError{Backend: "opencl", What: "buffer size", Value: fmt.Sprintf("%d bytes", n),
			Reason: fmt.Sprintf("the largest buffer %s allows is %d bytes", d.info.Name, d.info.MaxAlloc)}
	}
	h, err := gpu.DoValue(d.do, func() (uintptr, error) { return clCreateBuffer(d.ctx, flags, n) })
	if err != nil {
		return nil, err
	}
	return &Buffer{dev: d, h: h, size: n}, nil
}

func (b *Buffer) Size() int { return b.size }

// Free releases the buffer once the commands queued that use it are done.
func (b *Buffer) Free() error { return gpu.Release(&b.h, b.dev.do, &cl.clReleaseMemObject) }

// Queue is an in-order command queue with profiling on (gpu.Queue).
type Queue struct {
	dev *Device
	h   uintptr
}

func (d *Device) NewQueue() (gpu.Queue, error) {
	h, err := gpu.DoValue(d.do, d.createQueue)
	if err != nil {
		return nil, err
	}
	return &Queue{dev: d, h: h}, nil
}

func (q *Queue) Finish() error { return q.dev.do(func() error { return cl.clFinish.Call(q.h) }) }
func (q *Queue) Flush() error  { return q.dev.do(func() error { return cl.clFlush.Call(q.h) }) }

func (q *Queue) Close() error {
	return gpu.Release(&q.h, q.dev.do, &cl.clFinish, &cl.clReleaseCommandQueue)
}

func (q *Queue) Launch(k gpu.Kernel, groups, local [3]int, args ...any) error {
	return k.(*Kernel).launch(q, groups, local, args)
}

func (q *Queue) Write(dst gpu.Buffer, off int, src []byte) error {
	return q.transfer("Write", &cl.clEnqueueWriteBuffer, dst, off, src)
}

func (q *Queue) Read(dst []byte, src gpu.Buffer, off int) error {
	return q.transfer("Read", &cl.clEnqueueReadBuffer, src, off, dst)
}

// transfer moves host memory to or from buf with call
// (clEnqueueWriteBuffer or clEnqueueReadBuffer): asynchronously where the
// memory is a mapping's, which the caller keeps until the queue is done,
// else before it returns.
func (q *Queue) transfer(op string, call *gpu.Entry, buf gpu.Buffer, off int, host []byte) error {
	b := buf.(*Buffer)
	if err := gpu.CheckRange("opencl", op, b, off, len(host)); err != nil || len(host) == 0 {
		return err
	}
	return q.dev.do(func() error {
		blocking := !q.dev.pinned.holds(host)
		return call.Call(q.h, b.h, clBool(blocking), uintptr(off), uintptr(len(host)), uintptr(ptr(host)), 0, 0, 0)
	})
}

func (q *Queue) Copy(dst gpu.Buffer, dstOff int, src gpu.Buffer, srcOff, n int) error {
	d, s := dst.(*Buffer), src.(*Buffer)
	if err := cmp.Or(gpu.CheckRange("opencl", "Copy", s, srcOff, n), gpu.CheckRange("opencl", "Copy", d, dstOff, n)); err != nil || n == 0 {
		return err
	}
	return q.dev.do(func() error {
		return cl.clEnqueueCopyBuffer.Call(q.h, s.h, d.h, uintptr(srcOff), uintptr(dstOff), uintptr(n), 0, 0, 0)
	})
}

func (q *Queue) Fill(dst gpu.Buffer, off, n int, value byte) error {
	b := dst.(*Buffer)
	if err := gpu.CheckRange("opencl", "Fill", b, off, n); err != nil || n == 0 {
		return err
	}
	pattern := [1]byte{value}
	return q.dev.do(func() error {
		return cl.clEnqueueFillBuffer.Call(q.h, b.h, uintptr(unsafe.Pointer(&pattern[0])), 1, uintptr(off), uintptr(n), 0, 0, 0)
	})
}

// Event is a marker's event (cl_event), timed by the queue's profiling
// counters (gpu.Event).
type Event struct {
	dev *Device
	h   uintptr // 0 until recorded
}

func (d *Device) NewEvent() (gpu.Event, error) { return &Event{dev: d}, nil }

func (q *Queue) Record(ev gpu.Event) error {
	e := ev.(*Event)
	return q.dev.do(func() error {
		h, err := clEnqueueMarker(q.h)
		if err != nil {
			return err
		}
		if e.h != 0 {
			cl.clReleaseEvent.Call(e.h)
		}
		e.h = h
		return nil
	})
}

func (q *Queue) Wait(ev gpu.Event) error {
	e := ev.(*Event)
	if e.h == 0 {
		return nil
	}
	// The work queued after the barrier waits for e.
	return q.dev.do(func() error { return cl.clEnqueueBarrierWithWaitList.Call(q.h, 1, uintptr(unsafe.Pointer(&e.h)), 0) })
}

func (e *Event) Synchronize() error {
	if e.h == 0 {
		return nil
	}
	return e.dev.do(func() error { return cl.clWaitForEvents.Call(1, uintptr(unsafe.Pointer(&e.h))) })
}

// Since is the device time from start's end to e's.
func (e *Event) Since(start gpu.Event) (time.Duration, error) {
	var from, to uint64
	err := e.dev.do(func() (err error) {
		if from, err = clGetEventProfilingInfo(start.(*Event).h, clProfilingCommandEnd); err != nil {
			return err
		}
		to, err = clGetEventProfilingInfo(e.h, clProfilingCommandEnd)
		return err
	})
	return time.Duration(int64(to - from)), err
}

// Close releases the event (not the work it marks).
func (e *Event) Close() error { return gpu.Release(&e.h, e.dev.do, &cl.clReleaseEvent) }

// mapping is pinned host memory, OpenCL's way (as NVIDIA's OpenCL guide
// has it): a CL_MEM_ALLOC_HOST_PTR buffer mapped on the device's host
// queue for as long as it lives.
type mapping struct {
	buf *Buffer
	p   unsafe.Pointer // C memory the library owns
}

// AllocHost returns n bytes of staging: a prefix of a mapping of n's size
// class from the device's free list, else a new one. Its Free returns the
// mapping to the list, or unmaps and releases it.
func (d *Device) AllocHost(n int) (gpu.HostBuffer, error) {
	if n <= 0 {
		return nil, &RangeError{Backend: "opencl", Op: "AllocHost", Length: n}
	}
	mem := func(m *mapping, n int) []byte { return unsafe.Slice((*byte)(m.p), n) }
	return gpu.Value[gpu.HostBuffer](gpu.GetPooled(d.staging, n, d.mapHost, mem, d.unmapHost))
}

func (d *Device) mapHost(n int) (*mapping, error) {
	b, err := d.alloc(clMemReadWrite|clMemAllocHostPtr, n)
	if err != nil {
		return nil, err
	}
	m := &mapping{buf: b}
	if err := d.do(func() (err error) { m.p, err = clEnqueueMapBuffer(d.hostQ, b.h, n); return err }); err != nil {
		b.Free()
		return nil, err
	}
	d.pinned.set(m, true)
	return m, nil
}

func (d *Device) unmapHost(m *mapping) error {
	d.pinned.set(m, false)
	err := d.do(func() error {
		return errors.Join(clEnqueueUnmapMemObject(d.hostQ, m.buf.h, m.p), cl.clFinish.Call(d.hostQ))
	})
	return errors.Join(err, m.buf.Free())
}

// pinnedRanges are a device's live mappings, whose transfers are
// asynchronous.
type pinnedRanges struct {
	mu  sync.Mutex
	all []*mapping
}

// set adds m, or with live false removes it.
func (p *pinnedRanges) set(m *mapping, live bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.all = slices.DeleteFunc(p.all, func(x *mapping) bool { return x == m })
	if live {
		p.all = append(p.all, m)
	}
}

// holds reports whether b lies inside a live mapping.
func (p *pinnedRanges) holds(b []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return slices.ContainsFunc(p.all, func(m *mapping) bool {
		start := uintptr(m.p)
		return start <= lo && lo+uintptr(len(b)) <= start+uintptr(m.buf.size)
	})
}
