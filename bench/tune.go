package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/nd"
)

// The tuner: ndconv tune's search, for any program that wants it. It
// times, on a GPU, the kernels' own work decomposition for a workload and
// every candidate decomposition (ndconv.TuningCandidates; the FFT's
// transform lengths for the FFT method), all through Run on data already
// on the device, and stores the fastest in an ndconv.TuningCache when it
// beats the kernels' own by more than TuneThreshold — as FFTW's planner
// stores its wisdom. Every candidate gives the same bits; only the speed
// differs.

// TuneThreshold is how much faster than the kernels' own choice a
// candidate must be to be stored: the timing noise between runs.
const TuneThreshold = 0.02

// TuneOptions configure TuneWorkload.
type TuneOptions struct {
	Device ndconv.DeviceName // a GPU
	Method ndconv.Method     // auto: the method a plan would choose
	// Repeats is the timed runs per candidate (the median counts).
	Repeats int
	// TimeLimit bounds the time one workload's candidates may take,
	// keeping the fastest measured by then (0: measure all).
	TimeLimit time.Duration
}

// TuneResult is one workload's search.
type TuneResult struct {
	Workload string
	Method   ndconv.Method
	// Skipped says why the workload was not tuned ("" where it was): no
	// plan for it on the device, or the kernels' own choice does not run.
	Skipped string
	// Candidates counts the decompositions there were, Measured those
	// timed within TimeLimit.
	Candidates, Measured int
	DefaultMs, BestMs    float64 // the kernels' own choice, the fastest
	Best                 ndconv.Tuning
	// Stored reports that Best beat the default by more than
	// TuneThreshold and is in the cache.
	Stored bool
	// FFTScale is the device's FFT cost scale after this workload
	// calibrated it (the FFT method on a GPU), else 0.
	FFTScale float64
}

// TuneRates measures the rates auto's device choice rests on
// (ndconv.MeasureGPURates where the device's backend measures them — a
// CUDA GPU —, ndconv.MeasureCPURates always) and stores them in cache. Call
// it before anything else in the process touches the GPU: its start is
// measured cold. gpu is nil where the device's rates are not measured.
func TuneRates(ctx context.Context, cache *ndconv.TuningCache, dev ndconv.DeviceName, workers int) (gpu *ndconv.GPURates, cpu ndconv.CPURates, err error) {
	if dev.MeasuresRates() {
		r, err := ndconv.MeasureGPURates(ctx, dev)
		if err != nil {
			return nil, cpu, err
		}
		if err := cache.StoreGPURates(dev, r); err != nil {
			return nil, cpu, err
		}
		gpu = &r
	}
	if cpu, err = ndconv.MeasureCPURates(ctx, workers); err != nil {
		return gpu, cpu, err
	}
	cache.StoreCPURates(cpu)
	return gpu, cpu, nil
}

// TuneWorkload times the kernels' own choice and every candidate for one
// workload on opt.Device, and stores the fastest candidate in cache when
// it beats the default by more than TuneThreshold; for the FFT method on
// a GPU it also calibrates the device's FFT cost scale against the direct
// method. The caller saves the cache.
func TuneWorkload(ctx context.Context, cache *ndconv.TuningCache, w Workload, opt TuneOptions) (TuneResult, error) {
	res := TuneResult{Workload: w.ID}
	spec, err := Spec(w)
	if err != nil {
		return res, err
	}
	p, err := spec.Normalize()
	if err != nil {
		return res, err
	}
	exec, err := ndconv.NewBenchPlan(p, ndconv.BenchOptions{Device: opt.Device, Method: opt.Method, NoTuningCache: true})
	if err != nil {
		res.Skipped = err.Error()
		return res, nil
	}
	res.Method = exec.Method()
	exec.Close()
	run := Options{Device: opt.Device, Method: res.Method, Repeats: opt.Repeats, NoTuningCache: true, TimesOnly: true}
	median := func(t ndconv.Tuning) (float64, bool) {
		run.Tuning = t
		r, err := Run(ctx, w, run, "", Roofline{})
		if err != nil || r.MsMedian == nil {
			return 0, false
		}
		return *r.MsMedian, true
	}
	base, ok := median(ndconv.Tuning{})
	if err := context.Cause(ctx); err != nil {
		return res, err // stopped (a signal): not "does not run"
	}
	if !ok {
		res.Skipped = "the default does not run"
		return res, nil
	}
	candidates := ndconv.TuningCandidates(p, res.Method)
	res.Candidates, res.DefaultMs, res.BestMs = len(candidates), base, base
	start := time.Now()
	for _, c := range candidates {
		if opt.TimeLimit > 0 && time.Since(start) > opt.TimeLimit {
			break
		}
		// A stopped run (a signal) stores nothing of this workload: its
		// candidates were not all seen, nor cut by the time limit asked.
		if err := context.Cause(ctx); err != nil {
			return res, err
		}
		res.Measured++
		if ms, ok := median(c); ok && ms < res.BestMs {
			res.Best, res.BestMs = c, ms
		}
	}
	if err := context.Cause(ctx); err != nil {
		return res, err // the last candidate's run was stopped
	}
	if res.BestMs < (1-TuneThreshold)*base {
		if err := cache.Store(opt.Device, p, res.Method, res.Best); err != nil {
			return res, err
		}
		res.Stored = true
	}
	if res.Method == ndconv.FFT && opt.Device.GPU() {
		if res.FFTScale, err = calibrateFFT(ctx, cache, w, p, opt.Device, res.BestMs, opt.Repeats); err != nil {
			return res, err
		}
	}
	return res, nil
}

// calibrateFFT times the direct method (as auto would run it, with the
// tuning cache's entries as the process found them) on the workload the
// FFT method ran in fftMs, and folds the two into the device's FFTScale
// (ndconv.GPURates.AddFFTScale), which it returns (0: no direct time to
// calibrate against).
func calibrateFFT(ctx context.Context, cache *ndconv.TuningCache, w Workload, p *nd.Problem, dev ndconv.DeviceName, fftMs float64, repeats int) (float64, error) {
	r, err := Run(ctx, w, Options{Device: dev, Method: ndconv.Direct, Repeats: repeats, TimesOnly: true}, "", Roofline{})
	if err != nil || r.MsMedian == nil {
		return 0, nil
	}
	rates, _ := cache.GPURates(dev)
	rates.AddFFTScale(p, fftMs, *r.MsMedian)
	return rates.FFTScale(), cache.StoreGPURates(dev, rates)
}

// String is the result as ndconv tune prints it: the decomposition
// chosen and, where the FFT was calibrated, its new scale.
func (r TuneResult) String() string {
	s := "the kernels' own"
	if r.Stored {
		s = r.Best.String()
	}
	if r.FFTScale > 0 {
		s += fmt.Sprintf("; FFT scale now %.3g", r.FFTScale)
	}
	return s
}
