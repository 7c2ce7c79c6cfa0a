package cpu

import (
	"context"
	"maps"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/ndconv/ndconv/cpu/internal/simd"
	"github.com/ndconv/ndconv/nd"
)

// Executable runs one prepared problem. dst must have the problem's full
// output shape and output dtype, src its input shape and dtype; it is not
// safe for concurrent use (its scratch memory is reused across calls).
type Executable interface {
	Execute(ctx context.Context, dst, src nd.Array) error
}

// NewDirect prepares p for the direct method: the output is cut into tiles
// of rows along the last two axes; for each tile the input rows it needs are
// converted once into padded rows whose halo holds the border's values, and
// each output row is computed by one run of the kernel's nonzero taps (in
// row-major order, as offsets into the padded rows) over it, vectorised
// across the row. Every kernel of a bank reads the same converted rows, in
// groups of simd.BankSets kernels × rows computed at once (each source
// vector loaded once for the whole group), and the results are interleaved
// as out[voxel*K + i]. A single kernel spanning the last two axes, with
// input and output of the accumulator type, reads the interior columns of
// tiles whose input rows lie inside the image straight from the input
// instead (runInPlace): the same taps over the same values. A problem with
// an axis of length 0 has nothing to compute: its Executable writes nothing.
func NewDirect(p *nd.Problem, opt Options) Executable {
	if isEmpty(p) {
		return empty{}
	}
	if p.Wide {
		return newDirect[float64](p, opt)
	}
	return newDirect[float32](p, opt)
}

// isEmpty reports whether p's input or output has an axis of length 0:
// there is nothing to read or compute, and the tilings, which divide by
// those lengths, are not made.
func isEmpty(p *nd.Problem) bool {
	return product(p.InShape) == 0 || product(p.OutShape) == 0
}

// empty executes a problem with no values (isEmpty): the output has none
// to write.
type empty struct{}

func (empty) Execute(ctx context.Context, _, _ nd.Array) error { return ctx.Err() }

// tileBudget is the number of accumulator-typed values a tile's padded rows
// may take, sized to stay within a core's L2 cache.
const tileBudget = 1 << 16

// minTileRows is the number of output rows a tile should have at least, so
// that the kernel's halo rows are not converted over and over and the rows
// run in register blocks.
const minTileRows = 4 * simd.BlockRows

type direct[F nd.Float] struct {
	p       *nd.Problem
	opt     Options
	g       geometry
	workers int // goroutines per call: 1 for small problems (serialWork)

	tileRows, tileCols   int // output rows and columns per tile
	bufRows, bufCols     int // padded rows per plane offset, values per padded row
	pitch                int // distance between padded rows: bufCols rounded up
	planeTaps            int // kernel offsets over the plane axes
	rowBlocks, colBlocks int
	planes, tiles        int
	taps                 []tapList[F] // per bank kernel
	// A bank of several kernels runs bankRows output rows at a time, in
	// groups of simd.BankSets accumulator sets (bankRows rows × the
	// group's kernels): each source vector is loaded once for every kernel
	// of the group.
	bankRows, groupKernels int
	groups                 []*simd.Steps[F]
	// A long kernel of one row (1-D) runs simd.BankSets consecutive
	// segments of segment outputs at once: each source vector is loaded
	// once for every segment whose windows hold it.
	segment  int
	segments *simd.Steps[F]
	// inPlace is a single 2-D kernel's taps (no plane taps) as offsets
	// and block steps at the input's own row pitch: a tile whose inputs
	// all lie inside the image reads them where they are (its interior
	// columns), with no padded copy (runInPlace).
	inPlace *tapList[F]
	cval    F
	scratch []directScratch[F]
	track   tracker
	// planar is the output's voxels where a bank is stored planar
	// (Options.Planar): kernel k's plane starts at k·planar. 0: interleaved.
	planar int
}

