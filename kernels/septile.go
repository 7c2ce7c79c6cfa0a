package kernels

import (
	"fmt"

	"github.com/ndconv/ndconv/nd"
)

// SepTileShape is septile.cl's work decomposition: work-groups of TX × TY
// work-items, each owning a tile of TX output elements (pixels × C) by
// TY·RY rows of one plane, staged whole; each work-item owns one column
// and RY rows of the tile, and the X pass runs in pieces of RX
// consecutive elements (RX divides TX).
type SepTileShape struct {
	TX, TY, RX, RY int
}

func (s SepTileShape) String() string {
	return fmt.Sprintf("%dx%d threads, %d rows each, X pieces of %d", s.TX, s.TY, s.RY, s.RX)
}

// sepTileMaxGroupSize bounds septile.cl's work-groups, and sepTileRegs the
// registers a work-item holds between its loads and its stores: the staged
// values it loads (NLOAD), and its X-pass sums (NTASK·RX) held across the
// barrier before the intermediate overwrites the stage.
const (
	sepTileMaxGroupSize = 1024
	sepTileRegs         = 64
)

// sepTileGeometry is what septile.cl computes of one problem: kernel
// extents kx and ky, c samples per position, planes before the Y axis,
// and the output's extents my and mx (positions).
type sepTileGeometry struct {
	kx, ky, c, planes, my, mx int
}

// sepTileGeometryOf is p's geometry where its first two passes run along
// axes x and x−1 (fusable).
func sepTileGeometryOf(p *nd.Problem, x int) sepTileGeometry {
	return sepTileGeometry{kx: p.KShape[x], ky: p.KShape[x-1], c: product(p.InShape[x+1:]),
		planes: product(p.InShape[:x-1]), my: p.OutShape[x-1], mx: p.OutShape[x]}
}

// sepTileLocalBytes is septile.cl's local memory: the staged rows, which
// the intermediate rows (no wider) then overwrite.
func sepTileLocalBytes(s SepTileShape, kx, ky, c, accSize int) int {
	stage, _ := sepRingPitches(SepFusedShape{TX: s.TX}, kx, c)
	return (s.TY*s.RY + ky - 1) * stage * accSize
}

// sepTileFits reports whether septile.cl runs shape s for geometry g: a
// valid shape, its registers (sepTileRegs, half as many float64) and local
// memory (maxLocal) within bounds, and a grid within the 65535 work-groups
// CUDA allows along Y and Z (a plane per work-group along Z).
func (g sepTileGeometry) fits(s SepTileShape, wide bool, maxLocal int) bool {
	if s.TX <= 0 || s.TY <= 0 || s.RX <= 0 || s.RY <= 0 || s.TX%s.RX != 0 || s.TX*s.TY > sepTileMaxGroupSize {
		return false
	}
	regs, accSize := sepTileRegs, 4
	if wide {
		regs, accSize = regs/2, 8
	}
	nt, rows := s.TX*s.TY, s.TY*s.RY+g.ky-1
	nload := ceilDiv(rows*(s.TX+(g.kx-1)*g.c), nt)
	ntask := ceilDiv(rows*(s.TX/s.RX), nt)
	return nload <= regs && ntask*s.RX <= regs &&
		sepTileLocalBytes(s, g.kx, g.ky, g.c, accSize) <= maxLocal &&
		ceilDiv(g.my, s.TY*s.RY) <= 65535 && g.planes <= 65535
}

// sepTileMaxOutputs: untuned, problems with fewer outputs run their fused
// X and Y passes in septile.cl's tiles, larger ones in sepfused.cl's
// strips. S003's images (640 × 480, 0.3 M outputs, 1.2 M with 4 channels)
// lie below, the 2048² and larger images the strips were tuned on above:
// a strip's serial walk pays where there are too few strips to fill the
// GPU. SeparableOptions.FuseSmall lifts it with minFusedOutputs (the
// tests' small problems run sepfused.cl so).
const sepTileMaxOutputs = 1 << 22

// sepTileShape is the septile.cl decomposition NewSeparable runs for p's
// fused X and Y passes (along axes x and x−1), or zero where septile.cl
// does not serve: unfused passes, a forced sepfused.cl shape, a problem of
// sepTileMaxOutputs outputs or more (or any, with FuseSmall) unless opt
// forces a shape, or a shape
// that does not fit.
func sepTileShape(p *nd.Problem, passes []int, opt SeparableOptions) SepTileShape {
	if opt.Unfused || opt.fused != (SepFusedShape{}) || !fusable(passes) {
		return SepTileShape{}
	}
	g := sepTileGeometryOf(p, passes[0])
	s := opt.septile
	if s == (SepTileShape{}) {
		if opt.FuseSmall || product(p.OutShape) >= sepTileMaxOutputs {
			return SepTileShape{}
		}
		s = g.defaultShape(p.Wide, opt.MaxLocalBytes, opt.GroupItems, p.In.Size() == 1)
	}
	if !g.fits(s, p.Wide, opt.MaxLocalBytes) {
		return SepTileShape{}
	}
	return s
}

