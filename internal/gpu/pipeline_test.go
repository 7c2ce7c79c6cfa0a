package gpu_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/internal/gputest"
	"github.com/ndconv/ndconv/nd"
)

// smallPieces makes problems of a few kilobytes run in pieces of about a
// kilobyte.
const smallPieces = 1 << 10

// TestEnginePipelined runs problems that fit the device in many pieces
// through the pipeline — every border and output mode (three cases where
// the target samples: it builds each geometry anew), direct and
// separable, integer and float inputs — twice on one engine, against the
// CPU engine's bits, with the timeline (each chunk's copy in, kernels and
// copy out in that order on the device's clock) and progress
// (gputest.CheckPipelined).
func TestEnginePipelined(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		borders := []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant}
		modes := []nd.Mode{nd.Same, nd.Valid, nd.Full, nd.Valid, nd.Full, nd.Same, nd.Full, nd.Same, nd.Valid}
		if tg.Sample {
			borders, modes = []nd.Border{nd.Reflect, nd.Wrap, nd.Constant}, []nd.Mode{nd.Same, nd.Valid, nd.Full}
		}
		for _, c := range gputest.PipelineCases(16, borders, modes) {
			gputest.CheckPipelined(t, c, gpu.Pieces, func(p *nd.Problem, method string, tl *chunk.Timeline, progress nd.Progress) (*gpu.Engine, error) {
				make := gpu.NewDirect
				if method == "separable" {
					make = gpu.NewSeparable
				}
				return engineOn(tg, make, p, gpu.Options{PieceBytes: smallPieces, Timeline: tl, Progress: progress})
			})
		}
	})
}

// TestEnginePipelinedCancel: a run cancelled between chunks returns the
// context's error, and the engine then runs the problem again correctly.
func TestEnginePipelinedCancel(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		rng := rand.New(rand.NewPCG(16, 6))
		spec := nd.Spec{Shape: []int{40, 21}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 5, 3)}}
		c := enginetest.Case{Name: "cancel", Spec: spec, Input: enginetest.RandomArray(rng, nd.Float32, 40, 21)}
		gputest.CheckCancel(t, c, func(p *nd.Problem, progress nd.Progress) (*gpu.Engine, error) {
			return engineOn(tg, gpu.NewDirect, p, gpu.Options{PieceBytes: smallPieces, Progress: progress})
		})
	})
}

// TestEnginePipelineOverlap runs seed 002's problem (1500², a 21-tap
// separable blur) and an 8192² image with a 7×7 kernel from host memory in
// the default pieces, checks the bits against the CPU engine's, and logs
// the timeline's summary: how long copies and kernels overlapped, and the
// rate data moved at (a measurement for the device run, not a timed
// assertion). Not on PoCL, where it would take minutes.
func TestEnginePipelineOverlap(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		if tg.PoCL || tg.Short {
			t.Skip("a GPU's measurement")
		}
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
			method, make := methodOf(p)
			var timeline chunk.Timeline
			e, err := engineOn(tg, make, p, gpu.Options{Timeline: &timeline})
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
				moved := float64(len(c.Input.Bytes()) + len(got.Bytes()))
				t.Logf("%s %s: %d chunks, %v on the device, copies and kernels overlapping %v, %.1f GB/s in and out",
					c.Name, method, chunks, total, chunk.Overlap(spans), moved/total.Seconds()/1e9)
			}
			e.Close()
		}
	})
}

// inBacking places a copy of a at element offset off of a larger backing
// array whose other bytes are guard, and returns the view and the backing.
func inBacking(a nd.Array, off int) (view, backing nd.Array) {
	size := a.DType().Size()
	n := len(a.Bytes()) / size
	backing, _ = nd.New(a.DType(), off+n+13)
	guard(backing.Bytes())
	view = nd.Array{Shape: slices.Clone(a.Shape), Data: nd.SliceData(backing.Data, off, off+n)}
	copy(view.Bytes(), a.Bytes())
	return view, backing
}

