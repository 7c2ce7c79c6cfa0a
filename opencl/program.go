package opencl

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/ndconv/ndconv/internal/gpu"
)

// Program is a built OpenCL program (cl_program) for one device.
// Programs from Device.Program are cached and shared by every caller, and
// live until the device's last Close.
type Program struct {
	dev  *Device
	h    uintptr
	name string

	mu       sync.Mutex
	kernels  map[string]*Kernel
	released bool
}

// Program builds OpenCL C source for d with defines, or finds it built.
// Each define is NAME or NAME=VALUE (passed as -DNAME=VALUE); an entry
// starting with "-" is passed to the compiler as it is. name identifies the
// program in errors (the kernel family, "direct").
//
// Programs are cached in memory per device and their binaries on disk under
// CacheDir, keyed by the SHA-256 of the source, the sorted options and the
// platform's, device's and driver's names and versions. Concurrent calls
// for one key build once; the others wait for it. A damaged cache file, or
// one the driver refuses, is replaced by a fresh build. A failed build is a
// *BuildError carrying the compiler's log and the defines.
func (d *Device) Program(source, name string, defines []string) (*Program, error) {
	return d.program(&d.programs, source, name, defines)
}

// program is Program through cache c (tests use a cache of their own to
// play a new process on a device already open).
func (d *Device) program(c *programCache, source, name string, defines []string) (*Program, error) {
	if d.unoptimised.Load() {
		defines = append(slices.Clip(defines), "-cl-opt-disable")
	}
	options, err := buildOptions(defines)
	if err != nil {
		return nil, err
	}
	key := programKeyOf(source, options, d.info)
	return c.Get(programStore, key,
		func() (*Program, []byte, error) {
			return d.buildSource(source, name, defines, options, !d.withoutBinaries.Load())
		},
		func(binary []byte) (*Program, error) { return d.buildBinary(binary, name, options) })
}

// buildOptions is clBuildProgram's option string for defines: sorted, so
// that the same set in another order is the same build and the same key.
func buildOptions(defines []string) (string, error) {
	for _, d := range defines {
		if d == "" || strings.ContainsAny(d, " \t\n\r\"'\\") {
			return "", &UnsupportedError{Backend: "opencl", What: "build option", Value: fmt.Sprintf("%q", d), Reason: "defines may not be empty or hold spaces or quotes"}
		}
	}
	return strings.Join(gpu.DefineOptions(defines), " "), nil
}

// buildSource compiles source and returns the program with its binary if
// withBinary (nil where the implementation gives none, or not asked: the
// program is then not cached on disk).
func (d *Device) buildSource(source, name string, defines []string, options string, withBinary bool) (*Program, []byte, error) {
	var p *Program
	var binary []byte
	err := d.do(func() error {
		h, err := clCreateProgramWithSource(d.ctx, source)
		if err != nil {
			return buildError(name, d.info.Name, defines, options, "", err)
		}
		if err := clBuildProgram(h, d.id, options); err != nil {
			log, _ := clGetProgramBuildLog(h, d.id)
			clReleaseProgram(h)
			return buildError(name, d.info.Name, defines, options, log, err)
		}
		p = &Program{dev: d, h: h, name: name}
		if withBinary {
			binary, _ = clGetProgramBinary(h)
		}
		return nil
	})
	return p, binary, err
}

// buildBinary loads a binary this device built before and builds it (a
// binary needs clBuildProgram too; for a real binary it is quick).
func (d *Device) buildBinary(binary []byte, name, options string) (*Program, error) {
	var p *Program
	err := d.do(func() error {
		h, err := clCreateProgramWithBinary(d.ctx, d.id, binary)
		if err != nil {
			return err
		}
		if err := clBuildProgram(h, d.id, options); err != nil {
			clReleaseProgram(h)
			return err
		}
		p = &Program{dev: d, h: h, name: name}
		return nil
	})
	return p, err
}

// Binary returns the program's binary for its device, as the disk cache
// stores it.
func (p *Program) Binary() ([]byte, error) {
	var b []byte
	err := p.dev.do(func() (err error) {
		b, err = clGetProgramBinary(p.h)
		return err
	})
	return b, err
}

