package nd

import (
	"fmt"
	"math"
	"slices"
)

// MaxRank is the largest number of axes an input may have.
const MaxRank = 32

// Mode selects the output extent along the kernel's axes.
type Mode uint8

const (
	Same  Mode = iota // the input's shape (scipy.ndimage)
	Valid             // n−k+1: only windows entirely inside the input
	Full              // n+k−1: every window that touches the input
)

var modeNames = [...]string{"same", "valid", "full"}

func (m Mode) String() string { return EnumName(modeNames[:], m, "Mode") }

// ParseMode accepts same, valid and full.
func ParseMode(s string) (Mode, error) { return ParseEnum[Mode](modeNames[:], s, "mode") }

// Kernel is a filter of the given shape. Either Weights holds its values in
// C order, or Factors holds one 1-D factor per axis and the kernel is their
// outer product: w[i0, i1, …] = Factors[0][i0] · Factors[1][i1] · ….
// A complex kernel is given as Weights (the real parts) and Imag.
type Kernel struct {
	Shape   []int
	Weights []float64
	// Imag, when not nil, holds the imaginary parts of complex weights, in
	// the order of Weights. As in scipy.ndimage, correlation conjugates
	// complex weights (as numpy.correlate does) and convolution does not.
	Imag    []float64
	Factors [][]float64
}

// Dense returns the kernel's weights in C order, multiplying out factors.
func (k Kernel) Dense() []float64 {
	if k.Factors == nil {
		return k.Weights
	}
	return outer(k.Factors)
}

func outer(factors [][]float64) []float64 {
	w := []float64{1}
	for _, f := range factors {
		next := make([]float64, 0, len(w)*len(f))
		for _, a := range w {
			for _, b := range f {
				next = append(next, a*b)
			}
		}
		w = next
	}
	return w
}

func (k Kernel) check() error {
	if k.Factors != nil {
		if k.Weights != nil {
			return argErrorf("kernel", "give weights or factors, not both")
		}
		if k.Imag != nil {
			return argErrorf("kernel", "a complex kernel is given as weights, not factors")
		}
		k.Shape = k.Extents()
		if len(k.Factors) != len(k.Shape) {
			return argErrorf("kernel", "%d factors for a %d-D kernel", len(k.Factors), len(k.Shape))
		}
	}
	if len(k.Shape) == 0 {
		return argErrorf("kernel", "a kernel needs at least one axis")
	}
	for i, s := range k.Shape {
		if s == 0 {
			// scipy.ndimage: "filter weights array has incorrect shape".
			return argErrorf("kernel", "axis %d has length 0: no filter weights", i)
		}
		if s < 0 {
			return argErrorf("kernel", "axis %d has length %d", i, s)
		}
		if k.Factors != nil && len(k.Factors[i]) != s {
			return argErrorf("kernel", "factor %d has %d taps, the shape says %d", i, len(k.Factors[i]), s)
		}
	}
	n, err := NumElements(k.Shape)
	if err != nil {
		return err
	}
	values := [][]float64{k.Weights}
	if k.Factors != nil {
		values = k.Factors
	} else if len(k.Weights) != n {
		return argErrorf("kernel", "shape %v needs %d weights, got %d", k.Shape, n, len(k.Weights))
	} else if k.Imag != nil && len(k.Imag) != n {
		return argErrorf("kernel", "shape %v needs %d imaginary parts, got %d", k.Shape, n, len(k.Imag))
	}
	if k.Imag != nil {
		values = append(values, k.Imag)
	}
	for _, vs := range values {
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return argErrorf("kernel", "weight %v is not finite", v)
			}
		}
	}
	return nil
}

// Extents returns the kernel's shape, taken from the factors when Shape is
// nil.
func (k Kernel) Extents() []int {
	if len(k.Shape) == 0 && k.Factors != nil {
		s := make([]int, len(k.Factors))
		for i, f := range k.Factors {
			s[i] = len(f)
		}
		return s
	}
	return k.Shape
}

