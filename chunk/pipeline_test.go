package chunk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// TestGatherAndCopy: spread over several goroutines, with shares cutting
// runs, Gather and Copy give the serial copies' bytes.
func TestGatherAndCopy(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(5))
	rng := rand.New(rand.NewPCG(3, 4))
	p := problem(t, nd.Spec{Shape: []int{3, 700, 500}, In: nd.Float32, Border: nd.Mirror,
		Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 3, 5, 3)}})
	src := enginetest.RandomArray(rng, nd.Float32, 3, 700, 500)
	chunks, err := chunk.Split(p, chunk.Budget{OutElems: 350 * 500})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range chunks {
		runs := 0
		want := make([]byte, 4*c.InElems)
		c.Runs(func(from, to, n int) {
			runs++
			copy(want[4*to:4*(to+n)], src.Bytes()[4*from:4*(from+n)])
		})
		got := make([]byte, len(want))
		c.Gather(got, src.Bytes(), 4)
		if !bytes.Equal(got, want) {
			t.Errorf("chunk %d (%d runs): Gather differs from the runs copied one by one", i, runs)
		}
		if runs < 3 {
			t.Errorf("chunk %d has %d runs, want several", i, runs)
		}
	}
	big := src.Bytes()
	got := make([]byte, len(big)-3)
	chunk.Copy(got, big[3:])
	if !bytes.Equal(got, big[3:]) {
		t.Error("Copy differs from copy")
	}
}

func TestOverlap(t *testing.T) {
	ms := time.Millisecond
	spans := []chunk.Span{
		{Chunk: 0, Stage: chunk.CopyIn, Start: 0, End: 4 * ms},
		{Chunk: 0, Stage: chunk.Kernel, Start: 4 * ms, End: 5 * ms},
		{Chunk: 1, Stage: chunk.CopyIn, Start: 4 * ms, End: 8 * ms},
		{Chunk: 0, Stage: chunk.CopyOut, Start: 5 * ms, End: 9 * ms},
	}
	// kernel 0 ∥ copy-in 1: 1 ms; copy-in 1 ∥ copy-out 0: 3 ms.
	if got := chunk.Overlap(spans); got != 4*ms {
		t.Errorf("Overlap = %v, want 4ms", got)
	}
	var tl chunk.Timeline
	tl.Add(spans...)
	if len(tl.Spans()) != 4 || tl.Spans()[2].Stage.String() != "copy-in" {
		t.Errorf("timeline %v", tl.Spans())
	}
	tl.Reset()
	if len(tl.Spans()) != 0 {
		t.Error("Reset kept spans")
	}
}

// TestPieces: a small problem that fits is one chunk; a large one that
// fits is cut into about PiecesPerProblem pieces; a forced piece size and
// a budget below the problem split it, each slot within budget/depth.
func TestPieces(t *testing.T) {
	small := problem(t, nd.Spec{Shape: []int{64, 64}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3, 3}, Weights: make([]float64, 9)}}})
	large := problem(t, nd.Spec{Shape: []int{8192, 1024}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3, 3}, Weights: make([]float64, 9)}}})
	huge := problem(t, nd.Spec{Shape: []int{8192, 8192}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3, 3}, Weights: make([]float64, 9)}}})
	volume := problem(t, nd.Spec{Shape: []int{256, 2048, 2048}, In: nd.Uint8, Kernels: []nd.Kernel{{Shape: []int{7, 7, 7}, Weights: make([]float64, 343)}}})
	for _, tc := range []struct {
		name     string
		p        *nd.Problem
		budget   int64
		piece    int64
		min, max int
	}{
		{"small", small, 1 << 30, 0, 1, 1},
		{"large", large, 1 << 30, 0, chunk.PiecesPerProblem, chunk.PiecesPerProblem + 1},
		{"forced", small, 1 << 30, 4 << 10, 8, 12},
		{"budget", small, 3 * 8 << 10, 0, 4, 6},
		// 256 MiB in and out: pieces of at most MaxPieceBytes.
		{"capped", huge, 1 << 40, 0, 16, 17},
		// Planes of 4 MiB and a 6-plane halo: pieces of 16 halos, 45 planes.
		{"halo", volume, 1 << 40, 0, 5, 6},
	} {
		chunks, err := chunk.Pieces(tc.p, tc.budget, 3, tc.piece, nil)
		if err != nil || len(chunks) < tc.min || len(chunks) > tc.max {
			t.Errorf("%s: %d chunks, %v; want %d to %d", tc.name, len(chunks), err, tc.min, tc.max)
		}
	}
}

// TestPipelineOrder: each slot is drained before it takes the next chunk,
// every chunk is drained once, in order, after the last queue; an error
// aborts and names its chunk; cancellation aborts and is the context's.
func TestPipelineOrder(t *testing.T) {
	var log []string
	var aborted int
	pl := chunk.Pipeline{
		Depth: 3,
		Queue: func(slot, i int) error {
			log = append(log, fmt.Sprintf("q%d@%d", i, slot))
			if i == 99 {
				return errors.New("queue failed")
			}
			return nil
		},
		Drain: func(slot, i int) error {
			log = append(log, fmt.Sprintf("d%d@%d", i, slot))
			return nil
		},
		Abort: func() { aborted++ },
	}
	var progress counter
	if err := pl.Run(context.Background(), 5, &progress); err != nil {
		t.Fatal(err)
	}
	want := "[q0@0 q1@1 q2@2 d0@0 q3@0 d1@1 q4@1 d2@2 d3@0 d4@1]"
	if got := fmt.Sprint(log); got != want || aborted != 0 || progress.done.Load() != 5 || progress.total.Load() != 5 {
		t.Errorf("order %s, want %s; aborted %d; progress %d/%d", got, want, aborted, progress.done.Load(), progress.total.Load())
	}
	log = nil
	if err := pl.Run(context.Background(), 100, nil); err == nil || err.Error() != "chunk 100 of 100: queue failed" || aborted != 1 {
		t.Errorf("failing queue: %v, aborted %d", err, aborted)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pl.Drain = func(slot, i int) error {
		cancel()
		return nil
	}
	if err := pl.Run(ctx, 10, nil); !errors.Is(err, context.Canceled) || aborted != 2 {
		t.Errorf("cancelled: %v, aborted %d", err, aborted)
	}
}
