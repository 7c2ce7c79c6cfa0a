package kernels

import (
	"fmt"
	"slices"

	"github.com/ndconv/ndconv/nd"
)

// Work-group tile of the direct kernel, in output elements: TileX along
// the fastest axis (a warp's worth, so loads and stores coalesce) by TileY
// rows.
const (
	TileX = 32
	TileY = 8
)

// maxMergedChannels bounds C, the samples after the last kernel axis that
// are merged into the tile's fastest axis: beyond it the halo (KX−1)·C
// would dwarf the tile, and those samples become the tile's fastest axis
// instead.
const maxMergedChannels = 16

// axis is one axis of the canonical problem.
type axis struct {
	in, out, k, shift int
}

// DirectOptions are the device limits NewDirect plans within.
type DirectOptions struct {
	// MaxLocalBytes is the local (shared) memory a work-group may declare
	// statically; larger tiles read their taps from global memory.
	MaxLocalBytes int
	// MaxGroupsYZ bounds the grid's y and z extents (65535 on CUDA).
	MaxGroupsYZ int
	// MaxParamBytes is how many bytes of weights the backend can pass by
	// value among the kernel's parameters (CUDA: its constant bank); 0
	// passes them through a __constant buffer.
	MaxParamBytes int
	// Shape is the tuner's choice of decomposition: a TiledShape forces
	// tiled.cl's, a RowsShape or BankShape selects rows.cl or bank.cl where
	// it serves the problem; nil (or another family's shape) lets
	// NewDirect choose (DefaultTiledShape, defaultRowsShape,
	// defaultBankShape).
	Shape Decomposition
	// tiled, rows and bank are Shape by family, zero where it is not
	// theirs.
	tiled TiledShape
	rows  RowsShape
	bank  BankShape
	// Untiled selects direct.cl, the simple implementation, even where
	// tiled.cl would serve (tests, and the tuner's baseline).
	Untiled bool
}

// NewDirect specialises the direct method for p: tiled.cl, register-blocked
// over a local-memory tile, wherever its tile fits the local memory the
// options allow, else direct.cl. It returns nil, nil when the output is
// empty and there is nothing to launch.
func NewDirect(p *nd.Problem, opt DirectOptions) (*Launch, error) {
	opt.tiled, _ = opt.Shape.(TiledShape)
	opt.rows, _ = opt.Shape.(RowsShape)
	opt.bank, _ = opt.Shape.(BankShape)
	if err := CheckDTypes(p); err != nil {
		return nil, err
	}
	if slices.Contains(p.OutShape, 0) || slices.Contains(p.InShape, 0) {
		return nil, nil
	}
	if opt.MaxGroupsYZ <= 0 {
		opt.MaxGroupsYZ = 65535
	}
	outer, y, x, c := canonical(problemAxes(p))
	if rollRows(outer, y, opt) {
		// Images walked row by row: Y becomes the rolling axis and the
		// tile one row (see TiledShape.ZChunk).
		outer, y = []axis{y}, axis{1, 1, 1, 0}
	}

	bank := len(p.Kernels)
	l := &Launch{Family: "direct", Name: "correlate_direct", Wide: p.Wide, CVal: p.CVal}
	kernelLen := len(p.Kernels[0].Dense)
	l.Taps = make([]float64, kernelLen*bank)
	for b, w := range p.Kernels {
		for i, v := range w.Dense {
			l.Taps[i*bank+b] = v
		}
	}
	outerTaps, planes := 1, 1
	for _, a := range outer {
		l.Outer = append(l.Outer, int32(a.in), int32(a.out), int32(a.k), int32(a.shift))
		outerTaps *= a.k
		planes *= a.out
	}
	if len(l.Outer) == 0 {
		l.Outer = []int32{0}
	}
	if outerTaps*y.k*x.k != kernelLen {
		return nil, fmt.Errorf("kernels: canonical form has %d taps, the kernel %d", outerTaps*y.k*x.k, kernelLen)
	}
	l.LocalBytes = (TileY + y.k - 1) * (TileX + (x.k-1)*c) * AccBytes(p)
	tiled := l.LocalBytes <= opt.MaxLocalBytes
	if !tiled {
		l.LocalBytes = 0
	}
	groupsY := (y.out + TileY - 1) / TileY
	if groupsY > opt.MaxGroupsYZ {
		return nil, &nd.UnsupportedError{What: "axis length", Value: fmt.Sprint(y.out), Supported: fmt.Sprintf("at most %d rows in one launch", opt.MaxGroupsYZ*TileY)}
	}
	l.Local = [3]int{TileX, TileY, 1}
	l.Groups = [3]int{(x.out*c + TileX - 1) / TileX, groupsY, min(planes, opt.MaxGroupsYZ)}
	l.Scalars = []int64{int64(y.in), int64(x.in), int64(y.out), int64(x.out), int64(planes)}
	// Where no output reads outside the input (valid mode), the border
	// rule only fills the staged halos of edge tiles beyond the output:
	// the constant border's compare does that cheapest (S000's valid
	// bank of 8, tiled.cl: 3.96 ms under reflect, 2.58 under constant;
	// H100, session 36).
	inside := p.ReadsInside()
	border := p.Border
	if inside {
		border = nd.Constant
	}
	l.Defines = append(typeDefines(p),
		fmt.Sprintf("BORDER=%d", border),
		fmt.Sprintf("BANK=%d", bank),
		fmt.Sprintf("KY=%d", y.k), fmt.Sprintf("KX=%d", x.k),
		fmt.Sprintf("SHIFT_Y=%d", y.shift), fmt.Sprintf("SHIFT_X=%d", x.shift),
		fmt.Sprintf("C=%d", c),
		fmt.Sprintf("NOUTER=%d", len(outer)),
		fmt.Sprintf("OUTER_TAPS=%d", outerTaps),
		fmt.Sprintf("TILE_X=%d", TileX), fmt.Sprintf("TILE_Y=%d", TileY),
		fmt.Sprintf("TILED=%d", b2i(tiled)),
	)
	slices.Sort(l.Defines)
	rows, bankShape := opt.rows, opt.bank
	if rows == (RowsShape{}) && bankShape == (BankShape{}) && opt.tiled == (TiledShape{}) {
		rows = defaultRowsShape(p, outerTaps, y, x, c)
		bankShape = defaultBankShape(p, outerTaps)
	}
	a := directArgs{p: p, opt: opt, outer: outer, y: y, x: x, c: c, outerTaps: outerTaps, inside: inside, base: l}
	if !opt.Untiled && bankShape != (BankShape{}) {
		if b := newBank(a, bankShape); b != nil {
			return b, nil
		}
	}
	if !opt.Untiled && rows != (RowsShape{}) {
		if r := newRows(a, rows); r != nil {
			return r, nil
		}
	}
	if !opt.Untiled {
		if t := newTiled(a); t != nil {
			return t, nil
		}
	}
	return l, nil
}

