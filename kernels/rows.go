package kernels

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

// RowsShape is the work decomposition of rows.cl: work-groups of TX
// work-items, each computing RX consecutive output elements (for every
// kernel of the bank) of every row of a chunk of Chunk rows. The tuner
// chooses it; zero leaves the problem to tiled.cl.
type RowsShape struct {
	TX, RX, Chunk int
	// L2Ahead > 0 prefetches into the L2 cache the input row each
	// work-item reads that many rows later.
	L2Ahead int `json:",omitempty"`
}

func (s RowsShape) String() string {
	text := fmt.Sprintf("%d threads, %d outputs each, %d rows", s.TX, s.RX, s.Chunk)
	if s.L2Ahead > 0 {
		text += fmt.Sprintf(", L2 prefetch %d rows ahead", s.L2Ahead)
	}
	return text
}

// rowsAccBudget bounds rows.cl's accumulators per work-item, KY·RX·BANK
// (half as many of float64), and rowsSpanBudget the input values it holds
// per row, RX + (KX − 1)·C.
const (
	rowsAccBudget  = 64
	rowsSpanBudget = 40
)

// rowsMinOutputs is the smallest image rows.cl serves untuned (4096²).
const rowsMinOutputs = 1 << 24

// rowsFit reports whether rows.cl serves a canonical problem with shape s:
// no outer kernel taps (images and batches), and its registers within
// budget.
func rowsFit(s RowsShape, outerTaps int, y, x axis, c, bank int, wide bool) bool {
	acc := rowsAccBudget
	if wide {
		acc /= 2
	}
	return outerTaps == 1 && s.TX > 0 && s.RX > 0 && s.Chunk > 0 &&
		y.k*s.RX*bank <= acc && s.RX+(x.k-1)*c <= rowsSpanBudget
}

// newRows specialises rows.cl in shape s for a's canonical problem, or
// returns nil where it does not serve.
func newRows(a directArgs, s RowsShape) *Launch {
	p, outerTaps, y, x, c, l := a.p, a.outerTaps, a.y, a.x, a.c, a.base
	bank := len(p.Kernels)
	if !rowsFit(s, outerTaps, y, x, c, bank, p.Wide) {
		return nil
	}
	t := *l
	t.Family, t.Name = "rows", "correlate_rows"
	t.LocalBytes = 0
	t.Local = [3]int{s.TX, 1, 1}
	t.Groups = [3]int{(x.out*c + s.TX*s.RX - 1) / (s.TX * s.RX), (y.out + s.Chunk - 1) / s.Chunk, l.Groups[2]}
	t.Shape = s
	// The chunk length follows the outer axes' four ints each (the
	// placeholder where there are none).
	nOuter := len(l.Outer) / 4
	t.Outer = append(slices.Clone(l.Outer[:4*nOuter]), int32(s.Chunk))

	outRow := x.out * c
	maxIndex := max(int64(product(p.InShape)), int64(product(p.OutShape))*int64(bank)) +
		int64(s.TX*s.RX+(x.k-1)*c)*int64(bank)
	defs := slices.DeleteFunc(slices.Clone(l.Defines), func(d string) bool {
		return strings.HasPrefix(d, "TILE_X=") || strings.HasPrefix(d, "TILE_Y=") || strings.HasPrefix(d, "TILED=")
	})
	defs = append(defs,
		fmt.Sprintf("TX=%d", s.TX), fmt.Sprintf("RX=%d", s.RX), fmt.Sprintf("L2_AHEAD=%d", s.L2Ahead),
		fmt.Sprintf("IDX32=%d", b2i(maxIndex < math.MaxInt32)),
		fmt.Sprintf("TAPS_N=%d", len(l.Taps)))
	defs = append(defs, nonzeroDefines(l.Taps)...)
	defs = append(defs, t.tapsInParams(a.opt.MaxParamBytes, AccBytes(p)))
	defs = append(defs, vectorDefines(p, s.RX%4 == 0 && (x.in*c)%4 == 0, (s.RX*bank)%4 == 0 && (outRow*bank)%4 == 0)...)
	slices.Sort(defs)
	t.Defines = defs
	return &t
}

// defaultRowsShape is rows.cl's decomposition for the problems it serves
// best untuned — large single images (rowsMinOutputs) with kernels of at
// most 3×3, where tiled.cl's staging and set-up outweigh the taps — and
// zero for the rest. It won on the H100 at 8192² (uint8 by the most, with
// 8 outputs per work-item and an L2 prefetch 4 rows ahead) and lost at
// 2048², where its work-groups of 32 rows are too few to fill the device
// (figures: docs/perf/gpu-kernels.md, "The figures behind the defaults").
//
// Float32 kernels of 10 to 49 taps (5×5, 7×7) take narrower work-groups
// walking longer columns on images of 8192² and more: 0.218 and 0.238 ms
// against tiled.cl's 0.275 and 0.301 (H100, session 31, the tuner's
// choice of session 25); smaller images keep tiled.cl, whose work-groups
// are more.
//
// Four interleaved float32 channels (RGBA) with kernels of up to 5×5 take
// 64 work-items of 2 outputs and the L2 prefetch: the tuner's choice on
// the H200 (session 39), 4096² 5×5 0.220 → 0.198 ms.
func defaultRowsShape(p *nd.Problem, outerTaps int, y, x axis, c int) RowsShape {
	if outerTaps != 1 || len(p.Kernels) != 1 || y.k < 2 || y.out*x.out < rowsMinOutputs {
		return RowsShape{}
	}
	taps := y.k * x.k
	if c != 1 {
		if c == 4 && taps <= 25 && p.In == nd.Float32 && !p.Wide {
			return RowsShape{TX: 64, RX: 2, Chunk: 32, L2Ahead: 4}
		}
		return RowsShape{}
	}
	switch {
	case taps <= 9 && p.In.Size() == 1:
		return RowsShape{TX: 256, RX: 8, Chunk: 32, L2Ahead: 4}
	case taps <= 9:
		return RowsShape{TX: 256, RX: 4, Chunk: 32}
	case taps <= 49 && p.In == nd.Float32 && !p.Wide && y.out*x.out >= rowsLongMinOutputs:
		return RowsShape{TX: 64, RX: 4, Chunk: 128}
	}
	return RowsShape{}
}

// rowsLongMinOutputs is the smallest image rows.cl serves untuned with
// kernels above 9 taps (8192²).
const rowsLongMinOutputs = 1 << 26

// rowsCandidates are rows.cl's decompositions the tuner measures (none
// for 1-D problems, which tiled.cl's one-row work-groups serve).
func rowsCandidates(p *nd.Problem) []Tuning {
	outer, y, x, c := canonical(problemAxes(p))
	if y.out == 1 && y.k == 1 {
		return nil
	}
	outerTaps := outerTapCount(outer)
	var out []Tuning
	for _, tx := range []int{64, 128, 256} {
		// 16 outputs per work-item: uint8's 16 bytes of a row in
		// flight per load phase (v6 ncu of 8: long-scoreboard stalls,
		// DRAM 36%).
		for _, rx := range []int{2, 4, 8, 16} {
			for _, chunk := range []int{32, 128, 512} {
				for _, ahead := range []int{0, 4} {
					s := RowsShape{TX: tx, RX: rx, Chunk: chunk, L2Ahead: ahead}
					if rowsFit(s, outerTaps, y, x, c, len(p.Kernels), p.Wide) {
						out = append(out, Tuning{Shape: s})
					}
				}
			}
		}
	}
	return out
}
