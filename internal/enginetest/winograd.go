package enginetest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/ndconv/ndconv/nd"
)

// WinogradCount is how many random cases the Winograd property tests run:
// n by default, NDCONV_WINOGRAD_CASES where set (more in a long run).
func WinogradCount(n int) int {
	if v, err := strconv.Atoi(os.Getenv("NDCONV_WINOGRAD_CASES")); err == nil && v > 0 {
		return v
	}
	return n
}

// WinogradSeed is NDCONV_WINOGRAD_SEED where set, else seed: a failing
// case's seed (the tests log it) runs again alone.
func WinogradSeed(seed uint64) uint64 {
	if v, err := strconv.ParseUint(os.Getenv("NDCONV_WINOGRAD_SEED"), 10, 64); err == nil {
		return v
	}
	return seed
}

// winogradDTypes are the dtype pairs the random Winograd cases take: the
// float32-accumulated ones, integer outputs rounded and saturated.
var winogradDTypes = [][2]nd.DType{
	{nd.Float32, nd.Float32}, {nd.Uint8, nd.Uint8}, {nd.Uint8, nd.Float32}, {nd.Uint16, nd.Uint16},
	{nd.Int16, nd.Float32}, {nd.Float32, nd.Uint8}, {nd.Int16, nd.Int16}, {nd.Float16, nd.Float32},
}

// WinogradRandom returns n random cases the Winograd method serves, from
// seed: 3×3 and 5×5 kernels over two axes and 3×3×3 over three, among up
// to one more axis (channels) at any position (axes), inputs from one
// sample per axis to a few tiles, every border (any distance: kernels
// larger than the input), mode, origin, correlate and convolve, banks of
// 1 to 5 kernels (some weights zero), and the dtypes of winogradDTypes.
// gpu limits the dtypes to those the GPU kernels take.
func WinogradRandom(seed uint64, n int, gpu bool) []Case {
	rng := rand.New(rand.NewPCG(seed, 29))
	var cases []Case
	for len(cases) < n {
		var kshape []int
		switch rng.IntN(3) {
		case 0:
			kshape = []int{3, 3}
		case 1:
			kshape = []int{5, 5}
		default:
			kshape = []int{3, 3, 3}
		}
		rank := len(kshape) + rng.IntN(2)
		shape := make([]int, rank)
		for i := range shape {
			shape[i] = 1 + rng.IntN(14)
			if len(kshape) == 3 {
				shape[i] = 1 + rng.IntN(9)
			}
		}
		axes := rng.Perm(rank)[:len(kshape)]
		if rank > len(kshape) {
			for a := range rank {
				if !contains(axes, a) {
					shape[a] = 1 + rng.IntN(3)
				}
			}
		}
		var ks []nd.Kernel
		for range 1 + rng.IntN(5) {
			ks = append(ks, RandomKernel(rng, rng.IntN(3) == 0, kshape...))
		}
		dt := winogradDTypes[rng.IntN(len(winogradDTypes))]
		if gpu && dt[0] == nd.Float16 {
			dt[0] = nd.Float32
		}
		s := nd.Spec{Kernels: ks, Axes: axes, Border: nd.Border(rng.IntN(5)), CVal: rng.Float64()*20 - 10,
			Mode: nd.Mode(rng.IntN(3)), Convolve: rng.IntN(2) == 0, Out: dt[1]}
		origin := make([]int, len(kshape))
		for i, k := range kshape {
			origin[i] = rng.IntN(k) - k/2
		}
		s.Origin = origin
		in := RandomArray(rng, dt[0], shape...)
		s.Shape, s.In = in.Shape, in.DType()
		if _, err := s.Normalize(); err != nil {
			continue // valid mode with a kernel larger than the input
		}
		cases = append(cases, Case{Name: fmt.Sprintf("winograd%d/%v%v/k%v/axes%v/%v/%v", len(cases), in.DType(), shape, kshape, axes, s.Border, s.Mode), Spec: s, Input: in})
	}
	return cases
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
