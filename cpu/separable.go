package cpu

import (
	"context"
	"fmt"
	"slices"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/cpu/internal/simd"
	"github.com/ndconv/ndconv/nd"
)

// NewSeparable prepares p for the separable method: one 1-D pass per axis
// the kernel spans, each with that axis's factor — along the last axis, or
// one followed only by a few samples per position (colour channels), a row
// pass over padded rows whose taps sit those samples apart; along any other
// axis a pass that adds whole contiguous slabs, so no transpose is needed,
// simd.BankSets consecutive outputs at a time where their windows lie
// inside the input (each slab loaded once for all of them). Intermediates
// are kept in the accumulator type; only the last pass rounds into the
// output dtype. Every kernel of p must have factors.
//
// A problem whose intermediates would exceed separableScratchLimit runs
// chunk by chunk (package chunk), with the same result; one with an axis
// of length 0 has nothing to compute, and its Executable writes nothing.
//
// With the constant border, the value outside an intermediate is not cval
// but cval times the sums of the factors already applied, which is what the
// direct definition gives there.
func NewSeparable(p *nd.Problem, opt Options) (Executable, error) {
	if !p.Separable() {
		return nil, fmt.Errorf("cpu: separable method: a kernel is not separable")
	}
	if isEmpty(p) {
		return empty{}, nil
	}
	if !SeparablePlanar(p) {
		if opt.planeVoxels(p) > 0 {
			return nil, fmt.Errorf("cpu: separable method: a planar bank runs whole, and this one needs chunks")
		}
		return newChunked(p, opt, chunk.Budget{Bytes: separableScratchLimit, Scratch: separableScratch}, newWholeSeparable)
	}
	return newWholeSeparable(p, opt)
}

// SeparablePlanar reports whether NewSeparable writes p's bank planar
// itself (Options.Planar): where p runs whole. In chunks (intermediates
// beyond separableScratchLimit) each chunk writes a slab of the output,
// which a planar bank is not one run of.
func SeparablePlanar(p *nd.Problem) bool { return separableScratch(p) <= separableScratchLimit }

func newWholeSeparable(p *nd.Problem, opt Options) (Executable, error) {
	if p.Wide {
		return newSeparable[float64](p, opt), nil
	}
	return newSeparable[float32](p, opt), nil
}

// slabChunk is the number of values of a slab one work item adds at a time.
const slabChunk = 4096

// blockedLoops lets separable slab passes and long 1-D kernels run
// simd.Block; tests turn it off to compare with the tap-by-tap loops.
var blockedLoops = true

// slabRows is the number of consecutive outputs along the pass axis one work
// item computes, so the slabs they share stay in cache.
const slabRows = 16

type separable[F nd.Float] struct {
	p       *nd.Problem
	opt     Options
	passes  []int          // axes, in execution order
	groups  []int          // per pass: samples per position of a row pass, 0 for a slab pass
	shapes  [][]int        // shapes[i] is the input shape of pass i; shapes[len] the output
	taps    [][]sepTaps[F] // per bank kernel, per pass
	items   []int          // work items per pass
	pads    []padMap       // per row pass: its rows' halo, mapped once
	buffers [2][]F
	scratch [][]F // per worker: a padded row or slab, and an accumulator
	track   tracker
	// inter[i] is pass i's output within buffers, boxed once: a slice
	// converted to an interface on each call would be allocated.
	inter []any
	// planar is the output's voxels where the last pass writes a bank
	// plane by plane (kernel k's plane from k·planar on): into dst with
	// Options.Planar, else, staged, into planes. 0: interleaved into dst.
	planar int
	// staged: an interleaved bank (of at most maxPlanesBytes) is written
	// into planes (allocated on first use) and then interleaved
	// (nd.FromPlanar): the last pass, a kernel at a time, stored 4 bytes
	// of every 64 at a bank of 16 and ran 7× longer than its sums
	// (docs/bank-layout.md).
	staged bool
	planes nd.Array
}

// maxPlanesBytes bounds the planes an interleaved bank is staged in,
// beyond the intermediates separableScratchLimit bounds.
const maxPlanesBytes = 256 << 20

type sepTaps[F nd.Float] struct {
	row rowTaps[F]
	w   []F // all taps, for slab passes
	// slab is a slab pass's taps as simd.Block's steps for simd.BankSets
	// consecutive outputs at once, each input slab loaded once for all of
	// them: step r adds slab r (relative to the first output's first
	// slab) to every output whose window holds it with a nonzero tap.
	slab *simd.Steps[F]
	cval F // the value outside this pass's input, for the constant border
}

