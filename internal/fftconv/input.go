package fftconv

import (
	"math"

	"github.com/ndconv/ndconv/nd"
)

// ScanInput counts src's NaN and Inf values and finds the largest
// magnitude of its finite extended values: the input's and, with the
// constant border, |cval| (an integer input's type range stands for its
// values). Every backend checks an input by it before transforming.
func ScanInput(p *nd.Problem, src nd.Array) (nonFinite int, maxAbs float64) {
	if p.Border == nd.Constant {
		maxAbs = math.Abs(p.CVal)
	}
	switch d := src.Data.(type) {
	case []float32:
		m := 0.0
		for _, v := range d {
			// !(a <= m) holds for NaN and Inf as well as for a new maximum.
			if a := math.Abs(float64(v)); !(a <= m) {
				if math.IsNaN(a) || math.IsInf(a, 0) {
					nonFinite++
					continue
				}
				m = a
			}
		}
		maxAbs = max(maxAbs, m)
	default:
		_, hi := src.DType().Range()
		maxAbs = max(maxAbs, hi)
	}
	return nonFinite, maxAbs
}

// AbsSum is the largest Σ|w| of the bank's kernels, their weights as the
// float32 transforms see them.
func AbsSum(p *nd.Problem) float64 {
	m := 0.0
	for _, k := range p.Kernels {
		s := 0.0
		for _, v := range k.Dense {
			s += math.Abs(float64(float32(v)))
		}
		m = max(m, s)
	}
	return m
}

// overflowMargin keeps every value inside the float32 transforms, each of
// which can grow a block's values by its size, far from float32's range.
const overflowMargin = 1e30

// Overflows reports whether values of magnitude up to maxAbs (an infinite
// one included: an infinite cval) could leave float32's range inside a
// transform of kernels of absolute sum absSum: such inputs must run the
// direct method.
func (g *Geometry) Overflows(absSum, maxAbs float64) bool {
	return math.IsInf(maxAbs, 0) || maxAbs*absSum*float64(g.Size()) > overflowMargin
}
