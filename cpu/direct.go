package cpu

import (
	"context"

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
// every nonzero kernel row is run over them with a row kernel specialised
// for its width. Every kernel of a bank reads the same converted rows, and
// the results are interleaved as out[voxel*K + i].
func NewDirect(p *nd.Problem, opt Options) Executable {
	if p.Wide {
		return newDirect[float64](p, opt)
	}
	return newDirect[float32](p, opt)
}

// tileBudget is the number of accumulator-typed values a tile's padded rows
// may take, sized to stay within a core's L2 cache.
const tileBudget = 1 << 16

type direct[F nd.Float] struct {
	p   *nd.Problem
	opt Options
	g   geometry

	tileRows, tileCols   int // output rows and columns per tile
	bufRows, bufCols     int // padded rows per plane offset, values per padded row
	planeTaps            int // kernel offsets over the plane axes
	rowBlocks, colBlocks int
	planes, tiles        int
	ops                  [][]rowOp[F] // per bank kernel
	cval                 F
	scratch              []directScratch[F]
}

type rowOp[F nd.Float] struct {
	row  int // padded row index of output row 0: plane offset · bufRows + row offset
	taps rowTaps[F]
}

type directScratch[F nd.Float] struct {
	rows []F
	acc  [][]F
}

// geometry is the problem seen with at least two axes: the last (columns),
// the one before it (rows) and the rest (planes). A 1-D problem gains a
// leading axis of length 1.
type geometry struct {
	in, out, kernel, shift []int
	inStrides              []int
}

func newGeometry(p *nd.Problem) geometry {
	g := geometry{in: p.InShape, out: p.OutShape, kernel: p.KShape, shift: p.Shift}
	if len(g.in) == 1 {
		g = geometry{in: []int{1, g.in[0]}, out: []int{1, g.out[0]}, kernel: []int{1, g.kernel[0]}, shift: []int{0, g.shift[0]}}
	}
	g.inStrides = nd.Strides(g.in)
	return g
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func newDirect[F nd.Float](p *nd.Problem, opt Options) *direct[F] {
	g := newGeometry(p)
	n := len(g.in)
	rows, cols := g.out[n-2], g.out[n-1]
	kRows, kCols := g.kernel[n-2], g.kernel[n-1]
	d := &direct[F]{p: p, opt: opt, g: g, cval: F(p.CVal), planes: 1, planeTaps: 1}
	for a := 0; a < n-2; a++ {
		d.planes *= g.out[a]
		d.planeTaps *= g.kernel[a]
	}

	d.tileCols = max(1, min(cols, 2048))
	d.bufCols = d.tileCols + kCols - 1
	d.tileRows = tileBudget/(d.planeTaps*d.bufCols) - kRows + 1
	d.tileRows = max(1, min(d.tileRows, 64, rows))
	d.colBlocks = ceilDiv(cols, d.tileCols)
	// Enough tiles that every worker stays busy to the end.
	if want := 4 * opt.workers(); d.planes*d.colBlocks*ceilDiv(rows, d.tileRows) < want && rows > 0 {
		perRowBlock := ceilDiv(want, d.planes*d.colBlocks)
		d.tileRows = max(1, min(d.tileRows, ceilDiv(rows, perRowBlock)))
	}
	d.bufRows = d.tileRows + kRows - 1
	d.rowBlocks = ceilDiv(rows, d.tileRows)
	d.tiles = d.planes * d.rowBlocks * d.colBlocks
	if cols == 0 || rows == 0 {
		d.tiles = 0
	}

	// One op per nonzero kernel row: the kernel viewed as
	// [planeTaps][kRows][kCols].
	for _, k := range p.Kernels {
		var ops []rowOp[F]
		for pt := 0; pt < d.planeTaps; pt++ {
			for r := 0; r < kRows; r++ {
				start := (pt*kRows + r) * kCols
				if taps, ok := newRowTaps[F](k.Dense[start : start+kCols]); ok {
					ops = append(ops, rowOp[F]{row: pt*d.bufRows + r, taps: taps})
				}
			}
		}
		d.ops = append(d.ops, ops)
	}
	return d
}

func (d *direct[F]) Execute(ctx context.Context, dst, src nd.Array) error {
	workers := min(d.opt.workers(), max(d.tiles, 1))
	for len(d.scratch) < workers {
		s := directScratch[F]{rows: make([]F, d.planeTaps*d.bufRows*d.bufCols)}
		for range d.ops {
			s.acc = append(s.acc, make([]F, d.tileCols))
		}
		d.scratch = append(d.scratch, s)
	}
	t := &tracker{progress: d.opt.Progress, total: int64(d.tiles)}
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
	width := cols + g.kernel[n-1] - 1

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
			row := s.rows[(pt*d.bufRows+r)*d.bufCols:][:width]
			q, ok := d.p.Border.Index(r0+r-g.shift[n-2], g.in[n-2])
			if !inside || !ok {
				fill(row, d.cval)
				continue
			}
			loadPadded(row, src.Data, base+q*g.inStrides[n-2], x0-g.shift[n-1], g.in[n-1], d.p.Border, d.cval)
		}
		for a := n - 3; a >= 0; a-- {
			if tap[a]++; tap[a] < g.kernel[a] {
				break
			}
			tap[a] = 0
		}
	}

	bank := len(d.ops)
	outBase := (plane*g.out[n-2] + r0) * g.out[n-1]
	for r := 0; r < rows; r++ {
		for b, ops := range d.ops {
			acc := s.acc[b][:cols]
			clear(acc)
			for i := range ops {
				op := &ops[i]
				op.taps.apply(acc, s.rows[(op.row+r)*d.bufCols:][:width])
			}
			nd.Store(dst.Data, (outBase+r*g.out[n-1]+x0)*bank+b, bank, acc)
		}
	}
}

// maxRank bounds the number of axes, so per-tile index arrays live on the
// stack.
const maxRank = nd.MaxRank
