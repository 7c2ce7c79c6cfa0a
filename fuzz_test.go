package ndconv_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/nd"
)

// fuzzBytes reads a fuzz input a field at a time, zeros once it runs out.
type fuzzBytes []byte

func (b *fuzzBytes) next() int {
	if len(*b) == 0 {
		return 0
	}
	v := (*b)[0]
	*b = (*b)[1:]
	return int(v)
}

// small is a signed value in [−n, n].
func (b *fuzzBytes) small(n int) int { return b.next()%(2*n+1) - n }

// pick is a value in [0, n), or bad about once in 32 bytes: most decoded
// requests are valid, and each field is sometimes not.
func (b *fuzzBytes) pick(n, bad int) int {
	v := b.next()
	if v%32 == 31 {
		return bad
	}
	return v % n
}

// FuzzPlan decodes a request from the fuzz input — a shape of rank 0 to 4
// (axes of length 0 included), the input and output dtypes, a bank of up
// to 20 kernels of up to 4 taps per axis (0 included), real, complex or
// factored, with axes, origins, mode, border, cval, method, workers and
// where the output goes (fresh, in place, overlapping) — and runs it with
// NewPlan and Execute on the CPU. It must never panic: NewPlan either
// refuses it with a typed error or Execute's result equals internal/ref's
// (FFT within its bound). Sizes are capped so that each input runs in
// well under a millisecond.
func FuzzPlan(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 5, 7, 9, 0, 1, 3, 3, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{1, 0, 9, 1, 1, 1, 3, 0, 0, 1, 2, 3, 4, 5})              // a length-0 axis
	f.Add([]byte{3, 2, 3, 4, 9, 3, 3, 3, 3, 4, 1, 1, 2, 3, 1, 1, 0, 40}) // a bank
	f.Add([]byte{0, 9, 1, 3})                                            // 0-D
	f.Add([]byte{2, 6, 6, 12, 1, 2, 0, 3, 3, 2, 3, 1, 1, 2, 9, 9})       // complex
	f.Fuzz(func(t *testing.T, data []byte) {
		b := fuzzBytes(data)
		c := decodeFuzzCase(&b)
		outcome, err := c.run()
		if err != nil {
			t.Fatalf("%s: %v\n%s", outcome, err, c)
		}
	})
}

// decodeFuzzCase reads one request from b.
func decodeFuzzCase(b *fuzzBytes) propertyCase {
	rank := 1 + b.pick(4, -1) // 0-D now and then
	shape := make([]int, rank)
	for d := range shape {
		shape[d] = 1 + b.pick(7, -1) // length 0 now and then
	}
	dtypes := append(slices.Clone(nd.DTypes), nd.ComplexDTypes...)
	in := dtypes[b.next()%len(dtypes)]
	out := nd.Unspecified
	if v := b.next(); v < len(dtypes) {
		out = dtypes[v]
	}
	krank := 1 + b.pick(max(rank, 1), 4) // no axis, or more than the input's, now and then
	kshape := make([]int, krank)
	for i := range kshape {
		kshape[i] = 1 + b.pick(4, -1) // no weights now and then
	}
	bank := 1 + b.next()%20
	kind := b.next() % 4
	var kernels []ndconv.Kernel
	weight := func() float64 { return float64(b.small(127)) / 64 }
	for range bank {
		n := 1
		for _, k := range kshape {
			n *= k
		}
		switch {
		case kind == 1 && krank > 0: // factored
			fs := make([][]float64, krank)
			for i, k := range kshape {
				fs[i] = make([]float64, k)
				for j := range fs[i] {
					fs[i][j] = weight()
				}
			}
			kernels = append(kernels, ndconv.SeparableKernel(fs...))
		default:
			w := make([]float64, n)
			for i := range w {
				w[i] = weight()
			}
			k := ndconv.NewKernel(kshape, w)
			if kind == 2 { // complex
				k.Imag = make([]float64, n)
				for i := range k.Imag {
					k.Imag[i] = weight()
				}
			}
			kernels = append(kernels, k)
		}
	}
	opt := ndconv.Options{
		Device:  "cpu",
		Border:  nd.Border(b.pick(5, 5)), // 5: not a border
		CVal:    float64(b.small(20)) / 4,
		Mode:    nd.Mode(b.pick(3, 3)), // 3: not a mode
		Method:  ndconv.Method(b.pick(4, 4)),
		Workers: b.pick(3, -1), // −1: an error
	}
	if in.IsComplex() {
		opt.CValImag = float64(b.small(8)) / 4
	}
	if b.next()%2 == 1 {
		opt.Origin = make([]int, b.pick(krank+1, krank+1))
		for i := range opt.Origin {
			opt.Origin[i] = b.small(2) // out of range for short axes
		}
	}
	if b.next()%2 == 1 && krank <= rank {
		perm := make([]int, rank)
		for i := range perm {
			perm[i] = i
		}
		for i := range perm { // a permutation from the bytes
			j := i + b.next()%(rank-i)
			perm[i], perm[j] = perm[j], perm[i]
		}
		opt.Axes = perm[:krank]
		for i := range opt.Axes {
			switch b.pick(3, 3) {
			case 1:
				opt.Axes[i] -= rank // counted from the end
			case 3:
				opt.Axes[i] += rank // out of range
			}
		}
	}
	opt.DType = out
	c := propertyCase{op: ndconv.Operation(b.next() % 2), opt: opt, kernels: kernels}
	c.overlap = b.next() % 3
	c.shift = b.small(4)
	// Keep the reference's work (outputs × taps × kernels) small, so that
	// each input runs in about a millisecond: halve the longest axis
	// until it is.
	taps := 1
	for _, k := range kshape {
		taps *= max(k, 1)
	}
	for {
		n := 1
		for _, s := range shape {
			n *= max(s, 1)
		}
		longest := 0
		for d, s := range shape {
			if s > shape[longest] {
				longest = d
			}
		}
		if n*taps*bank <= 20000 || shape[longest] <= 1 {
			break
		}
		shape[longest] /= 2
	}
	// The input's values: the rest of the bytes, cycled (zeros without).
	src, _ := nd.New(in, shape...)
	values := make([]float64, src.Len())
	rest := []byte(*b)
	for i := range values {
		if len(rest) > 0 {
			values[i] = float64(int8(rest[i%len(rest)]))
		}
	}
	if in.IsComplex() {
		imag := make([]float64, len(values))
		for i := range imag {
			imag[i] = values[(i+1)%len(values)] / 2
		}
		nd.StoreComplex(src.Data, 0, 1, values, imag)
	} else {
		nd.Store(src.Data, 0, 1, values)
	}
	c.input = src
	return c
}

// TestFuzzPlanInputs runs FuzzPlan's decoding over 500 random inputs, as
// the fuzzer would, so that plain go test covers more than its seeds.
func TestFuzzPlanInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 5))
	counts := map[string]int{}
	for i := range 500 {
		data := make([]byte, rng.IntN(64))
		for j := range data {
			data[j] = byte(rng.IntN(256))
		}
		b := fuzzBytes(slices.Clone(data))
		c := decodeFuzzCase(&b)
		outcome, err := c.run()
		if err != nil {
			t.Errorf("input %d %q: %s: %v\n%s", i, data, outcome, err, c)
		}
		counts[outcome]++
	}
	t.Logf("500 inputs: %v", counts)
}
