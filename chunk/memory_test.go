package chunk_test

import (
	"runtime"
	"testing"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/nd"
)

// TestSplitBookkeepingBounded: what Split keeps per chunk does not grow
// with the rows a chunk reads. A 1-D array's rows are its elements, and
// chunks that listed every row they read held 8 bytes per input element
// (2²⁷ float32 with a 9-tap kernel: 2.1 GB beside a 64 MiB budget).
func TestSplitBookkeepingBounded(t *testing.T) {
	for _, border := range []nd.Border{nd.Constant, nd.Reflect, nd.Wrap} {
		p := problem(t, nd.Spec{Shape: []int{1 << 22}, In: nd.Float32, Border: border,
			Kernels: []nd.Kernel{{Shape: []int{9}, Weights: make([]float64, 9)}}})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		chunks, err := chunk.Split(p, chunk.Budget{Bytes: 1 << 20})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		// 16 MiB in and out in chunks of 1 MiB: 33 chunks, each a few
		// hundred bytes of shapes and rows.
		alloc := after.TotalAlloc - before.TotalAlloc
		if limit := uint64(len(chunks)) << 12; alloc > limit {
			t.Errorf("%v: Split of %d chunks allocated %d bytes, want at most %d", border, len(chunks), alloc, limit)
		}
		for i, c := range chunks {
			if c.Rows[0].Len() != c.Problem.InShape[0] {
				t.Fatalf("%v chunk %d: %d rows for an input of %d", border, i, c.Rows[0].Len(), c.Problem.InShape[0])
			}
		}
	}
}
