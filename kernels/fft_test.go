package kernels

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/fft"
	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/nd"
)

// The emulations below run fft.cl's and fftconv.cl's arithmetic on the
// CPU, index for index and in float32, from what NewFFTConv plans (the
// geo table, the defines, the passes): they check the plan and the
// kernels' index maths without a GPU; the kernels themselves run on the
// device (and on PoCL) in the backends' tests.

func cmul32(a, b complex64) complex64 {
	return complex(real(a)*real(b)-imag(a)*imag(b), real(a)*imag(b)+imag(a)*real(b))
}

func root32(roots []float32, m int, inverse bool) complex64 {
	if inverse {
		return complex(roots[2*m], -roots[2*m+1])
	}
	return complex(roots[2*m], roots[2*m+1])
}

// emulateButterfly is fft_butterfly.
func emulateButterfly(u []complex64, radix, k, p, n int, roots []float32, inverse bool) {
	unit := n / (p * radix)
	for r := 1; r < radix; r++ {
		u[r] = cmul32(u[r], root32(roots, r*k*unit, inverse))
	}
	switch radix {
	case 2:
		u[0], u[1] = u[0]+u[1], u[0]-u[1]
	case 4:
		t0, t1, t2, t3 := u[0]+u[2], u[0]-u[2], u[1]+u[3], u[1]-u[3]
		t3i := complex(imag(t3), -real(t3))
		if inverse {
			t3i = complex(-imag(t3), real(t3))
		}
		u[0], u[1], u[2], u[3] = t0+t2, t1+t3i, t0-t2, t1-t3i
	default:
		var v [7]complex64
		order := n / radix
		for s := range radix {
			acc := u[0]
			for r := 1; r < radix; r++ {
				acc += cmul32(u[r], root32(roots, (r*s%radix)*order, inverse))
			}
			v[s] = acc
		}
		copy(u, v[:radix])
	}
}

// emulateTransform runs t's passes (fft_pass's indexing; fft_local
// computes the same values in local memory) over data.
func emulateTransform(t FFTTransform, data []complex64, inverse bool) {
	n, roots := t.Length, FFTRoots(t.Length)
	src, dst := data, make([]complex64, len(data))
	for _, pass := range t.Passes {
		butterflies := n / pass.Radix
		var u [7]complex64
		for index := range t.Lines * butterflies {
			inner, rest := index%t.Stride, index/t.Stride
			j := rest % butterflies
			base := rest/butterflies*n*t.Stride + inner
			for r := range pass.Radix {
				u[r] = src[base+(j+r*butterflies)*t.Stride]
			}
			k := j % pass.P
			emulateButterfly(u[:pass.Radix], pass.Radix, k, pass.P, n, roots, inverse)
			o := (j-k)*pass.Radix + k
			for r := range pass.Radix {
				dst[base+(o+r*pass.P)*t.Stride] = u[r]
			}
		}
		src, dst = dst, src
	}
	copy(data, src)
}

// TestFFTPasses holds fft.cl's transforms of every fast length up to 1000
// (and a few long ones) to a float64 DFT: ‖X̂ − X‖₂ ≤ 2ε·passes·‖X‖₂,
// forward and inverse, on strided lines.
func TestFFTPasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lengths := []int{2048, 3 * 5 * 7 * 16, 7 * 7 * 9}
	for n := 1; n <= 1000; n++ {
		if fft.IsFast(n) {
			lengths = append(lengths, n)
		}
	}
	for _, n := range lengths {
		passes, err := FFTRadices(n)
		if err != nil {
			t.Fatal(err)
		}
		const stride = 3
		tr := FFTTransform{Length: n, Stride: stride, Lines: 2 * stride, Passes: passes}
		data := make([]complex64, n*tr.Lines)
		for i := range data {
			data[i] = complex(float32(rng.NormFloat64()), float32(rng.NormFloat64()))
		}
		for _, inverse := range []bool{false, true} {
			got := append([]complex64(nil), data...)
			emulateTransform(tr, got, inverse)
			for line := range tr.Lines {
				base := line/stride*n*stride + line%stride
				x, want := make([]complex128, n), make([]complex128, n)
				for i := range n {
					x[i] = complex128(data[base+i*stride])
				}
				sign := -1.0
				if inverse {
					sign = 1
				}
				var errSq, normSq float64
				for k := range n {
					for i, v := range x {
						want[k] += v * cmplx.Rect(1, sign*2*math.Pi*float64(i*k%n)/float64(n))
					}
					d := complex128(got[base+k*stride]) - want[k]
					errSq += real(d)*real(d) + imag(d)*imag(d)
					normSq += real(want[k])*real(want[k]) + imag(want[k])*imag(want[k])
				}
				if bound := 2 * 0x1p-24 * float64(len(passes)+1); math.Sqrt(errSq) > bound*math.Sqrt(normSq) {
					t.Fatalf("n=%d inverse=%v line %d: relative error %.3g > %.3g", n, inverse, line, math.Sqrt(errSq/normSq), bound)
				}
			}
		}
	}
	if _, err := FFTRadices(11 * 4); err == nil {
		t.Error("a length with the factor 11 was accepted")
	}
}

