package kernels

import (
	"fmt"
	"slices"

	"github.com/ndconv/ndconv/internal/winograd"
	"github.com/ndconv/ndconv/nd"
)

// WinogradShape is winograd.cl's decomposition: one output tile per
// work-item, Local work-items a group, outputs staged in local memory
// Stage filters at a time (0: stored directly).
type WinogradShape struct {
	Variant string // the tile, F(4×4,3×3) …
	Local   int
	Stage   int
}

func (s WinogradShape) describe() string {
	d := fmt.Sprintf("%s, one tile per work-item, %d a group", s.Variant, s.Local)
	if s.Stage > 0 {
		d += fmt.Sprintf(", outputs staged %d filters at a time", s.Stage)
	}
	return d
}

// WinogradOptions choose winograd.cl's specialisation.
type WinogradOptions struct {
	// Tile is the output tile width m; 0 the kernel size's default
	// (winograd.Tiles).
	Tile int
	// Stage is how many filters' outputs go through local memory at a
	// time before the group stores them in runs (docs/perf/winograd.md,
	// step 4); 0 takes min(8, bank), a negative value stores directly.
	Stage int
	// MaxLocalBytes bounds the staged outputs; 0 takes 48 KiB. Where the
	// stage does not fit, outputs are stored directly.
	MaxLocalBytes int
}

// winogradStage is the default number of filters staged at a time: 8
// floats, one 32-byte sector per voxel.
const winogradStage = 8

// winogradLocal is the work-group size: a multiple of every device's warp
// or wavefront.
const winogradLocal = 64

// winogradMaxTaps bounds the taps argument (the bank's transformed
// weights, float each): CUDA's constant bank holds 64 KiB.
const winogradMaxTaps = 16 << 10

// WinogradWhy says why winograd.cl cannot run p (nil: it can): the
// problems internal/winograd serves, in the GPU kernels' dtypes, with the
// bank's transformed weights within the constant memory winograd.cl reads
// them from.
func WinogradWhy(p *nd.Problem) error {
	if err := CheckDTypes(p); err != nil {
		return err
	}
	if err := winograd.Why(p); err != nil {
		return err
	}
	v, err := winograd.New(p, 0)
	if err != nil {
		return err
	}
	if n := winogradTaps(v, len(p.Kernels)); n > winogradMaxTaps {
		return fmt.Errorf("winograd on a GPU takes banks whose transformed weights fit 64 KiB of constant memory: %d kernels of %s need %d KiB", len(p.Kernels), v.Name(), n*4>>10)
	}
	return nil
}

func winogradTaps(v *winograd.Variant, bank int) int { return bank * v.TileInputs() }

// NewWinograd specialises the Winograd method (winograd.cl) for p. It
// returns nil, nil when the output is empty.
func NewWinograd(p *nd.Problem, opt WinogradOptions) (*Launch, error) {
	if err := WinogradWhy(p); err != nil {
		return nil, &nd.UnsupportedError{What: "problem for the winograd method", Value: err.Error()}
	}
	if slices.Contains(p.OutShape, 0) || slices.Contains(p.InShape, 0) {
		return nil, nil
	}
	v, err := winograd.New(p, opt.Tile)
	if err != nil {
		return nil, err
	}
	if winogradTaps(v, len(p.Kernels)) > winogradMaxTaps {
		return nil, &nd.UnsupportedError{What: "bank for the winograd method", Value: fmt.Sprintf("%d kernels of %s", len(p.Kernels), v.Name()), Supported: "transformed weights within 64 KiB"}
	}
	// Gaps: the axes between kernel axes, merged (one tap, in = out).
	gaps := []int64{1, 1, 1, 1}
	nIn, nOut := [3]int64{1, 1, 1}, [3]int64{1, 1, 1} // axes past DIMS: length 1
	shifts := [3]int{}
	g := 0
	for a, k := range p.KShape {
		if k > 1 {
			nIn[g], nOut[g], shifts[g] = int64(p.InShape[a]), int64(p.OutShape[a]), p.Shift[a]
			g++
			continue
		}
		gaps[g] *= int64(p.InShape[a])
	}
	total := gaps[0] * gaps[1] * gaps[2] * gaps[3]
	for i := range v.Dims() {
		total *= int64(ceilDiv(int(nOut[i]), v.M))
	}
	if ceilDiv64(total, winogradLocal) > 1<<31-1 {
		return nil, &nd.UnsupportedError{What: "problem size for the winograd method", Value: fmt.Sprint(p.InShape), Supported: "at most 2³¹−1 work-groups of tiles"}
	}
	stage := opt.Stage
	if stage == 0 {
		stage = min(winogradStage, len(p.Kernels))
	}
	if opt.MaxLocalBytes <= 0 {
		opt.MaxLocalBytes = 48 << 10
	}
	if stage < 0 || winogradLocal*v.TileOutputs()*stage*4 > opt.MaxLocalBytes {
		stage = 0
	}
	l := &Launch{Family: "winograd", Name: "correlate_winograd", CVal: p.CVal, Outer: []int32{0},
		Shape: WinogradShape{Variant: v.Name(), Local: winogradLocal, Stage: stage}, LocalBytes: winogradLocal * v.TileOutputs() * stage * 4}
	for _, u := range v.Weights(p) {
		for _, x := range u {
			l.Taps = append(l.Taps, float64(x))
		}
	}
	l.Scalars = append(gaps, nIn[0], nIn[1], nIn[2], nOut[0], nOut[1], nOut[2], total)
	l.Local = [3]int{winogradLocal, 1, 1}
	l.Groups = [3]int{int(ceilDiv64(total, winogradLocal)), 1, 1}
	l.Defines = append(typeDefines(p),
		fmt.Sprintf("BORDER=%d", p.Border),
		fmt.Sprintf("BANK=%d", len(p.Kernels)),
		fmt.Sprintf("DIMS=%d", v.Dims()),
		fmt.Sprintf("M=%d", v.M), fmt.Sprintf("R=%d", v.R),
		fmt.Sprintf("SHIFT0=%d", shifts[0]), fmt.Sprintf("SHIFT1=%d", shifts[1]), fmt.Sprintf("SHIFT2=%d", shifts[2]),
		fmt.Sprintf("LOCAL=%d", winogradLocal), fmt.Sprintf("STAGE_OUT=%d", stage),
	)
	slices.Sort(l.Defines)
	return l, nil
}

func ceilDiv64(a, b int64) int64 { return (a + b - 1) / b }
