package ndconv

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// TestSeparableStream streams random separable kernels (and banks of
// them) that span axis 0 and another axis on the CPU (every border and mode, origins, convolution,
// integer, float and wide dtypes, budgets from one plane a chunk to the
// whole problem): the chunks equal Execute bit for bit, the stream splits
// them into passes within planes and across them (newSeparableStream),
// and each input plane's passes run once, plus at most the K0 − 1 planes
// a border maps back on either side per chunk that reaches it. Halo'd
// chunks that each ran every pass ran the passes along the other axes on
// R + K0 − 1 planes per R output planes.
func TestSeparableStream(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 5))
	dtypes := []nd.DType{nd.Float32, nd.Uint8, nd.Int16, nd.Float64, nd.Int32}
	cases := 0
	for cases < 60 {
		rank := 2 + rng.IntN(3)
		shape := make([]int, rank)
		for d := range shape {
			shape[d] = 1 + rng.IntN([]int{0, 0, 30, 12, 6}[rank])
		}
		kshape := make([]int, rank)
		origin := make([]int, rank)
		for d := range kshape {
			kshape[d] = 1 + rng.IntN(7)
			origin[d] = rng.IntN(kshape[d]) - kshape[d]/2
		}
		kshape[0] = max(kshape[0], 2)
		kshape[1+rng.IntN(rank-1)] = 2 + rng.IntN(5)
		in := dtypes[rng.IntN(len(dtypes))]
		opt := Options{Border: nd.Border(rng.IntN(5)), CVal: rng.Float64()*10 - 5, Mode: nd.Mode(rng.IntN(3)),
			Origin: origin, DType: dtypes[rng.IntN(len(dtypes))], Device: "cpu", Workers: 1 + rng.IntN(2)}
		opt.Method, _ = ParseMethod("separable")
		if opt.Mode != nd.Same {
			opt.Origin = nil
		}
		op := Operation(rng.IntN(2))
		src := enginetest.RandomArray(rng, in, shape...)
		var kernels []Kernel
		for range 1 + rng.IntN(2)*rng.IntN(3) { // banks of 2 and 3 too
			kernels = append(kernels, enginetest.RandomFactors(rng, kshape...))
		}
		p, err := NewPlan(op, shape, in, opt, kernels...)
		if err != nil {
			continue // valid mode with a kernel longer than the input
		}
		cases++
		if newSeparableStream(p.problem, p.exec) == nil {
			t.Fatalf("%v %v k%v: not streamed in planes", in, shape, kshape)
		}
		want, err := p.Execute(context.Background(), Array{}, src)
		if err != nil {
			t.Fatal(err)
		}
		plane := want.Len() / max(p.Shape()[0], 1) * opt.DType.Size()
		for _, budget := range []int64{1, int64(plane * (kshape[0] + 3) * 3), 1 << 30} {
			name := fmt.Sprintf("%v %v%v k%v origin %v %v %v -> %v, budget %d", op, in, shape, kshape, opt.Origin, opt.Mode, opt.Border, opt.DType, budget)
			got, _ := nd.New(want.DType(), want.Shape...)
			planes, chunks := 0, 0
			testHookPlanes = func(n int) { planes += n }
			err := p.ExecuteChunks(context.Background(), src, budget, func(off int, out Array) error {
				chunks++
				copy(got.Bytes()[off*got.DType().Size():], out.Bytes())
				return nil
			})
			testHookPlanes = nil
			planes /= len(kernels) // each kernel's passes run on every plane
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("%s (%d chunks): differs from Execute", name, chunks)
			}
			if limit := shape[0] + 2*chunks*(kshape[0]-1); planes > limit {
				t.Errorf("%s: the passes within planes ran on %d planes, %d chunks of %d input planes", name, planes, chunks, shape[0])
			}
			if opt.Border != nd.Constant && opt.Border != nd.Wrap && opt.Mode == nd.Same && kshape[0] <= shape[0] && planes > shape[0]+2*(kshape[0]-1) {
				t.Errorf("%s: the passes within planes ran on %d planes of %d", name, planes, shape[0])
			}
		}
		p.Close()
	}
}

// FuzzSeparableStream streams a random separable problem (rank 2 to 4,
// banks of up to 3, any border, mode, origin and dtype) under a random
// budget and checks the chunks against Execute, bit for bit.
func FuzzSeparableStream(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint16(1))
	f.Add(uint64(9), uint8(77), uint16(5000))
	f.Fuzz(func(t *testing.T, seed uint64, pick uint8, budget uint16) {
		rng := rand.New(rand.NewPCG(seed, uint64(pick)))
		rank := 2 + rng.IntN(3)
		shape, kshape, origin := make([]int, rank), make([]int, rank), make([]int, rank)
		for d := range shape {
			shape[d], kshape[d] = 1+rng.IntN([]int{0, 0, 25, 9, 5}[rank]), 1+rng.IntN(6)
			origin[d] = rng.IntN(kshape[d]) - kshape[d]/2
		}
		dtypes := []nd.DType{nd.Float32, nd.Uint8, nd.Int16, nd.Float64, nd.Uint16}
		in := dtypes[int(pick)%len(dtypes)]
		opt := Options{Border: nd.Border(pick % 5), Mode: nd.Mode(pick / 5 % 3), CVal: 1.5, Origin: origin,
			DType: dtypes[rng.IntN(len(dtypes))], Device: "cpu", Workers: 1}
		opt.Method, _ = ParseMethod("separable")
		var kernels []Kernel
		for range 1 + int(pick>>7) + rng.IntN(2) {
			kernels = append(kernels, enginetest.RandomFactors(rng, kshape...))
		}
		p, err := NewPlan(Operation(pick>>6&1), shape, in, opt, kernels...)
		if err != nil {
			return // valid mode with a kernel longer than the input
		}
		defer p.Close()
		src := enginetest.RandomArray(rng, in, shape...)
		want, err := p.Execute(context.Background(), Array{}, src)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := nd.New(want.DType(), want.Shape...)
		size := got.DType().Size()
		b := int64(budget)
		if newSeparableStream(p.problem, p.exec) == nil {
			b += 4 << 10 // a halo'd chunk must hold a voxel with its halo
		}
		err = p.ExecuteChunks(context.Background(), src, b, func(off int, out Array) error {
			copy(got.Bytes()[off*size:], out.Bytes())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%v %v k%v origin %v bank %d %v %v -> %v, budget %d: the chunks differ from Execute", in, shape, kshape, origin, len(kernels), opt.Mode, opt.Border, opt.DType, b)
		}
	})
}
