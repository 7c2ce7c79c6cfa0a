package kernels

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
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

// emulatePass is fft_pass: one pass of t over its lines, src to dst.
func emulatePass(t FFTTransform, pass FFTPass, lines int, src, dst []complex64, inverse bool) {
	n, roots := t.Length, FFTRoots(t.Length)
	butterflies := n / pass.Radix
	var u [7]complex64
	for index := range lines * butterflies {
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
}

// emulateTransform runs t's passes (fft_pass's indexing; fft_local
// computes the same values in local memory) over data.
func emulateTransform(t FFTTransform, data []complex64, inverse bool) {
	src, dst := data, make([]complex64, len(data))
	for _, pass := range t.Passes {
		emulatePass(t, pass, t.Lines, src, dst, inverse)
		src, dst = dst, src
	}
	copy(data, src)
}

// emulateSteps runs f.TransformSteps(slots) over data, as a backend
// launches them: fft_local as its passes in place, fft_pass between data
// and a scratch buffer, the copies back.
func emulateSteps(f *FFTConv, slots int, data []complex64, inverse bool) {
	scratch := make([]complex64, len(data))
	for i := range scratch {
		scratch[i] = complex(float32(math.NaN()), 0) // a step reading what none wrote shows
	}
	for _, st := range f.TransformSteps(slots) {
		t := f.Transforms[st.Transform]
		t.Lines = int(st.Lines)
		switch {
		case st.CopyBack:
			copy(data, scratch[:st.Bytes/8])
		case st.Local:
			emulateTransform(t, data, inverse)
		case st.FromScratch:
			emulatePass(t, st.Pass, t.Lines, scratch, data, inverse)
		default:
			emulatePass(t, st.Pass, t.Lines, data, scratch, inverse)
		}
	}
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
	if def["NAXES"] != naxes || def["NBATCH"] != nbatch || def["GROUP"] != f.Group {
		t.Fatalf("defines %v for a geometry of %d and %d axes, groups of %d", f.Defines, naxes, nbatch, f.Group)
	}
	in := src.Float64s()
	// blockOf, rowCoords, gatherRowOf and gatherValue are fftconv.cl's
	// block_of, row_coords, gather_row_of and gather_value.
	blockOf := func(b int, live bool) emulatedBlock {
		blk := emulatedBlock{start: make([]int, naxes), count: make([]int, naxes), live: live}
		for i := naxes - 1; i >= 0; i-- {
			blk.start[i] = b % geo(i, 2) * geo(i, 1)
			blk.count[i] = min(geo(i, 1), geo(i, 6)-blk.start[i])
			b /= geo(i, 2)
		}
		for j := nbatch - 1; j >= 0; j-- {
			at := b % batchGeo(j, 0)
			blk.inAt += at * batchGeo(j, 1)
			blk.outAt += at * batchGeo(j, 2)
			b /= batchGeo(j, 0)
		}
		return blk
	}
	rowCoords := func(row, field int) []int {
		t := make([]int, naxes)
		for i := naxes - 2; i > 0; i-- {
			t[i] = row % geo(i, field)
			row /= geo(i, field)
		}
		t[0] = row
		return t
	}
	gatherRowOf := func(blk *emulatedBlock, t []int) emulatedRow {
		r := emulatedRow{base: blk.inAt}
		read := blk.live
		for i := range naxes - 1 {
			if t[i] >= blk.count[i]+geo(i, 0)-geo(i, 1) {
				read = false
			}
			if m, ok := p.Border.Index(blk.start[i]-geo(i, 3)+t[i], geo(i, 4)); ok {
				r.base += m * geo(i, 5)
			} else {
				r.outside = true
			}
		}
		last := naxes - 1
		r.p0 = blk.start[last] - geo(last, 3)
		if read {
			r.reads = blk.count[last] + geo(last, 0) - geo(last, 1)
		}
		return r
	}
	gatherValue := func(r *emulatedRow, x int) float32 {
		last := naxes - 1
		if x >= r.reads {
			return 0
		}
		m, ok := p.Border.Index(r.p0+x, geo(last, 4))
		if r.outside || !ok {
			return f.CVal
		}
		return float32(in[r.base+m*geo(last, 5)])
	}
	if real != (f.PerSlot == 1) {
		t.Fatalf("REAL_BLOCKS=%v with %d blocks per transform", real, f.PerSlot)
	}
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
			emulateSteps(f, len(blocks)/size, blocks, false) // the batch's slots only
			return blocks
		}
		spec := make([]complex64, slots*ssize)
		rnd.Forward(spec, raw)
		return spec
	}
	// inverse transforms planes of slots each.
	inverse := func(spec []complex64) []float32 {
		if !real {
			emulateSteps(f, len(spec)/size, spec, true)
			raw := make([]float32, 2*len(spec))
			for i, v := range spec {
				raw[2*i], raw[2*i+1] = real32(v), imag(v)
			}
			return raw
		}
		planes := len(spec) / (slots * ssize)
		raw := make([]float32, planes*slots*size)
		for g := range planes {
			rnd.Inverse(raw[g*slots*size:(g+1)*slots*size], spec[g*slots*ssize:(g+1)*slots*ssize])
		}
		return raw
	}
	floats := slots * size * f.PerSlot // real: P per slot; complex: 2P
	var spectra [][]complex64
	for k := range f.Kernels {
		raw := make([]float32, floats)
		copy(raw, f.KernelSlot(k))
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
		// fftconv_gather, work-item by work-item.
		length := geo(naxes-1, 0)
		eachItem(f.GatherGrid(count), f.Slots(count), size/length, func(slot, row, x0, lx int) {
			var r [2]emulatedRow
			for h := range f.PerSlot {
				b := slot*f.PerSlot + h
				blk := blockOf(first+b, b < count)
				r[h] = gatherRowOf(&blk, rowCoords(row, 0))
			}
			for x := x0; x < length; x += lx {
				for h := range f.PerSlot {
					raw[(slot*size+row*length+x)*f.PerSlot+h] = gatherValue(&r[h], x)
				}
			}
		})
		if !real {
			// Slots past the batch's blocks are not transformed.
			raw = raw[:f.Slots(count)*size*2]
		}
		spec := forward(raw)
		// A group's products, plane by plane, slots apart; inverted
		// together; stored kernel by kernel of the group.
		for k0 := 0; k0 < bank; k0 += f.Group {
			group := min(f.Group, bank-k0)
			prod := make([]complex64, f.Group*slots*ssize)
			for g := range group {
				for i := range f.Slots(count) * ssize {
					prod[g*slots*ssize+i] = cmul32(spec[i], spectra[k0+g][i%ssize])
				}
			}
			back := inverse(prod)
			// fftconv_scatter, work-item by work-item.
			width := geo(naxes-1, 1)
			eachItem(f.ScatterGrid(count), f.Slots(count), outputs/width, func(slot, row, x0, lx int) {
				t := rowCoords(row, 1)
				from := 0
				for i := range naxes - 1 {
					from = (from + t[i]) * geo(i+1, 0)
				}
				var at, valid [2]int
				most := 0
				for h := range f.PerSlot {
					b := slot*f.PerSlot + h
					blk := blockOf(first+b, b < count)
					at[h] = blk.outAt + blk.start[naxes-1]*geo(naxes-1, 7)
					live := blk.live
					for i := range naxes - 1 {
						live = live && t[i] < blk.count[i]
						at[h] += (blk.start[i] + t[i]) * geo(i, 7)
					}
					if live {
						valid[h] = blk.count[naxes-1]
					}
					most = max(most, valid[h])
				}
				for item := x0; item < most*f.Group; item += lx {
					x, g := item/f.Group, item%f.Group
					for h := range f.PerSlot {
						if x < valid[h] && g < group {
							v := back[((g*slots+slot)*size+from+x)*f.PerSlot+h]
							nd.Store(dst.Data, (at[h]+x*geo(naxes-1, 7))*bank+k0+g, 1, []float32{v})
						}
					}
				}
			})
		}
	}
	return dst
}

