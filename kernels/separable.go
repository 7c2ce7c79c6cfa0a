package kernels

import (
	"fmt"
	"slices"

	"github.com/ndconv/ndconv/nd"
)

// Role names a buffer a separable step reads or writes: the problem's
// input or output, or one of two ACC_T temporaries.
type Role uint8

const (
	Input Role = iota
	Output
	Temp0
	Temp1
)

// A Step is one launch of separable.cl and the buffers it reads and writes.
type Step struct {
	Launch   *Launch
	From, To Role
}

// Separable is a separable correlation as launches: for each kernel of the
// bank, one pass per kernel axis from the last axis to the first, each
// reading the previous pass's temporary — the CPU engine's passes in the
// CPU engine's order, so that both give the same bits.
type Separable struct {
	Steps []Step
	// TempElems is the ACC_T elements each temporary needs (0: none).
	TempElems int
	// Temps is how many temporaries the steps use (0, 1 or 2).
	Temps int
}

// passLocal is the work-group size of a pass, and passMaxGroups bounds its
// grid (the kernel strides over the rest).
const (
	passLocal     = 256
	passMaxGroups = 1 << 16
)

// SeparableOptions are the device limits NewSeparable plans within.
type SeparableOptions struct {
	// MaxLocalBytes is the local memory a work-group may declare; passes
	// whose fused rows need more run unfused.
	MaxLocalBytes int
	// MaxParamBytes: see DirectOptions.
	MaxParamBytes int
	// GroupItems is how many work-items a default decomposition may put
	// in one work-group; 0 means 256, what every device allows.
	GroupItems int
	// Shape is the tuner's choice of decomposition: a SepFusedShape forces
	// sepfused.cl's; a Sep3Shape forces sep3.cl where the passes are Z, Y,
	// X on adjacent axes; a SepTileShape forces septile.cl for the fused X
	// and Y passes; nil (or another family's shape) lets NewSeparable
	// choose from the problem's size.
	Shape Decomposition
	// fused, sep3 and septile are Shape by family, zero where it is not
	// theirs.
	fused   SepFusedShape
	sep3    Sep3Shape
	septile SepTileShape
	// Unfused runs every pass with separable.cl (tests, the tuner's
	// baseline).
	Unfused bool
	// FuseSmall fuses the passes of small problems too, in strips
	// (sepfused.cl, sep3.cl), where untuned they run septile.cl's tiles or
	// unfused passes (Tuning.FuseSmall).
	FuseSmall bool
}

// NewSeparable specialises the separable method for p, whose kernels must
// all have factors: all three passes in one sep3.cl launch per bank kernel
// where they run along three adjacent axes (Z, Y, X) and the problem is
// large enough; otherwise the last two passes fused where they run along
// adjacent axes — in tiles staged whole (septile.cl) for problems smaller
// than sepTileMaxOutputs, in strips (sepfused.cl) for larger ones — every
// other pass with separable.cl. It returns nil, nil when the output is
// empty.
func NewSeparable(p *nd.Problem, opt SeparableOptions) (*Separable, error) {
	opt.fused, _ = opt.Shape.(SepFusedShape)
	opt.sep3, _ = opt.Shape.(Sep3Shape)
	opt.septile, _ = opt.Shape.(SepTileShape)
	if err := CheckDTypes(p); err != nil {
		return nil, err
	}
	if !p.Separable() {
		return nil, fmt.Errorf("kernels: separable: a kernel is not separable")
	}
	if slices.Contains(p.OutShape, 0) || slices.Contains(p.InShape, 0) {
		return nil, nil
	}
	if l := sep3Launches(p, opt); l != nil {
		return l, nil
	}
	passes := separablePasses(p)
	tile := sepTileShape(p, passes, opt)
	tiled := tile != (SepTileShape{})
	if opt.fused == (SepFusedShape{}) {
		opt.fused = defaultSepRing(p, passes)
	}
	// The first two passes fuse into one sepfused.cl launch when they run
	// along adjacent axes (the last kernel axis X and the one before it, Y)
	// and its rows fit local memory.
	localBytes := sepFusedLocalBytes(p, passes[0])
	if opt.fused.Ring && len(passes) > 1 {
		localBytes = sepRingLocalBytes(opt.fused, p.KShape[passes[0]], p.KShape[passes[1]], product(p.InShape[passes[0]+1:]), AccBytes(p))
	}
	fused := !tiled && !opt.Unfused && fusable(passes) && localBytes <= opt.MaxLocalBytes &&
		(opt.fused != (SepFusedShape{}) || opt.FuseSmall || product(p.OutShape) >= minFusedOutputs)
	s := &Separable{}
	shape := slices.Clone(p.InShape)
	shapes := [][]int{slices.Clone(shape)}
	for _, d := range passes {
		shape[d] = p.OutShape[d]
		shapes = append(shapes, slices.Clone(shape))
	}
	// The intermediates: after each pass but the last, except the one a
	// fused launch keeps on chip.
	first := 0
	if fused || tiled {
		first = 1
	}
	for i := first; i < len(passes)-1; i++ {
		s.TempElems = max(s.TempElems, product(shapes[i+1]))
		s.Temps = min(s.Temps+1, 2)
	}
	acc := nd.Float32
	if p.Wide {
		acc = nd.Float64
	}
	bank := len(p.Kernels)
	for b, k := range p.Kernels {
		cval := p.CVal
		from := Input
		temp := 0 // the next temporary to write
		for i := 0; i < len(passes); i++ {
			d := passes[i]
			q := *p // the pass's types: ACC_T temporaries between passes
			if i > 0 {
				q.In = acc
			}
			to, stride, offset := Output, 1, 0
			last := i == len(passes)-1 || ((fused || tiled) && i == 0 && len(passes) == 2)
			if last {
				stride, offset = bank, b
			} else {
				q.Out = acc
				to = Temp0 + Role(temp%2)
				temp++
			}
			var l *Launch
			switch {
			case tiled && i == 0:
				x := passes[0]
				l = newSepTile(stepArgs{q: &q, opt: opt, in: shapes[0], x: x, fx: k.Factors[x], shiftX: p.Shift[x],
					fy: k.Factors[x-1], shiftY: p.Shift[x-1], cval: cval, stride: stride, offset: offset}, tile)
				cval *= sum(k.Factors[x])
				i++ // the Y pass is done too
			case fused && i == 0:
				x := passes[0]
				l = newSepFused(stepArgs{q: &q, opt: opt, in: shapes[0], x: x, fx: k.Factors[x], shiftX: p.Shift[x],
					fy: k.Factors[x-1], shiftY: p.Shift[x-1], cval: cval, stride: stride, offset: offset})
				cval *= sum(k.Factors[x])
				i++ // the Y pass is done too
			case fused && d < len(p.InShape)-1:
				// A later pass along a slow axis (3-D's Z) runs as the
				// fused kernel's Y pass with an identity X pass (one tap
				// of 1, exact: fma(1, v, 0) = v): strips walking down the
				// axis, each value read once.
				l = newSepFused(stepArgs{q: &q, opt: opt, in: shapes[i], x: d + 1, fx: []float64{1}, shiftX: 0,
					fy: k.Factors[d], shiftY: p.Shift[d], cval: cval, stride: stride, offset: offset})
			default:
				l = newPass(stepArgs{q: &q, in: shapes[i], x: d, fx: k.Factors[d], shiftX: q.Shift[d],
					cval: cval, stride: stride, offset: offset}, shapes[i+1])
			}
			s.Steps = append(s.Steps, Step{Launch: l, From: from, To: to})
			from = to
			// Outside an intermediate the direct definition sees cval
			// times the factors already applied.
			cval *= sum(k.Factors[passes[i]])
		}
	}
	return s, nil
}

