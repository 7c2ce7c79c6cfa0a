package nd

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestBorderTable checks the extension table of DESIGN.md §1 for a b c d,
// three positions beyond each edge.
func TestBorderTable(t *testing.T) {
	want := map[Border]string{
		Reflect:  "cba|abcd|dcb",
		Mirror:   "dcb|abcd|cba",
		Nearest:  "aaa|abcd|ddd",
		Wrap:     "bcd|abcd|abc",
		Constant: "kkk|abcd|kkk",
	}
	for b, w := range want {
		var got strings.Builder
		for p := -3; p < 7; p++ {
			if p == 0 || p == 4 {
				got.WriteByte('|')
			}
			if q, ok := b.Index(p, 4); ok {
				got.WriteByte("abcd"[q])
			} else {
				got.WriteByte('k')
			}
		}
		if got.String() != w {
			t.Errorf("%v: got %s, want %s", b, got.String(), w)
		}
	}
}

// TestBorderFarAway checks every rule far beyond the edges against its
// definition by repeated unfolding, for short axes including n = 1.
func TestBorderFarAway(t *testing.T) {
	for n := 1; n <= 5; n++ {
		for p := -40; p < 40; p++ {
			if q, _ := Reflect.Index(p, n); q != unfold(p, n, false) {
				t.Errorf("reflect(%d, %d) = %d, want %d", p, n, q, unfold(p, n, false))
			}
			if q, _ := Mirror.Index(p, n); q != unfold(p, n, true) {
				t.Errorf("mirror(%d, %d) = %d, want %d", p, n, q, unfold(p, n, true))
			}
			if q, _ := Wrap.Index(p, n); q != ((p%n)+n)%n {
				t.Errorf("wrap(%d, %d) = %d", p, n, q)
			}
			if q, _ := Nearest.Index(p, n); q != min(max(p, 0), n-1) {
				t.Errorf("nearest(%d, %d) = %d", p, n, q)
			}
			if _, ok := Constant.Index(p, n); ok != (p >= 0 && p < n) {
				t.Errorf("constant(%d, %d) inside = %v", p, n, ok)
			}
		}
	}
}

// unfold reflects p into [0, n) one edge at a time, the slow obvious way.
func unfold(p, n int, whole bool) int {
	if whole && n == 1 {
		return 0
	}
	for p < 0 || p >= n {
		if p < 0 {
			p = -p - 1
			if whole {
				p++
			}
		} else {
			p = 2*n - 1 - p
			if whole {
				p--
			}
		}
	}
	return p
}

func TestRound(t *testing.T) {
	cases := []struct {
		v    float64
		dt   DType
		want float64
	}{
		{2.5, Uint8, 2}, {3.5, Uint8, 4}, {-0.5, Int16, 0}, {-1.5, Int16, -2}, {0.49999, Uint8, 0},
		{-1, Uint8, 0}, {255.4, Uint8, 255}, {255.5, Uint8, 255}, {300, Uint8, 255}, {1e20, Uint8, 255},
		{65535.5, Uint16, 65535}, {-40000, Int16, -32768}, {40000, Int16, 32767},
		{3e9, Int32, 2147483647}, {-3e9, Int32, -2147483648}, {2147483646.5, Int32, 2147483646},
		{math.NaN(), Uint8, 0}, {math.NaN(), Int32, 0}, {math.Inf(1), Uint16, 65535}, {math.Inf(-1), Int16, -32768},
		{0.1, Float32, float64(float32(0.1))}, {0.1, Float64, 0.1}, {1e300, Float32, math.Inf(1)},
	}
	for _, c := range cases {
		if got := Round(c.v, c.dt); got != c.want {
			t.Errorf("Round(%v, %v) = %v, want %v", c.v, c.dt, got, c.want)
		}
		// Store must apply the same rule.
		dst, _ := New(c.dt, 1)
		Store(dst.Data, 0, 1, []float64{c.v})
		if got := dst.Float64s()[0]; got != c.want && c.dt != Float64 {
			t.Errorf("Store(%v) into %v = %v, want %v", c.v, c.dt, got, c.want)
		}
	}
}

func TestLoadStoreStrided(t *testing.T) {
	for _, dt := range DTypes {
		a, _ := New(dt, 12)
		Store(a.Data, 1, 3, []float32{1, 2, 3, 4})
		got := make([]float64, 4)
		LoadStrided(got, a.Data, 1, 3)
		if !slices.Equal(got, []float64{1, 2, 3, 4}) {
			t.Errorf("%v: strided round trip gave %v", dt, got)
		}
		if v := a.Float64s(); v[0] != 0 || v[2] != 0 || v[11] != 0 {
			t.Errorf("%v: Store wrote outside its stride: %v", dt, v)
		}
	}
}

