package filters

import (
	"fmt"

	"github.com/ndconv/ndconv/nd"
)

// Uniform is scipy.ndimage.uniform_filter: the mean over a box of Size
// taps per axis (one value for every axis; nil means scipy's 3), weights
// 1/size, centred as correlation centres any kernel (tap size/2 at the
// output position), which is uniform_filter1d's centring for even sizes
// too. Spec: uniform:size=5, uniform:size=4x2.
type Uniform struct {
	Size []int
}

const defaultUniformSize = 3

func (u Uniform) String() string {
	w := newSpec("uniform")
	w.ints("size", u.Size)
	return w.String()
}

func (u Uniform) check() error {
	if err := checkList("uniform", "size", u.Size); err != nil {
		return err
	}
	for _, s := range u.Size {
		if s < 1 {
			return &ParameterError{Filter: "uniform", Param: "size", Value: joinX(u.Size), Msg: "each size must be at least 1"}
		}
	}
	return nil
}

func (u Uniform) Build(rank int) ([]Filter, error) {
	if err := u.check(); err != nil {
		return nil, err
	}
	if err := checkRank("uniform", rank); err != nil {
		return nil, err
	}
	sizes, err := perAxis("uniform", "size", u.Size, rank, defaultUniformSize)
	if err != nil {
		return nil, err
	}
	taps := 0.0
	extents := make([]float64, len(sizes))
	for d, s := range sizes {
		taps += float64(s)
		extents[d] = float64(s)
	}
	if err := checkWeights("uniform", "size", joinX(u.Size), taps); err != nil {
		return nil, err
	}
	if err := checkSpan("uniform", "size", joinX(u.Size), extents); err != nil {
		return nil, err
	}
	factors := make([][]float64, rank)
	for d, s := range sizes {
		factors[d] = make([]float64, s)
		for i := range factors[d] {
			factors[d][i] = 1 / float64(s)
		}
	}
	return built(Filter{Name: u.String(), Terms: []nd.Kernel{separable(factors)}, Combine: Single})
}

// Sobel is scipy.ndimage.sobel: the central difference [-1, 0, 1] along
// Axis and the smoothing [1, 2, 1] along every other axis, unnormalised.
// Axis counts among the filter's axes, negative from the end; scipy's
// default is -1, which Parse gives when the spec names no axis (the zero
// value is axis 0). Spec: sobel:axis=0.
type Sobel struct{ Axis int }

// Prewitt is scipy.ndimage.prewitt: Sobel with the smoothing [1, 1, 1].
type Prewitt struct{ Axis int }

// Scharr is the Scharr operator as OpenCV defines it (cv::Scharr): Sobel
// with the smoothing [3, 10, 3], unnormalised like scipy's sobel. scipy 1.10
// has no scharr; its weights equal scipy.ndimage.correlate1d with [-1, 0, 1]
// along Axis and [3, 10, 3] along the other axes.
type Scharr struct{ Axis int }

// defaultAxis is the axis scipy's sobel and prewitt differentiate along.
const defaultAxis = -1

func (s Sobel) String() string   { return axisSpec("sobel", s.Axis) }
func (s Prewitt) String() string { return axisSpec("prewitt", s.Axis) }
func (s Scharr) String() string  { return axisSpec("scharr", s.Axis) }

func axisSpec(name string, axis int) string {
	w := newSpec(name)
	w.int("axis", axis)
	return w.String()
}

func (s Sobel) check() error   { return checkAxis("sobel", s.Axis) }
func (s Prewitt) check() error { return checkAxis("prewitt", s.Axis) }
func (s Scharr) check() error  { return checkAxis("scharr", s.Axis) }

// checkAxis fails for an axis that no rank allows.
func checkAxis(filter string, axis int) error {
	if axis < -nd.MaxRank || axis >= nd.MaxRank {
		return &ParameterError{Filter: filter, Param: "axis", Value: fmt.Sprint(axis), Msg: fmt.Sprintf("out of range (a filter spans at most %d axes)", nd.MaxRank)}
	}
	return nil
}

func (s Sobel) Build(rank int) ([]Filter, error) {
	return gradient("sobel", s.String(), s.Axis, rank, []float64{1, 2, 1})
}

func (s Prewitt) Build(rank int) ([]Filter, error) {
	return gradient("prewitt", s.String(), s.Axis, rank, []float64{1, 1, 1})
}

func (s Scharr) Build(rank int) ([]Filter, error) {
	return gradient("scharr", s.String(), s.Axis, rank, []float64{3, 10, 3})
}

// gradient builds scipy's sobel/prewitt shape: [-1, 0, 1] along axis,
// smooth along every other axis, separable.
func gradient(filter, name string, axis, rank int, smooth []float64) ([]Filter, error) {
	if err := checkAxis(filter, axis); err != nil {
		return nil, err
	}
	if err := checkRank(filter, rank); err != nil {
		return nil, err
	}
	axis, err := axisIndex(filter, axis, rank)
	if err != nil {
		return nil, err
	}
	factors := make([][]float64, rank)
	for d := range factors {
		factors[d] = append([]float64(nil), smooth...)
	}
	factors[axis] = []float64{-1, 0, 1}
	return built(Filter{Name: name, Terms: []nd.Kernel{separable(factors)}, Combine: Single})
}

// Laplace is scipy.ndimage.laplace: the sum over axes of the second
// difference [1, -2, 1], as one dense kernel of 3 taps per axis (a cross:
// -2·rank at the centre, 1 at its 2·rank neighbours, 0 elsewhere). Spec:
// laplace.
type Laplace struct{}

func (Laplace) String() string { return "laplace" }

func (Laplace) check() error { return nil }

func (l Laplace) Build(rank int) ([]Filter, error) {
	if err := checkRank("laplace", rank); err != nil {
		return nil, err
	}
	n := 1
	for range rank {
		if n *= 3; n > MaxWeights {
			return nil, &RankError{Filter: "laplace", Rank: rank, Msg: fmt.Sprintf("its dense kernel would have 3^%d weights, more than the limit %d", rank, MaxWeights)}
		}
	}
	shape := make([]int, rank)
	for d := range shape {
		shape[d] = 3
	}
	w := make([]float64, n)
	centre := n / 2
	w[centre] = float64(-2 * rank)
	for _, stride := range nd.Strides(shape) {
		w[centre-stride] = 1
		w[centre+stride] = 1
	}
	return built(Filter{Name: l.String(), Terms: []nd.Kernel{{Shape: shape, Weights: w}}, Combine: Single})
}
