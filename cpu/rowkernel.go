package cpu

import (
	"github.com/ndconv/ndconv/cpu/internal/simd"
	"github.com/ndconv/ndconv/nd"
)

// rowTaps is one row of a kernel, prepared for the inner loop: the nonzero
// taps with their offsets. Zero taps are never multiplied, as in
// scipy.ndimage, so 0·Inf does not turn an output into NaN.
type rowTaps[F nd.Float] struct {
	offsets []int
	weights []F
}

// newRowTaps prepares w for samples stride apart; it reports false when
// every tap is zero.
func newRowTaps[F nd.Float](w []float64, stride int) (rowTaps[F], bool) {
	var r rowTaps[F]
	for j, v := range w {
		if v != 0 {
			r.offsets = append(r.offsets, j*stride)
			r.weights = append(r.weights, F(v))
		}
	}
	return r, len(r.weights) > 0
}

// set writes the correlation of src with the taps into acc: for each x,
// from +0, in order of the nonzero taps j, acc[x] = fma(w[j],
// src[x+j·stride], acc[x]), with len(src) ≥ len(acc) + (len(taps) − 1)·stride.
//
// A dense row goes through SetTaps too: it starts from +0 in registers,
// where clearing acc and adding a dense Row to it cost a pass over acc
// more (a quarter of a 2048² separable 7×7's time, in memclr).
func (r *rowTaps[F]) set(acc, src []F) {
	simd.SetTaps(acc, src, r.offsets, r.weights)
}
