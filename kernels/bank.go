package kernels

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

// BankShape is the work decomposition of bank.cl: work-groups of Lanes ×
// Cols work-items computing tiles of TileY rows by TileX output elements
// for the whole bank, each work-item the kernels lane, lane + Lanes, … of
// the columns it walks. Lanes divides the bank; Lanes ≥ 32 or Lanes =
// bank makes every store a run of whole lines of the interleaved output.
type BankShape struct {
	Lanes, Cols  int
	TileX, TileY int
}

func (s BankShape) String() string {
	return fmt.Sprintf("%d kernel lanes × %d columns, %dx%d tiles", s.Lanes, s.Cols, s.TileX, s.TileY)
}

// bankRegisterBudget bounds what a bank.cl work-item holds in registers:
// its kernels' weights and its window, (kernels + 1) · taps values (half
// as many of float64).
const bankRegisterBudget = 96

// bankFit reports whether bank.cl serves a canonical problem in shape s
// within maxLocal bytes of local memory.
func bankFit(s BankShape, outerTaps int, y, x axis, c, bank int, wide bool, maxLocal int) bool {
	if s.Lanes <= 0 || s.Cols <= 0 || s.TileX <= 0 || s.TileY <= 0 || bank < 2 || bank%s.Lanes != 0 {
		return false
	}
	if group := s.Lanes * s.Cols; group < 32 || group > 1024 {
		return false
	}
	budget, acc := bankRegisterBudget, 4
	if wide {
		budget, acc = budget/2, 8
	}
	taps := outerTaps * y.k * x.k
	return (bank/s.Lanes+1)*taps <= budget && bankLocalBytes(s, outerTaps, y, x, c, acc) <= maxLocal
}

// bankLocalBytes is the local memory bank.cl declares in shape s: every
// outer tap's plane of the tile's footprint, in ACC_T of accBytes.
func bankLocalBytes(s BankShape, outerTaps int, y, x axis, c, accBytes int) int {
	return outerTaps * (s.TileY + y.k - 1) * (s.TileX + (x.k-1)*c) * accBytes
}

// newBank specialises bank.cl in shape s for a's canonical problem, or
// returns nil where it does not serve.
func newBank(a directArgs, s BankShape) *Launch {
	p, y, x, c, l := a.p, a.y, a.x, a.c, a.base
	bank := len(p.Kernels)
	if !bankFit(s, a.outerTaps, y, x, c, bank, p.Wide, a.opt.MaxLocalBytes) {
		return nil
	}
	groupsY := (y.out + s.TileY - 1) / s.TileY
	if groupsY > a.opt.MaxGroupsYZ {
		return nil
	}
	t := *l
	t.Family, t.Name = "bank", "correlate_bank"
	t.LocalBytes = bankLocalBytes(s, a.outerTaps, y, x, c, AccBytes(p))
	t.Local = [3]int{s.Lanes * s.Cols, 1, 1}
	t.Groups = [3]int{(x.out*c + s.TileX - 1) / s.TileX, groupsY, l.Groups[2]}
	t.Shape = s

	outRow := x.out * c
	maxIndex := max(int64(product(p.InShape)), int64(product(p.OutShape))*int64(bank)) +
		int64(s.TileY+y.k)*int64(outRow+s.TileX+(x.k-1)*c)*int64(bank)
	defs := slices.DeleteFunc(slices.Clone(l.Defines), func(d string) bool {
		return strings.HasPrefix(d, "TILE_X=") || strings.HasPrefix(d, "TILE_Y=") || strings.HasPrefix(d, "TILED=")
	})
	defs = append(defs,
		fmt.Sprintf("TILE_X=%d", s.TileX), fmt.Sprintf("TILE_Y=%d", s.TileY),
		fmt.Sprintf("KL=%d", s.Lanes), fmt.Sprintf("KPL=%d", bank/s.Lanes), fmt.Sprintf("NCOL=%d", s.Cols),
		fmt.Sprintf("IDX32=%d", b2i(maxIndex < math.MaxInt32)),
		fmt.Sprintf("TAPS_N=%d", len(l.Taps)),
		// Each work-item reads its weights once, by a run-time index:
		// a buffer, not the parameters.
		t.tapsInParams(0, AccBytes(p)))
	defs = append(defs, bankTapDefines(l.Taps, bank)...)
	slices.Sort(defs)
	t.Defines = defs
	return &t
}

