package opencl

import (
	"fmt"
	"math/rand/v2"
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
			// Input and output rows only: the separable method's two
			// passes fuse in septile.cl here, with no temporary.
			row := int64(p.InShape[1]*p.In.Size() + p.OutShape[1]*p.Out.Size())
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

// TestEnginePipelined runs problems that fit the device in pieces through
// the pipeline (pinned staging, copies in and out on queues of their own,
// several chunks in flight), twice on one engine, against the CPU engine's
// bits, with the timeline and progress (gputest.CheckPipelined).
// TestEngineChunks runs every border through the pipeline under a tiny
// budget; here three cases cover the modes, both methods and both
// accumulators' input types, since PoCL builds each geometry anew.
func TestEnginePipelined(t *testing.T) {
	testDevice(t)
	for _, c := range gputest.PipelineCases(16, []nd.Border{nd.Reflect, nd.Wrap, nd.Constant}, []nd.Mode{nd.Same, nd.Valid, nd.Full}) {
		gputest.CheckPipelined(t, c, pieces, func(p *nd.Problem, method string, tl *chunk.Timeline, progress nd.Progress) (*Engine, error) {
			newFn := NewDirect
			if method == "separable" {
				newFn = NewSeparable
			}
			return newFn(p, EngineOptions{Platform: testOptions().Platform, Device: testOptions().Device, PieceBytes: smallPieces, Timeline: tl, Progress: progress})
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
	rng := rand.New(rand.NewPCG(16, 4))
	spec := nd.Spec{Shape: []int{40, 21}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 5, 3)}}
	c := enginetest.Case{Name: "cancel", Spec: spec, Input: enginetest.RandomArray(rng, nd.Float32, 40, 21)}
	gputest.CheckCancel(t, c, func(p *nd.Problem, progress nd.Progress) (*Engine, error) {
		return NewDirect(p, EngineOptions{Platform: testOptions().Platform, Device: testOptions().Device, PieceBytes: smallPieces, Progress: progress})
	})
}
