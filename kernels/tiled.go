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
//
// ZChunk concerns volumes (one outer axis that the kernel spans, Z):
// positive, correlate_rolling walks chunks of ZChunk output planes, each
// input plane staged once for the KZ outputs that read it; negative,
// correlate_tiled re-stages each plane per outer tap; zero lets NewDirect
// choose (rolling wherever its accumulators fit, see rollAccBudget). For
// images (no outer axis) a positive ZChunk with TY = RY = 1 makes the rows
// the rolling axis: work-groups of one row of TX·RX outputs walk down
// chunks of ZChunk rows, each input row staged once for the KY output rows
// that read it.
type TiledShape struct {
	TX, TY, RX, RY int
	ZChunk         int `json:",omitzero"`
	// MinGroups asks CUDA to keep each work-item's registers few enough
	// for this many work-groups per multiprocessor (__launch_bounds__);
	// 0 leaves it to the compiler. OpenCL has no such hint.
	MinGroups int `json:",omitzero"`
	// Window makes each work-item slide a window of RX values along the
	// input rows (one local read per value) even where its rows would fit
	// registers whole; kernels too large for that always slide it.
	Window bool `json:",omitzero"`
	// BankGroup splits a bank into groups of this many kernels, each
	// work-group computing one group (0, or a size that does not divide
	// the bank into several groups: the whole bank): fewer accumulators
	// per work-item, each input tile staged once per group. Volumes so
	// split re-stage each plane per outer tap (no rolling).
	BankGroup int `json:",omitzero"`
	// LocalWeights stages the bank (group)'s weights in local memory,
	// each work-item reading a tap's weights as 4-vectors (float
	// accumulators, a group of a multiple of 4 kernels, not rolling):
	// one read per 4 weights, where reads by a run-time index (outer
	// taps in a loop) take one per weight.
	LocalWeights bool `json:",omitzero"`
}

func (s TiledShape) String() string {
	d := fmt.Sprintf("%dx%d threads, %dx%d outputs each", s.TX, s.TY, s.RX, s.RY)
	if s.ZChunk > 0 {
		d += fmt.Sprintf(", rolling over %d planes", s.ZChunk)
	}
	if s.MinGroups > 0 {
		d += fmt.Sprintf(", %d work-groups per multiprocessor", s.MinGroups)
	}
	if s.Window {
		d += ", sliding window"
	}
	if s.BankGroup > 0 {
		d += fmt.Sprintf(", banks of %d kernels", s.BankGroup)
	}
	if s.LocalWeights {
		d += ", weights in local memory"
	}
	return d
}

// bankGroup is the kernels per work-group shape s gives a bank of bank
// kernels: s.BankGroup where it splits the bank into several whole groups,
// else the whole bank.
func bankGroup(s TiledShape, bank int) int {
	if g := s.BankGroup; g > 0 && g < bank && bank%g == 0 {
		return g
	}
	return bank
}

// rollAccBudget bounds the accumulators a work-item of correlate_rolling
// holds, KZ·RY·RX·BANK (half as many of float64): beyond it they spill
// (512³ 3³ with 4×4 outputs per work-item re-staged spilled at 96
// registers; the rolling kernel adds its KZ slots to that).
const rollAccBudget = 64

// rollTargetGroups is how many work-groups a rolling launch aims for when
// it chooses ZChunk: enough to fill every multiprocessor of a large GPU
// several times over, so chunks are no shorter than that needs.
const rollTargetGroups = 1024

// rollable reports whether problems of these canonical outer axes can run
// correlate_rolling: a single outer axis that the kernel spans.
func rollable(outer []axis) bool { return len(outer) == 1 && outer[0].k > 1 }

// rollFits reports whether shape s's rolling accumulators fit the budget.
func rollFits(s TiledShape, kz, bank int, wide bool) bool {
	budget := rollAccBudget
	if wide {
		budget /= 2
	}
	return kz*s.RX*s.RY*bank <= budget
}