// randomBank is n random kernels of one shape, every third with zeros.
func randomBank(rng *rand.Rand, n int, shape ...int) []nd.Kernel {
	var ks []nd.Kernel
	for i := range n {
		ks = append(ks, enginetest.RandomKernel(rng, i%3 == 0, shape...))
	}
	return ks
}

// eachItem runs body for every work-item of grid over slots slots of rows
// rows, looping as fftconv.cl's kernels do: (slot, row, first value of the
// row, step along it).
func eachItem(grid FFTGrid, slots, rows int, body func(slot, row, x0, lx int)) {
	lx, ly := grid.Local[0], grid.Local[1]
	for gz := range grid.Groups[2] {
		for gy := range grid.Groups[1] {
			for y := range ly {
				for x0 := range lx {
					for slot := gz; slot < slots; slot += grid.Groups[2] {
						for row := gy*ly + y; row < rows; row += grid.Groups[1] * ly {
							body(slot, row, x0, lx)
						}
					}
				}
			}
		}
	}
}

// emulatedBlock is fftconv.cl's fft_block, emulatedRow its gather_row.
type emulatedBlock struct {
	start, count []int
	inAt, outAt  int
	live         bool
}

type emulatedRow struct {
	base, p0, reads int
	outside         bool
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
		enginetest.Case{Name: "2d-bank19", Spec: nd.Spec{Kernels: randomBank(rng, 19, 5, 3), Border: nd.Mirror, Out: nd.Uint8}, Input: enginetest.RandomArray(rng, nd.Uint8, 40, 37)},
		enginetest.Case{Name: "3d-valid", Spec: nd.Spec{Kernels: []nd.Kernel{enginetest.RandomKernel(rng, false, 3, 4, 5)}, Mode: nd.Valid, Out: nd.Int16}, Input: enginetest.RandomArray(rng, nd.Int16, 13, 11, 17)},
	)
	ran, grouped := 0, 0
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
		// Real blocks (cuFFT's R2C), complex ones by fft.cl, complex ones
		// by a library (cuFFT's C2C, for which fft.cl's transforms stand
		// in here).
		real, library := i%3 == 1, i%3 == 2
		opt := FFTConvOptions{RealBlocks: real, Library: library, MaxBatch: 1 + i%4, MaxLocalBytes: 16 << 10}
		f, err := NewFFTConv(p, opt)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if f == nil {
			continue
		}
		if bank := len(p.Kernels); bank > 2 && i%2 == 0 {
			// A budget for a slot of a group of 2, short of one of 3 (the
			// last group of an odd bank holds one kernel).
			opt.Budget = f.spectraBytes() + f.slotBytes(2) + (f.slotBytes(3)-f.slotBytes(2))/2
			if f, err = NewFFTConv(p, opt); err != nil || f.Group != 2 {
				t.Fatalf("%s: within %d bytes: %v, groups of %d", c.Name, opt.Budget, err, f.Group)
			}
			grouped++
		}
		if library {
			if f.Transforms != nil || f.Scratch() {
				t.Fatalf("%s: a library's transforms planned as fft.cl's", c.Name)
			}
			opt.Library, opt.Lengths = false, f.Geometry.Length // the library's lengths
			twin, err := NewFFTConv(p, opt)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			f.Transforms = twin.Transforms
		}
		got := emulateFFTConv(t, f, p, c.Input)
		bound := f.Geometry.ErrorBound(p.WeightAbsSum(), c.MaxAbs())
		if msg := c.CheckBound(got, c.Want(), bound); msg != "" {
			t.Errorf("%s (real blocks %v, library %v, %d batches of %d): %s", c.Name, real, library, f.Batches, f.Batch, msg)
		}
		ran++
	}
	if ran < 200 || grouped < 5 {
		t.Errorf("only %d cases ran, %d in groups of 2", ran, grouped)
	}
}