// emulateFFTConv runs the whole plan: gather, transforms (fft.cl's, or
// internal/fft's real ones standing in for cuFFT with RealBlocks), kernel
// spectra, products, inverse and scatter.
func emulateFFTConv(t *testing.T, f *FFTConv, p *nd.Problem, src nd.Array) nd.Array {
	def := map[string]int{}
	for _, d := range f.Defines {
		name, value, _ := strings.Cut(d, "=")
		def[name], _ = strconv.Atoi(value)
	}
	naxes, nbatch, real := int(f.Geo[0]), int(f.Geo[1]), def["REAL_BLOCKS"] == 1
	size, outputs, ssize := int(f.Geo[2]), int(f.Geo[3]), f.SpectrumValues
	geo := func(i, field int) int { return int(f.Geo[4+8*i+field]) }
	batchGeo := func(j, field int) int { return int(f.Geo[4+8*naxes+3*j+field]) }
	// blockAt is fftconv.cl's BLOCK_AT: where value e of block b of a
	// batch is, in floats.
	blockAt := func(b, e int) int {
		if real {
			return b*size + e
		}
		return (b/2*size+e)*2 + b%2
	}
	if real != (f.PerSlot == 1) {
		t.Fatalf("REAL_BLOCKS=%v with %d blocks per transform", real, f.PerSlot)
	}
	in := src.Float64s()
	dst, _ := nd.New(p.Out, p.FullShape()...)
	g := f.Geometry
	slots := f.Slots(f.Batch)
	var rnd *fft.RealND
	if real {
		rnd = fft.NewRealND(slots, g.Length, 1)
	}
	// forward transforms a batch's floats (real blocks, or complex ones
	// as interleaved pairs) into spectra; inverse back into floats.
	forward := func(raw []float32) []complex64 {
		if !real {
			blocks := make([]complex64, len(raw)/2)
			for i := range blocks {
				blocks[i] = complex(raw[2*i], raw[2*i+1])
			}
			for _, tr := range f.Transforms {
				tr.Lines = len(blocks) / tr.Length // the batch's slots only
				emulateTransform(tr, blocks, false)
			}
			return blocks
		}
		spec := make([]complex64, slots*ssize)
		rnd.Forward(spec, raw)
		return spec
	}
	inverse := func(spec []complex64) []float32 {
		if !real {
			for _, tr := range f.Transforms {
				tr.Lines = len(spec) / tr.Length
				emulateTransform(tr, spec, true)
			}
			raw := make([]float32, 2*len(spec))
			for i, v := range spec {
				raw[2*i], raw[2*i+1] = real32(v), imag(v)
			}
			return raw
		}
		raw := make([]float32, slots*size)
		rnd.Inverse(raw, spec)
		return raw
	}
	floats := slots * size * f.PerSlot // real: P per slot; complex: 2P
	var spectra [][]complex64
	for _, k := range f.Kernels {
		raw := make([]float32, floats)
		for i, v := range k {
			raw[blockAt(0, i)] = v
		}
		spec := forward(raw)[:ssize]
		scale := 1 / float32(size)
		for i, v := range spec {
			spec[i] = complex(scale*real32(v), -scale*imag(v))
		}
		spectra = append(spectra, spec)
	}
	bank := len(p.Kernels)
	for batch := range f.Batches {
		first, count := f.BatchBlocks(batch)
		raw := make([]float32, floats)
		for i := range raw {
			raw[i] = float32(math.NaN()) // stale: the gather must write every value a transform reads
		}
		for index := range f.Slots(count) * f.PerSlot * size {
			e0, blk := index%size, index/size
			e, b := e0, first+blk
			at, read, outside := 0, true, false
			for i := naxes - 1; i >= 0; i-- {
				length, block, cnt := geo(i, 0), geo(i, 1), geo(i, 2)
				tt, which := e%length, b%cnt
				e, b = e/length, b/cnt
				start := which * block
				if tt >= min(block, geo(i, 6)-start)+length-block {
					read = false
				}
				q := start - geo(i, 3) + tt
				if m, ok := p.Border.Index(q, geo(i, 4)); ok {
					at += m * geo(i, 5)
				} else {
					outside = true
				}
			}
			for j := nbatch - 1; j >= 0; j-- {
				at += b % batchGeo(j, 0) * batchGeo(j, 1)
				b /= batchGeo(j, 0)
			}
			v := float32(0)
			if read && blk < count {
				v = f.CVal
				if !outside {
					v = float32(in[at])
				}
			}
			raw[blockAt(blk, e0)] = v
		}
		if !real {
			// Slots past the batch's blocks are not transformed.
			raw = raw[:f.Slots(count)*size*2]
		}
		spec := forward(raw)
		for k, w := range spectra {
			prod := make([]complex64, len(spec))
			for i := range f.Slots(count) * ssize {
				prod[i] = cmul32(spec[i], w[i%ssize])
			}
			back := inverse(prod)
			for index := range count * outputs {
				e, blk := index%outputs, index/outputs
				b := first + blk
				at, from, stride, valid := 0, 0, 1, true
				for i := naxes - 1; i >= 0; i-- {
					length, block, cnt := geo(i, 0), geo(i, 1), geo(i, 2)
					tt, which := e%block, b%cnt
					e, b = e/block, b/cnt
					start := which * block
					if tt >= min(block, geo(i, 6)-start) {
						valid = false
					}
					at += (start + tt) * geo(i, 7)
					from += tt * stride
					stride *= length
				}
				if !valid {
					continue
				}
				for j := nbatch - 1; j >= 0; j-- {
					at += b % batchGeo(j, 0) * batchGeo(j, 2)
					b /= batchGeo(j, 0)
				}
				nd.Store(dst.Data, at*bank+k, 1, []float32{back[blockAt(blk, from)]})
			}
		}
	}
	return dst
}

