package plan

import (
	"fmt"
	"math"
	"runtime"
)

// The device choice: auto runs a problem on the GPU exactly when the whole
// call is estimated faster there. Both estimates are in seconds, from the
// implementations' costs (in multiply-adds, Implementation.Cost) and the
// machine's rates: measured by `ndconv tune` into the tuning cache where it
// ran, else the defaults below. This file is the one place for that
// arithmetic.
//
//	CPU:  cost / CPU rate (scaled to the workers used)
//	    + memory  (the output and the method's temporaries, touched for the
//	               first time: on a VM a page fault costs microseconds)
//	GPU:  start (what remains of loading the driver and creating the context)
//	    + compile (each kernel module in neither the process nor the disk cache)
//	    + copies  (input in and output out at the measured transfer rates,
//	               end to end from a cold call: staging and the output's
//	               first touch included)
//	    + kernel  (cost at the kernel rate, or the bytes at the device's
//	               copy rate where that is longer, plus the call's fixed cost)

// CPURates is what the CPU engine sustains, measured on tune's standard
// problem (MeasureCPURates).
type CPURates struct {
	// MaddsPerSecond is the engine's rate with Cores goroutines, in the
	// units of Implementation.Cost.
	MaddsPerSecond float64 `json:"madds_per_second"`
	Cores          int     `json:"cores"`
	// TouchBytesPerSecond is the rate at which fresh host memory is
	// written for the first time (page faults).
	TouchBytesPerSecond float64 `json:"touch_bytes_per_second,omitempty"`
}

// GPURates is what a GPU and its host sustain, measured by
// MeasureGPURates; times in seconds, rates per second.
type GPURates struct {
	// DriverSeconds is a fresh process's loading of the driver and
	// compiler libraries and cuInit; ContextSeconds its first Open (the
	// primary context). Auto counts what remains of them (Prewarm).
	DriverSeconds  float64 `json:"driver_seconds"`
	ContextSeconds float64 `json:"context_seconds"`
	// CompileSeconds is one kernel module compiled (NVRTC): the cost of
	// each specialisation the caches do not hold.
	CompileSeconds float64 `json:"compile_seconds"`
	// CallSeconds is an execution's fixed cost: streams, staging,
	// launches, synchronisation.
	CallSeconds float64 `json:"call_seconds"`
	// ProcessSeconds is what a process's first plan on the GPU costs
	// beyond start, compilation, copies and kernels, hidden neither by a
	// prewarm nor by an open context: the engine's set-up and the
	// teardown at exit (measured whole, not yet apart).
	ProcessSeconds float64 `json:"process_seconds"`
	// HtoD and DtoH are the pinned transfer rates; Staged the end-to-end
	// rate of a cold call from pageable host memory through the pinned
	// staging pieces and back into a fresh output, which the host's own
	// copies, the staging's allocation and the output's first touch bound.
	HtoDBytesPerSecond   float64 `json:"htod_bytes_per_second"`
	DtoHBytesPerSecond   float64 `json:"dtoh_bytes_per_second"`
	StagedBytesPerSecond float64 `json:"staged_bytes_per_second"`
	// KernelMaddsPerSecond is the direct kernels' rate on tune's standard
	// problem, in the units of Implementation.Cost; DeviceBytesPerSecond
	// the device memory's copy rate (bytes read plus written).
	KernelMaddsPerSecond float64 `json:"kernel_madds_per_second"`
	DeviceBytesPerSecond float64 `json:"device_bytes_per_second"`
	// FFTScale calibrates FFTCost (a model of the CPU engine's FFT) on
	// this GPU: the FFT method's measured time per FFTCost unit over the
	// direct method's per DirectCost unit, the geometric mean over the
	// FFTScaleN workloads `ndconv tune --method fft` measured. Auto weighs
	// the FFT method at FFTCost·FFTScale.
	FFTScale  float64 `json:"fft_scale,omitempty"`
	FFTScaleN int     `json:"fft_scale_n,omitempty"`
}

// AddFFTScale folds one workload's measured scale (fftMs/fftCost over
// directMs/directCost) into r's geometric mean.
func (r *GPURates) AddFFTScale(fftMs, fftCost, directMs, directCost float64) {
	s := (fftMs / fftCost) / (directMs / directCost)
	if !(s > 0) || math.IsInf(s, 0) {
		return
	}
	if r.FFTScale <= 0 || r.FFTScaleN <= 0 {
		r.FFTScale, r.FFTScaleN = s, 1
		return
	}
	n := float64(r.FFTScaleN)
	r.FFTScale = math.Exp((n*math.Log(r.FFTScale) + math.Log(s)) / (n + 1))
	r.FFTScaleN++
}

