package cuda

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// fftDevice is the shared device for the FFT tests, which also need cuFFT:
// they skip, saying why, where it does not load.
func fftDevice(t *testing.T) *Device {
	t.Helper()
	d := testDevice(t)
	if err := CUFFTAvailable(); err != nil {
		t.Skipf("no cuFFT: %v", err)
	}
	return d
}

// TestFFTSupportedExplains runs without a GPU: a problem the FFT takes is
// refused only with the reason cuFFT cannot serve it.
func TestFFTSupportedExplains(t *testing.T) {
	spec := nd.Spec{Shape: []int{64, 64}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rand.New(rand.NewPCG(1, 1)), false, 9, 9)}}
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	err = FFTSupported(p)
	if CUFFTAvailable() != nil {
		if err == nil || !strings.Contains(err.Error(), "FFT unavailable because") {
			t.Errorf("without cuFFT: %v", err)
		}
	} else if err != nil {
		t.Errorf("with cuFFT at %s: %v", cufftState.path, err)
	}
	spec.In = nd.Float64
	if p, _ = spec.Normalize(); FFTSupported(p) == nil {
		t.Error("a float64 problem was accepted")
	}
	four := nd.Spec{Shape: []int{4, 4, 4, 4}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rand.New(rand.NewPCG(1, 1)), false, 2, 2, 2, 2)}}
	if p, _ = four.Normalize(); (FFTSupported(p) == nil) != (CUFFTAvailable() == nil) {
		t.Errorf("a kernel spanning 4 axes: %v", FFTSupported(p))
	}
}

// TestGPUFFTTable runs FFT convolution (cuFFT; fft.cl for kernels
// spanning more than 3 axes) of every case of the table the FFT takes and
// the larger ones: within fftconv's bound of the reference, the direct
// method's bits where the input holds NaN or Inf.
func TestGPUFFTTable(t *testing.T) {
	fftDevice(t)
	cases := append(gputest.FFTTableCases(true), gputest.FFTLargeCases()...)
	failures := gputest.SpreadCheck(cases, 2, func(c enginetest.Case) (nd.Array, error) {
		return gputest.Run(c, func(p *nd.Problem) (*FFTEngine, error) { return NewFFT(p, EngineOptions{}) })
	}, gputest.CheckFFT)
	for _, f := range failures {
		t.Error(f)
	}
	t.Logf("%d cases, cuFFT %d from %s", len(cases), cufftState.version, cufftState.path)
}

// TestChooseLayout runs without a GPU: 1-D problems pair their blocks
// in cuFFT's complex transforms, 2-D and 3-D ones stay real, kernels
// spanning more than 3 axes take fft.cl's transforms, and
// NDCONV_CUDA_FFT_LAYOUT overrides the first two; the plan follows.
func TestChooseLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	one := nd.Spec{Shape: []int{5000, 3}, In: nd.Float32, Axes: []int{0}, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 63)}}
	two := nd.Spec{Shape: []int{64, 64}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 9, 9)}}
	four := nd.Spec{Shape: []int{6, 7, 8, 9}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 2, 3, 2, 3)}}
	for _, c := range []struct {
		env  string
		spec nd.Spec
		want fftLayout
	}{
		{"", one, pairedLayout}, {"", two, pairedLayout}, {"", four, portableLayout},
		{"real", one, realLayout}, {"real", two, realLayout}, {"fftcl", two, portableLayout}, {"real", four, portableLayout},
	} {
		t.Setenv("NDCONV_CUDA_FFT_LAYOUT", c.env)
		p, err := c.spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		f, layout, err := newFFTConv(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		perSlot, transforms := 2, false
		switch c.want {
		case realLayout:
			perSlot = 1
		case portableLayout:
			transforms = true
		}
		if layout != c.want || f.PerSlot != perSlot || (len(f.Transforms) > 0) != transforms {
			t.Errorf("NDCONV_CUDA_FFT_LAYOUT=%q, kernel %v: layout %d (%d blocks per slot, %d fft.cl transforms), want %d", c.env, p.KShape, layout, f.PerSlot, len(f.Transforms), c.want)
		}
	}
}