// guard fills b with the guard byte.
func guard(b []byte) {
	for i := range b {
		b[i] = 0xa5
	}
}

// guarded reports whether the bytes of backing outside view are all guard.
func guarded(backing, view nd.Array) bool {
	b, v := backing.Bytes(), view.Bytes()
	lo := int(uintptr(unsafe.Pointer(&v[0])) - uintptr(unsafe.Pointer(&b[0])))
	for i, x := range b {
		if (i < lo || i >= lo+len(v)) && x != 0xa5 {
			return false
		}
	}
	return true
}

// registrar skips t where the target cannot register host memory (only
// CUDA can).
func registrar(t *testing.T, tg *Target) gpu.Device {
	t.Helper()
	if _, ok := tg.Device().(gpu.Registrar); !ok {
		t.Skipf("%s registers no host memory", tg.Name)
	}
	return tg.Device()
}

// TestEngineRegistered runs the pipeline cases (every border and output
// mode, direct on float32 and separable on uint8, a 3-D bank) in pieces
// of a kilobyte from arrays at odd element offsets in larger backing
// arrays (rows of 21 elements: no run is aligned), three times on one
// engine that registers arrays of any size: the first run copies through
// staging, the second registers src and dst, the third finds them in the
// cache; with every input run copied straight from src, only the longer
// ones, and none. Every run must give the CPU engine's bits, leave the
// bytes around dst untouched and record a well-ordered timeline; src and
// dst must be registered from the second run on (so that it is the
// registered path that is tested), no registration in use after a run,
// and none left after Close. An engine on the staging path gives the same
// bytes, and a run cancelled after two chunks leaves the registrations
// idle.
func TestEngineRegistered(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		d := registrar(t, tg)
		borders := []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant}
		modes := []nd.Mode{nd.Same, nd.Valid, nd.Full, nd.Valid, nd.Full, nd.Same, nd.Full, nd.Same, nd.Valid}
		for i, c := range gputest.PipelineCases(17, borders, modes) {
			p, err := c.Spec.Normalize()
			if err != nil {
				t.Fatal(err)
			}
			method, make := methodOf(p)
			src, _ := inBacking(c.Input, 1+2*(i%5))
			c.Input = src
			out, _ := nd.New(p.Out, p.FullShape()...)
			dst, dstBacking := inBacking(out, 3+i%4)
			for _, directMin := range []int{1, 64, math.MaxInt} {
				name := fmt.Sprintf("%s, runs of %d bytes or more straight", c.Name, directMin)
				var timeline chunk.Timeline
				e, err := engineOn(tg, make, p, gpu.Options{PieceBytes: smallPieces, Timeline: &timeline})
				if err != nil {
					t.Fatal(err)
				}
				gpu.SetDirectCopies(e, 1, directMin)
				n, _ := gpu.Pieces(e)
				for run := range 3 {
					timeline.Reset()
					guard(dstBacking.Bytes())
					if err := e.Execute(context.Background(), dst, src); err != nil {
						t.Fatalf("%s, run %d: %v", name, run, err)
					}
					if msg := gputest.SameBitsAsCPU(c, method, dst); msg != "" {
						t.Errorf("%s, run %d (%d chunks): %s", name, run, n, msg)
					}
					if !guarded(dstBacking, dst) {
						t.Errorf("%s, run %d: bytes around the output changed", name, run)
					}
					gputest.CheckTimeline(t, name, timeline.Spans(), n)
					srcIn, idle, _ := gpu.Registered(d, src.Bytes())
					dstIn, _, failed := gpu.Registered(d, dst.Bytes())
					if run > 0 && (!srcIn || !dstIn) || !idle {
						t.Errorf("%s, run %d: src registered %v, dst %v, all idle %v (the last registration refused: %v)", name, run, srcIn, dstIn, idle, failed)
					}
				}
				e.Close()
				if srcIn, _, _ := gpu.Registered(d, src.Bytes()); srcIn {
					t.Errorf("%s: src still registered after Close", name)
				}
			}
			staged, err := engineOn(tg, make, p, gpu.Options{PieceBytes: smallPieces, Staging: true})
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(dst.Bytes())
			if err := staged.Execute(context.Background(), dst, src); err != nil || !bytes.Equal(dst.Bytes(), want) {
				t.Errorf("%s: the staging path gives other bytes (%v)", c.Name, err)
			}
			staged.Close()
		}
		rng := rand.New(rand.NewPCG(16, 8))
		spec := nd.Spec{Shape: []int{40, 21}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 5, 3)}, Border: nd.Mirror}
		src, _ := inBacking(enginetest.RandomArray(rng, nd.Float32, 40, 21), 5)
		c := enginetest.Case{Name: "cancel-registered", Spec: spec, Input: src}
		gputest.CheckCancel(t, c, func(p *nd.Problem, progress nd.Progress) (*gpu.Engine, error) {
			e, err := engineOn(tg, gpu.NewDirect, p, gpu.Options{PieceBytes: smallPieces, Progress: progress})
			if e != nil {
				gpu.SetDirectCopies(e, 1, 32<<10)
			}
			return e, err
		})
		if srcIn, idle, _ := gpu.Registered(d, src.Bytes()); srcIn || !idle {
			t.Errorf("after the cancelled engine's Close: src registered %v, all idle %v", srcIn, idle)
		}
	})
}

