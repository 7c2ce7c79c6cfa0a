package kerneltest

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// A check lists, for one problem, the decompositions a test runs it in;
// image reports an image (whose rows tiled.cl and rows.cl walk), of which
// tests may run a sample.
type check = func(p *nd.Problem) (checks []kernels.Tuning, image bool)

var (
	_ check = RollingChecks
	_ check = WindowChecks
	_ check = BankGroupChecks
	_ check = BankChecks
	_ check = SepRingChecks
	_ check = Sep3Checks
	_ check = SepTileChecks
)

// maxLocal is the local memory the probes allow: enough that no tile is
// shrunk to fit, so that a shape is honoured or refused for what it is.
const maxLocal = 1 << 30

// canon is what the tests need of NewDirect's canonical form of p (outer
// axes, Y, X and C merged into X's elements), read from direct.cl's launch:
// its outer axes' (in, out, k, shift) ints, Y's output rows and taps, and
// C.
type canon struct {
	outer    []int32 // 4 ints per outer axis
	yOut, yK int
	c, bank  int
	valid    bool
}

func canonical(p *nd.Problem) canon {
	l, err := kernels.NewDirect(gpuTyped(p), kernels.DirectOptions{MaxLocalBytes: maxLocal, Untiled: true})
	if err != nil || l == nil {
		return canon{} // an empty output: nothing to launch
	}
	g := canon{yOut: int(l.Scalars[2]), yK: define(l, "KY"), c: define(l, "C"), bank: len(p.Kernels), valid: true}
	if define(l, "NOUTER") > 0 {
		g.outer = l.Outer
	}
	return g
}

// rollable reports a single outer axis that the kernel spans (tiled.cl's
// correlate_rolling walks it); image, no outer axes and a kernel spanning
// more than one output row (walked row by row).
func (g canon) rollable() bool { return len(g.outer) == 4 && g.outer[2] > 1 }
func (g canon) image() bool    { return g.valid && len(g.outer) == 0 && g.yK > 1 && g.yOut > 1 }

// gpuTyped is p with float16 read and written as float32: the
// decompositions do not depend on the element types, and the tests list
// them for float16 problems too (which the GPUs do not run).
func gpuTyped(p *nd.Problem) *nd.Problem {
	q := *p
	if q.In == nd.Float16 {
		q.In = nd.Float32
	}
	if q.Out == nd.Float16 {
		q.Out = nd.Float32
	}
	return &q
}