// tapList is a kernel's nonzero taps in row-major order, each as its
// weight and the offset of its input within the padded rows, relative to
// the output's position; and, for a single kernel, the same taps as
// simd.Block's steps for simd.BlockRows output rows at once (blockSteps).
type tapList[F nd.Float] struct {
	offs  []int
	w     []F
	steps *simd.Steps[F]
}

type directScratch[F nd.Float] struct {
	rows []F
	acc  [][]F
	bank []F // the bank groups' accumulator sets, simd.BankSets per group
	// inter holds a bank's output row interleaved, kernel fastest, where
	// the output is not of type F (storeBank), allocated on first use.
	inter []F
	halo  []haloPos
}

// geometry is the problem seen with at least two axes: the last the kernel
// spans (columns), the one before it (rows) and the rest (planes). Trailing
// axes the kernel does not span, up to maxChannels samples per position
// (colour channels), are folded into the columns: each column position holds
// c interleaved samples, and a kernel row's taps sit c samples apart, so an
// H×W×C image runs as rows of W·C samples. A 1-D problem gains a leading
// axis of length 1.
type geometry struct {
	in, out, kernel, shift []int
	inStrides              []int // in elements, c per column position
	c                      int
}

// maxChannels bounds the samples per position folded into the columns; more
// (a kernel over leading axes only) make long rows on their own.
const maxChannels = 16

