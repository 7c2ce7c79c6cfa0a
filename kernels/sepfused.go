package kernels

import (
	"fmt"
	"math"
	"slices"

	"github.com/ndconv/ndconv/nd"
)

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

// minFusedOutputs: smaller problems run their passes unfused where
// septile.cl's tiles do not take them (sepTileMaxOutputs), which spreads
// them over more work-items than sepfused.cl's strips (S003's 640×480 ran
// nearly twice as fast in passes on the H100). SeparableOptions.FuseSmall
// lifts it (the tests' small problems run the fused kernels so).
const minFusedOutputs = 1 << 20

// targetGroups is about how many work-groups keep a large GPU busy (132
// multiprocessors × 8); smaller problems get narrower, shorter strips.
const targetGroups = 1056

// newSepFused specialises sepfused.cl (sepring.cl for a Ring shape) for
// a's X and Y passes, in a.opt.fused's decomposition (zero: one chosen
// from the problem's size).
func newSepFused(a stepArgs) *Launch {
	q, in, x, fx, fy := a.q, a.in, a.x, a.fx, a.fy
	y := x - 1
	c := product(in[x+1:])
	planes := product(in[:y])
	my, mx := q.OutShape[y], q.OutShape[x]
	kx, ky := len(fx), len(fy)
	sh := a.opt.fused
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
	l := fusedLaunch(a, family, width, shape)
	l.Local = [3]int{sh.TX, 1, 1}
	l.Groups = [3]int{ceilDiv(mx*c, width), ceilDiv(my, sh.SEG), min(planes, 65535)}
	l.LocalBytes = localBytes
	l.Shape = sh
	return l
}

// fusedLaunch is what the launches of the fused X and Y passes share
// (sepfused.cl, sepring.cl, septile.cl: one argument list): the taps (the
// X factor's, the Y factor's, then cval times the X factor's sum), the
// scalars and the defines, with the family's own (shape), for a's X and
// Y passes in work-groups width elements wide. The caller sets the work
// sizes, local memory and decomposition.
func fusedLaunch(a stepArgs, family string, width int, shape []string) *Launch {
	q, in, x, fx, fy, cval, stride := a.q, a.in, a.x, a.fx, a.fy, a.cval, a.stride
	y := x - 1
	c := product(in[x+1:])
	kx, ky := len(fx), len(fy)
	taps := slices.Concat(fx, fy, []float64{cval * sum(fx)})
	l := &Launch{Family: family, Name: "correlate_" + family, Wide: q.Wide, CVal: cval,
		Taps: taps, Outer: []int32{0},
		Scalars: []int64{int64(in[y]), int64(in[x]), int64(q.OutShape[y]), int64(q.OutShape[x]), int64(product(in[:y])),
			int64(stride), int64(a.offset)},
	}
	maxIndex := max(int64(product(in)), int64(product(q.OutShape))*int64(stride)) + int64(width+kx*c)*int64(stride)
	l.Defines = append(typeDefines(q),
		fmt.Sprintf("BORDER=%d", q.Border),
		fmt.Sprintf("KX=%d", kx), fmt.Sprintf("KY=%d", ky),
		fmt.Sprintf("SHIFT_X=%d", a.shiftX), fmt.Sprintf("SHIFT_Y=%d", a.shiftY),
		fmt.Sprintf("C=%d", c),
		fmt.Sprintf("IDX32=%d", b2i(maxIndex < math.MaxInt32)),
		fmt.Sprintf("TAPS_N=%d", len(taps)))
	l.Defines = append(l.Defines, shape...)
	l.Defines = append(l.Defines, nonzeroDefines(taps[:kx+ky])...)
	l.Defines = append(l.Defines, l.tapsInParams(a.opt.MaxParamBytes, AccBytes(q)))
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

// sepFusedCandidates are sepfused.cl's and sepring.cl's decompositions the
// tuner measures for p, whose first two passes fuse.
func sepFusedCandidates(p *nd.Problem) []Tuning {
	var out []Tuning
	ky := p.KShape[separablePasses(p)[1]]
	for _, tx := range []int{32, 64, 128} {
		for _, rx := range []int{1, 2, 4} {
			for _, rows := range []int{32, 64, 128, 256} {
				out = append(out, Tuning{Shape: SepFusedShape{TX: tx, RX: rx, SEG: wholeRounds(rows, ky)}})
			}
		}
	}
	// sepring.cl: strips of TX columns, X-pass pieces of RX dividing TX.
	if ky <= sepRingMaxTaps && !p.Wide {
		for _, tx := range []int{64, 128, 256} {
			for _, rx := range []int{4, 8, 16} {
				for _, rows := range []int{64, 128, 256, 512} {
					for _, pre := range []bool{false, true} {
						out = append(out, Tuning{Shape: SepFusedShape{TX: tx, RX: rx, SEG: wholeRounds(rows, ky), Ring: true, Prefetch: pre}})
					}
				}
			}
		}
	}
	return out
}
