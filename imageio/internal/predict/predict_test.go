package predict

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestUndoDifferences: every stride (the register loops and the general
// one) equals the byte loop, on rows with and without a partial last
// pixel and shorter than a pixel.
func TestUndoDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 7))
	for _, stride := range []int{1, 2, 3, 4, 6, 8} {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 13, 64, 100} {
			row := make([]byte, n)
			for i := range row {
				row[i] = byte(rng.Uint32())
			}
			want := bytes.Clone(row)
			for i := stride; i < len(want); i++ {
				want[i] += want[i-stride]
			}
			UndoDifferences(row, stride)
			if !bytes.Equal(row, want) {
				t.Fatalf("stride %d, %d bytes: %v, want %v", stride, n, row, want)
			}
		}
	}
}
