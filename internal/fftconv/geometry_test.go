package fftconv

import (
	"math"
	"slices"
	"testing"

	"github.com/ndconv/ndconv/internal/fft"
	"github.com/ndconv/ndconv/nd"
)

// TestRegionsCoverOutput: the blocks' outputs tile the output exactly
// once, each block reads Kernel − 1 more inputs than it writes, from
// OutStart − Shift, and the lengths are fast (the last even).
func TestRegionsCoverOutput(t *testing.T) {
	for _, s := range []nd.Spec{
		{Shape: []int{1009}, Kernels: []nd.Kernel{{Shape: []int{31}, Weights: make([]float64, 31)}}},
		{Shape: []int{50, 7, 3}, Kernels: []nd.Kernel{{Shape: []int{5, 4}, Weights: make([]float64, 20)}}, Axes: []int{0, 2}, Mode: nd.Full},
		{Shape: []int{40, 33}, Kernels: []nd.Kernel{{Shape: []int{3, 9}, Weights: make([]float64, 27)}}, Mode: nd.Valid, Origin: []int{1}},
	} {
		s.In = nd.Float32
		p, err := s.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		for _, budget := range []int64{0, 32 << 10} {
			g, err := New(p, Options{Workers: 2, Budget: budget})
			if err != nil {
				t.Fatal(err)
			}
			if g.Length[len(g.Length)-1]%2 != 0 {
				t.Errorf("%v: last length %d is odd", s.Shape, g.Length[len(g.Length)-1])
			}
			for i, l := range g.Length {
				if !fft.IsFast(l) || g.Block[i] < 1 {
					t.Errorf("%v: length %d, block %d", s.Shape, l, g.Block[i])
				}
			}
			seen := make(map[[4]int]int)
			var r Region
			for b := range g.TotalBlocks() {
				g.Region(b, &r)
				for i := range g.Axes {
					if r.InStart[i] != r.OutStart[i]-p.Shift[g.Axes[i]] || r.InCount[i] != r.OutCount[i]+g.Kernel[i]-1 || r.InCount[i] > g.Length[i] {
						t.Fatalf("%v block %d: %+v", s.Shape, b, r)
					}
				}
				var at [4]int
				var walk func(i int)
				walk = func(i int) {
					if i == len(g.Axes) {
						key := at
						copy(key[len(g.Axes):], r.Batch)
						seen[key]++
						return
					}
					for o := r.OutStart[i]; o < r.OutStart[i]+r.OutCount[i]; o++ {
						at[i] = o
						walk(i + 1)
					}
				}
				walk(0)
			}
			if want := product(p.OutShape); len(seen) != want {
				t.Errorf("%v: blocks cover %d outputs, want %d", s.Shape, len(seen), want)
			}
			for k, n := range seen {
				if n != 1 {
					t.Errorf("%v: output %v written %d times", s.Shape, k, n)
				}
			}
		}
	}
}

// TestScanFloat32 checks the bitwise scan against math on values around
// every class: zeros of both signs, subnormals, the largest finite value,
// ±Inf and NaNs of several payloads, at every position of the four lanes
// and the tail.
func TestScanFloat32(t *testing.T) {
	specials := []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -math.MaxFloat32, math.MaxFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.Float32frombits(0xffc00001), -3.5, 1e-30}
	for n := range 11 {
		for _, v := range specials {
			for at := range n {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(i) - 2.25
				}
				x[at] = v
				wantBad, wantMax := 0, 0.0
				for _, y := range x {
					a := math.Abs(float64(y))
					if math.IsNaN(a) || math.IsInf(a, 0) {
						wantBad++
					} else {
						wantMax = max(wantMax, a)
					}
				}
				if bad, m := scanFloat32(x); bad != wantBad || m != wantMax {
					t.Fatalf("%v: %d non-finite, max %v; want %d, %v", x, bad, m, wantBad, wantMax)
				}
			}
		}
	}
}

// TestCandidateLimits: PowersOfTwo leaves powers of two only, the whole
// axis's included; MaxLength drops longer lengths but the shortest, which
// a kernel longer than MaxLength needs.
func TestCandidateLimits(t *testing.T) {
	all := candidates(31, 2048, 2, true, Options{})
	pow2 := candidates(31, 2048, 2, true, Options{PowersOfTwo: true})
	if want := []int{32, 64, 128, 256, 512, 1024, 2048, 4096}; !slices.Equal(pow2, want) {
		t.Errorf("powers of two: %v, want %v", pow2, want)
	}
	if len(all) <= len(pow2) || slices.Contains(all, 4096) || !slices.Contains(all, 720) {
		t.Errorf("every fast length: %v", all)
	}
	capped := candidates(31, 2048, 2, true, Options{PowersOfTwo: true, MaxLength: 512})
	if want := []int{32, 64, 128, 256, 512}; !slices.Equal(capped, want) {
		t.Errorf("at most 512: %v, want %v", capped, want)
	}
	long := candidates(9001, 1<<20, 1, true, Options{PowersOfTwo: true, MaxLength: 8192})
	if !slices.Equal(long, []int{16384}) {
		t.Errorf("a 9001-tap kernel within 8192: %v, want [16384]", long)
	}
}