func newSeparable[F nd.Float](p *nd.Problem, opt Options) *separable[F] {
	s := &separable[F]{p: p, opt: opt}
	s.planar = opt.planeVoxels(p)
	if s.planar == 0 && len(p.Kernels) > 1 && int64(product(p.FullShape()))*int64(p.Out.Size()) <= maxPlanesBytes {
		s.staged, s.planar = true, product(p.OutShape)
	}
	rank := len(p.InShape)
	for d := rank - 1; d >= 0; d-- {
		if p.KShape[d] > 1 {
			s.passes = append(s.passes, d)
		}
	}
	if len(s.passes) == 0 {
		// A kernel of one tap is a scaling; its factor sits on axis 0.
		s.passes = []int{0}
	}
	shape := slices.Clone(p.InShape)
	s.shapes = append(s.shapes, slices.Clone(shape))
	biggest := 0
	for i, d := range s.passes {
		shape[d] = p.OutShape[d]
		s.shapes = append(s.shapes, slices.Clone(shape))
		if i < len(s.passes)-1 {
			biggest = max(biggest, product(shape))
		}
	}
	s.buffers[0] = make([]F, biggest)
	if len(s.passes) > 2 {
		s.buffers[1] = make([]F, biggest)
	}
	for i, d := range s.passes {
		s.groups = append(s.groups, rowGroup(s.shapes[i], d))
		if i < len(s.passes)-1 {
			s.inter = append(s.inter, s.buffers[i%2][:product(s.shapes[i+1])])
		}
	}
	for _, k := range p.Kernels {
		var passTaps []sepTaps[F]
		cval := p.CVal
		for i, d := range s.passes {
			f := k.Factors[d]
			row, _ := newRowTaps[F](f, max(1, s.groups[i]))
			w := make([]F, len(f))
			sum := 0.0
			for i, v := range f {
				w[i] = F(v)
				sum += v
			}
			t := sepTaps[F]{row: row, w: w, cval: F(cval)}
			if s.groups[i] == 0 {
				t.slab = slabSteps(w, product(s.shapes[i][d+1:]))
			}
			passTaps = append(passTaps, t)
			cval *= sum
		}
		s.taps = append(s.taps, passTaps)
	}
	for i, d := range s.passes {
		in, out := s.shapes[i], s.shapes[i+1]
		s.pads = append(s.pads, newPadMap(-p.Shift[d], in[d], out[d]+p.KShape[d]-1, p.Border, nil))
		if group := s.groups[i]; group > 0 {
			s.items = append(s.items, ceilDiv(product(out[:d]), rowsPerItem(out[d]*group)))
		} else {
			inner := product(in[d+1:])
			s.items = append(s.items, product(in[:d])*ceilDiv(out[d], slabRows)*ceilDiv(inner, slabChunk))
		}
	}
	return s
}

// slabSteps prepares the steps of sepTaps.slab for the taps w over slabs
// inner values apart.
func slabSteps[F nd.Float](w []F, inner int) *simd.Steps[F] {
	var steps []int
	var bw []F
	for r := 0; r < len(w)+simd.BankSets-1; r++ {
		mask, sw := 0, make([]F, simd.BankSets)
		for i := range sw {
			if j := r - i; j >= 0 && j < len(w) && w[j] != 0 {
				sw[i], mask = w[j], mask|1<<i
			}
		}
		if mask != 0 {
			steps = append(steps, r*inner<<8|mask)
			bw = append(bw, sw...)
		}
	}
	return simd.NewSteps(simd.BankSets, steps, bw)
}

// rowGroup is the number of samples per position of a row pass along axis
// d of shape, the values behind that axis, or 0 where there are too many
// and the pass adds slabs instead.
func rowGroup(shape []int, d int) int {
	if g := product(shape[d+1:]); g <= maxChannels {
		return g
	}
	return 0
}

// rowsPerItem groups short rows into one work item.
func rowsPerItem(n int) int { return max(1, 4096/max(n, 1)) }

