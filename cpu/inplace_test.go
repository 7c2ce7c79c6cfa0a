package cpu

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// TestInPlaceSameBits checks the direct method's tiles read in place
// (runInPlace: the interior columns of tiles whose input rows lie inside
// the image, straight from the input) against the padded rows of every
// tile, bit for bit, and against the reference: float32 and float64,
// channels, planes, every border, origins and modes, zero taps next to
// infinities and NaNs; and that the cases with float input and output do
// read tiles in place.
func TestInPlaceSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 1))
	cases := []struct {
		in            nd.DType
		shape, kernel []int
	}{
		{nd.Float32, []int{150, 90}, []int{3, 3}},
		{nd.Float32, []int{170, 61}, []int{7, 5}},
		{nd.Float32, []int{140, 70}, []int{1, 9}},
		{nd.Float32, []int{160, 40}, []int{9, 1}},
		{nd.Float32, []int{150, 45, 4}, []int{5, 5, 1}},
		{nd.Float32, []int{3, 140, 50}, []int{1, 3, 3}},
		{nd.Float64, []int{150, 70}, []int{5, 3}},
		{nd.Float64, []int{140, 33, 3}, []int{3, 7, 1}},
	}
	defer func() { readInPlace = true }()
	for n, c := range cases {
		// Each case runs 'valid', and 'same' with the kernel's origin at
		// either end and in the middle, so that tiles end exactly at the
		// image's edges and a row or column short of them; and, with a
		// uint8 output (never read in place), at a random origin.
		for variant, out := range []nd.DType{c.in, c.in, c.in, c.in, nd.Uint8} {
			in := enginetest.RandomArray(rng, c.in, c.shape...)
			for range 3 {
				i := rng.IntN(product(c.shape))
				nd.Store(in.Data, i, 1, []float64{math.NaN()})
				nd.Store(in.Data, rng.IntN(product(c.shape)), 1, []float64{math.Inf(-1)})
			}
			k := enginetest.RandomKernel(rng, true, c.kernel...)
			border := []nd.Border{nd.Reflect, nd.Constant, nd.Wrap, nd.Nearest, nd.Mirror}[(n+variant)%5]
			mode := []nd.Mode{nd.Same, nd.Same, nd.Same, nd.Valid, nd.Same}[variant]
			origin := make([]int, len(c.kernel))
			for a, e := range c.kernel {
				origin[a] = []int{-e / 2, (e - 1) / 2, 0, 0, rng.IntN(e) - e/2}[variant]
			}
			spec := nd.Spec{Shape: in.Shape, In: c.in, Out: out, Kernels: []nd.Kernel{k}, Border: border, CVal: 2, Mode: mode, Origin: origin}
			if mode == nd.Valid {
				spec.Origin = nil
			}
			name := fmt.Sprintf("%v %v %v %v %v origin %v, %v output", c.in, c.shape, c.kernel, border, mode, spec.Origin, out)
			p, err := spec.Normalize()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var got [2]nd.Array
			before := inPlaceTiles.Load()
			for i, inPlace := range []bool{true, false} {
				readInPlace = inPlace
				got[i], _ = nd.New(p.Out, p.FullShape()...)
				if err := NewDirect(p, Options{Workers: 2}).Execute(context.Background(), got[i], in); err != nil {
					t.Fatal(err)
				}
			}
			if tiles := inPlaceTiles.Load() - before; (tiles > 0) != (out == c.in) {
				t.Errorf("%s: %d tiles read in place", name, tiles)
			}
			if !bytes.Equal(got[0].Bytes(), got[1].Bytes()) {
				t.Errorf("%s: the tiles read in place differ from the padded rows", name)
			}
			ec := enginetest.Case{Spec: spec, Input: in}
			if msg := ec.Check(got[0], ec.Want()); msg != "" {
				t.Errorf("%s: %s", name, msg)
			}
		}
	}
}
