package cpu

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/ndconv/ndconv/cpu/internal/simd"
	"github.com/ndconv/ndconv/internal/fft"
	"github.com/ndconv/ndconv/internal/fftconv"
	"github.com/ndconv/ndconv/nd"
)

// FFTSupported reports whether NewFFT can run p, and why not.
func FFTSupported(p *nd.Problem) error { return fftconv.Supported(p) }

// NewFFT prepares p for FFT convolution: the output is cut into
// overlap-save blocks (internal/fftconv chooses them by cost within
// opt.FFTBudget); each block's input, extended by the border rule, is
// converted to float32, transformed once, multiplied by every kernel's
// spectrum and transformed back, and the block's outputs are stored
// rounded and saturated by nd.Store, interleaved for a bank.
//
// Results differ from the direct method by rounding, within
// fftconv.Geometry.ErrorBound. NaN and Inf reach exactly the outputs whose
// window holds them, with the direct method's bits: a block holding
// non-finite values is transformed with zeros in their place, and the
// outputs whose nonzero taps reach them are computed by the direct sum
// (the same fused multiply-adds in the same order) from the block's
// values. Where non-finite values are so many that this would cost more
// than the direct method, where cval is infinite, or where values are so
// large that the float32 transforms could overflow, Execute runs the
// direct method instead. A problem with an axis of length 0 has nothing
// to compute: its Executable writes nothing.
func NewFFT(p *nd.Problem, opt Options) (Executable, error) {
	if isEmpty(p) {
		return empty{}, nil
	}
	workers := opt.workers()
	g, err := fftconv.New(p, fftconv.Options{Budget: opt.FFTBudget, Workers: workers, Lengths: opt.fftLengths})
	if err != nil {
		return nil, fmt.Errorf("cpu: FFT method: %w", err)
	}
	e := &fftConv{p: p, opt: opt, g: g, inStrides: nd.Strides(p.InShape), outStrides: nd.Strides(p.OutShape), blockStrides: nd.Strides(g.Length)}
	for _, k := range p.Kernels {
		e.taps = append(e.taps, nonzeroTaps(g, k.Dense))
	}
	// Many block groups: one per worker at a time (as many as the budget
	// holds), each transformed on one goroutine. Few: one at a time, each
	// transform using every worker. The split changes only the speed: every
	// value is computed the same way whatever the threads.
	e.planar = opt.planeVoxels(p)
	e.kernelGroup = 1
	if e.planar == 0 && p.Out == nd.Float32 && len(p.Kernels) >= simd.BankSets && simd.BankSets*g.Group*g.Size()*4 <= maxKernelGroupBytes {
		e.kernelGroup = simd.BankSets
	}
	e.threads, e.slots = 1, g.Concurrency(len(p.Kernels))
	if e.slots == 1 || g.Groups() < 2*e.slots {
		e.threads, e.slots = workers, 1
	}
	for range e.slots {
		e.state = append(e.state, fftState{
			plan: fft.NewRealND(g.Group, g.Length, e.threads),
			in:   make([]float32, g.Group*g.Size()),
			out:  make([]float32, e.kernelGroup*g.Group*g.Size()),
			spec: make([]complex64, g.Group*g.SpectrumSize()),
			prod: make([]complex64, g.Group*g.SpectrumSize()),
			bad:  make([][]int, g.Group),
		})
	}
	// Each kernel's spectrum, conjugated (correlation) and scaled by 1/P
	// (the unnormalised inverse).
	kplan := fft.NewRealND(1, g.Length, workers)
	block := make([]float32, g.Size())
	scale := 1 / float32(g.Size())
	for _, k := range p.Kernels {
		for i, v := range g.KernelBlock(k.Dense) {
			block[i] = float32(v)
		}
		spec := make([]complex64, g.SpectrumSize())
		kplan.Forward(spec, block)
		for i, v := range spec {
			spec[i] = complex(scale*real(v), -scale*imag(v))
		}
		e.spectra = append(e.spectra, spec)
	}
	e.absSum = p.WeightAbsSum()
	return e, nil
}

