package kernels

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

// TiledShape is the work decomposition of tiled.cl: a work-group of TX × TY
// work-items, each computing RY rows of RX consecutive output elements for
// every kernel of the bank. The tuner may choose it; NewDirect picks one by
// default (DefaultTiledShape).
type TiledShape struct {
	TX, TY, RX, RY int
}

func (s TiledShape) String() string {
	return fmt.Sprintf("%dx%d threads, %dx%d outputs each", s.TX, s.TY, s.RX, s.RY)
}

// unrollBudget bounds the fused multiply-adds one walk over a work-item's
// input rows may unroll into (the walk is a loop beyond it, whose weights
// are then indexed at run time): enough for 2-D kernels up to 15×15 with
// 4×4 outputs per work-item. Larger budgets compile slowly (NVRTC took
// seconds for 31×31 unrolled) for little gain; FFT serves those sizes.
const unrollBudget = 8192

// unrollOuterBudget bounds the same for unrolling the outer taps too.
// Measured on the H100, unrolling made 3-D slower every time (S000's 343
// taps 0.445 → 0.593 ms, 512³ 3³ 1.00 → 1.22 ms), so it is off; the define
// stays for the tuner.
const unrollOuterBudget = 0

// DefaultTiledShape is the decomposition NewDirect uses for a canonical
// problem when the tuning cache has none: wide work-groups of 32 along X
// (coalesced rows, conflict-free skewed reads), several outputs per
// work-item so that each loaded value feeds many fused multiply-adds, fewer
// when the bank already gives each value many uses.
func DefaultTiledShape(y, x axis, c, bank int, wide bool) TiledShape {
	switch {
	case y.out == 1 && y.k == 1: // 1-D: one long row per work-group
		rx := 8
		if x.k*c > 16 {
			rx = 16
		}
		return TiledShape{TX: 128, TY: 1, RX: rx, RY: 1}
	case bank >= 8:
		return TiledShape{TX: 32, TY: 4, RX: 4, RY: 1}
	case bank >= 2:
		return TiledShape{TX: 32, TY: 4, RX: 4, RY: 2}
	case wide:
		return TiledShape{TX: 32, TY: 8, RX: 2, RY: 2}
	}
	return TiledShape{TX: 32, TY: 8, RX: 4, RY: 4}
}

// tiledLocalBytes is the local memory tiled.cl declares for shape s.
func tiledLocalBytes(s TiledShape, y, x axis, c, accSize int) int {
	rowElems := s.TX*s.RX + (x.k-1)*c
	pitch := rowElems + rowElems/s.RX + 1
	return (s.TY*s.RY + y.k - 1) * pitch * accSize
}

// newTiled specialises tiled.cl; it returns nil when the tile does not fit
// the local memory the options allow (direct.cl then serves).
func newTiled(p *nd.Problem, opt DirectOptions, y, x axis, c int, l *Launch) *Launch {
	bank := len(p.Kernels)
	accSize := accBytes(p)
	s := opt.Tiled
	if s == (TiledShape{}) {
		s = DefaultTiledShape(y, x, c, bank, p.Wide)
	}
	local := tiledLocalBytes(s, y, x, c, accSize)
	for local > opt.MaxLocalBytes && s.RY > 1 {
		s.RY /= 2
		local = tiledLocalBytes(s, y, x, c, accSize)
	}
	for local > opt.MaxLocalBytes && s.TY > 1 {
		s.TY /= 2
		local = tiledLocalBytes(s, y, x, c, accSize)
	}
	if local > opt.MaxLocalBytes {
		return nil
	}
	tileX, tileY := s.TX*s.RX, s.TY*s.RY
	groupsY := (y.out + tileY - 1) / tileY
	if groupsY > opt.MaxGroupsYZ {
		return nil
	}
	t := *l
	t.Family, t.Name = "tiled", "correlate_tiled"
	t.LocalBytes = local
	t.Local = [3]int{s.TX, s.TY, 1}
	t.Groups = [3]int{(x.out*c + tileX - 1) / tileX, groupsY, l.Groups[2]}
	t.Shape = s

	outRow := x.out * c
	// Every index fits an int: the input and output element counts, and
	// the last tile's overhang.
	maxIndex := max(int64(product(p.InShape)), int64(product(p.OutShape))*int64(bank)) +
		int64(tileY+y.k)*int64(outRow+tileX+(x.k-1)*c)*int64(bank)
	idx32 := maxIndex < math.MaxInt32

	defs := slices.DeleteFunc(slices.Clone(l.Defines), func(d string) bool {
		return strings.HasPrefix(d, "TILE_X=") || strings.HasPrefix(d, "TILE_Y=") || strings.HasPrefix(d, "TILED=")
	})
	rowsFMA := (s.RY + y.k - 1) * x.k * s.RX * s.RY * bank
	outerTaps := len(l.Taps) / (y.k * x.k * bank)
	defs = append(defs,
		fmt.Sprintf("TX=%d", s.TX), fmt.Sprintf("TY=%d", s.TY),
		fmt.Sprintf("RX=%d", s.RX), fmt.Sprintf("RY=%d", s.RY),
		fmt.Sprintf("IDX32=%d", b2i(idx32)),
		fmt.Sprintf("UNROLL_ROWS=%d", b2i(rowsFMA <= unrollBudget)),
		fmt.Sprintf("UNROLL_OUTER=%d", b2i(outerTaps > 1 && outerTaps*rowsFMA <= unrollOuterBudget)),
		fmt.Sprintf("TAPS_N=%d", len(l.Taps)))
	defs = append(defs, nonzeroDefines(l.Taps)...)
	defs = append(defs, t.tapsInParams(opt.MaxParamBytes, accSize))
	if vec, ok := vector4(p.In); ok && (x.in*c)%4 == 0 {
		defs = append(defs, "VECTOR_LOADS=1", "IN_T4="+vec)
	} else {
		defs = append(defs, "VECTOR_LOADS=0")
	}
	if vec, ok := vector4(p.Out); ok && (s.RX*bank)%4 == 0 && (outRow*bank)%4 == 0 {
		defs = append(defs, "VECTOR_STORES=1", "OUT_T4="+vec)
	} else {
		defs = append(defs, "VECTOR_STORES=0")
	}
	slices.Sort(defs)
	t.Defines = defs
	return &t
}