// Defaults where nothing is measured.
//
// The CPU: the SIMD engine's direct method on 2048² float32 7×7 ran at
// 82 G multiply-adds per second in DirectCost's units on the 2-core AVX-512
// development VM (`ndconv bench --device cpu --shape 2048,2048 --kernel 7x7`,
// 2.62 ms, 2026-11-25, a shared machine: 3×3 gives 21, 15×15 56 per core),
// so about 40 G per core. Fresh host memory is first written at about 10
// GB/s on the H100 host (scripts/check-auto.sh, 2026-11-25: the CPU's
// 8192² calls took 8–36 ms beyond their multiply-adds for 64–576 MB of
// output and temporaries), a cost a one-shot call pays; the development
// VM pays far more (0.33 GB/s, 3 µs a 4 KiB page), which `ndconv tune
// --rates --device cpu` measures.
//
// FFTScale 0.70: the geometric mean of three H100 workloads, FFT against
// the direct method (bench/results/2026-11-25-h100-v5), the FFT times
// those of session 38's untuned lengths (bench/results/2026-11-28-h100-s38,
// call 3): 8192² 31×31 1.52 against 4.39 ms: 0.64; 2²⁸ 1023 taps 4.37
// against 20.4: 0.53; 512³ 7³ 5.21 against 2.58: 1.03 (4.76 with the
// powers of two of call 4 would make 0.68; the A/B ran 0.70).
//
// The GPU: the H100 host (bench/results/2026-11-25-h100-v4 and issue 16):
// a CLI call spends ~350 ms creating the CUDA context and 200–340 ms of
// NVRTC per new specialisation; pinned copies run at 54.3 GB/s in and 55.0
// out, but end to end from pageable memory through the staging pieces a
// one-shot call moved 2.5 GB/s; the direct kernels ran 8192² float32 7×7
// in 0.275 ms (12.4 T multiply-adds per second in DirectCost's units) and
// the device copies 2831 GB/s; about 2 ms of fixed cost per call. The
// driver's own start (loading libcuda and NVRTC, cuInit) was not timed
// apart from the context's: 0.1 s is a guess until `ndconv tune` measures
// it. Beyond all that, each one-shot CLI call on the GPU took 0.31–0.37 s
// more than its read, computation and write, with the prewarm done and
// the kernel cache warm (scripts/check-auto.sh, 2026-11-25: 512² 3×3 314
// ms against 9 on the CPU; 8192² calls 324–365 ms over their parts):
// ProcessSeconds 0.3.
const (
	defaultCPUMaddsPerCorePerSecond = 40e9
	defaultTouchBytesPerSecond      = 10e9
)

// DefaultGPURates are the H100 host's figures above; OpenCL GPUs get them
// too until tuned.
var DefaultGPURates = GPURates{
	DriverSeconds:        0.1,
	ContextSeconds:       0.35,
	CompileSeconds:       0.27,
	CallSeconds:          2e-3,
	ProcessSeconds:       0.3,
	HtoDBytesPerSecond:   54.3e9,
	DtoHBytesPerSecond:   55.0e9,
	StagedBytesPerSecond: 2.5e9,
	KernelMaddsPerSecond: 12.4e12,
	DeviceBytesPerSecond: 2831e9,
	FFTScale:             0.70,
}

// DefaultCPURates is the development VM's per-core rate on every core here.
func DefaultCPURates() CPURates {
	n := runtime.NumCPU()
	return CPURates{MaddsPerSecond: defaultCPUMaddsPerCorePerSecond * float64(n), Cores: n, TouchBytesPerSecond: defaultTouchBytesPerSecond}
}

