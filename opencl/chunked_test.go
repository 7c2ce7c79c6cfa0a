package opencl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/nd"
)

// TestEngineChunks forces a memory budget of a few rows so that problems
// run chunk by chunk — along axis 0, and along axis 1 within single rows —
// in every border rule, and checks each against the reference and the CPU
// engine's bits. Few geometries, since PoCL builds each chunk geometry's
// kernels anew.
func TestEngineChunks(t *testing.T) {
	testDevice(t)
	rng := rand.New(rand.NewPCG(8, 9))
	var cases []enginetest.Case
	var budgets []int64
	for i, b := range []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant} {
		mode := []nd.Mode{nd.Same, nd.Full, nd.Valid}[i%3]
		shape := []int{17, 9}
		kernel := enginetest.RandomKernel(rng, true, 5, 3)
		if i%2 == 1 {
			kernel = enginetest.RandomFactors(rng, 5, 3)
		}
		spec := nd.Spec{Shape: shape, In: nd.Uint16, Out: nd.Float32, Kernels: []nd.Kernel{kernel}, Border: b, CVal: 3.5, Mode: mode, Origin: []int{i%3 - 1}}
		cases = append(cases, enginetest.Case{Name: fmt.Sprintf("%v/%v/%v", b, mode, shape), Spec: spec, Input: enginetest.RandomArray(rng, nd.Uint16, shape...)})
		budgets = append(budgets, 0) // about 4 output rows: set below
	}
	// A 1-D signal splits along its one axis, a plane within rows.
	spec := nd.Spec{Shape: []int{40}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 7)}, Border: nd.Wrap, Mode: nd.Full}
	cases = append(cases, enginetest.Case{Name: "1-D/wrap/full", Spec: spec, Input: enginetest.RandomArray(rng, nd.Float32, 40)})
	budgets = append(budgets, 4*(6+12)+4*12)
	spec = nd.Spec{Shape: []int{5, 40}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 3, 5)}, Border: nd.Reflect}
	cases = append(cases, enginetest.Case{Name: "plane-in-rows/reflect", Spec: spec, Input: enginetest.RandomArray(rng, nd.Float32, 5, 40)})
	budgets = append(budgets, 4*3*20+4*16)
	spec = nd.Spec{Shape: []int{4, 30}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomFactors(rng, 3, 6)}, Border: nd.Constant, CVal: -2, Mode: nd.Full}
	cases = append(cases, enginetest.Case{Name: "plane-in-rows/constant/full/separable", Spec: spec, Input: enginetest.RandomArray(rng, nd.Float32, 4, 30)})
	budgets = append(budgets, 4*3*12+4*8+2*4*3*12)

	for i, c := range cases {
		p, _ := c.Spec.Normalize()
		method, newFn := "direct", NewDirect
		if p.Separable() {
			method, newFn = "separable", NewSeparable
		}
		if budgets[i] == 0 {
			row := int64(p.InShape[1]*p.In.Size() + p.OutShape[1]*p.Out.Size())
			if p.Separable() {
				row += int64(2 * 4 * max(p.InShape[1], p.OutShape[1]))
			}
			budgets[i] = row * int64(p.KShape[0]+3)
		}
		e, err := newFn(p, EngineOptions{Platform: testOptions().Platform, Device: testOptions().Device, MemoryBudget: budgets[i]})
		if err != nil {
			t.Fatal(err)
		}
		chunks, err := e.chunks()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		t.Logf("%s: %d chunks", c.Name, len(chunks))
		if len(chunks) < 3 {
			t.Errorf("%s: %d chunks, want several", c.Name, len(chunks))
		}
		got, err := gputest.Run(c, func(*nd.Problem) (*Engine, error) { return e, nil })
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if msg := c.Check(got, c.Want()); msg != "" {
			t.Errorf("%s (%d chunks): %s", c.Name, len(chunks), msg)
		}
		if msg := gputest.SameBitsAsCPU(c, method, got); msg != "" {
			t.Errorf("%s (%d chunks): %s", c.Name, len(chunks), msg)
		}
	}
}

