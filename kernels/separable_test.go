package kernels

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// emulateSeparable runs a Separable's steps on the CPU as separable.cl
// does, element by element in the accumulator type F, one fused
// multiply-add per tap, and returns the output stored in the problem's
// dtype.
func emulateSeparable[F nd.Float](t *testing.T, s *Separable, p *nd.Problem, in []float64) nd.Array {
	out := make([]F, len(p.Kernels)*product(p.OutShape))
	temps := [2][]F{make([]F, s.TempElems), make([]F, s.TempElems)}
	input := make([]F, len(in))
	for i, v := range in {
		input[i] = F(v)
	}
	buffer := func(r Role) []F {
		switch r {
		case Input:
			return input
		case Output:
			return out
		}
		return temps[r-Temp0]
	}
	for _, step := range s.Steps {
		l := step.Launch
		def := map[string]int{}
		for _, d := range l.Defines {
			name, value, _ := strings.Cut(d, "=")
			def[name], _ = strconv.Atoi(value)
		}
		if l.Family == "sepfused" || l.Family == "sepring" {
			emulateSepFused(t, l, def, p, buffer(step.From), buffer(step.To))
			continue
		}
		if l.Family == "sep3" {
			emulateSep3(t, l, def, p, buffer(step.From), buffer(step.To))
			continue
		}
		if l.Family == "septile" {
			emulateSepTile(t, l, def, p, buffer(step.From), buffer(step.To))
			continue
		}
		k, shift := def["K"], def["SHIFT"]
		nIn, nOut, inner, total, stride, offset := int(l.Scalars[0]), int(l.Scalars[1]), int(l.Scalars[2]), int(l.Scalars[3]), int(l.Scalars[4]), int(l.Scalars[5])
		if k != len(l.Taps) {
			t.Fatalf("K=%d with %d taps", k, len(l.Taps))
		}
		if l.Groups[0]*l.Local[0] <= 0 {
			t.Fatalf("an empty grid %v", l.Groups)
		}
		from, to := buffer(step.From), buffer(step.To)
		for index := range total {
			c, rest := index%inner, index/inner
			i, line := rest%nOut, rest/nOut
			var acc F
			for j, w64 := range l.Taps {
				w := F(w64)
				if w == 0 {
					continue
				}
				v := F(l.CVal)
				if q, ok := p.Border.Index(i+j-shift, nIn); ok {
					v = from[(line*nIn+q)*inner+c]
				}
				acc = nd.FMA(w, v, acc)
			}
			to[index*stride+offset] = acc
		}
		// An intermediate pass stores ACC_T as it is; only the last pass
		// rounds, when the whole output is stored below.
	}
	return outputArray(p, out)
}

// emulateSepFused computes a sepfused.cl or sepring.cl launch
// (emulateFusedPasses), checking its geometry and grid.
func emulateSepFused[F nd.Float](t *testing.T, l *Launch, def map[string]int, p *nd.Problem, from, to []F) {
	t.Helper()
	kx, ky, c := def["KX"], def["KY"], def["C"]
	tx, rx, seg := def["TX"], def["RX"], def["SEG"]
	my, mx, planes := int(l.Scalars[2]), int(l.Scalars[3]), int(l.Scalars[4])
	if len(l.Taps) != kx+ky+1 || l.Local != [3]int{tx, 1, 1} {
		t.Fatalf("sepfused: %d taps for KX=%d KY=%d, local %v for TX=%d", len(l.Taps), kx, ky, l.Local, tx)
	}
	if l.Groups[0]*tx*rx < mx*c || l.Groups[1]*seg < my || l.Groups[2] > planes || l.Groups[2] < 1 {
		t.Fatalf("sepfused: groups %v do not cover %d planes of %d×%d", l.Groups, planes, my, mx*c)
	}
	emulateFusedPasses(l, def, p, from, to)
}