// TestFFTGeometry: where a library transforms, lengths are powers of two
// of at most libraryMaxLength, the ones cuFFT ran fastest on the problems
// measured (session 38, call 4; docs/perf/fft.md, v5); fft.cl keeps the
// CPU engine's choice.
func TestFFTGeometry(t *testing.T) {
	for _, c := range []struct {
		shape, kernel, want []int
		bank                int
	}{
		{[]int{1 << 28}, []int{1023}, []int{8192}, 1},
		{[]int{512, 512, 512}, []int{7, 7, 7}, []int{64, 64, 64}, 1},
		{[]int{8192, 8192}, []int{31, 31}, []int{512, 512}, 1},
		{[]int{4096, 4096}, []int{31, 31}, []int{512, 512}, 16},
		{[]int{2048, 2048}, []int{29, 29}, []int{256, 256}, 1},
		{[]int{2048, 2048}, []int{30, 30}, []int{256, 256}, 1}, // not 512² of as many values
		{[]int{1 << 20}, []int{9001}, []int{16384}, 1},         // beyond libraryMaxLength where the kernel needs it
	} {
		n := 1
		for _, e := range c.kernel {
			n *= e
		}
		var ks []nd.Kernel
		for range c.bank {
			ks = append(ks, nd.Kernel{Shape: c.kernel, Weights: ones(n)})
		}
		p, err := (&nd.Spec{Shape: c.shape, In: nd.Float32, Kernels: ks}).Normalize()
		if err != nil {
			t.Fatal(err)
		}
		g, err := FFTGeometry(p, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.Length, c.want) {
			t.Errorf("%v %v ×%d: a library's lengths %v, want %v", c.shape, c.kernel, c.bank, g.Length, c.want)
		}
		cpu, err := fftconv.New(p, fftconv.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if g, _ := FFTGeometry(p, false, nil); !slices.Equal(g.Length, cpu.Length) {
			t.Errorf("%v %v: fft.cl's lengths %v, the CPU model's %v", c.shape, c.kernel, g.Length, cpu.Length)
		}
	}
}

// TestFFTCandidates: lengths are powers of two at least twice the reach,
// one per transformed axis, no two alike, and none for the 5-D kernels
// FFTShape cannot hold.
func TestFFTCandidates(t *testing.T) {
	p, err := (&nd.Spec{Shape: []int{1 << 20}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{1023}, Weights: ones(1023)}}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	cands := FFTCandidates(p)
	if len(cands) != 6 {
		t.Fatalf("%d candidates for 1023 taps, want 6", len(cands))
	}
	for i, c := range cands {
		l := c.FFTLengths()
		if len(l) != 1 || l[0]&(l[0]-1) != 0 || l[0] < 2*1022 || (i > 0 && l[0] <= cands[i-1].FFTLengths()[0]) {
			t.Errorf("candidate %d: lengths %v", i, l)
		}
	}
	// A 7×7 kernel on a 20×20 image: no length beyond the extended extent.
	p, err = (&nd.Spec{Shape: []int{20, 20}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{7, 7}, Weights: ones(49)}}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range FFTCandidates(p) {
		if l := c.FFTLengths(); len(l) != 2 || l[0] > 32 || l[1] > 32 {
			t.Errorf("20×20, 7×7: lengths %v", l)
		}
	}
	five := nd.Kernel{Shape: []int{2, 2, 2, 2, 2}, Weights: ones(32)}
	if p, err = (&nd.Spec{Shape: []int{4, 4, 4, 4, 4}, In: nd.Float32, Kernels: []nd.Kernel{five}}).Normalize(); err != nil {
		t.Fatal(err)
	}
	if c := FFTCandidates(p); c != nil {
		t.Errorf("5-D kernel: %d candidates", len(c))
	}
}

func ones(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}