// defaultShape is septile.cl's decomposition for a small problem: the
// first of its tiles that fits (zero if none does), 256 work-items each,
// X pieces of 8. The tuner on the H100 (S003's 640 × 480 with 31 × 31
// taps) found tiles of 32 rows best for every sample count, and pieces
// of 8 at every C (longer pieces cost registers; figures:
// docs/perf/gpu-kernels.md, "The figures behind the defaults"). Taller tiles halve
// the Y halo's share of the X pass (62 staged rows for 32 outputs, 46 for
// 16). The default keeps 256 work-items (more rows each) where the tuner
// found 512 best: NVIDIA's OpenCL compiles this kernel for at most 256 per
// group (its registers), and a default must run on every device.
//
// Then smaller tiles, where a long kernel with channels or float64 would
// need more than the local memory.
//
// With channels, where the device allows more (groupItems: CUDA's 1024),
// a work-group has more rows of work-items, each fewer rows of outputs:
// the H100's tuner chose 64×8 work-items of 4 rows for S003's RGBA float32
// (0.0310–0.0316 ms against 64×4 of 8 rows' 0.0334–0.0351) and 64×16 of 2
// for uint8 (0.0353–0.0362 against 0.0426; 64×8 was slower, 0.0445). One
// channel keeps 256 (32×16 was no faster).
func (g sepTileGeometry) defaultShape(wide bool, maxLocal, groupItems int, narrow bool) SepTileShape {
	tiles := []struct{ px, rows int }{{32, 32}, {32, 16}, {16, 16}, {16, 8}, {8, 8}}
	items := 256
	if g.c > 1 {
		tiles = []struct{ px, rows int }{{16, 32}, {16, 16}, {16, 8}, {8, 8}}
		items = max(items, groupItems)
		if !narrow {
			items = min(items, 512)
		}
	}
	for _, t := range tiles {
		tx := t.px * g.c
		ty := max(1, min(t.rows, items/tx))
		s := SepTileShape{TX: tx, TY: ty, RX: 8, RY: t.rows / ty}
		for s.TX%s.RX != 0 && s.RX > 1 {
			s.RX /= 2
		}
		if g.fits(s, wide, maxLocal) {
			return s
		}
	}
	return SepTileShape{}
}

// sepTileCandidates are septile.cl's decompositions the tuner measures
// for p (none where its first two passes do not fuse): tiles of 16 × 16,
// 16 × 32, 32 × 8, 32 × 16, 32 × 32 and 64 × 8 pixels, 1, 2 or 4 rows per
// work-item, X pieces of 8 or 16 — those that fit 48 KiB of local memory
// (at most 36).
func sepTileCandidates(p *nd.Problem) []Tuning {
	passes := separablePasses(p)
	if !fusable(passes) {
		return nil
	}
	g := sepTileGeometryOf(p, passes[0])
	var out []Tuning
	for _, t := range []struct{ px, rows int }{{16, 16}, {16, 32}, {32, 8}, {32, 16}, {32, 32}, {64, 8}} {
		for _, ry := range []int{1, 2, 4} {
			for _, rx := range []int{8, 16} {
				s := SepTileShape{TX: t.px * g.c, TY: t.rows / ry, RX: rx, RY: ry}
				if g.fits(s, p.Wide, 48<<10) {
					out = append(out, Tuning{Shape: s})
				}
			}
		}
	}
	return out
}

// newSepTile specialises septile.cl in shape s for a's X and Y passes.
func newSepTile(a stepArgs, s SepTileShape) *Launch {
	q, in, x, fx, fy := a.q, a.in, a.x, a.fx, a.fy
	c := product(in[x+1:])
	kx, ky := len(fx), len(fy)
	stage, inter := sepRingPitches(SepFusedShape{TX: s.TX}, kx, c)
	l := fusedLaunch(a, "septile", s.TX, []string{
		fmt.Sprintf("TX=%d", s.TX), fmt.Sprintf("TY=%d", s.TY), fmt.Sprintf("RX=%d", s.RX), fmt.Sprintf("RY=%d", s.RY),
		fmt.Sprintf("STAGE_PITCH=%d", stage), fmt.Sprintf("INTER_PITCH=%d", inter)})
	l.Local = [3]int{s.TX, s.TY, 1}
	l.Groups = [3]int{ceilDiv(q.OutShape[x]*c, s.TX), ceilDiv(q.OutShape[x-1], s.TY*s.RY), product(in[:x-1])}
	l.LocalBytes = sepTileLocalBytes(s, kx, ky, c, AccBytes(q))
	l.Shape = s
	return l
}