// directArgs are what the builders of the direct method's faster families
// (newTiled, newRows) take besides their decomposition: the problem and
// options, its canonical form (outer axes, Y, X, and C samples merged
// into X's elements; outerTaps, the outer axes' taps), whether every
// output reads inside the input (inside: nd.Problem.ReadsInside), and
// direct.cl's launch of it (base), which they specialise.
type directArgs struct {
	p         *nd.Problem
	opt       DirectOptions
	outer     []axis
	y, x      axis
	c         int
	outerTaps int
	inside    bool
	base      *Launch
}

// problemAxes are p's axes as canonical takes them.
func problemAxes(p *nd.Problem) []axis {
	axes := make([]axis, len(p.InShape))
	for d := range axes {
		axes[d] = axis{p.InShape[d], p.OutShape[d], p.KShape[d], p.Shift[d]}
	}
	return axes
}

// outerTapCount is the kernel's taps along the outer axes of a canonical
// form: a plane of KY × KX taps for each.
func outerTapCount(outer []axis) int {
	n := 1
	for _, a := range outer {
		n *= a.k
	}
	return n
}

// canonical folds the problem's axes into the kernel's form: outer axes
// (adjacent axes the kernel does not span merged), Y, X, and C, the
// samples after X that the kernel does not span, merged into X's elements.
func canonical(axes []axis) (outer []axis, y, x axis, c int) {
	last := len(axes) - 1
	for last > 0 && axes[last].k == 1 {
		last--
	}
	trailing := 1
	for _, a := range axes[last+1:] {
		trailing *= a.in
	}
	rest := axes[:last]
	x, c = axes[last], trailing
	if trailing > maxMergedChannels {
		// Many samples per position (the kernel spans only leading axes):
		// those samples are the tile's fastest axis, the last kernel axis
		// its rows.
		x, c = axis{trailing, trailing, 1, 0}, 1
		rest = axes[:last+1]
	}
	y = axis{1, 1, 1, 0}
	if len(rest) > 0 {
		y, rest = rest[len(rest)-1], rest[:len(rest)-1]
	}
	for _, a := range rest {
		if n := len(outer); n > 0 && a.k == 1 && outer[n-1].k == 1 {
			outer[n-1].in *= a.in
			outer[n-1].out *= a.out
			continue
		}
		outer = append(outer, a)
	}
	return outer, y, x, c
}
