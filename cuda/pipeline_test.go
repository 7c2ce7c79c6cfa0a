package cuda

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
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

type progressCounter struct{ done, total atomic.Int64 }

func (c *progressCounter) Report(done, total int64) { c.done.Store(done); c.total.Store(total) }

// TestEnginePipelined runs problems that fit the device in many pieces
// through the pipeline — every border and output mode, direct and
// separable, integer and float inputs — twice on one engine (the pipeline
// and its launches kept between executions), and checks each run against
// the CPU engine's bits, the timeline (each chunk's copy in, kernels and
// copy out, in that order on the GPU's clock) and progress.
func TestEnginePipelined(t *testing.T) {
	testDevice(t)
	rng := rand.New(rand.NewPCG(16, 5))
	n := 0
	for _, b := range []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant} {
		for _, mode := range []nd.Mode{nd.Same, nd.Valid, nd.Full} {
			n++
			shape := []int{40, 21}
			kernel := enginetest.RandomKernel(rng, true, 5, 3)
			in := nd.Float32
			if n%2 == 0 {
				kernel = enginetest.RandomFactors(rng, 4, 5)
				in = nd.Uint8
			}
			spec := nd.Spec{Shape: shape, In: in, Out: nd.Float32, Kernels: []nd.Kernel{kernel}, Border: b, CVal: -1.5, Mode: mode, Origin: []int{n%3 - 1}}
			c := enginetest.Case{Name: fmt.Sprintf("%v/%v/%v", b, mode, in), Spec: spec, Input: enginetest.RandomArray(rng, in, shape...)}
			p, err := spec.Normalize()
			if err != nil {
				t.Fatal(err)
			}
			method, newFn := "direct", NewDirect
			if p.Separable() {
				method, newFn = "separable", NewSeparable
			}
			var timeline chunk.Timeline
			var progress progressCounter
			e, err := newFn(p, EngineOptions{PieceBytes: smallPieces, Timeline: &timeline, Progress: &progress})
			if err != nil {
				t.Fatal(err)
			}
			chunks, err := e.chunks()
			if err != nil || len(chunks) < 4 {
				t.Fatalf("%s: %d chunks, %v; want several", c.Name, len(chunks), err)
			}
			for run := range 2 {
				got, _ := nd.New(p.Out, p.FullShape()...)
				if err := e.Execute(context.Background(), got, c.Input); err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				if msg := gputest.SameBitsAsCPU(c, method, got); msg != "" {
					t.Errorf("%s, run %d (%d chunks): %s", c.Name, run, len(chunks), msg)
				}
			}
			checkTimeline(t, c.Name, timeline.Spans(), 2*len(chunks))
			if progress.done.Load() != int64(len(chunks)) || progress.total.Load() != int64(len(chunks)) {
				t.Errorf("%s: progress %d/%d, want %d/%d", c.Name, progress.done.Load(), progress.total.Load(), len(chunks), len(chunks))
			}
			if err := e.Close(); err != nil {
				t.Errorf("%s: Close: %v", c.Name, err)
			}
		}
	}
}

// checkTimeline checks that a timeline holds the three stages of each of
// runs chunks, and that on the GPU's clock each chunk's kernels start after
// its copy in ends and its copy out starts after its kernels end (within
// the events' half-microsecond resolution).
func checkTimeline(t *testing.T, name string, spans []chunk.Span, runs int) {
	t.Helper()
	if len(spans) != 3*runs {
		t.Errorf("%s: %d spans for %d chunk runs", name, len(spans), runs)
		return
	}
	const slack = time.Microsecond
	for i := 0; i < len(spans); i += 3 {
		in, k, out := spans[i], spans[i+1], spans[i+2]
		if in.Stage != chunk.CopyIn || k.Stage != chunk.Kernel || out.Stage != chunk.CopyOut || in.Chunk != k.Chunk || k.Chunk != out.Chunk {
			t.Errorf("%s: spans %d–%d are %+v %+v %+v", name, i, i+2, in, k, out)
			return
		}
		for _, s := range spans[i : i+3] {
			if s.Start < -slack || s.End < s.Start-slack {
				t.Errorf("%s: span %+v", name, s)
			}
		}
		if k.Start < in.End-slack || out.Start < k.End-slack {
			t.Errorf("%s: chunk %d out of order: %+v %+v %+v", name, in.Chunk, in, k, out)
		}
	}
}

// cancelAfter cancels its context once n chunks are reported done.
type cancelAfter struct {
	n      int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Report(done, total int64) {
	if done >= c.n {
		c.cancel()
	}
}

// TestEnginePipelinedCancel: a run cancelled between chunks returns the
// context's error, and the engine then runs the problem again correctly.
func TestEnginePipelinedCancel(t *testing.T) {
	testDevice(t)
	rng := rand.New(rand.NewPCG(16, 6))
	spec := nd.Spec{Shape: []int{40, 21}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 5, 3)}}
	c := enginetest.Case{Name: "cancel", Spec: spec, Input: enginetest.RandomArray(rng, nd.Float32, 40, 21)}
	p, _ := spec.Normalize()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := &cancelAfter{n: 2, cancel: cancel}
	e, err := NewDirect(p, EngineOptions{PieceBytes: smallPieces, Progress: stop})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	got, _ := nd.New(p.Out, p.FullShape()...)
	if err := e.Execute(ctx, got, c.Input); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	stop.n = 1 << 30
	if err := e.Execute(context.Background(), got, c.Input); err != nil {
		t.Fatal(err)
	}
	if msg := gputest.SameBitsAsCPU(c, "direct", got); msg != "" {
		t.Error(msg)
	}
	again, _ := nd.New(p.Out, p.FullShape()...)
	if err := e.Execute(context.Background(), again, c.Input); err != nil || !bytes.Equal(again.Bytes(), got.Bytes()) {
		t.Errorf("a third run: %v, or other bits", err)
	}
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
		checkTimeline(t, c.Name, spans, chunks)
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
