package ndconv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// blockCases is the number of random problems TestBlocksEqualWhole runs:
// NDCONV_BLOCK_CASES overrides it (e.g. 5000 for a long run).
func blockCases() int {
	if n, err := strconv.Atoi(os.Getenv("NDCONV_BLOCK_CASES")); err == nil && n > 0 {
		return n
	}
	return 300
}

// TestBlocksEqualWhole is ExecuteBlocks' property: on the CPU, blocks of
// any shape (1 along an axis, random, the whole output, chosen from a byte
// budget) put together equal Execute's output bit for bit, for random
// shapes of 1 to 4 axes, random kernels (even extents, origins, axes),
// every mode and border (constant with a random cval), the direct and
// separable methods, banks, and several dtypes. FFT is left out: its
// blocks transform blocks of their own and agree within its bound, not bit
// for bit (TestBlocksFFT).
func TestBlocksEqualWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 3))
	n := blockCases()
	dtypes := []nd.DType{nd.Float32, nd.Uint8, nd.Uint16, nd.Int16, nd.Float64}
	methods := []string{"direct", "separable"}
	var shapes int
	for c := 0; c < n; c++ {
		rank := 1 + rng.IntN(4)
		shape := make([]int, rank)
		for d := range shape {
			shape[d] = 1 + rng.IntN([]int{40, 13, 8, 5}[rank-1])
		}
		krank := 1 + rng.IntN(rank)
		kshape := make([]int, krank)
		origin := make([]int, krank)
		for d := range kshape {
			kshape[d] = 1 + rng.IntN(6)
			origin[d] = rng.IntN(kshape[d]) - kshape[d]/2
		}
		method := methods[rng.IntN(len(methods))]
		var kernels []ndconv.Kernel
		for range 1 + rng.IntN(3)*rng.IntN(2) {
			if method == "separable" {
				kernels = append(kernels, enginetest.RandomFactors(rng, kshape...))
			} else {
				kernels = append(kernels, enginetest.RandomKernel(rng, rng.IntN(2) == 0, kshape...))
			}
		}
		in := dtypes[rng.IntN(len(dtypes))]
		opt := ndconv.Options{
			Border: nd.Border(rng.IntN(5)), CVal: rng.Float64()*10 - 5, Mode: nd.Mode(rng.IntN(3)),
			Origin: origin, Axes: rng.Perm(rank)[:krank], DType: dtypes[rng.IntN(len(dtypes))],
			Device: "cpu", Workers: 1 + rng.IntN(2),
		}
		opt.Method, _ = ndconv.ParseMethod(method)
		op := ndconv.Operation(rng.IntN(2))
		src := enginetest.RandomArray(rng, in, shape...)
		p, err := ndconv.NewPlan(op, shape, in, opt, kernels...)
		if err != nil {
			c-- // e.g. valid mode with a kernel longer than the input
			continue
		}
		want, err := p.Execute(context.Background(), ndconv.Array{}, src)
		if err != nil {
			t.Fatal(err)
		}
		out := p.Shape()[:rank] // without the bank axis
		blocks := [][]int{make([]int, rank), slices.Clone(out), make([]int, rank)}
		for d := range rank {
			blocks[0][d] = 1
			blocks[2][d] = 1 + rng.IntN(max(out[d], 1))
		}
		if rank > 1 {
			blocks = append(blocks, slices.Clone(blocks[2]))
			blocks[3][rng.IntN(rank)] = 1 // tiny along one axis
		}
		name := fmt.Sprintf("case %d: %v %v%v %s k%v origin %v axes %v bank %d %v %v cval %g -> %v",
			c, op, in, shape, method, kshape, origin, opt.Axes, len(kernels), opt.Mode, opt.Border, opt.CVal, opt.DType)
		for _, bs := range blocks {
			checkBlocks(t, name, p, src, want, ndconv.BlockOptions{Shape: bs, InFlight: 1 + rng.IntN(3)})
			shapes++
		}
		// And a grid chosen from a byte budget a few blocks large.
		budget := int64(src.Len()*in.Size()+want.Len()*opt.DType.Size())/int64(1+rng.IntN(8)) + 1
		if g, err := p.Grid(ndconv.BlockOptions{Bytes: budget}); err == nil && g.Len() > 0 {
			checkBlocks(t, name, p, src, want, ndconv.BlockOptions{Bytes: budget})
			shapes++
		}
		p.Close()
		if t.Failed() {
			return
		}
	}
	t.Logf("%d problems, %d block shapes", n, shapes)
}