func newGeometry(p *nd.Problem) geometry {
	last := len(p.InShape) - 1
	for last > 0 && p.KShape[last] == 1 {
		last--
	}
	c := product(p.InShape[last+1:])
	if c > maxChannels {
		last, c = len(p.InShape)-1, 1
	}
	g := geometry{in: p.InShape[:last+1], out: p.OutShape[:last+1], kernel: p.KShape[:last+1], shift: p.Shift[:last+1], c: c}
	if len(g.in) == 1 {
		g = geometry{in: []int{1, g.in[0]}, out: []int{1, g.out[0]}, kernel: []int{1, g.kernel[0]}, shift: []int{0, g.shift[0]}, c: c}
	}
	g.inStrides = nd.Strides(g.in)
	for a := range g.inStrides {
		g.inStrides[a] *= c
	}
	return g
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func newDirect[F nd.Float](p *nd.Problem, opt Options) *direct[F] {
	g := newGeometry(p)
	n := len(g.in)
	rows, cols := g.out[n-2], g.out[n-1]
	kRows, kCols := g.kernel[n-2], g.kernel[n-1]
	d := &direct[F]{p: p, opt: opt, g: g, cval: F(p.CVal), planes: 1, planeTaps: 1}
	d.workers = opt.workersFor(product(p.OutShape) * product(p.KShape) * len(p.Kernels))
	d.planar = opt.planeVoxels(p)
	for a := 0; a < n-2; a++ {
		d.planes *= g.out[a]
		d.planeTaps *= g.kernel[a]
	}

	// A bank runs its kernels in groups of up to simd.BankSets, with as
	// many rows at once as fill the group's sets.
	bank := len(p.Kernels)
	if bank > 1 {
		d.groupKernels = min(bank, simd.BankSets)
		d.bankRows = simd.BankSets / d.groupKernels
	}

	// Columns: up to 2048 samples, fewer where a tall or deep kernel would
	// otherwise leave the padded rows room for too few output rows. A
	// bank's kernels all read the same padded rows, so it needs fewer rows
	// to repay their conversion.
	minRows := minTileRows
	if bank > 1 {
		minRows = max(d.bankRows, minTileRows/bank)
	}
	d.tileCols = max(1, min(cols, 2048/g.c))
	if fit := tileBudget/(d.planeTaps*(minRows+kRows-1))/g.c - kCols + 1; fit < d.tileCols {
		d.tileCols = max(1, min(d.tileCols, max(fit, 64/g.c)))
	}
	d.bufCols = (d.tileCols + kCols - 1) * g.c
	d.tileRows = tileBudget/(d.planeTaps*d.bufCols) - kRows + 1
	d.tileRows = max(1, min(d.tileRows, 64, rows))
	if d.tileRows > simd.BlockRows {
		d.tileRows -= d.tileRows % simd.BlockRows
	}
	d.colBlocks = ceilDiv(cols, d.tileCols)
	// Enough tiles that every worker stays busy to the end.
	if want := 4 * d.workers; d.workers > 1 && d.planes*d.colBlocks*ceilDiv(rows, d.tileRows) < want && rows > 0 {
		perRowBlock := ceilDiv(want, d.planes*d.colBlocks)
		d.tileRows = max(1, min(d.tileRows, ceilDiv(rows, perRowBlock)))
	}
	d.bufRows = d.tileRows + kRows - 1
	d.pitch = rowPitch(d.bufCols)
	d.rowBlocks = ceilDiv(rows, d.tileRows)
	d.tiles = d.planes * d.rowBlocks * d.colBlocks
	if cols == 0 || rows == 0 {
		d.tiles = 0
	}

	// The kernel viewed as [planeTaps][kRows][kCols].
	for _, k := range p.Kernels {
		var l tapList[F]
		for i, v := range k.Dense {
			if v == 0 {
				continue
			}
			pt, r, c := i/(kRows*kCols), i/kCols%kRows, i%kCols
			l.offs = append(l.offs, (pt*d.bufRows+r)*d.pitch+c*g.c)
			l.w = append(l.w, F(v))
		}
		if bank == 1 {
			l.steps = d.blockSteps(p.Kernels, simd.BlockRows, simd.BlockRows, d.pitch)
		}
		d.taps = append(d.taps, l)
	}
	if seg := segmentLen[F](); blockedLoops && bank == 1 && kRows == 1 && d.planeTaps == 1 && kCols >= 4*seg {
		d.segment, d.segments = seg, segmentSteps(d.taps[0], seg)
	}
	if inPitch := g.inStrides[n-2]; readInPlace && bank == 1 && d.planeTaps == 1 && d.segments == nil && len(d.taps[0].w) > 0 {
		l := &tapList[F]{w: d.taps[0].w, steps: d.blockSteps(p.Kernels, simd.BlockRows, simd.BlockRows, inPitch)}
		for i, v := range p.Kernels[0].Dense {
			if v != 0 {
				l.offs = append(l.offs, i/kCols*inPitch+i%kCols*g.c)
			}
		}
		d.inPlace = l
	}
	for k := 0; bank > 1 && k < bank; k += d.groupKernels {
		d.groups = append(d.groups, d.blockSteps(p.Kernels[k:min(k+d.groupKernels, bank)], d.bankRows, simd.BankSets, d.pitch))
	}
	return d
}

// blockSteps prepares simd.Block's steps for rows output rows of each of
// kernels at once, as sets accumulator sets, set i·len(kernels)+b being
// row i of kernel b: one step per input offset relative to the first row,
// adding it to every set whose kernel has a nonzero tap there (the weights
// packed by set, once per plan), so each set still takes its taps in
// row-major order. pitch is the distance between the source's rows: the
// padded rows' (d.pitch), or the input's for a tile read in place.
func (d *direct[F]) blockSteps(kernels []nd.Weights, rows, sets, pitch int) *simd.Steps[F] {
	n := len(d.g.kernel)
	kRows, kCols := d.g.kernel[n-2], d.g.kernel[n-1]
	var steps []int
	var bw []F
	for pt := 0; pt < d.planeTaps; pt++ {
		for r := 0; r < kRows+rows-1; r++ {
			for c := 0; c < kCols; c++ {
				mask, w := 0, make([]F, sets)
				for i := range rows {
					kr := r - i
					if kr < 0 || kr >= kRows {
						continue
					}
					for b, k := range kernels {
						set := i*len(kernels) + b
						if w[set] = F(k.Dense[(pt*kRows+kr)*kCols+c]); w[set] != 0 {
							mask |= 1 << set
						}
					}
				}
				if mask != 0 {
					steps = append(steps, ((pt*d.bufRows+r)*pitch+c*d.g.c)<<8|mask)
					bw = append(bw, w...)
				}
			}
		}
	}
	return simd.NewSteps(sets, steps, bw)
}

// segmentLen is the outputs per segment of a long 1-D kernel's blocks: one
// pass of the widest bank loop (3 vectors of AVX-512).
func segmentLen[F nd.Float]() int {
	var f F
	return 3 * 64 / int(unsafe.Sizeof(f))
}

// segmentSteps prepares l's taps as simd.Block's steps for simd.BankSets
// segments of seg consecutive outputs, set i being the outputs i·seg…: one
// step per source offset, adding it to every segment that has a tap there,
// in increasing order of offset, which is each segment's tap order.
func segmentSteps[F nd.Float](l tapList[F], seg int) *simd.Steps[F] {
	w := map[int][]F{}
	for i := range simd.BankSets {
		for t, o := range l.offs {
			at := i*seg + o
			if w[at] == nil {
				w[at] = make([]F, simd.BankSets)
			}
			w[at][i] = l.w[t]
		}
	}
	var steps []int
	var bw []F
	for _, at := range slices.Sorted(maps.Keys(w)) {
		mask := 0
		for i, v := range w[at] {
			if v != 0 {
				mask |= 1 << i
			}
		}
		steps = append(steps, at<<8|mask)
		bw = append(bw, w[at]...)
	}
	return simd.NewSteps(simd.BankSets, steps, bw)
}

// rowPitch spaces padded rows by whole cache lines of float64s, and never
// by a multiple of 4 KiB, where the rows a tap run reads would share L1 sets.
func rowPitch(cols int) int {
	pitch := (cols + 7) &^ 7
	if pitch%512 == 0 {
		pitch += 8
	}
	return pitch
}

func (d *direct[F]) Execute(ctx context.Context, dst, src nd.Array) error {
	workers := min(d.workers, max(d.tiles, 1))
	for len(d.scratch) < workers {
		s := directScratch[F]{rows: make([]F, d.planeTaps*d.bufRows*d.pitch)}
		for range d.taps {
			s.acc = append(s.acc, make([]F, simd.BlockRows*d.tileCols*d.g.c))
		}
		s.bank = make([]F, len(d.groups)*simd.BankSets*d.tileCols*d.g.c)
		d.scratch = append(d.scratch, s)
	}
	// The tracker lives in d (an Executable runs one call at a time), and
	// a small problem runs on the calling goroutine (serial) with its
	// closure on the stack: a call then allocates nothing.
	t := &d.track
	t.progress, t.total = d.opt.Progress, int64(d.tiles)
	t.done.Store(0)
	if workers == 1 {
		return serial(ctx, d.tiles, t, func(_, tile int) {
			d.runTile(&d.scratch[0], dst, src, tile)
		})
	}
	return parallel(ctx, workers, d.tiles, t, func(w, tile int) {
		d.runTile(&d.scratch[w], dst, src, tile)
	})
}

func (d *direct[F]) runTile(s *directScratch[F], dst, src nd.Array, tile int) {
	g := &d.g
	n := len(g.in)
	colBlock := tile % d.colBlocks
	rowBlock := tile / d.colBlocks % d.rowBlocks
	plane := tile / (d.colBlocks * d.rowBlocks)
	r0, x0 := rowBlock*d.tileRows, colBlock*d.tileCols
	rows := min(d.tileRows, g.out[n-2]-r0)
	cols := min(d.tileCols, g.out[n-1]-x0)
	if d.inPlace != nil {
		if lo, hi, ok := d.runInPlace(dst, src, plane, r0, rows, x0, cols); ok {
			// The interior columns [lo, hi) are done; the edges take
			// the padded rows.
			if lo > x0 {
				d.runCols(s, dst, src, plane, r0, rows, x0, lo-x0)
			}
			if x0+cols > hi {
				d.runCols(s, dst, src, plane, r0, rows, hi, x0+cols-hi)
			}
			return
		}
	}
	d.runCols(s, dst, src, plane, r0, rows, x0, cols)
}

// runInPlace computes the columns of a tile whose inputs lie inside the
// image straight from the input, when the input and the output hold F
// and do not overlap, the tile's input rows all lie inside the image
// and so do some columns' inputs: it returns those columns [lo, hi) and
// true, else false with nothing done. The taps and their order are those
// of the padded path, over the same values, so the bits are the same.
func (d *direct[F]) runInPlace(dst, src nd.Array, plane, r0, rows, x0, cols int) (lo, hi int, ok bool) {
	g := &d.g
	n := len(g.in)
	in, _ := src.Data.([]F)
	out, _ := dst.Data.([]F)
	if in == nil || out == nil || overlaps(in, out) {
		return 0, 0, false
	}
	kRows, kCols := g.kernel[n-2], g.kernel[n-1]
	top := r0 - g.shift[n-2]
	if top < 0 || top+rows+kRows-1 > g.in[n-2] {
		return 0, 0, false
	}
	lo = max(x0, g.shift[n-1])
	hi = min(x0+cols, g.in[n-1]-kCols+1+g.shift[n-1])
	if hi <= lo || (cols <= inPlaceMinCols && (lo > x0 || hi < x0+cols)) {
		return 0, 0, false
	}
	// An edge left to the padded rows takes at least inPlaceEdge samples,
	// so that the block loops run it as whole vector passes rather than
	// as a few scalar ones, which cost about as much as a whole pass each.
	if e := ceilDiv(inPlaceEdge, g.c); lo > x0 {
		lo = min(hi, max(lo, x0+e))
	}
	if e := ceilDiv(inPlaceEdge, g.c); hi < x0+cols {
		hi = max(lo, min(hi, x0+cols-e))
	}
	if hi <= lo {
		return 0, 0, false
	}
	// The plane's input (the kernel spans no plane axis, so each output
	// plane reads the input plane at its own index, shifted by the
	// origin; valid or same keep it inside).
	base := 0
	for a, rest := n-3, plane; a >= 0; a-- {
		q := rest%g.out[a] - g.shift[a]
		if q < 0 || q >= g.in[a] {
			return 0, 0, false
		}
		base += q * g.inStrides[a]
		rest /= g.out[a]
	}
	inPitch, rowLen := g.inStrides[n-2], g.out[n-1]*g.c
	width := (hi - lo) * g.c
	at := base + top*inPitch + (lo-g.shift[n-1])*g.c
	outAt := ((plane*g.out[n-2]+r0)*g.out[n-1] + lo) * g.c
	l := d.inPlace
	r := 0
	for ; r+simd.BlockRows <= rows; r += simd.BlockRows {
		simd.Block(out[outAt+r*rowLen:], rowLen, width, in[at+r*inPitch:], l.steps)
	}
	for ; r < rows; r++ {
		simd.SetTaps(out[outAt+r*rowLen:][:width], in[at+r*inPitch:], l.offs, l.w)
	}
	inPlaceTiles.Add(1)
	return lo, hi, true
}

// inPlaceMinCols: a tile this narrow or narrower whose edge columns need
// the padded rows all runs on them (runCols), since converting its rows
// for the edges costs what reading the interior in place saves (16×16
// with a 1×3 kernel: 3.1–4.1 µs in place and padded, 2.3 padded alone).
const inPlaceMinCols = 32

// inPlaceEdge is the fewest samples of an edge that runInPlace leaves to
// the padded rows: one whole pass of AVX2's widest row block (3 vectors of
// 8 float32s). A 7×7 kernel's 3-column edges ran as 3 scalar passes each.
const inPlaceEdge = 24

// readInPlace lets a single 2-D kernel read interior tiles from the input
// (runInPlace); tests turn it off to compare with the padded rows, and
// count the tiles read in place with inPlaceTiles.
var (
	readInPlace  = true
	inPlaceTiles atomic.Int64
)

// overlaps reports whether a and b share memory.
func overlaps[F nd.Float](a, b []F) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	size := unsafe.Sizeof(a[0])
	a0, b0 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return a0 < b0+uintptr(len(b))*size && b0 < a0+uintptr(len(a))*size
}

