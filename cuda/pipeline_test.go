package cuda

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/nd"
)

// smallPieces makes problems of a few kilobytes run in pieces of about a
// kilobyte.
const smallPieces = 1 << 10

// TestEnginePipelined runs problems that fit the device in many pieces
// through the pipeline — every border and output mode, direct and
// separable, integer and float inputs — twice on one engine, against the
// CPU engine's bits, with the timeline (each chunk's copy in, kernels and
// copy out in that order on the GPU's clock) and progress
// (gputest.CheckPipelined).
func TestEnginePipelined(t *testing.T) {
	testDevice(t)
	borders := []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant}
	modes := []nd.Mode{nd.Same, nd.Valid, nd.Full, nd.Valid, nd.Full, nd.Same, nd.Full, nd.Same, nd.Valid}
	for _, c := range gputest.PipelineCases(16, borders, modes) {
		gputest.CheckPipelined(t, c, pieces, func(p *nd.Problem, method string, tl *chunk.Timeline, progress nd.Progress) (*Engine, error) {
			newFn := NewDirect
			if method == "separable" {
				newFn = NewSeparable
			}
			return newFn(p, EngineOptions{PieceBytes: smallPieces, Timeline: tl, Progress: progress})
		})
	}
}

// pieces is how many chunks an engine cuts its problem into.
func pieces(e *Engine) (int, error) {
	chunks, err := e.chunks()
	return len(chunks), err
}

// TestEnginePipelinedCancel: a run cancelled between chunks returns the
// context's error, and the engine then runs the problem again correctly.
func TestEnginePipelinedCancel(t *testing.T) {
	testDevice(t)
	rng := rand.New(rand.NewPCG(16, 6))
	spec := nd.Spec{Shape: []int{40, 21}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 5, 3)}}
	c := enginetest.Case{Name: "cancel", Spec: spec, Input: enginetest.RandomArray(rng, nd.Float32, 40, 21)}
	gputest.CheckCancel(t, c, func(p *nd.Problem, progress nd.Progress) (*Engine, error) {
		return NewDirect(p, EngineOptions{PieceBytes: smallPieces, Progress: progress})
	})
}

// TestEnginePipelineOverlap runs seed 002's problem (1500², a 21-tap
// separable blur) and an 8192² image with a 7×7 kernel from host memory in
// the default pieces, checks the bits against the CPU engine's, and logs
// the timeline's summary: how long copies and kernels overlapped, and the
// rate data moved at (a measurement for the device run, not a timed
// assertion).
func TestEnginePipelineOverlap(t *testing.T) {
	testDevice(t)
	rng := rand.New(rand.NewPCG(16, 7))
	for _, w := range []struct {
		shape  []int
		kernel nd.Kernel
	}{
		{[]int{1500, 1500}, enginetest.RandomFactors(rng, 21, 21)},
		{[]int{8192, 8192}, enginetest.RandomKernel(rng, false, 7, 7)},
	} {
		spec := nd.Spec{Shape: w.shape, In: nd.Float32, Kernels: []nd.Kernel{w.kernel}, Border: nd.Constant}
		c := enginetest.Case{Name: fmt.Sprint(w.shape), Spec: spec, Input: enginetest.RandomArray(rng, nd.Float32, w.shape...)}
		p, _ := spec.Normalize()
		method, newFn := "direct", NewDirect
		if p.Separable() {
			method, newFn = "separable", NewSeparable
		}
		var timeline chunk.Timeline
		e, err := newFn(p, EngineOptions{Timeline: &timeline})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := nd.New(p.Out, p.FullShape()...)
		for range 2 { // the first run compiles and allocates
			timeline.Reset()
			start := time.Now()
			if err := e.Execute(context.Background(), got, c.Input); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s: %v on the wall clock", c.Name, method, time.Since(start))
		}
		if msg := gputest.SameBitsAsCPU(c, method, got); msg != "" {
			t.Errorf("%s: %s", c.Name, msg)
		}
		spans := timeline.Spans()
		chunks := len(spans) / 3
		gputest.CheckTimeline(t, c.Name, spans, chunks)
		if len(spans) > 0 {
			total := spans[len(spans)-1].End
			bytes := float64(len(c.Input.Bytes()) + len(got.Bytes()))
			t.Logf("%s %s: %d chunks, %v on the GPU, copies and kernels overlapping %v, %.1f GB/s in and out",
				c.Name, method, chunks, total, chunk.Overlap(spans), bytes/total.Seconds()/1e9)
		}
		e.Close()
	}
}

// TestGPUTransfers measures pinned host↔device copies each way and both
// at once (logged; the bench reports them beside S002).
func TestGPUTransfers(t *testing.T) {
	d := testDevice(t)
	tr, err := MeasureTransfers(d, 64<<20, 5)
	if err != nil {
		t.Fatal(err)
	}
	if tr.HtoDGBps <= 0 || tr.DtoHGBps <= 0 || tr.BothGBps <= 0 {
		t.Errorf("implausible %+v", tr)
	}
	t.Logf("pinned 64 MiB: host→device %.1f GB/s, device→host %.1f GB/s, both at once %.1f GB/s", tr.HtoDGBps, tr.DtoHGBps, tr.BothGBps)
}
