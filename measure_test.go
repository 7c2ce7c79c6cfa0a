package ndconv_test

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/internal/ref"
	"github.com/ndconv/ndconv/nd"
)

// TestParseDevice: the root's device names parse as the planner's, say
// their backend and print as they were written (resolved), and a bad one
// is an UnsupportedError listing the forms.
func TestParseDevice(t *testing.T) {
	for _, tc := range []struct {
		in, str, backend string
		gpu, auto        bool
	}{
		{"", "auto", "auto", false, true},
		{"auto", "auto", "auto", false, true},
		{"cpu", "cpu", "cpu", false, false},
		{"CUDA:1", "cuda:1", "cuda", true, false},
		{"cuda", "cuda:0", "cuda", true, false},
		{"opencl:0:1", "opencl:0:1", "opencl", true, false},
	} {
		d, err := ndconv.ParseDevice(tc.in)
		if err != nil {
			t.Errorf("ParseDevice(%q): %v", tc.in, err)
			continue
		}
		if d.String() != tc.str || d.Backend() != tc.backend || d.GPU() != tc.gpu || d.IsAuto() != tc.auto {
			t.Errorf("ParseDevice(%q) = %v: backend %s, GPU %v, auto %v", tc.in, d, d.Backend(), d.GPU(), d.IsAuto())
		}
	}
	if (ndconv.DeviceName{}) != must(ndconv.ParseDevice("auto")) {
		t.Error("the zero DeviceName is not auto")
	}
	if must(ndconv.ParseDevice("cuda")) != must(ndconv.ParseDevice("cuda:0")) {
		t.Error("cuda and cuda:0 name different devices")
	}
	if cpu := must(ndconv.ParseDevice("cpu")); cpu.Available() != nil || cpu.MeasuresRates() {
		t.Errorf("cpu: available %v, measures rates %v", cpu.Available(), cpu.MeasuresRates())
	}
	var unsupported *nd.UnsupportedError
	if _, err := ndconv.ParseDevice("tpu"); !errors.As(err, &unsupported) {
		t.Errorf("ParseDevice(tpu): %v, want an UnsupportedError", err)
	}
	if ds, err := ndconv.ParseDevices("cpu, cuda:1,cpu"); err != nil || len(ds) != 3 || ds[1].String() != "cuda:1" || ds[0] != ds[2] {
		t.Errorf("ParseDevices: %v, %v", ds, err)
	}
	if _, err := ndconv.ParseDevices("cpu,,cpu"); err == nil {
		t.Error("ParseDevices took an empty device")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestOverlap counts only the time two different stages share.
func TestOverlap(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	spans := []ndconv.Span{
		{Chunk: 0, Stage: ndconv.StageCopyIn, Start: 0, End: ms(2)},
		{Chunk: 0, Stage: ndconv.StageKernel, Start: ms(2), End: ms(6)},
		{Chunk: 1, Stage: ndconv.StageCopyIn, Start: ms(1), End: ms(4)},  // beside chunk 0's kernel 2 ms (its copy-in does not count)
		{Chunk: 1, Stage: ndconv.StageKernel, Start: ms(3), End: ms(5)},  // beside its own copy-in 1 ms (chunk 0's kernel does not count)
		{Chunk: 0, Stage: ndconv.StageCopyOut, Start: ms(6), End: ms(7)}, // touches chunk 0's kernel, overlaps nothing
	}
	if got := ndconv.Overlap(spans); got != ms(3) {
		t.Errorf("overlap %v, want 3ms", got)
	}
	if got := ndconv.Overlap(nil); got != 0 {
		t.Errorf("overlap of nothing %v", got)
	}
}

// TestBenchPlan runs a bench plan on every device here: from host memory
// and, on a GPU, timed on device arrays, each giving the reference's
// values (the CPU's bits on every device: the direct method is exact);
// on a GPU with a timeline, one execution records each stage of its chunk.
func TestBenchPlan(t *testing.T) {
	spec := nd.Spec{Shape: []int{40, 33}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3, 5}, Weights: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}}}
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	src, _ := nd.New(nd.Float32, 40, 33)
	for i := range src.Data.([]float32) {
		src.Data.([]float32)[i] = float32(i%17) - 3
	}
	var want []float32
	for _, v := range ref.Correlate(spec, src.Float64s()).Values {
		want = append(want, float32(v))
	}
	for _, device := range testDevices(t) {
		dev := must(ndconv.ParseDevice(device)).Resolve()
		bp, err := ndconv.NewBenchPlan(p, ndconv.BenchOptions{Device: dev, Method: ndconv.Direct, Workers: 1, NoTuningCache: true})
		if err != nil {
			t.Fatalf("%s: %v", device, err)
		}
		if bp.Method() != ndconv.Direct || bp.Device() != dev || (bp.Implementation() != "") != dev.GPU() || bp.TimesOnDevice() != dev.GPU() {
			t.Errorf("%s: method %v on %v, implementation %q, times on device %v", device, bp.Method(), bp.Device(), bp.Implementation(), bp.TimesOnDevice())
		}
		dst, _ := nd.New(nd.Float32, 40, 33)
		if err := bp.Execute(ctx, dst, src); err != nil || !slices.Equal(dst.Data.([]float32), want) {
			t.Errorf("%s: Execute: %v, or not the reference's values", device, err)
		}
		clear(dst.Data.([]float32))
		ms, err := bp.TimeOnDevice(dst, src, 3)
		var unsupported *nd.UnsupportedError
		switch {
		case !dev.GPU() && !errors.As(err, &unsupported):
			t.Errorf("%s: TimeOnDevice: %v, want an UnsupportedError", device, err)
		case dev.GPU() && (err != nil || len(ms) != 3 || !slices.Equal(dst.Data.([]float32), want)):
			t.Errorf("%s: TimeOnDevice: %v, %v, or not the reference's values", device, ms, err)
		}
		if bp.Timeline() != nil {
			t.Errorf("%s: a timeline without BenchOptions.Timeline", device)
		}
		bp.Close()
		if !dev.GPU() {
			continue
		}
		clear(dst.Data.([]float32))
		bp, err = ndconv.NewBenchPlan(p, ndconv.BenchOptions{Device: dev, Method: ndconv.Direct, Timeline: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := bp.Execute(ctx, dst, src); err != nil || !slices.Equal(dst.Data.([]float32), want) {
			t.Errorf("%s: Execute with a timeline: %v, or not the reference's values", device, err)
		}
		spans := bp.Timeline()
		var stages []ndconv.Stage
		for _, s := range spans {
			stages = append(stages, s.Stage)
			if s.Chunk != 0 || s.End < s.Start {
				t.Errorf("%s: span %+v", device, s)
			}
		}
		if !slices.Equal(stages, []ndconv.Stage{ndconv.StageCopyIn, ndconv.StageKernel, ndconv.StageCopyOut}) {
			t.Errorf("%s: timeline %+v", device, spans)
		}
		if bp.ResetTimeline(); len(bp.Timeline()) != 0 {
			t.Errorf("%s: a timeline reset keeps %v", device, bp.Timeline())
		}
		bp.Close()
	}
}

// TestMeasureRooflineAuto: auto is no device to measure; the error says
// which backends measure one.
func TestMeasureRooflineAuto(t *testing.T) {
	_, err := ndconv.MeasureRoofline(ndconv.DeviceName{}, 1)
	if err == nil || err.Error() != "--device auto: bench runs on cpu, cuda and opencl" {
		t.Errorf("MeasureRoofline(auto): %v", err)
	}
}

// TestTuningCache: candidates for the tuner, a tuning stored for an
// identified device and rates survive Save and a new Open; a device that
// cannot be identified (the CPU) stores nothing.
func TestTuningCache(t *testing.T) {
	p, err := (&nd.Spec{Shape: []int{64, 64}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3, 3}, Weights: []float64{1, 2, 1, 2, 4, 2, 1, 2, 1}}}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	direct, fft := ndconv.TuningCandidates(p, ndconv.Direct), ndconv.TuningCandidates(p, ndconv.FFT)
	if len(direct) == 0 || len(fft) == 0 || direct[0].String() == "" || direct[0] == (ndconv.Tuning{}) {
		t.Fatalf("candidates: %d direct, %d FFT", len(direct), len(fft))
	}
	path := filepath.Join(t.TempDir(), "tuning.json")
	c, err := ndconv.OpenTuningCache(path)
	if err != nil || c.Len() != 0 {
		t.Fatalf("a new cache: %v, %d entries", err, c.Len())
	}
	if _, ok := c.CPURates(); ok {
		t.Error("a new cache has CPU rates")
	}
	if err := c.Store(must(ndconv.ParseDevice("cpu")), p, ndconv.Direct, direct[0]); err == nil {
		t.Error("a tuning stored for the CPU")
	}
	c.StoreCPURates(ndconv.CPURates{})
	gpu := must(ndconv.ParseDevice("opencl")).Resolve()
	identified := slices.Contains(testDevices(t), "opencl")
	if identified {
		if err := c.Store(gpu, p, ndconv.Direct, direct[0]); err != nil {
			t.Fatal(err)
		}
		var r ndconv.GPURates
		r.AddFFTScale(p, 2, 1)
		s := r.FFTScale()
		if r.AddFFTScale(p, 2, 1); s <= 0 || r.FFTScale() != s {
			t.Errorf("FFT scale %v, then %v for the same measurement", s, r.FFTScale())
		}
		if err := c.StoreGPURates(gpu, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c, err = ndconv.OpenTuningCache(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.CPURates(); !ok {
		t.Error("the CPU rates were not saved")
	}
	if identified {
		r, ok := c.GPURates(gpu)
		if c.Len() != 1 || !ok || r.FFTScale() <= 0 {
			t.Errorf("reopened: %d entries, GPU rates %v %v", c.Len(), r, ok)
		}
	}
}

// TestWarm: a Warm of the CPU opens nothing; a nil Warm does nothing.
func TestWarm(t *testing.T) {
	w, err := ndconv.Prewarm("cpu")
	if err != nil || w.Wait() != nil || w.Device() != "" || w.Close() != nil || w.Close() != nil {
		t.Errorf("Prewarm(cpu): %v", err)
	}
	var none *ndconv.Warm
	if none.Wait() != nil || none.Device() != "" || none.Close() != nil {
		t.Error("a nil Warm did something")
	}
}
