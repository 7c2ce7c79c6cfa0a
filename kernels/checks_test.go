package kernels_test

// The tests of the kernel families in internal/kerneltest's decompositions
// (which imports kernels, so these tests are outside the package; they
// reach its own test helpers through export_test.go).

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/kerneltest"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// TestTuningCandidates: every candidate decomposition `ndconv tune` may
// choose covers the output and gives the CPU engine's bits (emulated, as
// TestDirectCanonicalForm does), for 2-D, 1-D, bank and channel cases.
func TestTuningCandidates(t *testing.T) {
	tried := 0
	for i, c := range kernels.EngineCases() {
		if i%29 != 0 {
			continue
		}
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		checks, _ := kerneltest.RollingChecks(p)
		for _, cand := range append(kernels.TuningCandidates(p, false), checks...) {
			l, err := kernels.NewDirect(p, kernels.DirectOptions{MaxLocalBytes: 48 << 10, Shape: cand.Shape})
			if err != nil || l == nil {
				continue
			}
			tried++
			kernels.CheckDirectLaunch(t, c, p, l)
		}
	}
	if tried < 100 {
		t.Errorf("only %d candidate launches tried", tried)
	}
}

// eachBankCandidate calls f with each case of the table, the random cases
// and enginetest.Banks — its problem p — and each decomposition of
// checks(p) and of the tuner's candidates for p.
func eachBankCandidate(t *testing.T, checks func(*nd.Problem) ([]kernels.Tuning, bool), f func(c enginetest.Case, p *nd.Problem, cand kernels.Tuning)) {
	t.Helper()
	for _, c := range append(kernels.EngineCases(), enginetest.OnGPU(enginetest.Banks())...) {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		some, _ := checks(p)
		for _, cand := range append(some, kernels.TuningCandidates(p, false)...) {
			f(c, p, cand)
		}
	}
}

// TestBankGroups emulates tiled.cl's bank groups — a bank split into
// groups of every size dividing it, the large banks' tuner candidates
// among them — on the banks of the table, the random cases and
// enginetest.Banks, against the reference and the CPU engine's bits.
func TestBankGroups(t *testing.T) {
	tried, vector := 0, 0
	eachBankCandidate(t, kerneltest.BankGroupChecks, func(c enginetest.Case, p *nd.Problem, cand kernels.Tuning) {
		tiled, _ := cand.Shape.(kernels.TiledShape)
		if tiled.BankGroup == 0 {
			return
		}
		l, err := kernels.NewDirect(p, kernels.DirectOptions{MaxLocalBytes: 48 << 10, Shape: cand.Shape})
		if err != nil || l == nil {
			t.Fatalf("%s, %+v: launch %v, %v", c.Name, tiled, l, err)
		}
		if shape, _ := l.Shape.(kernels.TiledShape); shape.BankGroup != tiled.BankGroup || !slices.Contains(l.Defines, fmt.Sprintf("OUT_BANK=%d", len(p.Kernels))) {
			t.Fatalf("%s, %+v: launch shape %+v, defines %v", c.Name, tiled, l.Shape, l.Defines)
		}
		tried++
		if slices.Contains(l.Defines, "VECTOR_STORES=1") {
			vector++
		}
		kernels.CheckDirectLaunch(t, c, p, l)
	})
	t.Logf("%d bank-group launches, %d with vector stores", tried, vector)
	if tried < 40 || vector == 0 {
		t.Errorf("%d bank-group launches tried, %d with vector stores", tried, vector)
	}
}

// TestLocalWeights emulates tiled.cl's launches with a bank's weights in
// local memory — the backends' checks and the tuner's candidates — on the
// banks of the table, the random cases and enginetest.Banks, against the
// reference and the CPU engine's bits.
func TestLocalWeights(t *testing.T) {
	tried := 0
	eachBankCandidate(t, kerneltest.LocalWeightsChecks, func(c enginetest.Case, p *nd.Problem, cand kernels.Tuning) {
		want, _ := cand.Shape.(kernels.TiledShape)
		if !want.LocalWeights {
			return
		}
		l, err := kernels.NewDirect(p, kernels.DirectOptions{MaxLocalBytes: 48 << 10, Shape: cand.Shape})
		if err != nil || l == nil {
			t.Fatalf("%s, %+v: launch %v, %v", c.Name, want, l, err)
		}
		got, _ := l.Shape.(kernels.TiledShape)
		if !got.LocalWeights || got.BankGroup != want.BankGroup || !slices.Contains(l.Defines, "LOCAL_WEIGHTS=1") || !slices.Contains(l.Defines, "TAPS_IN_PARAMS=0") {
			t.Fatalf("%s, %+v: launch shape %+v, defines %v", c.Name, want, l.Shape, l.Defines)
		}
		tried++
		kernels.CheckDirectLaunch(t, c, p, l)
	})
	t.Logf("%d launches with weights in local memory", tried)
	if tried < 40 {
		t.Errorf("only %d launches with weights in local memory tried", tried)
	}
}

