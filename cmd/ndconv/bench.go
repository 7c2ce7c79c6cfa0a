package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/bench"
)

// benchFlags are the flags of `ndconv bench`: a named workload set, or
// one workload described by the rest (DESIGN §4).
type benchFlags struct {
	device, workload, only, method       string
	shape, dtype, outDType, kernel, mode string
	border, bankLayout                   string
	separable, jsonLines, list, timeline bool
	bank, channels, repeat, workers      int
	scale, maxSeconds                    float64
}

func newBenchCommand() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Time workloads in process, beside the device's measured roofline",
		Long: `bench times ndconv with the data already in place (host memory for cpu,
device memory for cuda; GPU times from CUDA events), after a warm-up, and
measures the device's copy bandwidth and FMA peak in the same run.
pct_roofline = 100 × max(bytes ÷ copy bandwidth, 2·madds ÷ FMA peak) ÷ time.

Either a named set (--workload seeds|anchors|banks|all, see bench/README.md) or one
workload: --shape 2048,2048 --dtype float32 --kernel 7x7 [--separable]
[--bank K] [--channels C]. --list prints the workloads (JSON lines) and runs
nothing: the peer scripts in bench/peers read them.`,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBench(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.device, "device", "auto", "auto|cpu|cuda|cuda:N|opencl|opencl:P:D (auto: the CUDA GPU when present)")
	fl.StringVar(&f.method, "method", "auto", "auto|direct|separable|fft|gemm|winograd")
	addWorkloadFlags(fl, &f)
	fl.IntVar(&f.repeat, "repeat", 0, "timed repeats (default 21 on a GPU, 7 on the CPU)")
	fl.IntVar(&f.workers, "workers", 0, "CPU goroutines (default: all cores)")
	fl.Float64Var(&f.scale, "scale", 1, "shrink every spatial axis by this factor (for the CPU)")
	fl.Float64Var(&f.maxSeconds, "max-seconds", 5, "CPU: stop repeating a workload after this long (at least 3 repeats)")
	fl.BoolVarP(&f.jsonLines, "json", "", false, "print JSON lines (workloads, the roofline, results) instead of a table")
	fl.BoolVar(&f.list, "list", false, "print the workloads as JSON lines and run nothing")
	fl.BoolVar(&f.timeline, "timeline", false, "GPU: after timing each workload, run it once more from host memory and print each chunk's copy-in, kernels and copy-out (CUDA events, OpenCL profiling)")
	return cmd
}

// addWorkloadFlags adds the flags that name workloads (bench, tune): a
// named set, or one workload.
func addWorkloadFlags(fl *pflag.FlagSet, f *benchFlags) {
	fl.StringVar(&f.workload, "workload", "", "a named set: seeds, anchors, banks or all")
	fl.StringVar(&f.only, "only", "", "only the workloads whose id matches this regular expression")
	fl.StringVar(&f.shape, "shape", "2048,2048", "input shape without channels (one workload)")
	fl.StringVar(&f.dtype, "dtype", "float32", "input dtype: uint8 or float32 (one workload)")
	fl.StringVar(&f.outDType, "out-dtype", "", "output dtype (default: the input's)")
	fl.StringVar(&f.kernel, "kernel", "7x7", "kernel extents, e.g. 7x7 or 5x5x5 (one workload)")
	fl.StringVar(&f.mode, "mode", "same", "same|valid (one workload)")
	fl.StringVar(&f.border, "border", "constant", "border rule (one workload)")
	fl.BoolVar(&f.separable, "separable", false, "the kernel as one factor per axis (one workload)")
	fl.IntVar(&f.bank, "bank", 1, "kernels in the bank (one workload)")
	fl.StringVar(&f.bankLayout, "bank-layout", "interleaved", "a bank's output layout: interleaved or planar (kernel axis first; timed from host memory, the transpose included)")
	fl.IntVar(&f.channels, "channels", 1, "interleaved channels after the shape (one workload)")
}

// benchWorkloads are the workloads the flags name.
func benchWorkloads(f benchFlags) ([]bench.Workload, error) {
	var ws []bench.Workload
	if f.workload != "" {
		var err error
		if ws, err = bench.Lookup(f.workload); err != nil {
			return nil, &usageError{err}
		}
	} else {
		w, err := oneWorkload(f)
		if err != nil {
			return nil, err
		}
		ws = []bench.Workload{w}
	}
	if f.only != "" {
		re, err := regexp.Compile(f.only)
		if err != nil {
			return nil, usagef("--only: %v", err)
		}
		var kept []bench.Workload
		for _, w := range ws {
			if re.MatchString(w.ID) {
				kept = append(kept, w)
			}
		}
		ws = kept
	}
	if f.scale <= 0 || f.scale > 1 {
		return nil, usagef("--scale %v: want a factor in (0, 1]", f.scale)
	}
	for i := range ws {
		ws[i] = bench.Scale(ws[i], f.scale)
	}
	return ws, nil
}

// oneWorkload is the workload --shape, --dtype, --kernel … describe.
func oneWorkload(f benchFlags) (bench.Workload, error) {
	shape, err := parseInts("shape", f.shape)
	if err != nil {
		return bench.Workload{}, err
	}
	var kernel []int
	for _, part := range strings.Split(strings.ToLower(f.kernel), "x") {
		k, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || k < 1 {
			return bench.Workload{}, usagef("--kernel %q: want extents such as 7x7", f.kernel)
		}
		kernel = append(kernel, k)
	}
	if f.channels > 1 {
		shape = append(shape, f.channels)
	}
	w := bench.Workload{Set: "custom", ID: "custom", Shape: shape, DType: f.dtype, OutDType: f.outDType,
		Kernel: kernel, Separable: f.separable, Bank: f.bank, Channels: f.channels, Mode: f.mode, Border: f.border}
	if err := bench.Check(w); err != nil {
		return bench.Workload{}, &usageError{err}
	}
	return bench.Complete(w), nil
}