// FFTBound is the largest difference from the exact result that NewFFT's
// executable may show on p for an input whose extended values (input and
// cval) have magnitude at most maxAbs, before the output's own rounding.
func FFTBound(p *nd.Problem, opt Options, maxAbs float64) (float64, error) {
	g, err := fftconv.New(p, fftconv.Options{Budget: opt.FFTBudget, Workers: opt.workers(), Lengths: opt.fftLengths})
	if err != nil {
		return 0, err
	}
	abs := 0.0
	for _, k := range p.Kernels {
		s := 0.0
		for _, v := range k.Dense {
			s += math.Abs(v)
		}
		abs = max(abs, s)
	}
	return g.ErrorBound(abs, maxAbs), nil
}

type fftConv struct {
	p                     *nd.Problem
	opt                   Options
	g                     *fftconv.Geometry
	inStrides, outStrides []int
	blockStrides          []int // of a block, over the transformed axes
	threads, slots        int
	state                 []fftState
	spectra               [][]complex64
	taps                  [][]fftTap // per kernel: its nonzero taps
	absSum                float64
	direct                Executable // the fallback, prepared when first needed
	patch                 bool       // this call's input holds NaN or Inf
	// kernelGroup is how many kernels' inverse transforms a state holds
	// at once: simd.BankSets for a bank of 8 or more into float32,
	// interleaved, which then takes each block's values for 8 kernels
	// together (scatterGroup), else 1 (other outputs convert value by
	// value in scatter; a planar bank's lines are each kernel's own).
	kernelGroup int
	// planar is the output's voxels where a bank is stored planar
	// (Options.Planar): kernel k's plane starts at k·planar. 0: interleaved.
	planar int
}

// maxKernelGroupBytes bounds the inverse transforms a state holds for a
// kernel group, beyond the budget the decomposition was chosen within.
const maxKernelGroupBytes = 32 << 20

type fftState struct {
	plan       *fft.RealND
	in, out    []float32
	spec, prod []complex64
	region     fftconv.Region
	lineIdx    []int
	// For blocks holding NaN or Inf: their positions per block of the
	// group, the block's values before they were zeroed, and the outputs
	// to compute directly.
	bad    [][]int
	orig   []float32
	mark   []bool
	marked []int
}

// fftTap is one nonzero kernel tap: its index per transformed axis, its
// offset in a block, its weight as the direct method uses it.
type fftTap struct {
	at  []int
	off int
	w   float32
}

// nonzeroTaps lists w's nonzero taps in the kernel's row-major order, the
// order of the direct method's fused multiply-adds.
func nonzeroTaps(g *fftconv.Geometry, w []float64) []fftTap {
	strides := nd.Strides(g.Length)
	idx := make([]int, len(g.Kernel))
	var taps []fftTap
	for _, v := range w {
		if v != 0 {
			t := fftTap{at: slices.Clone(idx), w: float32(v)}
			for d, i := range idx {
				t.off += i * strides[d]
			}
			taps = append(taps, t)
		}
		nextIndex(idx, g.Kernel)
	}
	return taps
}

func (e *fftConv) Execute(ctx context.Context, dst, src nd.Array) error {
	nonFinite, direct := e.scan(src)
	e.patch = nonFinite > 0
	if direct {
		if e.direct == nil {
			e.direct = NewDirect(e.p, e.opt)
		}
		return e.direct.Execute(ctx, dst, src)
	}
	groups := e.g.Groups()
	t := &tracker{progress: e.opt.Progress, total: int64(groups)}
	return parallel(ctx, e.slots, groups, t, func(w, group int) {
		e.runGroup(&e.state[w], dst, src, group)
	})
}

// scan counts src's NaN and Inf values and reports whether the direct
// method must run instead: where cval is infinite, where the non-finite
// values' windows cover more than directShare of the outputs, or where a
// magnitude could overflow float32 inside a transform.
func (e *fftConv) scan(src nd.Array) (nonFinite int, direct bool) {
	nonFinite, maxAbs := fftconv.ScanInput(e.p, src, e.opt.workers())
	taps := 0
	for _, t := range e.taps {
		taps = max(taps, len(t))
	}
	return nonFinite, e.g.Overflows(e.absSum, maxAbs) ||
		float64(nonFinite)*float64(taps) > directShare*float64(product(e.p.OutShape))
}

