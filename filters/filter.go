package filters

import (
	"fmt"
	"math"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

// Combine says how a filter's terms make its output.
type Combine uint8

const (
	Single    Combine = iota // one term; the output is that correlation
	Sum                      // Σ_t term_t            (gaussian_laplace)
	Magnitude                // sqrt(Σ_t term_t²)     (gaussian_gradient_magnitude)
)

var combineNames = [...]string{"single", "sum", "magnitude"}

func (c Combine) String() string { return nd.EnumName(combineNames[:], c, "Combine") }

// Apply combines the outputs of a filter's terms, value by value, into dst
// (allocated when nil, else of the terms' length) and returns it. The terms
// are added in order, as scipy adds them.
func (c Combine) Apply(dst []float64, terms ...[]float64) []float64 {
	if len(terms) == 0 {
		return dst
	}
	if dst == nil {
		dst = make([]float64, len(terms[0]))
	}
	for i := range dst {
		var acc float64
		for t, term := range terms {
			v := term[i]
			if c == Magnitude {
				v *= v
			}
			if t == 0 {
				acc = v
			} else {
				acc += v
			}
		}
		if c == Magnitude {
			acc = math.Sqrt(acc)
		}
		dst[i] = acc
	}
	return dst
}

// A Filter is a named filter fitted to rank axes: linear terms, each an
// nd.Kernel spanning exactly those rank axes (all terms of one filter have
// the same shape), and how they combine.
type Filter struct {
	Name    string      // canonical spec, readable by Parse: "sobel:axis=0"
	Terms   []nd.Kernel // separable filters give Factors (so the engine runs them as passes)
	Combine Combine
}

// Named is a filter with typed parameters. Build fits it to rank axes; it
// returns several Filters for a bank (a Gabor bank), one otherwise.
type Named interface {
	Build(rank int) ([]Filter, error)
	String() string // canonical spec
}

// MaxWeights bounds the number of weights one Build stores, over all its
// filters and terms (a separable term stores the sum of its factors'
// lengths), so that a typo such as sigma=1e9 is an error instead of an
// exhausted memory.
const MaxWeights = 1 << 22

// checker is implemented by every Named of this package: the checks that do
// not depend on the rank, shared by Parse and Build.
type checker interface{ check() error }

// checkWeights fails when storing n weights (counted in float64, so that
// absurd sizes cannot overflow) would exceed MaxWeights.
func checkWeights(filter, param, value string, n float64) error {
	if n > MaxWeights {
		return &ParameterError{Filter: filter, Param: param, Value: value,
			Msg: fmt.Sprintf("the kernel would have %.4g weights, more than the limit %d", n, MaxWeights)}
	}
	return nil
}

// checkSpan fails when a kernel of the given extents would span more
// positions than nd.MaxElements, the most any kernel may: a separable
// kernel stores only its factors (checkWeights), but its dense shape must
// still be one the library accepts — gaussian:sigma=1e5 on a 2-D input is
// 800001×800001.
func checkSpan(filter, param, value string, extents []float64) error {
	n := 1.0
	dims := make([]string, len(extents))
	for i, e := range extents {
		n *= e
		dims[i] = fmt.Sprint(e)
	}
	if n > nd.MaxElements {
		return &ParameterError{Filter: filter, Param: param, Value: value,
			Msg: fmt.Sprintf("the kernel would span %s = %.4g positions, more than the limit %d", strings.Join(dims, "×"), n, int64(nd.MaxElements))}
	}
	return nil
}

// checkRank fails unless 1 ≤ rank ≤ nd.MaxRank.
func checkRank(filter string, rank int) error {
	if rank < 1 || rank > nd.MaxRank {
		return &RankError{Filter: filter, Rank: rank, Msg: fmt.Sprintf("a filter spans 1 to %d axes", nd.MaxRank)}
	}
	return nil
}

// checkList fails when a per-axis list has more values than any rank needs.
func checkList[T any](filter, param string, v []T) error {
	if len(v) > nd.MaxRank {
		return &ParameterError{Filter: filter, Param: param, Value: joinX(v),
			Msg: fmt.Sprintf("%d values; a filter spans at most %d axes", len(v), nd.MaxRank)}
	}
	return nil
}

// perAxis fits a per-axis parameter to rank axes: no value means def on
// every axis, one value applies to every axis, else there must be rank.
func perAxis[T any](filter, param string, v []T, rank int, def T) ([]T, error) {
	out := make([]T, rank)
	switch len(v) {
	case 0, 1:
		if len(v) == 1 {
			def = v[0]
		}
		for i := range out {
			out[i] = def
		}
	case rank:
		copy(out, v)
	default:
		return nil, &ParameterError{Filter: filter, Param: param, Value: joinX(v),
			Msg: fmt.Sprintf("%d values for a %d-D filter; give 1 or %d", len(v), rank, rank)}
	}
	return out, nil
}

// axisIndex resolves an axis among rank axes, negative counting from the end.
func axisIndex(filter string, axis, rank int) (int, error) {
	if axis < -rank || axis >= rank {
		return 0, &ParameterError{Filter: filter, Param: "axis", Value: fmt.Sprint(axis),
			Msg: fmt.Sprintf("out of range for a %d-D filter (%d to %d)", rank, -rank, rank-1)}
	}
	if axis < 0 {
		axis += rank
	}
	return axis, nil
}

// joinX writes a per-axis list the way a spec does: 2x1.
func joinX[T any](v []T) string {
	s := make([]string, len(v))
	for i, e := range v {
		s[i] = fmt.Sprint(e)
	}
	return strings.Join(s, "x")
}

// separable returns the kernel that is the outer product of factors.
func separable(factors [][]float64) nd.Kernel {
	shape := make([]int, len(factors))
	for i, f := range factors {
		shape[i] = len(f)
	}
	return nd.Kernel{Shape: shape, Factors: factors}
}

// checkFinite fails when a weight overflowed (extreme but valid parameters,
// such as a Gabor sigma of 1e-300 whose normalisation is infinite).
func checkFinite(f Filter) error {
	for _, k := range f.Terms {
		for _, vs := range append([][]float64{k.Weights}, k.Factors...) {
			for _, v := range vs {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return &ParameterError{Filter: f.Name, Param: "weights", Msg: "the parameters make a weight overflow to " + fmt.Sprint(v)}
				}
			}
		}
	}
	return nil
}

// built returns the one filter of a non-bank Build, after checkFinite.
func built(f Filter) ([]Filter, error) {
	if err := checkFinite(f); err != nil {
		return nil, err
	}
	return []Filter{f}, nil
}
