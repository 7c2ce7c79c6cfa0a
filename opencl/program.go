package opencl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gpucache"
	"github.com/ndconv/ndconv/kernels"
)

// Program is a built OpenCL program (cl_program) for one device, shared
// until the device's last Close.
type Program struct {
	dev  *Device
	h    uintptr
	name string

	mu       sync.Mutex
	kernels  map[string]*Kernel
	released bool
}

// Kernel builds the family's source through the program cache.
func (d *Device) Kernel(family string, defines []string, name string) (gpu.Kernel, error) {
	src, err := kernels.Source(family)
	if err != nil {
		return nil, err
	}
	p, err := d.program(&d.programs, src, family, defines)
	if err != nil {
		return nil, err
	}
	return gpu.Value[gpu.Kernel](p.kernel(name))
}

// program builds OpenCL C source for d with defines (gpu.DefineOptions),
// or finds it built, through cache c (tests pass their own to play a new
// process) and the disk's programStore. Concurrent calls for one key
// build once. A damaged cache file, or one the driver refuses, is replaced
// by a fresh build. name identifies the program in errors.
func (d *Device) program(c *programCache, source, name string, defines []string) (*Program, error) {
	if d.unoptimised.Load() {
		defines = append(slices.Clip(defines), "-cl-opt-disable")
	}
	options, err := buildOptions(defines, d.info)
	if err != nil {
		return nil, err
	}
	return c.Get(programStore, programKeyOf(source, options, d.info),
		func() (*Program, []byte, error) {
			return d.build(name, defines, options, !d.withoutBinaries.Load(), func() (uintptr, error) { return clCreateProgramWithSource(d.ctx, source) })
		},
		func(binary []byte) (*Program, error) { // a binary needs clBuildProgram too; for a real binary it is quick
			p, _, err := d.build(name, defines, options, false, func() (uintptr, error) { return clCreateProgramWithBinary(d.ctx, d.id, binary) })
			return p, err
		})
}

// cacheFormat is hashed into every key: change it when the key's inputs or
// the file layout change. Format 2: a binary cached before api.go's ptr
// may hold another program's build.
const cacheFormat = "ndconv-opencl-program-2"

// programKeyOf names one build: the hash of everything its binary depends
// on, a driver update or another platform's device of the same name
// included.
func programKeyOf(source, options string, info Info) gpucache.Key {
	b := gpucache.NewKey(cacheFormat)
	b.Field("platform", info.PlatformName)
	b.Field("platform-version", info.PlatformVersion)
	b.Field("device", info.Name)
	b.Field("device-version", info.Version)
	b.Field("driver", info.DriverVersion)
	b.Field("options", options)
	b.Field("source", source)
	return b.Key()
}

// programStore is the disk cache, in $NDCONV_CACHE_DIR/opencl, else
// ndconv/opencl in the user's cache directory.
var programStore = &gpucache.Store{
	Subdir:  "opencl",
	Magic:   "NDCLBIN\x01",
	Suffix:  ".clbin",
	Payload: "binary",
	Damaged: "opencl: damaged program cache file",
	Getenv:  os.Getenv,
}

// programCache is one device's programs by key.
type programCache = gpucache.Cache[*Program]

// buildOptions is clBuildProgram's option string for defines on the
// device described by info. On PoCL it adds -w (OpenCL's own option): its
// compiler prints its warnings' count on the process's stderr ("3 warnings
// generated." for winograd.cl's loops it does not unroll), noise after a
// command that succeeded; other drivers keep warnings in the build log.
func buildOptions(defines []string, info Info) (string, error) {
	for _, d := range defines {
		if d == "" || strings.ContainsAny(d, " \t\n\r\"'\\") {
			return "", &UnsupportedError{Backend: "opencl", What: "build option", Value: fmt.Sprintf("%q", d), Reason: "defines may not be empty or hold spaces or quotes"}
		}
	}
	options := gpu.DefineOptions(defines)
	if info.PoCL() {
		options = append(options, "-w")
	}
	return strings.Join(options, " "), nil
}

// build makes a program with create and builds it with options, with its
// binary if withBinary (nil where the implementation gives none). A
// failure is a *BuildError.
func (d *Device) build(name string, defines []string, options string, withBinary bool, create func() (uintptr, error)) (*Program, []byte, error) {
	fail := func(log string, err error) error {
		code := err.Error()
		if e, ok := err.(*Error); ok {
			code = e.Name
		}
		return &BuildError{Backend: "opencl", Program: name, Device: d.info.Name, Defines: defines, Options: strings.Fields(options), Log: log, Code: code, Err: err}
	}
	var p *Program
	var binary []byte
	err := d.do(func() error {
		h, err := create()
		if err != nil {
			return fail("", err)
		}
		if err := clBuildProgram(h, d.id, options); err != nil {
			log, _ := clGetProgramBuildLog(h, d.id)
			cl.clReleaseProgram.Call(h)
			return fail(log, err)
		}
		p = &Program{dev: d, h: h, name: name, kernels: map[string]*Kernel{}}
		if withBinary {
			binary, _ = clGetProgramBinary(h)
		}
		return nil
	})
	return p, binary, err
}