func runBench(cmd *cobra.Command, f benchFlags) error {
	out := cmd.OutOrStdout()
	ws, err := benchWorkloads(f)
	if err != nil {
		return err
	}
	if f.list {
		return writeJSONLines(out, ws)
	}
	dev, err := ndconv.ParseDevice(f.device)
	if err != nil {
		return &usageError{err}
	}
	switch {
	case dev.IsAuto():
		dev = bench.DefaultDevice()
	default:
		dev = dev.Resolve()
	}
	method, err := ndconv.ParseMethod(f.method)
	if err != nil {
		return &usageError{err}
	}
	workers := f.workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	layout, err := ndconv.ParseBankLayout(f.bankLayout)
	if err != nil {
		return &usageError{fmt.Errorf("--bank-layout: %w", err)}
	}
	opt := bench.Options{Device: dev, Method: method, Workers: workers, Repeats: f.repeat, MaxSeconds: f.maxSeconds, Timeline: f.timeline, BankLayout: layout}
	roof, err := bench.MeasureRoofline(dev, workers)
	if err != nil {
		return err
	}
	if opt.Repeats <= 0 {
		opt.Repeats = 7
		if dev.Backend() == "cuda" {
			opt.Repeats = 21
		}
	}
	var table *tabwriter.Writer
	if f.jsonLines {
		if err := writeJSONLines(out, ws); err != nil {
			return err
		}
		if err := writeJSONLines(out, []bench.Roofline{roof}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(out, "%s: copy %.0f GB/s, FMA %.0f GFLOP/s\n\n", roof.Device, roof.CopyGBps, roof.FMAGFlops)
		table = tabwriter.NewWriter(out, 2, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(table, "workload\tshape\tdtype\tkernel\tbank\tmethod\tms median\tms min\tGB/s\tGFLOP/s\t% roofline\t")
	}
	for _, w := range ws {
		r, err := bench.Run(cmd.Context(), w, opt, roof.Device, roof)
		if err != nil {
			return err
		}
		if f.jsonLines {
			if err := writeJSONLines(out, []bench.Result{r}); err != nil {
				return err
			}
			if err := writeJSONLines(out, timelineLines(w, r.Spans)); err != nil {
				return err
			}
			continue
		}
		if r.MsMedian == nil {
			fmt.Fprintf(table, "%s\t%v\t%s\t%v\t%d\t—\t%s\t\t\t\t\t\n", w.ID, w.Shape, w.DType, w.Kernel, w.Bank, r.Note)
		} else {
			fmt.Fprintf(table, "%s\t%v\t%s\t%v\t%d\t%s\t%.3f\t%.3f\t%.1f\t%.1f\t%.1f\t\n", w.ID, w.Shape, w.DType, w.Kernel, w.Bank,
				r.Method, *r.MsMedian, *r.MsMin, r.GBps, r.GFlops, r.PctRoofline)
		}
		table.Flush()
		if r.PctPCIe > 0 {
			fmt.Fprintf(out, "  %s: %.1f%% of the pinned transfer rate (%.1f GB/s both ways at once)\n", w.ID, r.PctPCIe, roof.PCIeGBps)
		}
		printTimeline(out, r)
	}
	return nil
}

// spanLine is one stage of one chunk of a timeline, as a JSON line.
type spanLine struct {
	Kind    string  `json:"kind"` // "span"
	ID      string  `json:"id"`
	Chunk   int     `json:"chunk"`
	Stage   string  `json:"stage"`
	StartMs float64 `json:"start_ms"`
	EndMs   float64 `json:"end_ms"`
}

// timelineLines are a result's spans as JSON lines.
func timelineLines(w bench.Workload, spans []ndconv.Span) []spanLine {
	lines := make([]spanLine, len(spans))
	for i, s := range spans {
		lines[i] = spanLine{Kind: "span", ID: w.ID, Chunk: s.Chunk, Stage: string(s.Stage),
			StartMs: float64(s.Start.Nanoseconds()) / 1e6, EndMs: float64(s.End.Nanoseconds()) / 1e6}
	}
	return lines
}

// printTimeline prints a result's timeline, a line per chunk, and how
// long copies and kernels overlapped.
func printTimeline(out io.Writer, r bench.Result) {
	if len(r.Spans) == 0 {
		return
	}
	fmt.Fprintf(out, "  timeline of %s: %d chunks, copies and kernels overlapping %.3f ms\n", r.ID, r.Chunks, r.OverlapMs)
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
	for i := 0; i < len(r.Spans); i += 3 {
		line := fmt.Sprintf("    chunk %3d", r.Spans[i].Chunk)
		for _, s := range r.Spans[i:min(i+3, len(r.Spans))] {
			line += fmt.Sprintf("  %s %8.3f–%8.3f ms", s.Stage, ms(s.Start), ms(s.End))
		}
		fmt.Fprintln(out, line)
	}
}

// writeJSONLines prints each value as one line of JSON.
func writeJSONLines[T any](w io.Writer, values []T) error {
	enc := json.NewEncoder(w)
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}