// TestTilesInside: tiled.cl moves the last tiles back inside the input
// (TILES_INSIDE) exactly where no output reads outside it (valid mode)
// and the output spans a tile each way (enginetest.Banks' valid-tiles
// cases among them), and nowhere else; the launches give the CPU
// engine's bits.
func TestTilesInside(t *testing.T) {
	inside := 0
	for _, c := range enginetest.OnGPU(enginetest.Banks()) {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for _, s := range []kernels.TiledShape{{TX: 8, TY: 2, RX: 2, RY: 2}, {TX: 8, TY: 2, RX: 4, RY: 1, LocalWeights: true}} {
			l, err := kernels.NewDirect(p, kernels.DirectOptions{MaxLocalBytes: 48 << 10, Shape: s})
			if err != nil || l == nil || l.Family != "tiled" {
				continue // e.g. a bank of one kernel cannot stage its weights: direct.cl
			}
			n := len(p.OutShape) // these cases have one sample per position
			want := c.Spec.Mode == nd.Valid && p.OutShape[n-2] >= s.TY*s.RY && p.OutShape[n-1] >= s.TX*s.RX
			if got := slices.Contains(l.Defines, "TILES_INSIDE=1"); got != want {
				t.Errorf("%s, %+v: TILES_INSIDE %v, want %v", c.Name, s, got, want)
			}
			if want {
				inside++
				kernels.CheckDirectLaunch(t, c, p, l)
			}
		}
	}
	if inside < 3 {
		t.Errorf("%d launches with the last tiles inside", inside)
	}
}

// TestDefaultLocalWeights pins where NewDirect stages a bank's weights in
// local memory untuned: volumes' valid banks of a multiple of 8 kernels
// of 343 taps or more, float32 accumulators; the constant-bank default
// (or bank.cl) elsewhere.
func TestDefaultLocalWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 36))
	kernel := func(n int, shape ...int) []nd.Kernel {
		ks := make([]nd.Kernel, n)
		for i := range ks {
			ks[i] = enginetest.RandomKernel(rng, false, shape...)
		}
		return ks
	}
	for _, tc := range []struct {
		name  string
		in    nd.DType
		shape []int
		ks    []nd.Kernel
		want  kernels.TiledShape // zero: not LocalWeights
	}{
		{"S000 bank of 8", nd.Uint8, []int{64, 64, 64}, kernel(8, 7, 7, 7), kernels.TiledShape{TX: 32, TY: 4, RX: 4, RY: 1, LocalWeights: true}},
		{"S000 bank of 32", nd.Uint8, []int{64, 64, 64}, kernel(32, 7, 7, 7), kernels.TiledShape{TX: 32, TY: 4, RX: 4, RY: 1, BankGroup: 8, LocalWeights: true}},
		{"9×7×7 float32 bank of 16", nd.Float32, []int{64, 64, 64}, kernel(16, 9, 7, 7), kernels.TiledShape{TX: 32, TY: 4, RX: 4, RY: 1, BankGroup: 8, LocalWeights: true}},
		{"5³ bank of 16", nd.Float32, []int{64, 64, 64}, kernel(16, 5, 5, 5), kernels.TiledShape{}},
		{"bank of 12", nd.Uint8, []int{64, 64, 64}, kernel(12, 7, 7, 7), kernels.TiledShape{}},
		{"bank of 4", nd.Uint8, []int{64, 64, 64}, kernel(4, 7, 7, 7), kernels.TiledShape{}},
		{"3³ bank of 8", nd.Float32, []int{64, 64, 64}, kernel(8, 3, 3, 3), kernels.TiledShape{}},
		{"float64 bank of 8", nd.Float64, []int{64, 64, 64}, kernel(8, 7, 7, 7), kernels.TiledShape{}},
		{"image, 7×7 bank of 8", nd.Float32, []int{512, 512}, kernel(8, 7, 7), kernels.TiledShape{}},
	} {
		for _, mode := range []nd.Mode{nd.Valid, nd.Same} {
			spec := nd.Spec{Shape: tc.shape, In: tc.in, Out: nd.Float32, Kernels: tc.ks, Mode: mode}
			if tc.in == nd.Float64 {
				spec.Out = nd.Float64
			}
			p, err := spec.Normalize()
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			l, err := kernels.NewDirect(p, kernels.DirectOptions{MaxLocalBytes: 48 << 10})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			got, _ := l.Shape.(kernels.TiledShape)
			if !got.LocalWeights {
				got = kernels.TiledShape{}
			}
			got.ZChunk = 0
			want := tc.want
			if mode == nd.Same {
				want = kernels.TiledShape{} // tiles need the border rule
			}
			if got != want {
				t.Errorf("%s, %v: %s %v, want LocalWeights shape %v", tc.name, mode, l.Family, l.Shape, want)
			}
		}
	}
}