func real32(v complex64) float32 { return real(v) }

// TestFFTConvEmulated runs the engines' case table (every border, mode,
// origin, bank, channels, dtype the FFT takes) and larger problems through
// the emulated plan, complex blocks (fft.cl) and real ones (cuFFT's
// layout), small batches so that blocks span batches, and compares with
// the reference within fftconv's bound.
func TestFFTConvEmulated(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	cases := enginetest.Table()
	cases = append(cases,
		enginetest.Case{Name: "1d-2003-k63", Spec: nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 63)}, Border: nd.Wrap}, Input: enginetest.RandomArray(rng, nd.Float32, 2003)},
		enginetest.Case{Name: "2d-rgb-bank", Spec: nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 7, 5), enginetest.RandomKernel(rng, true, 7, 5)}, Origin: []int{-2, 1}, Border: nd.Constant, CVal: 9}, Input: enginetest.RandomArray(rng, nd.Uint8, 61, 47, 3)},
		enginetest.Case{Name: "3d-valid", Spec: nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 3, 4, 5)}, Mode: nd.Valid, Out: nd.Int16}, Input: enginetest.RandomArray(rng, nd.Int16, 13, 11, 17)},
	)
	ran := 0
	for i, c := range cases {
		if c.Spec.Shape == nil {
			c.Spec.Shape, c.Spec.In = c.Input.Shape, c.Input.DType()
		}
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if fftconv.Supported(p) != nil || CheckDTypes(p) != nil {
			continue
		}
		if nonFinite, _ := fftconv.ScanInput(p, c.Input, 1); nonFinite > 0 {
			continue // the backends run the direct method for these
		}
		real := i%2 == 1
		f, err := NewFFTConv(p, FFTConvOptions{RealBlocks: real, MaxBatch: 1 + i%3, MaxLocalBytes: 16 << 10})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if f == nil {
			continue
		}
		got := emulateFFTConv(t, f, p, c.Input)
		bound := f.Geometry.ErrorBound(fftconv.AbsSum(p), c.MaxAbs())
		if msg := c.CheckBound(got, c.Want(), bound); msg != "" {
			t.Errorf("%s (real blocks %v, %d batches of %d): %s", c.Name, real, f.Batches, f.Batch, msg)
		}
		ran++
	}
	if ran < 200 {
		t.Errorf("only %d cases ran", ran)
	}
}
