package chunk_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// FuzzBlocksEqualWhole cuts random problems (rank 1 to 4, any border, mode
// and origin, kernels up to larger than the input, dense or separable,
// banks) into N-D blocks of a random shape and runs them with RunBlocks
// from an ArraySource into an ArraySink: the blocks put together equal
// the whole result bit for bit, every block's Regions tile its input, and
// Block.Read fills it alike from a BoxSource and from a plain Source.
func FuzzBlocksEqualWhole(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(1))
	f.Add(uint64(7), uint8(4), uint8(3))
	f.Add(uint64(42), uint8(9), uint8(200))
	f.Fuzz(func(t *testing.T, seed uint64, pick, inFlight uint8) {
		rng := rand.New(rand.NewPCG(seed, uint64(pick)))
		rank := 1 + rng.IntN(4)
		shape, kshape, block := make([]int, rank), make([]int, rank), make([]int, rank)
		for d := range shape {
			shape[d], kshape[d] = 1+rng.IntN([]int{30, 10, 7, 5}[rank-1]), 1+rng.IntN(6)
			block[d] = 1 + rng.IntN(shape[d]+3)
		}
		origin := make([]int, rank)
		for d, k := range kshape {
			origin[d] = rng.IntN(k) - k/2
		}
		var kernels []nd.Kernel
		for range 1 + int(pick>>6) {
			if pick&8 != 0 {
				kernels = append(kernels, enginetest.RandomFactors(rng, kshape...))
			} else {
				kernels = append(kernels, enginetest.RandomKernel(rng, true, kshape...))
			}
		}
		spec := nd.Spec{Shape: shape, In: nd.Float32, Kernels: kernels, Border: nd.Border(pick % 5),
			Mode: nd.Mode(pick / 5 % 3), Origin: origin, CVal: 1.25, Convolve: pick&16 != 0}
		p, err := spec.Normalize()
		if err != nil {
			return // valid mode with an axis shorter than the kernel
		}
		src := enginetest.RandomArray(rng, nd.Float32, shape...)
		g, err := chunk.NewGrid(p, block[:len(p.OutShape)])
		if err != nil {
			t.Fatal(err)
		}
		for i := range g.Len() {
			b := g.Block(i)
			covered := 0
			b.Regions(func(_, shape, _ []int) {
				n, _ := nd.NumElements(shape)
				covered += n
			})
			if covered != b.InElems {
				t.Fatalf("block %d: regions cover %d of %d input elements", i, covered, b.InElems)
			}
			// Read straight into the input (a BoxSource) and through the
			// region buffer (a plain Source): the same input.
			in := [2]nd.Array{}
			for k, s := range []chunk.Source{chunk.ArraySource{Array: src}, plainSource{chunk.ArraySource{Array: src}}} {
				in[k], _ = nd.New(p.In, b.Problem.InShape...)
				if err := b.Read(s, in[k], nil); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(in[0].Bytes(), in[1].Bytes()) {
				t.Fatalf("block %d: read into its input, the boxes differ from those read into a buffer and copied", i)
			}
		}
		for _, e := range engines {
			if !e.supports(p) {
				continue
			}
			want, _ := run(t, p, src, chunk.Budget{}, e.new)
			got, err := nd.New(p.Out, p.FullShape()...)
			if err != nil {
				t.Fatal(err)
			}
			err = chunk.RunBlocks(context.Background(), g, chunk.ArraySource{Array: src}, chunk.ArraySink{Array: got}, int(inFlight%4), nil,
				func(ctx context.Context, _ int, b *chunk.Block, dst, src nd.Array) error {
					x, err := e.new(b.Problem)
					if err != nil {
						return err
					}
					return x.Execute(ctx, dst, src)
				})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("%s %v k%v %v %v origin %v bank %d, blocks %v: differ from the whole", e.name, shape, kshape, spec.Border, spec.Mode, origin, len(kernels), g.Shape())
			}
		}
	})
}

// plainSource is a Source that is not a BoxSource.
type plainSource struct{ s chunk.ArraySource }

func (p plainSource) ReadRegion(start, shape []int, dst nd.Array) error {
	return p.s.ReadRegion(start, shape, dst)
}

// TestCopyBox moves boxes between arrays of several shapes and checks
// each element against its index arithmetic, for elements of 1, 2, 4
// and 8 bytes (runs of 4, 8 and 16 bytes move in one load and store).
func TestCopyBox(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 9))
	for i := range 400 {
		dt := []nd.DType{nd.Uint8, nd.Uint16, nd.Float32, nd.Float64}[i%4] // runs of 4, 8 and 16 bytes among others
		size := dt.Size()
		rank := 1 + rng.IntN(4)
		src, dst, box, sat, dat := make([]int, rank), make([]int, rank), make([]int, rank), make([]int, rank), make([]int, rank)
		for d := range rank {
			box[d] = rng.IntN(5)
			src[d], dst[d] = box[d]+rng.IntN(3), box[d]+rng.IntN(3)
			sat[d], dat[d] = rng.IntN(src[d]-box[d]+1), rng.IntN(dst[d]-box[d]+1)
		}
		s := enginetest.RandomArray(rng, dt, src...)
		d := enginetest.RandomArray(rng, dt, dst...)
		before := slices.Clone(d.Bytes())
		chunk.CopyBox(d.Bytes(), dst, dat, s.Bytes(), src, sat, box, size)
		ss, ds := nd.Strides(src), nd.Strides(dst)
		n, _ := nd.NumElements(dst)
		for i := range n {
			idx, rest, in, from := make([]int, rank), i, true, 0
			for k := range rank {
				idx[k] = rest / ds[k]
				rest %= ds[k]
				in = in && idx[k] >= dat[k] && idx[k] < dat[k]+box[k]
				from += (idx[k] - dat[k] + sat[k]) * ss[k]
			}
			want := before[i*size : (i+1)*size]
			if in {
				want = s.Bytes()[from*size : (from+1)*size]
			}
			if got := d.Bytes()[i*size : (i+1)*size]; !bytes.Equal(got, want) {
				t.Fatalf("%v: src %v at %v, dst %v at %v, box %v: element %v = %x, want %x", dt, src, sat, dst, dat, box, idx, got, want)
			}
		}
	}
}
