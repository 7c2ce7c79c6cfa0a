package ndconv

import (
	"context"
	"time"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/plan"
)

// The entry points of measurement — `ndconv bench`, the tuner, any program
// that times ndconv — so that they reach the planner and the backends
// through the library: a plan made to be timed (BenchPlan), the pipeline's
// timeline (Span), and each device's roofline (MeasureRoofline).

// BenchOptions are how NewBenchPlan prepares a problem.
type BenchOptions struct {
	Device  DeviceName // the zero DeviceName is auto
	Method  Method
	Workers int // CPU goroutines; 0 means all cores
	// Tuning fixes the GPU kernels' work decomposition (one of
	// TuningCandidates); the zero Tuning takes the tuning cache's entry,
	// else the kernels' own choice. NoTuningCache reads no cache (the
	// tuner's baseline).
	Tuning        Tuning
	NoTuningCache bool
	// Timeline records, on a GPU, each execution from host memory chunk
	// by chunk: its copies in, kernels and copies out (BenchPlan.Timeline).
	Timeline bool
	// BankLayout Planar gives a bank output with its kernel axis first
	// (Options.BankLayout): Execute then times the transpose as well.
	BankLayout BankLayout
}

// BenchPlan is a normalized problem bound to a device and a method, as
// the bench and the tuner time it: from host memory (Execute) or on data
// already on the device (TimeOnDevice). Unlike Plan, it runs the planner's
// executable directly, with no streaming under a memory budget, so that
// the time measured is the engine's. Close it when done.
type BenchPlan struct {
	exec   *plan.Executable
	tl     *chunk.Timeline // nil unless BenchOptions.Timeline
	planar *planarBank     // BenchOptions.BankLayout Planar with a bank, else nil
}

// NewBenchPlan plans p (a normalized nd.Spec) with opt.
func NewBenchPlan(p *nd.Problem, opt BenchOptions) (*BenchPlan, error) {
	popt := plan.Options{Device: opt.Device.dev(), Method: opt.Method, Workers: opt.Workers,
		Tuning: opt.Tuning.t, NoTuningCache: opt.NoTuningCache}
	var tl *chunk.Timeline
	if opt.Timeline {
		tl = &chunk.Timeline{}
		popt.Timeline = tl
	}
	exec, planar, err := planBank(p, popt, opt.BankLayout, opt.Workers)
	if err != nil {
		return nil, err
	}
	return &BenchPlan{exec: exec, tl: tl, planar: planar}, nil
}

// Method is the method the plan runs (auto resolved).
func (b *BenchPlan) Method() Method { return b.exec.Method }

// Device is the device the plan runs on (auto resolved).
func (b *BenchPlan) Device() DeviceName { return name(b.exec.Device) }

// Implementation names the kernel implementations and parameters the plan
// runs on a GPU ("" on the CPU).
func (b *BenchPlan) Implementation() string { return b.exec.Implementation() }

// Execute filters src, in host memory, into dst, of the problem's output
// type and shape (the kernel axis first for a planar bank): copies to and
// from the device included on a GPU.
func (b *BenchPlan) Execute(ctx context.Context, dst, src Array) error {
	if b.planar.transposes() {
		return b.planar.execute(ctx, b.exec, dst, src)
	}
	return b.exec.Execute(ctx, dst, src)
}

// TimesOnDevice reports whether TimeOnDevice can time the plan (a GPU
// engine runs it).
func (b *BenchPlan) TimesOnDevice() bool { return b.exec.TimesOnDevice() }

// TimeOnDevice uploads src, times repeats executions on the device's
// arrays between the device's events (CUDA events, OpenCL profiling: no
// transfers, no host clock) and copies the output back into dst. It
// returns each execution's milliseconds.
func (b *BenchPlan) TimeOnDevice(dst, src Array, repeats int) ([]float64, error) {
	return b.exec.TimeOnDevice(dst, src, repeats)
}

// Timeline is what the executions from host memory recorded since the
// plan was made or ResetTimeline (BenchOptions.Timeline; none on the CPU),
// in the order recorded.
func (b *BenchPlan) Timeline() []Span {
	if b.tl == nil {
		return nil
	}
	cs := b.tl.Spans()
	spans := make([]Span, len(cs))
	for i, s := range cs {
		spans[i] = Span{Chunk: s.Chunk, Stage: Stage(s.Stage.String()), Start: s.Start, End: s.End}
	}
	return spans
}

// ResetTimeline forgets the spans recorded so far.
func (b *BenchPlan) ResetTimeline() {
	if b.tl != nil {
		b.tl.Reset()
	}
}

// Close releases what the plan holds on its device.
func (b *BenchPlan) Close() error { return b.exec.Close() }

// Stage is a step of a chunk of a pipelined execution on a GPU.
type Stage string

// The stages, as their names print.
const (
	StageCopyIn  Stage = "copy-in"  // the chunk's input copied to the device
	StageKernel  Stage = "kernel"   // its kernels
	StageCopyOut Stage = "copy-out" // its output copied back
)

// Span is one stage of one chunk on a GPU's clock, from the start of the
// execution: a timeline of spans shows copies and kernels overlapping.
type Span struct {
	Chunk      int
	Stage      Stage
	Start, End time.Duration
}

// Overlap is how long two different stages ran at the same time, summed
// over every pair of spans of different stages: above zero when copies and
// kernels overlapped.
func Overlap(spans []Span) time.Duration {
	var total time.Duration
	for i, a := range spans {
		for _, b := range spans[i+1:] {
			if a.Stage != b.Stage {
				if d := min(a.End, b.End) - max(a.Start, b.Start); d > 0 {
					total += d
				}
			}
		}
	}
	return total
}

// Roofline is what a device sustains, measured: its copy bandwidth and
// FMA peak, and on a CUDA GPU the pinned transfer rates.
type Roofline struct {
	Device    string  // its model as the bench prints it (the CPU: and the cores used)
	CopyGBps  float64 // bytes read + bytes written per second, in GB/s
	FMAGFlops float64 // 2 FLOPs per multiply-add, in GFLOP/s
	CopyMs    float64 // the copy's median time
	FMAMs     float64 // the multiply-add loop's median time
	// Pinned host↔device transfer rates in GB/s (CUDA GPUs; 0 elsewhere):
	// each way, and both at once counting the bytes of both.
	PCIeHtoDGBps, PCIeDtoHGBps, PCIeGBps float64
}

// MeasureRoofline measures dev's roofline through its backend: on the CPU
// a copy far beyond the caches and the engine's widest multiply-add loop
// on each of workers goroutines; on a GPU kernels/roofline.cl between the
// device's events. dev must name a device (not auto: resolve it first).
func MeasureRoofline(dev DeviceName, workers int) (Roofline, error) {
	r, err := plan.MeasureRoofline(dev.dev(), workers)
	if err != nil {
		return Roofline{}, err
	}
	return Roofline{Device: r.Device, CopyGBps: r.CopyGBps, FMAGFlops: r.FMAGFlops, CopyMs: r.CopyMs, FMAMs: r.FMAMs,
		PCIeHtoDGBps: r.PCIeHtoDGBps, PCIeDtoHGBps: r.PCIeDtoHGBps, PCIeGBps: r.PCIeGBps}, nil
}
