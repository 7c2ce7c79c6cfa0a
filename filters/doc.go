// Package filters builds scipy.ndimage's named filters as correlation
// weights: the kernels an engine runs so that, for example, sobel:axis=0
// equals scipy.ndimage.sobel(x, axis=0). It owns the filters' definitions,
// the spec syntax that names them (Parse, String) and their validation; it
// depends only on nd and executes nothing.
//
// # Filters, terms and combination
//
// A named filter (Gaussian, Uniform, Sobel, Prewitt, Scharr, Laplace,
// GaussianLaplace, GaussianGradientMagnitude, Gabor, GaborBank) is fitted to
// the number of axes it spans by Build, which returns one Filter (several for
// a bank). A Filter is a list of linear terms, each an nd.Kernel of one shape
// with exactly rank axes, and a Combine rule: the single term itself, the sum
// of the terms (the Laplacian of Gaussian) or the square root of the sum of
// their squares (the gradient magnitude). Separable terms carry Factors, so
// that an engine runs them as 1-D passes; Laplace and Gabor are dense.
//
// Weights are correlation weights, out[i] = Σ_j w[j]·x̃[i+j−c] with
// c = k/2 per axis, exactly the weights scipy.ndimage correlates with (for
// example scipy reverses the derivative-of-Gaussian kernel before it
// correlates; the weights here are the reversed ones).
//
// # Spec syntax
//
// A spec is name[:key=value,key=value…]; a per-axis list inside a value is
// written with x (sigma=2x1), since a comma separates parameters. Names and
// keys are case-insensitive, and - and _ are the same in keys. String writes
// the canonical spec, which Parse reads back to an equal value.
//
// # Where ndconv differs from scipy
//
// scipy's separable filters (sobel, prewitt, gaussian with order > 0,
// gaussian_laplace, gaussian_gradient_magnitude) run 1-D passes and pad every
// pass's intermediate array with cval, so with mode='constant' and cval ≠ 0
// their border values are not those of one correlation of the cval-extended
// input. A Filter is defined by the latter (the definition every border mode
// shares); with cval = 0, and for every other border mode, the two agree.
package filters