// emulateFusedPasses computes a launch of the fused X and Y passes
// (sepfused.cl, sepring.cl, septile.cl: their arguments are the same) as
// their comments define it: per plane, each intermediate row the X pass
// (CVAL2 for a row outside the input with the constant border), then each
// output the Y pass over those rows.
func emulateFusedPasses[F nd.Float](l *Launch, def map[string]int, p *nd.Problem, from, to []F) {
	kx, ky, sx, sy, c := def["KX"], def["KY"], def["SHIFT_X"], def["SHIFT_Y"], def["C"]
	ny, nx, my, mx, planes := int(l.Scalars[0]), int(l.Scalars[1]), int(l.Scalars[2]), int(l.Scalars[3]), int(l.Scalars[4])
	stride, offset := int(l.Scalars[5]), int(l.Scalars[6])
	fx, fy, cval2 := l.Taps[:kx], l.Taps[kx:kx+ky], F(l.Taps[kx+ky])
	inter := make([]F, ny*mx*c)
	for plane := range planes {
		for r := range ny {
			for e := range mx * c {
				x, ch := e/c, e%c
				var acc F
				for j, w64 := range fx {
					if w := F(w64); w != 0 {
						v := F(l.CVal)
						if q, ok := p.Border.Index(x+j-sx, nx); ok {
							v = from[((plane*ny+r)*nx+q)*c+ch]
						}
						acc = nd.FMA(w, v, acc)
					}
				}
				inter[r*mx*c+e] = acc
			}
		}
		for y := range my {
			for e := range mx * c {
				var acc F
				for j, w64 := range fy {
					if w := F(w64); w != 0 {
						v := cval2
						if q, ok := p.Border.Index(y+j-sy, ny); ok {
							v = inter[q*mx*c+e]
						}
						acc = nd.FMA(w, v, acc)
					}
				}
				to[((plane*my+y)*mx*c+e)*stride+offset] = acc
			}
		}
	}
}

// TestSeparableSteps emulates every separable case of the engines' table
// and the random cases through NewSeparable's steps, compares with the
// float64 reference, and with the CPU engine's separable method bit for bit.
func TestSeparableSteps(t *testing.T) {
	for _, unfused := range []bool{false, true} {
		// A forced shape fuses the table's small cases too.
		testSeparableSteps(t, SeparableOptions{MaxLocalBytes: 48 << 10, Unfused: unfused, Shape: SepFusedShape{TX: 32, RX: 2, SEG: 5}})
	}
}

func testSeparableSteps(t *testing.T, opt SeparableOptions) {
	ran, fused := 0, 0
	for _, c := range engineCases() {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if !p.Separable() {
			continue
		}
		s, err := NewSeparable(p, opt)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if s == nil {
			continue
		}
		ran++
		if s.Steps[0].Launch.Family == "sepfused" {
			fused++
		}
		checkSeparableSteps(t, c, p, s)
	}
	if ran < 50 || (!opt.Unfused && fused < 20) {
		t.Errorf("only %d separable cases, %d of them fused", ran, fused)
	}
}

