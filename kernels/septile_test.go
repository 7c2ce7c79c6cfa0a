package kernels

import (
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// emulateSepTile computes a septile.cl launch (emulateFusedPasses: its
// arguments are sepfused.cl's), checking its geometry, grid and local
// memory along the way.
func emulateSepTile[F nd.Float](t *testing.T, l *Launch, def map[string]int, p *nd.Problem, from, to []F) {
	t.Helper()
	kx, ky, c := def["KX"], def["KY"], def["C"]
	tx, ty, rx, ry := def["TX"], def["TY"], def["RX"], def["RY"]
	my, mx, planes := int(l.Scalars[2]), int(l.Scalars[3]), int(l.Scalars[4])
	if len(l.Taps) != kx+ky+1 || def["TAPS_N"] != len(l.Taps) || l.Local != [3]int{tx, ty, 1} || tx%rx != 0 {
		t.Fatalf("septile: %d taps for KX=%d KY=%d, local %v for %dx%d, RX=%d", len(l.Taps), kx, ky, l.Local, tx, ty, rx)
	}
	// Every work-group covers one plane; those past the output's edge
	// store nothing, so the grid must be exact.
	if l.Groups != [3]int{ceilDiv(mx*c, tx), ceilDiv(my, ty*ry), planes} {
		t.Fatalf("septile: groups %v for %d planes of %d×%d in %dx%d tiles", l.Groups, planes, my, mx*c, tx, ty*ry)
	}
	stage, inter := def["STAGE_PITCH"], def["INTER_PITCH"]
	if stage < tx+(kx-1)*c || inter < tx || inter > stage || stage%32 != 1 || inter%32 != 1 {
		t.Fatalf("septile: pitches %d and %d for rows of %d and %d", stage, inter, tx+(kx-1)*c, tx)
	}
	if l.LocalBytes != (ty*ry+ky-1)*stage*AccBytes(p) || l.Shape != (SepTileShape{tx, ty, rx, ry}) {
		t.Fatalf("septile: local bytes %d for %d rows of %d, shape %+v", l.LocalBytes, ty*ry+ky-1, stage, l.Shape)
	}
	emulateFusedPasses(l, def, p, from, to)
}

// sepTileCases are the engines' cases whose first two separable passes
// fuse: the 2-D separable set and those of the table and the random cases.
func sepTileCases(t *testing.T) []enginetest.Case {
	var cases []enginetest.Case
	for _, c := range append(enginetest.Separable2D(), engineCases()...) {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if p.Separable() && fusable(separablePasses(p)) {
			cases = append(cases, c)
		}
	}
	return cases
}

// factorsOf is a separable kernel of the given extents (weights 1, 2, …).
func factorsOf(shape ...int) nd.Kernel {
	f := make([][]float64, len(shape))
	for i, n := range shape {
		for j := range n {
			f[i] = append(f[i], float64(j+1))
		}
	}
	return nd.Kernel{Shape: shape, Factors: f}
}

// TestSepTilePlanner: untuned, NewSeparable runs septile.cl for problems
// below sepTileMaxOutputs whose first two passes fuse (S003's images among
// them, in enough work-groups to fill a 132-multiprocessor GPU about
// four times), where its tile fits local memory, and plans every other
// problem as before.
func TestSepTilePlanner(t *testing.T) {
	opt := SeparableOptions{MaxLocalBytes: 48 << 10}
	for _, tc := range []struct {
		name     string
		spec     nd.Spec
		opt      SeparableOptions
		families []string
		shape    SepTileShape
	}{
		{"S003 c1 float32", nd.Spec{Shape: []int{480, 640}, Kernels: []nd.Kernel{factorsOf(31, 31)}, Border: nd.Constant}, opt, []string{"septile"}, SepTileShape{TX: 32, TY: 8, RX: 8, RY: 4}},
		{"S003 c4 uint8", nd.Spec{Shape: []int{480, 640, 4}, In: nd.Uint8, Kernels: []nd.Kernel{factorsOf(31, 31)}, Border: nd.Constant}, opt, []string{"septile"}, SepTileShape{TX: 64, TY: 4, RX: 8, RY: 8}},
		{"S003 c4 uint8, CUDA's 1024 work-items", nd.Spec{Shape: []int{480, 640, 4}, In: nd.Uint8, Kernels: []nd.Kernel{factorsOf(31, 31)}, Border: nd.Constant}, SeparableOptions{MaxLocalBytes: 48 << 10, GroupItems: 1024}, []string{"septile"}, SepTileShape{TX: 64, TY: 16, RX: 8, RY: 2}},
		{"S003 c4 float32, 1024 allowed, 512 taken", nd.Spec{Shape: []int{480, 640, 4}, Kernels: []nd.Kernel{factorsOf(31, 31)}, Border: nd.Constant}, SeparableOptions{MaxLocalBytes: 48 << 10, GroupItems: 1024}, []string{"septile"}, SepTileShape{TX: 64, TY: 8, RX: 8, RY: 4}},
		{"S003 c1 float32, 1024 allowed, 256 kept", nd.Spec{Shape: []int{480, 640}, Kernels: []nd.Kernel{factorsOf(31, 31)}, Border: nd.Constant}, SeparableOptions{MaxLocalBytes: 48 << 10, GroupItems: 1024}, []string{"septile"}, SepTileShape{TX: 32, TY: 8, RX: 8, RY: 4}},
		{"S003 c4 float64", nd.Spec{Shape: []int{480, 640, 4}, In: nd.Float64, Kernels: []nd.Kernel{factorsOf(3, 3)}}, opt, []string{"septile"}, SepTileShape{TX: 64, TY: 4, RX: 8, RY: 8}},
		{"c4 float64 15 taps", nd.Spec{Shape: []int{480, 640, 4}, In: nd.Float64, Kernels: []nd.Kernel{factorsOf(15, 15)}}, opt, []string{"septile"}, SepTileShape{TX: 64, TY: 4, RX: 8, RY: 8}},
		{"c4 float64 31 taps: smaller tiles", nd.Spec{Shape: []int{480, 640, 4}, In: nd.Float64, Kernels: []nd.Kernel{factorsOf(31, 31)}}, opt, []string{"septile"}, SepTileShape{TX: 32, TY: 8, RX: 8, RY: 1}},
		{"c4 float64 61 taps: none fits", nd.Spec{Shape: []int{100, 100, 4}, In: nd.Float64, Kernels: []nd.Kernel{factorsOf(61, 61)}}, opt, []string{"separable", "separable"}, SepTileShape{}},
		{"c4 float64 61 taps: strips", nd.Spec{Shape: []int{480, 640, 4}, In: nd.Float64, Kernels: []nd.Kernel{factorsOf(61, 61)}}, opt, []string{"sepfused"}, SepTileShape{}},
		{"bank of 2", nd.Spec{Shape: []int{100, 100}, Kernels: []nd.Kernel{factorsOf(5, 5), factorsOf(5, 5)}}, opt, []string{"septile", "septile"}, SepTileShape{TX: 32, TY: 8, RX: 8, RY: 4}},
		{"small volume", nd.Spec{Shape: []int{32, 32, 32}, Kernels: []nd.Kernel{factorsOf(3, 3, 3)}}, opt, []string{"septile", "separable"}, SepTileShape{TX: 32, TY: 8, RX: 8, RY: 4}},
		{"1024²", nd.Spec{Shape: []int{1024, 1024}, Kernels: []nd.Kernel{factorsOf(7, 7)}}, opt, []string{"septile"}, SepTileShape{TX: 32, TY: 8, RX: 8, RY: 4}},
		{"2048²", nd.Spec{Shape: []int{2048, 2048}, Kernels: []nd.Kernel{factorsOf(7, 7)}}, opt, []string{"sepfused"}, SepTileShape{}},
		{"large image forced", nd.Spec{Shape: []int{2048, 2048}, Kernels: []nd.Kernel{factorsOf(7, 7)}}, SeparableOptions{MaxLocalBytes: 48 << 10, Shape: SepTileShape{TX: 64, TY: 4, RX: 4, RY: 2}}, []string{"septile"}, SepTileShape{TX: 64, TY: 4, RX: 4, RY: 2}},
		{"sepfused forced", nd.Spec{Shape: []int{480, 640}, Kernels: []nd.Kernel{factorsOf(7, 7)}}, SeparableOptions{MaxLocalBytes: 48 << 10, Shape: SepFusedShape{TX: 64, RX: 2, SEG: 64}}, []string{"sepfused"}, SepTileShape{}},
		{"unfused", nd.Spec{Shape: []int{480, 640}, Kernels: []nd.Kernel{factorsOf(7, 7)}}, SeparableOptions{MaxLocalBytes: 48 << 10, Unfused: true}, []string{"separable", "separable"}, SepTileShape{}},
		{"no local memory", nd.Spec{Shape: []int{480, 640}, Kernels: []nd.Kernel{factorsOf(7, 7)}}, SeparableOptions{MaxLocalBytes: 1 << 10}, []string{"separable", "separable"}, SepTileShape{}},
		{"Z and Y, 32 samples after", nd.Spec{Shape: []int{32, 32, 32}, Kernels: []nd.Kernel{factorsOf(3, 3, 1)}}, opt, []string{"septile"}, SepTileShape{TX: 512, TY: 1, RX: 8, RY: 16}},
		{"X and Z", nd.Spec{Shape: []int{32, 32, 32}, Kernels: []nd.Kernel{factorsOf(3, 1, 3)}}, opt, []string{"separable", "separable"}, SepTileShape{}},
		{"1-D", nd.Spec{Shape: []int{100000}, Kernels: []nd.Kernel{factorsOf(7)}}, opt, []string{"separable"}, SepTileShape{}},
		{"too many planes", nd.Spec{Shape: []int{70000, 3, 4}, Axes: []int{1, 2}, Kernels: []nd.Kernel{factorsOf(3, 3)}}, opt, []string{"separable", "separable"}, SepTileShape{}},
	} {
		s, families := planSeparable(t, tc.name, tc.spec, tc.opt)
		l := s.Steps[0].Launch
		shape, _ := l.Shape.(SepTileShape) // zero for the other families
		if !slices.Equal(families, tc.families) || shape != tc.shape {
			t.Errorf("%s: launches %v in %+v, want %v in %+v", tc.name, families, shape, tc.families, tc.shape)
		}
		if l.Family == "septile" && l.LocalBytes > tc.opt.MaxLocalBytes {
			t.Errorf("%s: %d bytes of local memory", tc.name, l.LocalBytes)
		}
		if strings.HasPrefix(tc.name, "S003") {
			if groups := l.Groups[0] * l.Groups[1] * l.Groups[2]; groups < 2*132 {
				t.Errorf("%s: %d work-groups", tc.name, groups)
			}
			t.Logf("%s: %s, %v work-groups, %d bytes of local memory", tc.name, l.Describe(), l.Groups, l.LocalBytes)
		}
	}
}

// TestSepTileCandidates: `ndconv tune` measures a modest set of septile.cl
// decompositions for S003's images, each fitting 48 KiB of local memory,
// and candidates give the CPU engine's bits (emulated).
func TestSepTileCandidates(t *testing.T) {
	for _, spec := range []nd.Spec{
		{Shape: []int{480, 640}, In: nd.Float32, Kernels: []nd.Kernel{factorsOf(31, 31)}},
		{Shape: []int{480, 640, 4}, In: nd.Uint8, Kernels: []nd.Kernel{factorsOf(31, 31)}},
		{Shape: []int{480, 640}, In: nd.Float64, Kernels: []nd.Kernel{factorsOf(7, 7)}},
	} {
		p, err := spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		var shapes []SepTileShape
		for _, c := range TuningCandidates(p, true) {
			tile, ok := c.Shape.(SepTileShape)
			if !ok {
				continue
			}
			shapes = append(shapes, tile)
			s, err := NewSeparable(p, SeparableOptions{MaxLocalBytes: 48 << 10, Shape: c.Shape})
			if err != nil || s == nil || s.Steps[0].Launch.Shape != tile || s.Steps[0].Launch.LocalBytes > 48<<10 {
				t.Fatalf("%v: candidate %+v not run: %v", spec.Shape, tile, err)
			}
		}
		if len(shapes) < 4 || len(shapes) > 40 {
			t.Errorf("%v %v: %d septile.cl candidates", spec.Shape, spec.In, len(shapes))
		}
		t.Logf("%v %v: %d candidates", spec.Shape, spec.In, len(shapes))
	}
	// The S003-sized cases (TestSepTileSteps) would take seconds each.
	var cases []enginetest.Case
	for _, c := range enginetest.Separable2D() {
		if !strings.HasPrefix(c.Name, "sep2/s003/") {
			cases = append(cases, c)
		}
	}
	checkCandidates(t, cases, 7, "septile", func(cand Tuning) bool { _, ok := cand.Shape.(SepTileShape); return ok })
}
