package cpu

import (
	"github.com/ndconv/ndconv/cpu/internal/simd"
	"github.com/ndconv/ndconv/nd"
)

// rowTaps is one row of a kernel along the last axis, prepared for the inner
// loop: dense when every tap is nonzero, or the nonzero taps with their
// offsets. Zero taps are never multiplied, as in
// scipy.ndimage, so 0·Inf does not turn an output into NaN.
type rowTaps[F nd.Float] struct {
	dense   []F
	offsets []int
	weights []F
}

// newRowTaps prepares w; it reports false when every tap is zero.
func newRowTaps[F nd.Float](w []float64) (rowTaps[F], bool) {
	var r rowTaps[F]
	for j, v := range w {
		if v != 0 {
			r.offsets = append(r.offsets, j)
			r.weights = append(r.weights, F(v))
		}
	}
	if len(r.offsets) == len(w) {
		r.dense, r.offsets = r.weights, nil
	}
	return r, len(r.weights) > 0
}

// apply adds the correlation of src with the taps to acc: for each x, in
// order of the nonzero taps j, acc[x] = fma(w[j], src[x+j], acc[x]), with
// len(src) ≥ len(acc) + len(taps) − 1.
func (r *rowTaps[F]) apply(acc, src []F) {
	if r.dense != nil {
		simd.Row(acc, src, r.dense)
		return
	}
	simd.Taps(acc, src, r.offsets, r.weights)
}