// rollingShape is a rolling decomposition for kz outer taps and bank
// kernels: 32×8 work-items, as many outputs each as the accumulators allow
// (ok false when not even two outputs per work-item fit).
func rollingShape(kz, bank int, wide bool) (TiledShape, bool) {
	// Not below 2×1: with one output per work-item (S000's bank of 8 at
	// 7³) rolling took 1.8 times re-staging's time.
	for _, r := range [][2]int{{4, 4}, {4, 2}, {4, 1}, {2, 1}} {
		s := TiledShape{TX: 32, TY: 8, RX: r[0], RY: r[1]}
		if rollFits(s, kz, bank, wide) {
			return s, true
		}
	}
	return TiledShape{}, false
}

// defaultRollingShape is the decomposition of a rolling launch when the
// tuning cache has none: single kernels only. Untuned on the H100,
// rolling made single-kernel volumes faster and S000's banks of 2 and 4
// slower (the tuner may still pick it for a bank; figures:
// docs/perf/gpu-kernels.md, v4).
//
// Fewer outputs per work-item than rollingShape's most: the H100's tuner
// (session 25's cache, measured against these defaults in session 31)
// chose 1×4 outputs on 32×4 work-items in chunks of 16 planes for 3³
// (0.514 against 0.802 ms on 512³) and 2×2 on 32×8 for 7³ (2.60 against
// 2.97 ms; rollChunk gives its 128-plane chunks). A 3-tap axis wastes
// little in short chunks (2 planes of 16), and more chunks are more
// work-groups for the serial walk down the planes.
func defaultRollingShape(kz, bank int, wide bool) (TiledShape, bool) {
	if bank != 1 {
		return TiledShape{}, false
	}
	s := TiledShape{TX: 32, TY: 8, RX: 2, RY: 2}
	if kz <= 3 {
		s = TiledShape{TX: 32, TY: 4, RX: 1, RY: 4, ZChunk: 16}
	}
	if rollFits(s, kz, bank, wide) {
		return s, true
	}
	return rollingShape(kz, bank, wide)
}

// rollRows reports whether an image (no outer axes, a kernel spanning
// rows) runs with its rows as the rolling axis: where the tuner asked for
// it (ZChunk > 0 with one-row work-groups).
func rollRows(outer []axis, y axis, opt DirectOptions) bool {
	s := opt.tiled
	return len(outer) == 0 && y.k > 1 && y.out > 1 && s.ZChunk > 0 && s.TY == 1 && s.RY == 1
}

// rollChunk is the default ZChunk: the whole Z extent, cut into chunks
// only as far as needed for rollTargetGroups work-groups, and never below
// 4·KZ planes (each chunk's first KZ−1 planes also feed outputs before it,
// work thrown away).
func rollChunk(zOut, kz, groupsXY int) int {
	chunks := max(1, min((rollTargetGroups+groupsXY-1)/groupsXY, zOut/(4*kz)))
	return (zOut + chunks - 1) / chunks
}

// unrollBudget bounds the fused multiply-adds one walk over a work-item's
// input rows may unroll into (the walk is a loop beyond it, whose weights
// are then indexed at run time): enough for 2-D kernels up to 15×15 with
// 4×4 outputs per work-item. Larger budgets compile slowly (NVRTC took
// seconds for 31×31 unrolled) for little gain; FFT serves those sizes.
const unrollBudget = 8192

// walkFMA is the fused multiply-adds of one work-item's walk over its
// input rows with shape s: every row's taps for every output and kernel.
func walkFMA(s TiledShape, y, x axis, bank int) int {
	return (s.RY + y.k - 1) * x.k * s.RX * s.RY * bank
}

