package cpu

import "github.com/ndconv/ndconv/nd"

// rowTaps is one row of a kernel along the last axis, prepared for the inner
// loop: dense when every tap is nonzero (an unrolled loop serves it), or the
// nonzero taps with their offsets. Zero taps are never multiplied, as in
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

// apply adds the correlation of src with the taps to acc:
// acc[x] += Σ_j w[j]·src[x+j], with len(src) ≥ len(acc) + len(taps) − 1.
func (r *rowTaps[F]) apply(acc, src []F) {
	if r.dense != nil {
		// Wider rows run as consecutive blocks of unrolled widths, so the
		// time grows smoothly with the width (seed 001's sawtooth).
		for off := 0; off < len(r.dense); off += maxUnrolledWidth {
			correlateRowUnrolled(acc, src[off:], r.dense[off:min(off+maxUnrolledWidth, len(r.dense))])
		}
		return
	}
	for i, off := range r.offsets {
		axpy(acc, src[off:off+len(acc)], r.weights[i])
	}
}

// correlateRowGeneric is the plain loop every row kernel must equal bit
// for bit (the reference of the tests): acc[x] = fma(w[j], src[x+j], acc[x])
// for each nonzero tap j in order, one correctly rounded fused multiply-add
// per tap — the order of operations every engine, CPU and GPU, follows.
func correlateRowGeneric[F nd.Float](acc, src, w []F) {
	src = src[:len(acc)+len(w)-1]
	for x := range acc {
		a := acc[x]
		for j, wj := range w {
			if wj != 0 {
				a = nd.FMA(wj, src[x+j], a)
			}
		}
		acc[x] = a
	}
}

// axpy adds a·x to y, one fused multiply-add per element.
func axpy[F nd.Float](y, x []F, a F) {
	x = x[:len(y)]
	for i := range y {
		y[i] = nd.FMA(a, x[i], y[i])
	}
}
