package kernels

import (
	"fmt"
	"math"
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
	// Fused forces sepfused.cl's decomposition (the tuner's choice); zero
	// picks one from the problem's size.
	Fused SepFusedShape
	// Sep3 forces sep3.cl and its decomposition where the passes are Z, Y,
	// X on adjacent axes (the tuner's choice); zero lets NewSeparable
	// choose.
	Sep3 Sep3Shape
	// SepTile forces septile.cl and its decomposition for the fused X and
	// Y passes (the tuner's choice); zero lets NewSeparable choose.
	SepTile SepTileShape
	// Unfused runs every pass with separable.cl (tests, the tuner's
	// baseline).
	Unfused bool
}

// NewSeparable specialises the separable method for p, whose kernels must
// all have factors: all three passes in one sep3.cl launch per bank kernel
// where they run along three adjacent axes (Z, Y, X) and the problem is
// large enough; otherwise the last two passes fused where they run along
// adjacent axes — in tiles staged whole (septile.cl) for problems smaller
// than SepTileMaxOutputs, in strips (sepfused.cl) for larger ones — every
// other pass with separable.cl. It returns nil, nil when the output is
// empty.
func NewSeparable(p *nd.Problem, opt SeparableOptions) (*Separable, error) {
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
	if opt.Fused == (SepFusedShape{}) {
		opt.Fused = defaultSepRing(p, passes)
	}
	// The first two passes fuse into one sepfused.cl launch when they run
	// along adjacent axes (the last kernel axis X and the one before it, Y)
	// and its rows fit local memory.
	localBytes := sepFusedLocalBytes(p, passes[0])
	if opt.Fused.Ring && len(passes) > 1 {
		localBytes = sepRingLocalBytes(opt.Fused, p.KShape[passes[0]], p.KShape[passes[1]], product(p.InShape[passes[0]+1:]), AccBytes(p))
	}
	fused := !tiled && !opt.Unfused && fusable(passes) && localBytes <= opt.MaxLocalBytes &&
		(opt.Fused != (SepFusedShape{}) || product(p.OutShape) >= MinFusedOutputs)
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
				l = newSepTile(&q, opt, tile, shapes[0], x, k.Factors[x], p.Shift[x], k.Factors[x-1], p.Shift[x-1], cval, stride, offset)
				cval *= sum(k.Factors[x])
				i++ // the Y pass is done too
			case fused && i == 0:
				x := passes[0]
				l = newSepFused(&q, opt, shapes[0], x, k.Factors[x], p.Shift[x], k.Factors[x-1], p.Shift[x-1], cval, stride, offset)
				cval *= sum(k.Factors[x])
				i++ // the Y pass is done too
			case fused && d < len(p.InShape)-1:
				// A later pass along a slow axis (3-D's Z) runs as the
				// fused kernel's Y pass with an identity X pass (one tap
				// of 1, exact: fma(1, v, 0) = v): strips walking down the
				// axis, each value read once.
				l = newSepFused(&q, opt, shapes[i], d+1, []float64{1}, 0, k.Factors[d], p.Shift[d], cval, stride, offset)
			default:
				l = newPass(&q, shapes[i], shapes[i+1], d, k.Factors[d], cval, stride, offset)
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

// newPass specialises separable.cl: one pass along axis d from shape in to
// shape out.
func newPass(q *nd.Problem, in, out []int, d int, f []float64, cval float64, stride, offset int) *Launch {
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
		fmt.Sprintf("SHIFT=%d", q.Shift[d]))
	slices.Sort(l.Defines)
	return l
}

// SepFusedShape is the fused passes' work decomposition: work-groups of TX
// work-items walking strips of SEG output rows. In sepfused.cl each
// work-item owns RX consecutive elements of the strip; with Ring, in
// sepring.cl, it owns one column (the strip is TX wide) and its X-pass
// pieces are RX elements long.
type SepFusedShape struct {
	TX, RX, SEG int
	Ring        bool `json:",omitempty"`
	// Prefetch (Ring only): each round reads the next one's rows into
	// registers before its Y pass.
	Prefetch bool `json:",omitempty"`
}

// MinFusedOutputs: smaller problems run their passes unfused where
// septile.cl's tiles do not take them (SepTileMaxOutputs), which spreads
// them over more work-items than sepfused.cl's strips (S003's 640×480 ran
// nearly twice as fast in passes on the H100). The backends' tests lower it, so that
// the case table's small problems run the fused kernel.
var MinFusedOutputs = 1 << 20

// targetGroups is about how many work-groups keep a large GPU busy (132
// multiprocessors × 8); smaller problems get narrower, shorter strips.
const targetGroups = 1056