// checkBlocks runs p's blocks from src into a fresh array and compares it
// with want, bit for bit; it checks that every block writes its box, once.
func checkBlocks(t *testing.T, name string, p *ndconv.Plan, src, want ndconv.Array, bo ndconv.BlockOptions) {
	t.Helper()
	got, err := nd.New(want.DType(), want.Shape...)
	if err != nil {
		t.Fatal(err)
	}
	// NaN where nothing was written, for float outputs.
	if f, ok := got.Data.([]float32); ok {
		for i := range f {
			f[i] = float32(nanValue())
		}
	}
	sink := &countingSink{ArraySink: ndconv.ArraySink{Array: got}}
	if err := p.ExecuteBlocks(context.Background(), ndconv.ArraySource{Array: src}, sink, bo); err != nil {
		t.Fatalf("%s, blocks %v: %v", name, bo.Shape, err)
	}
	g, err := p.Grid(bo)
	if err != nil {
		t.Fatal(err)
	}
	if sink.n != g.Len() {
		t.Errorf("%s, blocks %v: %d writes for %d blocks", name, g.Shape(), sink.n, g.Len())
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("%s, blocks %v (%d): differ from Execute", name, g.Shape(), g.Len())
	}
}

func nanValue() float64 { var z float64; return z / z }

// countingSink counts the writes an ArraySink takes.
type countingSink struct {
	ndconv.ArraySink
	mu sync.Mutex
	n  int
}

func (s *countingSink) WriteRegion(start []int, src ndconv.Array) error {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	return s.ArraySink.WriteRegion(start, src)
}

