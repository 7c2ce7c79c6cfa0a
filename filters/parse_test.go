package filters

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

func TestParseCanonical(t *testing.T) {
	for _, c := range []struct {
		spec, canonical string
		want            Named
	}{
		{"gaussian:sigma=2", "gaussian:sigma=2", Gaussian{Sigma: []float64{2}}},
		{" Gaussian : Sigma = 2 x 1 , order=0x1,truncate=3 ", "gaussian:sigma=2x1,order=0x1,truncate=3",
			Gaussian{Sigma: []float64{2, 1}, Order: []int{0, 1}, Truncate: 3}},
		{"gaussian:sigma=0x1.5,order=2", "gaussian:sigma=0x1.5,order=2", Gaussian{Sigma: []float64{0, 1.5}, Order: []int{2}}},
		{"gaussian:sigma=-0", "gaussian:sigma=0", Gaussian{Sigma: []float64{0}}},
		{"uniform", "uniform", Uniform{}},
		{"uniform:size=5", "uniform:size=5", Uniform{Size: []int{5}}},
		{"uniform:size=4x1x2", "uniform:size=4x1x2", Uniform{Size: []int{4, 1, 2}}},
		{"sobel", "sobel:axis=-1", Sobel{Axis: -1}},
		{"SOBEL:axis=0", "sobel:axis=0", Sobel{}},
		{"prewitt:axis=+1", "prewitt:axis=1", Prewitt{Axis: 1}},
		{"scharr", "scharr:axis=-1", Scharr{Axis: -1}},
		{"laplace", "laplace", Laplace{}},
		{"log:sigma=1.5", "log:sigma=1.5", GaussianLaplace{Sigma: []float64{1.5}}},
		{"gaussian_laplace:sigma=1x2,truncate=3", "log:sigma=1x2,truncate=3", GaussianLaplace{Sigma: []float64{1, 2}, Truncate: 3}},
		{"gaussian-laplace:sigma=1", "log:sigma=1", GaussianLaplace{Sigma: []float64{1}}},
		{"ggm:sigma=1", "gradient-magnitude:sigma=1", GaussianGradientMagnitude{Sigma: []float64{1}}},
		{"gaussian_gradient_magnitude:sigma=2", "gradient-magnitude:sigma=2", GaussianGradientMagnitude{Sigma: []float64{2}}},
		{"gradient-magnitude:sigma=2,truncate=2.5", "gradient-magnitude:sigma=2,truncate=2.5", GaussianGradientMagnitude{Sigma: []float64{2}, Truncate: 2.5}},
		{"gabor:frequency=0.2,theta=0.5", "gabor:frequency=0.2,theta=0.5", Gabor{Frequency: 0.2, Theta: 0.5}},
		{"gabor:offset=1,sigma-y=3,SIGMA_X=2,n_stds=2.5,bandwidth=1.5,frequency=0.1",
			"gabor:frequency=0.1,bandwidth=1.5,sigma_x=2,sigma_y=3,n_stds=2.5,offset=1",
			Gabor{Frequency: 0.1, Bandwidth: 1.5, SigmaX: 2, SigmaY: 3, NStds: 2.5, Offset: 1}},
		{"gabor-bank:orientations=8,frequency=0.2", "gabor-bank:orientations=8,frequency=0.2",
			GaborBank{Gabor: Gabor{Frequency: 0.2}, Orientations: 8}},
		{"gabor_bank:frequency=0.2,orientations=3,theta=-1", "gabor-bank:orientations=3,frequency=0.2,theta=-1",
			GaborBank{Gabor: Gabor{Frequency: 0.2, Theta: -1}, Orientations: 3}},
	} {
		got, err := Parse(c.spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.spec, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %#v, want %#v", c.spec, got, c.want)
		}
		if s := got.String(); s != c.canonical {
			t.Errorf("Parse(%q).String() = %q, want %q", c.spec, s, c.canonical)
		}
		again, err := Parse(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", got.String(), again, err, got)
		}
	}
}

// TestStringRoundTrip: every Named's String parses back to an equal value,
// with values that need all 17 digits.
func TestStringRoundTrip(t *testing.T) {
	for _, n := range []Named{
		Gaussian{Sigma: []float64{math.Pi, 1e-16, 0.1}, Order: []int{1, 0, 2}, Truncate: 4},
		Gaussian{Sigma: []float64{1e300}},
		Uniform{Size: []int{1, 1 << 40}},
		Sobel{Axis: -3}, Prewitt{Axis: 31}, Scharr{Axis: -32}, Laplace{},
		GaussianLaplace{Sigma: []float64{0.1 + 0.2}, Truncate: 1e-300},
		GaussianGradientMagnitude{Sigma: []float64{2, 0}},
		Gabor{Frequency: 1.0 / 3, Theta: -math.Pi / 7, Bandwidth: 0.5, SigmaX: 2, SigmaY: 1e-3, NStds: 4, Offset: math.E},
		GaborBank{Gabor: Gabor{Frequency: 0.25, Theta: 5e-324}, Orientations: 12},
	} {
		got, err := Parse(n.String())
		if err != nil || !reflect.DeepEqual(got, n) {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", n.String(), got, err, n)
		}
	}
}