// runCols computes output columns [x0, x0+cols) of rows [r0, r0+rows) of
// a plane through padded rows: the input rows the columns need are
// converted into the tile's padded rows, the halo holding the border's
// values, and the taps run over them.
func (d *direct[F]) runCols(s *directScratch[F], dst, src nd.Array, plane, r0, rows, x0, cols int) {
	g := &d.g
	n := len(g.in)
	width := (cols + g.kernel[n-1] - 1) * g.c
	pad := newPadMap(x0-g.shift[n-1], g.in[n-1], cols+g.kernel[n-1]-1, d.p.Border, s.halo)
	s.halo = pad.halo

	// The plane's output index, one axis at a time from the last plane axis.
	var planeIdx [maxRank]int
	for a, rest := n-3, plane; a >= 0; a-- {
		planeIdx[a] = rest % g.out[a]
		rest /= g.out[a]
	}

	// Fill the padded rows: for every kernel offset over the plane axes, the
	// input rows r0−shift … r0+rows+kRows−2−shift.
	var tap [maxRank]int
	for pt := 0; pt < d.planeTaps; pt++ {
		base, inside := 0, true
		for a := 0; a < n-2; a++ {
			q, ok := d.p.Border.Index(planeIdx[a]+tap[a]-g.shift[a], g.in[a])
			inside = inside && ok
			base += q * g.inStrides[a]
		}
		for r := 0; r < rows+g.kernel[n-2]-1; r++ {
			row := s.rows[(pt*d.bufRows+r)*d.pitch:][:width]
			q, ok := d.p.Border.Index(r0+r-g.shift[n-2], g.in[n-2])
			if !inside || !ok {
				fill(row, d.cval)
				continue
			}
			loadPadded(row, src.Data, base+q*g.inStrides[n-2], g.c, &pad, d.cval)
		}
		for a := n - 3; a >= 0; a-- {
			if tap[a]++; tap[a] < g.kernel[a] {
				break
			}
			tap[a] = 0
		}
	}

	bank := len(d.taps)
	outBase := (plane*g.out[n-2] + r0) * g.out[n-1]
	// With one kernel and no conversion, the taps write the output itself.
	direct, _ := dst.Data.([]F)
	if bank > 1 {
		direct = nil
	}
	rowLen, width := g.out[n-1]*g.c, cols*g.c
	r := 0
	for ; len(d.groups) > 0 && r+d.bankRows <= rows; r += d.bankRows {
		for gi, st := range d.groups {
			simd.Block(s.bank[gi*simd.BankSets*width:][:simd.BankSets*width], width, width, s.rows[r*d.pitch:], st)
		}
		for i := range d.bankRows {
			d.storeBank(dst.Data, outBase*g.c+(r+i)*rowLen+x0*g.c, s, i, width)
		}
	}
	for ; len(d.groups) == 0 && r+simd.BlockRows <= rows; r += simd.BlockRows {
		voxel := outBase*g.c + r*rowLen + x0*g.c
		for b, l := range d.taps {
			if direct != nil {
				simd.Block(direct[voxel:], rowLen, width, s.rows[r*d.pitch:], l.steps)
				continue
			}
			acc := s.acc[b][:simd.BlockRows*width]
			simd.Block(acc, width, width, s.rows[r*d.pitch:], l.steps)
			for i := range simd.BlockRows {
				off, stride := d.bankAt(voxel+i*rowLen, b)
				store(dst.Data, off, stride, acc[i*width:][:width])
			}
		}
	}
	for ; r < rows; r++ {
		voxel := outBase*g.c + r*rowLen + x0*g.c
		for b, l := range d.taps {
			acc := s.acc[b][:width]
			if direct != nil {
				acc = direct[voxel : voxel+width]
			}
			x := 0
			for span := simd.BankSets * d.segment; d.segments != nil && x+span <= width; x += span {
				simd.Block(acc[x:], d.segment, d.segment, s.rows[r*d.pitch+x:], d.segments)
			}
			simd.SetTaps(acc[x:], s.rows[r*d.pitch+x:], l.offs, l.w)
			if direct == nil {
				off, stride := d.bankAt(voxel, b)
				store(dst.Data, off, stride, acc)
			}
		}
	}
}