// Spec is a filtering request as a user states it: the scipy.ndimage
// parameters. Its zero values mean scipy's defaults. Normalize turns it into
// the Problem engines execute.
type Spec struct {
	Shape   []int    // input shape
	In      DType    // input element type
	Out     DType    // output element type; Unspecified means In
	Kernels []Kernel // one kernel, or a bank of kernels of one shape
	Axes    []int    // input axes the kernel spans; default the first len(kernel shape)
	Origin  []int    // per kernel axis, or one value for all; default 0
	Border  Border
	CVal    float64
	// CValImag is the imaginary part of a complex cval; scipy allows one
	// with complex data only.
	CValImag float64
	Mode     Mode
	Convolve bool // convolve (flip the kernel) instead of correlate
}

// Problem is a Spec normalised for execution: a correlation of a full-rank
// kernel (extent 1 on axes it does not span) in input axis order, with
// out[i] = Σ_j w[j]·x̃[i + j − Shift] per axis, where x̃ is the input extended
// by Border. Every engine executes exactly this and re-derives nothing.
// A problem with a complex output (Complex) is executed as the real
// problems of RealParts.
type Problem struct {
	InShape  []int
	OutShape []int // without the bank axis
	In, Out  DType
	// Wide selects float64 accumulation: for data whose values float32
	// cannot hold exactly (DType.WideInput: float64, int32, uint32, int64,
	// uint64) and for float64 output.
	Wide     bool
	Border   Border
	CVal     float64
	CValImag float64 // of a complex problem
	KShape   []int   // kernel extent per input axis
	Shift    []int
	Kernels  []Weights
	// Bank is true when the output has a trailing axis of one value per
	// kernel (more than one kernel), stored out[voxel*len(Kernels) + i].
	Bank bool
}

// Weights is one normalised kernel.
type Weights struct {
	// Dense holds the weights in C order over Problem.KShape. Weights with
	// |w| ≤ DBL_EPSILON are zero, as scipy.ndimage ignores them.
	Dense []float64
	// Factors, when the kernel is separable (given as factors, or exactly
	// rank-1), holds one factor per input axis, len(Factors[d]) = KShape[d];
	// a factor of length 1 is [1], its scale folded into another factor.
	// A complex kernel has none.
	Factors [][]float64
	// Imag holds a complex kernel's imaginary parts, in Dense's order and
	// already conjugated where the operation conjugates (correlation), so
	// that out = Σ (Dense + i·Imag)·x̃; nil for a real kernel.
	Imag []float64
}

// Empty reports whether the problem has no element to compute: an input
// axis of length 0, which leaves the output (of any mode) empty too. The
// planner runs such a problem without any engine (plan.New).
func (p *Problem) Empty() bool { return slices.Contains(p.InShape, 0) }

// RealFinite32 checks what the float32 methods (gemm, Winograd) need of
// a problem: real kernels, weights finite as float32, and a finite cval
// under the constant border; the error names method.
func (p *Problem) RealFinite32(method string) error {
	for _, k := range p.Kernels {
		if len(k.Imag) > 0 {
			return fmt.Errorf("%s takes real kernels", method)
		}
		for _, w := range k.Dense {
			if f := float32(w); math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
				return fmt.Errorf("%s needs finite float32 weights (a weight is %v)", method, w)
			}
		}
	}
	if p.Border == Constant && (math.IsInf(float64(float32(p.CVal)), 0) || math.IsNaN(p.CVal)) {
		return fmt.Errorf("%s needs a finite cval (%v)", method, p.CVal)
	}
	return nil
}

