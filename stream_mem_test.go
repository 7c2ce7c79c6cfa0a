package ndconv_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// TestExecuteChunks1DMemory streams a 1-D signal, whose rows along axis 0
// are its elements: every chunk stays within the budget, what the whole
// run allocates is a few budgets (not a multiple of the signal: chunks
// that listed each row they read held 8 bytes per element, 2.1 GB for the
// CLI's 2²⁷ float32), and the chunks equal Execute bit for bit.
func TestExecuteChunks1DMemory(t *testing.T) {
	const n, budget = 1 << 21, 256 << 10
	rng := rand.New(rand.NewPCG(27, 28))
	src := enginetest.RandomArray(rng, nd.Float32, n)
	for _, border := range []nd.Border{nd.Reflect, nd.Constant} {
		p, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, nd.Float32,
			// Two workers: each holds scratch of its own (a 16-core
			// machine's 16 took 1.2–1.8 MB here), which is not what this
			// test bounds.
			ndconv.Options{Device: "cpu", Border: border, Workers: 2}, enginetest.RandomKernel(rng, false, 9))
		if err != nil {
			t.Fatal(err)
		}
		want, err := nd.New(nd.Float32, n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Execute(context.Background(), want, src); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, n)
		chunks, largest := 0, 0
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err = p.ExecuteChunks(context.Background(), src, budget, func(off int, out ndconv.Array) error {
			chunks++
			largest = max(largest, out.Len())
			copy(got[off:], out.Data.([]float32))
			return nil
		})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if largest*4 > budget || chunks < n*8/budget {
			t.Errorf("%v: %d chunks, the largest %d bytes of output, for a budget of %d", border, chunks, largest*4, budget)
		}
		// Two output buffers of one chunk each, the engine's scratch and
		// the chunks' bookkeeping: well below the 8 MiB signal.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*budget {
			t.Errorf("%v: ExecuteChunks allocated %d bytes for a budget of %d", border, alloc, budget)
		}
		if !slices.Equal(got, want.Data.([]float32)) {
			t.Errorf("%v: the chunks differ from Execute", border)
		}
	}
}

// TestExecuteChunksCPUBudget streams a volume on the CPU: its chunks stay
// within the budget but for what two output planes with their halo need,
// and what the run allocates is a few budgets. Chunks raised to hold 8
// output planes per halo plane (for a GPU's copies) held 820 MiB for the
// CLI's 64 MiB on 32×2048×2048 float32 with a 3³ kernel; on the CPU the
// chunks read the input in place, and a halo plane read twice costs no
// copy.
func TestExecuteChunksCPUBudget(t *testing.T) {
	const budget = 1 << 20
	rng := rand.New(rand.NewPCG(29, 30))
	src := enginetest.RandomArray(rng, nd.Float32, 12, 256, 256) // planes of 256 KiB
	p, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, nd.Float32, ndconv.Options{Device: "cpu", Workers: 2},
		enginetest.RandomKernel(rng, false, 3, 3, 3))
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.Execute(context.Background(), nd.Array{}, src)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, want.Len())
	largest := 0
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = p.ExecuteChunks(context.Background(), src, budget, func(off int, out ndconv.Array) error {
		largest = max(largest, out.Len())
		copy(got[off:], out.Data.([]float32))
		return nil
	})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	// Two output planes and the four input planes they read: 1.5 MiB.
	if plane := 256 * 256; largest > 2*plane {
		t.Errorf("a chunk of %d output planes, want at most 2", largest/plane)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*budget {
		t.Errorf("ExecuteChunks allocated %d bytes for a budget of %d", alloc, budget)
	}
	if !slices.Equal(got, want.Data.([]float32)) {
		t.Error("the chunks differ from Execute")
	}
}
