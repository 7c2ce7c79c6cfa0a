package filters

import (
	"fmt"
	"math"
)

// Gaussian1D returns scipy.ndimage's order-0 Gaussian weights for standard
// deviation sigma: radius int(truncate·sigma + 0.5) on each side, normalised
// to sum 1 (scipy's _gaussian_kernel1d).
func Gaussian1D(sigma, truncate float64) ([]float64, error) {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, fmt.Errorf("filters: gaussian sigma must be positive and finite, got %v", sigma)
	}
	if !(truncate > 0) || math.IsInf(truncate, 0) {
		return nil, fmt.Errorf("filters: gaussian truncate must be positive and finite, got %v", truncate)
	}
	radius := int(truncate*sigma + 0.5)
	w := make([]float64, 2*radius+1)
	sum := 0.0
	for i := range w {
		x := float64(i - radius)
		w[i] = math.Exp(-0.5 / (sigma * sigma) * x * x)
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	return w, nil
}