// maxRank bounds the number of axes, so per-tile index arrays live on the
// stack.
const maxRank = nd.MaxRank

// bankAt is where kernel b's output for voxel v lies in dst, and the
// distance to voxel v+1's: v·bank+b and bank, interleaved; b·N+v and 1,
// planar (Options.Planar).
func (d *direct[F]) bankAt(v, b int) (off, stride int) {
	if d.planar > 0 {
		return b*d.planar + v, 1
	}
	bank := len(d.taps)
	return v*bank + b, bank
}

// storeBank stores row i of every bank group's accumulator sets into dst
// for the width voxels from voxel on: interleaved as the output is,
// kernel fastest, dst[voxel·bank + x·bank+b] = kernel b's output x; or,
// planar, each kernel's row whole into its plane (bankAt). Whole groups of float32s go
// through simd.Transpose8. An output of another type (uint8, uint16, …)
// is interleaved in s.inter first and converted in one contiguous store
// (simd.StoreUint8 and the like): stored value by value at stride bank, a
// 1024² bank of 64 3×3 kernels into uint8 took 97–129 ms, now 20–21
// (docs/perf/cpu-engine.md).
func (d *direct[F]) storeBank(dst any, voxel int, s *directScratch[F], i, width int) {
	bank := len(d.taps)
	if d.planar > 0 {
		for b := range bank {
			sets := s.bank[((b/d.groupKernels)*simd.BankSets+i*d.groupKernels+b%d.groupKernels)*width:]
			off, _ := d.bankAt(voxel, b)
			store(dst, off, 1, sets[:width])
		}
		return
	}
	off := voxel * bank
	out := into[F](dst, off, 1, bank*width)
	convert := out == nil
	if convert {
		if len(s.inter) < bank*width {
			s.inter = make([]F, bank*d.tileCols*d.g.c)
		}
		out = s.inter[:bank*width]
	}
	out32, _ := any(out).([]float32)
	for b := 0; b < bank; b += d.groupKernels {
		sets := s.bank[((b/d.groupKernels)*simd.BankSets+i*d.groupKernels)*width:]
		n := min(d.groupKernels, bank-b)
		switch {
		case out32 != nil && n == simd.BankSets:
			simd.Transpose8(out32[b:], bank, any(sets).([]float32), width, width)
			continue
		case bank == 2:
			interleave2(out, sets[:width], sets[width:][:width])
			continue
		case bank == 4:
			interleave4(out, sets[:width], sets[width:][:width], sets[2*width:][:width], sets[3*width:][:width])
			continue
		}
		for k := range n {
			for x, v := range sets[k*width:][:width] {
				out[x*bank+b+k] = v
			}
		}
	}
	if convert {
		store(dst, off, 1, out)
	}
}

// interleave2 and interleave4 store the rows of a bank of 2 or 4 kernels
// into out, kernel fastest, writing out in order.
func interleave2[F nd.Float](out, r0, r1 []F) {
	r1 = r1[:len(r0)]
	out = out[:2*len(r0)]
	for x, v := range r0 {
		out[2*x], out[2*x+1] = v, r1[x]
	}
}

func interleave4[F nd.Float](out, r0, r1, r2, r3 []F) {
	r1, r2, r3 = r1[:len(r0)], r2[:len(r0)], r3[:len(r0)]
	out = out[:4*len(r0)]
	for x, v := range r0 {
		o := out[4*x:][:4]
		o[0], o[1], o[2], o[3] = v, r1[x], r2[x], r3[x]
	}
}