// separablePasses are the axes the separable method filters along, in
// the order it does: the axes the kernel spans, last first (axis 0 alone
// for a one-tap kernel, a scaling whose factor sits there).
func separablePasses(p *nd.Problem) []int {
	var passes []int
	for d := len(p.InShape) - 1; d >= 0; d-- {
		if p.KShape[d] > 1 {
			passes = append(passes, d)
		}
	}
	if len(passes) == 0 {
		passes = []int{0}
	}
	return passes
}

// fusable reports whether the first two passes run along adjacent axes, as
// sepfused.cl's X and Y passes.
func fusable(passes []int) bool { return len(passes) >= 2 && passes[1] == passes[0]-1 }

// stepArgs are what the builders of one separable step take besides their
// family's decomposition: the step's problem q (its types: ACC_T
// temporaries between passes) and options, the shape in it reads, its
// pass along axis x (factor fx, shift shiftX) and, for the fused families,
// its Y pass along axis x−1 (factor fy, shift shiftY), the value outside
// its input with the constant border (cval), and where it writes: output
// element i of the step at offset + i·stride (a bank's kernels
// interleaved). Axes after x are interleaved samples, axes before planes.
type stepArgs struct {
	q              *nd.Problem
	opt            SeparableOptions
	in             []int
	x              int
	fx             []float64
	shiftX         int
	fy             []float64
	shiftY         int
	cval           float64
	stride, offset int
}

// newPass specialises separable.cl: a's pass alone (along axis a.x), from
// shape a.in to shape out.
func newPass(a stepArgs, out []int) *Launch {
	q, in, d, f, cval, stride, offset := a.q, a.in, a.x, a.fx, a.cval, a.stride, a.offset
	total := product(out)
	l := &Launch{Family: "separable", Name: "correlate_pass", Wide: q.Wide, CVal: cval,
		Taps: slices.Clone(f), Outer: []int32{0},
		Local:  [3]int{passLocal, 1, 1},
		Groups: [3]int{max(1, min((total+passLocal-1)/passLocal, passMaxGroups)), 1, 1},
		Scalars: []int64{int64(in[d]), int64(out[d]), int64(product(in[d+1:])), int64(total),
			int64(stride), int64(offset)},
	}
	l.Defines = append(typeDefines(q),
		fmt.Sprintf("BORDER=%d", q.Border),
		fmt.Sprintf("K=%d", len(f)),
		fmt.Sprintf("SHIFT=%d", a.shiftX))
	slices.Sort(l.Defines)
	return l
}