// newSepFused specialises sepfused.cl (sepring.cl for a Ring shape) for
// the X pass along axis x (factor fx) and the Y pass along axis x−1
// (factor fy) of q, reading an input of the given shape; axes after x are
// interleaved samples, axes before x−1 are planes.
func newSepFused(q *nd.Problem, opt SeparableOptions, in []int, x int, fx []float64, shiftX int, fy []float64, shiftY int, cval float64, stride, offset int) *Launch {
	y := x - 1
	c := product(in[x+1:])
	planes := product(in[:y])
	my, mx := q.OutShape[y], q.OutShape[x]
	kx, ky := len(fx), len(fy)
	sh := opt.Fused
	if sh == (SepFusedShape{}) {
		sh = SepFusedShape{TX: 128, RX: 4, SEG: 256}
		if ky > 16 || q.Wide {
			sh.RX = 2
		}
		groups := func(sh SepFusedShape) int {
			return ceilDiv(mx*c, sh.TX*sh.RX) * ceilDiv(my, sh.SEG) * planes
		}
		for groups(sh) < targetGroups && sh.SEG > max(ky, 32) {
			sh.SEG /= 2
		}
		for groups(sh) < targetGroups && sh.TX > 32 {
			sh.TX /= 2
		}
		for groups(sh) < targetGroups && sh.SEG > max(ky, 8) {
			sh.SEG = max(ky, 8, sh.SEG/2)
		}
		sh.SEG = wholeRounds(sh.SEG, ky)
	}
	// sepfused.cl's strips are TX·RX elements wide, sepring.cl's TX (a
	// column per work-item, X-pass pieces of RX).
	family, width := "sepfused", sh.TX*sh.RX
	if sh.Ring {
		family, width = "sepring", sh.TX
	}
	shape := []string{fmt.Sprintf("TX=%d", sh.TX), fmt.Sprintf("RX=%d", sh.RX), fmt.Sprintf("SEG=%d", sh.SEG)}
	accSize := AccBytes(q)
	localBytes := sepFusedRowsBytes(sh, kx, c, accSize)
	if sh.Ring {
		stage, inter := sepRingPitches(sh, kx, c)
		localBytes = sepRingLocalBytes(sh, kx, ky, c, accSize)
		shape = append(shape, fmt.Sprintf("STAGE_PITCH=%d", stage), fmt.Sprintf("INTER_PITCH=%d", inter),
			fmt.Sprintf("PREFETCH=%d", b2i(sh.Prefetch)))
	}
	l := fusedLaunch(q, opt, family, in, x, fx, shiftX, fy, shiftY, cval, stride, offset, width, shape)
	l.Local = [3]int{sh.TX, 1, 1}
	l.Groups = [3]int{ceilDiv(mx*c, width), ceilDiv(my, sh.SEG), min(planes, 65535)}
	l.LocalBytes = localBytes
	l.FusedShape = sh
	return l
}

// fusedLaunch is what the launches of the fused X and Y passes share
// (sepfused.cl, sepring.cl, septile.cl: one argument list): the taps (the
// X factor's, the Y factor's, then cval times the X factor's sum), the
// scalars and the defines, with the family's own (shape), for the X pass
// along axis x of q (factor fx) and the Y pass along axis x−1 (factor fy),
// reading an input of the given shape, in work-groups width elements wide.
// The caller sets the work sizes, local memory and decomposition.
func fusedLaunch(q *nd.Problem, opt SeparableOptions, family string, in []int, x int, fx []float64, shiftX int, fy []float64, shiftY int, cval float64, stride, offset, width int, shape []string) *Launch {
	y := x - 1
	c := product(in[x+1:])
	kx, ky := len(fx), len(fy)
	taps := slices.Concat(fx, fy, []float64{cval * sum(fx)})
	l := &Launch{Family: family, Name: "correlate_" + family, Wide: q.Wide, CVal: cval,
		Taps: taps, Outer: []int32{0},
		Scalars: []int64{int64(in[y]), int64(in[x]), int64(q.OutShape[y]), int64(q.OutShape[x]), int64(product(in[:y])),
			int64(stride), int64(offset)},
	}
	maxIndex := max(int64(product(in)), int64(product(q.OutShape))*int64(stride)) + int64(width+kx*c)*int64(stride)
	l.Defines = append(typeDefines(q),
		fmt.Sprintf("BORDER=%d", q.Border),
		fmt.Sprintf("KX=%d", kx), fmt.Sprintf("KY=%d", ky),
		fmt.Sprintf("SHIFT_X=%d", shiftX), fmt.Sprintf("SHIFT_Y=%d", shiftY),
		fmt.Sprintf("C=%d", c),
		fmt.Sprintf("IDX32=%d", b2i(maxIndex < math.MaxInt32)),
		fmt.Sprintf("TAPS_N=%d", len(taps)))
	l.Defines = append(l.Defines, shape...)
	l.Defines = append(l.Defines, nonzeroDefines(taps[:kx+ky])...)
	l.Defines = append(l.Defines, l.tapsInParams(opt.MaxParamBytes, AccBytes(q)))
	slices.Sort(l.Defines)
	return l
}

