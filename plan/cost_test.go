package plan

import (
	"github.com/ndconv/ndconv/opencl"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/nd"
)

// fakeGPU are round rates that make the arithmetic checkable by hand.
var fakeGPU = GPURates{
	DriverSeconds:        0.1,
	ContextSeconds:       0.3,
	CompileSeconds:       0.2,
	CallSeconds:          0.001,
	ProcessSeconds:       0.25,
	FFTScale:             0.5,
	FFTScaleN:            2,
	HtoDBytesPerSecond:   10e9,
	DtoHBytesPerSecond:   20e9,
	StagedBytesPerSecond: 2e9,
	KernelMaddsPerSecond: 1e12,
	DeviceBytesPerSecond: 1e12,
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestGPUEstimate: each part of a GPU estimate from fake rates.
func TestGPUEstimate(t *testing.T) {
	w := gpuWork{Method: Direct, Cost: 2e12, InBytes: 4e9, OutBytes: 2e9, StartLeft: 0.25, PendingCompiles: 2}
	e := gpuEstimate(Device{Kind: "cuda"}, w, fakeGPU)
	// Copies: staged (6e9 / 2e9 = 3 s) is slower than pinned (0.4 + 0.1).
	// Kernel: 2e12 madds at 1e12 = 2 s beats 6e9 bytes at 1e12, plus the call.
	if !near(e.Start, 0.25) || !near(e.Compile, 0.4) || e.Compiles != 2 || !near(e.Copies, 3) || !near(e.Kernel, 2.001) || !near(e.Seconds(), 5.651) {
		t.Errorf("estimate %+v", e)
	}
	r := fakeGPU
	r.StagedBytesPerSecond = 1e12 // the pinned rates bound the copies
	if e := gpuEstimate(Device{Kind: "cuda"}, w, r); !near(e.Copies, 4e9/10e9+2e9/20e9) {
		t.Errorf("copies %v, want the pinned rates'", e.Copies)
	}
	w.Cost = 1 // a copy-bound kernel: its bytes at the device's rate
	if e := gpuEstimate(Device{Kind: "cuda"}, w, fakeGPU); !near(e.Kernel, 0.001+6e9/1e12) {
		t.Errorf("kernel %v", e.Kernel)
	}
}

// TestCPUEstimate: the measured rate scaled to the workers used.
func TestCPUEstimate(t *testing.T) {
	r := CPURates{MaddsPerSecond: 4e9 * float64(runtime.NumCPU()), Cores: runtime.NumCPU()}
	if e := cpuEstimate(Direct, 8e9, 1e9, r, 0); !near(e.Seconds(), 2/float64(runtime.NumCPU())) || e.Start+e.Compile+e.Copies+e.Memory != 0 {
		t.Errorf("all cores, no touch rate: %+v", e)
	}
	if e := cpuEstimate(Direct, 8e9, 0, r, 1); !near(e.Seconds(), 2) {
		t.Errorf("one worker: %v s, want 2", e.Seconds())
	}
	r.TouchBytesPerSecond = 0.5e9 // a gigabyte of fresh memory: 2 s more
	if e := cpuEstimate(Direct, 8e9, 1e9, r, 1); !near(e.Memory, 2) || !near(e.Seconds(), 4) || e.String() != "cpu 4000 ms est. (memory 2000, compute 2000)" {
		t.Errorf("with fresh memory: %+v, %q", e, e.String())
	}
}

// TestStartLeft: nothing once open; the context once the driver is up;
// during a Prewarm only what has not yet elapsed.
func TestStartLeft(t *testing.T) {
	for _, tc := range []struct {
		open, warming bool
		elapsed, want float64
	}{
		{true, false, 0, 0},
		{false, false, 0, 0.3},
		{false, true, 0, 0.3},   // just started: the context still to come (Available ran)
		{false, true, 0.2, 0.2}, // the driver's 0.1 s and 0.1 s of the context done
		{false, true, 5, 0},
	} {
		if got := startLeft(fakeGPU, tc.open, tc.warming, tc.elapsed); !near(got, tc.want) {
			t.Errorf("open %v warming %v after %v s: %v left, want %v", tc.open, tc.warming, tc.elapsed, got, tc.want)
		}
	}
}

// TestChoice: the GPU wins exactly when the whole call is faster there:
// a small image loses to the context's creation, the same image on a warm
// GPU with its kernel cached wins, a large one wins even cold; the line
// names every part.
func TestChoice(t *testing.T) {
	cpuRates := CPURates{MaddsPerSecond: 50e9, Cores: runtime.NumCPU()}
	choice := func(pixels, taps float64, startLeft float64, compiles int) Choice {
		cost := pixels * taps
		return Choice{Compared: true,
			CPU: cpuEstimate(Direct, cost, 4*pixels, cpuRates, 0),
			GPU: gpuEstimate(Device{Kind: "cuda"}, gpuWork{Method: Direct, Cost: cost, InBytes: 4 * pixels, OutBytes: 4 * pixels,
				StartLeft: startLeft, PendingCompiles: compiles}, fakeGPU)}
	}
	if c := choice(512*512, 51, 0.3, 1); c.GPUFaster() {
		t.Errorf("a small image went to a cold GPU: %v", c)
	}
	if c := choice(8192*8192, 51, 0.3, 1); c.GPUFaster() {
		t.Errorf("8192² 7×7: 68 ms of CPU against 0.5 s of start and 0.27 s of copies: %v", c)
	}
	if c := choice(8192*8192, 51*16, 0, 0); !c.GPUFaster() {
		t.Errorf("a heavy problem stayed on the CPU: %v", c)
	}
	if c := choice(512*512, 51, 0, 0); c.GPUFaster() {
		t.Errorf("a tiny problem went to a warm GPU: %v", c)
	}
	c := choice(2048*2048, 51, 0.3, 1)
	line := c.String()
	for _, part := range []string{"auto: cpu ", " ms est. vs cuda:0 ", "context 300, compile 200, copies 17, kernel 1.2)"} {
		if !strings.Contains(line, part) {
			t.Errorf("%q lacks %q", line, part)
		}
	}
	if strings.Contains(line, "\n") {
		t.Errorf("%q is not one line", line)
	}
}

// TestAutoReadsMeasuredRates: auto's CPU estimate comes from the tuning
// cache where it holds one, and a problem below any GPU's floor never
// looks for a GPU.
func TestAutoReadsMeasuredRates(t *testing.T) {
	spec := dense([]int{64, 64}, 9)
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	dev, c := autoDevice(p, Options{NoTuningCache: true})
	if dev.Kind != "cpu" || c.Compared || !strings.Contains(c.Reason, "below any GPU's copies and kernel") {
		t.Errorf("a tiny problem: %v, %v", dev, c)
	}
	cache, _ := OpenTuningCache("")
	cache.StoreCPURates(CPURates{MaddsPerSecond: 1e3, Cores: runtime.NumCPU()}) // a very slow CPU
	dev, c = autoDevice(p, Options{TuningCache: cache})
	if strings.Contains(c.Reason, "below") {
		t.Errorf("at 1000 multiply-adds per second the GPU's floor is lower, yet: %v", c)
	}
	if hasGPU() {
		if dev.Kind == "cpu" || !c.GPUFaster() {
			t.Errorf("at 1000 multiply-adds per second the CPU won: %v", c)
		}
	} else if dev.Kind != "cpu" || !strings.Contains(c.Reason, "no usable GPU") {
		t.Errorf("no GPU here, yet: %v, %v", dev, c)
	}
}

func hasGPU() bool { _, ok := usableGPU(); return ok }

// TestRatesRoundTrip: measured rates survive Save and OpenTuningCache; a
// file from before rates were stored reads as none measured; rates fill
// their unmeasured fields from the defaults.
func TestRatesRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tuning.json")
	c, err := OpenTuningCache(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.CPURates(); ok {
		t.Error("an empty cache has CPU rates")
	}
	cpuWant := CPURates{MaddsPerSecond: 123e9, Cores: 7, TouchBytesPerSecond: 2e9}
	c.StoreCPURates(cpuWant)
	c.gpus["cuda NVIDIA H100 sm_90 driver 13.0"] = fakeGPU // StoreGPURates needs the device
	if err := c.StoreGPURates(Device{Kind: "cpu"}, fakeGPU); err == nil {
		t.Error("stored GPU rates for the CPU")
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	again, err := OpenTuningCache(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := again.CPURates(); !ok || got != cpuWant {
		t.Errorf("CPU rates %+v, %v", got, ok)
	}
	if got := again.gpus["cuda NVIDIA H100 sm_90 driver 13.0"]; got != fakeGPU {
		t.Errorf("GPU rates %+v", got)
	}
	if got := (machineRates{again}).cpu(); got != cpuWant {
		t.Errorf("auto reads CPU rates %+v", got)
	}
	again.StoreCPURates(CPURates{MaddsPerSecond: 1e9, Cores: 1}) // measured before the touch rate
	if got := (machineRates{again}).cpu(); got.TouchBytesPerSecond != defaultTouchBytesPerSecond || got.MaddsPerSecond != 1e9 {
		t.Errorf("an older measurement: %+v", got)
	}
	if rs := (machineRates{again}).allGPUs(); len(rs) != 2 || rs[1] != fakeGPU {
		t.Errorf("every GPU's rates: %+v", rs)
	}
	partial := GPURates{ContextSeconds: 0.05}.orDefault(DefaultGPURates)
	if partial.ContextSeconds != 0.05 || partial.CompileSeconds != DefaultGPURates.CompileSeconds {
		t.Errorf("partial rates %+v", partial)
	}
	if got := (machineRates{}).cpu(); got != DefaultCPURates() {
		t.Errorf("no cache: %+v", got)
	}
}

// TestChoiceRecorded: a plan auto placed says why; one whose device was
// named has no choice.
func TestChoiceRecorded(t *testing.T) {
	p, err := (&nd.Spec{Shape: []int{32, 32}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3, 3}, Weights: []float64{1, 2, 1, 2, 4, 2, 1, 2, 1}}}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(p, Options{NoTuningCache: true})
	if err != nil {
		t.Fatal(err)
	}
	if s := e.Choice.String(); !strings.HasPrefix(s, "auto: ") || e.Choice.Reason == "" && !e.Choice.Compared {
		t.Errorf("auto's choice %q", s)
	}
	if e, _ = New(p, Options{Device: Device{Kind: "cpu"}}); e.Choice != (Choice{}) {
		t.Errorf("a named device has a choice: %+v", e.Choice)
	}
}

// TestAutoComparesWholeCalls: given a GPU (a stand-in: no backend is asked
// to run anything), auto puts a problem there exactly when the estimate of
// the whole call is lower — with a slow CPU measured, not with a faster one —
// counting the context's creation and one compilation (what a backend that
// cannot look in its cache counts) at the default rates.
func TestAutoComparesWholeCalls(t *testing.T) {
	defer func(f func() (Device, bool)) { usableGPU = f }(usableGPU)
	usableGPU = func() (Device, bool) { return Device{Kind: "cuda"}, true }
	spec := dense([]int{1024, 1024}, 49)
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	cache, _ := OpenTuningCache("")
	cache.StoreCPURates(CPURates{MaddsPerSecond: 1e7, Cores: runtime.NumCPU(), TouchBytesPerSecond: 1e12})
	dev, c := autoDevice(p, Options{TuningCache: cache})
	if dev.Kind != "cuda" || !c.Compared || !c.GPUFaster() {
		t.Fatalf("a slow CPU: %v, %v", dev, c)
	}
	if c.GPU.Compile != float64(c.GPU.Compiles)*DefaultGPURates.CompileSeconds || c.GPU.Method != Direct {
		t.Errorf("the GPU's estimate %+v", c.GPU)
	}
	if cuda.Available() != nil && (c.GPU.Start != DefaultGPURates.ContextSeconds+DefaultGPURates.ProcessSeconds || c.GPU.Compiles != 1) {
		t.Errorf("no backend to ask: the GPU's estimate %+v, want a context, a first plan's set-up and one compilation", c.GPU)
	}
	cache.StoreCPURates(CPURates{MaddsPerSecond: 1e9, Cores: runtime.NumCPU(), TouchBytesPerSecond: 1e12})
	// 54 ms on the CPU against 625 ms for a cold GPU (where CUDA is here
	// and warm, its estimate may be lower: auto must follow it either way).
	dev, c = autoDevice(p, Options{TuningCache: cache})
	if !c.Compared || (dev.Kind == "cuda") != (c.GPU.Seconds() < c.CPU.Seconds()) {
		t.Errorf("a faster CPU: %v, %v", dev, c)
	}
	if cuda.Available() != nil && dev.Kind != "cpu" {
		t.Errorf("a faster CPU lost to a cold GPU: %v", c)
	}
	// Faster still: below the GPU's copies and kernel alone, the GPU is
	// not even looked at.
	cache.StoreCPURates(CPURates{MaddsPerSecond: 1e12, Cores: runtime.NumCPU(), TouchBytesPerSecond: 1e12})
	if dev, c = autoDevice(p, Options{TuningCache: cache}); dev.Kind != "cpu" || c.Compared || !strings.Contains(c.Reason, "below any GPU's") {
		t.Errorf("a very fast CPU: %v, %v", dev, c)
	}
}

// TestFirstPlan: a process's first plan on a GPU pays ProcessSeconds, a
// later one does not.
func TestFirstPlan(t *testing.T) {
	dev := Device{Kind: "cuda", Index: 7}
	w := gpuWork{Method: Direct, Cost: 1e9, InBytes: 1e6, OutBytes: 1e6, StartLeft: 0.1, FirstPlan: firstPlan(dev)}
	if got := gpuEstimate(dev, w, fakeGPU).Start; got != 0.1+fakeGPU.ProcessSeconds {
		t.Errorf("first plan: start %v", got)
	}
	markPlanned(dev)
	defer planned.Delete(dev)
	w.FirstPlan = firstPlan(dev)
	if got := gpuEstimate(dev, w, fakeGPU).Start; got != 0.1 {
		t.Errorf("a later plan: start %v", got)
	}
}

// TestFFTScale: AddFFTScale keeps the geometric mean of the workloads'
// scales; an unmeasured device gets the default; auto weighs the GPU's FFT
// by it.
func TestFFTScale(t *testing.T) {
	var r GPURates
	r.AddFFTScale(1, 2, 1, 1) // FFT half as fast per unit: 0.5
	r.AddFFTScale(2, 1, 1, 1) // twice: 2
	if math.Abs(r.FFTScale-1) > 1e-12 || r.FFTScaleN != 2 {
		t.Errorf("mean of 0.5 and 2: %v over %d", r.FFTScale, r.FFTScaleN)
	}
	r.AddFFTScale(1, 0, 1, 1) // no cost: ignored
	if r.FFTScaleN != 2 {
		t.Errorf("an infinite scale counted: %d", r.FFTScaleN)
	}
	if got := (GPURates{}).orDefault(DefaultGPURates).FFTScale; got != DefaultGPURates.FFTScale {
		t.Errorf("default scale %v", got)
	}
}

// TestFFTScaleChoosesMethod: on a GPU, auto's choice between the FFT and
// the direct method follows the device's measured FFTScale, with the
// smaller margin once the scale is calibrated on enough workloads.
func TestFFTScaleChoosesMethod(t *testing.T) {
	if opencl.Available() != nil {
		t.Skip("no OpenCL device to identify")
	}
	spec := dense([]int{256, 256}, 31*31)
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	dev := ResolveOpenCL()
	// between is a scale at which the FFT looks 1.35× cheaper than the
	// direct method: enough under a calibrated scale's margin, not under
	// the default one.
	between := DirectCost(p) / FFTCost(p) / 1.35
	for _, c := range []struct {
		scale float64
		n     int
		want  Method
	}{{0.01, 0, FFT}, {1000, 0, Direct}, {between, 0, Direct}, {between, calibratedFFTWorkloads - 1, Direct}, {between, calibratedFFTWorkloads, FFT}} {
		cache, _ := OpenTuningCache("")
		if err := cache.StoreGPURates(dev, GPURates{FFTScale: c.scale, FFTScaleN: c.n}); err != nil {
			t.Skip(err)
		}
		opt := Options{Device: dev, TuningCache: cache}
		best, _, err := choose(p, dev.Kind, opt)
		if err != nil {
			t.Fatal(err)
		}
		if best.Method != c.want {
			t.Errorf("FFTScale %v over %d workloads: %v, want %v", c.scale, c.n, best.Method, c.want)
		}
	}
}