// unrolledShape halves a default shape's rows of outputs per work-item,
// once, where that brings its walk within unrollBudget: a walk that is a
// loop indexes its weights at run time. On the H100 this made 2048²
// kernels of 22×22 to 31×31 5–30% faster (docs/perf/gpu-kernels.md,
// session 25, "Default shapes kept unrolled").
func unrolledShape(s TiledShape, y, x axis, bank int) TiledShape {
	if walkFMA(s, y, x, bank) <= unrollBudget || s.RY == 1 {
		return s
	}
	t := s
	t.RY /= 2
	if walkFMA(t, y, x, bank) <= unrollBudget {
		return t
	}
	return s
}

// unrollOuterBudget bounds the same for unrolling the outer taps too.
// On the H100 unrolling them made 3-D slower every time it was measured
// (docs/perf/gpu-kernels.md, v2), so it is off; the define stays for the
// tuner.
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
	case bank >= 16 && bank%4 == 0:
		// Groups of 8 kernels (4 where 8 does not divide the bank), 2×2
		// outputs each: 32 accumulators where the whole bank of 4×1
		// outputs held 128 (167 registers). Tuned on the H100, groups
		// of 8 beat the whole bank for S000's banks of 16 and 32, and
		// groups of 4 for 32 (docs/perf/gpu-kernels.md, "Bank groups").
		group := 8
		if bank%8 != 0 {
			group = 4
		}
		return TiledShape{TX: 32, TY: 4, RX: 2, RY: 2, BankGroup: group}
	case bank >= 8:
		// 2×2 outputs: S000's bank of 8 took 2.58 ms against 4×1's 2.82
		// (H100, session 31).
		return TiledShape{TX: 32, TY: 4, RX: 2, RY: 2}
	case bank >= 2:
		return TiledShape{TX: 32, TY: 4, RX: 4, RY: 2}
	case wide:
		return TiledShape{TX: 32, TY: 8, RX: 2, RY: 2}
	case c == 1 && y.k >= 13 && y.k < 24:
		// Tiles of 16 rows for long kernels, whose halo is most of a
		// tile of 32 (H100, 8192² float32: 15×15 0.73 ms against
		// 0.87 with 4×4 outputs on 32×8 work-items; session 31).
		return TiledShape{TX: 32, TY: 8, RX: 4, RY: 2}
	case c == 1 && y.k >= 9 && y.k < 13:
		return TiledShape{TX: 32, TY: 4, RX: 4, RY: 4} // 9×9: 0.319 against 0.362 ms
	}
	return TiledShape{TX: 32, TY: 8, RX: 4, RY: 4}
}

// localWeightsFit reports whether tiled.cl can stage the weights of shape
// s's bank groups in local memory (TiledShape.LocalWeights): float
// accumulators, read as 4-vectors, so groups of a multiple of 4 kernels,
// and no rolling (its kernel reads the constant bank).
func localWeightsFit(s TiledShape, bank int, wide bool) bool {
	return !wide && bankGroup(s, bank)%4 == 0 && s.ZChunk <= 0
}

// localWeightBytes is the local memory a group of kernels' weights take
// (TiledShape.LocalWeights): every tap's weight of each kernel.
func localWeightBytes(outerTaps int, y, x axis, group, accSize int) int {
	return outerTaps * y.k * x.k * group * accSize
}

// defaultLocalWeights is the untuned decomposition of compute-bound banks
// of large kernels spanning outer axes (volumes) where no output reads
// outside the input (valid): groups of 8 kernels (the whole bank of 8)
// with their weights in local memory, 4×1 outputs on 32×4 work-items.
// Zero elsewhere: banks not a multiple of 8, float64, kernels of fewer
// than 343 taps (7³), problems whose tiles need the border rule, weights
// beyond the local memory — where it was measured to lose or was not
// measured. H100, session 36 (A/B interleaved, the same bits): S000's
// valid banks of 8, 16 and 32 7³ kernels took 2.40, 4.82 and 9.64 ms
// against the constant-bank default's 2.58, 5.35 and 12.87; but 256³
// float32 banks of 16 5³ kernels in same mode 3.70 against 2.84
// (docs/perf/gpu-kernels.md, "Session 36").
func defaultLocalWeights(a directArgs) TiledShape {
	p, y, x := a.p, a.y, a.x
	bank := len(p.Kernels)
	if a.outerTaps == 1 || bank < 8 || bank%8 != 0 || p.Wide || a.outerTaps*y.k*x.k < 343 || !a.inside {
		return TiledShape{}
	}
	s := TiledShape{TX: 32, TY: 4, RX: 4, RY: 1, BankGroup: 8, ZChunk: -1, LocalWeights: true}
	if bank == 8 {
		s.BankGroup = 0
	}
	accSize := AccBytes(p)
	if tiledLocalBytes(s, y, x, a.c, accSize)+localWeightBytes(a.outerTaps, y, x, 8, accSize) > a.opt.MaxLocalBytes {
		return TiledShape{}
	}
	return s
}

