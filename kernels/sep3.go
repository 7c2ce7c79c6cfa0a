package kernels

import (
	"fmt"
	"math"
	"slices"

	"github.com/ndconv/ndconv/nd"
)

// Sep3Shape is sep3.cl's work decomposition: work-groups of TX × TY
// work-items, each owning a tile of TX output elements by TY·RY rows (one
// column and RY rows per work-item) of a segment of SEG output planes; the
// X pass runs in pieces of RX consecutive elements (RX divides TX).
type Sep3Shape struct {
	TX, TY, RX, RY, SEG int
}

func (s Sep3Shape) String() string {
	return fmt.Sprintf("%dx%d threads, %d rows each, X pieces of %d, %d planes", s.TX, s.TY, s.RY, s.RX, s.SEG)
}

// sep3AccBudget bounds sep3.cl's Z ring, KZ·RY accumulators per work-item
// (half as many of float64), and sep3MaxGroupSize its work-groups.
const (
	sep3AccBudget    = 64
	sep3MaxGroupSize = 1024
)

// sep3Axes are the axes of p's three passes when they run along adjacent
// axes, Z, Y and X (x = z + 2), as sep3.cl's: ok is false otherwise.
func sep3Axes(p *nd.Problem) (x int, ok bool) {
	passes := separablePasses(p)
	if len(passes) != 3 || passes[1] != passes[0]-1 || passes[2] != passes[0]-2 {
		return 0, false
	}
	return passes[0], true
}

// sep3Pitches are sep3.cl's local row pitches (staged input rows,
// intermediate rows): at least a row, and one more than a multiple of 32
// (see sepRingPitches).
func sep3Pitches(s Sep3Shape, kx, c int) (stage, inter int) {
	return sepRingPitches(SepFusedShape{TX: s.TX}, kx, c)
}

// sep3LocalBytes is sep3.cl's local memory: the tile's staged input rows
// and its intermediate rows.
func sep3LocalBytes(s Sep3Shape, kx, ky, c, accSize int) int {
	stage, inter := sep3Pitches(s, kx, c)
	return (s.TY*s.RY + ky - 1) * (stage + inter) * accSize
}

// sep3Fits reports whether sep3.cl runs shape s for kernel extents kx, ky,
// kz with c samples per position: a valid shape, its Z ring within
// budget and its local memory within maxLocal.
func sep3Fits(s Sep3Shape, kx, ky, kz, c int, wide bool, maxLocal int) bool {
	budget := sep3AccBudget
	accSize := 4
	if wide {
		budget, accSize = budget/2, 8
	}
	return s.TX > 0 && s.TY > 0 && s.RX > 0 && s.RY > 0 && s.SEG > 0 && s.TX%s.RX == 0 &&
		s.TX*s.TY <= sep3MaxGroupSize && kz*s.RY <= budget &&
		sep3LocalBytes(s, kx, ky, c, accSize) <= maxLocal
}

// sep3Geometry is the extents sep3.cl sees of p, whose passes run along
// axes x−2, x−1 and x.
type sep3Geometry struct {
	kx, ky, kz, c, outer int
}

func sep3GeometryOf(p *nd.Problem, x int) sep3Geometry {
	return sep3Geometry{kx: p.KShape[x], ky: p.KShape[x-1], kz: p.KShape[x-2],
		c: product(p.InShape[x+1:]), outer: product(p.InShape[:x-2])}
}

// defaultSep3Shape is the decomposition NewSeparable picks for p: tiles of
// 64 elements by 16 rows (256 work-items of 4 rows each, 2 or 1 where a
// ring of 4 would pass 32 accumulators, 16 of float64: with the staged
// values' registers about 70 a work-item, so that three work-groups share
// a multiprocessor), X pieces of 8, and segments that give about
// targetGroups/2 work-groups, no shorter than 4·KZ planes (the Z halo
// re-read within 25%), splitting the planes evenly.
func defaultSep3Shape(p *nd.Problem, x int) Sep3Shape {
	g := sep3GeometryOf(p, x)
	budget := sep3AccBudget / 2
	if p.Wide {
		budget /= 2
	}
	s := Sep3Shape{TX: 64, TY: 4, RX: 8, RY: 4}
	for s.RY > 1 && g.kz*s.RY > budget {
		s.RY /= 2
	}
	if p.OutShape[x]*g.c <= 32 {
		s.TX = 32
	}
	mz := p.OutShape[x-2]
	perSeg := ceilDiv(p.OutShape[x]*g.c, s.TX) * ceilDiv(p.OutShape[x-1], s.TY*s.RY) * g.outer
	segs := min(ceilDiv(targetGroups/2, perSeg), max(1, mz/(4*g.kz)))
	s.SEG = ceilDiv(mz, max(segs, 1))
	return s
}

// sep3Candidates are sep3.cl's decompositions the tuner measures for p
// (none where its passes are not Z, Y, X on adjacent axes).
func sep3Candidates(p *nd.Problem) []Tuning {
	x, ok := sep3Axes(p)
	if !ok {
		return nil
	}
	g := sep3GeometryOf(p, x)
	var out []Tuning
	for _, tx := range []int{32, 64, 128} {
		for _, ty := range []int{4, 8} {
			for _, rx := range []int{4, 8} {
				for _, ry := range []int{2, 4} {
					for _, seg := range []int{32, 64, 128, 256} {
						s := Sep3Shape{TX: tx, TY: ty, RX: rx, RY: ry, SEG: seg}
						if sep3Fits(s, g.kx, g.ky, g.kz, g.c, p.Wide, 48<<10) {
							out = append(out, Tuning{Shape: s})
						}
					}
				}
			}
		}
	}
	return out
}