// bankTapDefines tell bank.cl which taps need which treatment, where the
// taps are few enough for bitmaps (256): ALL_NONZERO=1 for a bank without
// zeros (every tap one plain fma), else TZ0…TZ3, the taps zero in every
// kernel (left out of the code), and TN0…TN3, those nonzero in every
// kernel (plain fmas); the rest test the lane's weight as they run
// (common.cl's accumulate). Beyond 256 taps every tap tests its weight.
// taps is tap-major, bank weights per tap.
func bankTapDefines(taps []float64, bank int) []string {
	if !slices.Contains(taps, 0) {
		return []string{"ALL_NONZERO=1"}
	}
	n := len(taps) / bank
	if n > 256 {
		return []string{"ALL_NONZERO=0", "TAPS_KNOWN=0"}
	}
	var zero, nonzero [4]uint64
	for i := range n {
		w := taps[i*bank : (i+1)*bank]
		if !slices.ContainsFunc(w, func(v float64) bool { return v != 0 }) {
			zero[i/64] |= 1 << (i % 64)
		}
		if !slices.Contains(w, 0) {
			nonzero[i/64] |= 1 << (i % 64)
		}
	}
	defs := []string{"ALL_NONZERO=0", "TAPS_KNOWN=1"}
	for i := range 4 {
		defs = append(defs, fmt.Sprintf("TZ%d=0x%xUL", i, zero[i]), fmt.Sprintf("TN%d=0x%xUL", i, nonzero[i]))
	}
	return defs
}

// defaultBankShape is bank.cl's decomposition for problems no tuning
// covers, and zero where tiled.cl or rows.cl serves them better: images
// (no outer kernel taps) with banks of 4 kernels or more, volumes with 16
// or more. Measured on the H100 against every tiled.cl and rows.cl
// candidate (session 35, docs/perf/gpu-kernels.md "Banks of small
// kernels"): 2048² 3×3 banks of 4 to 64 took 0.043–0.389 ms against the
// best tiled.cl's 0.047–1.29; a bank of 2 lost (0.034 against 0.032), as
// did a 256³ 3³ bank of 4 (0.293 against the rolling tiled.cl's 0.202),
// while a bank of 16 won (0.647 against 0.748).
//
// The shape: two kernels a work-item from 16 kernels on (half the local
// reads per multiply-add: 5×5 bank of 32 0.214 ms against 0.252 with
// one), at most 32 lanes; work-groups of up to 256 work-items over 32 ×
// 16 tiles on images (of 128 over 32 × 32 with two kernels a work-item),
// of 128 over 64 × 32 on volumes (whose tiles stage a plane per outer
// tap, halo and all).
func defaultBankShape(p *nd.Problem, outerTaps int) BankShape {
	bank := len(p.Kernels)
	if bank < 4 || (outerTaps > 1 && bank < 16) {
		return BankShape{}
	}
	lanes := bank
	if bank >= 16 && bank%2 == 0 {
		lanes = bank / 2
	}
	if lanes > 32 && bank%32 == 0 {
		lanes = 32
	}
	if lanes > 256 {
		return BankShape{} // work-groups beyond what every device takes
	}
	group, s := 256, BankShape{TileX: 32, TileY: 16}
	switch {
	case outerTaps > 1:
		group, s = 128, BankShape{TileX: 64, TileY: 32}
	case lanes < bank:
		// Two kernels a work-item hold twice the accumulators: half
		// the work-items over tiles twice as tall stage fewer halo rows
		// a multiply-add (the H200's tuner, session 40: 2048² 5×5 bank
		// of 32 0.215 → 0.194 ms).
		group, s = 128, BankShape{TileX: 32, TileY: 32}
	}
	// No more columns than the tile has (a bank of 4: 4 × 32).
	s.Lanes, s.Cols = lanes, min(max(1, group/lanes), s.TileX)
	return s
}

// bankCandidates are bank.cl's decompositions the tuner measures for p:
// kernel lanes of the whole bank, half of it (two kernels a work-item:
// half the local reads per multiply-add), or 32 or 64 of a larger bank;
// work-groups of 128 and 256 work-items; tiles of 32 and 64 elements by 16
// to 64 rows.
func bankCandidates(p *nd.Problem) []Tuning {
	outer, y, x, c := canonical(problemAxes(p))
	outerTaps := outerTapCount(outer)
	bank := len(p.Kernels)
	var out []Tuning
	var laneCounts []int
	for _, lanes := range []int{bank, bank / 2, 32, 64} {
		if lanes >= min(8, bank) && lanes <= bank && bank%lanes == 0 && !slices.Contains(laneCounts, lanes) {
			laneCounts = append(laneCounts, lanes)
		}
	}
	for _, lanes := range laneCounts {
		for _, group := range []int{128, 256} {
			for _, tileX := range []int{32, 64} {
				for _, tileY := range []int{16, 32, 64} {
					s := BankShape{Lanes: lanes, Cols: group / lanes, TileX: tileX, TileY: tileY}
					if s.Cols >= 1 && s.Cols <= tileX && bankFit(s, outerTaps, y, x, c, bank, p.Wide, 48<<10) {
						out = append(out, Tuning{Shape: s})
					}
				}
			}
		}
	}
	return out
}
