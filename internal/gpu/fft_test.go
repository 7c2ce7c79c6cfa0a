package gpu_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// fftOn makes an FFT engine for p on the target.
func fftOn(tg *Target, p *nd.Problem, opt gpu.Options) (*gpu.FFTEngine, error) {
	dev, err := tg.Open()
	if err != nil {
		return nil, err
	}
	return gpu.NewFFT(dev, tg.Open, p, opt)
}

// runFFT runs one case by FFT on the target from host memory.
func runFFT(tg *Target, c enginetest.Case, opt gpu.Options) (nd.Array, error) {
	return gputest.Run(c, func(p *nd.Problem) (*gpu.FFTEngine, error) { return fftOn(tg, p, opt) })
}

// hasFFTLibrary reports whether the target transforms with a library
// (cuFFT).
func hasFFTLibrary(tg *Target) bool {
	lib, ok := tg.Device().(gpu.FFTLibrary)
	return ok && lib.FFTAvailable() == nil
}

// TestFFTTable runs FFT convolution of every case of the table the FFT
// takes (a sample where the target samples) and the larger ones: within
// fftconv's bound of the reference, the direct method's bits where the
// input holds NaN or Inf.
func TestFFTTable(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		cases := append(gputest.FFTTableCases(!tg.Sample), gputest.FFTLargeCases()...)
		failures := gputest.SpreadCheck(cases, gputest.Workers(), func(c enginetest.Case) (nd.Array, error) {
			return runFFT(tg, c, gpu.Options{})
		}, gputest.CheckFFT)
		for _, f := range failures {
			t.Error(f)
		}
		t.Logf("%d cases on %s (FFT library: %v)", len(cases), tg.Name, hasFFTLibrary(tg))
	})
}

// TestFFTLayouts runs the row cases (gputest.FFTRowFailures: odd partial
// batches) and the large ones in every layout the target has: paired
// blocks in the library's complex transforms, real ones, paired ones in
// fft.cl's transforms — whatever the engine would choose.
func TestFFTLayouts(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		layouts := []string{"fftcl"}
		if hasFFTLibrary(tg) {
			layouts = []string{"paired", "real", "fftcl"}
		}
		for _, layout := range layouts {
			t.Setenv("NDCONV_CUDA_FFT_LAYOUT", layout)
			failures := gputest.FFTRowFailures(func(c enginetest.Case, batch int, tuning kernels.Tuning) (nd.Array, error) {
				gpu.SetFFTMaxBatch(batch)
				defer gpu.SetFFTMaxBatch(0)
				return runFFT(tg, c, gpu.Options{Tuning: tuning})
			})
			if !tg.Sample {
				failures = append(failures, gputest.SpreadCheck(gputest.FFTLargeCases(), gputest.Workers(), func(c enginetest.Case) (nd.Array, error) {
					return runFFT(tg, c, gpu.Options{})
				}, gputest.CheckFFT)...)
			}
			for _, f := range failures {
				t.Errorf("layout %s: %s", layout, f)
			}
		}
	})
}

