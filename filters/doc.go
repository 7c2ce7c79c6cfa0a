// Package filters builds named kernels to scipy.ndimage's definitions, as
// correlation weights. It depends only on nd. Today it holds the 1-D
// Gaussian; the full set (uniform, sobel, prewitt, scharr, laplace, LoG,
// Gabor banks) arrives with the named-filter work.
package filters