// WeightAbsSum is the largest Σ|w| of the problem's kernels, their
// weights rounded to float32 as the float32 methods (FFT, gemm,
// Winograd) take them: with the input's largest magnitude, the scale of
// those methods' error bounds and overflow guards.
func (p *Problem) WeightAbsSum() float64 {
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

// ReadsInside reports whether every output reads input positions inside
// the input only (valid mode, and axes the kernel does not span): the
// border rule then gives no value any output receives.
func (p *Problem) ReadsInside() bool {
	for d := range p.InShape {
		if p.Shift[d] != 0 || p.OutShape[d]+p.KShape[d]-1 > p.InShape[d] {
			return false
		}
	}
	return true
}

// FullShape is OutShape with the bank axis appended when there is one.
func (p *Problem) FullShape() []int {
	if p.Bank {
		return append(slices.Clone(p.OutShape), len(p.Kernels))
	}
	return slices.Clone(p.OutShape)
}

// Separable reports whether every kernel has factors.
func (p *Problem) Separable() bool {
	for _, k := range p.Kernels {
		if k.Factors == nil {
			return false
		}
	}
	return true
}

// Normalize validates s and returns the problem to execute, or an error that
// names what is wrong.
func (s *Spec) Normalize() (*Problem, error) {
	rank := len(s.Shape)
	if rank == 0 {
		return nil, argErrorf("input", "a 0-D input has nothing to filter")
	}
	if rank > MaxRank {
		return nil, argErrorf("input", "%d axes; at most %d are supported", rank, MaxRank)
	}
	if !s.In.Valid() {
		return nil, &UnsupportedError{What: "input dtype", Value: s.In.String()}
	}
	complexIn := s.In.IsComplex()
	for _, k := range s.Kernels {
		complexIn = complexIn || k.Imag != nil
	}
	out := s.Out
	switch {
	case out == Unspecified && complexIn:
		out = s.In.ComplexResult()
	case out == Unspecified:
		out = s.In
	}
	if !out.Valid() {
		return nil, &UnsupportedError{What: "output dtype", Value: out.String()}
	}
	if complexIn && !out.IsComplex() {
		return nil, argErrorf("dtype", "complex data or weights need a complex output (complex64 or complex128), not %v", out)
	}
	if complexIn && (math.IsNaN(s.CVal) || math.IsNaN(s.CValImag)) {
		// Complex problems run as real correlations of the parts
		// (RealParts), where a NaN part reaches only the products of its
		// own part: scipy's complex products spread it to both.
		return nil, argErrorf("cval", "NaN with complex data or weights (a NaN cval needs real ones)")
	}
	if !complexIn && out.IsComplex() {
		// scipy.ndimage refuses it too ("array type not supported").
		return nil, &UnsupportedError{What: "dtype", Value: out.String(), Supported: "a complex output of complex data or weights"}
	}
	// A problem's input may be mapped and streamed chunk by chunk: its
	// arrays are allocated (and bounded) where they are.
	if _, err := ShapeElements(s.Shape); err != nil {
		return nil, err
	}
	if len(s.Kernels) == 0 {
		return nil, argErrorf("kernel", "no kernel given")
	}
	if s.Border > Constant {
		return nil, &UnsupportedError{What: "border", Value: s.Border.String()}
	}
	if s.Mode > Full {
		return nil, &UnsupportedError{What: "mode", Value: s.Mode.String()}
	}
	if s.CValImag != 0 && !s.In.IsComplex() {
		return nil, argErrorf("cval", "a complex cval needs complex input data (scipy's rule)")
	}
	kshape := s.Kernels[0].Extents()
	for i, k := range s.Kernels {
		if err := k.check(); err != nil {
			if len(s.Kernels) > 1 {
				return nil, fmt.Errorf("kernel %d of the bank: %w", i, err)
			}
			return nil, err
		}
		if !slices.Equal(k.Extents(), kshape) {
			return nil, argErrorf("kernel", "the bank's kernels differ in shape: %v and %v", kshape, k.Extents())
		}
	}
	krank := len(kshape)
	if krank > rank {
		return nil, argErrorf("kernel", "a %d-D kernel cannot filter a %d-D input", krank, rank)
	}
	axes, err := normalizeAxes(s.Axes, krank, rank)
	if err != nil {
		return nil, err
	}
	origin, err := normalizeOrigin(s.Origin, kshape)
	if err != nil {
		return nil, err
	}

	p := &Problem{
		InShape:  slices.Clone(s.Shape),
		In:       s.In,
		Out:      out,
		Wide:     s.In.WideInput() || out.Part() == Float64,
		Border:   s.Border,
		CVal:     s.CVal,
		CValImag: s.CValImag,
		KShape:   make([]int, rank),
		Shift:    make([]int, rank),
		Bank:     len(s.Kernels) > 1,
	}
	for d := range p.KShape {
		p.KShape[d] = 1
	}
	for i, a := range axes {
		p.KShape[a] = kshape[i]
	}
	p.OutShape = slices.Clone(s.Shape) // same mode, and every axis the kernel does not span
	for i, d := range axes {
		n, k := s.Shape[d], kshape[i]
		switch s.Mode {
		case Valid:
			// DESIGN §1: an error where a kernel axis is longer than the
			// input's (also for an axis of length 0, as scipy.signal
			// refuses it), while an axis the kernel does not span keeps its
			// length, 0 included.
			if n < k {
				return nil, argErrorf("mode", "valid needs an input at least as large as the kernel: axis %d has %d, the kernel %d", d, n, k)
			}
			p.OutShape[d] = n - k + 1
		case Full:
			// Every window that touches the input: none along an axis of
			// length 0, which stays 0, so that an empty input gives an
			// empty output in every mode. (scipy.signal's 'full' gives
			// (0, 7) for a (0, 5) input and a (1, 3) kernel, as here, and
			// fails on the empty inputs it cannot shape.)
			if n > 0 {
				p.OutShape[d] = n + k - 1
			}
		}
	}
	for i, a := range axes {
		k, o := kshape[i], origin[i]
		if s.Convolve {
			o = -o
			if k%2 == 0 {
				o--
			}
		}
		switch s.Mode {
		case Same:
			p.Shift[a] = k/2 + o
		case Full:
			p.Shift[a] = k - 1
		}
	}
	for _, k := range s.Kernels {
		p.Kernels = append(p.Kernels, normalizeKernel(k, kshape, axes, p.KShape, s.Convolve))
	}
	return p, nil
}

func normalizeAxes(axes []int, krank, rank int) ([]int, error) {
	if len(axes) == 0 {
		out := make([]int, krank)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	if len(axes) != krank {
		return nil, argErrorf("axes", "%d axes given for a %d-D kernel", len(axes), krank)
	}
	out := make([]int, krank)
	seen := make([]bool, rank)
	for i, a := range axes {
		if a < -rank || a >= rank {
			return nil, argErrorf("axes", "axis %d is out of range for a %d-D input", a, rank)
		}
		if a < 0 {
			a += rank
		}
		if seen[a] {
			return nil, argErrorf("axes", "axis %d is given twice", a)
		}
		seen[a] = true
		out[i] = a
	}
	return out, nil
}

// normalizeOrigin applies scipy's rule: −(k/2) ≤ o ≤ (k−1)/2 per axis.
func normalizeOrigin(origin []int, kshape []int) ([]int, error) {
	out := make([]int, len(kshape))
	switch len(origin) {
	case 0:
	case 1:
		for i := range out {
			out[i] = origin[0]
		}
	case len(kshape):
		copy(out, origin)
	default:
		return nil, argErrorf("origin", "%d values given for a %d-D kernel", len(origin), len(kshape))
	}
	for i, o := range out {
		k := kshape[i]
		if o < -(k/2) || o > (k-1)/2 {
			return nil, argErrorf("origin", "%d is out of range [%d, %d] for kernel axis %d of length %d", o, -(k / 2), (k-1)/2, i, k)
		}
	}
	return out, nil
}

// dblEpsilon is the magnitude at or below which scipy.ndimage drops a weight.
const dblEpsilon = 2.220446049250313e-16

func normalizeKernel(k Kernel, kshape, axes, full []int, flip bool) Weights {
	w := fullRankWeights(k.Dense(), kshape, axes, full, flip)
	if k.Imag != nil {
		imag := fullRankWeights(k.Imag, kshape, axes, full, flip)
		if !flip {
			// Correlation conjugates complex weights (scipy.ndimage, as
			// numpy.correlate); convolution does not.
			for i := range imag {
				imag[i] = -imag[i] + 0 // +0: no negative zeros
			}
		}
		return Weights{Dense: w, Imag: imag}
	}
	var factors [][]float64
	if k.Factors != nil {
		factors = make([][]float64, len(full))
		for d := range factors {
			factors[d] = []float64{1}
		}
		for i, a := range axes {
			f := slices.Clone(k.Factors[i])
			if flip {
				slices.Reverse(f)
			}
			factors[a] = f
		}
		factors = foldScalars(factors)
	} else {
		factors = Factorize(full, w)
	}
	return Weights{Dense: w, Factors: factors}
}

// fullRankWeights places the C-order weights dense of a kernel of shape
// kshape spanning the given input axes on the full-rank shape full,
// flipped on every axis when flip, with weights of magnitude at most
// DBL_EPSILON set to 0.
func fullRankWeights(dense []float64, kshape, axes, full []int, flip bool) []float64 {
	// Kernel axis i becomes input axis axes[i]; walking the full-rank shape in
	// C order, the source offset advances by the kernel stride of that axis.
	kstrides := Strides(kshape)
	strides := make([]int, len(full))
	for i, a := range axes {
		strides[a] = kstrides[i]
	}
	w := make([]float64, len(dense))
	idx := make([]int, len(full))
	for n := range w {
		off := 0
		for d, i := range idx {
			off += i * strides[d]
		}
		w[n] = dense[off]
		for d := len(idx) - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < full[d] {
				break
			}
			idx[d] = 0
		}
	}
	if flip {
		// Non-kernel axes have extent 1, so reversing the C-order array flips
		// every kernel axis at once.
		slices.Reverse(w)
	}
	for i, v := range w {
		if math.Abs(v) <= dblEpsilon {
			w[i] = 0
		}
	}
	return w
}

// foldScalars multiplies every length-1 factor into the first longer factor
// (or the first factor when none is longer), leaving [1] in its place, so
// that engines may skip length-1 factors.
func foldScalars(factors [][]float64) [][]float64 {
	target := 0
	for d, f := range factors {
		if len(f) > 1 {
			target = d
			break
		}
	}
	for d, f := range factors {
		if len(f) == 1 && d != target {
			scale := f[0]
			factors[d] = []float64{1}
			for i := range factors[target] {
				factors[target][i] *= scale
			}
		}
	}
	for _, f := range factors {
		for i, v := range f {
			if math.Abs(v) <= dblEpsilon {
				f[i] = 0
			}
		}
	}
	return factors
}

// rank1Tolerance is the largest difference, relative to the largest weight,
// between a kernel and the outer product of its factors that still counts as
// rank-1: separable results then agree with the direct definition to float32
// precision.
const rank1Tolerance = 1e-6

// Factorize returns one factor per axis whose outer product equals the
// C-order kernel w of the given shape within rank1Tolerance, or nil if w is
// not rank-1.
func Factorize(shape []int, w []float64) [][]float64 {
	pivot, peak := 0, 0.0
	for i, v := range w {
		if a := math.Abs(v); a > peak {
			pivot, peak = i, a
		}
	}
	strides := Strides(shape)
	factors := make([][]float64, len(shape))
	if peak == 0 {
		for d, n := range shape {
			factors[d] = make([]float64, n)
			if d > 0 {
				for i := range factors[d] {
					factors[d][i] = 1
				}
			}
		}
		return foldScalars(factors)
	}
	rest := pivot
	for d, n := range shape {
		at := rest / strides[d]
		rest %= strides[d]
		base := pivot - at*strides[d]
		f := make([]float64, n)
		for i := range f {
			f[i] = w[base+i*strides[d]]
		}
		if d > 0 {
			// Only the first factor carries the pivot's magnitude.
			pv := w[pivot]
			for i := range f {
				f[i] /= pv
			}
		}
		factors[d] = f
	}
	rebuilt := outer(factors)
	for i, v := range w {
		if math.Abs(v-rebuilt[i]) > rank1Tolerance*peak {
			return nil
		}
	}
	return foldScalars(factors)
}