// TestBlocksWrapReadsFarSide checks, on a 1-D ramp with wrap, that the
// first block's input holds the far end's samples where its halo leaves
// the array, and that the last block's holds the start's.
func TestBlocksWrapReadsFarSide(t *testing.T) {
	p, err := ndconv.NewPlan(ndconv.Correlation, []int{10}, nd.Float32, ndconv.Options{Border: nd.Wrap, Device: "cpu"},
		ndconv.NewKernel([]int{5}, []float64{1, 1, 1, 1, 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	g, err := p.Grid(ndconv.BlockOptions{Shape: []int{4}})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"[8 9 0 1 2 3 4 5]", "[2 3 4 5 6 7 8 9]", "[6 7 8 9 0 1]"} {
		b := g.Block(i)
		if got := fmt.Sprint(b.Rows[0]); got != want {
			t.Errorf("block %d reads rows %s, want %s", i, got, want)
		}
	}
}

// TestGridForAlign checks that blocks chosen from a budget are multiples
// of the storage chunks and fit the budget, and that a budget below one
// aligned block is an error.
func TestGridForAlign(t *testing.T) {
	p, err := ndconv.NewPlan(ndconv.Correlation, []int{100, 64, 50}, nd.Float32, ndconv.Options{Device: "cpu"},
		ndconv.NewKernel([]int{3, 3, 3}, make([]float64, 27)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	align := []int{16, 16, 16}
	g, err := p.Grid(ndconv.BlockOptions{Bytes: 200_000, Align: align})
	if err != nil {
		t.Fatal(err)
	}
	for d, b := range g.Shape() {
		if b%align[d] != 0 && b != p.Shape()[d] {
			t.Errorf("block %v: axis %d not a multiple of %d", g.Shape(), d, align[d])
		}
	}
	for i := range g.Len() {
		b := g.Block(i)
		for d := range b.OutLo {
			if b.OutLo[d]%align[d] != 0 {
				t.Errorf("block %d starts at %v, not on the storage grid %v", i, b.OutLo, align)
			}
		}
		if n := int64(b.InElems+b.OutElems) * 4; n > 200_000 {
			t.Errorf("block %d: %d bytes, over the budget", i, n)
		}
	}
	if _, err := p.Grid(ndconv.BlockOptions{Bytes: 1000, Align: align}); err == nil {
		t.Error("a budget below one aligned block: no error")
	}
}

// failingSink fails its second write.
type failingSink struct {
	mu sync.Mutex
	n  int
}

var errSinkBroke = errors.New("disk full")

func (s *failingSink) WriteRegion([]int, ndconv.Array) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n++; s.n == 2 {
		return errSinkBroke
	}
	return nil
}

// TestBlocksErrors checks that a sink's error stops the blocks and is
// returned with the block named, that a cancelled context stops them, and
// that bad options are errors, not panics.
func TestBlocksErrors(t *testing.T) {
	p, err := ndconv.NewPlan(ndconv.Correlation, []int{20, 20}, nd.Float32, ndconv.Options{Device: "cpu"},
		ndconv.NewKernel([]int{3, 3}, make([]float64, 9)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	src, _ := nd.New(nd.Float32, 20, 20)
	sink := &failingSink{}
	err = p.ExecuteBlocks(context.Background(), ndconv.ArraySource{Array: src}, sink, ndconv.BlockOptions{Shape: []int{2, 2}, InFlight: 1})
	if !errors.Is(err, errSinkBroke) || sink.n != 2 {
		t.Errorf("sink failing at its second write: %v after %d writes", err, sink.n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dst, _ := nd.New(nd.Float32, 20, 20)
	if err := p.ExecuteBlocks(ctx, ndconv.ArraySource{Array: src}, ndconv.ArraySink{Array: dst}, ndconv.BlockOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	for _, bo := range []ndconv.BlockOptions{{Shape: []int{2}}, {Shape: []int{0, 2}}, {InFlight: -1}, {Align: []int{1}}} {
		var ae *nd.ArgumentError
		if err := p.ExecuteBlocks(context.Background(), ndconv.ArraySource{Array: src}, ndconv.ArraySink{Array: dst}, bo); !errors.As(err, &ae) {
			t.Errorf("%+v: %v, want an ArgumentError", bo, err)
		}
	}
	if err := p.ExecuteBlocks(context.Background(), ndconv.ArraySource{Array: src}, nil, ndconv.BlockOptions{}); err == nil {
		t.Error("nil sink: no error")
	}
}

// TestBlocksFFT runs FFT plans in N-D blocks: each block transforms blocks
// of its own, so the result is not Execute's bits but within the FFT's
// bound of the exact result (internal/ref), the largest of its blocks'
// bounds (cpu.FFTBound), for random shapes, kernels, modes and borders.
func TestBlocksFFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 11))
	for c := 0; c < 40; c++ {
		rank := 1 + rng.IntN(3)
		shape, kshape, block := make([]int, rank), make([]int, rank), make([]int, rank)
		for d := range shape {
			shape[d], kshape[d] = 1+rng.IntN([]int{60, 20, 9}[rank-1]), 1+rng.IntN(7)
		}
		kshape[0] = max(kshape[0], 2) // a one-tap kernel has nothing to transform
		out := nd.Float32             // the float32 FFT takes no float64 problem
		spec := nd.Spec{Shape: shape, In: nd.Float32, Out: out, Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, kshape...)},
			Border: nd.Border(rng.IntN(5)), CVal: rng.Float64()*4 - 2, Mode: nd.Mode(rng.IntN(3))}
		p, err := spec.Normalize()
		if err != nil {
			c--
			continue
		}
		for d := range block {
			block[d] = 1 + rng.IntN(max(p.OutShape[d], 1))
		}
		src := enginetest.RandomArray(rng, nd.Float32, shape...)
		tc := enginetest.Case{Spec: spec, Input: src}
		opt := ndconv.Options{Border: spec.Border, CVal: spec.CVal, Mode: spec.Mode, DType: out, Device: "cpu"}
		opt.Method, _ = ndconv.ParseMethod("fft")
		plan, err := ndconv.NewPlan(ndconv.Correlation, shape, nd.Float32, opt, spec.Kernels...)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := nd.New(out, p.OutShape...)
		bo := ndconv.BlockOptions{Shape: block}
		if err := plan.ExecuteBlocks(context.Background(), ndconv.ArraySource{Array: src}, ndconv.ArraySink{Array: got}, bo); err != nil {
			t.Fatal(err)
		}
		g, _ := plan.Grid(bo)
		bound := 0.0
		for i := range g.Len() {
			b := g.Block(i)
			bb, err := cpu.FFTBound(b.Problem, cpu.Options{}, tc.MaxAbs())
			if err != nil {
				t.Fatal(err)
			}
			bound = max(bound, bb)
		}
		if msg := tc.CheckBound(got, tc.Want(), bound); msg != "" {
			t.Errorf("%v k%v %v %v, blocks %v: %s", shape, kshape, spec.Mode, spec.Border, block, msg)
		}
		plan.Close()
	}
}

// TestBlocksSkipComputed: blocks that Skip names are not read, computed
// or written (their output keeps what was there), the others are the
// whole run's, and Computed hears of each block computed, once.
func TestBlocksSkipComputed(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 8))
	src := enginetest.RandomArray(rng, nd.Float32, 9, 10, 11)
	k := ndconv.Kernel{Shape: []int{3, 3, 3}, Weights: make([]float64, 27)}
	for i := range k.Weights {
		k.Weights[i] = rng.Float64() - 0.5
	}
	p, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, src.DType(), ndconv.Options{Device: "cpu", Border: nd.Wrap}, k)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	want, err := p.Execute(context.Background(), ndconv.Array{}, src)
	if err != nil {
		t.Fatal(err)
	}
	bo := ndconv.BlockOptions{Shape: []int{4, 3, 5}, InFlight: 3}
	g, err := p.Grid(bo)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	computed := map[int]int{}
	bo.Skip = func(i int) bool { return i%3 == 1 }
	bo.Computed = func(i int, d time.Duration) {
		mu.Lock()
		computed[i]++
		mu.Unlock()
		if d <= 0 {
			t.Errorf("block %d computed in %v", i, d)
		}
	}
	got, _ := nd.New(nd.Float32, src.Shape...)
	sentinel := float32(-12345)
	for i := range got.Data.([]float32) {
		got.Data.([]float32)[i] = sentinel
	}
	if err := p.ExecuteBlocks(context.Background(), ndconv.ArraySource{Array: src}, ndconv.ArraySink{Array: got}, bo); err != nil {
		t.Fatal(err)
	}
	strides := nd.Strides(src.Shape)
	for i := range g.Len() {
		b := g.Block(i)
		skipped := i%3 == 1
		if n := computed[i]; n != map[bool]int{true: 0, false: 1}[skipped] {
			t.Errorf("block %d (skipped %v) computed %d times", i, skipped, n)
		}
		for z := b.OutLo[0]; z < b.OutHi[0]; z++ {
			for y := b.OutLo[1]; y < b.OutHi[1]; y++ {
				for x := b.OutLo[2]; x < b.OutHi[2]; x++ {
					o := z*strides[0] + y*strides[1] + x
					v, w := got.Data.([]float32)[o], want.Data.([]float32)[o]
					if skipped && v != sentinel || !skipped && v != w {
						t.Fatalf("block %d (skipped %v) at %d,%d,%d: %v, want %v", i, skipped, z, y, x, v, map[bool]float32{true: sentinel, false: w}[skipped])
					}
				}
			}
		}
	}
}