func TestNormalizeErrors(t *testing.T) {
	k3 := Kernel{Shape: []int{3}, Weights: []float64{1, 2, 3}}
	k33 := Kernel{Shape: []int{3, 3}, Weights: make([]float64, 9)}
	cases := []struct {
		name string
		spec Spec
		want string
	}{
		{"no kernel", Spec{Shape: []int{4}, In: Uint8}, "no kernel"},
		{"0-d input", Spec{In: Uint8, Kernels: []Kernel{k3}}, "0-D"},
		{"kernel rank above input", Spec{Shape: []int{4}, In: Uint8, Kernels: []Kernel{k33}}, "2-D kernel cannot filter a 1-D input"},
		{"zero-length kernel axis", Spec{Shape: []int{4}, In: Uint8, Kernels: []Kernel{{Shape: []int{0}}}}, "length 0"},
		{"weights count", Spec{Shape: []int{4}, In: Uint8, Kernels: []Kernel{{Shape: []int{2}, Weights: []float64{1}}}}, "needs 2 weights"},
		{"NaN weight", Spec{Shape: []int{4}, In: Uint8, Kernels: []Kernel{{Shape: []int{2}, Weights: []float64{1, math.NaN()}}}}, "not finite"},
		{"Inf factor", Spec{Shape: []int{4}, In: Uint8, Kernels: []Kernel{{Factors: [][]float64{{math.Inf(1)}}}}}, "not finite"},
		{"origin high", Spec{Shape: []int{4}, In: Uint8, Kernels: []Kernel{k3}, Origin: []int{2}}, "origin"},
		{"origin low", Spec{Shape: []int{4}, In: Uint8, Kernels: []Kernel{k3}, Origin: []int{-2}}, "origin"},
		{"origin count", Spec{Shape: []int{4, 4}, In: Uint8, Kernels: []Kernel{k33}, Origin: []int{0, 0, 0}}, "origin"},
		{"valid too small", Spec{Shape: []int{2}, In: Uint8, Kernels: []Kernel{k3}, Mode: Valid}, "valid needs"},
		{"axes out of range", Spec{Shape: []int{4}, In: Uint8, Kernels: []Kernel{k3}, Axes: []int{1}}, "out of range"},
		{"axes repeated", Spec{Shape: []int{4, 4}, In: Uint8, Kernels: []Kernel{k33}, Axes: []int{1, -1}}, "twice"},
		{"axes count", Spec{Shape: []int{4, 4}, In: Uint8, Kernels: []Kernel{k3}, Axes: []int{0, 1}}, "2 axes given for a 1-D kernel"},
		{"bank shapes differ", Spec{Shape: []int{4, 4}, In: Uint8, Kernels: []Kernel{k33, {Shape: []int{3, 1}, Weights: []float64{1, 1, 1}}}}, "differ in shape"},
		{"bad dtype", Spec{Shape: []int{4}, In: DType(99), Kernels: []Kernel{k3}}, "unsupported"},
		{"bad border", Spec{Shape: []int{4}, In: Uint8, Kernels: []Kernel{k3}, Border: 9}, "border"},
		{"negative shape", Spec{Shape: []int{-4}, In: Uint8, Kernels: []Kernel{k3}}, "negative"},
		{"huge shape", Spec{Shape: []int{1 << 30, 1 << 30}, In: Uint8, Kernels: []Kernel{k3}}, "more than"},
		{"huge empty", Spec{Shape: []int{0, math.MaxInt}, In: Uint8, Kernels: []Kernel{k3}, Axes: []int{1}, Mode: Full}, "more than"},
		{"valid of an empty kernel axis", Spec{Shape: []int{0}, In: Uint8, Kernels: []Kernel{k3}, Mode: Valid}, "valid needs"},
		{"valid of an empty one-tap kernel axis", Spec{Shape: []int{0, 4}, In: Uint8, Kernels: []Kernel{{Shape: []int{1, 3}, Weights: []float64{1, 2, 3}}}, Mode: Valid}, "valid needs"},
		{"empty kernel", Spec{Shape: []int{4}, In: Uint8, Kernels: []Kernel{{Shape: []int{0}, Weights: []float64{}}}}, "no filter weights"},
		{"empty factor", Spec{Shape: []int{4, 4}, In: Uint8, Kernels: []Kernel{{Factors: [][]float64{{1}, {}}}}}, "no filter weights"},
		{"0-d input, bank", Spec{Shape: []int{}, In: Float32, Kernels: []Kernel{k3, k3}}, "0-D"},
	}
	for _, c := range cases {
		_, err := c.spec.Normalize()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.want)
		}
		var ae *ArgumentError
		var ue *UnsupportedError
		if !errors.As(err, &ae) && !errors.As(err, &ue) {
			t.Errorf("%s: error %T is neither ArgumentError nor UnsupportedError", c.name, err)
		}
	}
}

