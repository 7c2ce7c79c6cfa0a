package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/nd"
)

// Result is one line of `ndconv bench` (and of every peer): a workload's
// times on one device with one method.
type Result struct {
	Kind        string   `json:"kind"` // "result"
	System      string   `json:"system"`
	Device      string   `json:"device"`
	Set         string   `json:"set"`
	ID          string   `json:"id"`
	Shape       []int    `json:"shape"`
	DType       string   `json:"dtype"`
	OutDType    string   `json:"out_dtype"`
	Kernel      []int    `json:"kernel"`
	Separable   bool     `json:"separable"`
	Bank        int      `json:"bank"`
	BankLayout  string   `json:"bank_layout,omitempty"` // "planar" where Options.BankLayout asked for it
	Channels    int      `json:"channels"`
	Method      string   `json:"method"`
	Impl        string   `json:"impl,omitempty"` // the kernel implementations and parameters that ran (GPU engines)
	MsMedian    *float64 `json:"ms_median"`      // nil: the workload could not run (see Note)
	MsMin       *float64 `json:"ms_min"`
	Repeats     int      `json:"repeats"`
	Checksum    float64  `json:"checksum"`
	GBps        float64  `json:"gbps"`
	GFlops      float64  `json:"gflops"`
	PctRoofline float64  `json:"pct_roofline"`
	// PctPCIe is, for workloads that move their data from host memory and
	// back every round, 100 × the time those bytes take at the pinned
	// transfer rate measured in the same run (both directions at once) ÷
	// the measured time.
	PctPCIe float64 `json:"pct_pcie,omitempty"`
	// Chunks and OverlapMs summarise the timeline (Options.Timeline): the
	// chunks one execution ran in, and how long copies and kernels ran at
	// the same time (ndconv.Overlap). Spans is the timeline itself.
	Chunks    int           `json:"chunks,omitempty"`
	OverlapMs float64       `json:"overlap_ms,omitempty"`
	Spans     []ndconv.Span `json:"-"`
	Note      string        `json:"note,omitempty"`
}

// Options are how `ndconv bench` runs workloads.
type Options struct {
	Device  ndconv.DeviceName
	Method  ndconv.Method
	Workers int // CPU goroutines; 0 means all cores
	Repeats int // timed repeats after a warm-up (fewer when MaxSeconds runs out, never under 3)
	// MaxSeconds bounds the timed repeats of one workload on the CPU.
	MaxSeconds float64
	// Tuning fixes the GPU kernels' work decomposition (the tuner's
	// candidates); NoTuningCache times the kernels' own choice.
	Tuning        ndconv.Tuning
	NoTuningCache bool
	// Timeline records, on a GPU, one more execution from host memory
	// after the timed ones: each chunk's copy in, kernels and copy out
	// (Result.Spans).
	Timeline bool
	// BankLayout Planar times a bank's output with its kernel axis first
	// (ndconv.Options.BankLayout), from host memory: the transpose
	// included. Times on a GPU's own arrays are the engine's alone,
	// interleaved.
	BankLayout ndconv.BankLayout
	// TimesOnly is the tuner's: the times alone, no checksum, and the
	// output array kept from the last run of the same dtype and shape
	// (a candidate's run allocated, zeroed and summed 8192² outputs on
	// the host, about as long as its kernels' compilation).
	TimesOnly bool
}

// Run times one workload. A workload that cannot run (too large, not
// supported) gives a result with no times and a note saying why; only a
// cancelled context is an error.
func Run(ctx context.Context, w Workload, opt Options, device string, roof Roofline) (Result, error) {
	system := "ndconv"
	if opt.Device.Backend() == "opencl" {
		system = "ndconv-opencl"
	}
	if opt.Method == ndconv.Gemm || opt.Method == ndconv.Winograd {
		// Methods auto never takes: a column of their own beside auto's
		// in one run's table (bench/run-gpu.sh runs S000's banks by gemm).
		system += "-" + opt.Method.String()
	}
	r := Result{Kind: "result", System: system, Device: device, Set: w.Set, ID: w.ID, Shape: w.Shape,
		DType: w.DType, OutDType: w.OutDType, Kernel: w.Kernel, Separable: w.Separable, Bank: w.Bank,
		Channels: w.Channels}
	if opt.BankLayout == ndconv.Planar && w.Bank > 1 {
		r.BankLayout = opt.BankLayout.String()
	}
	// A GPU's timing (TimeOnDevice) takes no context: a run stopped (a
	// signal) between workloads is seen here, before the next one starts.
	if err := context.Cause(ctx); err != nil {
		return r, err
	}
	ms, checksum, method, impl, spans, err := run(ctx, w, opt)
	if err != nil {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		r.Note = err.Error()
		return r, nil
	}
	slices.Sort(ms)
	median, least := ms[len(ms)/2], ms[0]
	r.MsMedian, r.MsMin, r.Repeats = &median, &least, len(ms)
	r.Method, r.Impl, r.Checksum = method, impl, checksum
	r.GBps = float64(w.Bytes) / (median / 1e3) / 1e9
	r.GFlops = 2 * float64(w.Madds) / (median / 1e3) / 1e9
	r.PctRoofline = roof.Percent(w.Bytes, w.Madds, median)
	if w.Transfers {
		r.Note = "each round moves the data from host memory and back"
		if roof.PCIeGBps > 0 {
			r.PctPCIe = 100 * float64(int64(max(w.Rounds, 1))*w.Bytes) / (roof.PCIeGBps * 1e9) / (median / 1e3)
		}
	}
	if len(spans) > 0 {
		r.Spans, r.Chunks = spans, len(spans)/3
		r.OverlapMs = float64(ndconv.Overlap(spans).Microseconds()) / 1e3
	}
	return r, nil
}

