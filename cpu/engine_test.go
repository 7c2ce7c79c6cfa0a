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

// methods are the CPU methods under test, each with the cases it supports.
var methods = []struct {
	name     string
	new      func(*nd.Problem, Options) Executable
	supports func(*nd.Problem) bool
}{
	{"direct", NewDirect, func(*nd.Problem) bool { return true }},
	{"separable", func(p *nd.Problem, o Options) Executable {
		e, err := NewSeparable(p, o)
		if err != nil {
			panic(err)
		}
		return e
	}, (*nd.Problem).Separable},
}

func runCase(t *testing.T, c enginetest.Case, workers int) {
	t.Helper()
	p, err := c.Spec.Normalize()
	if err != nil {
		t.Fatalf("normalize: %v", err)
	}
	want := c.Want()
	for _, m := range methods {
		if !m.supports(p) {
			continue
		}
		dst, err := nd.New(p.Out, p.FullShape()...)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.new(p, Options{Workers: workers}).Execute(context.Background(), dst, c.Input); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if msg := c.Check(dst, want); msg != "" {
			t.Errorf("%s, %d workers: %s", m.name, workers, msg)
		}
	}
}

func TestTable(t *testing.T) {
	for _, c := range enginetest.Table() {
		t.Run(c.Name, func(t *testing.T) { runCase(t, c, 3) })
	}
}

func TestRandom(t *testing.T) {
	for _, c := range enginetest.Random(1, 300) {
		t.Run(c.Name, func(t *testing.T) { runCase(t, c, 1+len(c.Name)%3) })
	}
}

// TestSeparableChunked forces the separable method's chunking with a small
// scratch limit and checks that the chunked result equals the whole one,
// bit for bit.
func TestSeparableChunked(t *testing.T) {
	defer func(l int64) { separableScratchLimit = l }(separableScratchLimit)
	split := 0
	for _, c := range append(enginetest.Table(), enginetest.Random(3, 100)...) {
		p, err := c.Spec.Normalize()
		if err != nil || !p.Separable() {
			continue
		}
		want, _ := nd.New(p.Out, p.FullShape()...)
		whole, _ := newWholeSeparable(p, Options{Workers: 2})
		if err := whole.Execute(context.Background(), want, c.Input); err != nil {
			t.Fatal(err)
		}
		separableScratchLimit = max(separableScratch(p)/3, 1)
		e, err := NewSeparable(p, Options{Workers: 2})
		separableScratchLimit = 256 << 20
		if err != nil {
			continue // one voxel's halo needs more: refused
		}
		if ch, ok := e.(*chunked); ok && len(ch.chunks) > 1 {
			split++
		}
		got, _ := nd.New(p.Out, p.FullShape()...)
		if err := e.Execute(context.Background(), got, c.Input); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: chunked differs from whole", c.Name)
		}
	}
	if split < 10 {
		t.Errorf("only %d cases ran in several chunks", split)
	}
	t.Logf("%d cases in several chunks", split)
}

// TestBankSameBits checks the bank loop (kernels × rows as one register
// block, in groups of simd.BankSets) against each kernel run alone, bit for
// bit: banks of one group, of several and of a partial one; zero taps next
// to infinities and NaNs, which only skipping them keeps out of the sums;
// rows long enough for every pass of the loop and its masked tail, and
// rows of a multiple of 8 (whole simd.Transpose8 blocks, none left over);
// float and integer outputs.
func TestBankSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 2))
	for n, bank := range []int{2, 3, 4, 5, 8, 9, 16, 17, 24, 33} {
		for _, out := range []nd.DType{nd.Float32, nd.Uint8, nd.Float64} {
			dt := nd.Float32
			if out == nd.Float64 {
				dt = nd.Float64 // float64 accumulators
			}
			cols := []int{70, 64}[n%2]
			in := enginetest.RandomArray(rng, dt, 6, 9, cols)
			nd.Store(in.Data, rng.IntN(6*9*cols), 1, []float64{math.NaN()})
			nd.Store(in.Data, rng.IntN(6*9*cols), 1, []float64{math.Inf(1)})
			spec := nd.Spec{Shape: in.Shape, In: dt, Out: out, Border: nd.Reflect}
			for range bank {
				spec.Kernels = append(spec.Kernels, enginetest.RandomKernel(rng, true, 3, 4, 5))
			}
			name := fmt.Sprintf("bank %d, %v input, %v output", bank, dt, out)
			p, err := spec.Normalize()
			if err != nil {
				t.Fatal(err)
			}
			got, _ := nd.New(out, p.FullShape()...)
			if err := NewDirect(p, Options{Workers: 2}).Execute(context.Background(), got, in); err != nil {
				t.Fatal(err)
			}
			size := out.Size()
			for b, k := range spec.Kernels {
				one := spec
				one.Kernels = []nd.Kernel{k}
				q, err := one.Normalize()
				if err != nil {
					t.Fatal(err)
				}
				want, _ := nd.New(out, q.FullShape()...)
				if err := NewDirect(q, Options{Workers: 2}).Execute(context.Background(), want, in); err != nil {
					t.Fatal(err)
				}
				for i := range product(q.OutShape) {
					g := got.Bytes()[(i*bank+b)*size:][:size]
					if w := want.Bytes()[i*size:][:size]; !bytes.Equal(g, w) {
						t.Fatalf("%s: kernel %d, output %d: bytes %x, alone %x", name, b, i, g, w)
					}
				}
			}
		}
	}
}