// TestNormalizeEmpty: an input with an axis of length 0 gives an empty
// output in every mode (issue 34): same keeps the input's shape, valid
// keeps a length-0 axis the kernel does not span, full keeps a length-0
// axis at 0 (no window touches it) and widens the others; the bank axis
// stays.
func TestNormalizeEmpty(t *testing.T) {
	k33 := Kernel{Shape: []int{3, 3}, Weights: make([]float64, 9)}
	k13 := Kernel{Shape: []int{1, 3}, Weights: []float64{1, 2, 3}}
	cases := []struct {
		spec Spec
		want []int
	}{
		{Spec{Shape: []int{0}, Kernels: []Kernel{{Shape: []int{3}, Weights: []float64{1, 2, 3}}}}, []int{0}},
		{Spec{Shape: []int{0, 5}, Kernels: []Kernel{k33}}, []int{0, 5}},
		{Spec{Shape: []int{0, 5}, Kernels: []Kernel{k33}, Mode: Full}, []int{0, 7}},
		{Spec{Shape: []int{4, 0}, Kernels: []Kernel{k33}, Mode: Full}, []int{6, 0}},
		{Spec{Shape: []int{0, 5}, Kernels: []Kernel{k13}, Mode: Full}, []int{0, 7}}, // scipy.signal.correlate: (0, 7)
		{Spec{Shape: []int{4, 5, 0}, Kernels: []Kernel{k33}, Mode: Valid}, []int{2, 3, 0}},
		{Spec{Shape: []int{4, 5, 0}, Kernels: []Kernel{k33, k33}, Mode: Valid}, []int{2, 3, 0, 2}},
		{Spec{Shape: []int{0, 5, 3}, Kernels: []Kernel{k33}, Axes: []int{1, 2}, Mode: Valid}, []int{0, 3, 1}},
	}
	for _, c := range cases {
		c.spec.In = Float32
		p, err := c.spec.Normalize()
		if err != nil {
			t.Errorf("%v %v: %v", c.spec.Shape, c.spec.Mode, err)
			continue
		}
		if !slices.Equal(p.FullShape(), c.want) || !p.Empty() {
			t.Errorf("%v %v: shape %v (empty %v), want %v", c.spec.Shape, c.spec.Mode, p.FullShape(), p.Empty(), c.want)
		}
	}
}

// TestReadsInside: valid mode reads inside the input on every axis (those
// the kernel does not span too, with any origin); same and full do not,
// unless the kernel is a single tap at the origin.
func TestReadsInside(t *testing.T) {
	k33 := Kernel{Shape: []int{3, 3}, Weights: make([]float64, 9)}
	k11 := Kernel{Shape: []int{1, 1}, Weights: []float64{1}}
	for _, c := range []struct {
		spec Spec
		want bool
	}{
		{Spec{Shape: []int{8, 9}, Kernels: []Kernel{k33}, Mode: Valid}, true},
		{Spec{Shape: []int{8, 9, 4}, Kernels: []Kernel{k33}, Axes: []int{0, 1}, Mode: Valid, Origin: []int{1, -1}}, true},
		{Spec{Shape: []int{8, 9}, Kernels: []Kernel{k33}}, false},
		{Spec{Shape: []int{8, 9}, Kernels: []Kernel{k33}, Mode: Full}, false},
		{Spec{Shape: []int{8, 9}, Kernels: []Kernel{k11}}, true},
	} {
		c.spec.In = Float32
		p, err := c.spec.Normalize()
		if err != nil {
			t.Fatalf("%+v: %v", c.spec, err)
		}
		if got := p.ReadsInside(); got != c.want {
			t.Errorf("%v %v origin %v: ReadsInside %v, want %v", c.spec.Shape, c.spec.Mode, c.spec.Origin, got, c.want)
		}
	}
}