// run prepares and times w, returning each repeat's milliseconds, the
// output's checksum, the method the planner chose and the implementation
// the engine runs it with.
func run(ctx context.Context, w Workload, opt Options) (ms []float64, checksum float64, method, impl string, spans []ndconv.Span, err error) {
	spec, err := Spec(w)
	if err != nil {
		return nil, 0, "", "", nil, err
	}
	p, err := spec.Normalize()
	if err != nil {
		return nil, 0, "", "", nil, err
	}
	popt := ndconv.BenchOptions{Device: opt.Device, Method: opt.Method, Workers: opt.Workers,
		Tuning: opt.Tuning, NoTuningCache: opt.NoTuningCache, BankLayout: opt.BankLayout}
	exec, err := ndconv.NewBenchPlan(p, popt)
	if err != nil {
		return nil, 0, "", "", nil, err
	}
	defer exec.Close()
	method, impl = exec.Method().String(), exec.Implementation()
	src, err := input(w)
	if err != nil {
		return nil, 0, method, impl, nil, err
	}
	var dst nd.Array
	if opt.TimesOnly {
		dst, err = output(p.Out, p.FullShape())
	} else {
		dst, err = nd.New(p.Out, p.FullShape()...)
	}
	if err != nil {
		return nil, 0, method, impl, nil, err
	}
	if exec.TimesOnDevice() && !w.Transfers && opt.BankLayout != ndconv.Planar {
		ms, err = exec.TimeOnDevice(dst, src, opt.Repeats)
	} else {
		ms, err = timeOnHost(ctx, exec, dst, src, w.Rounds, opt)
	}
	if err != nil {
		return nil, 0, method, impl, nil, err
	}
	if opt.Timeline && opt.Device.GPU() {
		popt.Device, popt.Method = exec.Device(), exec.Method()
		if spans, err = recordTimeline(ctx, p, popt, dst, src); err != nil {
			return nil, 0, method, impl, nil, err
		}
	}
	if opt.TimesOnly {
		return ms, 0, method, impl, spans, nil
	}
	return ms, Checksum(dst), method, impl, spans, nil
}

// recordTimeline executes p from host memory on a GPU engine of its own
// that records a timeline, once to warm up and once recorded, and returns
// the recorded run's spans.
func recordTimeline(ctx context.Context, p *nd.Problem, opt ndconv.BenchOptions, dst, src nd.Array) ([]ndconv.Span, error) {
	opt.Timeline = true
	exec, err := ndconv.NewBenchPlan(p, opt)
	if err != nil {
		return nil, err
	}
	defer exec.Close()
	for range 2 {
		exec.ResetTimeline()
		if err := exec.Execute(ctx, dst, src); err != nil {
			return nil, err
		}
	}
	return exec.Timeline(), nil
}

// timeOnHost times rounds executions per repeat with the wall clock, after
// one warm-up execution, stopping early (after at least 3 repeats) when
// the time budget is spent.
func timeOnHost(ctx context.Context, exec *ndconv.BenchPlan, dst, src nd.Array, rounds int, opt Options) ([]float64, error) {
	if err := exec.Execute(ctx, dst, src); err != nil {
		return nil, err
	}
	var ms []float64
	spent := 0.0
	for len(ms) < max(opt.Repeats, 1) {
		start := time.Now()
		for range max(rounds, 1) {
			if err := exec.Execute(ctx, dst, src); err != nil {
				return nil, err
			}
		}
		m := float64(time.Since(start).Nanoseconds()) / 1e6
		ms = append(ms, m)
		spent += m / 1e3
		if opt.MaxSeconds > 0 && spent > opt.MaxSeconds && len(ms) >= 3 {
			break
		}
	}
	return ms, nil
}

// lastInput keeps the last workload's input, which run reads and never
// writes: the tuner times every candidate of a workload one after
// another, and building an 8192² input anew for each (one value at a
// time) cost about as much as timing it. lastOutput keeps the last
// TimesOnly run's output array for the next of the same dtype and shape.
var lastInput, lastOutput keptArray

// keptArray holds one array and the key (its dtype and shape) it was
// made for.
type keptArray struct {
	mu  sync.Mutex
	key string
	a   nd.Array
}

// get is the kept array where key is its, else the one build makes (the
// old one let go first).
func (c *keptArray) get(key string, build func() (nd.Array, error)) (nd.Array, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.a.Data != nil && c.key == key {
		return c.a, nil
	}
	c.a = nd.Array{}
	a, err := build()
	if err != nil {
		return a, err
	}
	c.key, c.a = key, a
	return a, nil
}

// input is Input(w), the kept one where w's dtype and shape are the last's.
func input(w Workload) (nd.Array, error) {
	return lastInput.get(fmt.Sprint(w.DType, w.Shape), func() (nd.Array, error) { return Input(w) })
}

// output is a new dtype array of shape, the kept one where the last was
// that.
func output(dtype nd.DType, shape []int) (nd.Array, error) {
	return lastOutput.get(fmt.Sprint(dtype, shape), func() (nd.Array, error) { return nd.New(dtype, shape...) })
}