// TestLocalWeightsDefaultChecked: the backends' LocalWeights checks run
// the untuned decomposition on enginetest.Banks' S000 in small (where it
// stages the weights in local memory), so the device suites run the
// default path with a 7³ bank, not only the checks' shapes.
func TestLocalWeightsDefaultChecked(t *testing.T) {
	for _, c := range enginetest.OnGPU(enginetest.Banks()) {
		if !strings.HasSuffix(c.Name, "valid-7x7x7") {
			continue
		}
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		checks, _ := kerneltest.LocalWeightsChecks(p)
		if len(checks) == 0 || checks[0].Shape != nil {
			t.Fatalf("%s: checks %v do not start with the untuned decomposition", c.Name, checks)
		}
		l, err := kernels.NewDirect(p, kernels.DirectOptions{MaxLocalBytes: 48 << 10})
		if err != nil || !slices.Contains(l.Defines, "TILES_INSIDE=1") || !slices.Contains(l.Defines, "LOCAL_WEIGHTS=1") {
			t.Fatalf("%s: untuned launch %v, %v", c.Name, l, err)
		}
		kernels.CheckDirectLaunch(t, c, p, l)
		return
	}
	t.Fatal("no valid-7x7x7 case in enginetest.Banks")
}

// TestSep3Steps emulates every case whose passes sep3.cl runs through
// kernels.NewSeparable's launches in each of kerneltest.Sep3Checks' decompositions and the
// default one, and
// compares with the reference and the CPU engine's separable bits: one
// launch per bank kernel, no temporaries.
func TestSep3Steps(t *testing.T) {
	ran, set := 0, 0
	for _, c := range kernels.Sep3Cases(t) {
		p, _ := c.Spec.Normalize()
		if strings.HasPrefix(c.Name, "sep3/") {
			set++
		}
		checks, _ := kerneltest.Sep3Checks(p)
		if len(checks) == 0 {
			t.Fatalf("%s: no decomposition checked", c.Name)
		}
		for _, tuning := range checks {
			s, err := kernels.NewSeparable(p, kernels.SeparableOptions{MaxLocalBytes: 48 << 10, Shape: tuning.Shape, FuseSmall: true})
			if err != nil || s == nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			if len(s.Steps) != len(p.Kernels) || s.Temps != 0 || s.TempElems != 0 {
				t.Fatalf("%s: %d steps for %d kernels, %d temporaries", c.Name, len(s.Steps), len(p.Kernels), s.Temps)
			}
			for _, st := range s.Steps {
				if st.Launch.Family != "sep3" || st.From != kernels.Input || st.To != kernels.Output {
					t.Fatalf("%s: a %s step from %v to %v", c.Name, st.Launch.Family, st.From, st.To)
				}
			}
			ran++
			kernels.CheckSeparableSteps(t, c, p, s)
		}
	}
	if set != len(enginetest.Separable3D()) || ran < 4*set {
		t.Errorf("%d runs, %d of the 3-D separable set's %d cases", ran, set, len(enginetest.Separable3D()))
	}
}

// TestSepTileSteps emulates every case whose first two passes fuse through
// kernels.NewSeparable's launches in each of kerneltest.SepTileChecks' decompositions and the
// default one, and compares with the reference and the CPU engine's
// separable bits: per bank kernel a septile.cl launch, then separable.cl
// for any further passes.
func TestSepTileSteps(t *testing.T) {
	ran, set, tiled := 0, 0, 0
	for _, c := range kernels.SepTileCases(t) {
		p, _ := c.Spec.Normalize()
		if strings.HasPrefix(c.Name, "sep2/") {
			set++
		}
		checks, _ := kerneltest.SepTileChecks(p)
		if len(checks) == 0 {
			t.Fatalf("%s: no decomposition checked", c.Name)
		}
		passes := len(kernels.SeparablePasses(p))
		for _, tuning := range checks {
			s, err := kernels.NewSeparable(p, kernels.SeparableOptions{MaxLocalBytes: 48 << 10, Shape: tuning.Shape})
			if err != nil || s == nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			ran++
			if s.Steps[0].Launch.Family == "septile" {
				tiled++
				if len(s.Steps) != len(p.Kernels)*(passes-1) || s.Temps != min(passes-2, 2) {
					t.Fatalf("%s: %d steps, %d temporaries for %d kernels of %d passes", c.Name, len(s.Steps), s.Temps, len(p.Kernels), passes)
				}
			} else if strings.HasPrefix(c.Name, "sep2/") && !p.Wide {
				t.Fatalf("%s, %+v: %s, not septile.cl", c.Name, tuning, s.Steps[0].Launch.Describe())
			}
			kernels.CheckSeparableSteps(t, c, p, s)
		}
	}
	if set != len(enginetest.Separable2D()) || ran < 3*set || tiled < 3*set {
		t.Errorf("%d runs (%d in septile.cl), %d of the 2-D separable set's %d cases", ran, tiled, set, len(enginetest.Separable2D()))
	}
}