// TestConvolveNormalisation checks DESIGN §1: convolve is correlate with the
// kernel flipped and origin −o − (k even).
func TestConvolveNormalisation(t *testing.T) {
	for _, k := range []int{1, 2, 3, 4, 5, 6} {
		for o := -(k / 2); o <= (k-1)/2; o++ {
			w := make([]float64, k)
			for i := range w {
				w[i] = float64(i + 1)
			}
			p, err := (&Spec{Shape: []int{10}, In: Float32, Kernels: []Kernel{{Shape: []int{k}, Weights: w}}, Origin: []int{o}, Convolve: true}).Normalize()
			if err != nil {
				t.Fatalf("k=%d o=%d: %v", k, o, err)
			}
			o2 := -o
			if k%2 == 0 {
				o2--
			}
			if p.Shift[0] != k/2+o2 {
				t.Errorf("k=%d o=%d: shift %d, want %d", k, o, p.Shift[0], k/2+o2)
			}
			if p.Kernels[0].Dense[0] != float64(k) {
				t.Errorf("k=%d: kernel not flipped: %v", k, p.Kernels[0].Dense)
			}
		}
	}
}

func TestFactorize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 50; trial++ {
		shape := []int{1 + rng.IntN(5), 1 + rng.IntN(5), 1 + rng.IntN(3)}
		var fs [][]float64
		for _, n := range shape {
			f := make([]float64, n)
			for i := range f {
				// Bounded away from zero, so a perturbation cannot hide
				// behind a near-zero factor.
				f[i] = (0.5 + rng.Float64()) * float64(1-2*rng.IntN(2))
			}
			fs = append(fs, f)
		}
		w := outer(fs)
		got := Factorize(shape, w)
		if got == nil {
			t.Fatalf("shape %v: rank-1 kernel not detected", shape)
		}
		for i, v := range outer(got) {
			if math.Abs(v-w[i]) > 1e-12 {
				t.Fatalf("shape %v: factors rebuild %v, want %v", shape, v, w[i])
			}
		}
		// Perturb one weight beyond the tolerance: no longer rank-1, unless
		// only one axis is longer than 1 (every 1-D kernel is rank-1).
		long := 0
		for _, n := range shape {
			if n > 1 {
				long++
			}
		}
		if long > 1 {
			w[rng.IntN(len(w))] += 1e-3
			if Factorize(shape, w) != nil {
				t.Errorf("shape %v: perturbed kernel reported rank-1", shape)
			}
		}
	}
	if Factorize([]int{2, 2}, []float64{0, 0, 0, 0}) == nil {
		t.Error("zero kernel not separable")
	}
}

func TestAxesTranspose(t *testing.T) {
	// A 2×3 kernel on axes (1, 0) of a 3-D input lies transposed, as 3×2×1.
	w := []float64{1, 2, 3, 4, 5, 6}
	p, err := (&Spec{Shape: []int{5, 5, 5}, In: Uint8, Kernels: []Kernel{{Shape: []int{2, 3}, Weights: w}}, Axes: []int{1, 0}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.KShape, []int{3, 2, 1}) || !slices.Equal(p.Kernels[0].Dense, []float64{1, 4, 2, 5, 3, 6}) {
		t.Errorf("got shape %v weights %v", p.KShape, p.Kernels[0].Dense)
	}
}

func TestParse(t *testing.T) {
	for name, want := range map[string]Border{
		"reflect": Reflect, "symmetric": Reflect, "grid-mirror": Reflect, " Symmetric ": Reflect,
		"mirror": Mirror, "reflect101": Mirror, "REFLECT_101": Mirror,
		"nearest": Nearest, "edge": Nearest, "replicate": Nearest,
		"wrap": Wrap, "grid-wrap": Wrap,
		"constant": Constant, "grid-constant": Constant,
	} {
		if b, err := ParseBorder(name); err != nil || b != want {
			t.Errorf("ParseBorder(%q) = %v, %v; want %v", name, b, err, want)
		}
	}
	_, err := ParseBorder("periodic")
	if err == nil || !strings.Contains(err.Error(), `"periodic"`) {
		t.Fatalf("unknown border error: %v", err)
	}
	for _, name := range []string{"reflect", "symmetric", "reflect101", "reflect_101", "edge", "replicate", "grid-wrap", "grid-constant", "grid-mirror", "constant"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error %q does not list %s", err, name)
		}
	}
	if m, err := ParseMode("Valid"); err != nil || m != Valid {
		t.Errorf("Valid: %v %v", m, err)
	}
	if _, err := ParseMode("circular"); err == nil {
		t.Error("unknown mode accepted")
	}
	for _, dt := range append(DTypes, ComplexDTypes...) {
		if got, err := ParseDType(dt.String()); err != nil || got != dt {
			t.Errorf("ParseDType(%v) = %v, %v", dt, got, err)
		}
	}
	for code, want := range map[string]DType{"c8": Complex64, "c16": Complex128} {
		if got, err := ParseDType(code); err != nil || got != want {
			t.Errorf("ParseDType(%q) = %v, %v", code, got, err)
		}
	}
	if _, err := ParseDType("complex256"); err == nil {
		t.Error("complex256 accepted")
	}
}
