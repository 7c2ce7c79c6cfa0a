package filters

import (
	"fmt"
	"math"
	"slices"

	"github.com/ndconv/ndconv/nd"
)

// Gaussian is scipy.ndimage.gaussian_filter: a separable Gaussian (or
// Gaussian derivative) of standard deviation Sigma and derivative order
// Order per axis, truncated at Truncate standard deviations. One value of
// Sigma or Order applies to every axis; Order nil means 0; Truncate 0 means
// scipy's 4.0. An axis with sigma ≤ 1e-15 (sigma 0) is not smoothed, and its
// order is ignored, as scipy skips it. Spec: gaussian:sigma=2x1,order=0x1,truncate=3.
type Gaussian struct {
	Sigma    []float64
	Order    []int
	Truncate float64
}

// GaussianLaplace is scipy.ndimage.gaussian_laplace: the Sum of one term per
// axis d, a Gaussian with order 2 on axis d and 0 elsewhere. Spec:
// log:sigma=1.5 (also gaussian_laplace, gaussian-laplace).
type GaussianLaplace struct {
	Sigma    []float64
	Truncate float64
}

// GaussianGradientMagnitude is scipy.ndimage.gaussian_gradient_magnitude:
// the Magnitude of one term per axis d, a Gaussian with order 1 on axis d
// and 0 elsewhere. Spec: gradient-magnitude:sigma=1 (also
// gaussian_gradient_magnitude, gaussian-gradient-magnitude, ggm).
type GaussianGradientMagnitude struct {
	Sigma    []float64
	Truncate float64
}

const (
	defaultTruncate = 4.0
	maxOrder        = 2
	// unsmoothed is scipy's threshold: gaussian_filter skips axes whose
	// sigma is not above it.
	unsmoothed = 1e-15
)

func (g Gaussian) String() string {
	w := newSpec("gaussian")
	w.floats("sigma", g.Sigma)
	w.ints("order", g.Order)
	w.float("truncate", g.Truncate)
	return w.String()
}

func (g GaussianLaplace) String() string {
	w := newSpec("log")
	w.floats("sigma", g.Sigma)
	w.float("truncate", g.Truncate)
	return w.String()
}

func (g GaussianGradientMagnitude) String() string {
	w := newSpec("gradient-magnitude")
	w.floats("sigma", g.Sigma)
	w.float("truncate", g.Truncate)
	return w.String()
}

func (g Gaussian) check() error {
	if err := checkSigmaTruncate("gaussian", g.Sigma, g.Truncate); err != nil {
		return err
	}
	if err := checkList("gaussian", "order", g.Order); err != nil {
		return err
	}
	for _, o := range g.Order {
		if o < 0 || o > maxOrder {
			return &ParameterError{Filter: "gaussian", Param: "order", Value: joinX(g.Order), Msg: fmt.Sprintf("each order must be 0 to %d", maxOrder)}
		}
	}
	return nil
}

func (g GaussianLaplace) check() error { return checkSigmaTruncate("log", g.Sigma, g.Truncate) }

func (g GaussianGradientMagnitude) check() error {
	return checkSigmaTruncate("gradient-magnitude", g.Sigma, g.Truncate)
}

// checkSigmaTruncate applies the rules the Gaussian filters share: sigma is
// required, finite and ≥ 0 per axis; truncate is finite and ≥ 0 (0 meaning
// the default).
func checkSigmaTruncate(filter string, sigma []float64, truncate float64) error {
	if len(sigma) == 0 {
		return &ParameterError{Filter: filter, Param: "sigma", Msg: "required (one value, or one per axis)"}
	}
	if err := checkList(filter, "sigma", sigma); err != nil {
		return err
	}
	for _, s := range sigma {
		if !(s >= 0) || math.IsInf(s, 0) {
			return &ParameterError{Filter: filter, Param: "sigma", Value: joinX(sigma), Msg: "each sigma must be finite and ≥ 0 (0: no smoothing on that axis)"}
		}
	}
	if !(truncate >= 0) || math.IsInf(truncate, 0) {
		return &ParameterError{Filter: filter, Param: "truncate", Value: fmt.Sprint(truncate), Msg: "must be positive and finite"}
	}
	return nil
}

func (g Gaussian) Build(rank int) ([]Filter, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	axes, err := fitGaussian("gaussian", g.Sigma, g.Truncate, rank, 1)
	if err != nil {
		return nil, err
	}
	orders, err := perAxis("gaussian", "order", g.Order, rank, 0)
	if err != nil {
		return nil, err
	}
	return built(Filter{Name: g.String(), Terms: []nd.Kernel{axes.term(orders)}, Combine: Single})
}

func (g GaussianLaplace) Build(rank int) ([]Filter, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	return gaussianDerivatives("log", g.String(), g.Sigma, g.Truncate, rank, 2, Sum)
}

func (g GaussianGradientMagnitude) Build(rank int) ([]Filter, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	return gaussianDerivatives("gradient-magnitude", g.String(), g.Sigma, g.Truncate, rank, 1, Magnitude)
}

