package opencl

import (
	"fmt"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gpucache"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// The engine (internal/gpu) is written once for every GPU API; this file
// is how an OpenCL device serves it: gpu.Device over the OpenCL calls.

// maxLocalBytes caps the local memory a direct tile may declare: what
// every GPU offers a work-group, whatever more a device reports (PoCL
// reports 1 MiB of emulated local memory).
const maxLocalBytes = 48 << 10

// limitsOf are a device's bounds on launches: OpenCL has no group-count
// limit of its own below size_t, and passes weights in buffers.
func limitsOf(info Info) gpu.Limits {
	return gpu.Limits{MaxLocalBytes: int(min(info.LocalMemory, maxLocalBytes)), MaxGroupsYZ: 1 << 30, FFTBudget: fftconv.DefaultBudget}
}

// memoryBudget is 70% of the device's memory, or what its largest
// allocation allows for that many buffers if less.
func memoryBudget(info Info, buffers int) int64 {
	budget := info.GlobalMemory / 10 * 7
	if info.MaxAlloc > 0 {
		budget = min(budget, info.MaxAlloc*int64(buffers))
	}
	return budget
}

// OpenEngineDevice opens opencl:platform:device as the engine's device;
// its Close balances the Open.
func OpenEngineDevice(platform, device int) (gpu.Device, error) {
	d, err := Open(platform, device)
	return gpu.Value[gpu.Device](engineDevice{d}, err)
}

// engineDevice is a Device as gpu.Device.
type engineDevice struct{ *Device }

var (
	_ gpu.Device = engineDevice{}
	_ gpu.Queue  = (*Queue)(nil)
	_ gpu.Event  = (*Event)(nil)
)

func (engineDevice) Backend() string      { return "opencl" }
func (d engineDevice) Limits() gpu.Limits { return limitsOf(d.info) }

func (d engineDevice) MemoryBudget(buffers int) (int64, error) {
	return memoryBudget(d.info, buffers), nil
}

// Check refuses a problem that accumulates in float64 on a device without
// cl_khr_fp64.
func (d engineDevice) Check(p *nd.Problem) error {
	if p.Wide && !d.info.FP64 {
		return fp64Error(d.info)
	}
	return nil
}

func (d engineDevice) Alloc(n int) (gpu.Buffer, error) {
	return gpu.Value[gpu.Buffer](d.Device.Alloc(n))
}

func (d engineDevice) Scratch(n int) (gpu.Buffer, error) { return d.Alloc(n) }

// AllocHost maps a buffer allocated in host memory (CL_MEM_ALLOC_HOST_PTR):
// OpenCL's pinned memory, mapped on the device's own queue.
// Staging comes from the device's free list of mapped buffers (see
// gpu.FreeList), sized by class and handed out as a prefix.
func (d engineDevice) AllocHost(n int) (gpu.HostBuffer, error) {
	if n <= 0 {
		return nil, &RangeError{Backend: "opencl", Op: "AllocHost", Length: n}
	}
	h, _, err := d.hostFree.Get(n, func(class int) (*HostBuffer, error) {
		q, err := d.hostQueue()
		if err != nil {
			return nil, err
		}
		return d.Device.AllocHost(q, class)
	})
	if err != nil {
		return nil, err
	}
	return &pooledHost{h: h, n: n, list: d.hostFree}, nil
}

// pooledHost is n bytes of a mapped buffer of a size class, which Free
// returns to the list it came from (or frees where the list is full).
type pooledHost struct {
	h    *HostBuffer
	n    int
	list *gpu.FreeList[*HostBuffer]
}

func (p *pooledHost) Bytes() []byte {
	if p.h == nil {
		return nil
	}
	return p.h.Bytes()[:p.n]
}

func (p *pooledHost) Free() error {
	h := p.h
	if h == nil {
		return nil
	}
	p.h = nil
	if p.list.Put(h, h.Size()) {
		return nil
	}
	return h.Free()
}

func (d engineDevice) NewQueue() (gpu.Queue, error) { return gpu.Value[gpu.Queue](d.Device.NewQueue()) }

func (d engineDevice) NewEvent() (gpu.Event, error) { return &Event{dev: d.Device}, nil }

// Kernel builds the family's source through the program cache.
func (d engineDevice) Kernel(family string, defines []string, name string) (gpu.Kernel, error) {
	src, err := kernels.Source(family)
	if err != nil {
		return nil, err
	}
	prog, err := d.Program(src, family, defines)
	if err != nil {
		return nil, err
	}
	k, err := prog.Kernel(name)
	if err != nil {
		return nil, err
	}
	return k, nil
}

// CheckLaunch refuses a launch the device cannot run: float64
// accumulation without cl_khr_fp64, a work-group larger than the kernel or
// device allows, more local or constant memory than the device has.
func (d engineDevice) CheckLaunch(l *kernels.Launch, k gpu.Kernel) error {
	info := d.info
	if l.Wide && !info.FP64 {
		return fp64Error(info)
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

func (d engineDevice) Missing(launches []*kernels.Launch) (int, error) {
	return missing(d.info, launches)
}

// Planner is opencl:platform:device as the engine plans for it, without
// opening it: what Pending asks.
func Planner(platform, device int) (gpu.Planner, error) {
	infos, err := Devices()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(infos, func(i Info) bool { return i.Platform == platform && i.Device == device })
	if i < 0 {
		return nil, fmt.Errorf("opencl: no device opencl:%d:%d", platform, device)
	}
	return staticDevice{infos[i]}, nil
}

// staticDevice is a device not opened: its limits, memory and cache.
type staticDevice struct{ info Info }

func (staticDevice) Backend() string      { return "opencl" }
func (s staticDevice) Limits() gpu.Limits { return limitsOf(s.info) }

func (s staticDevice) MemoryBudget(buffers int) (int64, error) {
	return memoryBudget(s.info, buffers), nil
}

func (s staticDevice) Missing(launches []*kernels.Launch) (int, error) {
	return missing(s.info, launches)
}

// missing counts the launches whose programs are neither built on the
// device (where it is open) nor in the program store.
func missing(info Info, launches []*kernels.Launch) (int, error) {
	var built *programCache // nil: no device open, nothing in memory
	if d, ok := registry.Lookup([2]int{info.Platform, info.Device}); ok {
		built = &d.programs
	}
	keys := make([]gpucache.Key, 0, len(launches))
	for _, l := range launches {
		src, err := kernels.Source(l.Family)
		if err != nil {
			return 0, err
		}
		options, err := buildOptions(l.Defines)
		if err != nil {
			return 0, err
		}
		keys = append(keys, programKeyOf(src, options, info))
	}
	return built.Missing(programStore, keys), nil
}

func fp64Error(info Info) error {
	return &UnsupportedError{Backend: "opencl", What: "float64 arithmetic", Value: "on " + info.Spec() + " (" + info.Name + ")",
		Reason: "the device lacks cl_khr_fp64, and this problem accumulates in float64 (float64 or int32 data, or a float64 output); use another device or float32 data"}
}

// pinnedRanges are the host ranges of a device's mapped HostBuffers: a
// copy from or to them is asynchronous, any other waits (gpu.Queue).
type pinnedRanges struct {
	mu     sync.Mutex
	ranges [][2]uintptr
}

func (p *pinnedRanges) add(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	p.ranges = append(p.ranges, [2]uintptr{lo, lo + uintptr(len(b))})
}

func (p *pinnedRanges) remove(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	p.ranges = slices.DeleteFunc(p.ranges, func(r [2]uintptr) bool { return r[0] == lo })
}

// holds reports whether b lies inside one mapped range.
func (p *pinnedRanges) holds(b []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	hi := lo + uintptr(len(b))
	return slices.ContainsFunc(p.ranges, func(r [2]uintptr) bool { return r[0] <= lo && hi <= r[1] })
}

// hostQueue is the device's queue for mapping and unmapping HostBuffers,
// made on first use and released with the device.
func (d *Device) hostQueue() (*Queue, error) {
	d.hostQ.mu.Lock()
	defer d.hostQ.mu.Unlock()
	if d.hostQ.q != nil {
		return d.hostQ.q, nil
	}
	q, err := d.NewQueue()
	if err != nil {
		return nil, err
	}
	d.hostQ.q = q
	return q, nil
}

// The gpu.Queue methods of a Queue.

// Launch queues kernel k (a *Kernel) over groups × local work-items.
func (q *Queue) Launch(k gpu.Kernel, groups, local [3]int, args ...any) error {
	var global [3]int
	for i := range 3 {
		global[i] = groups[i] * local[i]
	}
	ev, err := k.(*Kernel).Enqueue(q, global, local, args...)
	if err != nil {
		return err
	}
	return ev.Release()
}

// Write copies src into dst: asynchronously from a HostBuffer's memory,
// else before it returns.
func (q *Queue) Write(dst gpu.Buffer, off int, src []byte) error {
	b := dst.(*Buffer)
	if len(src) == 0 || !q.dev.pinned.holds(src) {
		return b.Write(q, off, src)
	}
	if off < 0 || off+len(src) > b.size {
		return &RangeError{Backend: "opencl", Op: "Write", Offset: off, Length: len(src), Size: b.size}
	}
	return q.dev.do(func() error {
		ev, err := clEnqueueWriteBufferAsync(q.h, b.h, off, unsafe.Pointer(&src[0]), len(src), nil)
		if err != nil {
			return err
		}
		return clReleaseEvent(ev)
	})
}

// Read copies src into dst: asynchronously into a HostBuffer's memory,
// else before it returns.
func (q *Queue) Read(dst []byte, src gpu.Buffer, off int) error {
	b := src.(*Buffer)
	if len(dst) == 0 || !q.dev.pinned.holds(dst) {
		return b.Read(q, dst, off)
	}
	if off < 0 || off+len(dst) > b.size {
		return &RangeError{Backend: "opencl", Op: "Read", Offset: off, Length: len(dst), Size: b.size}
	}
	return q.dev.do(func() error {
		ev, err := clEnqueueReadBufferAsync(q.h, b.h, off, unsafe.Pointer(&dst[0]), len(dst), nil)
		if err != nil {
			return err
		}
		return clReleaseEvent(ev)
	})
}

func (q *Queue) Copy(dst gpu.Buffer, dstOff int, src gpu.Buffer, srcOff, n int) error {
	return src.(*Buffer).CopyTo(q, dst.(*Buffer), dstOff, srcOff, n)
}

func (q *Queue) Fill(dst gpu.Buffer, off, n int, value byte) error {
	b := dst.(*Buffer)
	if off < 0 || n < 0 || off+n > b.size {
		return &RangeError{Backend: "opencl", Op: "Fill", Offset: off, Length: n, Size: b.size}
	}
	if n == 0 {
		return nil
	}
	return q.dev.do(func() error { return clEnqueueFillBuffer(q.h, b.h, value, off, n) })
}

// Record makes ev (an *Event) a marker of the work queued so far.
func (q *Queue) Record(ev gpu.Event) error {
	e := ev.(*Event)
	return q.dev.do(func() error {
		h, err := clEnqueueMarker(q.h)
		if err != nil {
			return err
		}
		if e.h != 0 {
			clReleaseEvent(e.h)
		}
		e.h = h
		return nil
	})
}

// Wait makes the work queued after it wait for ev (a barrier).
func (q *Queue) Wait(ev gpu.Event) error {
	e := ev.(*Event)
	if e.h == 0 {
		return nil
	}
	return q.dev.do(func() error { return clEnqueueBarrier(q.h, e.h) })
}

// Synchronize waits for the event's work (gpu.Event).
func (e *Event) Synchronize() error {
	if e.h == 0 {
		return nil
	}
	return e.Wait()
}

// Since is the device time from start's end to e's, from the profiling
// counters (gpu.Event).
func (e *Event) Since(start gpu.Event) (time.Duration, error) {
	_, from, err := start.(*Event).Times()
	if err != nil {
		return 0, err
	}
	_, to, err := e.Times()
	if err != nil {
		return 0, err
	}
	return time.Duration(int64(to - from)), nil
}

// Close releases the event (gpu.Event).
func (e *Event) Close() error { return e.Release() }

// MaxGroupSize is the most work-items a group of k may have on its device
// (gpu.Kernel).
func (k *Kernel) MaxGroupSize() int { return k.maxWorkGroup }

// TestBuilds sets how d builds programs for a test suite on PoCL, whose
// cold builds of hundreds of specialisations bound CI's time
// (docs/perf/ci-time.md): withoutBinaries fetches no binary (so nothing
// reaches the disk cache: PoCL compiles every kernel a second time to
// give one), unoptimised builds with -cl-opt-disable (the same bits: the
// kernels keep FP_CONTRACT off and round through fma() alone). It returns
// the settings it replaced. The product never calls it.
func (d *Device) TestBuilds(withoutBinaries, unoptimised bool) (wasWithout, wasUnoptimised bool) {
	return d.withoutBinaries.Swap(withoutBinaries), d.unoptimised.Swap(unoptimised)
}

// MeasureRoofline measures opencl:platform:device's copy bandwidth and
// FMA peak (gpu.MeasureRoofline) over 1 GiB, its largest buffer or a
// quarter of its memory, whichever is least.
func MeasureRoofline(platform, device, repeats int) (Info, gpu.Roofline, error) {
	d, err := Open(platform, device)
	if err != nil {
		return Info{}, gpu.Roofline{}, err
	}
	defer d.Close()
	info := d.info
	size := min(int64(1)<<30, info.MaxAlloc, info.GlobalMemory/4)
	r, err := gpu.MeasureRoofline(engineDevice{d}, info.ComputeUnits, size, repeats)
	return info, r, err
}
