package job

import (
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv/chunk"
)

// TestBoxAllFill checks the in-place test of a box for the fill element
// against a copy of the box tested whole, on random boxes of random
// arrays of 0 to 4 axes, where the fill is everywhere, nowhere, or
// everywhere but one element inside or outside the box.
func TestBoxAllFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 4))
	fill := []byte{1, 2, 3, 4}
	for i := range 500 {
		rank := rng.IntN(5)
		full, at, n := make([]int, rank), make([]int, rank), make([]int, rank)
		size := 1
		for d := range rank {
			full[d] = 1 + rng.IntN(5)
			at[d] = rng.IntN(full[d])
			n[d] = rng.IntN(full[d] - at[d] + 1)
			size *= full[d]
		}
		b := make([]byte, size*len(fill))
		for k := 0; k < len(b); k += len(fill) {
			copy(b[k:], fill)
		}
		switch rng.IntN(3) {
		case 0:
		case 1:
			b[rng.IntN(len(b))] ^= 0x80
		case 2:
			for k := range b {
				b[k] = byte(rng.IntN(256))
			}
		}
		part := make([]byte, prod(n)*len(fill))
		chunk.CopyBox(part, n, make([]int, rank), b, full, at, n, len(fill))
		if got, want := boxAllFill(b, full, at, n, fill), allFill(part, fill); got != want {
			t.Fatalf("case %d: box at %v of %v in %v: %v, want %v", i, at, n, full, got, want)
		}
	}
}