// directShare is the largest share of the outputs that blocks may compute
// by the direct sum before the whole call runs the direct method.
const directShare = 1.0 / 8

// runGroup computes the outputs of one group of blocks.
func (e *fftConv) runGroup(s *fftState, dst, src nd.Array, group int) {
	g := e.g
	size, ssize := g.Size(), g.SpectrumSize()
	first := group * g.Group
	count := min(g.Group, g.TotalBlocks()-first)
	for b := range g.Group {
		block := s.in[b*size : (b+1)*size]
		if b >= count {
			clear(block)
			continue
		}
		g.Region(first+b, &s.region)
		e.gather(s, block, src)
		if e.patch {
			e.setAside(s, b)
		}
	}
	s.plan.Forward(s.spec, s.in)
	bank := len(e.spectra)
	dst32, _ := dst.Data.([]float32)
	slot := g.Group * size // one kernel's inverse transforms in s.out
	for k0 := 0; k0 < bank; k0 += e.kernelGroup {
		kn := min(e.kernelGroup, bank-k0)
		// A whole group into float32 is stored after its kernels' inverse
		// transforms, together; a remainder kernel by kernel.
		together := kn == simd.BankSets && dst32 != nil
		for kk := range kn {
			k, out := k0+kk, s.out[kk*slot:][:slot]
			for b := range count {
				fft.MulInto(s.prod[b*ssize:(b+1)*ssize], s.spec[b*ssize:(b+1)*ssize], e.spectra[k])
			}
			s.plan.Inverse(out, s.prod)
			for b := range count {
				patch := e.patch && len(s.bad[b]) > 0
				if together && !patch {
					continue
				}
				g.Region(first+b, &s.region)
				if patch {
					e.directOutputs(s, out[b*size:(b+1)*size], b, k)
				}
				if !together {
					e.scatter(s, dst, out[b*size:(b+1)*size], k, bank)
				}
			}
		}
		if together {
			for b := range count {
				g.Region(first+b, &s.region)
				e.scatterGroup(s, dst32, s.out[b*size:], slot, k0, bank)
			}
		}
	}
}

// setAside records where block b of the group holds NaN or Inf, keeps its
// values for the direct sums, and zeroes them for the transform.
func (e *fftConv) setAside(s *fftState, b int) {
	size := e.g.Size()
	block := s.in[b*size : (b+1)*size]
	s.bad[b] = s.bad[b][:0]
	for i, v := range block {
		if v-v != 0 { // NaN and ±Inf
			s.bad[b] = append(s.bad[b], i)
		}
	}
	if len(s.bad[b]) == 0 {
		return
	}
	if len(s.orig) < len(s.in) {
		s.orig = make([]float32, len(s.in))
		s.mark = make([]bool, size)
	}
	copy(s.orig[b*size:(b+1)*size], block)
	for _, i := range s.bad[b] {
		block[i] = 0
	}
}

// directOutputs replaces, in out, the inverse transform of block b for
// kernel k, every output whose nonzero taps reach a NaN or Inf of the block by
// the direct method's sum: acc = fma(w, x, acc) over the nonzero taps in
// row-major order, from the block's own values.
func (e *fftConv) directOutputs(s *fftState, out []float32, b, k int) {
	g, r := e.g, &s.region
	size := g.Size()
	orig := s.orig[b*size : (b+1)*size]
	strides := e.blockStrides
	s.marked = s.marked[:0]
	for _, q := range s.bad[b] {
		for _, t := range e.taps[k] {
			off, rest := 0, q
			inside := true
			for d, st := range strides {
				i := rest/st - t.at[d]
				rest %= st
				if i < 0 || i >= r.OutCount[d] {
					inside = false
					break
				}
				off += i * st
			}
			if inside && !s.mark[off] {
				s.mark[off] = true
				s.marked = append(s.marked, off)
			}
		}
	}
	for _, off := range s.marked {
		acc := float32(0)
		for _, t := range e.taps[k] {
			acc = nd.FMA32(t.w, orig[off+t.off], acc)
		}
		out[off] = acc
		s.mark[off] = false
	}
}

