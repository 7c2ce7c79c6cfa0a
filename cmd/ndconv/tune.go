package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv/bench"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/plan"
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
FFTW's planner time limit), keeping the fastest measured by then.

Workloads are named as for bench: --workload seeds|anchors|all [--only RE],
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
	dev, err := plan.ParseDevice(f.device)
	if err != nil {
		return &usageError{err}
	}
	dev = dev.Resolve()
	if !dev.GPU() && (dev.IsAuto() || !f.rates) { // the CPU with --rates only
		return usagef("--device %s: tune measures GPU kernels (cuda or opencl; cpu with --rates)", f.device)
	}
	method, err := plan.ParseMethod(f.method)
	if err != nil {
		return &usageError{err}
	}
	path := f.cache
	if path == "" {
		path = plan.DefaultTuningPath()
	}
	cache, err := plan.OpenTuningCache(path)
	if err != nil {
		return err
	}
	// First, while nothing in this process has touched the GPU: its start
	// is measured cold.
	if err := tuneRates(cmd, cache, dev, f.workers); err != nil {
		return err
	}
	if f.rates {
		if err := cache.Save(); err != nil {
			return err
		}
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

// tuneRates measures the rates auto uses (plan.MeasureGPURates on a CUDA
// GPU, plan.MeasureCPURates) into cache, and prints them.
func tuneRates(cmd *cobra.Command, cache *plan.TuningCache, dev plan.Device, workers int) error {
	out := cmd.OutOrStdout()
	switch {
	case dev.MeasuresRates():
		r, err := plan.MeasureGPURates(cmd.Context(), dev)
		if err != nil {
			return err
		}
		if err := cache.StoreGPURates(dev, r); err != nil {
			return err
		}
		fmt.Fprintf(out, "rates: %v %v\n", dev, r)
	case dev.GPU():
		fmt.Fprintf(out, "rates: %v keeps the default GPU rates (only CUDA GPUs are measured)\n", dev)
	}
	r, err := plan.MeasureCPURates(cmd.Context(), workers)
	if err != nil {
		return err
	}
	cache.StoreCPURates(r)
	fmt.Fprintf(out, "rates: cpu %v\n", r)
	return nil
}

// tuneWorkload times the kernels' own choice and every candidate for one
// workload, and stores the fastest candidate when it beats the default by
// more than the timing noise (2%).
func tuneWorkload(cmd *cobra.Command, table io.Writer, cache *plan.TuningCache, w bench.Workload, dev plan.Device, method plan.Method, repeats int, limit time.Duration) error {
	spec, err := bench.Spec(w)
	if err != nil {
		return err
	}
	p, err := spec.Normalize()
	if err != nil {
		return err
	}
	exec, err := plan.New(p, plan.Options{Device: dev, Method: method, NoTuningCache: true})
	if err != nil {
		fmt.Fprintf(table, "%s\t—\t\t\t\t\t%v\t\n", w.ID, err)
		return nil
	}
	chosen := exec.Method
	exec.Close()
	opt := bench.Options{Device: dev, Method: chosen, Repeats: repeats, NoTuningCache: true}
	median := func(t kernels.Tuning) (float64, bool) {
		opt.Tuning = t
		r, err := bench.Run(cmd.Context(), w, opt, "", bench.Roofline{})
		if err != nil || r.MsMedian == nil {
			return 0, false
		}
		return *r.MsMedian, true
	}
	base, ok := median(kernels.Tuning{})
	if !ok {
		fmt.Fprintf(table, "%s\t%v\t\t—\t\t\tthe default does not run\t\n", w.ID, chosen)
		return nil
	}
	candidates := kernels.TuningCandidates(p, chosen == plan.Separable)
	if chosen == plan.FFT {
		candidates = kernels.FFTCandidates(p)
	}
	best, bestMs := kernels.Tuning{}, base
	start, measured := time.Now(), 0
	for _, c := range candidates {
		if limit > 0 && time.Since(start) > limit {
			break
		}
		measured++
		if ms, ok := median(c); ok && ms < bestMs {
			best, bestMs = c, ms
		}
	}
	tried := fmt.Sprint(len(candidates))
	if measured < len(candidates) {
		tried = fmt.Sprintf("%d of %d", measured, len(candidates))
	}
	describe := "the kernels' own"
	if bestMs < 0.98*base {
		if err := cache.Store(dev, p, chosen, best); err != nil {
			return err
		}
		describe = best.String()
	}
	if chosen == plan.FFT && dev.GPU() {
		scale, err := calibrateFFT(cmd, cache, w, p, dev, bestMs, repeats)
		if err != nil {
			return err
		}
		if scale > 0 {
			describe += fmt.Sprintf("; FFT scale now %.3g", scale)
		}
	}
	fmt.Fprintf(table, "%s\t%v\t%s\t%.4g\t%.4g\t%.2f×\t%s\t\n", w.ID, chosen, tried, base, bestMs, base/bestMs, describe)
	return nil
}

// calibrateFFT times the direct method (as auto would run it, with the
// tuning cache's entries as the process found them) on the workload the FFT method ran in fftMs, and folds the
// two into the device's FFTScale (plan.GPURates.AddFFTScale), which it
// returns (0: no direct time to calibrate against).
func calibrateFFT(cmd *cobra.Command, cache *plan.TuningCache, w bench.Workload, p *nd.Problem, dev plan.Device, fftMs float64, repeats int) (float64, error) {
	r, err := bench.Run(cmd.Context(), w, bench.Options{Device: dev, Method: plan.Direct, Repeats: repeats}, "", bench.Roofline{})
	if err != nil || r.MsMedian == nil {
		return 0, nil
	}
	rates, _ := cache.GPURates(dev)
	rates.AddFFTScale(fftMs, plan.FFTCost(p), *r.MsMedian, plan.DirectCost(p))
	return rates.FFTScale, cache.StoreGPURates(dev, rates)
}