// TestSlabBlocksSameBits checks the separable method's register-blocked
// slab passes against its tap-by-tap loop, bit for bit, and against the
// reference: volumes and images long enough along the slab axes for
// blocks of simd.BankSets outputs, factors with zero taps next to
// infinities and NaNs, every border, banks, float and integer outputs.
func TestSlabBlocksSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 4))
	cases := []struct{ shape, kernel []int }{
		{[]int{40, 37}, []int{5, 4}},
		{[]int{33, 21, 3}, []int{7, 3, 1}},
		{[]int{26, 19, 24}, []int{3, 9, 2}},
		{[]int{45, 9, 40}, []int{11, 1, 1}},
	}
	for n, c := range cases {
		for _, out := range []nd.DType{nd.Float32, nd.Uint8, nd.Float64} {
			border := []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant}[n%5]
			dt := nd.Float32
			if out == nd.Float64 {
				dt = nd.Float64 // float64 accumulators
			}
			in := enginetest.RandomArray(rng, dt, c.shape...)
			nd.Store(in.Data, rng.IntN(product(c.shape)), 1, []float64{math.NaN()})
			nd.Store(in.Data, rng.IntN(product(c.shape)), 1, []float64{math.Inf(-1)})
			spec := nd.Spec{Shape: in.Shape, In: dt, Out: out, Border: border, CVal: 0.5, Mode: []nd.Mode{nd.Same, nd.Valid, nd.Full}[n%3]}
			for range 1 + n%2 {
				k := enginetest.RandomFactors(rng, c.kernel...)
				k.Factors[0][rng.IntN(len(k.Factors[0]))] = 0
				spec.Kernels = append(spec.Kernels, k)
			}
			compareBlocked(t, fmt.Sprintf("%v %v, %v input, %v output", c.shape, c.kernel, dt, out), spec, in, NewSeparable)
		}
	}
}

// TestSegmentsSameBits checks long 1-D kernels, run as blocks of segments
// (simd.Block), against the tap-by-tap loop, bit for bit, and against the
// reference: float32 and float64 accumulators, channels, zero taps next to
// infinities and NaNs, rows with and without a remainder after the blocks.
func TestSegmentsSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 5))
	cases := []struct {
		in            nd.DType
		shape, kernel []int
	}{
		{nd.Float32, []int{5000}, []int{300}},
		{nd.Float32, []int{1100, 3}, []int{250, 1}},
		{nd.Float64, []int{2000}, []int{150}},
		{nd.Float32, []int{4, 900}, []int{1, 200}},
	}
	for n, c := range cases {
		for _, out := range []nd.DType{c.in, nd.Uint8} {
			in := enginetest.RandomArray(rng, c.in, c.shape...)
			for range 2 {
				i := rng.IntN(product(c.shape))
				nd.Store(in.Data, i, 1, []float64{math.NaN()})
				nd.Store(in.Data, i/2, 1, []float64{math.Inf(1)})
			}
			k := enginetest.RandomKernel(rng, true, c.kernel...)
			spec := nd.Spec{Shape: in.Shape, In: c.in, Out: out, Kernels: []nd.Kernel{k}, Border: []nd.Border{nd.Reflect, nd.Constant, nd.Wrap, nd.Nearest}[n], CVal: 2}
			compareBlocked(t, fmt.Sprintf("%v %v %v, %v output", c.in, c.shape, c.kernel, out), spec, in, newDirectMethod)
		}
	}
}

// compareBlocked runs spec on in with the engine's register-blocked loops
// and without them (blockedLoops), and checks that the outputs are the same
// bytes and agree with the reference.
func compareBlocked(t *testing.T, name string, spec nd.Spec, in nd.Array, method func(*nd.Problem, Options) (Executable, error)) {
	t.Helper()
	defer func() { blockedLoops = true }()
	p, err := spec.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	var got [2]nd.Array
	for i, blocks := range []bool{true, false} {
		blockedLoops = blocks
		got[i], _ = nd.New(p.Out, p.FullShape()...)
		e, err := method(p, Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Execute(context.Background(), got[i], in); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got[0].Bytes(), got[1].Bytes()) {
		t.Errorf("%s: the blocked loops differ from the tap-by-tap loops", name)
	}
	c := enginetest.Case{Spec: spec, Input: in}
	if msg := c.Check(got[0], c.Want()); msg != "" {
		t.Errorf("%s: %s", name, msg)
	}
}