// newSep3 specialises sep3.cl for kernel k of p (whose passes run along
// axes x−2, x−1 and x), storing its output at stride, offset, in shape s.
func newSep3(p *nd.Problem, opt SeparableOptions, s Sep3Shape, x int, k nd.Weights, stride, offset int) *Launch {
	g := sep3GeometryOf(p, x)
	fx, fy, fz := k.Factors[x], k.Factors[x-1], k.Factors[x-2]
	nz, ny, nx := p.InShape[x-2], p.InShape[x-1], p.InShape[x]
	mz, my, mx := p.OutShape[x-2], p.OutShape[x-1], p.OutShape[x]
	// The values outside each pass's input with the constant border, as
	// NewSeparable's chain of passes computes them: cval times the sums
	// of the factors already applied, in float64, rounded once to ACC_T.
	cval2 := p.CVal * sum(fx)
	cval3 := cval2 * sum(fy)
	taps := slices.Concat(fx, fy, fz, []float64{cval2, cval3})
	segs := ceilDiv(mz, s.SEG)
	l := &Launch{Family: "sep3", Name: "correlate_sep3", Wide: p.Wide, CVal: p.CVal,
		Taps: taps, Outer: []int32{0},
		Local:  [3]int{s.TX, s.TY, 1},
		Groups: [3]int{ceilDiv(mx*g.c, s.TX), ceilDiv(my, s.TY*s.RY), min(g.outer*segs, 65535)},
		Scalars: []int64{int64(nz), int64(ny), int64(nx), int64(mz), int64(my), int64(mx),
			int64(g.outer), int64(stride), int64(offset)},
		Shape: s,
	}
	accSize := AccBytes(p)
	l.LocalBytes = sep3LocalBytes(s, g.kx, g.ky, g.c, accSize)
	stage, inter := sep3Pitches(s, g.kx, g.c)
	maxIndex := max(int64(product(p.InShape)), int64(product(p.OutShape))*int64(stride)) + int64(s.TX+g.kx*g.c)*int64(stride)
	l.Defines = append(typeDefines(p),
		fmt.Sprintf("BORDER=%d", p.Border),
		fmt.Sprintf("KX=%d", g.kx), fmt.Sprintf("KY=%d", g.ky), fmt.Sprintf("KZ=%d", g.kz),
		fmt.Sprintf("SHIFT_X=%d", p.Shift[x]), fmt.Sprintf("SHIFT_Y=%d", p.Shift[x-1]), fmt.Sprintf("SHIFT_Z=%d", p.Shift[x-2]),
		fmt.Sprintf("C=%d", g.c),
		fmt.Sprintf("TX=%d", s.TX), fmt.Sprintf("TY=%d", s.TY), fmt.Sprintf("RX=%d", s.RX), fmt.Sprintf("RY=%d", s.RY),
		fmt.Sprintf("SEG=%d", s.SEG),
		fmt.Sprintf("STAGE_PITCH=%d", stage), fmt.Sprintf("INTER_PITCH=%d", inter),
		fmt.Sprintf("IDX32=%d", b2i(maxIndex < math.MaxInt32)),
		fmt.Sprintf("TAPS_N=%d", len(taps)))
	l.Defines = append(l.Defines, nonzeroDefines(taps[:g.kx+g.ky+g.kz])...)
	l.Defines = append(l.Defines, l.tapsInParams(opt.MaxParamBytes, accSize))
	slices.Sort(l.Defines)
	return l
}

// sep3Launches is p's separable method as sep3.cl launches, one per bank
// kernel with no temporaries, or nil where sep3.cl does not serve: passes
// not Z, Y, X on adjacent axes, a forced sepfused.cl or septile.cl shape
// or unfused passes, a problem smaller than minFusedOutputs (unless a shape is
// forced or FuseSmall set), or a shape whose ring or local memory does not fit.
func sep3Launches(p *nd.Problem, opt SeparableOptions) *Separable {
	x, ok := sep3Axes(p)
	if !ok || opt.Unfused || opt.fused != (SepFusedShape{}) || opt.septile != (SepTileShape{}) {
		return nil
	}
	sh := opt.sep3
	if sh == (Sep3Shape{}) {
		if !opt.FuseSmall && product(p.OutShape) < minFusedOutputs {
			return nil
		}
		sh = defaultSep3Shape(p, x)
	}
	g := sep3GeometryOf(p, x)
	if !sep3Fits(sh, g.kx, g.ky, g.kz, g.c, p.Wide, opt.MaxLocalBytes) ||
		ceilDiv(p.OutShape[x-1], sh.TY*sh.RY) > 65535 {
		return nil
	}
	s := &Separable{}
	for b, k := range p.Kernels {
		l := newSep3(p, opt, sh, x, k, len(p.Kernels), b)
		s.Steps = append(s.Steps, Step{Launch: l, From: Input, To: Output})
	}
	return s
}