// checkSeparableSteps emulates a separable method's steps in the problem's
// accumulator type and checks them against the reference and the CPU
// engine's bits.
func checkSeparableSteps(t *testing.T, c enginetest.Case, p *nd.Problem, s *Separable) {
	t.Helper()
	var got nd.Array
	if p.Wide {
		got = emulateSeparable[float64](t, s, p, c.Input.Float64s())
	} else {
		got = emulateSeparable[float32](t, s, p, c.Input.Float64s())
	}
	engine, err := cpu.NewSeparable(p, cpu.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstEngines(t, c, p, got, engine, s.Steps[0].Launch.Defines)
}

// TestSeparableTuningCandidates: every sepfused.cl, sepring.cl and
// septile.cl decomposition `ndconv tune` may choose gives the CPU engine's
// bits (emulated; sep3.cl's: TestSep3Candidates).
func TestSeparableTuningCandidates(t *testing.T) {
	tried := 0
	for i, c := range engineCases() {
		p, err := c.Spec.Normalize()
		if err != nil || !p.Separable() || i%5 != 0 {
			continue
		}
		for _, cand := range TuningCandidates(p, true) {
			if _, ok := cand.Shape.(Sep3Shape); ok {
				continue
			}
			s, err := NewSeparable(p, SeparableOptions{MaxLocalBytes: 48 << 10, Shape: cand.Shape})
			if err != nil || s == nil {
				continue
			}
			tried++
			checkSeparableSteps(t, c, p, s)
		}
	}
	if tried < 100 {
		t.Errorf("only %d candidate launches tried", tried)
	}
}

// TestDefaultSepRing: untuned, large float32 images with 15 to 32 Y taps
// run sepring.cl prefetching; smaller images, shorter kernels, channels
// and volumes keep sepfused.cl.
func TestDefaultSepRing(t *testing.T) {
	for _, tc := range []struct {
		shape []int
		k     int
		ring  bool
	}{
		{[]int{8192, 8192}, 31, true},
		{[]int{8192, 8192}, 15, true},
		{[]int{8192, 8192}, 7, false},
		{[]int{8192, 8192}, 33, false},
		{[]int{2048, 2048}, 31, false},
		{[]int{4096, 4096, 4}, 15, false},
	} {
		factors := make([][]float64, len(tc.shape))
		kshape := make([]int, len(tc.shape))
		for d := range factors {
			kshape[d], factors[d] = 1, []float64{1}
		}
		for d := range 2 {
			kshape[d] = tc.k
			factors[d] = make([]float64, tc.k)
			for i := range factors[d] {
				factors[d][i] = float64(i + 1)
			}
		}
		spec := nd.Spec{Shape: tc.shape, In: nd.Float32, Kernels: []nd.Kernel{{Shape: kshape, Factors: factors}}}
		p, err := spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSeparable(p, SeparableOptions{MaxLocalBytes: 48 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Steps[0].Launch.Family == "sepring"; got != tc.ring {
			t.Errorf("%v, %d taps: first launch %s (%+v)", tc.shape, tc.k, s.Steps[0].Launch.Family, s.Steps[0].Launch.Shape)
		}
	}
}

// TestFuseSmall: SeparableOptions.FuseSmall makes small problems run the
// fused strips (sepfused.cl for 2-D, sep3.cl for 3-D) where untuned they
// run septile.cl's tiles, and leaves large ones and forced shapes as they
// are.
func TestFuseSmall(t *testing.T) {
	small2, small3 := nd.Spec{Shape: []int{48, 64}, Kernels: []nd.Kernel{factorsOf(5, 5)}},
		nd.Spec{Shape: []int{12, 16, 20}, Kernels: []nd.Kernel{factorsOf(3, 3, 3)}}
	large := nd.Spec{Shape: []int{4096, 2048}, Kernels: []nd.Kernel{factorsOf(5, 5)}}
	tile := SepTileShape{TX: 8, TY: 2, RX: 4, RY: 1}
	for _, tc := range []struct {
		name  string
		spec  nd.Spec
		opt   SeparableOptions
		first string
	}{
		{"2-D untuned", small2, SeparableOptions{}, "septile"},
		{"2-D fused", small2, SeparableOptions{FuseSmall: true}, "sepfused"},
		{"3-D untuned", small3, SeparableOptions{}, "septile"},
		{"3-D fused", small3, SeparableOptions{FuseSmall: true}, "sep3"},
		{"large untuned", large, SeparableOptions{}, "sepfused"},
		{"large fused", large, SeparableOptions{FuseSmall: true}, "sepfused"},
		{"forced tile", small2, SeparableOptions{FuseSmall: true, Shape: tile}, "septile"},
	} {
		tc.opt.MaxLocalBytes = 48 << 10
		_, families := planSeparable(t, tc.name, tc.spec, tc.opt)
		if families[0] != tc.first {
			t.Errorf("%s: launches %v, want %s first", tc.name, families, tc.first)
		}
	}
}