// TestGPUFFTLayouts runs the row cases (gputest.FFTRowFailures: odd
// partial batches) and the large ones in every layout: paired blocks in
// cuFFT's complex transforms, real ones, paired ones in fft.cl's
// transforms, whatever chooseLayout would choose.
func TestGPUFFTLayouts(t *testing.T) {
	fftDevice(t)
	for _, layout := range []string{"paired", "real", "fftcl"} {
		t.Setenv("NDCONV_CUDA_FFT_LAYOUT", layout)
		failures := gputest.FFTRowFailures(func(c enginetest.Case, batch int, tuning kernels.Tuning) (nd.Array, error) {
			fftMaxBatch = batch
			defer func() { fftMaxBatch = 0 }()
			return gputest.Run(c, func(p *nd.Problem) (*FFTEngine, error) { return NewFFT(p, EngineOptions{Tuning: tuning}) })
		})
		failures = append(failures, gputest.SpreadCheck(gputest.FFTLargeCases(), 2, func(c enginetest.Case) (nd.Array, error) {
			return gputest.Run(c, func(p *nd.Problem) (*FFTEngine, error) { return NewFFT(p, EngineOptions{}) })
		}, gputest.CheckFFT)...)
		for _, f := range failures {
			t.Errorf("NDCONV_CUDA_FFT_LAYOUT=%s: %s", layout, f)
		}
	}
}

// TestGPUFFTSlabs runs a problem larger than the memory budget: slab by
// slab, each slab's blocks in batches.
func TestGPUFFTSlabs(t *testing.T) {
	fftDevice(t)
	c := gputest.FFTBatchCase()
	p, err := c.Spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewFFT(p, EngineOptions{MemoryBudget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	dst, _ := nd.New(p.Out, p.FullShape()...)
	if err := e.Execute(context.Background(), dst, c.Input); err != nil {
		t.Fatal(err)
	}
	if msg := gputest.CheckFFT(c, dst); msg != "" {
		t.Fatal(msg)
	}
	if m := e.method.(*fftMethod); len(m.states) == 0 {
		t.Error("no FFT state kept")
	}
	t.Logf("%s", e.Implementation())
}

// TestGPUFFTDeviceArrays runs on device arrays, times the method, and
// checks that NaN on the device takes the direct method.
func TestGPUFFTDeviceArrays(t *testing.T) {
	d := fftDevice(t)
	c := gputest.FFTBatchCase()
	p, err := c.Spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewFFT(p, EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src, err := Upload(d, c.Input)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Free()
	dst, err := NewArray(d, p.Out, p.FullShape()...)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Free()
	if err := e.ExecuteDevice(context.Background(), dst, src); err != nil {
		t.Fatal(err)
	}
	got, err := dst.Download()
	if err != nil {
		t.Fatal(err)
	}
	if msg := gputest.CheckFFT(c, got); msg != "" {
		t.Fatal(msg)
	}
	ms, err := e.TimeDevice(dst, src, 3)
	if err != nil || len(ms) != 3 {
		t.Fatalf("TimeDevice: %v, %v", ms, err)
	}
	t.Logf("%s: %.3f ms", e.Implementation(), ms[0])

	bad := c
	bad.Input = nd.Array{Shape: c.Input.Shape, Data: append([]float32(nil), c.Input.Data.([]float32)...)}
	bad.Input.Data.([]float32)[1234] = float32(math.NaN())
	src2, err := Upload(d, bad.Input)
	if err != nil {
		t.Fatal(err)
	}
	defer src2.Free()
	if err := e.ExecuteDevice(context.Background(), dst, src2); err != nil {
		t.Fatal(err)
	}
	if got, err = dst.Download(); err != nil {
		t.Fatal(err)
	}
	if msg := gputest.CheckFFT(bad, got); msg != "" {
		t.Fatalf("with NaN: %s", msg)
	}
	if e.direct == nil {
		t.Error("NaN on the device did not take the direct method")
	}
}

// TestGPUFFTBound: the bound the tests hold cuFFT to is fftconv's, for
// the whole problem's decomposition.
func TestGPUFFTBound(t *testing.T) {
	fftDevice(t)
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
	got, err := gputest.Run(c, func(p *nd.Problem) (*FFTEngine, error) { return NewFFT(p, EngineOptions{}) })
	if err != nil {
		t.Fatal(err)
	}
	want, worst := c.Want(), 0.0
	for i, v := range got.Float64s() {
		worst = max(worst, math.Abs(v-want.Values[i]))
	}
	bound := g.ErrorBound(fftconv.AbsSum(p), c.MaxAbs())
	t.Logf("%s: largest error %.3g, %.2f of the bound", c.Name, worst, worst/bound)
	if worst > bound {
		t.Errorf("largest error %.3g exceeds the bound %.3g", worst, bound)
	}
}
