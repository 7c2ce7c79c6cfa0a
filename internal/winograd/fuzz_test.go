package winograd_test

import (
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/winograd"
)

// FuzzWinogradCPU: any random problem the method serves (a case of
// enginetest.WinogradRandom from the fuzzed seed), at each tile of its
// kernel size, is within the bound of internal/ref.
func FuzzWinogradCPU(f *testing.F) {
	for _, s := range []uint64{0, 1, 29, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		c := enginetest.WinogradRandom(seed, 1, false)[0]
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		want := c.Want()
		kshape := c.Spec.Kernels[0].Shape
		for _, m := range winograd.Tiles(kshape[0], len(kshape)) {
			got, e := run(t, c, m)
			bound := e.Variant().ErrorBound(p.WeightAbsSum(), c.MaxAbs())
			if msg := c.CheckBound(got, want, bound); msg != "" {
				t.Fatalf("seed %d %s %s: %s", seed, c.Name, e.Variant().Name(), msg)
			}
		}
	})
}
