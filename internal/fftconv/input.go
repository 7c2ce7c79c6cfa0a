package fftconv

import (
	"math"

	"github.com/ndconv/ndconv/nd"
)

// ScanInput counts src's NaN and Inf values and finds the largest
// magnitude of its finite values and, with the constant border, of cval
// (NaN or infinite for such a cval, which Overflows then refuses; an
// integer input's type range stands for its values). Every backend checks an input by it before transforming; a
// float32 input is read in chunks on up to workers goroutines (the same
// result whatever their number).
func ScanInput(p *nd.Problem, src nd.Array, workers int) (nonFinite int, maxAbs float64) {
	if p.Border == nd.Constant {
		maxAbs = math.Abs(p.CVal)
	}
	switch d := src.Data.(type) {
	case []float32:
		chunks := ceilDiv(len(d), scanChunk)
		bad, maxes := make([]int, chunks), make([]float64, chunks)
		err := nd.ForEach(workers, chunks, nil, func(_, c int) {
			bad[c], maxes[c] = scanFloat32(d[c*scanChunk : min(len(d), (c+1)*scanChunk)])
		})
		if err != nil {
			panic(err) // a bug, raised on the caller's goroutine
		}
		for c := range chunks {
			nonFinite += bad[c]
			maxAbs = max(maxAbs, maxes[c])
		}
	default:
		_, hi := src.DType().Range()
		maxAbs = max(maxAbs, hi)
	}
	return nonFinite, maxAbs
}

// scanFloat32 returns how many of x are NaN or ±Inf and the largest
// magnitude of the others. It works on the bits: with the sign cleared, a
// float32's bits order as its magnitude does, and NaN and Inf are the
// values from infBits up. The common case, every value finite, takes one
// pass of a bitwise max; only then are the non-finite values counted.
func scanFloat32(x []float32) (nonFinite int, maxAbs float64) {
	if m := maxAbsBits(x); m < infBits {
		return 0, float64(math.Float32frombits(m))
	}
	m := uint32(0)
	for _, v := range x {
		if b := math.Float32bits(v) & absBits; b >= infBits {
			nonFinite++
		} else {
			m = max(m, b)
		}
	}
	return nonFinite, float64(math.Float32frombits(m))
}

// maxAbsBits is the largest of x's values' bits with the sign cleared,
// in four independent lanes held in registers.
func maxAbsBits(x []float32) uint32 {
	var m0, m1, m2, m3 uint32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		m0, m1 = max(m0, math.Float32bits(v[0])&absBits), max(m1, math.Float32bits(v[1])&absBits)
		m2, m3 = max(m2, math.Float32bits(v[2])&absBits), max(m3, math.Float32bits(v[3])&absBits)
	}
	for ; i < len(x); i++ {
		m0 = max(m0, math.Float32bits(x[i])&absBits)
	}
	return max(m0, m1, m2, m3)
}

const (
	absBits = 0x7fffffff // clears a float32's sign bit
	infBits = 0x7f800000 // +Inf; NaNs lie above
)

// scanChunk is the number of values one goroutine of the scan reads at a
// time.
const scanChunk = 1 << 18

// overflowMargin keeps every value inside the float32 transforms, each of
// which can grow a block's values by its size, far from float32's range.
const overflowMargin = 1e30

// Overflows reports whether values of magnitude up to maxAbs could leave
// float32's range inside a transform of kernels of absolute sum absSum:
// such inputs must run the direct method. A non-finite maxAbs (an
// infinite or NaN cval, which ScanInput passes on) always does: a
// transform would spread it to every output, where the direct method
// gives it only to the outputs whose nonzero taps reach the border.
func (g *Geometry) Overflows(absSum, maxAbs float64) bool {
	return !(maxAbs*absSum*float64(g.Size()) <= overflowMargin)
}
