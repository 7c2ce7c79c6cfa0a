package chunk_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/nd"
)

// TestEmptyProblems: a problem with an axis of length 0 (in any mode, with
// a bank) is one chunk of no element under every budget — Split, Pieces
// and Run do no zero-size arithmetic — and Run hands it over once with an
// empty input.
func TestEmptyProblems(t *testing.T) {
	k := nd.Kernel{Shape: []int{3, 3}, Weights: []float64{1, 2, 1, 2, 4, 2, 1, 2, 1}}
	for _, shape := range [][]int{{0, 9}, {9, 0}, {0, 0}, {4, 0, 5}, {0, 3, 3}} {
		for _, mode := range []nd.Mode{nd.Same, nd.Full} {
			for _, bank := range []int{1, 3} {
				spec := nd.Spec{Shape: shape, In: nd.Uint16, Out: nd.Float32, Kernels: make([]nd.Kernel, bank), Mode: mode}
				for i := range spec.Kernels {
					spec.Kernels[i] = k
				}
				p, err := spec.Normalize()
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%v %v bank %d", shape, mode, bank)
				src, _ := nd.New(nd.Uint16, shape...)
				for _, b := range []chunk.Budget{{}, {Bytes: 1}, {OutElems: 1}, {Bytes: 1 << 20}} {
					chunks, err := chunk.Split(p, b)
					if err != nil || len(chunks) != 1 || chunks[0].OutElems != 0 || chunks[0].InElems != 0 {
						t.Fatalf("%s: Split(%+v): %d chunks, %v", name, b, len(chunks), err)
					}
					calls := 0
					err = chunk.Run(context.Background(), chunks, src, nil, func(_ context.Context, c *chunk.Chunk, in nd.Array) error {
						calls++
						if in.Len() != 0 || c.Output(nd.Array{Shape: p.FullShape(), Data: []float32{}}).Len() != 0 {
							return fmt.Errorf("a chunk of %d input and %d output elements", in.Len(), c.OutElems)
						}
						return nil
					})
					if err != nil || calls != 1 {
						t.Fatalf("%s: Run: %d calls, %v", name, calls, err)
					}
				}
				for _, budget := range []int64{1, 1 << 30} {
					chunks, err := chunk.Pieces(p, budget, 3, 0, func(*nd.Problem) int64 { return 0 })
					if err != nil || len(chunks) != 1 {
						t.Fatalf("%s: Pieces(%d): %d chunks, %v", name, budget, len(chunks), err)
					}
				}
			}
		}
	}
}
