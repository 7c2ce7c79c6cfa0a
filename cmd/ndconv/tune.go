package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/bench"
)

// tuneFlags are bench's workload flags plus where the cache lives.
type tuneFlags struct {
	benchFlags
	cache     string
	rates     bool
	timeLimit time.Duration
}

func newTuneCommand() *cobra.Command {
	var f tuneFlags
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Measure this machine's rates and the GPU kernels' work decompositions, and save them",
		Long: `tune first measures the rates auto's device choice rests on (a few
seconds): the CPU engine's multiply-add rate on 2048² float32 7×7 and, on a
CUDA GPU, the driver's and context's start, one NVRTC compilation, the
pinned and end-to-end transfer rates, an execution's fixed cost and the
direct kernel's rate on 4096² 7×7. With --rates it stops there (--device
cpu measures the CPU alone); otherwise it goes on to time, on a GPU, every
candidate work decomposition of the kernels
(work-group shape, outputs per work-item, rows per strip) for each workload,
beside the kernels' own choice, and saves the fastest in the tuning cache
(--cache, default $NDCONV_TUNING or ndconv/tuning.json in the user cache
directory), keyed by the device's model and driver and the problem. Later
plans for the same problem on the same device read it, as FFTW reads its
wisdom. Every candidate gives the same bits; only the speed differs.
Each workload's line is printed, and the cache saved, as soon as it is
done; --time-limit bounds the time one workload's candidates may take (as
FFTW's planner time limit), keeping the fastest measured by then. An
interrupt (Ctrl-C) stops it after the candidate in hand: the rates and the
workloads done are kept, the interrupted workload is not.

Workloads are named as for bench: --workload seeds|anchors|banks|all [--only RE],
or one with --shape, --dtype, --kernel, ….`,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTune(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.device, "device", "cuda", "cuda|cuda:N|opencl|opencl:P:D (cpu with --rates)")
	fl.BoolVar(&f.rates, "rates", false, "measure only the machine's rates for auto (a few seconds), not the kernels' decompositions")
	fl.StringVar(&f.method, "method", "auto", "auto|direct|separable|fft (fft: the transform lengths)")
	addWorkloadFlags(fl, &f.benchFlags)
	fl.IntVar(&f.repeat, "repeat", 9, "timed repeats per candidate")
	fl.StringVar(&f.cache, "cache", "", "the tuning cache file (default: $NDCONV_TUNING or the user cache directory)")
	fl.DurationVar(&f.timeLimit, "time-limit", 0, "stop measuring a workload's candidates after this long, e.g. 60s (0: measure all)")
	f.scale = 1
	return cmd
}

func runTune(cmd *cobra.Command, f tuneFlags) error {
	out := cmd.OutOrStdout()
	ws, err := benchWorkloads(f.benchFlags)
	if err != nil {
		return err
	}
	dev, err := ndconv.ParseDevice(f.device)
	if err != nil {
		return &usageError{err}
	}
	dev = dev.Resolve()
	if !dev.GPU() && (dev.IsAuto() || !f.rates) { // the CPU with --rates only
		return usagef("--device %s: tune measures GPU kernels (cuda or opencl; cpu with --rates)", f.device)
	}
	method, err := ndconv.ParseMethod(f.method)
	if err != nil {
		return &usageError{err}
	}
	path := f.cache
	if path == "" {
		path = ndconv.DefaultTuningPath()
	}
	cache, err := ndconv.OpenTuningCache(path)
	if err != nil {
		return err
	}
	// First, while nothing in this process has touched the GPU: its start
	// is measured cold.
	if err := tuneRates(cmd, cache, dev, f.workers); err != nil {
		return err
	}
	// Saved at once: a tune stopped later (a signal) keeps them.
	if err := cache.Save(); err != nil {
		return err
	}
	if f.rates {
		fmt.Fprintf(out, "tuning cache %s: rates saved\n", path)
		return nil
	}
	table := tabwriter.NewWriter(out, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(table, "workload\tmethod\tcandidates\tdefault ms\tbest ms\tspeed-up\tbest\t")
	for _, w := range ws {
		if err := tuneWorkload(cmd, table, cache, w, dev, method, f.repeat, f.timeLimit); err != nil {
			return err
		}
		// A run cut short keeps the workloads done.
		if err := table.Flush(); err != nil {
			return err
		}
		if err := cache.Save(); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "tuning cache %s: %d entries\n", path, cache.Len())
	return nil
}

// tuneRates measures the rates auto uses (bench.TuneRates) into cache,
// and prints them.
func tuneRates(cmd *cobra.Command, cache *ndconv.TuningCache, dev ndconv.DeviceName, workers int) error {
	out := cmd.OutOrStdout()
	gpu, cpu, err := bench.TuneRates(cmd.Context(), cache, dev, workers)
	switch {
	case gpu != nil:
		fmt.Fprintf(out, "rates: %v %v\n", dev, *gpu)
	case dev.GPU():
		fmt.Fprintf(out, "rates: %v keeps the default GPU rates (only CUDA GPUs are measured)\n", dev)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "rates: cpu %v\n", cpu)
	return nil
}

// tuneWorkload runs bench.TuneWorkload and prints its line.
func tuneWorkload(cmd *cobra.Command, table io.Writer, cache *ndconv.TuningCache, w bench.Workload, dev ndconv.DeviceName, method ndconv.Method, repeats int, limit time.Duration) error {
	r, err := bench.TuneWorkload(cmd.Context(), cache, w, bench.TuneOptions{Device: dev, Method: method, Repeats: repeats, TimeLimit: limit})
	if err != nil {
		return err
	}
	if r.Skipped != "" {
		method := "—" // no plan: the error says why
		if r.Method != ndconv.Auto {
			method = r.Method.String()
		}
		fmt.Fprintf(table, "%s\t%s\t\t—\t\t\t%s\t\n", w.ID, method, r.Skipped)
		return nil
	}
	tried := fmt.Sprint(r.Candidates)
	if r.Measured < r.Candidates {
		tried = fmt.Sprintf("%d of %d", r.Measured, r.Candidates)
	}
	fmt.Fprintf(table, "%s\t%v\t%s\t%.4g\t%.4g\t%.2f×\t%s\t\n", w.ID, r.Method, tried, r.DefaultMs, r.BestMs, r.DefaultMs/r.BestMs, r)
	return nil
}