// TestEngineRegisteredTransfers runs seed 002's problem (1500² float32, a
// 21-tap separable blur, host memory in and out every round) on the
// staging path and on the registered path, 20 rounds each after two to
// warm up (and register), and checks both against the CPU engine's bits.
// It logs each path's time per round, the rate data moved at (in and out
// counted) and how long copies and kernels overlapped in the last round:
// a measurement for the device run, not a timed assertion.
func TestEngineRegisteredTransfers(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		d := registrar(t, tg)
		rng := rand.New(rand.NewPCG(16, 9))
		spec := nd.Spec{Shape: []int{1500, 1500}, In: nd.Float32, Kernels: []nd.Kernel{enginetest.RandomFactors(rng, 21, 21)}, Border: nd.Constant}
		c := enginetest.Case{Name: "S002", Spec: spec, Input: enginetest.RandomArray(rng, nd.Float32, 1500, 1500)}
		p, _ := spec.Normalize()
		const rounds = 20
		for _, staging := range []bool{true, false} {
			var timeline chunk.Timeline
			e, err := engineOn(tg, gpu.NewSeparable, p, gpu.Options{Staging: staging, Timeline: &timeline})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := nd.New(p.Out, p.FullShape()...)
			for range 2 {
				if err := e.Execute(context.Background(), got, c.Input); err != nil {
					t.Fatal(err)
				}
			}
			timeline.Reset()
			start := time.Now()
			for range rounds {
				if err := e.Execute(context.Background(), got, c.Input); err != nil {
					t.Fatal(err)
				}
			}
			perRound := time.Since(start) / rounds
			path := "staging"
			if !staging {
				path = "registered"
				srcIn, _, _ := gpu.Registered(d, c.Input.Bytes())
				dstIn, _, failed := gpu.Registered(d, got.Bytes())
				if !srcIn || !dstIn {
					t.Errorf("after warming up: src registered %v, dst %v (the last registration refused: %v)", srcIn, dstIn, failed)
				}
			}
			if msg := gputest.SameBitsAsCPU(c, "separable", got); msg != "" {
				t.Errorf("%s path: %s", path, msg)
			}
			moved := float64(len(c.Input.Bytes()) + len(got.Bytes()))
			n, _ := gpu.Pieces(e)
			spans := timeline.Spans()
			gputest.CheckTimeline(t, path, spans, rounds*n)
			var overlap time.Duration
			if len(spans) >= 3*n {
				overlap = chunk.Overlap(spans[len(spans)-3*n:]) // the last round's
			}
			t.Logf("%s: %v a round, %.1f GB/s in and out; %d chunks, the last round's copies and kernels overlapping %v",
				path, perRound, moved/perRound.Seconds()/1e9, n, overlap)
			e.Close()
		}
	})
}