func TestNames(t *testing.T) {
	want := []string{"gaussian", "uniform", "sobel", "prewitt", "scharr", "laplace", "log", "gradient-magnitude", "gabor", "gabor-bank"}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	for _, name := range want {
		if _, err := Parse(name); err != nil {
			var pe *ParameterError
			if !errors.As(err, &pe) || !strings.HasPrefix(pe.Msg, "required") {
				t.Errorf("Parse(%q): %v (want success or a missing required parameter)", name, err)
			}
		}
	}
}

// TestParseErrors: each bad spec fails with the right error type, and its
// message says what is wrong.
func TestParseErrors(t *testing.T) {
	var (
		syntax  *SyntaxError
		unknown *UnknownFilterError
		param   *ParameterError
	)
	long := "gaussian:sigma=1" + strings.Repeat("x1", nd.MaxRank)
	for _, c := range []struct {
		spec   string
		target any
		param  string // ParameterError.Param
		msg    string // a substring of the message
	}{
		{"", &syntax, "", "empty"},
		{"   ", &syntax, "", "gaussian, uniform"},
		{":sigma=1", &syntax, "", "no filter name"},
		{"gaussian:sigma", &syntax, "", `"sigma" is not key=value`},
		{"gaussian:sigma=1,", &syntax, "", "not key=value"},
		{"gaussian:", &syntax, "", "not key=value"},
		{"blur:sigma=1", &unknown, "", "known: gaussian, uniform, sobel, prewitt, scharr, laplace, log, gradient-magnitude, gabor, gabor-bank"},
		{"gaussian:sigm=2", &param, "sigm", "gaussian takes sigma, order, truncate"},
		{"laplace:size=3", &param, "size", "laplace takes no parameters"},
		{"gaussian", &param, "sigma", "required"},
		{"gaussian:order=1", &param, "sigma", "required"},
		{"gaussian:sigma=", &param, "sigma", "no value"},
		{"gaussian:sigma=-1", &param, "sigma", "≥ 0"},
		{"gaussian:sigma=1x-0.5", &param, "sigma", "≥ 0"},
		{"gaussian:sigma=abc", &param, "sigma", "not a finite number"},
		{"gaussian:sigma=1x", &param, "sigma", "not a finite number"},
		{"gaussian:sigma=NaN", &param, "sigma", "not a finite number"},
		{"gaussian:sigma=inf", &param, "sigma", "not a finite number"},
		{"gaussian:sigma=1e400", &param, "sigma", "not a finite number"},
		{long, &param, "sigma", "at most 32 axes"},
		{"gaussian:sigma=1,sigma=2", &param, "sigma", "given twice"},
		{"gaussian:sigma=1,SIGMA=2", &param, "sigma", "given twice"},
		{"gaussian:sigma=1,order=3", &param, "order", "0 to 2"},
		{"gaussian:sigma=1,order=0x-1", &param, "order", "0 to 2"},
		{"gaussian:sigma=1,order=1.5", &param, "order", "not an integer"},
		{"gaussian:sigma=1,truncate=0", &param, "truncate", "positive"},
		{"gaussian:sigma=1,truncate=-2", &param, "truncate", "positive"},
		{"gaussian:sigma=1,truncate=2x3", &param, "truncate", "one value"},
		{"log:sigma=-1", &param, "sigma", "≥ 0"},
		{"ggm:truncate=3", &param, "sigma", "required"},
		{"uniform:size=0", &param, "size", "at least 1"},
		{"uniform:size=3x-2", &param, "size", "at least 1"},
		{"uniform:size=2.5", &param, "size", "not an integer"},
		{"uniform:size=99999999999999999999", &param, "size", "not an integer"},
		{"sobel:axis=a", &param, "axis", "not an integer"},
		{"sobel:axis=0x1", &param, "axis", "one value"},
		{"prewitt:axis=32", &param, "axis", "out of range"},
		{"scharr:axis=-33", &param, "axis", "out of range"},
		{"gabor", &param, "frequency", "required"},
		{"gabor:theta=1", &param, "frequency", "required"},
		{"gabor:frequency=0", &param, "frequency", "positive"},
		{"gabor:frequency=-0.1", &param, "frequency", "positive"},
		{"gabor:frequency=0.1,theta=nan", &param, "theta", "not a finite number"},
		{"gabor:frequency=0.1,bandwidth=0", &param, "bandwidth", "positive"},
		{"gabor:frequency=0.1,sigma_x=-1", &param, "sigma_x", "positive"},
		{"gabor:frequency=0.1,n_stds=0", &param, "n_stds", "positive"},
		{"gabor:frequency=0.1,offset=1x2", &param, "offset", "one value"},
		{"gabor:frequency=0.1,orientations=4", &param, "orientations", "gabor takes frequency, theta"},
		{"gabor-bank:frequency=0.1", &param, "orientations", "required"},
		{"gabor-bank:orientations=0,frequency=0.1", &param, "orientations", "at least 1"},
		{"gabor-bank:orientations=4", &param, "frequency", "required"},
	} {
		n, err := Parse(c.spec)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", c.spec, n)
			continue
		}
		if !errors.As(err, c.target) {
			t.Errorf("Parse(%q): %T %v, want %T", c.spec, err, err, reflect.ValueOf(c.target).Elem().Interface())
		}
		if c.param != "" && (param == nil || param.Param != c.param) {
			t.Errorf("Parse(%q): %v, want it about %s", c.spec, err, c.param)
		}
		if !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "filters: ") {
			t.Errorf("Parse(%q): %q, want a filters: message containing %q", c.spec, err, c.msg)
		}
		param = nil
	}
}