// TestFFTBatches caps the blocks per batch, so that they run in many
// batches (the last one partial), with 32- and 64-bit indices (the same
// bits), slab by slab under a small memory budget, and on device arrays,
// where NaN takes the direct method.
func TestFFTBatches(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		c := gputest.FFTBatchCase()
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		gpu.SetFFTMaxBatch(5)
		defer gpu.SetFFTMaxBatch(0)
		e, err := fftOn(tg, p, gpu.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		batches, batch, defines, err := gpu.FFTPlanOf(e)
		if err != nil || batches < 3 {
			t.Fatalf("%d batches of %d blocks (%v): the cap did not split them", batches, batch, err)
		}
		dst, _ := nd.New(p.Out, p.FullShape()...)
		if err := e.Execute(context.Background(), dst, c.Input); err != nil {
			t.Fatal(err)
		}
		if msg := gputest.CheckFFT(c, dst); msg != "" {
			t.Fatalf("%d batches of %d blocks: %s", batches, batch, msg)
		}
		if gpu.FFTStates(e) == 0 {
			t.Error("no FFT state kept")
		}
		// The same with 64-bit indices: the same arithmetic, the same bits.
		gpu.SetFFTIndex64(true)
		wide, err := fftOn(tg, p, gpu.Options{})
		if err == nil {
			_, _, wideDefines, _ := gpu.FFTPlanOf(wide)
			if !slices.Contains(wideDefines, "IDX32=0") || !slices.Contains(defines, "IDX32=1") {
				t.Errorf("index widths: %v, %v", defines, wideDefines)
			}
			dst64, _ := nd.New(p.Out, p.FullShape()...)
			err = wide.Execute(context.Background(), dst64, c.Input)
			if err == nil && !slices.Equal(dst.Bytes(), dst64.Bytes()) {
				t.Error("64-bit indices give other bits than 32-bit ones")
			}
			wide.Close()
		}
		gpu.SetFFTIndex64(false)
		if err != nil {
			t.Fatal(err)
		}

		// Slab by slab: the input and output above the memory budget.
		in, out := int64(len(c.Input.Bytes())), int64(len(dst.Bytes()))
		slabs, err := fftOn(tg, p, gpu.Options{MemoryBudget: (in + out) / 2})
		if err != nil {
			t.Fatal(err)
		}
		defer slabs.Close()
		if n, err := gpu.Pieces(slabs.Engine); err != nil || n < 2 {
			t.Errorf("%d slabs (%v) under half the data's bytes", n, err)
		}
		again, _ := nd.New(p.Out, p.FullShape()...)
		if err := slabs.Execute(context.Background(), again, c.Input); err != nil {
			t.Fatal(err)
		}
		if msg := gputest.CheckFFT(c, again); msg != "" {
			t.Fatalf("slab by slab: %s", msg)
		}

		// On device arrays, timed; NaN there takes the direct method.
		dev, q := tg.Device(), testQueue(t, tg)
		src := upload(t, dev, q, c.Input)
		ddst, err := gpu.NewArray(dev, p.Out, p.FullShape()...)
		if err != nil {
			t.Fatal(err)
		}
		defer ddst.Free()
		if err := e.ExecuteDevice(context.Background(), ddst, src); err != nil {
			t.Fatal(err)
		}
		if msg := gputest.CheckFFT(c, download(t, q, ddst)); msg != "" {
			t.Fatalf("on device arrays: %s", msg)
		}
		if ms, err := e.TimeDevice(ddst, src, 3); err != nil || len(ms) != 3 {
			t.Fatalf("TimeDevice: %v, %v", ms, err)
		}
		bad := c
		bad.Input = nd.Array{Shape: c.Input.Shape, Data: append([]float32(nil), c.Input.Data.([]float32)...)}
		bad.Input.Data.([]float32)[1234] = float32(math.NaN())
		if err := e.ExecuteDevice(context.Background(), ddst, upload(t, dev, q, bad.Input)); err != nil {
			t.Fatal(err)
		}
		if msg := gputest.CheckFFT(bad, download(t, q, ddst)); msg != "" {
			t.Fatalf("with NaN: %s", msg)
		}
		if !gpu.UsedDirect(e) {
			t.Error("NaN on the device did not take the direct method")
		}
	})
}

// TestFFTBound: the bound the tests hold the transforms to is fftconv's,
// for the whole problem's decomposition.
func TestFFTBound(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		cases := gputest.FFTLargeCases()
		c := cases[slices.IndexFunc(cases, func(c enginetest.Case) bool { return c.Name == "2d-401x397-k31x31" })]
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		g, err := fftconv.New(p, fftconv.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		got, err := runFFT(tg, c, gpu.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, worst := c.Want(), 0.0
		for i, v := range got.Float64s() {
			worst = max(worst, math.Abs(v-want.Values[i]))
		}
		bound := g.ErrorBound(p.WeightAbsSum(), c.MaxAbs())
		t.Logf("%s: largest error %.3g, %.2f of the bound", c.Name, worst, worst/bound)
		if worst > bound {
			t.Errorf("largest error %.3g exceeds the bound %.3g", worst, bound)
		}
	})
}