// sepRingMaxTaps bounds the Y factors sepring.cl serves: its KY-register
// ring would crowd out the X pass's sums beyond.
const sepRingMaxTaps = 32

// defaultSepRing is sepring.cl's prefetching decomposition for the
// problems it was measured to serve best untuned — large float32 images
// (single channel, one kernel, from sepRingMinOutputs) with 15 to
// sepRingMaxTaps taps along Y — and zero for the rest (sepfused.cl's
// default); elsewhere sepring.cl is a tuner candidate. With prefetching it
// beat sepfused.cl tuned on the H100 at 8192², 15 and 31 taps (without,
// it lost; docs/perf/gpu-kernels.md, "The figures behind the defaults").
func defaultSepRing(p *nd.Problem, passes []int) SepFusedShape {
	if len(passes) != 2 || !fusable(passes) || p.Wide || len(p.Kernels) != 1 || product(p.OutShape) < sepRingMinOutputs {
		return SepFusedShape{}
	}
	x := passes[0]
	ky := p.KShape[passes[1]]
	if product(p.InShape[x+1:]) != 1 || ky < 15 || ky > sepRingMaxTaps {
		return SepFusedShape{}
	}
	if ky <= 16 {
		return SepFusedShape{TX: 64, RX: 8, SEG: wholeRounds(256, ky), Ring: true, Prefetch: true}
	}
	return SepFusedShape{TX: 64, RX: 16, SEG: wholeRounds(512, ky), Ring: true, Prefetch: true}
}

// sepRingMinOutputs is the least image defaultSepRing serves (8192²,
// where it was measured).
const sepRingMinOutputs = 1 << 26

// sepRingPitches are sepring.cl's local row pitches (staged input rows,
// intermediate rows): at least a row, and one more than a multiple of 32
// so that work-items on consecutive rows read different banks.
func sepRingPitches(sh SepFusedShape, kx, c int) (stage, inter int) {
	odd := func(n int) int { return (n+30)/32*32 + 1 }
	return odd(sh.TX + (kx-1)*c), odd(sh.TX)
}

// sepRingLocalBytes is sepring.cl's local memory: KY staged and KY
// intermediate rows.
func sepRingLocalBytes(sh SepFusedShape, kx, ky, c, accSize int) int {
	s, i := sepRingPitches(sh, kx, c)
	return ky * (s + i) * accSize
}

// wholeRounds is the number of output rows per strip nearest rows that
// makes sepfused.cl's SEG + KY − 1 steps a whole number m ≥ 2 of its ring's
// KY-step rounds.
func wholeRounds(rows, ky int) int {
	m := max(2, (rows+ky/2)/ky+1)
	return (m-1)*ky + 1
}

// sepFusedRowsBytes is the local memory of sepfused.cl's two staged rows.
func sepFusedRowsBytes(sh SepFusedShape, kx, c, accSize int) int {
	rowElems := sh.TX*sh.RX + (kx-1)*c
	return 2 * (rowElems + rowElems/sh.RX + 1) * accSize
}

// sepFusedLocalBytes bounds the local memory a fused launch along axis x
// of p may need (the widest strip NewSeparable picks).
func sepFusedLocalBytes(p *nd.Problem, x int) int {
	return sepFusedRowsBytes(SepFusedShape{TX: 128, RX: 4}, p.KShape[x], product(p.InShape[x+1:]), AccBytes(p))
}

func sum(f []float64) float64 {
	t := 0.0
	for _, v := range f {
		t += v
	}
	return t
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func product(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// sep3Launches is p's separable method as sep3.cl launches, one per bank
// kernel with no temporaries, or nil where sep3.cl does not serve: passes
// not Z, Y, X on adjacent axes, a forced sepfused.cl or septile.cl shape
// or unfused passes, a problem smaller than MinFusedOutputs (unless a shape is
// forced), or a shape whose ring or local memory does not fit.
func sep3Launches(p *nd.Problem, opt SeparableOptions) *Separable {
	x, ok := sep3Axes(p)
	if !ok || opt.Unfused || opt.Fused != (SepFusedShape{}) || opt.SepTile != (SepTileShape{}) {
		return nil
	}
	sh := opt.Sep3
	if sh == (Sep3Shape{}) {
		if product(p.OutShape) < MinFusedOutputs {
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