// release frees the program and its kernels (Device.Close does).
func (p *Program) release() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released || p.h == 0 {
		return nil
	}
	p.released = true
	var errs []error
	for _, k := range p.kernels {
		errs = append(errs, clReleaseKernel(k.h))
	}
	errs = append(errs, clReleaseProgram(p.h))
	return errors.Join(errs...)
}

// Kernel returns the program's kernel called name. Lookups are remembered:
// each name has one *Kernel, shared by every caller.
func (p *Program) Kernel(name string) (*Kernel, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return nil, ErrClosed
	}
	if k := p.kernels[name]; k != nil {
		return k, nil
	}
	var k *Kernel
	err := p.dev.do(func() error {
		h, err := clCreateKernel(p.h, name)
		if err != nil {
			return fmt.Errorf("%w (kernel %q of %s)", err, name, p.name)
		}
		wg, err := clGetKernelWorkGroupInfoUint(h, p.dev.id, clKernelWorkGroupSize)
		if err != nil {
			clReleaseKernel(h)
			return err
		}
		k = &Kernel{prog: p, h: h, name: name, maxWorkGroup: int(wg)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if p.kernels == nil {
		p.kernels = map[string]*Kernel{}
	}
	p.kernels[name] = k
	return k, nil
}

// Kernel is a kernel of a built program (cl_kernel).
type Kernel struct {
	prog         *Program
	h            uintptr
	name         string
	maxWorkGroup int // CL_KERNEL_WORK_GROUP_SIZE on the program's device

	// mu serialises setting the arguments and enqueueing: a cl_kernel's
	// arguments are shared state, captured by clEnqueueNDRangeKernel.
	mu sync.Mutex
}

// Name is the kernel's name.
func (k *Kernel) Name() string { return k.name }

// MaxWorkGroupSize is the most work-items a work-group of this kernel may
// have on its device (CL_KERNEL_WORK_GROUP_SIZE).
func (k *Kernel) MaxWorkGroupSize() int { return k.maxWorkGroup }

// Local is a kernel argument of n bytes of local memory (a __local
// pointer argument).
type Local int

// maxKernelArgs bounds an enqueue's argument count; no ndconv kernel comes
// near it.
const maxKernelArgs = 32

// argValue returns the bytes of a kernel argument. Buffers are given as
// *Buffer; numbers as int8 … uint64, float32 or float64, matching the
// kernel's parameter type in size (a C long is int64, an int int32). A Go
// int is refused: its size says nothing about the kernel's type.
func argValue(slot *uint64, a any) (size uintptr, value unsafe.Pointer, err error) {
	p := unsafe.Pointer(slot)
	switch x := a.(type) {
	case *Buffer:
		if x == nil || x.h == 0 {
			return 0, nil, errors.New("a nil or freed *Buffer")
		}
		*slot = uint64(x.h)
		return unsafe.Sizeof(x.h), p, nil
	case Local:
		return uintptr(x), nil, nil
	case int8:
		*slot = uint64(uint8(x))
		return 1, p, nil
	case uint8:
		*slot = uint64(x)
		return 1, p, nil
	case int16:
		*slot = uint64(uint16(x))
		return 2, p, nil
	case uint16:
		*slot = uint64(x)
		return 2, p, nil
	case int32:
		*slot = uint64(uint32(x))
		return 4, p, nil
	case uint32:
		*slot = uint64(x)
		return 4, p, nil
	case int64:
		*slot = uint64(x)
		return 8, p, nil
	case uint64:
		*slot = x
		return 8, p, nil
	case float32:
		*slot = uint64(math.Float32bits(x))
		return 4, p, nil
	case float64:
		*slot = math.Float64bits(x)
		return 8, p, nil
	}
	return 0, nil, fmt.Errorf("type %T: use *Buffer, Local, a sized integer (int32, int64, …), float32 or float64", a)
}

// Enqueue queues the kernel on q over global work-items in work-groups of
// local (x fastest; global a multiple of local in each dimension), with
// args set in order, and returns its event, which the caller releases. An
// invalid configuration is reported here; faults while it runs, at the
// next Finish or Wait.
func (k *Kernel) Enqueue(q *Queue, global, local [3]int, args ...any) (*Event, error) {
	return k.EnqueueAfter(q, nil, global, local, args...)
}

// EnqueueAfter is Enqueue for a kernel that starts once the events of
// wait (of any queue of the device) are complete.
func (k *Kernel) EnqueueAfter(q *Queue, wait []*Event, global, local [3]int, args ...any) (*Event, error) {
	if len(args) > maxKernelArgs {
		return nil, &UnsupportedError{Backend: "opencl", What: "kernel argument count", Value: fmt.Sprint(len(args)), Reason: fmt.Sprintf("at most %d", maxKernelArgs)}
	}
	var g, l [3]uintptr
	for i := range 3 {
		if local[i] <= 0 || global[i] <= 0 || global[i]%local[i] != 0 {
			return nil, &UnsupportedError{Backend: "opencl", What: "work size", Value: fmt.Sprintf("global %v, local %v", global, local),
				Reason: "each global extent must be a positive multiple of the local one"}
		}
		g[i], l[i] = uintptr(global[i]), uintptr(local[i])
	}
	var slots [maxKernelArgs]uint64
	k.mu.Lock()
	defer k.mu.Unlock()
	var ev uintptr
	err := k.prog.dev.do(func() error {
		for i, a := range args {
			size, value, err := argValue(&slots[i], a)
			if err != nil {
				return &UnsupportedError{Backend: "opencl", What: "kernel argument", Value: fmt.Sprintf("%d of %s", i, k.name), Reason: err.Error()}
			}
			if err := clSetKernelArg(k.h, i, size, value); err != nil {
				return fmt.Errorf("%w (argument %d of %s, %d bytes)", err, i, k.name, size)
			}
		}
		var err error
		ev, err = clEnqueueNDRangeKernel(q.h, k.h, &g, &l, eventHandles(wait))
		if err != nil {
			return fmt.Errorf("%w (kernel %s, global %v, local %v)", err, k.name, global, local)
		}
		if debugLaunches() {
			if err := clWaitForEvents(ev); err != nil {
				clReleaseEvent(ev)
				return fmt.Errorf("%w (kernel %s, global %v, local %v)", err, k.name, global, local)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Event{dev: k.prog.dev, h: ev}, nil
}

// debugLaunches makes every Enqueue wait for its kernel and report the
// kernel's own failure against its name: set NDCONV_OPENCL_SYNC=1 while
// debugging kernels. Read once, at first launch.
var debugLaunches = sync.OnceValue(func() bool { return lookupEnv("NDCONV_OPENCL_SYNC") == "1" })

// Event is a queued command's event (cl_event).
type Event struct {
	dev *Device
	h   uintptr
}

// Wait blocks until the command is done, and reports its failure.
func (e *Event) Wait() error {
	return e.dev.do(func() error { return clWaitForEvents(e.h) })
}

// Duration is how long the command ran on the device, from the profiling
// counters (the queue has profiling on); the command must be done.
func (e *Event) Duration() (time.Duration, error) {
	start, end, err := e.Times()
	if err != nil {
		return 0, err
	}
	return time.Duration(end - start), nil
}

// eventHandles are the events' cl_events, for a wait list.
func eventHandles(events []*Event) []uintptr {
	var hs []uintptr
	for _, e := range events {
		if e != nil && e.h != 0 {
			hs = append(hs, e.h)
		}
	}
	return hs
}

// Times are the command's start and end on the device's clock, in
// nanoseconds, from the profiling counters; the command must be done.
func (e *Event) Times() (start, end uint64, err error) {
	err = e.dev.do(func() (err error) {
		if start, err = clGetEventProfilingInfo(e.h, clProfilingCommandStart); err != nil {
			return err
		}
		end, err = clGetEventProfilingInfo(e.h, clProfilingCommandEnd)
		return err
	})
	return start, end, err
}

// Release releases the event (not the command, which runs on).
func (e *Event) Release() error {
	if e == nil || e.h == 0 {
		return nil
	}
	err := e.dev.do(func() error { return clReleaseEvent(e.h) })
	e.h = 0
	return err
}

// asError is err as an *Error (the wrappers' errors always are).
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Call: "?", Code: CodeInvalidValue, Name: err.Error()}
}

// buildError is a failed build of program for device as a *BuildError.
func buildError(program, device string, defines []string, options, log string, err error) *BuildError {
	return &BuildError{Backend: "opencl", Program: program, Device: device, Defines: defines, Options: strings.Fields(options), Log: log, Code: asError(err).Name, Err: asError(err)}
}