// orDefault fills each unmeasured (zero) rate from d.
func (r GPURates) orDefault(d GPURates) GPURates {
	for _, f := range []struct{ v, def *float64 }{
		{&r.DriverSeconds, &d.DriverSeconds}, {&r.ContextSeconds, &d.ContextSeconds},
		{&r.CompileSeconds, &d.CompileSeconds}, {&r.CallSeconds, &d.CallSeconds}, {&r.ProcessSeconds, &d.ProcessSeconds},
		{&r.HtoDBytesPerSecond, &d.HtoDBytesPerSecond}, {&r.DtoHBytesPerSecond, &d.DtoHBytesPerSecond},
		{&r.StagedBytesPerSecond, &d.StagedBytesPerSecond}, {&r.KernelMaddsPerSecond, &d.KernelMaddsPerSecond},
		{&r.DeviceBytesPerSecond, &d.DeviceBytesPerSecond}, {&r.FFTScale, &d.FFTScale},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return r
}

// Estimate is the time a call is expected to take on a device, by part,
// in seconds: Start, Compile and Copies are zero on the CPU.
type Estimate struct {
	Device   Device
	Method   Method
	Memory   float64 // the CPU's first touch of its output and temporaries
	Start    float64 // what remains of loading the driver and creating the context (and a first plan's ProcessSeconds)
	Compile  float64 // Compiles kernel modules the caches do not hold
	Compiles int
	Copies   float64 // host to device and back
	Kernel   float64 // the computation, with the call's fixed cost on a GPU
}

// Seconds is the whole estimate.
func (e Estimate) Seconds() float64 { return e.Memory + e.Start + e.Compile + e.Copies + e.Kernel }

// String reads "cpu 42 ms est. (memory 30, compute 12)" or, on a GPU,
// "cuda:0 410 ms est. (context 350, compile 0, copies 40, kernel 2)".
func (e Estimate) String() string {
	s := fmt.Sprintf("%v %s ms est.", e.Device, msNumber(e.Seconds()))
	if !e.Device.GPU() {
		if e.Memory == 0 {
			return s
		}
		return fmt.Sprintf("%s (memory %s, compute %s)", s, msNumber(e.Memory), msNumber(e.Kernel))
	}
	return fmt.Sprintf("%s (context %s, compile %s, copies %s, kernel %s)", s,
		msNumber(e.Start), msNumber(e.Compile), msNumber(e.Copies), msNumber(e.Kernel))
}

// msNumber is seconds as milliseconds with about two significant digits.
func msNumber(s float64) string {
	ms := s * 1e3
	switch {
	case ms == 0:
		return "0"
	case ms < 10:
		return fmt.Sprintf("%.2g", ms)
	}
	return fmt.Sprintf("%.0f", ms)
}

// cpuEstimate is cost multiply-adds on workers of the CPU's cores (0: all),
// writing fresh bytes of host memory for the first time.
func cpuEstimate(m Method, cost, fresh float64, r CPURates, workers int) Estimate {
	cores := runtime.NumCPU()
	if workers > 0 && workers < cores {
		cores = workers
	}
	rate := r.MaddsPerSecond * float64(cores) / float64(max(r.Cores, 1))
	e := Estimate{Device: hostDevice(), Method: m, Kernel: cost / rate}
	if r.TouchBytesPerSecond > 0 {
		e.Memory = fresh / r.TouchBytesPerSecond
	}
	return e
}

// gpuWork is what a GPU estimate needs to know of the problem and the
// device's state.
type gpuWork struct {
	Method          Method
	Cost            float64 // multiply-adds
	InBytes         float64 // the input in host memory
	OutBytes        float64 // the output, with a bank's axis
	StartLeft       float64 // seconds of driver and context start still to come
	FirstPlan       bool    // the process's first plan on this GPU (ProcessSeconds)
	PendingCompiles int     // kernel modules the caches do not hold
}

// gpuEstimate is w on dev at rates r.
func gpuEstimate(dev Device, w gpuWork, r GPURates) Estimate {
	pinned := w.InBytes/r.HtoDBytesPerSecond + w.OutBytes/r.DtoHBytesPerSecond
	staged := (w.InBytes + w.OutBytes) / r.StagedBytesPerSecond
	start := w.StartLeft
	if w.FirstPlan {
		start += r.ProcessSeconds
	}
	return Estimate{
		Device:   dev,
		Method:   w.Method,
		Start:    start,
		Compiles: w.PendingCompiles,
		Compile:  float64(w.PendingCompiles) * r.CompileSeconds,
		Copies:   max(pinned, staged),
		Kernel:   r.CallSeconds + max(w.Cost/r.KernelMaddsPerSecond, (w.InBytes+w.OutBytes)/r.DeviceBytesPerSecond),
	}
}

// startLeft is what remains of starting a GPU: nothing once it is open;
// while a Prewarm runs, the driver and context time not yet elapsed, at
// most the context's (Available, done before auto compares, loaded the
// driver); else the context's.
func startLeft(r GPURates, open bool, warming bool, elapsed float64) float64 {
	switch {
	case open:
		return 0
	case warming:
		return min(r.ContextSeconds, max(0, r.DriverSeconds+r.ContextSeconds-elapsed))
	}
	return r.ContextSeconds
}

// Choice is why auto chose a device: the two estimates it compared, or
// the reason there was no comparison.
type Choice struct {
	CPU, GPU Estimate
	Compared bool
	Reason   string // where not Compared: "no usable GPU", …
}

// String is one line: "auto: cpu 42 ms est. vs cuda:0 410 ms est.
// (context 350, compile 0, copies 40, kernel 2)".
func (c Choice) String() string {
	if !c.Compared {
		return "auto: " + c.Reason
	}
	return "auto: " + c.CPU.String() + " vs " + c.GPU.String()
}

// GPUFaster reports whether the GPU's estimate is below the CPU's.
func (c Choice) GPUFaster() bool { return c.Compared && c.GPU.Seconds() < c.CPU.Seconds() }

// String reads "82 G multiply-adds/s on 2 cores, fresh memory 0.33 GB/s".
func (r CPURates) String() string {
	return fmt.Sprintf("%.3g G multiply-adds/s on %d cores, fresh memory %.3g GB/s", r.MaddsPerSecond/1e9, r.Cores, r.TouchBytesPerSecond/1e9)
}

// String names every rate, on one line.
func (r GPURates) String() string {
	return fmt.Sprintf("driver %s ms, context %s ms, first plan %s ms, compile %s ms per module, call %s ms, pinned %.3g/%.3g GB/s, end to end %.3g GB/s, kernel %.3g T multiply-adds/s, device copy %.4g GB/s",
		msNumber(r.DriverSeconds), msNumber(r.ContextSeconds), msNumber(r.ProcessSeconds), msNumber(r.CompileSeconds), msNumber(r.CallSeconds),
		r.HtoDBytesPerSecond/1e9, r.DtoHBytesPerSecond/1e9, r.StagedBytesPerSecond/1e9, r.KernelMaddsPerSecond/1e12, r.DeviceBytesPerSecond/1e9)
}