// TestBuildErrors: the rank-dependent checks, and values that only a Go
// caller (not Parse) can produce.
func TestBuildErrors(t *testing.T) {
	var (
		param *ParameterError
		rank  *RankError
	)
	for _, c := range []struct {
		n      Named
		rank   int
		target any
		msg    string
	}{
		{Gaussian{Sigma: []float64{1, 2, 3}}, 2, &param, "3 values for a 2-D filter"},
		{Gaussian{Sigma: []float64{1}, Order: []int{0, 1}}, 3, &param, "2 values for a 3-D filter"},
		{Gaussian{Sigma: []float64{1}}, 0, &rank, "1 to 32 axes"},
		{Gaussian{Sigma: []float64{1}}, 33, &rank, "1 to 32 axes"},
		{Gaussian{}, 1, &param, "required"},
		{Gaussian{Sigma: []float64{math.NaN()}}, 1, &param, "finite"},
		{Gaussian{Sigma: []float64{1}, Truncate: -1}, 1, &param, "positive"},
		{Gaussian{Sigma: []float64{1}, Truncate: math.Inf(1)}, 1, &param, "positive"},
		{Gaussian{Sigma: []float64{1e9}}, 1, &param, "more than the limit"},
		{Gaussian{Sigma: []float64{1e300}}, 1, &param, "more than the limit"},
		{GaussianLaplace{Sigma: []float64{2e5}}, 3, &param, "more than the limit"},
		// Separable, few weights, but a dense span the library refuses
		// (it blamed "invalid shape [800001 800001]").
		{Gaussian{Sigma: []float64{1e5}}, 2, &param, "sigma=100000: the kernel would span 800001×800001 = 6.4e+11 positions, more than the limit 17179869184"},
		{GaussianLaplace{Sigma: []float64{1e5}}, 2, &param, "sigma=100000: the kernel would span"},
		{GaussianGradientMagnitude{Sigma: []float64{1e5}}, 2, &param, "sigma=100000: the kernel would span"},
		{Uniform{Size: []int{200000}}, 2, &param, "size=200000: the kernel would span 200000×200000"},
		{GaussianLaplace{Sigma: []float64{1, 1}}, 3, &param, "2 values"},
		{GaussianGradientMagnitude{Sigma: []float64{-1}}, 2, &param, "≥ 0"},
		{Uniform{Size: []int{5, 5}}, 1, &param, "2 values for a 1-D filter"},
		{Uniform{Size: []int{0}}, 1, &param, "at least 1"},
		{Uniform{Size: []int{1 << 40}}, 1, &param, "more than the limit"},
		{Sobel{Axis: 2}, 2, &param, "out of range for a 2-D filter (-2 to 1)"},
		{Prewitt{Axis: -3}, 2, &param, "out of range"},
		{Scharr{Axis: 0}, 0, &rank, "1 to 32 axes"},
		{Laplace{}, 0, &rank, "1 to 32 axes"},
		{Laplace{}, 20, &rank, "3^20"},
		{Gabor{Frequency: 0.2}, 3, &rank, "2-D"},
		{Gabor{Frequency: 0.2}, 1, &rank, "2-D"},
		{Gabor{}, 2, &param, "required"},
		{Gabor{Frequency: 0.2, Theta: math.Inf(-1)}, 2, &param, "finite"},
		{Gabor{Frequency: 1e-9}, 2, &param, "more than the limit"},
		{Gabor{Frequency: 0.2, SigmaX: 1e-300, SigmaY: 1e-300}, 2, &param, "overflow"},
		{GaborBank{Gabor: Gabor{Frequency: 0.2}}, 2, &param, "at least 1"},
		{GaborBank{Gabor: Gabor{Frequency: 0.2}, Orientations: 1 << 30}, 2, &param, "more than the limit"},
		{GaborBank{Gabor: Gabor{Frequency: 0.01}, Orientations: 100}, 2, &param, "more than the limit"},
		{GaborBank{Gabor: Gabor{Frequency: 0.2}, Orientations: 4}, 3, &rank, "2-D"},
	} {
		fs, err := c.n.Build(c.rank)
		if err == nil {
			t.Errorf("%#v.Build(%d) = %d filters, want an error", c.n, c.rank, len(fs))
			continue
		}
		if !errors.As(err, c.target) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%#v.Build(%d): %T %q, want %T containing %q", c.n, c.rank, err, err, reflect.ValueOf(c.target).Elem().Interface(), c.msg)
		}
	}
}
