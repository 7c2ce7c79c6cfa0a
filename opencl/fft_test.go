package opencl

import (
	"context"
	"slices"
	"testing"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// TestFFTTable runs FFT convolution of the table's cases and the large
// ones on the device: within fftconv's bound of the reference, the direct
// method's bits where the input holds NaN or Inf.
func TestFFTTable(t *testing.T) {
	dev := testDevice(t)
	cases := append(gputest.FFTTableCases(allCases()), gputest.FFTLargeCases()...)
	failures := gputest.SpreadCheck(cases, 2, func(c enginetest.Case) (nd.Array, error) {
		return gputest.Run(c, func(p *nd.Problem) (*FFTEngine, error) { return NewFFT(p, testOptions()) })
	}, gputest.CheckFFT)
	for _, f := range failures {
		t.Error(f)
	}
	t.Logf("%d cases on %s; program cache %+v", len(cases), dev.Info().Name, dev.CacheStats())
}

// TestFFTBatches caps the blocks per batch, so that they run in many
// batches (the last one partial), with 32- and 64-bit indices, and on
// device buffers.
func TestFFTBatches(t *testing.T) {
	testDevice(t)
	c := gputest.FFTBatchCase()
	in := c.Input
	p, err := c.Spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	opt := testOptions()
	fftMaxBatch = 5
	defer func() { fftMaxBatch = 0 }()
	e, err := NewFFT(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.plan.Batches < 3 {
		t.Fatalf("%d batches of %d blocks: the budget did not split them", e.plan.Batches, e.plan.Batch)
	}
	dst, _ := nd.New(p.Out, p.FullShape()...)
	if err := e.Execute(context.Background(), dst, in); err != nil {
		t.Fatal(err)
	}
	if msg := gputest.CheckFFT(c, dst); msg != "" {
		t.Fatalf("%d batches of %d blocks: %s", e.plan.Batches, e.plan.Batch, msg)
	}
	// The same with 64-bit indices: the same arithmetic, the same bits.
	fftIndex64 = true
	wide, err := NewFFT(p, opt)
	fftIndex64 = false
	if err != nil {
		t.Fatal(err)
	}
	defer wide.Close()
	if !slices.Contains(wide.plan.Defines, "IDX32=0") || !slices.Contains(e.plan.Defines, "IDX32=1") {
		t.Fatalf("index widths: %v, %v", e.plan.Defines, wide.plan.Defines)
	}
	dst64, _ := nd.New(p.Out, p.FullShape()...)
	if err := wide.Execute(context.Background(), dst64, in); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dst.Bytes(), dst64.Bytes()) {
		t.Error("64-bit indices give other bits than 32-bit ones")
	}
	// The same on device buffers.
	src, err := e.Device().AllocCopy(in.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Free()
	out, err := e.Device().Alloc(len(dst.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	if err := e.ExecuteBuffers(context.Background(), out, src); err != nil {
		t.Fatal(err)
	}
	if e.KernelTime() <= 0 {
		t.Error("no kernel time")
	}
	q, err := e.Device().NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	again, _ := nd.New(p.Out, p.FullShape()...)
	if err := out.Read(q, again.Bytes(), 0); err != nil {
		t.Fatal(err)
	}
	if msg := gputest.CheckFFT(c, again); msg != "" {
		t.Fatalf("on device buffers: %s", msg)
	}
}

// TestFFTChunks: an input and output larger than the memory budget leaves
// them run chunk by chunk.
func TestFFTChunks(t *testing.T) {
	testDevice(t)
	c := gputest.FFTBatchCase()
	p, err := c.Spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	inBytes, outBytes := fftBytes(p)
	opt := testOptions()
	opt.MemoryBudget = (inBytes + outBytes) / 2
	e, err := NewFFT(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if chunks, err := chunk.Split(p, chunk.Budget{Bytes: e.dataBudget}); err != nil || len(chunks) < 2 {
		t.Fatalf("%d chunks (%v): the budget does not split the problem", len(chunks), err)
	}
	dst, _ := nd.New(p.Out, p.FullShape()...)
	if err := e.Execute(context.Background(), dst, c.Input); err != nil {
		t.Fatal(err)
	}
	if msg := gputest.CheckFFT(c, dst); msg != "" {
		t.Fatal(msg)
	}
}

// TestFFTRows runs gputest.FFTRowCases in batches of an odd count of
// blocks (the last slot's imaginary parts stay zero) that leave the last
// batch partial (gputest.FFTRowBatch): within fftconv's bound of the
// reference.
func TestFFTRows(t *testing.T) {
	testDevice(t)
	failures := gputest.FFTRowFailures(func(c enginetest.Case, batch int, tuning kernels.Tuning) (nd.Array, error) {
		fftMaxBatch = batch
		defer func() { fftMaxBatch = 0 }()
		opt := testOptions()
		opt.Tuning = tuning
		return gputest.Run(c, func(p *nd.Problem) (*FFTEngine, error) { return NewFFT(p, opt) })
	})
	for _, f := range failures {
		t.Error(f)
	}
}