// define is the integer value of a launch's define name ("KY").
func define(l *kernels.Launch, name string) int {
	for _, d := range l.Defines {
		if v, ok := strings.CutPrefix(d, name+"="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// tiledHonours reports whether NewDirect builds p with tiled.cl in exactly
// shape s: a rolling shape (ZChunk > 0) only where its accumulators fit.
func tiledHonours(p *nd.Problem, s kernels.TiledShape) bool {
	l, err := kernels.NewDirect(gpuTyped(p), kernels.DirectOptions{MaxLocalBytes: maxLocal, Shape: s})
	return err == nil && l != nil && l.Family == "tiled" && l.Shape == s
}

// rowsServes reports whether rows.cl serves p in shape s.
func rowsServes(p *nd.Problem, s kernels.RowsShape) bool {
	l, err := kernels.NewDirect(gpuTyped(p), kernels.DirectOptions{MaxLocalBytes: maxLocal, Shape: s})
	return err == nil && l != nil && l.Family == "rows"
}

// RollingChecks are decompositions that make the walking kernels —
// tiled.cl's correlate_rolling and rows.cl — cross chunk boundaries on p's
// small test problems (chunks of 1, 2 and 3 planes or rows, so that each
// chunk's first K−1 feed outputs it drops); nil where p is neither a
// volume nor an image they serve. image reports an image.
func RollingChecks(p *nd.Problem) (checks []kernels.Tuning, image bool) {
	g := canonical(p)
	// A volume's rolling shape: 32 × 2 work-items (small tiles: several
	// work-groups in Y on small inputs), as many outputs each as the
	// accumulators allow, not below 2 × 1.
	var roll kernels.TiledShape
	if g.rollable() {
		for _, r := range [][2]int{{4, 4}, {4, 2}, {4, 1}, {2, 1}} {
			if s := (kernels.TiledShape{TX: 32, TY: 2, RX: r[0], RY: r[1], ZChunk: 1}); tiledHonours(p, s) {
				roll = s
				break
			}
		}
		if roll == (kernels.TiledShape{}) {
			return nil, false
		}
	}
	for z := 1; z <= 3; z++ {
		switch {
		case g.rollable():
			s := roll
			s.ZChunk = z
			if z == 2 {
				s.MinGroups = 2 // CUDA's register bound compiles and computes alike
			}
			checks = append(checks, kernels.Tuning{Shape: s})
		case g.image():
			image = true
			if s := (kernels.TiledShape{TX: 8, TY: 1, RX: 2, RY: 1, ZChunk: z}); tiledHonours(p, s) {
				checks = append(checks, kernels.Tuning{Shape: s})
			}
			// 16 outputs per work-item (4-vector loads and stores
			// four times a row) in chunks of 2 rows; L2 prefetches 1
			// and 2 rows ahead.
			rx := 4
			if z == 2 {
				rx = 16
			}
			if s := (kernels.RowsShape{TX: 8, RX: rx, Chunk: z, L2Ahead: z - 1}); rowsServes(p, s) {
				checks = append(checks, kernels.Tuning{Shape: s})
			}
		}
	}
	return checks, image
}

// WindowChecks are tiled.cl decompositions that slide the window (Window)
// for the backends' tests: re-staged, and rolling over 2 planes or rows,
// with 3 outputs per work-item (a ring whose slots do not divide the
// taps' steps) or 4 where channels need more; nil where tiled.cl does not
// serve p (the first alone where its output is empty). image reports an
// image.
func WindowChecks(p *nd.Problem) (checks []kernels.Tuning, image bool) {
	g := canonical(p)
	bank := len(p.Kernels)
	rx := max(3, g.c)
	s := kernels.TiledShape{TX: 8, TY: 2, RX: rx, RY: 2, Window: true}
	if rx*2*bank > 32 {
		return nil, false
	}
	checks = append(checks, kernels.Tuning{Shape: s})
	switch {
	case g.rollable():
		s.ZChunk = 2
		if tiledHonours(p, s) {
			checks = append(checks, kernels.Tuning{Shape: s})
		}
	case g.image():
		image = true
		s.TY, s.RY, s.ZChunk = 1, 1, 2
		if tiledHonours(p, s) {
			checks = append(checks, kernels.Tuning{Shape: s})
		}
	}
	return checks, image
}

// BankGroupChecks are tiled.cl decompositions splitting p's bank into
// groups (TiledShape.BankGroup) of every size that divides it, for the
// backends' tests; nil for single kernels. image is false: every such
// case runs.
func BankGroupChecks(p *nd.Problem) (checks []kernels.Tuning, image bool) {
	bank := len(p.Kernels)
	for g := 1; g < bank; g++ {
		if bank%g == 0 {
			checks = append(checks, kernels.Tuning{Shape: kernels.TiledShape{TX: 8, TY: 2, RX: 2, RY: 2, BankGroup: g}})
		}
	}
	return checks, false
}

// LocalWeightsChecks are tiled.cl decompositions of p's bank with its
// weights in local memory (TiledShape.LocalWeights): the untuned one where
// it is so, the whole bank and every group of a multiple of 4 kernels
// dividing it, 2×2 and 4×1 outputs per work-item (two tap-weight reads per
// row of taps, one); nil where none serves p (single kernels, banks not a
// multiple of 4, float64 accumulators). image is false: every such case
// runs.
func LocalWeightsChecks(p *nd.Problem) (checks []kernels.Tuning, image bool) {
	bank := len(p.Kernels)
	if l, err := kernels.NewDirect(gpuTyped(p), kernels.DirectOptions{MaxLocalBytes: maxLocal}); err == nil && l != nil && slices.Contains(l.Defines, "LOCAL_WEIGHTS=1") {
		checks = append(checks, kernels.Tuning{})
	}
	for g := 4; g <= bank; g += 4 {
		if bank%g != 0 {
			continue
		}
		for _, r := range [][2]int{{2, 2}, {4, 1}} {
			s := kernels.TiledShape{TX: 8, TY: 2, RX: r[0], RY: r[1], BankGroup: g, LocalWeights: true}
			if g == bank {
				s.BankGroup = 0
			}
			l, err := kernels.NewDirect(gpuTyped(p), kernels.DirectOptions{MaxLocalBytes: maxLocal, Shape: s})
			if err == nil && l != nil && l.Family == "tiled" && slices.Contains(l.Defines, "LOCAL_WEIGHTS=1") {
				checks = append(checks, kernels.Tuning{Shape: s})
			}
		}
	}
	return checks, false
}

// BankChecks are bank.cl decompositions for the backends' tests of p's
// bank: every kernel in its own lane, and two kernels per lane where the
// bank is even; tiles of 8 × 5 and 16 × 3 (several tiles, and rows that
// the window's KY-step walk leaves over, on small inputs); nil for single
// kernels and where bank.cl does not serve p. image is false: every such
// case runs.
func BankChecks(p *nd.Problem) (checks []kernels.Tuning, image bool) {
	bank := len(p.Kernels)
	lanes := []int{bank}
	if bank%2 == 0 {
		lanes = append(lanes, bank/2)
	}
	for _, kl := range lanes {
		cols := (32 + kl - 1) / kl
		for _, tile := range [][2]int{{8, 5}, {16, 3}} {
			s := kernels.BankShape{Lanes: kl, Cols: cols, TileX: tile[0], TileY: tile[1]}
			l, err := kernels.NewDirect(gpuTyped(p), kernels.DirectOptions{MaxLocalBytes: maxLocal, Shape: s})
			if err == nil && l != nil && l.Family == "bank" {
				checks = append(checks, kernels.Tuning{Shape: s})
			}
		}
	}
	return checks, false
}

// passes are the axes the separable method filters along, in its order:
// the axes the kernel spans, last first (kernels.NewSeparable's order).
func passes(p *nd.Problem) []int {
	var out []int
	for d := len(p.KShape) - 1; d >= 0; d-- {
		if p.KShape[d] > 1 {
			out = append(out, d)
		}
	}
	return out
}

// fused reports whether p's first two passes run along adjacent axes (the
// fused X and Y passes of sepfused.cl, sepring.cl and septile.cl).
func fused(p *nd.Problem) bool {
	ps := passes(p)
	return p.Separable() && len(ps) >= 2 && ps[1] == ps[0]-1
}

// sepRingMaxTaps is the longest Y factor sepring.cl serves (the tuner's
// candidates stop there too).
const sepRingMaxTaps = 32

// SepRingChecks are sepring.cl decompositions for the backends' tests of
// p's separable method where its passes fuse: strips of 8 and 16 columns
// (so that small images have several, and X-pass pieces that do and do not
// fill the work-items) of one, three and four rounds, the last prefetching;
// nil elsewhere. image is false: every such case runs.
func SepRingChecks(p *nd.Problem) (checks []kernels.Tuning, image bool) {
	if p.Wide || !fused(p) {
		return nil, false
	}
	ky := p.KShape[passes(p)[1]]
	if ky > sepRingMaxTaps {
		return nil, false
	}
	for _, s := range []kernels.SepFusedShape{{TX: 8, RX: 4, SEG: 1}, {TX: 16, RX: 2, SEG: 2*ky + 1}, {TX: 8, RX: 2, SEG: 3*ky + 1, Prefetch: true}} {
		s.Ring = true
		checks = append(checks, kernels.Tuning{Shape: s})
	}
	return checks, false
}

// sepLocal is the local memory the separable checks' shapes must fit (the
// tuner's bound).
const sepLocal = 48 << 10

// Sep3Checks are sep3.cl decompositions for the backends' tests of p's
// separable method where its passes are Z, Y, X on adjacent axes: tiles
// narrower and shorter than the tests' small volumes (several work-groups
// each way, partial tiles, X pieces that do and do not fill the
// work-items), segments of one plane, of three and of a few ring rounds,
// and the zero Tuning: NewSeparable's own choice, which sep3.cl serves on
// the tests' small volumes once they fuse small problems; nil elsewhere.
// image is false: every such case runs.
func Sep3Checks(p *nd.Problem) (checks []kernels.Tuning, image bool) {
	ps := passes(p)
	if !p.Separable() || len(ps) != 3 || ps[1] != ps[0]-1 || ps[2] != ps[0]-2 {
		return nil, false
	}
	kz := p.KShape[ps[2]]
	for _, s := range []kernels.Sep3Shape{
		{TX: 8, TY: 2, RX: 4, RY: 1, SEG: 1},
		{TX: 16, TY: 2, RX: 2, RY: 3, SEG: 3},
		{TX: 8, TY: 4, RX: 8, RY: 2, SEG: 2*kz + 1},
	} {
		sep, err := kernels.NewSeparable(gpuTyped(p), kernels.SeparableOptions{MaxLocalBytes: sepLocal, Shape: s})
		if err == nil && sep != nil && sep.Steps[0].Launch.Shape == s {
			checks = append(checks, kernels.Tuning{Shape: s})
		}
	}
	return append(checks, kernels.Tuning{}), false
}

// SepTileChecks are septile.cl decompositions for the backends' tests of
// p's separable method where its first two passes fuse: tiles narrower and
// shorter than the tests' small images (several work-groups each way,
// partial tiles, X pieces that do and do not fill the work-items, one and
// several rows per work-item), and the zero Tuning: NewSeparable's own
// choice, septile.cl's default on the tests' small images; nil elsewhere.
// image is false: every such case runs.
func SepTileChecks(p *nd.Problem) (checks []kernels.Tuning, image bool) {
	if !fused(p) {
		return nil, false
	}
	for _, s := range []kernels.SepTileShape{
		{TX: 8, TY: 2, RX: 4, RY: 1},
		{TX: 16, TY: 2, RX: 2, RY: 3},
		{TX: 8, TY: 4, RX: 8, RY: 2},
	} {
		sep, err := kernels.NewSeparable(gpuTyped(p), kernels.SeparableOptions{MaxLocalBytes: sepLocal, Shape: s})
		if err == nil && sep != nil && sep.Steps[0].Launch.Shape == s {
			checks = append(checks, kernels.Tuning{Shape: s})
		}
	}
	return append(checks, kernels.Tuning{}), false
}