// TestBankFamily emulates bank.cl's launches — the backends' checks and
// the tuner's candidates — on the banks of the table, the random cases and
// enginetest.Banks, against the reference and the CPU engine's bits.
func TestBankFamily(t *testing.T) {
	tried := 0
	eachBankCandidate(t, kerneltest.BankChecks, func(c enginetest.Case, p *nd.Problem, cand kernels.Tuning) {
		want, ok := cand.Shape.(kernels.BankShape)
		if !ok {
			return
		}
		l, err := kernels.NewDirect(p, kernels.DirectOptions{MaxLocalBytes: 48 << 10, Shape: cand.Shape})
		if err != nil || l == nil || l.Family != "bank" || l.Shape != want {
			t.Fatalf("%s, %v: launch %v, %v", c.Name, want, l, err)
		}
		tried++
		kernels.CheckDirectLaunch(t, c, p, l)
	})
	t.Logf("%d bank.cl launches", tried)
	if tried < 40 {
		t.Errorf("only %d bank.cl launches tried", tried)
	}
}

// TestDefaultBankShape pins where NewDirect takes bank.cl untuned: images
// with banks of 4 kernels or more and volumes with 16 or more, while the
// window and weights fit registers; its shape, and tiled.cl elsewhere.
func TestDefaultBankShape(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 35))
	kernel := func(n int, shape ...int) []nd.Kernel { // dense weights
		ks := make([]nd.Kernel, n)
		for i := range ks {
			ks[i] = enginetest.RandomKernel(rng, false, shape...)
		}
		return ks
	}
	for _, tc := range []struct {
		name   string
		shape  []int
		ks     []nd.Kernel
		family string
		want   kernels.BankShape
	}{
		{"image, bank of 2", []int{2048, 2048}, kernel(2, 3, 3), "tiled", kernels.BankShape{}},
		{"image, bank of 4", []int{2048, 2048}, kernel(4, 3, 3), "bank", kernels.BankShape{Lanes: 4, Cols: 32, TileX: 32, TileY: 16}},
		{"image, bank of 8", []int{2048, 2048}, kernel(8, 3, 3), "bank", kernels.BankShape{Lanes: 8, Cols: 32, TileX: 32, TileY: 16}},
		{"image, bank of 32, 5×5", []int{2048, 2048}, kernel(32, 5, 5), "bank", kernels.BankShape{Lanes: 16, Cols: 8, TileX: 32, TileY: 32}},
		{"image, bank of 64", []int{2048, 2048}, kernel(64, 3, 3), "bank", kernels.BankShape{Lanes: 32, Cols: 4, TileX: 32, TileY: 32}},
		{"image, bank of 600 (300 lanes)", []int{64, 64}, kernel(600, 3, 3), "tiled", kernels.BankShape{}},
		{"image, bank of 8, 7×7 (registers)", []int{2048, 2048}, kernel(8, 7, 7), "tiled", kernels.BankShape{}},
		{"volume, bank of 8", []int{64, 64, 64}, kernel(8, 3, 3, 3), "tiled", kernels.BankShape{}},
		{"volume, bank of 16", []int{64, 64, 64}, kernel(16, 3, 3, 3), "bank", kernels.BankShape{Lanes: 8, Cols: 16, TileX: 64, TileY: 32}},
		{"stack of images, bank of 8", []int{4, 256, 256}, kernel(8, 1, 3, 3), "bank", kernels.BankShape{Lanes: 8, Cols: 32, TileX: 32, TileY: 16}},
	} {
		spec := nd.Spec{Shape: tc.shape, In: nd.Float32, Kernels: tc.ks}
		p, err := spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		l, err := kernels.NewDirect(p, kernels.DirectOptions{MaxLocalBytes: 48 << 10})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, _ := l.Shape.(kernels.BankShape)
		if l.Family != tc.family || got != tc.want {
			t.Errorf("%s: %s %v, want %s %v", tc.name, l.Family, l.Shape, tc.family, tc.want)
		}
	}
}