// tiledLocalBytes is the local memory tiled.cl declares for shape s's
// input tile (LocalWeights adds the group's weights).
func tiledLocalBytes(s TiledShape, y, x axis, c, accSize int) int {
	rowElems := s.TX*s.RX + (x.k-1)*c
	pitch := rowElems + rowElems/s.RX + 1
	return (s.TY*s.RY + y.k - 1) * pitch * accSize
}

// newTiled specialises tiled.cl; it returns nil when the tile does not fit
// the local memory the options allow (direct.cl then serves).
func newTiled(a directArgs) *Launch {
	p, opt, outer, y, x, c, l := a.p, a.opt, a.outer, a.y, a.x, a.c, a.base
	bank := len(p.Kernels)
	accSize := AccBytes(p)
	s := opt.tiled
	roll := false
	// A bank split into groups re-stages each plane (no rolling), as
	// does one with its weights in local memory.
	if rollable(outer) && bankGroup(s, bank) == bank && !s.LocalWeights {
		kz := outer[0].k
		switch {
		case s == (TiledShape{}):
			s, roll = defaultRollingShape(kz, bank, p.Wide)
		case s.ZChunk >= 0:
			roll = rollFits(s, kz, bank, p.Wide)
		}
	}
	if s == (TiledShape{}) {
		// Still zero: no rolling shape was chosen above.
		s = defaultLocalWeights(a)
	}
	if s == (TiledShape{}) {
		s = DefaultTiledShape(y, x, c, bank, p.Wide)
		s = unrolledShape(s, y, x, bankGroup(s, bank))
	}
	if s.LocalWeights && !localWeightsFit(s, bank, p.Wide) {
		return nil
	}
	group := bankGroup(s, bank)
	weightBytes := 0
	if s.LocalWeights {
		weightBytes = localWeightBytes(a.outerTaps, y, x, group, accSize)
	}
	local := tiledLocalBytes(s, y, x, c, accSize) + weightBytes
	for local > opt.MaxLocalBytes && s.RY > 1 {
		s.RY /= 2
		local = tiledLocalBytes(s, y, x, c, accSize) + weightBytes
	}
	for local > opt.MaxLocalBytes && s.TY > 1 {
		s.TY /= 2
		local = tiledLocalBytes(s, y, x, c, accSize) + weightBytes
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
	kz := 1
	if roll {
		kz = outer[0].k
		if s.ZChunk <= 0 {
			s.ZChunk = rollChunk(outer[0].out, kz, t.Groups[0]*t.Groups[1])
		}
		t.Name = "correlate_rolling"
		t.Outer = append(slices.Clone(l.Outer), int32(s.ZChunk))
		t.Groups[2] = (outer[0].out + s.ZChunk - 1) / s.ZChunk
		if t.Groups[2] > opt.MaxGroupsYZ {
			return nil
		}
	} else {
		s.ZChunk = min(s.ZChunk, 0)
	}
	if group < bank {
		s.BankGroup = group
		t.Groups[2] = min(l.Groups[2]*(bank/group), opt.MaxGroupsYZ)
		t.Taps = groupTaps(l.Taps, bank, group)
	} else {
		s.BankGroup = 0
	}
	t.Shape = s

	outRow := x.out * c
	// Every index fits an int: the input and output element counts, and
	// the last tile's overhang.
	maxIndex := max(int64(product(p.InShape)), int64(product(p.OutShape))*int64(bank)) +
		int64(tileY+y.k)*int64(outRow+tileX+(x.k-1)*c)*int64(bank)
	idx32 := maxIndex < math.MaxInt32

	defs := slices.DeleteFunc(slices.Clone(l.Defines), func(d string) bool {
		return strings.HasPrefix(d, "TILE_X=") || strings.HasPrefix(d, "TILE_Y=") || strings.HasPrefix(d, "TILED=") ||
			strings.HasPrefix(d, "BANK=")
	})
	defs = append(defs, fmt.Sprintf("BANK=%d", group))
	stores := (s.RX*bank)%4 == 0 && (outRow*bank)%4 == 0
	if group < bank {
		defs = append(defs, fmt.Sprintf("OUT_BANK=%d", bank))
		stores = group%4 == 0 && bank%4 == 0
	}
	rowsFMA := walkFMA(s, y, x, group)
	unrollRows := rowsFMA*kz <= unrollBudget
	defs = append(defs,
		fmt.Sprintf("TX=%d", s.TX), fmt.Sprintf("TY=%d", s.TY),
		fmt.Sprintf("RX=%d", s.RX), fmt.Sprintf("RY=%d", s.RY),
		fmt.Sprintf("IDX32=%d", b2i(idx32)),
		fmt.Sprintf("UNROLL_ROWS=%d", b2i(unrollRows)),
		fmt.Sprintf("WINDOW_X=%d", b2i((s.Window || !unrollRows) && c <= s.RX)),
		fmt.Sprintf("ROLL_Z=%d", b2i(roll)), fmt.Sprintf("KZ=%d", kz),
		fmt.Sprintf("UNROLL_OUTER=%d", b2i(a.outerTaps > 1 && a.outerTaps*rowsFMA <= unrollOuterBudget)),
		fmt.Sprintf("TAPS_N=%d", len(l.Taps)))
	if !roll && a.inside && y.out >= tileY && outRow >= tileX {
		// correlate_tiled moves the last tiles back inside (valid
		// problems: no tile then needs the border rule).
		defs = append(defs, "TILES_INSIDE=1")
	}
	paramBytes := opt.MaxParamBytes
	if s.LocalWeights {
		// Staged from a buffer once per work-group and group.
		defs = append(defs, "LOCAL_WEIGHTS=1")
		paramBytes = 0
	}
	if s.MinGroups > 0 {
		defs = append(defs, fmt.Sprintf("MIN_GROUPS=%d", s.MinGroups))
	}
	defs = append(defs, nonzeroDefines(t.Taps)...)
	defs = append(defs, t.tapsInParams(paramBytes, accSize))
	defs = append(defs, vectorDefines(p, (x.in*c)%4 == 0, stores)...)
	slices.Sort(defs)
	t.Defines = defs
	return &t
}

// groupTaps reorders a bank's weights, tap-major (tap i's bank weights
// together), group by group: group g's taps, each with its group kernels'
// weights — the order tiled.cl's bank groups read them in.
func groupTaps(taps []float64, bank, group int) []float64 {
	out := make([]float64, 0, len(taps))
	n := len(taps) / bank
	for g := 0; g < bank; g += group {
		for i := range n {
			out = append(out, taps[i*bank+g:i*bank+g+group]...)
		}
	}
	return out
}

// tiledCandidates are tiled.cl's decompositions the tuner measures for p.
func tiledCandidates(p *nd.Problem) []Tuning {
	var out []Tuning
	outer, y, _, _ := canonical(problemAxes(p))
	bank := len(p.Kernels)
	regs := 64
	if p.Wide {
		regs = 32
	}
	if y.out == 1 && y.k == 1 {
		for _, tx := range []int{64, 128, 256} {
			for _, rx := range []int{4, 8, 16, 32} {
				for _, window := range []bool{false, true} {
					if rx*bank <= regs {
						out = append(out, Tuning{Shape: TiledShape{TX: tx, TY: 1, RX: rx, RY: 1, Window: window}})
					}
				}
			}
		}
		return out
	}
	// Images: row-walking work-groups (one row each, see TiledShape).
	if len(outer) == 0 && y.k > 1 {
		for _, tx := range []int{32, 64, 128} {
			for _, rx := range []int{4, 8, 16} {
				for _, rows := range []int{64, 256, 1024} {
					s := TiledShape{TX: tx, TY: 1, RX: rx, RY: 1, ZChunk: rows}
					if rollFits(s, y.k, bank, p.Wide) {
						out = append(out, Tuning{Shape: s})
					}
				}
			}
		}
	}
	// Volumes: each decomposition re-staging planes per outer tap, and
	// the rolling ones whose accumulators fit (chunks of the default
	// length, and of 16 planes).
	roll := rollable(outer)
	for _, ty := range []int{4, 8, 16} {
		for _, rx := range []int{1, 2, 4, 8} {
			for _, ry := range []int{1, 2, 4, 8} {
				s := TiledShape{TX: 32, TY: ty, RX: rx, RY: ry}
				if rx > 1 && rx*ry*bank <= regs && ty*ry <= 64 {
					if roll {
						s.ZChunk = -1
					}
					out = append(out, Tuning{Shape: s})
				}
				if roll && rollFits(s, outer[0].k, bank, p.Wide) && ty*ry <= 64 {
					for _, z := range []int{0, 16} {
						s.ZChunk = z
						out = append(out, Tuning{Shape: s})
					}
					// The rolling kernel's KZ slots push registers past
					// what two work-groups per multiprocessor allow
					// (S000: 168); a bound trades that for spills.
					if ty*32 <= 256 {
						s.ZChunk, s.MinGroups = 0, 2
						out = append(out, Tuning{Shape: s})
						s.MinGroups = 0
					}
				}
			}
		}
	}
	// Large banks split into groups of kernels (TiledShape.BankGroup).
	for _, g := range []int{4, 8, 16} {
		if g >= bank || bank%g != 0 {
			continue
		}
		for _, ty := range []int{4, 8} {
			for _, r := range [][2]int{{1, 1}, {2, 1}, {4, 1}, {8, 1}, {2, 2}, {4, 2}} {
				if r[0]*r[1]*g <= regs {
					s := TiledShape{TX: 32, TY: ty, RX: r[0], RY: r[1], BankGroup: g}
					if roll {
						s.ZChunk = -1
					}
					out = append(out, Tuning{Shape: s})
				}
			}
		}
	}
	// Banks (whole or in groups) of kernels spanning outer axes, with
	// their weights in local memory: the outer taps are a loop, whose
	// weights are otherwise read by a run-time index, one load each.
	// (Images' taps unroll to constant indices, read free by each fma: a
	// 2048² bank of 8 7×7 took 0.167 ms at best so, against 0.142; H100,
	// session 36.) Tiles of 128 elements: 8 outputs a work-item on 16.
	outerTaps := outerTapCount(outer)
	for _, g := range []int{4, 8, 16} {
		if g > bank || bank%g != 0 || p.Wide || outerTaps == 1 {
			continue
		}
		for _, ty := range []int{4, 8} {
			for _, r := range [][2]int{{4, 1}, {8, 1}, {4, 2}, {8, 2}} {
				for _, minGroups := range []int{0, 2} {
					s := TiledShape{TX: 128 / r[0], TY: ty, RX: r[0], RY: r[1], BankGroup: g, MinGroups: minGroups, LocalWeights: true}
					if g == bank {
						s.BankGroup = 0
					}
					if roll {
						s.ZChunk = -1
					}
					if r[0]*r[1]*g <= regs {
						out = append(out, Tuning{Shape: s})
					}
				}
			}
		}
	}
	return out
}
