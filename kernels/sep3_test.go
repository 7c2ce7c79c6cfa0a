package kernels

import (
	"slices"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// emulateSep3 computes a sep3.cl launch as its comment defines it: per
// volume, the X pass of every input row, the Y pass of every plane over
// those rows (CVAL2 for a row outside with the constant border), then each
// output the Z pass over those planes (CVAL3 for a plane outside) —
// checking the launch's geometry and grid along the way.
func emulateSep3[F nd.Float](t *testing.T, l *Launch, def map[string]int, p *nd.Problem, from, to []F) {
	t.Helper()
	kx, ky, kz, c := def["KX"], def["KY"], def["KZ"], def["C"]
	sx, sy, sz := def["SHIFT_X"], def["SHIFT_Y"], def["SHIFT_Z"]
	tx, ty, rx, ry, seg := def["TX"], def["TY"], def["RX"], def["RY"], def["SEG"]
	sc := make([]int, len(l.Scalars))
	for i, v := range l.Scalars {
		sc[i] = int(v)
	}
	nz, ny, nx, mz, my, mx, outer, stride, offset := sc[0], sc[1], sc[2], sc[3], sc[4], sc[5], sc[6], sc[7], sc[8]
	if len(l.Taps) != kx+ky+kz+2 || l.Local != [3]int{tx, ty, 1} || tx%rx != 0 || def["TAPS_N"] != len(l.Taps) {
		t.Fatalf("sep3: %d taps for KX=%d KY=%d KZ=%d, local %v for %dx%d, RX=%d", len(l.Taps), kx, ky, kz, l.Local, tx, ty, rx)
	}
	if l.Groups[0]*tx < mx*c || l.Groups[1]*ty*ry < my || l.Groups[2] > outer*ceilDiv(mz, seg) || l.Groups[2] < 1 {
		t.Fatalf("sep3: groups %v do not cover %d volumes of %d×%d×%d", l.Groups, outer, mz, my, mx*c)
	}
	shape, _ := l.Shape.(Sep3Shape)
	if want := sep3LocalBytes(shape, kx, ky, c, AccBytes(p)); l.LocalBytes != want || shape != (Sep3Shape{tx, ty, rx, ry, seg}) {
		t.Fatalf("sep3: local bytes %d (want %d), shape %+v", l.LocalBytes, want, l.Shape)
	}
	fx, fy, fz := l.Taps[:kx], l.Taps[kx:kx+ky], l.Taps[kx+ky:kx+ky+kz]
	cval2, cval3 := F(l.Taps[kx+ky+kz]), F(l.Taps[kx+ky+kz+1])
	row := mx * c
	pass := func(f []float64, i, shift, n int, outside F, at func(q int) F) F {
		var acc F
		for j, w64 := range f {
			if w := F(w64); w != 0 {
				v := outside
				if q, ok := p.Border.Index(i+j-shift, n); ok {
					v = at(q)
				}
				acc = nd.FMA(w, v, acc)
			}
		}
		return acc
	}
	xs := make([]F, nz*ny*row)  // after the X pass
	xys := make([]F, nz*my*row) // after the Y pass
	for v := range outer {
		for z := range nz {
			for y := range ny {
				for e := range row {
					x, ch := e/c, e%c
					xs[(z*ny+y)*row+e] = pass(fx, x, sx, nx, F(l.CVal), func(q int) F { return from[(((v*nz+z)*ny+y)*nx+q)*c+ch] })
				}
			}
			for y := range my {
				for e := range row {
					xys[(z*my+y)*row+e] = pass(fy, y, sy, ny, cval2, func(q int) F { return xs[(z*ny+q)*row+e] })
				}
			}
		}
		for z := range mz {
			for y := range my {
				for e := range row {
					to[(((v*mz+z)*my+y)*row+e)*stride+offset] = pass(fz, z, sz, nz, cval3, func(q int) F { return xys[(q*my+y)*row+e] })
				}
			}
		}
	}
}

// sep3Cases are the engines' cases whose passes sep3.cl runs: the 3-D
// separable set and those of the table and the random cases.
func sep3Cases(t *testing.T) []enginetest.Case {
	var cases []enginetest.Case
	for _, c := range append(enginetest.Separable3D(), engineCases()...) {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if _, ok := sep3Axes(p); ok && p.Separable() {
			cases = append(cases, c)
		}
	}
	return cases
}

// TestSep3Planner: NewSeparable runs sep3.cl, one launch per bank kernel
// and no temporaries, for large problems whose passes are Z, Y, X on
// adjacent axes, and plans every other problem as before.
func TestSep3Planner(t *testing.T) {
	opt := SeparableOptions{MaxLocalBytes: 48 << 10}
	for _, tc := range []struct {
		name     string
		spec     nd.Spec
		opt      SeparableOptions
		families []string
		temps    int
	}{
		{"512³ 7³", nd.Spec{Shape: []int{512, 512, 512}, Kernels: []nd.Kernel{factorsOf(7, 7, 7)}}, opt, []string{"sep3"}, 0},
		{"bank of 2", nd.Spec{Shape: []int{128, 128, 128}, Kernels: []nd.Kernel{factorsOf(5, 5, 5), factorsOf(5, 5, 5)}}, opt, []string{"sep3", "sep3"}, 0},
		{"channels and an outer axis", nd.Spec{Shape: []int{2, 64, 128, 128, 3}, Axes: []int{1, 2, 3}, Kernels: []nd.Kernel{factorsOf(3, 3, 3)}}, opt, []string{"sep3"}, 0},
		{"float64", nd.Spec{Shape: []int{128, 128, 128}, In: nd.Float64, Kernels: []nd.Kernel{factorsOf(7, 7, 7)}}, opt, []string{"sep3"}, 0},
		{"small", nd.Spec{Shape: []int{32, 32, 32}, Kernels: []nd.Kernel{factorsOf(3, 3, 3)}}, opt, []string{"septile", "separable"}, 1},
		{"unfused", nd.Spec{Shape: []int{128, 128, 128}, Kernels: []nd.Kernel{factorsOf(3, 3, 3)}}, SeparableOptions{MaxLocalBytes: 48 << 10, Unfused: true}, []string{"separable", "separable", "separable"}, 2},
		{"sepfused forced", nd.Spec{Shape: []int{128, 128, 128}, Kernels: []nd.Kernel{factorsOf(3, 3, 3)}}, SeparableOptions{MaxLocalBytes: 48 << 10, Shape: SepFusedShape{TX: 64, RX: 2, SEG: 64}}, []string{"sepfused", "sepfused"}, 1},
		{"no local memory", nd.Spec{Shape: []int{128, 128, 128}, Kernels: []nd.Kernel{factorsOf(3, 3, 3)}}, SeparableOptions{MaxLocalBytes: 1 << 10}, []string{"separable", "separable", "separable"}, 2},
		{"Z and X", nd.Spec{Shape: []int{128, 128, 128}, Kernels: []nd.Kernel{factorsOf(3, 1, 3)}}, opt, []string{"separable", "separable"}, 1},
		{"2-D", nd.Spec{Shape: []int{2048, 2048}, Kernels: []nd.Kernel{factorsOf(7, 7)}}, opt, []string{"sepfused"}, 0},
		{"4-D kernel", nd.Spec{Shape: []int{16, 64, 64, 64}, Kernels: []nd.Kernel{factorsOf(3, 3, 3, 3)}}, opt, []string{"sepfused", "sepfused", "sepfused"}, 2},
	} {
		s, families := planSeparable(t, tc.name, tc.spec, tc.opt)
		if !slices.Equal(families, tc.families) || s.Temps != tc.temps {
			t.Errorf("%s: launches %v with %d temporaries, want %v with %d", tc.name, families, s.Temps, tc.families, tc.temps)
		}
	}
}

// planSeparable is NewSeparable's plan for spec (float32 unless its In
// says otherwise) within opt, and the families of its launches.
func planSeparable(t *testing.T, name string, spec nd.Spec, opt SeparableOptions) (*Separable, []string) {
	t.Helper()
	if spec.In == 0 {
		spec.In = nd.Float32
	}
	p, err := spec.Normalize()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	s, err := NewSeparable(p, opt)
	if err != nil || s == nil {
		t.Fatalf("%s: %v", name, err)
	}
	var families []string
	for _, st := range s.Steps {
		families = append(families, st.Launch.Family)
	}
	return s, families
}

// TestSep3Candidates: the default decomposition for 512³ 7³ and every
// candidate `ndconv tune` may choose fit, and candidates give the CPU
// engine's bits (emulated, on a volume large enough for them).
func TestSep3Candidates(t *testing.T) {
	p, err := (&nd.Spec{Shape: []int{512, 512, 512}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{7, 7, 7}, Factors: [][]float64{{1, 2, 3, 4, 3, 2, 1}, {1, 2, 3, 4, 3, 2, 1}, {1, 2, 3, 4, 3, 2, 1}}}}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	def := defaultSep3Shape(p, 2)
	if !sep3Fits(def, 7, 7, 7, 1, false, 48<<10) {
		t.Fatalf("default %+v does not fit", def)
	}
	t.Logf("512³ 7³: default %v", def)
	cands := TuningCandidates(p, true)
	n := 0
	for _, c := range cands {
		if _, ok := c.Shape.(Sep3Shape); ok {
			n++
		}
	}
	if n < 48 {
		t.Errorf("only %d sep3.cl candidates", n)
	}
	checkCandidates(t, enginetest.Separable3D(), 9, "sep3", func(cand Tuning) bool { _, ok := cand.Shape.(Sep3Shape); return ok })
}

// checkCandidates emulates every every-th of the cases' tuner candidates
// that mine selects, each of which must run family, against the
// reference and the CPU engine's bits.
func checkCandidates(t *testing.T, cases []enginetest.Case, every int, family string, mine func(Tuning) bool) {
	t.Helper()
	tried := 0
	for i, c := range cases {
		q, err := c.Spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		for j, cand := range TuningCandidates(q, true) {
			if !mine(cand) || (i+j)%every != 0 {
				continue
			}
			s, err := NewSeparable(q, SeparableOptions{MaxLocalBytes: 48 << 10, Shape: cand.Shape})
			if err != nil || s == nil || s.Steps[0].Launch.Family != family {
				t.Fatalf("%s, %+v: %v", c.Name, cand, err)
			}
			tried++
			checkSeparableSteps(t, c, q, s)
		}
	}
	if tried < 20 {
		t.Errorf("only %d candidate launches tried", tried)
	}
}
