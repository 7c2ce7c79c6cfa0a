package ref

import (
	"math"

	"github.com/ndconv/ndconv/nd"
)

// Result is the reference output: Values in the output's memory layout
// (out[voxel*K + i] for a bank of K kernels), before any conversion to the
// output dtype, and Magnitude, the sum of |w·x| over each output's window,
// which bounds the rounding error of any other summation order.
type Result struct {
	Shape     []int // including the bank axis when there is one
	Values    []float64
	Magnitude []float64
}

// Correlate computes spec's output for input values x (C order, spec.Shape).
// The spec must be valid (nd.Spec.Normalize accepts it) and real.
func Correlate(spec nd.Spec, x []float64) Result {
	re, _ := CorrelateComplex(spec, x, nil)
	return re
}

// CorrelateComplex computes the real and imaginary parts of spec's output
// for complex input values xr + i·xi (xi nil for real data) and complex
// weights (Kernel.Imag; nil for real ones), summing Σ w·x̃ in complex
// arithmetic, with the weights conjugated for correlation as
// scipy.ndimage does (not for convolution) and x̃ = CVal + i·CValImag
// outside. A weight part of magnitude at most DBL_EPSILON counts as 0, as
// each of scipy's real correlations drops it. Magnitude bounds each part's
// products.
func CorrelateComplex(spec nd.Spec, xr, xi []float64) (re, im Result) {
	rank := len(spec.Shape)
	kshape := spec.Kernels[0].Shape
	if len(kshape) == 0 {
		for _, f := range spec.Kernels[0].Factors {
			kshape = append(kshape, len(f))
		}
	}
	krank := len(kshape)

	axes := make([]int, krank)
	for i := range axes {
		axes[i] = i
		if len(spec.Axes) > 0 {
			axes[i] = (spec.Axes[i] + rank) % rank
		}
	}
	origin := make([]int, krank)
	for i := range origin {
		switch len(spec.Origin) {
		case 0:
		case 1:
			origin[i] = spec.Origin[0]
		default:
			origin[i] = spec.Origin[i]
		}
	}

	// start[i] is the input position of kernel tap 0 for output index 0 on
	// kernel axis i: the definition's "i + j − c".
	start := make([]int, krank)
	for i, k := range kshape {
		switch spec.Mode {
		case nd.Same:
			o := origin[i]
			if spec.Convolve {
				o = -o
				if k%2 == 0 {
					o--
				}
			}
			start[i] = -(k/2 + o)
		case nd.Valid:
			start[i] = 0
		case nd.Full:
			start[i] = -(k - 1)
		}
	}

	outShape := append([]int(nil), spec.Shape...)
	for i, a := range axes {
		switch spec.Mode {
		case nd.Valid:
			outShape[a] = spec.Shape[a] - kshape[i] + 1
		case nd.Full:
			if spec.Shape[a] > 0 { // no window touches an empty axis
				outShape[a] = spec.Shape[a] + kshape[i] - 1
			}
		}
	}
	bank := len(spec.Kernels)
	nout := 1
	for _, n := range outShape {
		nout *= n
	}
	newResult := func() Result {
		res := Result{
			Shape:     outShape,
			Values:    make([]float64, nout*bank),
			Magnitude: make([]float64, nout*bank),
		}
		if bank > 1 {
			res.Shape = append(res.Shape, bank)
		}
		return res
	}
	re, im = newResult(), newResult()
	inStrides := nd.Strides(spec.Shape)
	kStrides := nd.Strides(kshape)
	ntaps := 1
	for _, k := range kshape {
		ntaps *= k
	}

	oi := make([]int, rank) // output multi-index
	ki := make([]int, krank)
	for n := 0; n < nout; n++ {
		for b, kernel := range spec.Kernels {
			w := kernel.Dense()
			var sum, mag, sumIm, magIm float64
			for t := 0; t < ntaps; t++ {
				unravel(t, kStrides, ki)
				wi := t
				if spec.Convolve {
					wi = ntaps - 1 - t // the kernel flipped on every axis
				}
				weight, weightIm := dropTiny(w[wi]), 0.0
				if kernel.Imag != nil {
					weightIm = dropTiny(kernel.Imag[wi])
					if !spec.Convolve {
						weightIm = -weightIm // correlation conjugates
					}
				}
				if weight == 0 && weightIm == 0 {
					continue // scipy.ndimage ignores such weights
				}
				v, vIm, inside := spec.CVal, spec.CValImag, true
				off := 0
				for d := 0; d < rank && inside; d++ {
					p := oi[d]
					for i, a := range axes {
						if a == d {
							p = oi[d] + ki[i] + start[i]
						}
					}
					q, ok := spec.Border.Index(p, spec.Shape[d])
					inside = ok
					off += q * inStrides[d]
				}
				if inside {
					v, vIm = xr[off], 0
					if xi != nil {
						vIm = xi[off]
					}
				}
				if weight != 0 {
					sum += weight * v
					mag += math.Abs(weight * v)
					sumIm += weight * vIm
					magIm += math.Abs(weight * vIm)
				}
				if weightIm != 0 {
					sum -= weightIm * vIm
					mag += math.Abs(weightIm * vIm)
					sumIm += weightIm * v
					magIm += math.Abs(weightIm * v)
				}
			}
			re.Values[n*bank+b], re.Magnitude[n*bank+b] = sum, mag
			im.Values[n*bank+b], im.Magnitude[n*bank+b] = sumIm, magIm
		}
		for d := rank - 1; d >= 0; d-- {
			if oi[d]++; oi[d] < outShape[d] {
				break
			}
			oi[d] = 0
		}
	}
	return re, im
}

// dropTiny returns 0 for a weight of magnitude at most DBL_EPSILON, which
// scipy.ndimage ignores, and w otherwise.
func dropTiny(w float64) float64 {
	if math.Abs(w) <= 2.220446049250313e-16 {
		return 0
	}
	return w
}

func unravel(t int, strides, idx []int) {
	for i, s := range strides {
		idx[i] = t / s
		t %= s
	}
}
