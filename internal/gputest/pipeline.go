package gputest

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
	"github.com/ndconv/ndconv/nd"
)

// Progress records the last progress report.
type Progress struct{ Done, Total atomic.Int64 }

// Report implements nd.Progress.
func (p *Progress) Report(done, total int64) { p.Done.Store(done); p.Total.Store(total) }

// cancelAfter cancels its context once n chunks are reported done.
type cancelAfter struct {
	n      atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Report(done, total int64) {
	if done >= c.n.Load() {
		c.cancel()
	}
}

// CheckCancel runs case c (a problem its engine runs in several chunks)
// on the engine newEngine makes with the progress it is given, cancelling
// the run once two chunks are done: the run must return the context's
// error, and the same engine then run the case twice more to the CPU
// engine's direct bits.
func CheckCancel[E Engine](t testing.TB, c enginetest.Case, newEngine func(*nd.Problem, nd.Progress) (E, error)) {
	t.Helper()
	p, err := c.Spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := &cancelAfter{cancel: cancel}
	stop.n.Store(2)
	e, err := newEngine(p, stop)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	got, _ := nd.New(p.Out, p.FullShape()...)
	if err := e.Execute(ctx, got, c.Input); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	stop.n.Store(1 << 62)
	if err := e.Execute(context.Background(), got, c.Input); err != nil {
		t.Fatal(err)
	}
	if msg := SameBitsAsCPU(c, "direct", got); msg != "" {
		t.Error(msg)
	}
	again, _ := nd.New(p.Out, p.FullShape()...)
	if err := e.Execute(context.Background(), again, c.Input); err != nil || !bytes.Equal(again.Bytes(), got.Bytes()) {
		t.Errorf("a third run: %v, or other bits", err)
	}
}

// PipelineCases are problems of a few kilobytes (40×21) for a pipeline
// cut into pieces of about a kilobyte, one per border and mode paired in
// order (the shorter list repeating): direct on float32 data and
// separable on uint8 data in turn, origins −1, 0 and 1 in turn; and a
// 3-D volume with a bank of two kernels.
func PipelineCases(seed uint64, borders []nd.Border, modes []nd.Mode) []enginetest.Case {
	rng := rand.New(rand.NewPCG(seed, 3))
	var cases []enginetest.Case
	for i := range max(len(borders), len(modes)) {
		b, mode := borders[i%len(borders)], modes[i%len(modes)]
		shape := []int{40, 21}
		kernel, in := enginetest.RandomKernel(rng, true, 5, 3), nd.Float32
		if i%2 == 1 {
			kernel, in = enginetest.RandomFactors(rng, 4, 5), nd.Uint8
		}
		spec := nd.Spec{Shape: shape, In: in, Out: nd.Float32, Kernels: []nd.Kernel{kernel}, Border: b, CVal: -1.5, Mode: mode, Origin: []int{i%3 - 1}}
		cases = append(cases, enginetest.Case{Name: fmt.Sprintf("%v/%v/%v", b, mode, in), Spec: spec, Input: enginetest.RandomArray(rng, in, shape...)})
	}
	// A volume with a bank of two kernels, whose chunks (at a kilobyte)
	// cut along axis 1 within planes, the bank interleaved in the output.
	shape := []int{6, 9, 7}
	spec := nd.Spec{Shape: shape, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, true, 3, 3, 3), enginetest.RandomKernel(rng, true, 3, 3, 3)},
		Border: borders[0], Mode: nd.Full}
	return append(cases, enginetest.Case{Name: fmt.Sprintf("3-D/bank2/%v/full", borders[0]), Spec: spec, Input: enginetest.RandomArray(rng, nd.Float32, shape...)})
}

// CheckPipelined runs case c twice on one engine newEngine makes with a
// timeline and a progress (the engine's pipeline and launches kept between
// the runs), direct or separable as the problem allows, and checks each
// run against the CPU engine's bits, the progress against the chunks the
// engine cuts the problem into (chunks, at least four), and the timeline
// (CheckTimeline).
func CheckPipelined[E Engine](t testing.TB, c enginetest.Case, chunks func(E) (int, error),
	newEngine func(p *nd.Problem, method string, tl *chunk.Timeline, progress nd.Progress) (E, error)) {
	t.Helper()
	p, err := c.Spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	method := "direct"
	if p.Separable() {
		method = "separable"
	}
	var timeline chunk.Timeline
	var progress Progress
	e, err := newEngine(p, method, &timeline, &progress)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	n, err := chunks(e)
	if err != nil || n < 4 {
		t.Fatalf("%s: %d chunks, %v; want several", c.Name, n, err)
	}
	for run := range 2 {
		got, _ := nd.New(p.Out, p.FullShape()...)
		if err := e.Execute(context.Background(), got, c.Input); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if msg := SameBitsAsCPU(c, method, got); msg != "" {
			t.Errorf("%s, run %d (%d chunks): %s", c.Name, run, n, msg)
		}
	}
	CheckTimeline(t, c.Name, timeline.Spans(), 2*n)
	if progress.Done.Load() != int64(n) || progress.Total.Load() != int64(n) {
		t.Errorf("%s: progress %d/%d, want %d/%d", c.Name, progress.Done.Load(), progress.Total.Load(), n, n)
	}
}

// CheckTimeline checks that a timeline holds the three stages of each of
// runs chunks, and that on the device's clock each chunk's kernels start
// after its copy in ends and its copy out starts after its kernels end
// (within a microsecond: CUDA events resolve half of one).
func CheckTimeline(t testing.TB, name string, spans []chunk.Span, runs int) {
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
