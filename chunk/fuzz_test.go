package chunk_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// FuzzChunkedEqualsWhole splits random problems (rank 1 to 3, any border,
// mode and origin, kernels up to larger than the input, dense or
// separable) under random element and byte budgets and checks that the
// chunks put together equal the whole result bit for bit.
func FuzzChunkedEqualsWhole(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint16(1))
	f.Add(uint64(7), uint8(4), uint16(3))
	f.Add(uint64(42), uint8(9), uint16(200))
	f.Fuzz(func(t *testing.T, seed uint64, pick uint8, budget uint16) {
		rng := rand.New(rand.NewPCG(seed, uint64(pick)))
		rank := 1 + rng.IntN(3)
		shape, kshape := make([]int, rank), make([]int, rank)
		for d := range shape {
			shape[d], kshape[d] = 1+rng.IntN(9), 1+rng.IntN(6)
		}
		origin := make([]int, rank)
		for d, k := range kshape {
			origin[d] = rng.IntN(k) - k/2
		}
		kernel := enginetest.RandomKernel(rng, true, kshape...)
		if pick&8 != 0 {
			kernel = enginetest.RandomFactors(rng, kshape...)
		}
		spec := nd.Spec{Shape: shape, In: nd.Float32, Kernels: []nd.Kernel{kernel}, Border: nd.Border(pick % 5),
			Mode: nd.Mode(pick / 5 % 3), Origin: origin, CVal: 1.25, Convolve: pick&16 != 0}
		p, err := spec.Normalize()
		if err != nil {
			return // valid mode with an axis shorter than the kernel
		}
		src := enginetest.RandomArray(rng, nd.Float32, shape...)
		b := chunk.Budget{OutElems: int(budget)}
		if pick&32 != 0 {
			b = chunk.Budget{Bytes: int64(budget) * 4}
		}
		for _, e := range engines {
			if !e.supports(p) {
				continue
			}
			want, _ := run(t, p, src, chunk.Budget{}, e.new)
			if got, n := run(t, p, src, b, e.new); got != nil && string(got) != string(want) {
				t.Fatalf("%s %v k%v %v %v origin %v, budget %+v (%d chunks): differs from the whole", e.name, shape, kshape, spec.Border, spec.Mode, origin, b, n)
			}
		}
	})
}