func product(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

func (s *separable[F]) Execute(ctx context.Context, dst, src nd.Array) error {
	work := 0
	for _, d := range s.passes {
		work += s.p.KShape[d]
	}
	workers := s.opt.workersFor(product(s.p.InShape) * work * len(s.taps))
	for len(s.scratch) < workers {
		longest := slabChunk
		for i, d := range s.passes {
			longest = max(longest, (s.shapes[i+1][d]+s.p.KShape[d]-1)*max(1, s.groups[i]))
		}
		s.scratch = append(s.scratch, make([]F, max(2*longest, simd.BankSets*slabChunk)))
	}
	// The tracker lives in s (an Executable runs one call at a time), and
	// a small problem runs on the calling goroutine (serial) with its
	// passes' closures on the stack: a call then allocates nothing.
	t := &s.track
	t.progress, t.total = s.opt.Progress, 0
	t.done.Store(0)
	for _, n := range s.items {
		t.total += int64(n * len(s.taps))
	}
	bank := len(s.taps)
	last := dst
	if s.staged {
		if s.planes.Data == nil {
			planes, err := nd.New(s.p.Out, s.p.FullShape()...)
			if err != nil {
				return err
			}
			s.planes = planes
		}
		last = s.planes
	}
	for b := range s.taps {
		var from any = src.Data
		for i, d := range s.passes {
			var to any
			stride, offset := 1, 0
			switch {
			case i == len(s.passes)-1 && s.planar > 0:
				to, offset = last.Data, b*s.planar // kernel b's plane
			case i == len(s.passes)-1:
				to, stride, offset = dst.Data, bank, b
			default:
				to = s.inter[i]
			}
			in, out, taps := s.shapes[i], s.shapes[i+1], &s.taps[b][i]
			var err error
			group, pad := s.groups[i], &s.pads[i]
			switch {
			case workers == 1 && group > 0:
				err = serial(ctx, s.items[i], t, func(_, item int) {
					s.rowPass(s.scratch[0], from, to, stride, offset, in, out, d, group, pad, taps, item)
				})
			case workers == 1:
				err = serial(ctx, s.items[i], t, func(_, item int) {
					s.slabPass(s.scratch[0], from, to, stride, offset, in, out, d, taps, item)
				})
			case group > 0:
				from, to := from, to // copies: the loop's variables stay on the stack
				err = parallel(ctx, workers, s.items[i], t, func(w, item int) {
					s.rowPass(s.scratch[w], from, to, stride, offset, in, out, d, group, pad, taps, item)
				})
			default:
				from, to := from, to
				err = parallel(ctx, workers, s.items[i], t, func(w, item int) {
					s.slabPass(s.scratch[w], from, to, stride, offset, in, out, d, taps, item)
				})
			}
			if err != nil {
				return err
			}
			from = to
		}
	}
	if s.staged {
		return nd.FromPlanar(dst, last, bank, workers)
	}
	return nil
}

// rowPass filters a group of lines along axis d, each position of a line
// holding group contiguous samples.
func (s *separable[F]) rowPass(scratch []F, from, to any, stride, offset int, in, out []int, d, group int, pad *padMap, taps *sepTaps[F], item int) {
	n, m := in[d], out[d]
	k := s.p.KShape[d]
	row, acc := scratch[:(m+k-1)*group], scratch[(m+k-1)*group:][:m*group]
	per := rowsPerItem(m * group)
	lines := product(out[:d])
	for line := item * per; line < min(lines, (item+1)*per); line++ {
		loadPadded(row, from, line*n*group, group, pad, taps.cval)
		at := line*m*group*stride + offset
		if out := into[F](to, at, stride, len(acc)); out != nil {
			taps.row.set(out, row)
			continue
		}
		taps.row.set(acc, row)
		store(to, at, stride, acc)
	}
}

// slabPass computes up to slabRows consecutive outputs along axis d for one
// chunk of the contiguous values behind that axis: each output adds the
// weighted slabs of the input at the positions its window covers.
func (s *separable[F]) slabPass(scratch []F, from, to any, stride, offset int, in, out []int, d int, taps *sepTaps[F], item int) {
	n, m := in[d], out[d]
	inner := product(in[d+1:])
	chunks, blocks := ceilDiv(inner, slabChunk), ceilDiv(m, slabRows)
	c0 := item % chunks * slabChunk
	i0 := item / chunks % blocks * slabRows
	outer := item / (chunks * blocks)
	size := min(slabChunk, inner-c0)
	i := i0
	// Runs of simd.BankSets outputs whose windows lie inside the input
	// run through Block, straight from the slabs.
	shift := s.p.Shift[d]
	for src, ok := from.([]F); ok && blockedLoops && i+simd.BankSets <= min(m, i0+slabRows) && i-shift >= 0 && i+simd.BankSets+len(taps.w)-1-shift <= n; i += simd.BankSets {
		at := ((outer*m+i)*inner+c0)*stride + offset
		slabs := src[(outer*n+i-shift)*inner+c0:]
		if out := into[F](to, at, stride, (simd.BankSets-1)*inner+size); out != nil {
			simd.Block(out, inner, size, slabs, taps.slab)
			continue
		}
		acc := scratch[:simd.BankSets*size]
		simd.Block(acc, size, size, slabs, taps.slab)
		for r := range simd.BankSets {
			store(to, at+r*inner*stride, stride, acc[r*size:][:size])
		}
	}
	tmp := scratch[slabChunk:][:size]
	for ; i < min(m, i0+slabRows); i++ {
		at := ((outer*m+i)*inner+c0)*stride + offset
		acc := into[F](to, at, stride, size)
		direct := acc != nil
		if !direct {
			acc = scratch[:size]
		}
		clear(acc)
		for j, w := range taps.w {
			if w == 0 {
				continue
			}
			q, ok := s.p.Border.Index(i+j-s.p.Shift[d], n)
			if !ok {
				fill(tmp, taps.cval)
				simd.Axpy(acc, tmp, w)
				continue
			}
			simd.Axpy(acc, view(from, (outer*n+q)*inner+c0, size, tmp), w)
		}
		if !direct {
			store(to, at, stride, acc)
		}
	}
}