// release frees the program and its kernels.
func (p *Program) release() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return nil
	}
	p.released = true
	var errs []error
	for _, k := range p.kernels {
		errs = append(errs, cl.clReleaseKernel.Call(k.h))
	}
	return errors.Join(append(errs, cl.clReleaseProgram.Call(p.h))...)
}

// kernel returns the program's kernel called name, one *Kernel per name.
func (p *Program) kernel(name string) (*Kernel, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return nil, ErrClosed
	}
	if k := p.kernels[name]; k != nil {
		return k, nil
	}
	k := &Kernel{dev: p.dev, name: name}
	err := p.dev.do(func() (err error) {
		if k.h, err = clCreateKernel(p.h, name); err != nil {
			return fmt.Errorf("%w (kernel %q of %s)", err, name, p.name)
		}
		if k.maxGroup, err = clGetKernelWorkGroupSize(k.h, p.dev.id); err != nil {
			cl.clReleaseKernel.Call(k.h)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	p.kernels[name] = k
	return k, nil
}

// Kernel is a kernel of a built program (cl_kernel; gpu.Kernel).
type Kernel struct {
	dev      *Device
	h        uintptr
	name     string
	maxGroup int // CL_KERNEL_WORK_GROUP_SIZE on the device

	// mu serialises setting the arguments and enqueueing: a cl_kernel's
	// arguments are shared state, captured by clEnqueueNDRangeKernel.
	mu sync.Mutex
}

func (k *Kernel) Name() string      { return k.name }
func (k *Kernel) MaxGroupSize() int { return k.maxGroup }

// debugLaunches (NDCONV_OPENCL_SYNC=1, read at first launch) makes every
// launch wait for its kernel and report its failure against its name.
var debugLaunches = sync.OnceValue(func() bool { return os.Getenv("NDCONV_OPENCL_SYNC") == "1" })

// launch queues k on q over groups × local work-items with args. Faults
// while it runs surface at the next Finish.
func (k *Kernel) launch(q *Queue, groups, local [3]int, args []any) error {
	var global [3]int
	for i := range 3 {
		if groups[i] <= 0 || local[i] <= 0 {
			return &UnsupportedError{Backend: "opencl", What: "work size", Value: fmt.Sprintf("groups %v, local %v", groups, local)}
		}
		global[i] = groups[i] * local[i]
	}
	var scratch [8]byte
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.dev.do(func() error {
		for i, a := range args {
			value, err := argBytes(scratch[:0], a)
			if err != nil {
				return &UnsupportedError{Backend: "opencl", What: "kernel argument", Value: fmt.Sprintf("%d of %s", i, k.name), Reason: err.Error()}
			}
			if err := cl.clSetKernelArg.Call(k.h, uintptr(i), uintptr(len(value)), uintptr(ptr(value))); err != nil { // copied before it returns
				return fmt.Errorf("%w (argument %d of %s, %d bytes)", err, i, k.name, len(value))
			}
		}
		err := cl.clEnqueueNDRangeKernel.Call(q.h, k.h, 3, 0, uintptr(unsafe.Pointer(&global)), uintptr(unsafe.Pointer(&local)), 0, 0, 0) // an int is a size_t
		if err == nil && debugLaunches() {
			err = cl.clFinish.Call(q.h)
		}
		if err != nil {
			return fmt.Errorf("%w (kernel %s, global %v, local %v)", err, k.name, global, local)
		}
		return nil
	})
}

// argBytes is a kernel argument's value: a *Buffer's handle, or an int32,
// int64, float32 or float64 (a Go int says nothing of the kernel's type).
func argBytes(scratch []byte, a any) ([]byte, error) {
	switch x := a.(type) {
	case *Buffer:
		if x == nil || x.h == 0 {
			return nil, errors.New("a nil or freed *Buffer")
		}
		a = uint64(x.h) // a cl_mem: 64 bits on the hosts purego runs on, as are size_t and int
	case int32, int64, float32, float64:
	default:
		return nil, fmt.Errorf("type %T: use *Buffer, int32, int64, float32 or float64", a)
	}
	return binary.Append(scratch, binary.NativeEndian, a)
}
