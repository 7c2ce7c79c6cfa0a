package job

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestZOrderRanks: the ranks are a permutation of the blocks; in a 4×4×4
// grid each run of 8 is an octant (2×2×2 blocks), in a 2-D grid of 4×4
// each run of 4 a quadrant, and on one axis the order is the index's.
func TestZOrderRanks(t *testing.T) {
	octants := zOrderRanks([]int{4, 4, 4})
	for i, r := range octants {
		z, y, x := i/16, i/4%4, i%4
		if want := (z/2*4 + y/2*2 + x/2); r/8 != want {
			t.Fatalf("4×4×4: block (%d,%d,%d) has rank %d, in run %d; want its octant's run %d", z, y, x, r, r/8, want)
		}
	}
	for i, r := range zOrderRanks([]int{4, 4}) {
		if want := i/8*2 + i%4/2; r/4 != want {
			t.Fatalf("4×4: block %d has rank %d; want run %d", i, r, want)
		}
	}
	if got := zOrderRanks([]int{7}); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Fatalf("one axis: %v", got)
	}
	rng := rand.New(rand.NewPCG(33, 1))
	for range 50 {
		counts := make([]int, 1+rng.IntN(4))
		for d := range counts {
			counts[d] = 1 + rng.IntN(6)
		}
		r := zOrderRanks(counts)
		sorted := slices.Clone(r)
		slices.Sort(sorted)
		for i, v := range sorted {
			if v != i {
				t.Fatalf("%v: ranks %v are not a permutation", counts, r)
			}
		}
	}
}
