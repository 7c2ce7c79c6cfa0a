package gpu

import (
	"time"

	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// Device is one GPU through one vendor API: what the engine needs of it.
// Everything a Device makes is released before its Close; its methods may
// be called from any goroutine.
type Device interface {
	Planner
	// Check refuses a problem the device cannot run at all (float64
	// accumulation on an OpenCL device without cl_khr_fp64), nil if it can.
	Check(p *nd.Problem) error

	// Alloc allocates n ≥ 1 bytes of device memory, uninitialised.
	Alloc(n int) (Buffer, error)
	// Scratch allocates n ≥ 1 bytes for an engine's buffers, from a
	// FreeList where the API's allocations are slow.
	Scratch(n int) (Buffer, error)
	// AllocHost allocates n ≥ 1 bytes of page-locked host memory (a
	// pipeline's staging) from the device's FreeList.
	AllocHost(n int) (HostBuffer, error)
	// NewQueue makes an in-order queue (a CUDA stream, an OpenCL queue).
	NewQueue() (Queue, error)
	// NewEvent makes a reusable event for Queue.Record.
	NewEvent() (Event, error)

	// Kernel builds a kernel family's source (kernels.Source) with
	// defines, through the binding's cache, and returns its kernel name.
	Kernel(family string, defines []string, name string) (Kernel, error)
	// CheckLaunch refuses, with an *UnsupportedError, a launch of k the
	// device cannot run (work-group size, local or constant memory).
	CheckLaunch(l *kernels.Launch, k Kernel) error

	// Close drops the caller's reference to the device.
	Close() error
}

// Planner is what planning needs of a device, without opening it.
type Planner interface {
	// Backend names the API: "cuda", "opencl"; errors and reports use it.
	Backend() string
	// Limits are the bounds the kernels' builders plan launches within.
	Limits() Limits
	// MemoryBudget is the device memory an execution may take when the
	// caller sets none, at most buffers times the largest allocation.
	MemoryBudget(buffers int) (int64, error)
	// Missing counts the launches whose kernels are neither built in this
	// process nor in the binding's cache.
	Missing(launches []*kernels.Launch) (int, error)
}

// Limits are a device's bounds on the launches kernels' builders plan.
type Limits struct {
	// MaxLocalBytes is the local (shared) memory a tile may declare.
	MaxLocalBytes int
	// MaxGroupsYZ bounds a launch's y and z group counts.
	MaxGroupsYZ int
	// DefaultGroupItems is how many work-items a default decomposition
	// may put in one work-group (0: 256, what every device compiles every
	// kernel for; NVIDIA's OpenCL compiles septile.cl for no more).
	DefaultGroupItems int
	// MaxParamBytes is how many bytes of weights a launch may pass among
	// its kernel parameters (ByValue); 0: always in a buffer.
	MaxParamBytes int
	// FFTBudget bounds the FFT method's batch buffers and spectra.
	FFTBudget int64
}

// Buffer is device memory.
type Buffer interface {
	Size() int
	// Free releases it; freeing twice does nothing.
	Free() error
}

// HostBuffer is page-locked host memory.
type HostBuffer interface {
	Bytes() []byte
	Free() error
}

// Queue is an in-order queue of work on one device. Its methods queue and
// return; Finish waits. Write and Read return once pageable host memory is
// no longer needed; pinned memory (a HostBuffer's, or registered) must
// stay untouched until the queue is done with it.
type Queue interface {
	// Launch queues kernel k over groups × local work-items with args:
	// Buffers, ByValue bytes, and int32, int64, float32 or float64.
	Launch(k Kernel, groups, local [3]int, args ...any) error
	// Write copies src to dst at byte offset off.
	Write(dst Buffer, off int, src []byte) error
	// Read copies len(dst) bytes of src from byte offset off into dst.
	Read(dst []byte, src Buffer, off int) error
	// Copy copies n bytes between device buffers.
	Copy(dst Buffer, dstOff int, src Buffer, srcOff, n int) error
	// Fill sets n bytes of dst from off to value.
	Fill(dst Buffer, off, n int, value byte) error
	// Record makes ev complete once the work queued so far has.
	Record(ev Event) error
	// Wait makes the work queued after it wait for ev (of any queue).
	Wait(ev Event) error
	// Flush submits what is queued without waiting.
	Flush() error
	// Finish waits for everything queued and reports its failure.
	Finish() error
	// Close finishes and releases the queue.
	Close() error
}

// Event marks a point in a queue's work.
type Event interface {
	// Synchronize waits for the event.
	Synchronize() error
	// Since is the device time from start to the event; both complete.
	Since(start Event) (time.Duration, error)
	Close() error
}

// Kernel is a built kernel function.
type Kernel interface {
	Name() string
	// MaxGroupSize is the most work-items a launch's group may have.
	MaxGroupSize() int
}

// ByValue is a kernel argument passed by value as these bytes (a C struct
// parameter: weights read from the kernel's parameters).
type ByValue []byte

// FFTLibrary is a Device with a vendor FFT library (cuFFT), whose plans
// the FFT method transforms with instead of fft.cl's kernels.
type FFTLibrary interface {
	// FFTPlan makes a plan of batch transforms of the lengths (at most
	// MaxFFTRank axes) on queue q.
	FFTPlan(lengths []int, batch int, kind FFTKind, q Queue) (FFTPlan, error)
	// FFTAvailable is nil where the library loads, else why not.
	FFTAvailable() error
}

// FFTKind is a transform's direction and data.
type FFTKind int

const (
	RealForward    FFTKind = iota // real blocks to half spectra
	RealInverse                   // half spectra to real blocks
	ComplexForward                // complex to complex, forward
	ComplexInverse                // complex to complex, inverse
)

// MaxFFTRank is how many axes a library plan transforms together.
const MaxFFTRank = 3

// FFTPlan is a library's plan.
type FFTPlan interface {
	Exec(in, out Buffer) error
	Destroy() error
}