// tapsInParams decides whether the launch's weights go by value among its
// parameters (TapsInParams): where the backend takes that many bytes there
// (maxBytes, 0 for none). It returns the define that tells the kernel.
func (l *Launch) tapsInParams(maxBytes, accSize int) string {
	l.TapsInParams = maxBytes > 0 && len(l.Taps)*accSize <= maxBytes
	return fmt.Sprintf("TAPS_IN_PARAMS=%d", b2i(l.TapsInParams))
}

// accBytes is the size of the problem's accumulator type.
func accBytes(p *nd.Problem) int {
	if p.Wide {
		return 8
	}
	return 4
}

// nonzeroDefines tell tiled.cl which weights are nonzero when that is
// cheap to specialise on: ALL_NONZERO=1 for a dense kernel (the usual
// case), a bitmap NZ0…NZ3 for up to 256 weights with zeros among them, and
// nothing otherwise (the kernel then tests each weight as it runs).
func nonzeroDefines(taps []float64) []string {
	zeros := 0
	for _, w := range taps {
		if w == 0 {
			zeros++
		}
	}
	if zeros == 0 {
		return []string{"ALL_NONZERO=1"}
	}
	if len(taps) > 256 {
		return []string{"ALL_NONZERO=0"}
	}
	var words [4]uint64
	for i, w := range taps {
		if w != 0 {
			words[i/64] |= 1 << (i % 64)
		}
	}
	defs := []string{"ALL_NONZERO=0"}
	for i, w := range words {
		defs = append(defs, fmt.Sprintf("NZ%d=0x%xUL", i, w))
	}
	return defs
}

// vector4 is the 4-vector type of a dtype loaded or stored 4 at a time.
func vector4(d nd.DType) (string, bool) {
	switch d {
	case nd.Uint8, nd.Uint16, nd.Int16, nd.Int32, nd.Float32:
		return typeName(d) + "4", true
	}
	return "", false
}

// TuningCandidates are the work decompositions `ndconv tune` measures for
// p: tiled.cl's for the direct method, sepfused.cl's for the separable one
// (none where the passes do not fuse). Every candidate computes the same
// bits; they differ only in how the work is spread.
func TuningCandidates(p *nd.Problem, separable bool) []Tuning {
	var out []Tuning
	if separable {
		passes := separablePasses(p)
		if !fusable(passes) {
			return nil
		}
		ky := p.KShape[passes[1]]
		for _, tx := range []int{32, 64, 128} {
			for _, rx := range []int{1, 2, 4} {
				for _, rows := range []int{32, 64, 128, 256} {
					out = append(out, Tuning{Fused: SepFusedShape{TX: tx, RX: rx, SEG: wholeRounds(rows, ky)}})
				}
			}
		}
		return out
	}
	_, y, _, _ := canonical(problemAxes(p))
	bank := len(p.Kernels)
	regs := 64
	if p.Wide {
		regs = 32
	}
	if y.out == 1 && y.k == 1 {
		for _, tx := range []int{64, 128, 256} {
			for _, rx := range []int{4, 8, 16} {
				if rx*bank <= regs {
					out = append(out, Tuning{Tiled: TiledShape{TX: tx, TY: 1, RX: rx, RY: 1}})
				}
			}
		}
		return out
	}
	for _, ty := range []int{4, 8, 16} {
		for _, rx := range []int{2, 4, 8} {
			for _, ry := range []int{1, 2, 4, 8} {
				if rx*ry*bank <= regs && ty*ry <= 64 {
					out = append(out, Tuning{Tiled: TiledShape{TX: 32, TY: ty, RX: rx, RY: ry}})
				}
			}
		}
	}
	return out
}
