package filters

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/ndconv/ndconv/internal/filterfixtures"
	"github.com/ndconv/ndconv/internal/ref"
	"github.com/ndconv/ndconv/nd"
)

func loadFixtures(t *testing.T) *filterfixtures.Fixtures {
	t.Helper()
	fx, err := filterfixtures.Load("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

// apply runs a Filter on x with the float64 oracle: each term correlated by
// internal/ref, combined by the filter's rule in float64.
func apply(t *testing.T, f Filter, shape []int, x []float64, border nd.Border, cval float64) []float64 {
	t.Helper()
	terms := make([][]float64, len(f.Terms))
	for i, k := range f.Terms {
		spec := nd.Spec{Shape: shape, In: nd.Float64, Kernels: []nd.Kernel{k}, Border: border, CVal: cval}
		if _, err := spec.Normalize(); err != nil {
			t.Fatalf("%s: term %d is no valid kernel: %v", f.Name, i, err)
		}
		terms[i] = ref.Correlate(spec, x).Values
	}
	return f.Combine.Apply(nil, terms...)
}

// closeTo compares with scipy to 1e-10 of the largest value.
func closeTo(got, want []float64) error { return filterfixtures.Compare(got, want, 1e-10) }

// TestScipyOutputs filters the fixture inputs with every named filter and
// border mode and compares with scipy.ndimage (and skimage's Gabor kernel).
func TestScipyOutputs(t *testing.T) {
	fx := loadFixtures(t)
	if len(fx.Cases) < 100 {
		t.Fatalf("only %d fixture cases", len(fx.Cases))
	}
	covered := map[string]bool{}
	for _, c := range fx.Cases {
		in := fx.Inputs[c.Input]
		name := fmt.Sprintf("%s/%s/%s", c.Spec, c.Input, c.Mode)
		t.Run(name, func(t *testing.T) {
			border, err := nd.ParseBorder(c.Mode)
			if err != nil {
				t.Fatal(err)
			}
			n, err := Parse(c.Spec)
			if err != nil {
				t.Fatal(err)
			}
			built, err := n.Build(len(in.Shape))
			if err != nil {
				t.Fatal(err)
			}
			if len(built) != len(c.Outputs) {
				t.Fatalf("%d filters, scipy made %d outputs", len(built), len(c.Outputs))
			}
			for i, f := range built {
				got := apply(t, f, in.Shape, fx.Values(in.Data), border, c.CVal)
				if err := closeTo(got, fx.Values(c.Outputs[i])); err != nil {
					t.Errorf("filter %d (%s) vs %s: %v", i, f.Name, c.Scipy, err)
				}
			}
		})
		covered[fmt.Sprintf("%T/%s/%d", mustParse(t, c.Spec), c.Mode, len(in.Shape))] = true
	}
	// Every filter meets every border mode in 2-D and 3-D (Gabor in 2-D).
	for _, n := range []Named{Gaussian{}, Uniform{}, Sobel{}, Prewitt{}, Scharr{}, Laplace{}, GaussianLaplace{}, GaussianGradientMagnitude{}, Gabor{}, GaborBank{}} {
		for _, mode := range []string{"reflect", "mirror", "nearest", "wrap", "constant"} {
			for _, rank := range []int{2, 3} {
				_, gabor := n.(Gabor)
				_, bank := n.(GaborBank)
				if (gabor || bank) && rank == 3 {
					continue
				}
				if key := fmt.Sprintf("%T/%s/%d", n, mode, rank); !covered[key] {
					t.Errorf("no fixture case for %s", key)
				}
			}
		}
	}
}

func mustParse(t *testing.T, spec string) Named {
	t.Helper()
	n, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestScipyPasswiseConstant pins the documented difference: scipy's
// separable derivative filters pad each pass with cval, so with cval ≠ 0
// their borders differ from one correlation's (make_filters.py records by
// how much), while smoothing filters and laplace agree.
func TestScipyPasswiseConstant(t *testing.T) {
	fx := loadFixtures(t)
	differs := map[string]bool{}
	for _, c := range fx.Cases {
		if c.PasswiseDiff != 0 {
			differs[fmt.Sprintf("%T", mustParse(t, c.Spec))] = true
		}
	}
	for _, typ := range []string{"filters.Sobel", "filters.Prewitt", "filters.Scharr", "filters.GaussianLaplace", "filters.GaussianGradientMagnitude", "filters.Gaussian"} {
		if !differs[typ] {
			t.Errorf("no fixture shows scipy's per-pass cval for %s", typ)
		}
	}
	for _, typ := range []string{"filters.Uniform", "filters.Laplace", "filters.Gabor", "filters.GaborBank"} {
		if differs[typ] {
			t.Errorf("%s: scipy's constant mode differs from one correlation; the package doc says it does not", typ)
		}
	}
}

// TestGaborKernels compares the weights with np.real(skimage's gabor_kernel).
func TestGaborKernels(t *testing.T) {
	fx := loadFixtures(t)
	for _, c := range fx.GaborKernels {
		t.Run(c.Spec, func(t *testing.T) {
			built, err := mustParse(t, c.Spec).Build(2)
			if err != nil {
				t.Fatal(err)
			}
			k := built[0].Terms[0]
			if !slices.Equal(k.Shape, c.Shape) || k.Factors != nil {
				t.Fatalf("shape %v (factors %v), %s has %v", k.Shape, k.Factors != nil, c.Skimage, c.Shape)
			}
			if err := closeTo(k.Weights, fx.Values(c.Weights)); err != nil {
				t.Errorf("vs %s: %v", c.Skimage, err)
			}
		})
	}
}

// TestGaborBankPadding checks that a bank's kernels share one shape and
// hold each member's own kernel, centred, with zeros around it.
func TestGaborBankPadding(t *testing.T) {
	bank := GaborBank{Gabor: Gabor{Frequency: 0.1, SigmaX: 2, SigmaY: 5}, Orientations: 6}
	built, err := bank.Build(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != 6 {
		t.Fatalf("%d filters", len(built))
	}
	shape := built[0].Terms[0].Shape
	grew := false
	for _, f := range built {
		k := f.Terms[0]
		if !slices.Equal(k.Shape, shape) {
			t.Fatalf("%s: shape %v, the bank's first %v", f.Name, k.Shape, shape)
		}
		own, err := mustParse(t, f.Name).Build(2)
		if err != nil {
			t.Fatal(err)
		}
		o := own[0].Terms[0]
		grew = grew || !slices.Equal(o.Shape, shape)
		dy, dx := (shape[0]-o.Shape[0])/2, (shape[1]-o.Shape[1])/2
		for i := range shape[0] {
			for j := range shape[1] {
				want := 0.0
				if oi, oj := i-dy, j-dx; oi >= 0 && oi < o.Shape[0] && oj >= 0 && oj < o.Shape[1] {
					want = o.Weights[oi*o.Shape[1]+oj]
				}
				if got := k.Weights[i*shape[1]+j]; got != want {
					t.Fatalf("%s: weight (%d, %d) is %v, the member's own %v", f.Name, i, j, got, want)
				}
			}
		}
	}
	if !grew {
		t.Error("no member was padded: the test does not exercise padding")
	}
}

// TestTermsShapeAndSeparability checks the Filter contract for every kind:
// terms of one shape spanning exactly rank axes, Factors for the separable
// filters, dense weights for laplace and gabor.
func TestTermsShapeAndSeparability(t *testing.T) {
	for _, c := range []struct {
		n         Named
		ranks     []int
		separable bool
		terms     func(rank int) int
		combine   Combine
	}{
		{Gaussian{Sigma: []float64{1.5}}, []int{1, 2, 3, 4}, true, one, Single},
		{Uniform{Size: []int{4}}, []int{1, 2, 3}, true, one, Single},
		{Sobel{Axis: -1}, []int{1, 2, 3}, true, one, Single},
		{Prewitt{}, []int{1, 2, 3}, true, one, Single},
		{Scharr{Axis: 1}, []int{2, 3}, true, one, Single},
		{Laplace{}, []int{1, 2, 3, 5}, false, one, Single},
		{GaussianLaplace{Sigma: []float64{1}}, []int{1, 2, 3}, true, perAxisTerm, Sum},
		{GaussianGradientMagnitude{Sigma: []float64{1}}, []int{1, 2, 3}, true, perAxisTerm, Magnitude},
		{Gabor{Frequency: 0.2}, []int{2}, false, one, Single},
	} {
		for _, rank := range c.ranks {
			built, err := c.n.Build(rank)
			if err != nil {
				t.Fatalf("%s at rank %d: %v", c.n, rank, err)
			}
			f := built[0]
			if f.Name != c.n.String() || f.Combine != c.combine || len(f.Terms) != c.terms(rank) {
				t.Errorf("%s at rank %d: name %q, combine %v, %d terms", c.n, rank, f.Name, f.Combine, len(f.Terms))
			}
			for _, k := range f.Terms {
				if len(k.Shape) != rank || !slices.Equal(k.Shape, f.Terms[0].Shape) {
					t.Errorf("%s at rank %d: term shape %v (first %v)", c.n, rank, k.Shape, f.Terms[0].Shape)
				}
				if c.separable != (k.Factors != nil) || c.separable == (k.Weights != nil) {
					t.Errorf("%s at rank %d: factors %v, weights %v; want separable %v", c.n, rank, k.Factors != nil, k.Weights != nil, c.separable)
				}
			}
		}
	}
}

func one(int) int           { return 1 }
func perAxisTerm(r int) int { return r }

func TestLaplaceWeights(t *testing.T) {
	built, err := Laplace{}.Build(2)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 1, 0, 1, -4, 1, 0, 1, 0}
	if got := built[0].Terms[0].Weights; !slices.Equal(got, want) {
		t.Errorf("2-D laplace %v, want %v", got, want)
	}
}

// TestGaussianDerivativeWeights pins the correlation orientation: scipy
// correlates with the derivative kernel reversed, so order 1 rises left to
// right (a correlation with it is +d/dx).
func TestGaussianDerivativeWeights(t *testing.T) {
	built, err := Gaussian{Sigma: []float64{1}, Order: []int{1}}.Build(1)
	if err != nil {
		t.Fatal(err)
	}
	w := built[0].Terms[0].Factors[0]
	if len(w) != 9 || !(w[0] < 0 && w[8] > 0) || w[4] != 0 {
		t.Errorf("order-1 weights %v: want 9 taps rising from negative to positive", w)
	}
	sum := 0.0
	for i, v := range w {
		sum += v * float64(i-4)
	}
	if math.Abs(sum-1) > 1e-3 {
		t.Errorf("Σ w·x = %v, want ≈ 1 (the derivative of x)", sum)
	}
}

func TestCombineApply(t *testing.T) {
	a, b := []float64{3, -1, 0}, []float64{4, 1, -2}
	for _, c := range []struct {
		combine Combine
		terms   [][]float64
		want    []float64
	}{
		{Single, [][]float64{a}, a},
		{Sum, [][]float64{a, b}, []float64{7, 0, -2}},
		{Magnitude, [][]float64{a, b}, []float64{5, math.Sqrt2, 2}},
	} {
		if got := c.combine.Apply(nil, c.terms...); !slices.Equal(got, c.want) {
			t.Errorf("%v: %v, want %v", c.combine, got, c.want)
		}
	}
	if s := Combine(9).String(); s != "Combine(9)" {
		t.Errorf("Combine(9).String() = %q", s)
	}
}