// gaussianDerivatives builds scipy's generic_laplace / generic_gradient_magnitude
// over Gaussians: one term per axis d, of derivative order on axis d and 0
// elsewhere, combined by c.
func gaussianDerivatives(filter, name string, sigma []float64, truncate float64, rank, order int, c Combine) ([]Filter, error) {
	axes, err := fitGaussian(filter, sigma, truncate, rank, rank)
	if err != nil {
		return nil, err
	}
	f := Filter{Name: name, Combine: c}
	for d := range rank {
		orders := make([]int, rank)
		orders[d] = order
		f.Terms = append(f.Terms, axes.term(orders))
	}
	return built(f)
}

// gaussianAxes is a Gaussian fitted to rank axes: each axis's sigma and
// radius, the radius −1 on axes scipy leaves unsmoothed.
type gaussianAxes struct {
	sigma  []float64
	radius []int
}

// fitGaussian fits sigma to rank axes and computes scipy's radius
// int(truncate·sigma + 0.5) per axis, checking that terms separable terms
// of these radii stay within MaxWeights.
func fitGaussian(filter string, sigma []float64, truncate float64, rank, terms int) (gaussianAxes, error) {
	if err := checkRank(filter, rank); err != nil {
		return gaussianAxes{}, err
	}
	if truncate == 0 {
		truncate = defaultTruncate
	}
	sigmas, err := perAxis(filter, "sigma", sigma, rank, 0)
	if err != nil {
		return gaussianAxes{}, err
	}
	radius := make([]int, rank)
	taps := 0.0
	extents := make([]float64, rank)
	for d, s := range sigmas {
		radius[d], extents[d] = -1, 1
		if s > unsmoothed {
			r := math.Floor(truncate*s + 0.5)
			if err := checkWeights(filter, "sigma", joinX(sigma), 2*r+1); err != nil {
				return gaussianAxes{}, err
			}
			radius[d] = int(r)
			taps += 2*r + 1
			extents[d] = 2*r + 1
		}
	}
	if err := checkWeights(filter, "sigma", joinX(sigma), taps*float64(terms)); err != nil {
		return gaussianAxes{}, err
	}
	if err := checkSpan(filter, "sigma", joinX(sigma), extents); err != nil {
		return gaussianAxes{}, err
	}
	return gaussianAxes{sigma: sigmas, radius: radius}, nil
}

// term returns the separable Gaussian of the given derivative order per axis
// as correlation weights.
func (g gaussianAxes) term(orders []int) nd.Kernel {
	factors := make([][]float64, len(g.sigma))
	for d, s := range g.sigma {
		if g.radius[d] < 0 {
			factors[d] = []float64{1}
			continue
		}
		// gaussian_filter1d correlates with the kernel reversed.
		factors[d] = gaussianKernel1D(s, orders[d], g.radius[d])
		slices.Reverse(factors[d])
	}
	return separable(factors)
}

// gaussianKernel1D is scipy's _gaussian_kernel1d: the Gaussian of standard
// deviation sigma on −radius…radius, normalised to sum 1, multiplied for
// order n > 0 by the polynomial q_n with φ⁽ⁿ⁾ = q_n·φ
// (q_0 = 1, q_{n+1} = q_n′ − q_n·x/σ²), as a convolution kernel.
func gaussianKernel1D(sigma float64, order, radius int) []float64 {
	sigma2 := sigma * sigma
	phi := make([]float64, 2*radius+1)
	sum := 0.0
	for i := range phi {
		x := float64(i - radius)
		phi[i] = math.Exp(-0.5 / sigma2 * (x * x))
		sum += phi[i]
	}
	for i := range phi {
		phi[i] /= sum
	}
	if order == 0 {
		return phi
	}
	// q holds the polynomial's coefficients, q[i] of x^i.
	q := make([]float64, order+1)
	q[0] = 1
	for range order {
		next := make([]float64, order+1)
		for i := range next {
			if i+1 <= order {
				next[i] = float64(i+1) * q[i+1]
			}
			if i > 0 {
				next[i] += q[i-1] / -sigma2
			}
		}
		q = next
	}
	for i := range phi {
		x := float64(i - radius)
		poly, xi := 0.0, 1.0
		for _, c := range q {
			poly += xi * c
			xi *= x
		}
		phi[i] *= poly
	}
	return phi
}

// Gaussian1D returns scipy.ndimage's order-0 Gaussian weights for standard
// deviation sigma: radius int(truncate·sigma + 0.5) on each side, normalised
// to sum 1 (scipy's _gaussian_kernel1d).
func Gaussian1D(sigma, truncate float64) ([]float64, error) {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, &ParameterError{Filter: "gaussian", Param: "sigma", Value: fmt.Sprint(sigma), Msg: "must be positive and finite"}
	}
	if !(truncate > 0) || math.IsInf(truncate, 0) {
		return nil, &ParameterError{Filter: "gaussian", Param: "truncate", Value: fmt.Sprint(truncate), Msg: "must be positive and finite"}
	}
	axes, err := fitGaussian("gaussian", []float64{sigma}, truncate, 1, 1)
	if err != nil {
		return nil, err
	}
	return gaussianKernel1D(sigma, 0, max(axes.radius[0], 0)), nil
}