// gather fills block with the extended input of s.region: one line along
// the last transformed axis at a time, zero beyond the values it reads
// (each value written once: a partial block is not cleared first).
func (e *fftConv) gather(s *fftState, block []float32, src nd.Array) {
	g, r, p := e.g, &s.region, e.p
	n := len(g.Axes)
	last := n - 1
	base := 0
	for i, a := range g.Batch {
		base += r.Batch[i] * e.inStrides[a]
	}
	blockStrides := e.blockStrides
	s.lineIdx = resize(s.lineIdx, last)
	clear(s.lineIdx)
	cval := float32(p.CVal)
	la := g.Axes[last]
	for {
		off, at, inside, read := 0, base, true, true
		for i, t := range s.lineIdx {
			off += t * blockStrides[i]
			read = read && t < r.InCount[i]
			q, ok := p.Border.Index(r.InStart[i]+t, p.InShape[g.Axes[i]])
			inside = inside && ok
			at += q * e.inStrides[g.Axes[i]]
		}
		line := block[off : off+g.Length[last]]
		row := line[:r.InCount[last]]
		switch {
		case !read:
			row = row[:0]
		case inside:
			loadPaddedStrided(row, src.Data, at, r.InStart[last], p.InShape[la], e.inStrides[la], p.Border, cval)
		default:
			fill(row, cval)
		}
		clear(line[len(row):])
		if !nextIndex(s.lineIdx, g.Length[:last]) {
			return
		}
	}
}

// scatter stores the outputs of s.region for kernel k of a bank of the
// given size from block, the inverse transform's result: interleaved at
// position·bank + k, or planar at k·N + position (a line of kernel k's
// plane, contiguous where the last axis is the output's).
func (e *fftConv) scatter(s *fftState, dst nd.Array, block []float32, k, bank int) {
	last := len(e.g.Axes) - 1
	stride, n := e.outStrides[e.g.Axes[last]], s.region.OutCount[last]
	at0, scale := k, bank
	if e.planar > 0 {
		at0, scale = k*e.planar, 1
	}
	e.eachLine(s, func(off, at int) {
		nd.Store(dst.Data, at*scale+at0, stride*scale, block[off:off+n])
	})
}

// scatterGroup is scatter for kernels k0 … k0+7 of a float32 output at
// once: blocks holds the region's block for kernel k0, each next kernel's
// pitch values on, and each output line takes the 8 kernels' values
// together (simd.Transpose8), 32 bytes of every output position. Kernel by
// kernel at stride bank, each kernel's pass read and wrote back every line
// of the region's outputs (a 2048² bank of 16 31×31 kernels spent half its
// time storing).
func (e *fftConv) scatterGroup(s *fftState, dst []float32, blocks []float32, pitch, k0, bank int) {
	last := len(e.g.Axes) - 1
	stride, n := e.outStrides[e.g.Axes[last]]*bank, s.region.OutCount[last]
	e.eachLine(s, func(off, at int) {
		simd.Transpose8(dst[at*bank+k0:], stride, blocks[off:], pitch, n)
	})
}

// eachLine calls fn for every line of s.region's outputs along the last
// transformed axis: off is the line's first value in a block, at its
// first output position (in positions, not counting the bank).
func (e *fftConv) eachLine(s *fftState, fn func(off, at int)) {
	g, r := e.g, &s.region
	last := len(g.Axes) - 1
	base := 0
	for i, a := range g.Batch {
		base += r.Batch[i] * e.outStrides[a]
	}
	base += r.OutStart[last] * e.outStrides[g.Axes[last]]
	s.lineIdx = resize(s.lineIdx, last)
	clear(s.lineIdx)
	for {
		off, at := 0, base
		for i, t := range s.lineIdx {
			off += t * e.blockStrides[i]
			at += (r.OutStart[i] + t) * e.outStrides[g.Axes[i]]
		}
		fn(off, at)
		if !nextIndex(s.lineIdx, r.OutCount[:last]) {
			return
		}
	}
}

// nextIndex advances the C-order multi-index idx within limits and
// reports false when it wraps around.
func nextIndex(idx, limits []int) bool {
	for i := len(idx) - 1; i >= 0; i-- {
		if idx[i]++; idx[i] < limits[i] {
			return true
		}
		idx[i] = 0
	}
	return false
}

func resize(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}