// smallPieces makes problems of a few kilobytes run pipelined in pieces
// of about a kilobyte.
const smallPieces = 1 << 10

type progressCounter struct{ done, total atomic.Int64 }

func (c *progressCounter) Report(done, total int64) { c.done.Store(done); c.total.Store(total) }

// TestEnginePipelined runs problems that fit the device in pieces through
// the pipeline (pinned staging, copies in and out on queues of their own,
// several chunks in flight) — every border, every output mode, direct and
// separable — and checks each against the CPU engine's bits, twice on one
// engine (the pipeline kept between executions), with the timeline
// holding each chunk's three stages in order and progress counting chunks.
func TestEnginePipelined(t *testing.T) {
	testDevice(t)
	rng := rand.New(rand.NewPCG(16, 3))
	// TestEngineChunks runs every border through the pipeline under a tiny
	// budget; here three cases cover the modes, both methods and both
	// accumulators' input types.
	for i, b := range []nd.Border{nd.Reflect, nd.Wrap, nd.Constant} {
		mode := []nd.Mode{nd.Same, nd.Valid, nd.Full}[i]
		shape := []int{40, 21}
		kernel := enginetest.RandomKernel(rng, true, 5, 3)
		in, out := nd.Float32, nd.Float32
		if i%2 == 1 {
			kernel = enginetest.RandomFactors(rng, 4, 5)
			in = nd.Uint8
		}
		spec := nd.Spec{Shape: shape, In: in, Out: out, Kernels: []nd.Kernel{kernel}, Border: b, CVal: -1.5, Mode: mode, Origin: []int{i%3 - 1}}
		c := enginetest.Case{Name: fmt.Sprintf("%v/%v/%v", b, mode, in), Spec: spec, Input: enginetest.RandomArray(rng, in, shape...)}
		p, _ := spec.Normalize()
		method, newFn := "direct", NewDirect
		if p.Separable() {
			method, newFn = "separable", NewSeparable
		}
		var timeline chunk.Timeline
		var progress progressCounter
		e, err := newFn(p, EngineOptions{Platform: testOptions().Platform, Device: testOptions().Device, PieceBytes: smallPieces, Timeline: &timeline, Progress: &progress})
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
		spans := timeline.Spans()
		if len(spans) != 2*3*len(chunks) {
			t.Errorf("%s: %d spans for 2 runs of %d chunks", c.Name, len(spans), len(chunks))
		}
		for _, s := range spans {
			if s.End < s.Start || s.Start < 0 || s.Chunk < 0 || s.Chunk >= len(chunks) {
				t.Errorf("%s: span %+v", c.Name, s)
			}
		}
		if progress.done.Load() != int64(len(chunks)) || progress.total.Load() != int64(len(chunks)) {
			t.Errorf("%s: progress %d/%d, want %d/%d", c.Name, progress.done.Load(), progress.total.Load(), len(chunks), len(chunks))
		}
		if i == 0 {
			t.Logf("%s: %d chunks, copies and kernels overlapping %v of the first run's %v", c.Name, len(chunks),
				chunk.Overlap(spans[:3*len(chunks)]), spans[3*len(chunks)-1].End)
		}
		if err := e.Close(); err != nil {
			t.Errorf("%s: Close: %v", c.Name, err)
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
	rng := rand.New(rand.NewPCG(16, 4))
	spec := nd.Spec{Shape: []int{40, 21}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 5, 3)}}
	c := enginetest.Case{Name: "cancel", Spec: spec, Input: enginetest.RandomArray(rng, nd.Float32, 40, 21)}
	p, _ := spec.Normalize()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := &cancelAfter{n: 2, cancel: cancel}
	e, err := NewDirect(p, EngineOptions{Platform: testOptions().Platform, Device: testOptions().Device, PieceBytes: smallPieces, Progress: stop})
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
